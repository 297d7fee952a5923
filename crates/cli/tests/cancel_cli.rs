//! Ctrl-C during `retrace exec`: the turn stops, the log stays consistent, the session goes on.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;

fn retrace(tmp: &std::path::Path) -> Command {
    support::isolated_retrace(tmp)
}

#[test]
fn ctrl_c_cancels_the_turn_and_leaves_a_consistent_log() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let script = tmp.path().join("script.json");
    std::fs::write(
        &script,
        serde_json::json!({"responses": [
            {"content": "writing, then waiting", "tool_calls": [
                {"name": "write_file", "arguments": {"path": "kept.txt", "content": "kept\n"}},
                {"name": "bash", "arguments": {"command": "sleep 30"}},
                {"name": "write_file", "arguments": {"path": "never.txt", "content": "no\n"}}
            ]},
            {"content": "not reached"},
            {"content": "second turn done"}
        ]})
        .to_string(),
    )
    .unwrap();
    let mut child = retrace(tmp.path())
        .args(["exec", "--json", "--allow-bash", "--workspace"])
        .arg(&ws)
        .arg("--model")
        .arg(format!("script:{}", script.display()))
        .arg("do it")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let started = Instant::now();
    let mut events: Vec<Value> = Vec::new();
    // Wait until the shell command is running, then press Ctrl-C.
    loop {
        let line = lines.next().expect("exec ended before the bash call").unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        let is_bash = v["type"] == "tool_call" && v["name"] == "bash";
        events.push(v);
        if is_bash {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "no bash call");
    }
    std::thread::sleep(Duration::from_millis(200));
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    for line in lines {
        events.push(serde_json::from_str(&line.unwrap()).unwrap());
    }
    let status = child.wait().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "the sleep was not cut short"
    );
    assert_eq!(status.code(), Some(1));
    let last = events.last().unwrap();
    assert_eq!(last["type"], "result");
    assert_eq!(last["ok"], false);
    assert!(last["error"].as_str().unwrap().contains("cancel"), "{last}");
    let session = last["session_id"].as_str().unwrap().to_string();
    // What ran is kept; what was not reached never ran.
    assert_eq!(std::fs::read(ws.join("kept.txt")).unwrap(), b"kept\n");
    assert!(!ws.join("never.txt").exists());
    // The log is consistent: every tool call of the assistant message has a result.
    let out = retrace(tmp.path())
        .args(["transcript", "--json", "--session", &session])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let msgs: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let calls: Vec<String> = msgs
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(calls.len(), 3);
    for id in &calls {
        assert!(
            msgs.iter()
                .any(|m| m["role"] == "tool" && m["tool_call_id"] == id.as_str()),
            "no result for {id}"
        );
    }
    // The checkpoint of the cancelled turn is there and the session goes on with the next number.
    let out = retrace(tmp.path())
        .args(["exec", "--json", "--session", &session, "--model"])
        .arg(format!("script:{}", script.display()))
        .arg("again")
        .output()
        .unwrap();
    let last: Value =
        serde_json::from_str(String::from_utf8(out.stdout).unwrap().lines().last().unwrap()).unwrap();
    assert_eq!(last["turn"], 1, "{last}");
}
