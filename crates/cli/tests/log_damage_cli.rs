//! The session log against damage from outside, through the real binary and the script model: a
//! lease file removed while its session is held lets no second writer in (the log itself is
//! locked), and a line in the middle of a log that cannot be read keeps the files restorable,
//! is named by `fsck` (file and line), and is moved aside by `fsck --repair`, after which the
//! session is usable again (SPEC §6, docs/FORMATS.md "Session log").
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::cell::Cell;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};
use tempfile::TempDir;

/// One test's private world: the workspace `ws/`, the data root `home/`, scripts.
struct Env {
    tmp: TempDir,
    ws: PathBuf,
    scripts: Cell<usize>,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        for d in ["ws", "home", "xdg", "scripts"] {
            std::fs::create_dir(tmp.path().join(d)).unwrap();
        }
        let ws = std::fs::canonicalize(tmp.path().join("ws")).unwrap();
        Env {
            tmp,
            ws,
            scripts: Cell::new(0),
        }
    }

    fn command(&self) -> Command {
        support::isolated_retrace(self.tmp.path())
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().unwrap()
    }

    /// Runs `args`, expecting exit `code`; returns (stdout, stderr).
    fn code(&self, args: &[&str], code: i32) -> (String, String) {
        let out = self.run(args);
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        );
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?}\nstdout: {stdout}\nstderr: {stderr}"
        );
        (stdout, stderr)
    }

    /// Runs `args` with `--json`, expecting exit `code`; stdout is one JSON document.
    fn json_code(&self, args: &[&str], code: i32) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        let (stdout, _) = self.code(&all, code);
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {stdout}"))
    }

    fn script(&self, responses: Value) -> String {
        let n = self.scripts.get();
        self.scripts.set(n + 1);
        let path = self.tmp.path().join(format!("scripts/s{n}.json"));
        std::fs::write(&path, json!({ "responses": responses }).to_string()).unwrap();
        format!("script:{}", path.display())
    }

    fn exec_args(&self, session: Option<&str>, model: &str, prompt: &str) -> Vec<String> {
        let mut args: Vec<String> = vec!["exec".into(), "--json".into(), "--model".into(), model.into()];
        match session {
            Some(id) => args.extend(["--session".to_string(), id.to_string()]),
            None => args.extend(["--workspace".to_string(), self.ws.display().to_string()]),
        }
        args.extend(["--allow-bash".to_string(), prompt.to_string()]);
        args
    }

    /// One turn that must finish; returns the session id.
    fn exec(&self, session: Option<&str>, prompt: &str, responses: Value) -> String {
        let model = self.script(responses);
        let args = self.exec_args(session, &model, prompt);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (stdout, _) = self.code(&args, 0);
        let result: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
        assert_eq!(result["ok"], true, "{result}");
        result["session_id"].as_str().unwrap().to_string()
    }

    fn sessions_dir(&self) -> PathBuf {
        self.tmp.path().join("home/sessions")
    }

    fn log(&self, id: &str) -> PathBuf {
        self.sessions_dir().join(format!("{id}.jsonl"))
    }

    fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.ws.join(rel)).ok()
    }
}

fn write(path: &str, content: &str) -> Value {
    json!({"name": "write_file", "arguments": {"path": path, "content": content}})
}

fn turn_of(calls: Vec<Value>) -> Value {
    json!([{"content": "working", "tool_calls": calls}, {"content": "done"}])
}

/// A running `exec` whose shell command waits for a file; dropping it releases and reaps it.
struct Holder {
    child: std::process::Child,
    release: PathBuf,
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.release, b"");
        if std::thread::panicking() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

