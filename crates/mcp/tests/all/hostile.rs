//! Servers that misbehave on purpose (`tests/hostile/server.js`): a call past its timeout or
//! cancelled is cancelled at the server, which is stopped when it does not answer, so that
//! nothing of the call runs (or writes) afterwards, and started again at its next call.

use std::time::{Duration, Instant};

use retrace_mcp::{CallEnd, McpError};
use serde_json::json;

use crate::support::{alive, args, hostile, rt, servers};

/// Found by an attack: a call past its timeout was abandoned but the server was not: a server
/// stuck in it made every later call time out, and it wrote after the call had failed (in the
/// git backend, after the snapshot that was to catch its changes).
#[test]
fn a_call_past_its_timeout_is_cancelled_and_a_silent_server_stopped() {
    let ws = tempfile::tempdir().unwrap();
    let log = ws.path().join("server.log");
    let late = ws.path().join("late.txt");
    rt().block_on(async {
        let mut c = hostile("echo,slow", &[("HOSTILE_LOG", log.to_str().unwrap())]);
        c.tool_timeout_ms = Some(300);
        let s = servers(ws.path(), vec![("evil", c)]);
        assert!(s.start_all().await.is_empty());
        let pid = s.pid("evil").await.unwrap();
        let started = Instant::now();
        let e = s
            .call(
                "evil",
                "slow",
                args(json!({"ms": 1500, "path": late, "block": true})),
                1000,
            )
            .await
            .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(
            matches!(
                e,
                McpError::CallTimeout {
                    end: CallEnd::Stopped,
                    ..
                }
            ),
            "{e}"
        );
        let text = e.to_string();
        assert!(text.contains("within 300 ms"), "{text}");
        assert!(text.contains("it was stopped"), "{text}");
        assert!(!alive(pid), "stopped before the call returned");
        // It had no chance to write after the call failed.
        std::thread::sleep(Duration::from_millis(1500));
        assert!(!late.exists(), "a late write");
        // The next call starts it again, and it answers at once.
        let out = s
            .call("evil", "echo", args(json!({"message": "back"})), 1000)
            .await
            .unwrap();
        assert_eq!(out.text, "echo: back");
        assert_ne!(s.pid("evil").await.unwrap(), pid);
        // Stuck in the call, it could not even read the cancellation.
        let said = std::fs::read_to_string(&log).unwrap();
        assert!(said.contains("tools/call 2 slow"), "{said}");
    });
}

/// A call cancelled by the user ends the same way: told to cancel, stopped when silent.
#[test]
fn a_cancelled_call_is_cancelled_at_the_server() {
    let ws = tempfile::tempdir().unwrap();
    let late = ws.path().join("late.txt");
    let log = ws.path().join("server.log");
    rt().block_on(async {
        let s = servers(
            ws.path(),
            vec![("evil", hostile("slow", &[("HOSTILE_LOG", log.to_str().unwrap())]))],
        );
        s.start_all().await;
        let pid = s.pid("evil").await.unwrap();
        let e = s
            .call_until(
                "evil",
                "slow",
                args(json!({"ms": 1500, "path": late})),
                1000,
                tokio::time::sleep(Duration::from_millis(200)),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(
                e,
                McpError::Cancelled {
                    end: CallEnd::Stopped,
                    ..
                }
            ),
            "{e}"
        );
        assert!(!alive(pid));
        let said = std::fs::read_to_string(&log).unwrap();
        assert!(said.contains("notifications/cancelled"), "{said}");
        std::thread::sleep(Duration::from_millis(1500));
        assert!(!late.exists(), "a late write");
    });
}

