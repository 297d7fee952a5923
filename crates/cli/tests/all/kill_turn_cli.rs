//! `retrace exec` and `retrace serve` killed with SIGKILL at every phase of a turn (issue 25 items 2
//! and 4): during a tool's write, between two tool calls, while the model is answering, around
//! the end of the turn. Each kill is followed by `retrace rewind --turn N --scope code --yes` of the
//! killed turn, which must restore every file the turn wrote (an overwrite, an edit, a delete, a
//! new file in new directories, a second edit of the same file) with no conflict, and leave no
//! stray file or directory in the workspace.

use crate::support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use retrace_testkit::mock_openai::{sse, Chunk, MockServer, Reply};
use serde_json::{json, Value};

/// The killed turn (the setup turn is 0).
const KILLED: u64 = 1;

struct Bench {
    tmp: tempfile::TempDir,
    ws: PathBuf,
    session: String,
    /// The workspace after the setup turn: what the rewind must give back.
    before: BTreeMap<String, Vec<u8>>,
}

/// The setup turn's writes: the files become Retrace's own, as they are in a session that goes on.
fn setup_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("write_file", json!({"path": "over.txt", "content": "over\n"})),
        ("write_file", json!({"path": "edit.txt", "content": "edit\n"})),
        ("write_file", json!({"path": "gone.txt", "content": "gone\n"})),
    ]
}

/// The killed turn's writes, in the order the tools run them.
fn overwrite() -> (&'static str, Value) {
    (
        "write_file",
        json!({"path": "over.txt", "content": "overwritten\n"}),
    )
}
fn edit() -> (&'static str, Value) {
    (
        "edit_file",
        json!({"path": "edit.txt", "old_string": "edit", "new_string": "edit, edited"}),
    )
}
fn delete() -> (&'static str, Value) {
    ("delete_file", json!({"path": "gone.txt"}))
}
fn create() -> (&'static str, Value) {
    (
        "write_file",
        json!({"path": "new/dir/made.txt", "content": "made\n"}),
    )
}
fn edit_again() -> (&'static str, Value) {
    (
        "edit_file",
        json!({"path": "over.txt", "old_string": "overwritten", "new_string": "overwritten twice"}),
    )
}

/// A streamed answer that makes these tool calls (arguments cut into pieces of at most 4 MiB,
/// under the client's per-event cap).
fn calls(calls: &[(&str, Value)]) -> Reply {
    let mut chunks = Vec::new();
    for (i, (name, args)) in calls.iter().enumerate() {
        chunks.push(sse::tool_call_start(i as u64, &format!("call_{i}"), name));
        let args = args.to_string();
        for piece in args.as_bytes().chunks(4 << 20) {
            chunks.push(sse::tool_call_args(i as u64, std::str::from_utf8(piece).unwrap()));
        }
    }
    chunks.push(sse::finish("tool_calls"));
    Reply::body(sse::body(&chunks, true))
}

/// A model request that is never answered: the user's "hung model".
fn held() -> Reply {
    Reply::hang(vec![Chunk::new(sse::KEEP_ALIVE)])
}

impl Bench {
    /// A workspace whose session has run the setup turn (through the script model).
    fn new() -> Bench {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let script = tmp.path().join("setup.json");
        let tool_calls: Vec<Value> = setup_calls()
            .into_iter()
            .map(|(name, arguments)| json!({"name": name, "arguments": arguments}))
            .collect();
        std::fs::write(
            &script,
            json!({"responses": [{"content": "", "tool_calls": tool_calls}, {"content": "set up"}]})
                .to_string(),
        )
        .unwrap();
        let out = support::isolated_retrace(tmp.path())
            .args(["exec", "--json", "--workspace"])
            .arg(&ws)
            .arg("--model")
            .arg(format!("script:{}", script.display()))
            .arg("set up")
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let last: Value =
            serde_json::from_str(String::from_utf8(out.stdout).unwrap().lines().last().unwrap()).unwrap();
        let session = last["session_id"].as_str().unwrap().to_string();
        let before = files(&ws);
        assert_eq!(before.len(), 3);
        Bench {
            tmp,
            ws,
            session,
            before,
        }
    }

