//! Messages past the size Retrace takes from a server (`MAX_MESSAGE_BYTES`): a stdio line, a
//! server-sent event over HTTP, a tools listing. The request fails saying so, and the server is
//! started again at its next call; Retrace never holds the whole message.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use retrace_mcp::{McpError, MAX_MESSAGE_BYTES};
use retrace_protocol::McpServerConfig;
use serde_json::json;

use crate::support::{args, hostile, rt, servers};

/// Found by an attack: a 400 MB stdio line grew Retrace to 412 MB before the call timed out.
#[test]
fn a_stdio_message_past_the_cap_fails_the_call_and_the_server_is_started_again() {
    let ws = tempfile::tempdir().unwrap();
    rt().block_on(async {
        let s = servers(ws.path(), vec![("evil", hostile("echo,big", &[]))]);
        s.start_all().await;
        let pid = s.pid("evil").await.unwrap();
        let n = MAX_MESSAGE_BYTES + (1 << 20);
        let e = s
            .call("evil", "big", args(json!({"n": n})), 1000)
            .await
            .unwrap_err();
        assert!(matches!(e, McpError::TooLarge { .. }), "{e}");
        assert!(e.to_string().contains("more than 16 MiB"), "{e}");
        // Below the cap is fine (and capped for the model as ever).
        let out = s
            .call("evil", "echo", args(json!({"message": "back"})), 1000)
            .await
            .unwrap();
        assert_eq!(out.text, "echo: back");
        assert_ne!(s.pid("evil").await.unwrap(), pid, "started again");
    });
}

/// A listing past the cap: the server does not start, saying why.
#[test]
fn a_tools_listing_past_the_cap_is_a_start_error() {
    let ws = tempfile::tempdir().unwrap();
    let pad = (MAX_MESSAGE_BYTES + 1000).to_string();
    rt().block_on(async {
        let s = servers(
            ws.path(),
            vec![("evil", hostile("echo", &[("HOSTILE_BIG_LIST", &pad)]))],
        );
        let errors = s.start_all().await;
        assert_eq!(errors.len(), 1);
        let text = errors[0].to_string();
        assert!(text.contains("more than 16 MiB"), "{text}");
    });
}

/// The hostile HTTP server in `mode`, and its URL.
fn http(mode: &str) -> (Killed, String) {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/http.js");
    let mut child = Command::new("node")
        .arg(script)
        .arg(mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", line.trim());
    (Killed(child), url)
}

struct Killed(Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Found by an attack: one 300 MB server-sent event took Retrace's memory to nearly 1 GB.
#[test]
fn an_http_event_past_the_cap_fails_the_call() {
    let (_server, url) = http("ok");
    let ws = tempfile::tempdir().unwrap();
    rt().block_on(async {
        let config = McpServerConfig {
            url: Some(url),
            tool_timeout_ms: Some(20_000),
            ..Default::default()
        };
        let s = servers(ws.path(), vec![("web", config)]);
        assert!(s.start_all().await.is_empty());
        let started = std::time::Instant::now();
        let n = MAX_MESSAGE_BYTES + (4 << 20);
        let e = s
            .call("web", "big", args(json!({"n": n})), 1000)
            .await
            .unwrap_err();
        assert!(matches!(e, McpError::TooLarge { .. }), "{e}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "failed at once, not at the timeout"
        );
        let out = s.call("web", "echo", args(json!({})), 1000).await.unwrap();
        assert_eq!(out.text, "echo");
    });
}

/// Found by an attack: a server answering HTTP 500 was reported as "Unexpected content type:
/// Some(\"text/plain\")".
#[test]
fn an_http_error_status_is_said_as_such() {
    let (_server, url) = http("500");
    let ws = tempfile::tempdir().unwrap();
    rt().block_on(async {
        let config = McpServerConfig {
            url: Some(url),
            startup_timeout_ms: Some(5000),
            ..Default::default()
        };
        let s = servers(ws.path(), vec![("web", config)]);
        let errors = s.start_all().await;
        let text = errors[0].to_string();
        assert!(
            text.contains("the server answered HTTP 500 Internal Server Error"),
            "{text}"
        );
        assert!(!text.contains("Some("), "{text}");
    });
}
