//! Servers that never answer, print garbage or exit: a clear error within the startup timeout,
//! reported once, their tools left out; never a hang or a panic.

use std::time::{Duration, Instant};

use retrace_protocol::McpServerConfig;

use crate::support::{rt, servers};

fn sh(script: &str, timeout_ms: u64) -> McpServerConfig {
    McpServerConfig {
        command: Some("sh".into()),
        args: vec!["-c".into(), script.into()],
        startup_timeout_ms: Some(timeout_ms),
        ..Default::default()
    }
}

#[test]
fn a_server_that_never_answers_is_reported_once_and_left_out() {
    let ws = tempfile::tempdir().unwrap();
    rt().block_on(async {
        let s = servers(
            ws.path(),
            vec![("mute", sh("echo waiting >&2; exec sleep 60", 500))],
        );
        let started = Instant::now();
        let errors = s.start_all().await;
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(errors.len(), 1);
        let text = errors[0].to_string();
        assert!(
            text.contains("the MCP server `mute` did not start within 500 ms"),
            "{text}"
        );
        assert!(text.contains("waiting"), "its stderr is quoted: {text}");
        assert!(s.tools().is_empty());
        assert!(s.start_all().await.is_empty(), "reported once");
        let status = s.status().await;
        assert_eq!(status[0].status, retrace_protocol::McpStatus::Failed);
    });
}

#[test]
fn garbage_and_an_early_exit_are_clear_errors() {
    let ws = tempfile::tempdir().unwrap();
    rt().block_on(async {
        let s = servers(
            ws.path(),
            vec![
                (
                    "garbage",
                    sh(
                        "echo 'this is not JSON-RPC'; echo '{\"jsonrpc\": 7}'; exec sleep 60",
                        1000,
                    ),
                ),
                ("quits", sh("echo 'no config here' >&2; exit 3", 5000)),
                (
                    "missing",
                    McpServerConfig {
                        command: Some("/nonexistent/retrace-mcp-server".into()),
                        ..Default::default()
                    },
                ),
                (
                    "unknown",
                    McpServerConfig {
                        command: Some("retrace-no-such-mcp-server".into()),
                        ..Default::default()
                    },
                ),
            ],
        );
        let started = Instant::now();
        let errors: Vec<String> = s.start_all().await.iter().map(|e| e.to_string()).collect();
        assert!(started.elapsed() < Duration::from_secs(8));
        assert_eq!(errors.len(), 4, "{errors:?}");
        eprintln!("{errors:#?}");
        assert!(errors.iter().any(|e| e.contains("`garbage`")), "{errors:?}");
        let quits = errors.iter().find(|e| e.contains("`quits`")).unwrap();
        assert!(quits.contains("no config here"), "{quits}");
        // Found by an attack: a missing program was blamed on the protocol and on `setpriv`.
        let missing = errors.iter().find(|e| e.contains("`missing`")).unwrap();
        assert!(
            missing.contains("the command `/nonexistent/retrace-mcp-server` does not exist"),
            "{missing}"
        );
        let unknown = errors.iter().find(|e| e.contains("`unknown`")).unwrap();
        assert!(
            unknown.contains("the command `retrace-no-such-mcp-server` was not found on PATH"),
            "{unknown}"
        );
        for e in [missing, unknown] {
            assert!(!e.contains("setpriv") && !e.contains("JSON-RPC"), "{e}");
        }
        assert!(s.tools().is_empty());
    });
}

/// Found by a third attack: a failing server that printed a value of its `env` (a key) on
/// stderr had it quoted in the error; and one long line pushed its last one (the error) out.
#[test]
fn a_failing_servers_stderr_is_quoted_without_its_env_values_and_its_last_line_kept() {
    let ws = tempfile::tempdir().unwrap();
    rt().block_on(async {
        let mut leaky = sh(
            "printf '%0500d\\n' 0 >&2; echo \"connecting with $API_KEY\" >&2; echo 'fatal: bad key' >&2; exit 1",
            2000,
        );
        leaky
            .env
            .insert("API_KEY".into(), "sk-hunter2-secret".into());
        let s = servers(ws.path(), vec![("leaky", leaky)]);
        let errors = s.start_all().await;
        let text = errors[0].to_string();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("connecting with …"), "{text}");
        assert!(text.contains("fatal: bad key"), "{text}");
    });
}
