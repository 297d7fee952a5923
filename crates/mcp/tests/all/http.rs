//! The everything server over streamable HTTP: a call and its result, an error, and a
//! reconnect after the server went away and came back.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};

use retrace_protocol::McpServerConfig;
use serde_json::json;

use crate::support::{args, everything, rt, servers};

/// The everything server listening on `port`.
fn start_http(port: u16) -> Killed {
    let child = Killed(
        Command::new("node")
            .arg(everything())
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    for _ in 0..250 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return child;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("the HTTP server did not listen on {port}");
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Killed(Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn calls_over_http_and_a_reconnect() {
    let port = free_port();
    let server = start_http(port);
    let ws = tempfile::tempdir().unwrap();
    rt().block_on(async {
        let config = McpServerConfig {
            url: Some(format!("http://127.0.0.1:{port}/mcp")),
            ..Default::default()
        };
        let s = servers(ws.path(), vec![("web", config)]);
        assert!(s.start_all().await.is_empty());
        assert!(s.tools().iter().any(|t| t.qualified == "mcp__web__echo"));
        let out = s
            .call("web", "echo", args(json!({"message": "over http"})), 10_000)
            .await
            .unwrap();
        assert_eq!(out.text, "Echo: over http");
        let bad = s.call("web", "get-sum", args(json!({"a": "x"})), 10_000).await;
        assert!(bad.as_ref().map(|o| o.is_error).unwrap_or(true), "{bad:?}");

        // The server goes away: the call fails, saying so.
        drop(server);
        let e = s
            .call("web", "echo", args(json!({"message": "gone"})), 10_000)
            .await
            .unwrap_err();
        eprintln!("{e}");
        assert!(e.to_string().contains("`web`"), "{e}");

        // It comes back: the next call connects again.
        let _back = start_http(port);
        let mut last = None;
        for _ in 0..3 {
            match s
                .call("web", "echo", args(json!({"message": "again"})), 10_000)
                .await
            {
                Ok(out) => {
                    last = Some(out);
                    break;
                }
                Err(e) => eprintln!("retrying after: {e}"),
            }
        }
        assert_eq!(last.unwrap().text, "Echo: again");
    });
}

#[test]
fn a_missing_bearer_token_variable_is_named() {
    let ws = tempfile::tempdir().unwrap();
    rt().block_on(async {
        let config = McpServerConfig {
            url: Some("http://127.0.0.1:9/mcp".into()),
            bearer_token_env: Some("RETRACE_TEST_NO_SUCH_TOKEN".into()),
            ..Default::default()
        };
        let s = servers(ws.path(), vec![("web", config)]);
        let errors = s.start_all().await;
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].to_string().contains("`RETRACE_TEST_NO_SUCH_TOKEN`"),
            "{}",
            errors[0]
        );
    });
}
