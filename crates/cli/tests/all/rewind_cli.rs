//! `retrace rewind | undo | revert | fork | summarize | heads | switch | transcript` through the real
//! binary and the script model (SPEC §5, §6, §11): exact file states after a rewind, undo, the
//! conversation half, conflicts and confirmation with their exit codes and precedence, the note a
//! code-only rewind leaves for the model, the writer lease, and `--json` output being only JSON.
//!
//! Every test has its own temp dir holding the workspace (`ws/`), the data root (`home/`, as
//! `RETRACE_HOME`), an empty config dir (`XDG_CONFIG_HOME`; `RETRACE_CONFIG` unset), the scripts and
//! another directory (`other/`). Commands run with the temp dir as their current directory, so a
//! command given `--session` must find the workspace in the session itself.

use crate::support;

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use retrace_testkit::mock_openai::{sse, MockServer, Reply};
use serde_json::{json, Value};
use tempfile::TempDir;

/// A workspace's regular files: relative path → (bytes, permission bits).
type Tree = BTreeMap<String, (Vec<u8>, u32)>;

/// One test's private world.
struct Env {
    tmp: TempDir,
    /// The canonical workspace root.
    ws: PathBuf,
    scripts: Cell<usize>,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        for d in ["ws", "home", "xdg", "other", "scripts"] {
            std::fs::create_dir(tmp.path().join(d)).unwrap();
        }
        let ws = std::fs::canonicalize(tmp.path().join("ws")).unwrap();
        Env {
            tmp,
            ws,
            scripts: Cell::new(0),
        }
    }

    fn at(&self, rel: &str) -> PathBuf {
        self.ws.join(rel)
    }

    fn put(&self, rel: &str, bytes: &[u8]) {
        let p = self.at(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(p, bytes).unwrap();
    }

    fn put_mode(&self, rel: &str, bytes: &[u8], mode: u32) {
        self.put(rel, bytes);
        std::fs::set_permissions(self.at(rel), std::fs::Permissions::from_mode(mode)).unwrap();
    }

    fn read(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.at(rel)).unwrap_or_else(|e| panic!("reading {rel}: {e}"))
    }

    fn other_dir(&self) -> String {
        std::fs::canonicalize(self.tmp.path().join("other"))
            .unwrap()
            .display()
            .to_string()
    }

    /// `retrace` with this test's environment and nothing inherited that could change its config.
    fn command(&self) -> Command {
        support::isolated_retrace(self.tmp.path())
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().unwrap()
    }

    /// Runs a command with `--json`, checks its exit code, and parses stdout as exactly one JSON
    /// document (anything else on stdout fails the test).
    fn json_code(&self, args: &[&str], code: i32) -> Value {
        let mut all: Vec<&str> = args.to_vec();
        all.push("--json");
        let out = self.run(&all);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{args:?}: stdout is not one JSON document ({e}): {}",
                String::from_utf8_lossy(&out.stdout)
            )
        })
    }

    fn json(&self, args: &[&str]) -> Value {
        self.json_code(args, 0)
    }

    /// Runs a command with `--json` that must fail with `code`: stdout is empty or one JSON
    /// document, and stderr says why.
    fn fails(&self, args: &[&str], code: i32) -> Option<Value> {
        let mut all: Vec<&str> = args.to_vec();
        all.push("--json");
        let out = self.run(&all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(stderr.contains("retrace:"), "{args:?} says why: {stderr}");
        if out.stdout.is_empty() {
            return None;
        }
        Some(serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{args:?}: stdout is not one JSON document ({e}): {}",
                String::from_utf8_lossy(&out.stdout)
            )
        }))
    }

    fn list(&self, args: &[&str]) -> Vec<Value> {
        self.json(args).as_array().unwrap().clone()
    }

    fn transcript(&self, id: &str) -> Vec<Value> {
        self.list(&["transcript", "--session", id])
    }

    fn transcript_of(&self, id: &str, head: &str) -> Vec<Value> {
        self.list(&["transcript", "--session", id, "--head", head])
    }

    fn heads(&self, id: &str) -> Vec<Value> {
        self.list(&["heads", "--session", id])
    }

    fn selected(&self, id: &str) -> Value {
        let heads = self.heads(id);
        let sel: Vec<&Value> = heads.iter().filter(|h| h["selected"] == true).collect();
        assert_eq!(sel.len(), 1, "exactly one selected head: {heads:?}");
        sel[0].clone()
    }

    fn checkpoints(&self, id: &str) -> Vec<Value> {
        self.list(&["checkpoints", "--session", id])
    }

    /// Writes a script file (SPEC §11.2) and returns the `--model` value naming it.
    fn script(&self, responses: Value) -> String {
        let n = self.scripts.get();
        self.scripts.set(n + 1);
        let path = self.tmp.path().join(format!("scripts/s{n}.json"));
        std::fs::write(&path, json!({ "responses": responses }).to_string()).unwrap();
        format!("script:{}", path.display())
    }

    fn exec_args(&self, session: Option<&str>, model: &str, prompt: &str, extra: &[&str]) -> Vec<String> {
        let mut args: Vec<String> = vec!["exec".into(), "--json".into(), "--model".into(), model.into()];
        match session {
            Some(id) => args.extend(["--session".to_string(), id.to_string()]),
            None => args.extend(["--workspace".to_string(), self.ws.display().to_string()]),
        }
        args.extend(extra.iter().map(|s| s.to_string()));
        args.push(prompt.into());
        args
    }

    /// One `exec --json` turn that must finish (exit 0, `ok`); returns its result line.
    fn exec(&self, session: Option<&str>, prompt: &str, responses: Value, extra: &[&str]) -> Value {
        let model = self.script(responses);
        let out = self
            .command()
            .args(self.exec_args(session, &model, prompt, extra))
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "exec {prompt:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        // Every line is JSON (SPEC §11: JSON Lines only); the last one is the result.
        let events: Vec<Value> = stdout
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
            .collect();
        let result = events.last().cloned().expect("a result line");
        assert_eq!(result["type"], "result");
        assert_eq!(result["ok"], true, "{result}");
        result
    }

    /// A new session's first turn; returns the session id.
    fn start(&self, prompt: &str, responses: Value) -> String {
        let r = self.exec(None, prompt, responses, &[]);
        assert_eq!(r["turn"], 0);
        r["session_id"].as_str().unwrap().to_string()
    }

    /// The workspace's regular files with their bytes and permission bits.
    fn tree(&self) -> Tree {
        let mut out = Tree::new();
        walk(&self.ws, &self.ws, &mut out);
        out
    }

    /// Every file of the data root except leases, with its bytes: to prove a command wrote nothing.
    fn data(&self) -> BTreeMap<String, Vec<u8>> {
        let root = self.tmp.path().join("home");
        let mut files = Tree::new();
        walk(&root, &root, &mut files);
        files
            .into_iter()
            .filter(|(p, _)| !p.ends_with(".lease"))
            .map(|(p, (b, _))| (p, b))
            .collect()
    }

    /// Both the workspace and the data root, for "nothing was written".
    fn everything(&self) -> (Tree, BTreeMap<String, Vec<u8>>) {
        (self.tree(), self.data())
    }
}