#[test]
fn a_removed_lease_file_lets_no_second_writer_in() {
    let env = Env::new();
    let id = env.exec(None, "zero", turn_of(vec![write("a.txt", "a0\n")]));
    let release = env.tmp.path().join("release");
    let wait = format!(
        "while [ ! -e '{}' ]; do sleep 0.02; done; echo released",
        release.display()
    );
    let model = env.script(turn_of(vec![json!({
        "name": "bash",
        "arguments": {"command": wait, "timeout_ms": 60_000}
    })]));
    let mut holder = Holder {
        child: env
            .command()
            .args(env.exec_args(Some(&id), &model, "hold"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
        release: release.clone(),
    };
    let mut lines = BufReader::new(holder.child.stdout.take().unwrap()).lines();
    loop {
        let line = lines.next().expect("the holder ended early").unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["type"] == "tool_call" && v["name"] == "bash" {
            break;
        }
    }

    // A clean-up of lock files that look stale removes the held lease.
    std::fs::remove_file(env.sessions_dir().join(format!("{id}.lease"))).unwrap();
    let pid = format!("pid {}", holder.child.id());
    let model = env.script(json!([{"content": "never"}]));
    let second = env.exec_args(Some(&id), &model, "intruder");
    let second: Vec<&str> = second.iter().map(String::as_str).collect();
    let writers: [&[&str]; 4] = [
        &second,
        &["rewind", "--session", &id, "--turn", "0", "--scope", "code"],
        &["fsck", "--session", &id, "--repair"],
        &["sessions", "delete", &id],
    ];
    for args in writers {
        let (_, stderr) = env.code(args, 1);
        assert!(stderr.contains("held by another writer"), "{args:?}: {stderr}");
        assert!(stderr.contains(&pid), "{args:?} names the holder: {stderr}");
    }
    assert_eq!(
        env.read("a.txt").as_deref(),
        Some("a0\n"),
        "the rewind wrote nothing"
    );

    std::fs::write(&release, b"").unwrap();
    let rest: Vec<Value> = lines
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    assert!(holder.child.wait().unwrap().success());
    assert_eq!(rest.last().unwrap()["ok"], true);

    // Only the holder wrote: the session reads whole, and the next writer gets in.
    let fsck = env.json_code(&["fsck", "--session", &id], 0);
    assert_eq!(fsck["ok"], true, "{fsck}");
    let t = env.json_code(&["transcript", "--session", &id], 0);
    let users: Vec<&str> = t
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(users, ["zero", "hold"]);
    env.exec(Some(&id), "after", json!([{"content": "fine"}]));
}

#[test]
fn a_damaged_middle_line_keeps_the_files_restorable_and_is_repaired() {
    let env = Env::new();
    let id = env.exec(None, "zero", turn_of(vec![write("a.txt", "a0\n")]));
    env.exec(Some(&id), "one", turn_of(vec![write("a.txt", "a1\n")]));
    env.exec(Some(&id), "two", turn_of(vec![write("b.txt", "b2\n")]));
    let log = env.log(&id);
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    // Damage the user message of turn 1, in the middle of the log.
    let at = lines
        .iter()
        .position(|l| l.contains("\"role\":\"user\"") && l.contains("\"content\":\"one\""))
        .unwrap();
    let line = at + 1;
    let bad = format!("{}\u{0}garbage", &lines[at][..30]);
    lines[at] = bad.clone();
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let named = format!("line {line}");
    let log_shown = log.display().to_string();

    // The conversation refuses, naming the file and the line.
    for args in [
        &["transcript", "--session", &id][..],
        &["heads", "--session", &id][..],
    ] {
        let (_, stderr) = env.code(args, 1);
        assert!(
            stderr.contains(&log_shown) && stderr.contains(&named),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("--repair"), "{args:?} says what to do: {stderr}");
    }
    let model = env.script(json!([{"content": "never"}]));
    let args = env.exec_args(Some(&id), &model, "blocked");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (_, stderr) = env.code(&args, 1);
    assert!(stderr.contains(&named), "{stderr}");

    // fsck names the line and fails.
    let (stdout, _) = env.code(&["fsck", "--session", &id], 1);
    assert!(stdout.contains(&log_shown) && stdout.contains(&named), "{stdout}");
    let report = env.json_code(&["fsck", "--session", &id], 1);
    assert_eq!(report["ok"], false);
    let problem = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["path"] == log_shown.as_str())
        .unwrap_or_else(|| panic!("the log is named: {report}"));
    assert_eq!(problem["severity"], "error");
    assert!(problem["problem"].as_str().unwrap().contains(&named), "{problem}");

    // The checkpoints and a code rewind work from the checkpoint store alone.
    let cks = env.json_code(&["checkpoints", "--session", &id], 0);
    let cks = cks.as_array().unwrap();
    assert_eq!(cks.len(), 3);
    assert!(
        cks.iter().all(|c| c["can_restore_conversation"] == false),
        "{cks:?}"
    );
    let (_, stderr) = env.code(
        &[
            "rewind",
            "--session",
            &id,
            "--turn",
            "1",
            "--scope",
            "conversation",
        ],
        3,
    );
    assert!(stderr.contains(&named), "{stderr}");
    env.code(&["rewind", "--session", &id, "--turn", "1", "--scope", "code"], 0);
    assert_eq!(env.read("a.txt").as_deref(), Some("a0\n"));
    assert_eq!(env.read("b.txt"), None);
    env.code(&["undo", "--session", &id], 0);
    assert_eq!(env.read("a.txt").as_deref(), Some("a1\n"));
    assert_eq!(env.read("b.txt").as_deref(), Some("b2\n"));
    env.code(&["rewind", "--session", &id, "--turn", "1", "--scope", "code"], 0);

    // One command repairs it: the bad line (and what depends on it) moves beside the log.
    let r = env.json_code(&["fsck", "--session", &id, "--repair"], 0);
    assert_eq!(r["ok"], true, "{r}");
    let repair = &r["repair"];
    assert_eq!(repair["moved"][0]["line"], line as u64, "{r}");
    let moved_to = PathBuf::from(repair["moved_to"].as_str().unwrap());
    assert_eq!(moved_to, env.sessions_dir().join(format!("{id}.damaged-1")));
    let kept = std::fs::read(&moved_to).unwrap();
    assert!(
        kept.starts_with(format!("{bad}\n").as_bytes()),
        "the bad bytes are kept"
    );
    assert!(!std::fs::read_to_string(&log).unwrap().contains("garbage"));
    let (stdout, _) = env.code(&["fsck", "--session", &id, "--repair"], 0);
    assert!(stdout.contains("nothing to repair"), "{stdout}");

    // Usable again: the conversation reads — what came after the bad line too, a note standing
    // for the lost message — and the next turn runs with a new number.
    assert_eq!(repair["placeholders"], 1, "{r}");
    let t = env.json_code(&["transcript", "--session", &id], 0);
    let t = t.as_array().unwrap();
    let users: Vec<&str> = t
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(users, ["zero", "two"]);
    assert!(
        t.iter()
            .any(|m| m["role"] == "system" && m["content"].as_str().unwrap().contains("could not be read")),
        "{t:?}"
    );
    env.json_code(&["heads", "--session", &id], 0);
    env.exec(Some(&id), "three", json!([{"content": "fine"}]));
    let cks = env.json_code(&["checkpoints", "--session", &id], 0);
    let turns: Vec<u64> = cks
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["turn"].as_u64().unwrap())
        .collect();
    assert_eq!(turns, [0, 1, 2, 3]);
    assert!(moved_to.exists(), "never deleted");
    // Until the whole session is deleted.
    env.code(&["sessions", "delete", &id], 0);
    assert!(!moved_to.exists() && !log.exists());
}

