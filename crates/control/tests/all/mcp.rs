//! MCP tool calls through the controller's handles (SPEC §8.1): `[permissions] mcp = "ask"` asks
//! with the same `approval_requested` events as the shell, answered by `call_id` from another
//! task; `session` allows the tool (whatever its arguments) for the session, `deny` refuses it
//! unrun, a tool allowed in its server's config is not asked about.

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::{until, until_finished, World};
use retrace_protocol::{ApprovalDecision, Event, McpPermission, McpServerConfig};
use serde_json::json;

/// The reference everything server over stdio (installed by `npm ci` in crates/mcp/tests/servers).
fn everything() -> McpServerConfig {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mcp/tests/servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        script.exists(),
        "the MCP test servers are not installed: run `npm ci` in crates/mcp/tests/servers (.ci/run does)"
    );
    McpServerConfig {
        command: Some("node".into()),
        args: vec![script.display().to_string(), "stdio".into()],
        tool_permissions: BTreeMap::from([("get-tiny-image".to_string(), McpPermission::Allow)]),
        ..Default::default()
    }
}

fn call(id: &str, name: &str, args: serde_json::Value) -> serde_json::Value {
    json!({"id": id, "name": name, "arguments": args})
}

#[test]
fn approvals_are_asked_allowed_for_the_session_and_denied() {
    let w = World::with(None, |o| {
        o.mcp_servers = BTreeMap::from([("everything".to_string(), everything())]);
        o.mcp = McpPermission::Ask;
    });
    let h = w.open();
    let model = w.script(json!([
        {"content": "", "tool_calls": [
            call("c1", "mcp__everything__echo", json!({"message": "one"})),
            call("c2", "mcp__everything__echo", json!({"message": "two"})),
            call("c3", "mcp__everything__get-sum", json!({"a": 1, "b": 2})),
            call("c4", "mcp__everything__get-tiny-image", json!({}))
        ]},
        {"content": "done"}
    ]));
    let events = w.run(async {
        h.set_model(model).await.unwrap();
        let mut sub = h.subscribe(None);
        let other = h.clone();
        let mut theirs = other.subscribe(None);
        let answerer = tokio::spawn(async move {
            for decision in [ApprovalDecision::Session, ApprovalDecision::Deny] {
                let n = until(&mut theirs, |e| matches!(e, Event::ApprovalRequested { .. })).await;
                let Event::ApprovalRequested {
                    call_id,
                    tool,
                    command,
                    note,
                    prefixes,
                } = n.event
                else {
                    unreachable!()
                };
                assert!(tool.starts_with("mcp__everything__"), "{tool}");
                assert!(command.starts_with(&tool), "{command}");
                assert!(note.unwrap().contains("MCP tool"));
                assert!(prefixes.is_empty());
                other.approve(&call_id, decision).unwrap();
            }
        });
        let turn = h.send("go").await.unwrap().turn;
        let (outcome, events) = until_finished(&mut sub, turn).await;
        answerer.await.unwrap();
        assert!(outcome.ok, "{outcome:?}");
        events
    });
    let asked: Vec<(String, String)> = events
        .iter()
        .filter_map(|n| match &n.event {
            Event::ApprovalRequested { call_id, command, .. } => Some((call_id.clone(), command.clone())),
            _ => None,
        })
        .collect();
    // c2 calls a tool allowed for the session; c4 one its server's config allows.
    assert_eq!(
        asked,
        [
            (
                "c1".to_string(),
                "mcp__everything__echo {\"message\":\"one\"}".to_string()
            ),
            (
                "c3".to_string(),
                "mcp__everything__get-sum {\"a\":1,\"b\":2}".to_string()
            )
        ]
    );
    let results: Vec<(String, bool, String)> = events
        .iter()
        .filter_map(|n| match &n.event {
            Event::ToolResult { id, ok, content, .. } => Some((id.clone(), *ok, content.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(results[0], ("c1".into(), true, "Echo: one".into()));
    assert_eq!(results[1], ("c2".into(), true, "Echo: two".into()));
    assert!(
        !results[2].1 && results[2].2.contains("declined"),
        "{:?}",
        results[2]
    );
    assert!(results[3].1, "{:?}", results[3]);
}

#[test]
fn a_session_lists_its_servers_and_gets_a_prompt() {
    let w = World::with(None, |o| {
        o.mcp_servers = BTreeMap::from([("everything".to_string(), everything())]);
    });
    let h = w.open();
    let model = w.script(json!([{"content": "done"}]));
    w.run(async {
        h.set_model(model).await.unwrap();
        let list = h.mcp_status().await.unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].status, retrace_protocol::McpStatus::Ready);
        assert!(list[0].tools.iter().any(|t| t.name == "echo" && t.read_only));
        assert!(list[0].prompts.iter().any(|p| p.name == "simple-prompt"));
        let text = h
            .mcp_prompt("everything", "simple-prompt", serde_json::Map::new())
            .await
            .unwrap();
        assert!(!text.is_empty());
        let e = h
            .mcp_prompt("nobody", "x", serde_json::Map::new())
            .await
            .unwrap_err();
        assert_eq!(e.code, retrace_protocol::ErrorCode::NotFound, "{e:?}");
    });
}

/// Found by an attack: a server under `ask` had its resources listed and read without a
/// question. Now a request for them is asked about like a call of its tools; a declined one asks
/// the server nothing.
#[test]
fn resources_of_a_server_under_ask_are_asked_about() {
    let w = World::with(None, |o| {
        o.mcp_servers = BTreeMap::from([("everything".to_string(), everything())]);
        o.mcp = McpPermission::Ask;
    });
    let h = w.open();
    let uri = "demo://resource/static/document/architecture.md";
    let model = w.script(json!([
        {"content": "", "tool_calls": [
            call("r1", "read_mcp_resource", json!({"server": "everything", "uri": uri})),
            call("r2", "read_mcp_resource", json!({"server": "everything", "uri": uri})),
            call("l1", "list_mcp_resources", json!({}))
        ]},
        {"content": "done"}
    ]));
    let events = w.run(async {
        h.set_model(model).await.unwrap();
        let mut sub = h.subscribe(None);
        let other = h.clone();
        let mut theirs = other.subscribe(None);
        let answerer = tokio::spawn(async move {
            let mut asked = Vec::new();
            for decision in [
                ApprovalDecision::Deny,
                ApprovalDecision::Once,
                ApprovalDecision::Deny,
            ] {
                let n = until(&mut theirs, |e| matches!(e, Event::ApprovalRequested { .. })).await;
                let Event::ApprovalRequested {
                    call_id,
                    tool,
                    command,
                    note,
                    ..
                } = n.event
                else {
                    unreachable!()
                };
                assert!(note.unwrap().contains("MCP server"));
                asked.push((tool, command));
                other.approve(&call_id, decision).unwrap();
            }
            asked
        });
        let turn = h.send("go").await.unwrap().turn;
        let (outcome, events) = until_finished(&mut sub, turn).await;
        let asked = answerer.await.unwrap();
        assert!(outcome.ok, "{outcome:?}");
        assert_eq!(
            asked,
            [
                (
                    "read_mcp_resource".to_string(),
                    format!("read_mcp_resource everything {uri}")
                ),
                (
                    "read_mcp_resource".to_string(),
                    format!("read_mcp_resource everything {uri}")
                ),
                (
                    "list_mcp_resources".to_string(),
                    "list_mcp_resources of `everything`".to_string()
                ),
            ]
        );
        events
    });
    let results: Vec<(String, bool, String)> = events
        .iter()
        .filter_map(|n| match &n.event {
            Event::ToolResult { id, ok, content, .. } => Some((id.clone(), *ok, content.clone())),
            _ => None,
        })
        .collect();
    assert!(
        !results[0].1 && results[0].2.contains("declined") && !results[0].2.contains("[resource"),
        "{:?}",
        results[0]
    );
    assert!(
        results[1].1 && results[1].2.starts_with(&format!("[resource {uri}")),
        "{:?}",
        results[1]
    );
    assert!(
        results[2].1 && !results[2].2.contains(uri) && results[2].2.contains("not listed: `everything`"),
        "{:?}",
        results[2]
    );
    // Found by a second attack: a declined request was a coverage gap all the same (recorded
    // before it was asked about). Only the read that ran is one.
    let gaps: Vec<(Option<String>, Option<String>)> = events
        .iter()
        .filter_map(|n| match &n.event {
            Event::CheckpointCaptured { gaps, .. } => Some(gaps.clone()),
            _ => None,
        })
        .flatten()
        .map(|g| (g.tool, g.detail))
        .collect();
    assert_eq!(
        gaps,
        [(
            Some("read_mcp_resource".to_string()),
            Some("everything/resources".to_string())
        )]
    );
}
