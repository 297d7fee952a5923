//! A resumed session keeps its model (found by a new user's trial: `retrace -c` reopened a session
//! started with `--model demo` or `script:…` with no model). The model each turn runs with is
//! recorded in the session log (a `model` line, docs/FORMATS.md); `exec -c` / `--session`, the
//! terminal UI and `serve` reopen a session with it unless `--model` is given.

use crate::support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::{json, Value};

fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let script = tmp.path().join("script.json");
    std::fs::write(
        &script,
        json!({"responses": [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "a\n"}}]},
            {"content": "scripted answer"}
        ]})
        .to_string(),
    )
    .unwrap();
    (tmp, ws, script)
}

fn exec(tmp: &Path, args: &[&str]) -> Output {
    support::isolated_retrace(tmp)
        .args(["exec", "--json"])
        .args(args)
        .output()
        .unwrap()
}

/// The assistant text of one `exec --json`, after checking it succeeded.
fn answer(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "assistant_delta")
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect()
}

fn session_id(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout);
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    last["session_id"].as_str().unwrap().to_string()
}

/// The `model` lines of the session's log.
fn model_lines(tmp: &Path, id: &str) -> Vec<Value> {
    let log = std::fs::read_to_string(tmp.join("home").join("sessions").join(format!("{id}.jsonl"))).unwrap();
    log.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "model")
        .collect()
}

#[test]
fn exec_continue_and_session_keep_the_sessions_model_unless_one_is_given() {
    let (tmp, ws, script) = setup();
    let ws_arg = ws.to_str().unwrap();
    let script_model = format!("script:{}", script.display());
    let first = exec(
        tmp.path(),
        &["--workspace", ws_arg, "--model", &script_model, "one"],
    );
    assert_eq!(answer(&first), "scripted answer");
    let id = session_id(&first);
    // No key is set: the configured default (DeepSeek) could not answer.
    let again = exec(tmp.path(), &["--workspace", ws_arg, "-c", "two"]);
    assert_eq!(answer(&again), "scripted answer");
    // `--model` changes it, and the session keeps the new one.
    let demo = exec(tmp.path(), &["--session", &id, "--model", "demo", "three"]);
    assert!(answer(&demo).contains("Demo answer"), "{}", answer(&demo));
    let kept = exec(tmp.path(), &["--session", &id, "four"]);
    assert!(answer(&kept).contains("Demo answer"), "{}", answer(&kept));
    // One line per change, each the model as `--model` takes it, with its time.
    let lines = model_lines(tmp.path(), &id);
    let specs: Vec<&str> = lines.iter().map(|l| l["spec"].as_str().unwrap()).collect();
    assert_eq!(specs, [script_model.as_str(), "demo"], "{lines:?}");
    assert!(lines.iter().all(|l| l["at"].is_string()), "{lines:?}");
    // Nothing but the choice: no key, nor the name of a variable to read one from.
    for l in &lines {
        let keys: Vec<&String> = l.as_object().unwrap().keys().collect();
        assert!(
            keys.iter()
                .all(|k| ["type", "spec", "base_url", "at"].contains(&k.as_str())),
            "{l}"
        );
    }
}

#[test]
fn a_resumed_sessions_model_that_cannot_be_used_is_named() {
    let (tmp, ws, script) = setup();
    let ws_arg = ws.to_str().unwrap();
    let script_model = format!("script:{}", script.display());
    answer(&exec(
        tmp.path(),
        &["--workspace", ws_arg, "--model", &script_model, "one"],
    ));
    std::fs::remove_file(&script).unwrap();
    let out = exec(tmp.path(), &["--workspace", ws_arg, "-c", "two"]);
    assert_ne!(out.status.code(), Some(0));
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains(&format!("this session's model `{script_model}` cannot be used"))
            && said.contains("--model"),
        "{said}"
    );
    // Given another, it runs.
    let demo = exec(
        tmp.path(),
        &["--workspace", ws_arg, "-c", "--model", "demo", "three"],
    );
    assert!(answer(&demo).contains("Demo answer"));
}

const TOKEN: &str = "resume-model-token-0123456789";

fn http(port: u16, method: &str, path: &str) -> Value {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let body = if method == "POST" { "{}" } else { "" };
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (_, text) = out.split_once("\r\n\r\n").unwrap();
    serde_json::from_str(text).unwrap_or_else(|_| panic!("not JSON: {out}"))
}

/// `retrace serve` on `ws` (with `extra` arguments); returns the process and its port.
fn serve(tmp: &std::path::Path, ws_arg: &str, extra: &[&str]) -> (std::process::Child, u16) {
    let mut child = support::isolated_retrace(tmp)
        .args(["serve", "--port", "0", "--workspace", ws_arg])
        .args(extra)
        .env("RETRACE_TOKEN", TOKEN)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line
        .strip_prefix("retrace: listening on http://127.0.0.1:")
        .and_then(|r| r.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    (child, port)
}

#[test]
fn serve_opens_a_session_with_its_own_model_unless_given_one() {
    let (tmp, ws, script) = setup();
    let ws_arg = ws.to_str().unwrap();
    let id = session_id(&exec(
        tmp.path(),
        &["--workspace", ws_arg, "--model", "demo", "one"],
    ));
    // No --model: the session keeps its own; a new session gets the configured default.
    let (mut child, port) = serve(tmp.path(), ws_arg, &[]);
    let status = http(port, "GET", &format!("/api/sessions/{id}"));
    let fresh = http(port, "POST", "/api/sessions");
    let fresh = http(
        port,
        "GET",
        &format!("/api/sessions/{}", fresh["session_id"].as_str().unwrap()),
    );
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(status["model"], "demo", "{status}");
    assert_ne!(fresh["model"], "demo", "{fresh}");
    // --model given: every session it opens uses it, as `exec --model` and the terminal UI do.
    let given = format!("script:{}", script.display());
    let (mut child, port) = serve(tmp.path(), ws_arg, &["--model", &given]);
    let status = http(port, "GET", &format!("/api/sessions/{id}"));
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        status["model"].as_str().is_some_and(|m| m.starts_with("script:")),
        "{status}"
    );
}

