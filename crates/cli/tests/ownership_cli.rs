//! Undo gives ownership back with the bytes (SPEC §5.5, issue 25 item 1), through the real binary
//! and the script model: after `rewind --on-conflict overwrite` (or `revert --overwrite`) over a hand
//! edit — or over another session's write on the same workspace — and `undo`, the edit is back and
//! is not Retrace's: the dry run shows the conflict, a plain rewind and a revert refuse (exit 3), a
//! `--on-conflict skip` rewind leaves it and lists it, also after one more turn.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::cell::Cell;
use std::path::PathBuf;
use std::process::Output;

use serde_json::{json, Value};
use tempfile::TempDir;

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

    fn put(&self, rel: &str, bytes: &[u8]) {
        std::fs::write(self.ws.join(rel), bytes).unwrap();
    }

    fn read(&self, rel: &str) -> Option<Vec<u8>> {
        std::fs::read(self.ws.join(rel)).ok()
    }

    fn run(&self, args: &[&str]) -> Output {
        support::isolated_retrace(self.tmp.path())
            .args(args)
            .output()
            .unwrap()
    }

    /// A command with `--json` that must exit with `code`; its stdout as one JSON document.
    fn json_code(&self, args: &[&str], code: i32) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.run(&all);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stdout)))
    }

    fn json(&self, args: &[&str]) -> Value {
        self.json_code(args, 0)
    }

    /// One `exec --json` turn (a new session without `session`); returns the session id.
    fn exec(&self, session: Option<&str>, prompt: &str, responses: Value) -> String {
        let n = self.scripts.get();
        self.scripts.set(n + 1);
        let path = self.tmp.path().join(format!("scripts/s{n}.json"));
        std::fs::write(&path, json!({ "responses": responses }).to_string()).unwrap();
        let model = format!("script:{}", path.display());
        let ws = self.ws.display().to_string();
        let mut args = vec!["exec", "--json", "--model", &model];
        match session {
            Some(id) => args.extend(["--session", id]),
            None => args.extend(["--workspace", &ws]),
        }
        args.push(prompt);
        let out = self.run(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "exec {prompt:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        let result: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
        assert_eq!(result["ok"], true, "{result}");
        result["session_id"].as_str().unwrap().to_string()
    }

    /// Every later way of restoring `path` reports it and leaves `keep`: the dry run, a plain
    /// rewind (exit 3), a `skip` rewind (listed, left; undone again), a plain revert (exit 3).
    fn assert_protected(&self, id: &str, turn: &str, path: &str, keep: &[u8]) {
        let rewind = ["rewind", "--session", id, "--turn", turn, "--scope", "code"];
        let mut dry = rewind.to_vec();
        dry.push("--dry-run");
        let plan = self.json(&dry);
        assert!(
            conflicted(&plan).contains(&path.to_string()),
            "the dry run of a rewind to turn {turn} shows no conflict for {path}: {plan}"
        );
        let plan = self.json_code(&rewind, 3);
        assert!(conflicted(&plan).contains(&path.to_string()), "{plan}");
        assert_eq!(self.read(path).as_deref(), Some(keep), "a plain rewind");
        let mut skip = rewind.to_vec();
        skip.extend(["--on-conflict", "skip"]);
        let r = self.json(&skip);
        assert!(conflicted(&r).contains(&path.to_string()), "{r}");
        assert_eq!(self.read(path).as_deref(), Some(keep), "a skip rewind");
        if r["transaction_id"].is_string() {
            self.json(&["undo", "--session", id]);
        }
        let plan = self.json_code(&["revert", "--session", id, path], 3);
        assert!(conflicted(&plan).contains(&path.to_string()), "{plan}");
        assert_eq!(self.read(path).as_deref(), Some(keep), "a revert");
    }
}

fn conflicted(v: &Value) -> Vec<String> {
    v["conflicts"]
        .as_array()
        .unwrap_or_else(|| panic!("no conflicts in {v}"))
        .iter()
        .map(|c| c["path"].as_str().unwrap().to_string())
        .collect()
}

fn turn_of(calls: Vec<Value>) -> Value {
    json!([{"content": "working", "tool_calls": calls}, {"content": "done"}])
}

fn write(path: &str, content: &str) -> Value {
    json!({"name": "write_file", "arguments": {"path": path, "content": content}})
}

/// Turn 0 writes `a.txt` and `c.txt`, turn 1 rewrites `a.txt` and writes `b.txt`.
fn two_turns(env: &Env) -> String {
    let id = env.exec(
        None,
        "zero",
        turn_of(vec![write("a.txt", "a0\n"), write("c.txt", "c0\n")]),
    );
    env.exec(
        Some(&id),
        "one",
        turn_of(vec![write("a.txt", "a1\n"), write("b.txt", "b1\n")]),
    );
    id
}