fn walk(root: &Path, dir: &Path, out: &mut Tree) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let ty = entry.file_type().unwrap();
        let path = entry.path();
        if ty.is_dir() {
            walk(root, &path, out);
        } else if ty.is_file() {
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let mode = entry.metadata().unwrap().permissions().mode() & 0o7777;
            out.insert(rel, (std::fs::read(&path).unwrap(), mode));
        } else {
            panic!("unexpected entry {}", path.display());
        }
    }
}

/// One tool call of a script.
fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

/// A script for one turn: one response making `calls`, then a closing answer.
fn turn_of(calls: Vec<Value>) -> Value {
    json!([{"content": "working", "tool_calls": calls}, {"content": "done"}])
}

/// A turn that only answers.
fn chat(text: &str) -> Value {
    json!([{ "content": text }])
}

fn write(path: &str, content: &str) -> Value {
    call("write_file", json!({"path": path, "content": content}))
}

fn edit(path: &str, old: &str, new: &str) -> Value {
    call(
        "edit_file",
        json!({"path": path, "old_string": old, "new_string": new}),
    )
}

fn set(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn ids(msgs: &[Value]) -> Vec<String> {
    msgs.iter()
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect()
}

/// The user messages of a transcript as (turn, content).
fn user_turns(msgs: &[Value]) -> Vec<(Option<u64>, String)> {
    msgs.iter()
        .filter(|m| m["role"] == "user")
        .map(|m| (m["turn"].as_u64(), m["content"].as_str().unwrap().to_string()))
        .collect()
}

/// Index of the user message of `turn` in a transcript.
fn user_index(msgs: &[Value], turn: u64) -> usize {
    msgs.iter()
        .position(|m| m["role"] == "user" && m["turn"] == turn)
        .unwrap_or_else(|| panic!("no user message of turn {turn}: {msgs:?}"))
}

fn head<'a>(heads: &'a [Value], id: &str) -> &'a Value {
    heads
        .iter()
        .find(|h| h["id"] == id)
        .unwrap_or_else(|| panic!("no head {id}: {heads:?}"))
}