/// Found by attack: a `model` line written into the log named any URL, and a resumed session sent
/// the user's API key there. A key goes only to an endpoint the user configured for it; a recorded
/// base URL that is not one is used without any key, and the user is told.
#[test]
fn a_recorded_base_url_never_receives_the_users_key() {
    use retrace_testkit::mock_openai::{sse, MockServer, Reply};
    let (tmp, ws, _) = setup();
    let ws_arg = ws.to_str().unwrap();
    let rt = support::mock_runtime();
    let done = || Reply::body(sse::body(&[sse::content("hi"), sse::finish("stop")], true));
    let evil = rt.block_on(MockServer::start(vec![done(), done()])).unwrap();
    let id = session_id(&exec(
        tmp.path(),
        &["--workspace", ws_arg, "--model", "demo", "one"],
    ));
    let log = tmp
        .path()
        .join("home")
        .join("sessions")
        .join(format!("{id}.jsonl"));
    for (i, (spec, var)) in [
        ("deepseek:deepseek-chat", "DEEPSEEK_API_KEY"),
        ("openai:gpt-4o", "OPENAI_API_KEY"),
    ]
    .into_iter()
    .enumerate()
    {
        let line = json!({"type": "model", "spec": spec, "base_url": format!("{}/evil", evil.base_url()), "at": "2026-12-06T13:56:40Z"});
        let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        writeln!(f, "{line}").unwrap();
        drop(f);
        let out = support::isolated_retrace(tmp.path())
            .args(["exec", "--json", "--session", &id, "x"])
            .env(var, "sk-SECRET")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(evil.request_count(), i + 1, "{stderr}");
        for r in evil.requests() {
            let auth = r.header("authorization").unwrap_or("");
            assert!(
                !auth.contains("sk-SECRET"),
                "the key went to a recorded URL: {auth}"
            );
        }
        assert!(
            stderr.contains("is not configured for a key; requests go without one")
                && stderr.contains("/evil"),
            "{stderr}"
        );
    }
}

/// Found by attack: `summarize` and `compact` used the configured default (DeepSeek here, which
/// has no key), sending the conversation to a provider the session never used. Without `--model`
/// they use the session's own, as `exec --session` does.
#[test]
fn summarize_and_compact_use_the_sessions_model() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let script = tmp.path().join("script.json");
    let replies: Vec<Value> = (0..6).map(|i| json!({"content": format!("reply {i}")})).collect();
    std::fs::write(&script, json!({ "responses": replies }).to_string()).unwrap();
    let model = format!("script:{}", script.display());
    let ws_arg = ws.to_str().unwrap();
    for command in [&["compact"][..], &["summarize", "--turn", "0", "--from"][..]] {
        let id = session_id(&exec(
            tmp.path(),
            &["--workspace", ws_arg, "--model", &model, "one"],
        ));
        answer(&exec(tmp.path(), &["--session", &id, "two"]));
        let mut args = command.to_vec();
        args.extend(["--session", &id, "--json"]);
        let out = support::isolated_retrace(tmp.path())
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The same attack through `serve`: a session whose log names a URL is opened with its model, and
/// its turn goes there without the user's key; the server says so on stderr.
#[test]
fn serve_sends_no_key_to_a_recorded_base_url() {
    use retrace_testkit::mock_openai::{sse, MockServer, Reply};
    let (tmp, ws, _) = setup();
    let ws_arg = ws.to_str().unwrap();
    let rt = support::mock_runtime();
    let done = Reply::body(sse::body(&[sse::content("hi"), sse::finish("stop")], true));
    let evil = rt.block_on(MockServer::start(vec![done])).unwrap();
    let id = session_id(&exec(
        tmp.path(),
        &["--workspace", ws_arg, "--model", "demo", "one"],
    ));
    let log = tmp
        .path()
        .join("home")
        .join("sessions")
        .join(format!("{id}.jsonl"));
    let line = json!({"type": "model", "spec": "deepseek:deepseek-chat", "base_url": format!("{}/evil", evil.base_url()), "at": "2026-12-06T13:56:40Z"});
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    writeln!(f, "{line}").unwrap();
    drop(f);
    let mut child = support::isolated_retrace(tmp.path())
        .args(["serve", "--port", "0", "--workspace", ws_arg])
        .env("RETRACE_TOKEN", TOKEN)
        .env("DEEPSEEK_API_KEY", "sk-SECRET")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    let port: u16 = first
        .strip_prefix("retrace: listening on http://127.0.0.1:")
        .and_then(|r| r.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{first}"));
    let body = json!({"prompt": "x"}).to_string();
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "POST /api/sessions/{id}/messages HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let start = std::time::Instant::now();
    while evil.request_count() == 0 && start.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = child.kill();
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let _ = child.wait();
    assert_eq!(evil.request_count(), 1, "{answer}\n{stderr}");
    for r in evil.requests() {
        let auth = r.header("authorization").unwrap_or("");
        assert!(
            !auth.contains("sk-SECRET"),
            "the key went to a recorded URL: {auth}"
        );
    }
    assert!(stderr.contains("is not configured for a key"), "{stderr}");
}
