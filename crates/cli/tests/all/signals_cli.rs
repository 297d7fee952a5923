//! A turn stopped from outside (issue 14 items 1 and 2): Ctrl-C, SIGTERM and SIGHUP cancel it
//! (what ran is kept, every tool call answered, the shell's process group killed, the session goes
//! on); a closed
//! standard output cancels it instead of killing it mid-tool; and after a SIGKILL, which nothing
//! can catch, the next turn repairs the conversation so that a strict server accepts it.

use crate::support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use retrace_testkit::mock_openai::{sse, MockServer, Reply};
use serde_json::{json, Value};

struct Run {
    tmp: tempfile::TempDir,
    ws: PathBuf,
    script: PathBuf,
}

impl Run {
    /// A workspace and a script whose first step writes a file and starts `sleep 30` in a shell
    /// that first writes its process id to `pid.txt`.
    fn new() -> Run {
        Run::sleeping(30)
    }

    /// [`Run::new`] with a shell command that sleeps `secs`.
    fn sleeping(secs: u32) -> Run {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let script = tmp.path().join("script.json");
        std::fs::write(
            &script,
            json!({"responses": [
                {"content": "writing, then waiting", "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "kept.txt", "content": "kept\n"}},
                    {"name": "bash", "arguments": {"command": format!("echo $$ > pid.txt; sleep {secs}")}},
                    {"name": "write_file", "arguments": {"path": "never.txt", "content": "no\n"}}
                ]},
                {"content": "not reached"}
            ]})
            .to_string(),
        )
        .unwrap();
        Run { tmp, ws, script }
    }

    fn command(&self) -> std::process::Command {
        support::isolated_retrace(self.tmp.path())
    }

    /// `exec --json` of the script, stopped once its shell command runs; returns the process and
    /// the lines it printed so far, and the rest of its output as a reader.
    fn start(
        &self,
    ) -> (
        Child,
        Vec<Value>,
        std::io::Lines<BufReader<std::process::ChildStdout>>,
    ) {
        let mut child = self
            .command()
            .args(["exec", "--json", "--allow-bash", "--workspace"])
            .arg(&self.ws)
            .arg("--model")
            .arg(format!("script:{}", self.script.display()))
            .arg("do it")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut seen = Vec::new();
        let started = Instant::now();
        loop {
            let line = lines.next().expect("exec ended before the bash call").unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            let bash = v["type"] == "tool_call" && v["name"] == "bash";
            seen.push(v);
            if bash {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(30), "no bash call");
        }
        // The shell has written its pid: it runs.
        let pid = self.ws.join("pid.txt");
        while !std::fs::read_to_string(&pid).is_ok_and(|s| s.ends_with('\n')) {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the shell never started"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        (child, seen, lines)
    }

    /// The shell's process id.
    fn shell_pid(&self) -> i32 {
        std::fs::read_to_string(self.ws.join("pid.txt"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    fn transcript(&self, session: &str) -> Vec<Value> {
        let out = self
            .command()
            .args(["transcript", "--json", "--session", session])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

/// Whether process `pid` is gone (or a zombie nobody will run again) within a few seconds.
fn gone(pid: i32) -> bool {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(5) {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(s) if s.split_whitespace().nth(2) == Some("Z") => return true,
            Ok(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    false
}

/// Every tool call of the transcript has a result; returns the results' texts.
fn every_call_answered(msgs: &[Value]) -> Vec<String> {
    let calls: Vec<String> = msgs
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    assert!(!calls.is_empty());
    calls
        .iter()
        .map(|id| {
            msgs.iter()
                .find(|m| m["role"] == "tool" && m["tool_call_id"] == id.as_str())
                .unwrap_or_else(|| panic!("no result for {id}"))["content"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

fn assert_cancelled_cleanly(run: &Run, signal: Signal) {
    let (mut child, mut seen, lines) = run.start();
    let shell = run.shell_pid();
    let t = Instant::now();
    kill(Pid::from_raw(child.id() as i32), signal).unwrap();
    seen.extend(lines.map(|l| serde_json::from_str::<Value>(&l.unwrap()).unwrap()));
    let status = child.wait().unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "{signal:?}: the sleep was not cut short"
    );
    assert_eq!(status.code(), Some(1), "{signal:?}");
    let last = seen.last().unwrap();
    assert_eq!(last["type"], "result", "{signal:?}");
    assert!(
        last["error"]["message"].as_str().unwrap().contains("cancel"),
        "{last}"
    );
    assert_eq!(last["error"]["code"], "cancelled", "{last}");
    assert!(gone(shell), "{signal:?}: the shell's process outlived the turn");
    assert_eq!(std::fs::read(run.ws.join("kept.txt")).unwrap(), b"kept\n");
    assert!(!run.ws.join("never.txt").exists());
    let session = last["session_id"].as_str().unwrap();
    assert_eq!(every_call_answered(&run.transcript(session)).len(), 3);
    // The session goes on, with the next turn number.
    let done = run.tmp.path().join("done.json");
    std::fs::write(&done, json!({"responses": [{"content": "ok"}]}).to_string()).unwrap();
    let out = run
        .command()
        .args(["exec", "--json", "--session", session, "--model"])
        .arg(format!("script:{}", done.display()))
        .arg("again")
        .output()
        .unwrap();
    let next: Value =
        serde_json::from_str(String::from_utf8(out.stdout).unwrap().lines().last().unwrap()).unwrap();
    assert_eq!(
        (next["ok"].as_bool(), next["turn"].as_u64()),
        (Some(true), Some(1)),
        "{next}"
    );
}

#[test]
fn ctrl_c_cancels_the_turn_and_leaves_a_consistent_log() {
    assert_cancelled_cleanly(&Run::new(), Signal::SIGINT);
}

#[test]
fn sigterm_cancels_the_turn_like_ctrl_c() {
    assert_cancelled_cleanly(&Run::new(), Signal::SIGTERM);
}

#[test]
fn sighup_cancels_the_turn_like_ctrl_c() {
    assert_cancelled_cleanly(&Run::new(), Signal::SIGHUP);
}

/// `exec --json | head -1`: standard output closes mid-turn. The process is not killed by SIGPIPE
/// in the middle of a tool: when it next prints it finds the pipe closed and cancels the turn, or
/// the turn had finished by then (the agent does not wait for the printer). Either way every call
/// is answered.
#[test]
fn a_closed_stdout_cancels_the_turn_instead_of_killing_it() {
    use std::os::unix::process::ExitStatusExt;
    let run = Run::sleeping(2);
    let (mut child, seen, lines) = run.start();
    let id = seen[0]["session_id"].as_str().unwrap().to_string();
    drop(lines); // the reader goes away, like `head -1` after its line
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), None, "killed by a signal: {status:?}");
    assert!(matches!(status.code(), Some(0 | 1)), "{status:?}");
    every_call_answered(&run.transcript(&id));
}

/// SIGKILL cannot be caught: the log keeps tool calls without results. The next turn answers them
/// ("interrupted"), in the log, before the model sees the history: a server that rejects unanswered
/// calls (as real ones do, HTTP 400) accepts it.
#[test]
fn after_a_sigkill_the_next_turn_repairs_the_conversation() {
    let run = Run::new();
    let (mut child, seen, _lines) = run.start();
    let id = seen[0]["session_id"].as_str().unwrap().to_string();
    let shell = run.shell_pid();
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();
    let _ = kill(Pid::from_raw(-shell), Signal::SIGKILL); // what SIGKILL leaves behind

    let rt = support::mock_runtime();
    let reply = Reply::body(sse::body(
        &[sse::content("carrying on"), sse::finish("stop")],
        true,
    ));
    let server = rt
        .block_on(MockServer::start_strict_with_key("test-key", vec![reply]))
        .unwrap();
    let out = run
        .command()
        .env("OPENAI_API_KEY", "test-key")
        .args([
            "exec",
            "--json",
            "--session",
            &id,
            "--model",
            "openai:mock-model",
            "--base-url",
        ])
        .arg(server.base_url())
        .arg("go on")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(server.rejected(), 0, "the history sent had unanswered calls");
    let results = every_call_answered(&run.transcript(&id));
    assert!(results.iter().any(|r| r.contains("interrupted")), "{results:?}");
}
