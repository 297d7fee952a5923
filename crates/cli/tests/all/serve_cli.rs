//! `retrace serve` through the real binary (SPEC §9.3, docs/API.md): the first line, the token,
//! a turn over HTTP, and SIGTERM: a running turn is cancelled cleanly, the process exits 0, and
//! the session's lease is free for the next process.

use crate::support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

const TOKEN: &str = "serve-test-token-0123456789";

/// A workspace and a script model file with these responses.
fn setup(responses: Value) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let script = tmp.path().join("script.json");
    std::fs::write(&script, json!({ "responses": responses }).to_string()).unwrap();
    (tmp, ws, script)
}

/// `retrace serve` started; its first line read.
fn serve(tmp: &Path, ws: &Path, script: &Path, token: Option<&str>) -> (Child, String) {
    let mut c = support::isolated_retrace(tmp);
    c.args(["serve", "--port", "0", "--workspace"])
        .arg(ws)
        .arg("--model")
        .arg(format!("script:{}", script.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c.env_remove("RETRACE_TOKEN");
    if let Some(t) = token {
        c.env("RETRACE_TOKEN", t);
    }
    let mut child = c.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (child, line)
}

fn port_of(line: &str) -> u16 {
    let rest = line
        .strip_prefix("retrace: listening on http://127.0.0.1:")
        .unwrap();
    rest.split('/').next().unwrap().parse().unwrap()
}

/// One HTTP/1.1 request; the status and the JSON answer (null when empty).
fn http(port: u16, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status: u16 = out[9..12].parse().unwrap();
    let (_, text) = out.split_once("\r\n\r\n").unwrap();
    let v = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(text).unwrap_or_else(|_| panic!("not JSON: {out}"))
    };
    (status, v)
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends SIGTERM and waits for the exit; its code and standard error.
fn terminate(mut child: Child) -> (Option<i32>, String) {
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            return (status.code(), err);
        }
        assert!(start.elapsed() < Duration::from_secs(20), "serve did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn serve_prints_its_address_runs_turns_and_stops_cleanly_on_sigterm() {
    let (tmp, ws, script) = setup(json!([
        {"content": "writing", "tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "hi\n"}}]},
        {"content": "done"},
        {"content": "asking", "tool_calls": [{"name": "bash", "arguments": {"command": "echo no > never.txt"}}]},
        {"content": "not reached"}
    ]));
    let (child, line) = serve(tmp.path(), &ws, &script, Some(TOKEN));
    let port = port_of(&line);
    assert_eq!(
        line,
        format!("retrace: listening on http://127.0.0.1:{port}/?token={TOKEN}\n")
    );

    let (s, v) = http(port, "POST", "/api/sessions", Some(json!({})));
    assert_eq!(s, 201, "{v}");
    let id = v["session_id"].as_str().unwrap().to_string();
    let (s, _) = http(
        port,
        "POST",
        &format!("/api/sessions/{id}/messages"),
        Some(json!({"prompt": "write"})),
    );
    assert_eq!(s, 202);
    wait_for("the first turn", || {
        http(port, "GET", &format!("/api/sessions/{id}"), None).1["running"].is_null()
    });
    assert_eq!(std::fs::read(ws.join("a.txt")).unwrap(), b"hi\n");

    // The second turn waits for an approval (the shell is asked about) when SIGTERM comes.
    let (s, _) = http(
        port,
        "POST",
        &format!("/api/sessions/{id}/messages"),
        Some(json!({"prompt": "shell"})),
    );
    assert_eq!(s, 202);
    wait_for("the approval", || {
        !http(port, "GET", &format!("/api/sessions/{id}"), None).1["running"].is_null()
    });
    let (code, err) = terminate(child);
    assert_eq!(code, Some(0), "{err}");
    assert!(!ws.join("never.txt").exists());

    // The lease is free: another process writes the session, whose turn 1 was closed cleanly.
    let out = support::isolated_retrace(tmp.path())
        .args(["exec", "--json", "--session", &id, "--model"])
        .arg(format!("script:{}", script.display()))
        .arg("after")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let t = support::isolated_retrace(tmp.path())
        .args(["transcript", "--json", "--session", &id])
        .output()
        .unwrap();
    let t: Value = serde_json::from_slice(&t.stdout).unwrap();
    let prompts: Vec<_> = t
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(prompts, ["write", "shell", "after"]);
}

#[test]
fn a_random_token_is_long_and_new_each_time() {
    let (tmp, ws, script) = setup(json!([]));
    let mut tokens = vec![];
    for _ in 0..2 {
        let (child, line) = serve(tmp.path(), &ws, &script, None);
        let token = line.trim_end().rsplit_once("?token=").unwrap().1.to_string();
        assert!(
            token.len() >= 32 && token.bytes().all(|b| b.is_ascii_hexdigit()),
            "{line}"
        );
        let (code, err) = terminate(child);
        assert_eq!(code, Some(0), "{err}");
        tokens.push(token);
    }
    assert_ne!(tokens[0], tokens[1]);
}

#[test]
fn a_remote_address_needs_allow_remote() {
    let tmp = tempfile::tempdir().unwrap();
    let out = support::isolated_retrace(tmp.path())
        .args(["serve", "--host", "0.0.0.0", "--port", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--allow-remote") && err.contains("loopback"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn a_client_that_resets_its_connection_never_kills_the_server() {
    let (tmp, ws, script) = setup(json!([{"content": "hi"}]));
    let (mut child, line) = serve(tmp.path(), &ws, &script, Some(TOKEN));
    let port = port_of(&line);
    // Pipelined requests for the page's style (about 100 KB of answers), then a close without
    // reading: the server's later writes meet a reset connection (EPIPE), which must be an error
    // on that connection, not SIGPIPE.
    for _ in 0..50 {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let one = format!("GET /assets/style.css HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
        let _ = s.write_all(one.repeat(15).as_bytes());
        drop(s);
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(child.try_wait().unwrap().is_none(), "the server is still running");
    let (status, v) = http(port, "GET", "/api/sessions", None);
    assert_eq!(status, 200, "{v}");
    let (code, _) = terminate(child);
    assert_eq!(code, Some(0));
}