#[test]
fn a_damaged_log_refuses_every_change_to_the_conversation_before_any_model_is_asked() {
    let env = Env::new();
    let id = env.exec(None, "zero", turn_of(vec![write("a.txt", "a0\n")]));
    env.exec(Some(&id), "one", json!([{"content": "fine"}]));
    let log = env.log(&id);
    let mut lines: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    lines[3] = "not json".to_string();
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let before = std::fs::read(&log).unwrap();
    // A script that would fail the test if it were used: it has no response.
    let model = env.script(json!([]));
    let writers: [&[&str]; 5] = [
        &[
            "summarize",
            "--session",
            &id,
            "--turn",
            "1",
            "--from",
            "--model",
            &model,
        ],
        &["compact", "--session", &id, "--model", &model],
        &["fork", "--session", &id, "--turn", "1"],
        &["switch", "--session", &id, "main"],
        &["rewind", "--session", &id, "--turn", "1", "--scope", "both"],
    ];
    for args in writers {
        let out = env.run(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(stderr.contains("line 4"), "{args:?} names the line: {stderr}");
    }
    assert_eq!(std::fs::read(&log).unwrap(), before, "nothing was written");
    assert_eq!(
        env.read("a.txt").as_deref(),
        Some("a0\n"),
        "the refused rewind wrote no file"
    );
}