fn conflict_reasons(plan: &Value) -> Vec<(String, String)> {
    plan["conflicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["path"].as_str().unwrap().to_string(),
                c["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn assert_trees_eq(got: &Tree, want: &Tree, what: &str) {
    let show = |t: &Tree| -> Vec<(String, String, String)> {
        t.iter()
            .map(|(p, (b, m))| {
                (
                    p.clone(),
                    String::from_utf8_lossy(b).into_owned(),
                    format!("{m:o}"),
                )
            })
            .collect()
    };
    assert!(
        got == want,
        "{what}:\n got  {:?}\n want {:?}",
        show(got),
        show(want)
    );
}

// ---------------------------------------------------------------------------------------------
// Code rewind and undo.

/// Four turns that create, edit, delete and move files; returns the session and the workspace
/// before each turn and after the last (`snaps[n]` = the state when turn n started).
fn four_turns(env: &Env) -> (String, Vec<Tree>) {
    env.put_mode("keep.txt", b"never touched\n", 0o640);
    env.put_mode("run.sh", b"#!/bin/sh\necho 0\n", 0o755);
    env.put("gone.txt", b"crlf\r\nlines\r\n");
    env.put_mode("mv.txt", b"move me\n", 0o600);
    env.put("bin.dat", b"\x00\xff\xfebinary\x80\n\x00");
    let mut snaps = vec![env.tree()];
    let id = env.start(
        "turn zero",
        turn_of(vec![
            write("t0.txt", "zero\n"),
            edit("run.sh", "echo 0", "echo zero"),
        ]),
    );
    snaps.push(env.tree());
    let turns = [
        (
            "turn one",
            vec![
                write("new1.txt", "one\n"),
                edit("run.sh", "echo zero", "echo one"),
                call("delete_file", json!({"path": "bin.dat"})),
                edit("t0.txt", "zero", "ZERO"),
            ],
        ),
        (
            "turn two",
            vec![
                call("move_file", json!({"from": "mv.txt", "to": "sub/moved.txt"})),
                call("delete_file", json!({"path": "gone.txt"})),
                write("new2.txt", "two\n"),
                edit("new1.txt", "one", "ONE"),
            ],
        ),
        (
            "turn three",
            vec![
                edit("sub/moved.txt", "move me", "moved"),
                call("delete_file", json!({"path": "t0.txt"})),
                write("run.sh", "#!/bin/sh\necho three\n"),
                write("new1.txt", "uno\n"),
            ],
        ),
    ];
    for (n, (prompt, calls)) in turns.into_iter().enumerate() {
        let r = env.exec(Some(&id), prompt, turn_of(calls), &[]);
        assert_eq!(r["turn"], n as u64 + 1);
        snaps.push(env.tree());
    }
    // The turns did what they say (so the rewinds below have something to undo).
    let last = &snaps[4];
    assert!(!last.contains_key("bin.dat") && !last.contains_key("gone.txt") && !last.contains_key("mv.txt"));
    assert_eq!(last["run.sh"], (b"#!/bin/sh\necho three\n".to_vec(), 0o755));
    assert_eq!(last["sub/moved.txt"].0, b"moved\n");
    (id, snaps)
}

#[test]
fn code_rewind_restores_exact_file_states_and_undo_puts_them_back() {
    let env = Env::new();
    let (id, snaps) = four_turns(&env);
    let keep_meta = std::fs::metadata(env.at("keep.txt")).unwrap();

    let r = env.json(&["rewind", "--session", &id, "--turn", "1", "--scope", "code"]);
    assert_trees_eq(&env.tree(), &snaps[1], "after rewinding the code to turn 1");
    assert_eq!(r["ok"], true);
    assert_eq!(r["partial"], false);
    assert_eq!(r["conversation_forked"], false);
    assert_eq!(r["head_id"], "main");
    assert_eq!(r["session_id"], id.as_str());
    assert_eq!(
        set(&r["files_written"]),
        names(&["run.sh", "bin.dat", "t0.txt", "mv.txt", "gone.txt"])
    );
    assert_eq!(
        set(&r["files_deleted"]),
        names(&["new1.txt", "new2.txt", "sub/moved.txt"])
    );
    assert_eq!(r["conflicts"], json!([]));
    assert_eq!(r["undo_available"], true);
    assert_eq!(r["prompt"], "turn one");
    let tx = r["transaction_id"].as_str().unwrap().to_string();
    // The untouched file is the very same file, not a rewrite of it.
    let keep_now = std::fs::metadata(env.at("keep.txt")).unwrap();
    assert_eq!(keep_now.ino(), keep_meta.ino());
    assert_eq!(keep_now.mtime_nsec(), keep_meta.mtime_nsec());
    assert_eq!(keep_now.mtime(), keep_meta.mtime());
    // A code rewind forks nothing.
    let heads = env.heads(&id);
    assert_eq!(heads.len(), 1);
    assert_eq!(heads[0]["id"], "main");
    assert_eq!(heads[0]["turns"], 4);

    // Undo: the files as they were before the rewind.
    let u = env.json(&["undo", "--session", &id, "--transaction", &tx]);
    assert_trees_eq(&env.tree(), &snaps[4], "after undo");
    assert_eq!(u["ok"], true);
    assert_eq!(
        set(&u["files_written"]),
        names(&["run.sh", "new1.txt", "new2.txt", "sub/moved.txt"])
    );
    assert_eq!(
        set(&u["files_deleted"]),
        names(&["bin.dat", "t0.txt", "mv.txt", "gone.txt"])
    );
    assert_eq!(u["undo_available"], false);
    // An undo cannot be undone.
    env.fails(&["undo", "--session", &id], 3);

    // Rewinds in a row: to 2, then to 0. The first rewind's own writes are not manual edits.
    env.json(&["rewind", "--session", &id, "--turn", "2", "--scope", "code"]);
    assert_trees_eq(&env.tree(), &snaps[2], "after rewinding the code to turn 2");
    let r0 = env.json(&["rewind", "--session", &id, "--turn", "0", "--scope", "code"]);
    assert_eq!(r0["conflicts"], json!([]));
    assert_trees_eq(&env.tree(), &snaps[0], "after rewinding the code to turn 0");
    // Undo takes back only the last rewind.
    env.json(&["undo", "--session", &id]);
    assert_trees_eq(&env.tree(), &snaps[2], "after undoing the rewind to 0");
    // A rewind to a turn that does not exist is a usage error.
    env.fails(&["rewind", "--session", &id, "--turn", "9", "--scope", "code"], 2);
}

#[test]
fn a_rewind_with_nothing_to_write_succeeds_without_a_transaction() {
    let env = Env::new();
    let id = env.start("zero", turn_of(vec![write("a.txt", "a\n")]));
    env.exec(Some(&id), "one", turn_of(vec![edit("a.txt", "a", "b")]), &[]);
    env.json(&["rewind", "--session", &id, "--turn", "1", "--scope", "code"]);
    assert_eq!(env.read("a.txt"), b"a\n");
    let before = env.everything();
    // Everything already equals the target: nothing written, and undo still targets the rewind.
    let r = env.json(&["rewind", "--session", &id, "--turn", "1", "--scope", "code"]);
    assert_eq!(r["transaction_id"], Value::Null);
    assert_eq!(r["files_written"], json!([]));
    assert_eq!(env.everything(), before);
    env.json(&["undo", "--session", &id]);
    assert_eq!(env.read("a.txt"), b"b\n");
}

// ---------------------------------------------------------------------------------------------
// Conversation, both, fork, summarize.

/// Three turns with distinct prompts; turn 1 writes `a.txt`, turn 2 edits it.
fn three_turns(env: &Env) -> String {
    let id = env.start("first prompt", chat("hello"));
    env.exec(
        Some(&id),
        "second prompt",
        turn_of(vec![write("a.txt", "a1\n")]),
        &[],
    );
    env.exec(
        Some(&id),
        "third prompt",
        turn_of(vec![edit("a.txt", "a1", "a2"), write("b.txt", "b2\n")]),
        &[],
    );
    id
}

/// Found by a new user's trial: the human output named the new head by its id only, and the
/// undo of a conversation rewind said "nothing to restore"; `heads` said "1 turns" and named the
/// heads otherwise than every other frontend.
#[test]
fn a_conversation_rewind_its_undo_and_redo_say_which_head_the_conversation_is_on() {
    let env = Env::new();
    let id = three_turns(&env);
    let text = |args: &[&str]| {
        let out = env.run(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let r = text(&[
        "rewind",
        "--session",
        &id,
        "--turn",
        "1",
        "--scope",
        "conversation",
    ]);
    assert!(
        r.contains("conversation rewound: now on rewind before “second prompt” (h-"),
        "{r}"
    );
    let u = text(&["undo", "--session", &id]);
    assert!(u.contains("conversation back as it was: now on main"), "{u}");
    assert!(!u.contains("nothing to restore"), "{u}");
    let d = text(&["redo", "--session", &id]);
    assert!(
        d.contains("conversation restored again: now on rewind before “second prompt” (2) (h-"),
        "{d}"
    );
    let h = text(&["heads", "--session", &id]);
    assert!(h.contains("  main  main — 11 messages, 3 turns"), "{h}");
    assert!(
        h.contains("rewind before “second prompt” (2) — 2 messages, 1 turn\n"),
        "{h}"
    );
}

#[test]
fn conversation_rewind_forks_a_selected_head_and_keeps_the_old_one() {
    let env = Env::new();
    let id = three_turns(&env);
    let main = env.transcript(&id);
    let files = env.tree();

    let r = env.json(&[
        "rewind",
        "--session",
        &id,
        "--turn",
        "1",
        "--scope",
        "conversation",
    ]);
    assert_eq!(r["ok"], true);
    assert_eq!(r["conversation_forked"], true);
    assert_eq!(
        r["prompt"], "second prompt",
        "the turn's prompt, for the input box"
    );
    assert_eq!(r["files_written"], json!([]));
    assert_eq!(r["files_deleted"], json!([]));
    assert_eq!(r["undo_available"], true);
    let new = r["head_id"].as_str().unwrap().to_string();
    assert_ne!(new, "main");
    assert_trees_eq(
        &env.tree(),
        &files,
        "a conversation rewind leaves the files alone",
    );

    let heads = env.heads(&id);
    assert_eq!(heads.len(), 2);
    let h = head(&heads, &new);
    assert_eq!(h["selected"], true);
    assert_eq!(h["kind"], "rewind");
    assert_eq!(h["parent_head"], "main");
    assert_eq!(head(&heads, "main")["selected"], false);
    assert_eq!(head(&heads, "main")["retired"], false);
    // The new head's transcript is main's, ending just before turn 1's user message.
    let t = env.transcript(&id);
    assert_eq!(ids(&t), ids(&main[..user_index(&main, 1)]));
    assert_eq!(user_turns(&t), [(Some(0), "first prompt".to_string())]);
    assert_eq!(
        ids(&env.transcript_of(&id, "main")),
        ids(&main),
        "main is untouched"
    );
    // Turns 1 and 2 are still listed, for code restore, but not visible here.
    let cks = env.checkpoints(&id);
    let visible: Vec<(u64, bool)> = cks
        .iter()
        .map(|c| (c["turn"].as_u64().unwrap(), c["visible"] == true))
        .collect();
    assert_eq!(visible, [(0, true), (1, false), (2, false)]);
    assert_eq!(cks[2]["can_restore_code"], true);
    assert_eq!(cks[2]["disabled_reason"], "not on this head");

    // Undo of a conversation rewind: main is selected again, the empty head retired.
    let u = env.json(&["undo", "--session", &id]);
    assert_eq!(u["head_id"], "main");
    let heads = env.heads(&id);
    assert_eq!(head(&heads, "main")["selected"], true);
    assert_eq!(head(&heads, &new)["retired"], true);
    assert_eq!(ids(&env.transcript(&id)), ids(&main));

    // Again, then a new turn on the rewind head: it gets the next number, never a reused one.
    let r = env.json(&[
        "rewind",
        "--session",
        &id,
        "--turn",
        "1",
        "--scope",
        "conversation",
    ]);
    let new = r["head_id"].as_str().unwrap().to_string();
    let next = env.exec(Some(&id), "fourth prompt", chat("ok"), &[]);
    assert_eq!(next["turn"], 3);
    assert_eq!(next["head_id"], new.as_str());
    assert_eq!(
        user_turns(&env.transcript(&id)),
        [
            (Some(0), "first prompt".to_string()),
            (Some(3), "fourth prompt".to_string())
        ]
    );
    // Undo is refused once a new turn ran; nothing changes.
    let before = env.everything();
    let out = env.run(&["undo", "--session", &id]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to undo"));
    assert_eq!(env.everything(), before);
    // A rewind of the conversation to a turn not on this head is refused with the plan printed.
    let plan = env.json_code(
        &[
            "rewind",
            "--session",
            &id,
            "--turn",
            "2",
            "--scope",
            "conversation",
        ],
        3,
    );
    assert_eq!(plan["can_conversation"], false);
    assert_eq!(plan["disabled_reason"], "not on this head");
    assert_eq!(env.everything(), before);
    // Code restore of that turn is still offered (the workspace is shared by all heads).
    let dry = env.json(&[
        "rewind",
        "--session",
        &id,
        "--turn",
        "2",
        "--scope",
        "code",
        "--dry-run",
    ]);
    assert_eq!(dry["can_files"], true);
}

#[test]
fn both_restores_files_and_conversation_and_undo_takes_both_back() {
    let env = Env::new();
    let id = three_turns(&env);
    let main = env.transcript(&id);
    let after = env.tree();

    let r = env.json(&["rewind", "--session", &id, "--turn", "2", "--scope", "both"]);
    assert_eq!(r["conversation_forked"], true);
    assert_eq!(r["prompt"], "third prompt");
    assert_eq!(set(&r["files_written"]), names(&["a.txt"]));
    assert_eq!(set(&r["files_deleted"]), names(&["b.txt"]));
    assert_eq!(env.read("a.txt"), b"a1\n");
    assert!(!env.at("b.txt").exists());
    let new = r["head_id"].as_str().unwrap().to_string();
    assert_eq!(env.selected(&id)["id"], new.as_str());
    assert_eq!(ids(&env.transcript(&id)), ids(&main[..user_index(&main, 2)]));

    let u = env.json(&["undo", "--session", &id]);
    assert_eq!(u["head_id"], "main");
    assert_trees_eq(&env.tree(), &after, "after undoing a both rewind");
    let heads = env.heads(&id);
    assert_eq!(head(&heads, "main")["selected"], true);
    assert_eq!(head(&heads, &new)["retired"], true);

    // To turn 0: every file the session made goes, and the conversation is empty.
    let r = env.json(&["rewind", "--session", &id, "--turn", "0", "--scope", "both"]);
    assert_eq!(set(&r["files_deleted"]), names(&["a.txt", "b.txt"]));
    assert!(env.tree().is_empty());
    assert_eq!(env.transcript(&id), Vec::<Value>::new());
}

#[test]
fn fork_makes_a_named_selected_head_and_switch_moves_between_heads() {
    let env = Env::new();
    let id = three_turns(&env);
    let main = env.transcript(&id);
    let files = env.tree();

    let f = env.json(&["fork", "--session", &id, "--turn", "1", "--name", "x"]);
    // SPEC §11: `{head_id, session_id}`.
    let obj = f.as_object().unwrap();
    assert_eq!(obj.len(), 2, "{f}");
    assert_eq!(f["session_id"], id.as_str());
    let x = f["head_id"].as_str().unwrap().to_string();
    let heads = env.heads(&id);
    let h = head(&heads, &x);
    assert_eq!(h["selected"], true);
    assert_eq!(h["name"], "x");
    assert_eq!(h["kind"], "fork");
    assert_eq!(h["parent_head"], "main");
    assert_eq!(ids(&env.transcript(&id)), ids(&main[..user_index(&main, 1)]));
    assert_trees_eq(&env.tree(), &files, "a fork leaves the files alone");

    // The name is taken: usage error, nothing written.
    let before = env.everything();
    env.fails(&["fork", "--session", &id, "--turn", "0", "--name", "x"], 2);
    // A name that cannot be shown or typed back: usage error naming the rule.
    let long = "n".repeat(65);
    for bad in ["a\nb", "\u{1b}[2J", "rtl\u{202E}", " x", long.as_str()] {
        let out = env.run(&["fork", "--session", &id, "--turn", "0", "--name", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("64 printable characters"), "{bad:?}: {stderr}");
        assert!(!stderr.contains('\u{1b}'), "the name is escaped: {stderr}");
    }
    // Turn 2 is not on head x: refused.
    env.fails(&["fork", "--session", &id, "--turn", "2"], 3);
    assert_eq!(env.everything(), before);

    assert_eq!(env.json(&["switch", "--session", &id, "main"])["head_id"], "main");
    assert_eq!(ids(&env.transcript(&id)), ids(&main));
    assert_eq!(
        env.json(&["switch", "--session", &id, "x"])["head_id"],
        x.as_str()
    );
    env.fails(&["switch", "--session", &id, "no-such-head"], 2);

    // A turn on the fork continues it with the next number.
    let next = env.exec(Some(&id), "on x", chat("fine"), &[]);
    assert_eq!(next["turn"], 3);
    assert_eq!(next["head_id"], x.as_str());
    assert_eq!(
        user_turns(&env.transcript_of(&id, "x")),
        [
            (Some(0), "first prompt".to_string()),
            (Some(3), "on x".to_string())
        ]
    );
}

#[test]
fn summarize_from_and_up_to_make_summary_heads() {
    let env = Env::new();
    let id = three_turns(&env);
    let main = env.transcript(&id);
    let files = env.tree();

    // Nothing to summarize before the first turn: refused, nothing written.
    let before = env.everything();
    let out = env.run(&[
        "summarize",
        "--session",
        &id,
        "--turn",
        "0",
        "--up-to",
        "--model",
        "demo",
    ]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to summarize"));
    assert_eq!(env.everything(), before);

    // From turn 1, with a script model: the head keeps what precedes turn 1, then the summary.
    let model = env.script(json!([{"content": "  SUMMARY OF TURNS 1-2\n"}]));
    let s = env.json(&[
        "summarize",
        "--session",
        &id,
        "--turn",
        "1",
        "--from",
        "--model",
        &model,
    ]);
    assert_eq!(s.as_object().unwrap().len(), 2, "{s}");
    assert_eq!(s["session_id"], id.as_str());
    let from = s["head_id"].as_str().unwrap().to_string();
    assert_eq!(env.selected(&id)["id"], from.as_str());
    assert_eq!(head(&env.heads(&id), &from)["kind"], "summary");
    let t = env.transcript(&id);
    let cut = user_index(&main, 1);
    assert_eq!(t.len(), cut + 1);
    assert_eq!(ids(&t[..cut]), ids(&main[..cut]));
    let last = t.last().unwrap();
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"], "SUMMARY OF TURNS 1-2");
    assert_eq!(
        ids(&env.transcript_of(&id, "main")),
        ids(&main),
        "main is untouched"
    );

    // Up to turn 1, from main, with the demo model: the summary, then turn 1 onwards verbatim.
    env.json(&["switch", "--session", &id, "main"]);
    let s = env.json(&[
        "summarize",
        "--session",
        &id,
        "--turn",
        "1",
        "--up-to",
        "--model",
        "demo",
    ]);
    let up = s["head_id"].as_str().unwrap().to_string();
    assert_ne!(up, from);
    assert_eq!(env.selected(&id)["id"], up.as_str());
    let t = env.transcript(&id);
    assert_eq!(t[0]["role"], "user");
    assert!(
        t[0]["content"].as_str().unwrap().starts_with("Summary of "),
        "{}",
        t[0]
    );
    assert_eq!(ids(&t[1..]), ids(&main[cut..]));
    assert_trees_eq(&env.tree(), &files, "summaries change no file");

    // Turn 0 is folded into the summary on this head: not on this head (refused, nothing written).
    let before = env.everything();
    let out = env.run(&[
        "summarize",
        "--session",
        &id,
        "--turn",
        "0",
        "--from",
        "--model",
        "demo",
    ]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not on this head"));
    assert_eq!(env.everything(), before);
    // The next turn on the summary head sees the summary and gets the next number.
    let next = env.exec(Some(&id), "after the summary", chat("ok"), &[]);
    assert_eq!(next["turn"], 3);
}

// ---------------------------------------------------------------------------------------------
// Conflicts, confirmation, precedence, dry runs.

#[test]
fn a_manual_edit_is_a_conflict_refused_skipped_or_overwritten() {
    let env = Env::new();
    let id = env.start(
        "zero",
        turn_of(vec![write("a.txt", "a0\n"), write("b.txt", "b0\n")]),
    );
    env.exec(
        Some(&id),
        "one",
        turn_of(vec![
            edit("a.txt", "a0", "a1"),
            edit("b.txt", "b0", "b1"),
            write("c.txt", "c1\n"),
        ]),
        &[],
    );
    env.put("a.txt", b"my own edit\n");
    let before = env.everything();

    // Refused (the default): exit 3, the plan shows the conflict, nothing is written.
    let out = env.run(&["rewind", "--session", &id, "--turn", "1", "--scope", "code"]);
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("a.txt"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("edited outside Retrace"), "{text}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing was written"));
    assert_eq!(env.everything(), before);

    let plan = env.json_code(&["rewind", "--session", &id, "--turn", "1", "--scope", "code"], 3);
    assert_eq!(
        conflict_reasons(&plan),
        [("a.txt".to_string(), "manual_edit".to_string())]
    );
    let a = plan["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "a.txt")
        .unwrap();
    assert_eq!(a["action"], "skip");
    assert_eq!(a["conflict"]["reason"], "manual_edit");
    assert!(a["conflict"]["current_sha256"].is_string());
    assert_ne!(
        a["conflict"]["current_sha256"],
        a["conflict"]["last_owned_sha256"]
    );
    assert_eq!(env.everything(), before);
    // `both` refuses up front too: no head is made.
    env.json_code(&["rewind", "--session", &id, "--turn", "1", "--scope", "both"], 3);
    assert_eq!(env.everything(), before);
    assert_eq!(env.heads(&id).len(), 1);

    // Skip: the others are restored, the edited file is left alone and listed.
    let r = env.json(&[
        "rewind",
        "--session",
        &id,
        "--turn",
        "1",
        "--scope",
        "code",
        "--on-conflict",
        "skip",
    ]);
    assert_eq!(
        conflict_reasons(&r),
        [("a.txt".to_string(), "manual_edit".to_string())]
    );
    assert_eq!(set(&r["files_written"]), names(&["b.txt"]));
    assert_eq!(set(&r["files_deleted"]), names(&["c.txt"]));
    assert_eq!(env.read("a.txt"), b"my own edit\n");
    assert_eq!(env.read("b.txt"), b"b0\n");
    assert!(!env.at("c.txt").exists());
    env.json(&["undo", "--session", &id]);
    assert_eq!(env.read("b.txt"), b"b1\n");
    assert_eq!(env.read("c.txt"), b"c1\n");

    // Overwrite: the edit is replaced, and undo brings it back.
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
    assert_eq!(conflict_reasons(&r).len(), 1);
    assert_eq!(env.read("a.txt"), b"a0\n");
    env.json(&["undo", "--session", &id]);
    assert_eq!(env.read("a.txt"), b"my own edit\n");
}

#[test]
fn a_shell_gap_needs_confirmation_and_refusal_takes_precedence() {
    let env = Env::new();
    let id = env.start("zero", turn_of(vec![write("a.txt", "a0\n")]));
    let command = "printf 'from the shell\\n' > shell.txt";
    env.exec(
        Some(&id),
        "one",
        turn_of(vec![
            edit("a.txt", "a0", "a1"),
            call("bash", json!({ "command": command })),
        ]),
        &["--allow-bash"],
    );
    assert_eq!(env.read("shell.txt"), b"from the shell\n");
    let before = env.everything();

    // Without --yes: exit 4, the plan printed, nothing written.
    let plan = env.json_code(&["rewind", "--session", &id, "--turn", "1", "--scope", "code"], 4);
    assert_eq!(plan["requires_confirmation"], true);
    assert_eq!(plan["coverage"], "partial");
    let gap = &plan["gaps"][0];
    assert_eq!(gap["reason"], "bash_side_effect");
    assert_eq!(gap["detail"], command);
    assert_eq!(gap["turn"], 1);
    assert_eq!(env.everything(), before);
    let out = env.run(&["rewind", "--session", &id, "--turn", "1", "--scope", "code"]);
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stdout).contains(command));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--yes"));
    // `both` needs it too, and makes no head without it; conversation alone never needs it.
    env.json_code(&["rewind", "--session", &id, "--turn", "1", "--scope", "both"], 4);
    assert_eq!(env.everything(), before);
    // A dry run exits 0 whenever it printed a plan.
    let dry = env.json(&[
        "rewind",
        "--session",
        &id,
        "--turn",
        "1",
        "--scope",
        "code",
        "--dry-run",
    ]);
    assert_eq!(dry["requires_confirmation"], true);
    assert_eq!(env.everything(), before);

    // With --yes: the tracked file is restored; the shell's file is not Retrace's to touch.
    let r = env.json(&[
        "rewind",
        "--session",
        &id,
        "--turn",
        "1",
        "--scope",
        "code",
        "--yes",
    ]);
    assert_eq!(set(&r["files_written"]), names(&["a.txt"]));
    assert_eq!(env.read("a.txt"), b"a0\n");
    assert_eq!(env.read("shell.txt"), b"from the shell\n");
    env.json(&["undo", "--session", &id]);
    assert_eq!(env.read("a.txt"), b"a1\n");

    // A conflict and a needed confirmation together: refused (3) beats confirmation (4).
    env.put("a.txt", b"edited by hand\n");
    let before = env.everything();
    let plan = env.json_code(&["rewind", "--session", &id, "--turn", "1", "--scope", "code"], 3);
    assert_eq!(plan["requires_confirmation"], true);
    assert_eq!(conflict_reasons(&plan).len(), 1);
    env.json_code(&["rewind", "--session", &id, "--turn", "1", "--scope", "both"], 3);
    // --yes does not override a refusal.
    env.json_code(
        &[
            "rewind",
            "--session",
            &id,
            "--turn",
            "1",
            "--scope",
            "code",
            "--yes",
        ],
        3,
    );
    // With the conflict resolved by skip, confirmation is what is left.
    env.json_code(
        &[
            "rewind",
            "--session",
            &id,
            "--turn",
            "1",
            "--scope",
            "code",
            "--on-conflict",
            "skip",
        ],
        4,
    );
    // Usage (2) beats both.
    let other = env.other_dir();
    let out = env.run(&[
        "rewind",
        "--session",
        &id,
        "--workspace",
        &other,
        "--turn",
        "1",
        "--scope",
        "code",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let dry = env.json(&[
        "rewind",
        "--session",
        &id,
        "--turn",
        "1",
        "--scope",
        "code",
        "--dry-run",
    ]);
    assert_eq!(conflict_reasons(&dry).len(), 1);
    assert_eq!(env.everything(), before);
}

#[test]
fn a_dry_run_prints_the_plan_and_writes_nothing() {
    let env = Env::new();
    let id = three_turns(&env);
    let before = env.everything();
    for scope in ["code", "conversation", "both"] {
        let plan = env.json(&[
            "rewind",
            "--session",
            &id,
            "--turn",
            "1",
            "--scope",
            scope,
            "--dry-run",
        ]);
        assert_eq!(plan["scope"], scope);
        assert_eq!(plan["turn"], 1);
        assert_eq!(plan["prompt"], "second prompt");
        assert!(plan["plan_id"].is_string() && plan["expires_at"].is_string());
        if scope == "conversation" {
            assert_eq!(plan["files"], json!([]));
        } else {
            let actions: BTreeMap<String, String> = plan["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    (
                        f["path"].as_str().unwrap().to_string(),
                        f["action"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            let want: BTreeMap<String, String> = [("a.txt", "delete"), ("b.txt", "delete")]
                .into_iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
            assert_eq!(actions, want);
        }
        assert_eq!(env.everything(), before, "{scope} dry run wrote something");
    }
    let out = env.run(&[
        "rewind",
        "--session",
        &id,
        "--turn",
        "1",
        "--scope",
        "both",
        "--dry-run",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("delete    a.txt") && text.contains("second prompt"),
        "{text}"
    );
    assert_eq!(env.everything(), before);
}

// ---------------------------------------------------------------------------------------------
// The note after a code-only rewind, as the model sees it.

#[test]
fn after_a_code_rewind_the_next_turn_tells_the_model_which_files_were_restored() {
    let env = Env::new();
    let id = env.start("zero", turn_of(vec![write("a.txt", "a0\n")]));
    env.exec(
        Some(&id),
        "one",
        turn_of(vec![edit("a.txt", "a0", "a1"), write("b.txt", "b1\n")]),
        &[],
    );
    env.json(&["rewind", "--session", &id, "--turn", "1", "--scope", "code"]);

    // The next turn goes to a mock OpenAI-compatible server, which records the request.
    let rt = support::mock_runtime();
    let reply = Reply::body(sse::body(&[sse::content("noted"), sse::finish("stop")], true));
    let server = rt
        .block_on(MockServer::start_strict_with_key("test-key", vec![reply]))
        .unwrap();
    let out = env
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
            &server.base_url(),
            "the next request",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let body = requests[0].json();
    let messages = body["messages"].as_array().unwrap();
    let note = messages
        .iter()
        .position(|m| {
            m["role"] == "system"
                && m["content"].as_str().unwrap().contains("a.txt")
                && m["content"].as_str().unwrap().contains("b.txt")
        })
        .unwrap_or_else(|| panic!("no note in the request: {messages:#?}"));
    let last_user = messages.iter().rposition(|m| m["role"] == "user").unwrap();
    assert_eq!(messages[last_user]["content"], "the next request");
    assert!(note < last_user);
    assert!(messages[note]["content"].as_str().unwrap().contains("turn 1"));

    // The transcript shows the same: a system message naming the files, then the new turn.
    let t = env.transcript(&id);
    let user2 = user_index(&t, 2);
    assert_eq!(t[user2 - 1]["role"], "system");
    let text = t[user2 - 1]["content"].as_str().unwrap();
    assert!(text.contains("a.txt") && text.contains("b.txt"), "{text}");
    assert_eq!(t[user2 - 1]["turn"], Value::Null, "a note is never a turn");
    assert_eq!(t.last().unwrap()["content"], "noted");
}

// ---------------------------------------------------------------------------------------------
// The writer lease.

#[test]
fn a_second_writer_is_refused_while_readers_still_work() {
    let env = Env::new();
    let id = env.start("zero", turn_of(vec![write("a.txt", "a0\n")]));
    let model = env.script(turn_of(vec![call("bash", json!({"command": "sleep 3"}))]));
    let mut holder = env
        .command()
        .args(env.exec_args(Some(&id), &model, "hold the lease", &["--allow-bash"]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(holder.stdout.take().unwrap()).lines();
    // Wait until the holder's turn started its shell command: it holds the lease for 3 s more.
    let mut seen = Vec::new();
    loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("the holder ended early: {seen:?}"))
            .unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        seen.push(v.clone());
        if v["type"] == "tool_call" && v["name"] == "bash" {
            break;
        }
    }
    assert_eq!(seen[0]["type"], "turn_started");
    // Readers need no lease: they work while the holder writes.
    let heads = env.heads(&id);
    assert_eq!(heads.len(), 1);
    let t = env.transcript(&id);
    assert_eq!(
        user_turns(&t),
        [
            (Some(0), "zero".to_string()),
            (Some(1), "hold the lease".to_string())
        ]
    );
    let cks = env.checkpoints(&id);
    assert_eq!(cks.len(), 2);
    let fsck = env.json(&["fsck", "--session", &id]);
    assert_eq!(fsck["ok"], true);
    // Writers are refused with the holder named. They run after the readers, so the last refusal
    // also proves the lease was held while the readers ran.
    let pid = format!("pid {}", holder.id());
    let writers: [&[&str]; 5] = [
        &["rewind", "--session", &id, "--turn", "0", "--scope", "code"],
        &["undo", "--session", &id],
        &["fork", "--session", &id, "--turn", "0"],
        &["switch", "--session", &id, "main"],
        &["revert", "--session", &id, "a.txt"],
    ];
    for args in writers {
        let out = env.run(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains("held by another writer"), "{args:?}: {stderr}");
        assert!(stderr.contains(&pid), "{args:?} names the holder: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert_eq!(env.read("a.txt"), b"a0\n", "the refused writers wrote nothing");

    let rest: Vec<Value> = lines
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    assert!(holder.wait().unwrap().success());
    assert_eq!(rest.last().unwrap()["ok"], true);
    // Once it is gone, writers may write again.
    env.json(&["fork", "--session", &id, "--turn", "1"]);
}

// ---------------------------------------------------------------------------------------------
// The CLI contract: --workspace, JSON output.

#[test]
fn a_workspace_other_than_the_sessions_is_a_usage_error() {
    let env = Env::new();
    let id = three_turns(&env);
    let other = env.other_dir();
    let before = env.everything();
    let model = env.script(chat("never"));
    let commands: Vec<Vec<&str>> = vec![
        vec!["rewind", "--turn", "1", "--scope", "code"],
        vec!["rewind", "--turn", "1", "--scope", "conversation"],
        vec!["undo"],
        vec!["revert", "a.txt"],
        vec!["fork", "--turn", "1"],
        vec!["summarize", "--turn", "1", "--from", "--model", &model],
        vec!["switch", "main"],
    ];
    for cmd in commands {
        let mut args = cmd.clone();
        args.extend(["--session", &id, "--workspace", &other]);
        let out = env.run(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {stderr}");
        assert!(
            stderr.contains(&env.ws.display().to_string()),
            "{cmd:?}: {stderr}"
        );
        assert!(out.stdout.is_empty());
        assert_eq!(env.everything(), before, "{cmd:?} wrote something");
    }
    // The session's own workspace is fine.
    let ws = env.ws.display().to_string();
    env.json(&[
        "rewind",
        "--session",
        &id,
        "--workspace",
        &ws,
        "--turn",
        "2",
        "--scope",
        "code",
    ]);
    assert_eq!(env.read("a.txt"), b"a1\n");
}

#[test]
fn json_outputs_are_only_json_with_the_contract_fields() {
    let env = Env::new();
    let id = three_turns(&env);
    // Every field of the §5.3 plan and result, and of the §11.1 heads entries.
    let plan = env.json(&[
        "rewind",
        "--session",
        &id,
        "--turn",
        "2",
        "--scope",
        "both",
        "--dry-run",
    ]);
    for key in [
        "plan_id",
        "turn",
        "scope",
        "prompt",
        "can_files",
        "can_conversation",
        "disabled_reason",
        "requires_confirmation",
        "coverage",
        "gaps",
        "files",
        "conflicts",
        "expires_at",
    ] {
        assert!(plan.get(key).is_some(), "plan lacks {key}: {plan}");
    }
    let r = env.json(&["rewind", "--session", &id, "--turn", "2", "--scope", "both"]);
    for key in [
        "ok",
        "partial",
        "conversation_forked",
        "head_id",
        "session_id",
        "files_written",
        "files_deleted",
        "transaction_id",
        "undo_available",
        "conflicts",
        "prompt",
    ] {
        assert!(r.get(key).is_some(), "result lacks {key}: {r}");
    }
    let u = env.json(&["undo", "--session", &id]);
    assert_eq!(u["ok"], true);
    // A refusal prints nothing but JSON on stdout either: one `{ok: false, error}` document (the
    // reason on stderr too).
    let refused = env.fails(&["undo", "--session", &id], 3).expect("a JSON failure");
    assert_eq!(refused["ok"], false);
    assert_eq!(refused["error"]["code"], "refused");
    for h in env.heads(&id) {
        for key in [
            "id",
            "kind",
            "name",
            "parent_head",
            "fork_from",
            "selected",
            "retired",
            "message_count",
            "turns",
        ] {
            assert!(h.get(key).is_some(), "head lacks {key}: {h}");
        }
    }
    for m in env.transcript(&id) {
        assert!(m["id"].is_string() && m["role"].is_string() && m["content"].is_string());
    }
    let rv = env.json(&["revert", "--session", &id, "b.txt"]);
    assert_eq!(set(&rv["files_deleted"]), names(&["b.txt"]));
    let f = env.json(&["fork", "--session", &id, "--turn", "1"]);
    assert!(f["head_id"].is_string());
    let s = env.json(&["switch", "--session", &id, "main"]);
    assert_eq!(s, json!({"head_id": "main", "session_id": id}));
    let model = env.script(json!([{"content": "short"}]));
    let s = env.json(&[
        "summarize",
        "--session",
        &id,
        "--turn",
        "2",
        "--up-to",
        "--model",
        &model,
    ]);
    assert!(s["head_id"].is_string());
}

// ---------------------------------------------------------------------------------------------
// Single-file revert.

#[test]
fn revert_restores_one_file_to_before_the_session_touched_it() {
    let env = Env::new();
    env.put_mode("g.txt", b"g0\n", 0o600);
    let id = env.start(
        "zero",
        turn_of(vec![write("f.txt", "f0\n"), edit("g.txt", "g0", "g1")]),
    );
    env.exec(
        Some(&id),
        "one",
        turn_of(vec![edit("g.txt", "g1", "g2"), edit("f.txt", "f0", "f1")]),
        &[],
    );

    let r = env.json(&["revert", "--session", &id, "g.txt"]);
    assert_eq!(set(&r["files_written"]), names(&["g.txt"]));
    assert_eq!(r["files_deleted"], json!([]));
    assert_eq!(r["conversation_forked"], false);
    assert_eq!(env.read("g.txt"), b"g0\n");
    let mode = std::fs::metadata(env.at("g.txt")).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o600);
    assert_eq!(env.read("f.txt"), b"f1\n", "only the named file");
    // A file the session created did not exist before it: revert deletes it. Then undo.
    let r = env.json(&["revert", "--session", &id, "f.txt"]);
    assert_eq!(set(&r["files_deleted"]), names(&["f.txt"]));
    assert!(!env.at("f.txt").exists());
    env.json(&["undo", "--session", &id]);
    assert_eq!(env.read("f.txt"), b"f1\n");

    // A manual edit: refused with the plan (exit 3), nothing written, unless --overwrite.
    env.put("g.txt", b"mine\n");
    let before = env.everything();
    let plan = env.json_code(&["revert", "--session", &id, "g.txt"], 3);
    assert_eq!(
        conflict_reasons(&plan),
        [("g.txt".to_string(), "manual_edit".to_string())]
    );
    assert_eq!(env.everything(), before);
    let r = env.json(&["revert", "--session", &id, "g.txt", "--overwrite"]);
    assert_eq!(set(&r["files_written"]), names(&["g.txt"]));
    assert_eq!(conflict_reasons(&r).len(), 1);
    assert_eq!(env.read("g.txt"), b"g0\n");
    env.json(&["undo", "--session", &id]);
    assert_eq!(env.read("g.txt"), b"mine\n");
    // A file the session never edited: a usage error.
    env.put("never.txt", b"n\n");
    env.fails(&["revert", "--session", &id, "never.txt"], 2);
}

/// SPEC §11 and the one exit-code table: whatever the command, an unknown turn, head or session
/// (or a file the session never edited) is exit 2 with a message naming it, and nothing changes.
#[test]
fn unknown_turns_heads_and_sessions_exit_2_in_every_command() {
    let env = Env::new();
    let id = three_turns(&env);
    let before = env.everything();
    let model = env.script(json!([{"content": "never"}]));
    let unknown = "01a22be9-0000-7000-8000-000000000000";
    let mut cases: Vec<(Vec<&str>, &str)> = Vec::new();
    for scope in ["code", "conversation", "both"] {
        cases.push((
            vec!["rewind", "--session", &id, "--turn", "99", "--scope", scope],
            "99",
        ));
        cases.push((
            vec![
                "rewind",
                "--session",
                &id,
                "--turn",
                "99",
                "--scope",
                scope,
                "--dry-run",
            ],
            "99",
        ));
    }
    for side in ["--from", "--up-to"] {
        cases.push((
            vec![
                "summarize",
                "--session",
                &id,
                "--turn",
                "99",
                side,
                "--model",
                &model,
            ],
            "99",
        ));
    }
    cases.extend([
        (vec!["fork", "--session", &id, "--turn", "99"], "99"),
        (vec!["switch", "--session", &id, "no-such-head"], "no-such-head"),
        (
            vec!["transcript", "--session", &id, "--head", "no-such-head"],
            "no-such-head",
        ),
        (
            vec!["revert", "--session", &id, "never-edited.txt"],
            "never-edited.txt",
        ),
    ]);
    let with_unknown: [&[&str]; 11] = [
        &["exec", "--model", &model, "hi"],
        &["rewind", "--turn", "0", "--scope", "code"],
        &["undo"],
        &["revert", "a.txt"],
        &["fork", "--turn", "0"],
        &["summarize", "--turn", "0", "--from", "--model", &model],
        &["switch", "main"],
        &["heads"],
        &["transcript"],
        &["checkpoints"],
        &["fsck"],
    ];
    for args in with_unknown {
        let mut all = vec![args[0], "--session", unknown];
        all.extend_from_slice(&args[1..]);
        cases.push((all, unknown));
    }
    for (args, names) in &cases {
        let out = env.run(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(names), "{args:?} names {names}: {stderr}");
        assert!(
            out.stdout.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    assert_eq!(env.everything(), before, "nothing changed");
}

/// Issue 14 item 7: whether there is anything to summarize, and whether the turn exists, is
/// decided before a model is needed: with the default remote model and no API key, the answer is
/// still "nothing to summarize" (exit 3) or the unknown turn (exit 2), never a missing key.
#[test]
fn summarize_answers_before_it_needs_a_model() {
    let env = Env::new();
    let id = three_turns(&env);
    let before = env.everything();
    // `isolated_retrace` removes every key variable: the default model cannot be used.
    let out = env.run(&["summarize", "--session", &id, "--turn", "0", "--up-to"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("nothing to summarize"), "{stderr}");
    assert!(!stderr.contains("API_KEY"), "{stderr}");
    let out = env.run(&["summarize", "--session", &id, "--turn", "99", "--from"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("99") && !stderr.contains("API_KEY"), "{stderr}");
    // With something to summarize, the missing key is what is said (and nothing is written). The
    // session's own (script) model would answer: the remote one is asked for.
    let out = env.run(&[
        "summarize",
        "--session",
        &id,
        "--turn",
        "1",
        "--from",
        "--model",
        "deepseek:deepseek-chat",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("DEEPSEEK_API_KEY"), "{stderr}");
    assert_eq!(env.everything(), before, "nothing changed");
}

/// Found by a new user's trial: a restore whose every file was skipped read like one that did
/// something. The human output lists the skipped file and says plainly that no file changed.
#[test]
fn a_restore_that_skips_every_file_says_no_file_changed() {
    let env = Env::new();
    let id = env.start("zero", turn_of(vec![write("a.txt", "a0\n")]));
    env.exec(Some(&id), "one", turn_of(vec![edit("a.txt", "a0", "a1")]), &[]);
    env.put("a.txt", b"my own edit\n");
    let out = env.run(&[
        "rewind",
        "--session",
        &id,
        "--turn",
        "1",
        "--scope",
        "code",
        "--on-conflict",
        "skip",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("left alone (edited outside Retrace) a.txt") && text.contains("no file changed"),
        "{text}"
    );
    assert_eq!(env.read("a.txt"), b"my own edit\n");
}