#[test]
fn undoing_a_forced_rewind_leaves_the_hand_edit_the_users() {
    let env = Env::new();
    let id = two_turns(&env);
    env.put("a.txt", b"my own edit\n");
    let r = env.json(&[
        "rewind",
        "--session",
        &id,
        "--turn",
        "1",
        "--scope",
        "code",
        "--on-conflict",
        "overwrite",
    ]);
    assert_eq!(conflicted(&r), ["a.txt"]);
    assert_eq!(env.read("a.txt").as_deref(), Some(&b"a0\n"[..]));
    env.json(&["undo", "--session", &id]);
    assert_eq!(env.read("a.txt").as_deref(), Some(&b"my own edit\n"[..]));
    assert_eq!(env.read("b.txt").as_deref(), Some(&b"b1\n"[..]));

    env.assert_protected(&id, "1", "a.txt", b"my own edit\n");
    env.assert_protected(&id, "0", "a.txt", b"my own edit\n");
    // One more turn (which once made the loss final): still the user's.
    env.exec(Some(&id), "two", turn_of(vec![write("d.txt", "d2\n")]));
    env.assert_protected(&id, "1", "a.txt", b"my own edit\n");
    env.assert_protected(&id, "0", "a.txt", b"my own edit\n");
}

#[test]
fn undoing_a_forced_revert_leaves_the_hand_edit_the_users() {
    let env = Env::new();
    let id = two_turns(&env);
    env.put("a.txt", b"my own edit\n");
    env.json_code(&["revert", "--session", &id, "a.txt"], 3);
    let r = env.json(&["revert", "--session", &id, "a.txt", "--overwrite"]);
    assert_eq!(conflicted(&r), ["a.txt"]);
    assert!(
        env.read("a.txt").is_none(),
        "turn 0 created it: the revert deletes it"
    );
    env.json(&["undo", "--session", &id]);
    assert_eq!(env.read("a.txt").as_deref(), Some(&b"my own edit\n"[..]));

    env.assert_protected(&id, "1", "a.txt", b"my own edit\n");
    env.assert_protected(&id, "0", "a.txt", b"my own edit\n");
    env.exec(Some(&id), "two", turn_of(vec![write("d.txt", "d2\n")]));
    env.assert_protected(&id, "0", "a.txt", b"my own edit\n");
}

#[test]
fn undoing_a_forced_rewind_over_another_sessions_write_leaves_it_theirs() {
    let env = Env::new();
    let id = two_turns(&env);
    // A second session on the same workspace writes the file.
    let other = env.exec(None, "theirs", turn_of(vec![write("a.txt", "theirs\n")]));
    assert_ne!(other, id);
    let r = env.json(&[
        "rewind",
        "--session",
        &id,
        "--turn",
        "1",
        "--scope",
        "code",
        "--on-conflict",
        "overwrite",
    ]);
    assert_eq!(conflicted(&r), ["a.txt"]);
    env.json(&["undo", "--session", &id]);
    assert_eq!(env.read("a.txt").as_deref(), Some(&b"theirs\n"[..]));

    env.assert_protected(&id, "1", "a.txt", b"theirs\n");
    env.assert_protected(&id, "0", "a.txt", b"theirs\n");
    env.exec(Some(&id), "two", turn_of(vec![write("d.txt", "d2\n")]));
    env.assert_protected(&id, "1", "a.txt", b"theirs\n");
    // The other session's own rewind still owns its write: it restores it without a conflict.
    let r = env.json(&["rewind", "--session", &other, "--turn", "0", "--scope", "code"]);
    assert_eq!(conflicted(&r), Vec::<String>::new());
    assert_eq!(env.read("a.txt").as_deref(), Some(&b"a1\n"[..]));
}

/// Issue 25 item 6: a rewind that finds a file already in its target state makes it Retrace's, so
/// a later rewind does not refuse it as an `external_change`.
#[test]
fn a_file_already_in_its_target_state_is_retraces_for_the_next_rewind() {
    let env = Env::new();
    let id = two_turns(&env);
    std::fs::remove_file(env.ws.join("a.txt")).unwrap();
    std::fs::remove_file(env.ws.join("c.txt")).unwrap();
    // Turn 0 created them: a rewind to it finds them as they were (absent), deletes b.txt only.
    let r = env.json(&["rewind", "--session", &id, "--turn", "0", "--scope", "code"]);
    assert_eq!(r["files_deleted"], json!(["b.txt"]));
    assert_eq!(conflicted(&r), Vec::<String>::new());
    // A rewind to turn 1 writes a.txt back (its state then) without a conflict.
    let r = env.json(&["rewind", "--session", &id, "--turn", "1", "--scope", "code"]);
    assert_eq!(conflicted(&r), Vec::<String>::new());
    assert_eq!(r["files_written"], json!(["a.txt"]));
    assert_eq!(env.read("a.txt").as_deref(), Some(&b"a0\n"[..]));
}