/// A stdio server that answers once told to cancel is stopped all the same (its word is no proof
/// that nothing of the call still runs), and started again at its next call.
#[test]
fn a_server_that_settles_a_cancelled_call_is_stopped_all_the_same() {
    let ws = tempfile::tempdir().unwrap();
    rt().block_on(async {
        let mut c = hostile("echo,slow", &[("HOSTILE_HONOR_CANCEL", "1")]);
        c.tool_timeout_ms = Some(300);
        let s = servers(ws.path(), vec![("evil", c)]);
        s.start_all().await;
        let pid = s.pid("evil").await.unwrap();
        let e = s
            .call("evil", "slow", args(json!({"ms": 5000})), 1000)
            .await
            .unwrap_err();
        assert!(
            matches!(
                e,
                McpError::CallTimeout {
                    end: CallEnd::AnsweredStopped,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("stopped all the same"), "{e}");
        assert!(!alive(pid), "stopped");
        let out = s
            .call("evil", "echo", args(json!({"message": "same"})), 1000)
            .await
            .unwrap();
        assert_eq!(out.text, "echo: same");
        assert_ne!(s.pid("evil").await.unwrap(), pid, "started again");
    });
}

/// Found by an attack: one tool whose input schema was not an object stopped its whole server
/// ("listing its tools failed: Unexpected response type"); a tool listed twice, and two servers'
/// tools meeting at an underscore, were offered under one name (and a call went to the first).
/// Now each such tool is left out, saying why, the others offered, and a left-out tool cannot be
/// called.
#[test]
fn bad_and_colliding_tools_are_left_out_and_the_rest_offered() {
    let ws = tempfile::tempdir().unwrap();
    rt().block_on(async {
        let s = servers(
            ws.path(),
            vec![
                ("a", hostile("echo,bad_schema,odd_schema,twice,_b", &[])),
                ("a_", hostile("b", &[])),
            ],
        );
        assert!(s.start_all().await.is_empty(), "both servers start");
        let offered: Vec<String> = s.tools().into_iter().map(|t| t.qualified).collect();
        assert_eq!(offered, ["mcp__a__echo"]);
        let out: Vec<(String, String)> = s
            .left_out()
            .into_iter()
            .map(|l| (format!("{}/{}", l.server, l.tool), l.why))
            .collect();
        let why = |name: &str| {
            out.iter()
                .find(|(n, _)| n == name)
                .map(|(_, w)| w.clone())
                .unwrap_or_else(|| panic!("{name} is not left out: {out:?}"))
        };
        assert_eq!(why("a/bad_schema"), "its input schema is not a JSON object");
        assert!(why("a/odd_schema").contains("`type` is \"strng\""));
        assert!(why("a/twice").contains("2 tools would be offered as `mcp__a__twice`"));
        assert!(why("a/_b").contains("`_b` of `a`, `b` of `a_`"));
        assert!(why("a_/b").contains("none of them is"));
        let e = s.call("a_", "b", args(json!({})), 1000).await.unwrap_err();
        assert!(matches!(e, McpError::LeftOut { .. }), "{e}");
        assert!(e.to_string().contains("it cannot be called"), "{e}");
        assert!(s.tool("mcp__a___b").is_none(), "never routed to either");
        let notices = s.left_out_notices();
        assert_eq!(notices.len(), 2, "{notices:?}");
        let status = s.status().await;
        let bad = status[0].tools.iter().find(|t| t.name == "bad_schema").unwrap();
        assert_eq!(
            bad.left_out.as_deref(),
            Some("its input schema is not a JSON object")
        );
        assert!(status[0]
            .tools
            .iter()
            .any(|t| t.name == "echo" && t.left_out.is_none()));
    });
}

/// Found by an attack: a child the server started in a session of its own (`setsid`) outlived
/// every stop. A stop kills the server's descendants that left its group too.
#[test]
fn a_child_that_left_the_servers_group_is_stopped_with_it() {
    let ws = tempfile::tempdir().unwrap();
    let pid_file = ws.path().join("child.pid");
    rt().block_on(async {
        let s = servers(ws.path(), vec![("evil", hostile("forker", &[]))]);
        s.start_all().await;
        s.call("evil", "forker", args(json!({"path": pid_file})), 1000)
            .await
            .unwrap();
        let child: u32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(alive(child));
        drop(s);
        assert!(
            crate::support::gone_soon(child),
            "the setsid child outlived its server"
        );
    });
}

/// Found by a second attack: a resource request had no timeout, so a server that never answered
/// one hung the turn for good. It is bounded by `tool_timeout_ms`, and the server stopped.
#[test]
fn a_resource_request_never_answered_times_out_and_the_server_is_stopped() {
    let ws = tempfile::tempdir().unwrap();
    rt().block_on(async {
        let mut c = hostile("echo", &[("HOSTILE_HANG", "resources/read,resources/list")]);
        c.tool_timeout_ms = Some(300);
        let s = servers(ws.path(), vec![("evil", c)]);
        assert!(s.start_all().await.is_empty());
        let pid = s.pid("evil").await.unwrap();
        let started = Instant::now();
        let e = s.read_resource("evil", "hostile://r", 1000).await.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(matches!(e, McpError::RequestTimeout { .. }), "{e}");
        assert!(e.to_string().contains("`resources/read` within 300 ms"), "{e}");
        assert!(!alive(pid), "stopped");
        let listed = s.list_resources(&["evil".to_string()], 1000).await;
        assert!(listed.contains("`resources/list` within 300 ms"), "{listed}");
        // Started again for the next request.
        let out = s
            .call("evil", "echo", args(json!({"message": "back"})), 1000)
            .await
            .unwrap();
        assert_eq!(out.text, "echo: back");
    });
}

/// Found by a second attack: a server that never answered `prompts/list` lost all its tools
/// (the whole start timed out). Its prompts are given up; its tools are offered.
#[test]
fn a_server_that_never_lists_its_prompts_still_offers_its_tools() {
    let ws = tempfile::tempdir().unwrap();
    rt().block_on(async {
        let hanging = hostile(
            "echo",
            &[("HOSTILE_PROMPTS", "1"), ("HOSTILE_HANG", "prompts/list")],
        );
        let answering = hostile("echo", &[("HOSTILE_PROMPTS", "1")]);
        let s = servers(ws.path(), vec![("evil", hanging), ("good", answering)]);
        let started = Instant::now();
        let errors = s.start_all().await;
        assert!(errors.is_empty(), "{errors:?}");
        assert!(started.elapsed() < Duration::from_secs(8));
        let status = s.status().await;
        let evil = status.iter().find(|x| x.server == "evil").unwrap();
        assert_eq!(evil.tools.len(), 1, "{evil:?}");
        assert!(evil.prompts.is_empty());
        let good = status.iter().find(|x| x.server == "good").unwrap();
        assert_eq!(good.prompts.len(), 1, "{good:?}");
        let out = s
            .call("evil", "echo", args(json!({"message": "still"})), 1000)
            .await
            .unwrap();
        assert_eq!(out.text, "echo: still");
    });
}
