//! The everything server over stdio: its tools, a call and its result, an error result, a
//! timeout, the server killed mid-call and started again, and no process left behind.

use retrace_mcp::McpError;
use serde_json::json;

use crate::support::{alive, args, everything, gone_soon, node, rt, servers};

#[test]
fn tools_calls_results_and_errors() {
    let ws = tempfile::tempdir().unwrap();
    rt().block_on(async {
        let s = servers(ws.path(), vec![("everything", node(&everything(), &["stdio"]))]);
        assert!(s.tools().is_empty(), "nothing starts before it is needed");
        assert!(s.start_all().await.is_empty());
        let tools = s.tools();
        let echo = tools
            .iter()
            .find(|t| t.qualified == "mcp__everything__echo")
            .unwrap();
        assert!(echo.read_only, "echo is marked read-only");
        assert_eq!(echo.schema["properties"]["message"]["type"], "string");
        let sum = tools.iter().find(|t| t.tool == "get-sum").unwrap();
        assert_eq!(sum.qualified, "mcp__everything__get-sum");

        let out = s
            .call("everything", "echo", args(json!({"message": "hi"})), 10_000)
            .await
            .unwrap();
        assert_eq!(out.text, "Echo: hi");
        assert!(!out.is_error);

        let sum = s
            .call("everything", "get-sum", args(json!({"a": 2, "b": 3})), 10_000)
            .await
            .unwrap();
        assert!(sum.text.contains('5'), "{}", sum.text);

        let image = s
            .call("everything", "get-tiny-image", args(json!({})), 10_000)
            .await
            .unwrap();
        assert!(image.text.contains("[an image (image/png"), "{}", image.text);

        let structured = s
            .call(
                "everything",
                "get-structured-content",
                args(json!({"location": "New York"})),
                10_000,
            )
            .await
            .unwrap();
        assert!(structured.text.contains("temperature"), "{}", structured.text);

        // Arguments the tool's schema refuses: an error result the model can read.
        let bad = s
            .call("everything", "get-sum", args(json!({"a": "x"})), 10_000)
            .await;
        match bad {
            Ok(out) => assert!(out.is_error, "{}", out.text),
            Err(e) => assert!(matches!(e, McpError::Refused { .. }), "{e}"),
        }

        let capped = s
            .call(
                "everything",
                "echo",
                args(json!({"message": "x".repeat(500)})),
                100,
            )
            .await
            .unwrap();
        assert!(
            capped.text.contains("[output cut: 100 of 506 bytes shown]"),
            "{}",
            capped.text
        );

        let none = s
            .call("everything", "no-such-tool", args(json!({})), 100)
            .await
            .unwrap_err();
        assert!(none.to_string().contains("has no tool `no-such-tool`"), "{none}");

        let pid = s.pid("everything").await.unwrap();
        assert!(alive(pid));
        drop(s);
        assert!(gone_soon(pid), "the server outlived its session");
    });
}

#[test]
fn a_call_past_its_timeout_fails_and_the_next_call_is_answered() {
    let ws = tempfile::tempdir().unwrap();
    rt().block_on(async {
        let mut c = node(&everything(), &["stdio"]);
        c.tool_timeout_ms = Some(300);
        let s = servers(ws.path(), vec![("everything", c)]);
        s.start_all().await;
        let e = s
            .call(
                "everything",
                "trigger-long-running-operation",
                args(json!({"duration": 5, "steps": 2})),
                10_000,
            )
            .await
            .unwrap_err();
        assert!(matches!(e, McpError::CallTimeout { .. }), "{e}");
        assert!(
            e.to_string()
                .contains("did not answer the call of `trigger-long-running-operation` within 300 ms"),
            "{e}"
        );
        let out = s
            .call("everything", "echo", args(json!({"message": "still"})), 1000)
            .await
            .unwrap();
        assert_eq!(out.text, "Echo: still");
    });
}

#[test]
fn a_server_killed_mid_call_fails_the_call_and_starts_again_at_the_next() {
    let ws = tempfile::tempdir().unwrap();
    rt().block_on(async {
        let s = servers(ws.path(), vec![("everything", node(&everything(), &["stdio"]))]);
        s.start_all().await;
        let pid = s.pid("everything").await.unwrap();
        let killer = tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        });
        let started = std::time::Instant::now();
        let e = s
            .call(
                "everything",
                "trigger-long-running-operation",
                args(json!({"duration": 20, "steps": 2})),
                1000,
            )
            .await
            .unwrap_err();
        killer.await.unwrap();
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
        assert!(matches!(e, McpError::Died { .. }), "{e}");
        let text = e.to_string();
        assert!(text.contains("stopped during the call"), "{text}");
        assert!(text.contains("started again at the next call"), "{text}");
        // The next call starts it again.
        let out = s
            .call("everything", "echo", args(json!({"message": "back"})), 1000)
            .await
            .unwrap();
        assert_eq!(out.text, "Echo: back");
        let again = s.pid("everything").await.unwrap();
        assert_ne!(again, pid);
        assert!(s.tools().iter().any(|t| t.tool == "echo"));
    });
}

#[test]
fn resources_and_prompts_are_listed_and_read() {
    let ws = tempfile::tempdir().unwrap();
    rt().block_on(async {
        let s = servers(ws.path(), vec![("everything", node(&everything(), &["stdio"]))]);
        let listing = s.list_resources(&s.enabled(), 100_000).await;
        assert!(listing.contains("everything: "), "{listing}");
        let uri = listing
            .lines()
            .find_map(|l| l.strip_prefix("everything: ").and_then(|r| r.split(' ').next()))
            .unwrap()
            .to_string();
        let text = s.read_resource("everything", &uri, 100_000).await.unwrap();
        assert!(text.starts_with(&format!("[resource {uri}")), "{text}");
        let status = s.status().await;
        assert_eq!(status[0].status, retrace_protocol::McpStatus::Ready);
        assert!(
            status[0].prompts.iter().any(|p| p.name == "simple-prompt"),
            "{:?}",
            status[0].prompts
        );
        let prompt = s
            .get_prompt("everything", "simple-prompt", args(json!({})))
            .await
            .unwrap();
        assert!(!prompt.is_empty());
    });
}
