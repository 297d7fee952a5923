//! `exec` against an OpenAI-compatible server (the mock of `retrace_testkit`) when the server is
//! less than perfect, and what a turn costs (issue 14, item 8): retries are announced as `notice`
//! events with their wait, `Retry-After` is honoured, an error chunk before any text is retried, a
//! stream ends at its `finish_reason` even when the server keeps the connection open, and token usage
//! is reported per step, per turn, in the result line and in the transcript.

use crate::support;

use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use retrace_testkit::mock_openai::sse::{self, body, content, finish, finish_with_usage};
use retrace_testkit::mock_openai::{Chunk, MockServer, Reply};
use serde_json::{json, Value};

/// Longer than any run here should take, far shorter than the client's 300 s read timeout: a run
/// that waits for more than the server sends is killed and fails the test instead of hanging it.
const DEADLINE: Duration = Duration::from_secs(60);

/// A scratch directory with a workspace `ws`, and the mock server (dropped before its runtime).
struct Env {
    tmp: tempfile::TempDir,
    server: MockServer,
    _rt: tokio::runtime::Runtime,
}

/// One `retrace` run: exit code, standard output, standard error.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    /// The JSON lines of standard output.
    fn lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }

    /// The events of type `ty`.
    fn events(&self, ty: &str) -> Vec<Value> {
        self.lines().into_iter().filter(|e| e["type"] == ty).collect()
    }

    /// The last line: the result.
    fn result(&self) -> Value {
        let last = self.lines().pop().unwrap();
        assert_eq!(last["type"], "result", "{}", self.stdout);
        last
    }
}