    /// `exec` of the killed turn against `server`, shell allowed.
    fn exec(&self, server: &MockServer) -> Child {
        support::isolated_retrace(self.tmp.path())
            .env("OPENAI_API_KEY", "test-key")
            .args(["exec", "--json", "--allow-bash", "--session", &self.session])
            .args(["--model", "openai:mock-model", "--base-url"])
            .arg(server.base_url())
            .arg("change them")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    /// `rewind --turn 1 --scope code --yes`: succeeds, conflicts none, and the workspace is as
    /// the setup turn left it, with nothing else in it.
    fn rewind_cleanly(&self, ctx: &str) {
        let out = support::isolated_retrace(self.tmp.path())
            .args([
                "rewind",
                "--json",
                "--yes",
                "--scope",
                "code",
                "--session",
                &self.session,
            ])
            .args(["--turn", &KILLED.to_string()])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{ctx}: the rewind failed: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let result: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(result["ok"], true, "{ctx}: {result:#}");
        assert_eq!(result["conflicts"], json!([]), "{ctx}: {result:#}");
        assert_eq!(
            files(&self.ws),
            self.before,
            "{ctx}: the workspace was not restored"
        );
        assert_eq!(
            stray(&self.ws),
            Vec::<String>::new(),
            "{ctx}: left in the workspace"
        );
    }
}

/// Waits until `f` holds (20 s at most).
fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn sigkill(child: &mut Child) {
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();
}

/// Every regular file under `dir`, by relative path.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    walk(dir)
        .into_iter()
        .filter(|p| p.is_file())
        .map(|p| {
            (
                p.strip_prefix(dir).unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

/// Temp files and directories under `dir` (the setup made none).
fn stray(dir: &Path) -> Vec<String> {
    walk(dir)
        .into_iter()
        .filter(|p| p.is_dir() || p.to_string_lossy().contains(".retrace-"))
        .map(|p| p.strip_prefix(dir).unwrap().to_string_lossy().into_owned())
        .collect()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

/// The tool calls ran, and the next model request waits for an answer that never comes (the
/// longest phase of a turn, and when a user kills a hung model).
#[test]
fn sigkill_while_the_model_is_answering_then_rewind_restores_everything() {
    let b = Bench::new();
    let rt = support::mock_runtime();
    let server = rt
        .block_on(MockServer::start(vec![
            calls(&[overwrite(), edit(), delete(), create(), edit_again()]),
            held(),
        ]))
        .unwrap();
    let mut child = b.exec(&server);
    wait_for("the second model request", || server.request_count() == 2);
    sigkill(&mut child);
    assert!(b.ws.join("new/dir/made.txt").exists(), "the tools did not run");
    b.rewind_cleanly("killed while the model was answering");
}

/// Between two tool calls of one step: a shell command runs (and sleeps) after some writes. (Its
/// gap's append journals the after-images before it, so this one held before intents too; the
/// approval wait below is the window that did not.)
#[test]
fn sigkill_between_two_writes_then_rewind_restores_everything() {
    let b = Bench::new();
    let pid_file = b.tmp.path().join("shell.pid");
    let shell = (
        "bash",
        json!({"command": format!("echo $$ > {}; sleep 30", pid_file.display())}),
    );
    let rt = support::mock_runtime();
    let server = rt
        .block_on(MockServer::start(vec![
            calls(&[overwrite(), edit(), create(), shell, delete(), edit_again()]),
            held(),
        ]))
        .unwrap();
    let mut child = b.exec(&server);
    wait_for("the shell command", || {
        std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n'))
    });
    let shell_pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    sigkill(&mut child);
    let _ = kill(Pid::from_raw(-shell_pid), Signal::SIGKILL); // what SIGKILL leaves behind
    assert!(b.ws.join("gone.txt").exists(), "the calls after the shell ran");
    b.rewind_cleanly("killed between two writes");
}

/// In the middle of a tool's write: its temp file is there, not yet renamed over the file. A
/// large file makes the write long enough to be caught; an attempt whose write finished before
/// the kill is tried again.
#[test]
fn sigkill_during_a_write_then_rewind_restores_everything_and_removes_the_temp_file() {
    let mut caught = 0;
    for attempt in 0..5 {
        let b = Bench::new();
        let big = (
            "write_file",
            json!({"path": "new/big.txt", "content": "x".repeat(24 << 20)}),
        );
        let rt = support::mock_runtime();
        let server = rt
            .block_on(MockServer::start(vec![
                calls(&[overwrite(), edit(), delete(), big]),
                held(),
            ]))
            .unwrap();
        let mut child = b.exec(&server);
        let dir = b.ws.join("new");
        let temp = || {
            std::fs::read_dir(&dir)
                .ok()
                .and_then(|rd| {
                    rd.flatten()
                        .find(|e| e.file_name().to_string_lossy().contains(".retrace-"))
                })
                .map(|e| e.path())
        };
        wait_for("the temp file of the write", || {
            temp().is_some() || server.request_count() == 2
        });
        sigkill(&mut child);
        if temp().is_some() {
            caught += 1;
            b.rewind_cleanly(&format!("killed during a write (attempt {attempt})"));
            break;
        }
        // Too late: the write had finished; what was left must still rewind cleanly.
        b.rewind_cleanly(&format!("killed just after a write (attempt {attempt})"));
    }
    assert_eq!(caught, 1, "no kill landed during the write");
}

/// Around the end of the turn: the model's last answer arrives 300 ms after it was asked for, and
/// the process is killed 0 to 12 ms after that, while it writes the answer, the turn's record, its
/// state and its log (or just after it ended). The checkpoint crate's `kill_turn` test kills at
/// each durable step of the end of the turn exactly.
#[test]
fn sigkill_around_the_end_of_the_turn_then_rewind_restores_everything() {
    const ANSWER_AFTER: Duration = Duration::from_millis(300);
    for delay_us in [0u64, 500, 1000, 1500, 2000, 3000, 4000, 6000, 8000, 12000] {
        let b = Bench::new();
        let rt = support::mock_runtime();
        let last = sse::body(&[sse::content("done"), sse::finish("stop")], true);
        let server = rt
            .block_on(MockServer::start(vec![
                calls(&[overwrite(), edit(), delete(), create(), edit_again()]),
                Reply::stream(vec![Chunk::after(ANSWER_AFTER, last)]),
            ]))
            .unwrap();
        let mut child = b.exec(&server);
        let start = Instant::now();
        while server.request_count() < 2 {
            assert!(start.elapsed() < Duration::from_secs(20), "no second request");
            std::thread::sleep(Duration::from_micros(200));
        }
        std::thread::sleep(ANSWER_AFTER + Duration::from_micros(delay_us));
        sigkill(&mut child);
        b.rewind_cleanly(&format!("killed {delay_us} µs after the last answer was sent"));
    }
}

const TOKEN: &str = "kill-test-token-0123456789";

/// `retrace serve` on the bench's workspace and `server` (shell commands asked about, as by
/// default), with the turn started over HTTP; returns the process.
fn serve_turn(b: &Bench, server: &MockServer) -> Child {
    let mut child = support::isolated_retrace(b.tmp.path())
        .env("OPENAI_API_KEY", "test-key")
        .env("RETRACE_TOKEN", TOKEN)
        .args(["serve", "--port", "0", "--workspace"])
        .arg(&b.ws)
        .args(["--model", "openai:mock-model", "--base-url"])
        .arg(server.base_url())
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
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let path = format!("/api/sessions/{}/messages", b.session);
    let body = json!({"prompt": "change them"}).to_string();
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 202"), "{out}");
    child
}

/// `retrace serve` killed while the model is answering a turn started over HTTP.
#[test]
fn sigkill_of_serve_while_the_model_is_answering_then_rewind_restores_everything() {
    let b = Bench::new();
    let rt = support::mock_runtime();
    let server = rt
        .block_on(MockServer::start(vec![
            calls(&[overwrite(), edit(), delete(), create(), edit_again()]),
            held(),
        ]))
        .unwrap();
    let mut child = serve_turn(&b, &server);
    wait_for("the second model request", || server.request_count() == 2);
    sigkill(&mut child);
    b.rewind_cleanly("serve killed while the model was answering");
}

/// `retrace serve` killed between two writes of one step, while a shell command waits for the
/// user's approval (nothing is journaled while it waits: the writes before it are in memory only).
#[test]
fn sigkill_of_serve_between_two_writes_while_an_approval_waits_then_rewind_restores_everything() {
    let b = Bench::new();
    let rt = support::mock_runtime();
    let shell = ("bash", json!({"command": "true"}));
    let server = rt
        .block_on(MockServer::start(vec![
            calls(&[overwrite(), edit(), create(), shell, delete(), edit_again()]),
            held(),
        ]))
        .unwrap();
    let mut child = serve_turn(&b, &server);
    wait_for("the write before the shell command", || {
        b.ws.join("new/dir/made.txt").exists()
    });
    // The approval is asked for right after; nobody answers it.
    std::thread::sleep(Duration::from_millis(300));
    sigkill(&mut child);
    assert!(b.ws.join("gone.txt").exists(), "the calls after the shell ran");
    b.rewind_cleanly("serve killed while an approval waited");
}