impl Env {
    fn new(replies: Vec<Reply>) -> Env {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("ws")).unwrap();
        let rt = support::mock_runtime();
        let server = rt.block_on(MockServer::start(replies)).unwrap();
        Env { tmp, server, _rt: rt }
    }

    fn command(&self) -> Command {
        let mut c = support::isolated_retrace(self.tmp.path());
        c.current_dir(self.tmp.path().join("ws"))
            .env("OPENAI_API_KEY", "test-key");
        c
    }

    /// `exec [--session ID] ARGS PROMPT` against the mock server, within [`DEADLINE`].
    fn exec(&self, session: Option<&str>, args: &[&str], prompt: &str) -> Run {
        let mut c = self.command();
        c.args(["exec", "--model", "openai:mock-model", "--base-url"])
            .arg(self.server.base_url());
        if let Some(id) = session {
            c.args(["--session", id]);
        }
        c.args(args).arg(prompt);
        within_deadline(c)
    }

    /// `transcript --session ID` (JSON or the human text).
    fn transcript(&self, id: &str, json: bool) -> String {
        let mut c = self.command();
        c.args(["transcript", "--session", id]);
        if json {
            c.arg("--json");
        }
        let out = c.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

/// Runs `c` to its end, or kills it at [`DEADLINE`] and fails.
fn within_deadline(mut c: Command) -> Run {
    let child = c
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = mpsc::channel::<Output>();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output().unwrap());
    });
    let out = rx.recv_timeout(DEADLINE).unwrap_or_else(|_| {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        panic!("retrace exec did not finish within {DEADLINE:?}");
    });
    Run {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn ok_stream(text: &str) -> Reply {
    Reply::body(body(&[content(text), finish("stop")], true))
}

fn usage(prompt: u64, completion: u64) -> Value {
    json!({"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion})
}

#[test]
fn a_retry_is_announced_and_waits_as_long_as_retry_after_says() {
    let env = Env::new(vec![Reply::rate_limited(Some("1")), ok_stream("done")]);
    let run = env.exec(None, &["--json"], "hi");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let notices = run.events("notice");
    assert_eq!(
        notices,
        [json!({
            "type": "notice",
            "message": "model: HTTP 429 (rate limit reached), retrying in 1.0 s (attempt 2 of 4)",
            "retry": {"attempt": 2, "max_attempts": 4, "wait_ms": 1000, "reason": "HTTP 429 (rate limit reached)"}
        })]
    );
    let requests = env.server.requests();
    assert_eq!(requests.len(), 2);
    let gap = requests[1].received_at - requests[0].received_at;
    assert!(gap >= Duration::from_millis(950), "the retry came after {gap:?}");
    assert_eq!(run.result()["ok"], true);
    // With --json too, the notice is on standard error for the user (SPEC §11).
    assert!(run.stderr.contains("retrying in 1.0 s"), "{}", run.stderr);
}

#[test]
fn in_human_mode_a_retry_notice_goes_to_stderr() {
    let env = Env::new(vec![Reply::error(503, "overloaded"), ok_stream("done")]);
    let run = env.exec(None, &[], "hi");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let notice = "retrace: model: HTTP 503 (overloaded), retrying in 1.0 s (attempt 2 of 4)";
    assert!(run.stderr.contains(notice), "{}", run.stderr);
    assert!(!run.stdout.contains("retrying"), "{}", run.stdout);
    assert!(run.stdout.contains("done"), "{}", run.stdout);
}

#[test]
fn an_error_chunk_is_retried_before_any_text_and_fails_the_turn_after_text() {
    let role = sse::delta(json!({"role": "assistant", "content": ""}));
    let early = Reply::body(body(&[role, sse::error("upstream overloaded", Some(502))], false));
    let late = Reply::body(body(
        &[content("half"), sse::error("upstream died", Some(502))],
        false,
    ));
    let env = Env::new(vec![early, ok_stream("recovered"), late, ok_stream("never sent")]);

    let first = env.exec(None, &["--json"], "hi");
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    let notices = first.events("notice");
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(
        notices[0]["retry"]["reason"],
        "error in the stream (upstream overloaded)"
    );
    assert_eq!(env.server.request_count(), 2);

    let id = first.result()["session_id"].as_str().unwrap().to_string();
    let second = env.exec(Some(&id), &["--json"], "again");
    assert_eq!(second.code, Some(1), "{}", second.stdout);
    assert!(second.events("notice").is_empty(), "{}", second.stdout);
    let result = second.result();
    assert_eq!(result["ok"], false);
    let error = result["error"]["message"].as_str().unwrap();
    assert!(error.contains("upstream died"), "{error}");
    assert_eq!(env.server.request_count(), 3, "no retry after text was shown");
}

/// The server sends the finish (with or without usage) and then neither `[DONE]` nor a close: the
/// turn ends at once when the usage came with the finish, after the short usage grace otherwise —
/// never at the client's 300 s read timeout (the run would be killed at [`DEADLINE`]).
#[test]
fn a_turn_ends_at_finish_reason_while_the_server_holds_the_connection() {
    let with_usage = body(&[content("done"), finish_with_usage("stop", 7, 2)], false);
    let without = body(&[content("done again"), finish("stop")], false);
    let env = Env::new(vec![
        Reply::hang(vec![Chunk::new(with_usage)]),
        Reply::hang(vec![Chunk::new(without)]),
    ]);
    let first = env.exec(None, &["--json"], "hi");
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    assert_eq!(first.result()["usage"], usage(7, 2));

    let id = first.result()["session_id"].as_str().unwrap().to_string();
    let second = env.exec(Some(&id), &["--json"], "again");
    assert_eq!(second.code, Some(0), "{}", second.stderr);
    assert_eq!(second.result()["usage"], Value::Null, "no usage came");
}

#[test]
fn token_usage_is_reported_per_step_per_turn_and_in_the_transcript() {
    let list = body(
        &[
            sse::tool_call_start(0, "c1", "list_dir"),
            sse::tool_call_args(0, r#"{"path":"."}"#),
            finish("tool_calls"),
            sse::usage(100, 10),
        ],
        true,
    );
    let answer = body(&[content("done"), finish_with_usage("stop", 130, 5)], true);
    let next = body(&[content("again"), finish_with_usage("stop", 140, 4)], true);
    let env = Env::new(vec![Reply::body(list), Reply::body(answer), Reply::body(next)]);

    let run = env.exec(None, &["--json"], "look");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let steps = run.events("step_finished");
    assert_eq!(
        steps,
        [
            json!({"type": "step_finished", "turn": 0, "step": 0, "finish_reason": "tool_calls", "usage": usage(100, 10)}),
            json!({"type": "step_finished", "turn": 0, "step": 1, "finish_reason": "stop", "usage": usage(130, 5)}),
        ]
    );
    let finished = run.events("turn_finished");
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["usage"], usage(230, 15));
    let result = run.result();
    assert_eq!(result["usage"], usage(230, 15));

    let id = result["session_id"].as_str().unwrap().to_string();
    let transcript: Vec<Value> = serde_json::from_str(&env.transcript(&id, true)).unwrap();
    let usages: Vec<(&str, &Value)> = transcript
        .iter()
        .map(|m| (m["role"].as_str().unwrap(), &m["usage"]))
        .collect();
    assert_eq!(
        usages,
        [
            ("user", &Value::Null),
            ("assistant", &usage(100, 10)),
            ("tool", &Value::Null),
            ("assistant", &usage(130, 5)),
        ]
    );
    let human = env.transcript(&id, false);
    assert!(human.contains("\n    tokens: in 100, out 10\n"), "{human}");
    assert!(human.contains("\n    tokens: in 130, out 5\n"), "{human}");

    let again = env.exec(Some(&id), &[], "again");
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    let summary = again.stdout.lines().last().unwrap();
    assert!(
        summary.ends_with(" · turn 1 · tokens: in 140, out 4"),
        "{summary}"
    );
}
