//! `retrace exec` through the real binary and the script model (SPEC §4, §8, §11).
//!
//! Every test has its own temp dir holding the workspace (`ws/`), the data root (`home/`, as
//! `RETRACE_HOME`), an empty config dir (`XDG_CONFIG_HOME`; `RETRACE_CONFIG` is unset, because an
//! explicit config file that does not exist is an error), the scripts and whatever lies "outside"
//! the workspace. Commands run with the temp dir, not the workspace, as their current directory, so
//! a command given `--session` must find the workspace in the session itself.

use crate::support;

use std::cell::Cell;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};
use tempfile::TempDir;

/// One test's private world.
struct Env {
    tmp: TempDir,
    /// The canonical workspace root.
    ws: PathBuf,
    scripts: Cell<usize>,
}

/// What one `exec --json` printed.
struct Exec {
    code: Option<i32>,
    /// Every stdout line, parsed (the test fails if one is not JSON).
    events: Vec<Value>,
    stderr: String,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        for d in ["ws", "home", "xdg", "outside", "scripts"] {
            std::fs::create_dir(tmp.path().join(d)).unwrap();
        }
        let ws = std::fs::canonicalize(tmp.path().join("ws")).unwrap();
        Env {
            tmp,
            ws,
            scripts: Cell::new(0),
        }
    }

    /// A path under the temp dir (outside the workspace).
    fn outside(&self, rel: &str) -> PathBuf {
        std::fs::canonicalize(self.tmp.path()).unwrap().join(rel)
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

    fn read(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.at(rel)).unwrap_or_else(|e| panic!("reading {rel}: {e}"))
    }

    /// `retrace` with this test's environment and nothing inherited that could change its config.
    fn command(&self) -> Command {
        support::isolated_retrace(self.tmp.path())
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().unwrap()
    }

    /// Runs a read command with `--json` and parses its one JSON document.
    fn json(&self, args: &[&str]) -> Value {
        let mut all: Vec<&str> = args.to_vec();
        all.push("--json");
        let out = self.run(&all);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: stdout is not one JSON document: {e}"))
    }

    fn checkpoints(&self, id: &str) -> Vec<Value> {
        self.json(&["checkpoints", "--session", id])
            .as_array()
            .unwrap()
            .clone()
    }

    fn transcript(&self, id: &str) -> Vec<Value> {
        self.json(&["transcript", "--session", id])
            .as_array()
            .unwrap()
            .clone()
    }

    /// Writes a script file (SPEC §11.2) and returns the `--model` value naming it.
    fn script(&self, responses: Value) -> String {
        let n = self.scripts.get();
        self.scripts.set(n + 1);
        let path = self.tmp.path().join(format!("scripts/s{n}.json"));
        std::fs::write(&path, json!({ "responses": responses }).to_string()).unwrap();
        format!("script:{}", path.display())
    }

    /// The `exec` arguments: a new session on the workspace, or `--session ID` (no `--workspace`).
    fn exec_args(&self, session: Option<&str>, model: &str, extra: &[&str]) -> Vec<String> {
        let mut args: Vec<String> = vec!["exec".into(), "--json".into(), "--model".into(), model.into()];
        match session {
            Some(id) => args.extend(["--session".to_string(), id.to_string()]),
            None => args.extend(["--workspace".to_string(), self.ws.display().to_string()]),
        }
        args.extend(extra.iter().map(|s| s.to_string()));
        args.push("do the thing".into());
        args
    }

    /// `retrace exec --json` with `responses` as the script.
    fn exec(&self, session: Option<&str>, responses: Value, extra: &[&str]) -> Exec {
        let model = self.script(responses);
        let out = self
            .command()
            .args(self.exec_args(session, &model, extra))
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).expect("stdout is UTF-8");
        assert!(
            stdout.is_empty() || stdout.ends_with('\n'),
            "stdout does not end a line: {stdout:?}"
        );
        let events = stdout
            .lines()
            .enumerate()
            .map(|(i, line)| {
                serde_json::from_str::<Value>(line)
                    .unwrap_or_else(|e| panic!("stdout line {} is not JSON ({e}): {line:?}", i + 1))
            })
            .collect();
        Exec {
            code: out.status.code(),
            events,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// `exec` on a new session, which must finish with exit 0; returns the session id.
    fn exec_ok(&self, responses: Value, extra: &[&str]) -> (String, Exec) {
        let e = self.exec(None, responses, extra);
        e.assert_ok();
        (e.session(), e)
    }
}

impl Exec {
    /// The last line: `{"type":"result","session_id","head_id","turn","ok"}`.
    fn result(&self) -> &Value {
        let r = self.events.last().expect("stdout has at least the result line");
        assert_eq!(r["type"], "result", "{r}");
        assert!(r["session_id"].is_string(), "{r}");
        assert!(r["head_id"].is_string(), "{r}");
        assert!(r["turn"].is_u64(), "{r}");
        assert!(r["ok"].is_boolean(), "{r}");
        r
    }

    fn session(&self) -> String {
        self.result()["session_id"].as_str().unwrap().to_string()
    }

    fn turn(&self) -> u64 {
        self.result()["turn"].as_u64().unwrap()
    }

    fn assert_ok(&self) {
        assert_eq!(self.code, Some(0), "stderr: {}", self.stderr);
        assert_eq!(self.result()["ok"], true);
    }

    /// The `tool_result` events, in order.
    fn tool_results(&self) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| e["type"] == "tool_result")
            .collect()
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

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

/// The only checkpoint of a one-turn session.
fn only_checkpoint(env: &Env, id: &str) -> Value {
    let list = env.checkpoints(id);
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0]["turn"], 0);
    list[0].clone()
}

fn gap_reasons(ck: &Value) -> Vec<String> {
    ck["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["reason"].as_str().unwrap().to_string())
        .collect()
}

/// The tool messages of a transcript, in order.
fn tool_messages(transcript: &[Value]) -> Vec<String> {
    transcript
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Each edit tool through `exec`.

#[test]
fn write_file_creates_and_replaces_keeping_the_mode() {
    let env = Env::new();
    env.put("old.sh", b"#!/bin/sh\r\necho old\r\n");
    std::fs::set_permissions(env.at("old.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let (id, e) = env.exec_ok(
        turn_of(vec![
            call(
                "write_file",
                json!({"path": "dir/sub/new.txt", "content": "héllo\r\nno newline"}),
            ),
            call(
                "write_file",
                json!({"path": "./old.sh", "content": "#!/bin/sh\necho new\n"}),
            ),
            call("write_file", json!({"path": "empty.txt", "content": ""})),
        ]),
        &[],
    );
    assert!(e.tool_results().iter().all(|r| r["ok"] == true), "{:?}", e.events);
    assert_eq!(env.read("dir/sub/new.txt"), "héllo\r\nno newline".as_bytes());
    assert_eq!(env.read("old.sh"), b"#!/bin/sh\necho new\n");
    assert_eq!(env.read("empty.txt"), b"");
    let mode = std::fs::metadata(env.at("old.sh")).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o755, "write_file keeps an existing file's mode");

    let ck = only_checkpoint(&env, &id);
    assert_eq!(strings(&ck["paths"]), ["dir/sub/new.txt", "old.sh", "empty.txt"]);
    assert_eq!(ck["file_count"], 3);
    assert_eq!(ck["coverage"], "complete");
    assert_eq!(ck["gaps"], json!([]));
    // Only old.sh existed before: its before-image is the only payload.
    assert_eq!(ck["bytes"], "#!/bin/sh\r\necho old\r\n".len());
    assert_eq!(ck["can_restore_code"], true);
}

#[test]
fn edit_file_replaces_one_occurrence_or_all_byte_exact() {
    let env = Env::new();
    let before = b"fn a() {}\r\nlet x = 1;\r\nlet y = x;\r\n// x x\r\n";
    env.put("src/lib.rs", before);
    env.put("notes.md", b"alpha beta alpha\n");
    let (id, e) = env.exec_ok(
        turn_of(vec![
            call(
                "edit_file",
                json!({"path": "src/lib.rs", "old_string": "let x = 1;", "new_string": "let x = 2;\r\nlet z = 3;"}),
            ),
            call(
                "edit_file",
                json!({"path": "notes.md", "old_string": "alpha", "new_string": "ALPHA", "replace_all": true}),
            ),
        ]),
        &[],
    );
    assert!(e.tool_results().iter().all(|r| r["ok"] == true), "{:?}", e.events);
    assert_eq!(
        env.read("src/lib.rs"),
        b"fn a() {}\r\nlet x = 2;\r\nlet z = 3;\r\nlet y = x;\r\n// x x\r\n"
    );
    assert_eq!(env.read("notes.md"), b"ALPHA beta ALPHA\n");
    let ck = only_checkpoint(&env, &id);
    assert_eq!(strings(&ck["paths"]), ["src/lib.rs", "notes.md"]);
    assert_eq!(ck["file_count"], 2);
    assert_eq!(ck["coverage"], "complete");
    assert_eq!(ck["bytes"], before.len() + "alpha beta alpha\n".len());
}

#[test]
fn multi_edit_applies_its_edits_in_order() {
    let env = Env::new();
    env.put("m.txt", b"one\ntwo\nthree\n");
    let (id, e) = env.exec_ok(
        turn_of(vec![call(
            "multi_edit",
            json!({"path": "m.txt", "edits": [
                {"old_string": "one", "new_string": "uno"},
                // Applies to the result of the first edit.
                {"old_string": "uno\ntwo", "new_string": "uno\ndos"},
                {"old_string": "e", "new_string": "E", "replace_all": true}
            ]}),
        )]),
        &[],
    );
    assert_eq!(e.tool_results()[0]["ok"], true, "{:?}", e.events);
    assert_eq!(env.read("m.txt"), b"uno\ndos\nthrEE\n");
    let ck = only_checkpoint(&env, &id);
    assert_eq!(strings(&ck["paths"]), ["m.txt"]);
    assert_eq!(ck["coverage"], "complete");
    assert_eq!(ck["bytes"], 14);
}

#[test]
fn move_file_captures_source_and_destination() {
    let env = Env::new();
    let bytes: &[u8] = b"\x00\x01binary\xff\xfe\n";
    env.put("from.bin", bytes);
    let (id, e) = env.exec_ok(
        turn_of(vec![call(
            "move_file",
            json!({"from": "from.bin", "to": "deep/er/to.bin"}),
        )]),
        &[],
    );
    assert_eq!(e.tool_results()[0]["ok"], true, "{:?}", e.events);
    assert!(!env.at("from.bin").exists());
    assert_eq!(env.read("deep/er/to.bin"), bytes);
    let ck = only_checkpoint(&env, &id);
    assert_eq!(strings(&ck["paths"]), ["from.bin", "deep/er/to.bin"]);
    assert_eq!(ck["file_count"], 2);
    assert_eq!(ck["coverage"], "complete");
    assert_eq!(ck["bytes"], bytes.len());
}

#[test]
fn delete_file_removes_the_file_and_keeps_its_bytes() {
    let env = Env::new();
    env.put("gone.txt", b"keep me\n");
    env.put("stays.txt", b"untouched\n");
    let (id, e) = env.exec_ok(
        turn_of(vec![call("delete_file", json!({"path": "gone.txt"}))]),
        &[],
    );
    assert_eq!(e.tool_results()[0]["ok"], true, "{:?}", e.events);
    assert!(!env.at("gone.txt").exists());
    assert_eq!(env.read("stays.txt"), b"untouched\n");
    let ck = only_checkpoint(&env, &id);
    assert_eq!(strings(&ck["paths"]), ["gone.txt"]);
    assert_eq!(ck["coverage"], "complete");
    assert_eq!(ck["bytes"], 8);
}

#[test]
fn paths_are_listed_once_in_first_touch_order_across_tools() {
    let env = Env::new();
    env.put("b.txt", b"b\n");
    env.put("c.txt", b"c\n");
    let abs_b = env.at("b.txt").display().to_string();
    let (id, e) = env.exec_ok(
        json!([
            {"tool_calls": [
                call("edit_file", json!({"path": "c.txt", "old_string": "c", "new_string": "C"})),
                call("write_file", json!({"path": "a.txt", "content": "a\n"})),
            ]},
            {"tool_calls": [
                // `./b.txt`, `b.txt` and `<root>/b.txt` are one path; c.txt was touched already.
                call("edit_file", json!({"path": "./b.txt", "old_string": "b", "new_string": "B"})),
                call("edit_file", json!({"path": abs_b, "old_string": "B", "new_string": "BB"})),
                call("move_file", json!({"from": "c.txt", "to": "b2.txt"})),
                call("delete_file", json!({"path": "a.txt"})),
            ]},
            {"content": "done"}
        ]),
        &[],
    );
    assert!(e.tool_results().iter().all(|r| r["ok"] == true), "{:?}", e.events);
    assert_eq!(env.read("b.txt"), b"BB\n");
    assert_eq!(env.read("b2.txt"), b"C\n");
    assert!(!env.at("a.txt").exists() && !env.at("c.txt").exists());
    let ck = only_checkpoint(&env, &id);
    assert_eq!(strings(&ck["paths"]), ["c.txt", "a.txt", "b.txt", "b2.txt"]);
    assert_eq!(ck["file_count"], 4);
    assert_eq!(ck["coverage"], "complete");
    // The first touch wins: c.txt's before-image is "c\n", not the edited "C\n".
    assert_eq!(ck["bytes"], 4);
    // One checkpoint_captured event per first touch, none for the repeated ones.
    let captured: Vec<String> = e
        .events
        .iter()
        .filter(|x| x["type"] == "checkpoint_captured")
        .flat_map(|x| strings(&x["paths"]))
        .collect();
    assert_eq!(captured, ["c.txt", "a.txt", "b.txt", "b2.txt"]);
}

// ---------------------------------------------------------------------------------------------
// Failed tool calls are results for the model.

#[test]
fn a_failing_edit_leaves_the_file_untouched_and_tells_the_model() {
    let env = Env::new();
    let before = b"keep\r\nthese\r\nbytes\xff\n";
    let text = b"hello world\n";
    env.put("bin.dat", before);
    env.put("t.txt", text);
    let (id, e) = env.exec_ok(
        turn_of(vec![
            call(
                "edit_file",
                json!({"path": "t.txt", "old_string": "goodbye", "new_string": "x"}),
            ),
            call(
                "edit_file",
                json!({"path": "bin.dat", "old_string": "keep", "new_string": "x"}),
            ),
        ]),
        &[],
    );
    assert_eq!(e.result()["turn"], 0);
    assert_eq!(env.read("t.txt"), text);
    assert_eq!(env.read("bin.dat"), before);
    let results = e.tool_results();
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r["ok"] == false), "{results:?}");

    let msgs = tool_messages(&env.transcript(&id));
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    for m in &msgs {
        assert!(m.starts_with("error:"), "{m}");
    }
    assert!(msgs[0].contains("old_string was not found"), "{}", msgs[0]);
    assert!(msgs[0].contains("t.txt"), "{}", msgs[0]);
    // The model answered after the failure: the turn went on.
    let last = env.transcript(&id).last().unwrap().clone();
    assert_eq!(last["role"], "assistant");
    assert_eq!(last["content"], "done");
    // A preview that fails captures nothing.
    let ck = only_checkpoint(&env, &id);
    assert_eq!(ck["paths"], json!([]));
    assert_eq!(ck["coverage"], "none");
}

#[test]
fn multi_edit_is_all_or_nothing() {
    let env = Env::new();
    let before = b"a = 1\nb = 2\nc = 3\n";
    env.put("conf.ini", before);
    let (id, e) = env.exec_ok(
        turn_of(vec![
            call(
                "multi_edit",
                json!({"path": "conf.ini", "edits": [
                    {"old_string": "a = 1", "new_string": "a = 10"},
                    {"old_string": "b = 2", "new_string": "b = 20"},
                    {"old_string": "zzz", "new_string": "never"}
                ]}),
            ),
            // Ambiguous: "= " occurs three times.
            call(
                "multi_edit",
                json!({"path": "conf.ini", "edits": [
                    {"old_string": "c = 3", "new_string": "c = 30"},
                    {"old_string": "= ", "new_string": ":"}
                ]}),
            ),
        ]),
        &[],
    );
    assert_eq!(
        env.read("conf.ini"),
        before,
        "no edit of a failing multi_edit is applied"
    );
    assert!(
        e.tool_results().iter().all(|r| r["ok"] == false),
        "{:?}",
        e.events
    );
    let msgs = tool_messages(&env.transcript(&id));
    assert_eq!(msgs.len(), 2);
    assert!(msgs.iter().all(|m| m.starts_with("error:")), "{msgs:?}");
    assert!(msgs[0].contains("3 of 3"), "names the failing edit: {}", msgs[0]);
    assert!(msgs[1].contains("2 of 2"), "names the failing edit: {}", msgs[1]);
    let ck = only_checkpoint(&env, &id);
    assert_eq!(ck["paths"], json!([]));
}

#[test]
fn escapes_are_refused_and_nothing_outside_changes() {
    let env = Env::new();
    let secret = b"outside bytes\n";
    std::fs::write(env.outside("outside.txt"), secret).unwrap();
    std::fs::write(env.outside("outside/inner.txt"), secret).unwrap();
    symlink(env.outside("outside.txt"), env.at("to_file")).unwrap();
    symlink(env.outside("outside"), env.at("to_dir")).unwrap();
    symlink(env.outside("outside/not_yet.txt"), env.at("dangling")).unwrap();
    env.put("inside.txt", b"in\n");
    let abs_outside = env.outside("outside.txt").display().to_string();

    let e = env.exec(
        None,
        turn_of(vec![
            call(
                "write_file",
                json!({"path": "../outside.txt", "content": "pwned"}),
            ),
            call(
                "write_file",
                json!({"path": "sub/../../outside.txt", "content": "pwned"}),
            ),
            call("write_file", json!({"path": abs_outside, "content": "pwned"})),
            call(
                "edit_file",
                json!({"path": abs_outside, "old_string": "outside", "new_string": "pwned"}),
            ),
            call(
                "edit_file",
                json!({"path": "to_file", "old_string": "outside", "new_string": "pwned"}),
            ),
            call("write_file", json!({"path": "to_file", "content": "pwned"})),
            call(
                "write_file",
                json!({"path": "to_dir/inner.txt", "content": "pwned"}),
            ),
            call(
                "write_file",
                json!({"path": "to_dir/new.txt", "content": "pwned"}),
            ),
            call("write_file", json!({"path": "dangling", "content": "pwned"})),
            call("delete_file", json!({"path": "to_dir/inner.txt"})),
            call("delete_file", json!({"path": "../outside.txt"})),
            call("move_file", json!({"from": "../outside.txt", "to": "stolen.txt"})),
            call(
                "move_file",
                json!({"from": "inside.txt", "to": "../outside/planted.txt"}),
            ),
            call(
                "move_file",
                json!({"from": "inside.txt", "to": "to_dir/planted.txt"}),
            ),
            call(
                "multi_edit",
                json!({"path": "to_file", "edits": [{"old_string": "outside", "new_string": "x"}]}),
            ),
        ]),
        &[],
    );
    e.assert_ok();
    let id = e.session();
    let results = e.tool_results();
    assert_eq!(results.len(), 15);
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r["ok"], false, "call {i} was not refused: {r}");
    }
    assert_eq!(std::fs::read(env.outside("outside.txt")).unwrap(), secret);
    assert_eq!(std::fs::read(env.outside("outside/inner.txt")).unwrap(), secret);
    let mut names: Vec<String> = std::fs::read_dir(env.outside("outside"))
        .unwrap()
        .map(|d| d.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["inner.txt"], "nothing was created outside");
    assert_eq!(env.read("inside.txt"), b"in\n");
    assert!(!env.at("stolen.txt").exists());
    // The symlinks are still symlinks.
    for l in ["to_file", "to_dir", "dangling"] {
        assert!(
            std::fs::symlink_metadata(env.at(l))
                .unwrap()
                .file_type()
                .is_symlink(),
            "{l}"
        );
    }
    let msgs = tool_messages(&env.transcript(&id));
    assert_eq!(msgs.len(), 15);
    for m in &msgs {
        assert!(
            m.starts_with("error:") && m.contains("is outside the workspace"),
            "{m}"
        );
    }
    let ck = only_checkpoint(&env, &id);
    assert_eq!(ck["paths"], json!([]), "nothing was captured for a refused call");
}

#[test]
fn symlinks_and_hard_links_inside_are_edited_but_recorded_as_gaps() {
    let env = Env::new();
    env.put("real/target.txt", b"via link\n");
    symlink("real", env.at("alias")).unwrap();
    env.put("linked.txt", b"two names\n");
    std::fs::hard_link(env.at("linked.txt"), env.outside("outside/other_name.txt")).unwrap();
    let (id, e) = env.exec_ok(
        turn_of(vec![
            call(
                "edit_file",
                json!({"path": "alias/target.txt", "old_string": "via", "new_string": "through"}),
            ),
            call(
                "write_file",
                json!({"path": "linked.txt", "content": "replaced\n"}),
            ),
        ]),
        &[],
    );
    assert!(e.tool_results().iter().all(|r| r["ok"] == true), "{:?}", e.events);
    assert_eq!(env.read("real/target.txt"), b"through link\n");
    assert!(std::fs::symlink_metadata(env.at("alias"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(env.read("linked.txt"), b"replaced\n");
    // An atomic write replaces this name only: the other name keeps the old bytes.
    assert_eq!(
        std::fs::read(env.outside("outside/other_name.txt")).unwrap(),
        b"two names\n"
    );
    let ck = only_checkpoint(&env, &id);
    assert_eq!(ck["coverage"], "partial");
    let mut reasons = gap_reasons(&ck);
    reasons.sort();
    assert_eq!(reasons, ["hardlink", "symlink"], "{ck}");
    let paths: Vec<String> = ck["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["path"].as_str().unwrap().to_string())
        .collect();
    assert!(paths.contains(&"alias/target.txt".to_string()), "{paths:?}");
    assert!(paths.contains(&"linked.txt".to_string()), "{paths:?}");
}

// ---------------------------------------------------------------------------------------------
// Shell commands.

#[test]
fn bash_is_denied_without_allow_bash() {
    let env = Env::new();
    let (id, e) = env.exec_ok(
        turn_of(vec![call("bash", json!({"command": "echo made > made.txt"}))]),
        &[],
    );
    assert!(!env.at("made.txt").exists(), "the command did not run");
    let r = e.tool_results();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["ok"], false);
    let msgs = tool_messages(&env.transcript(&id));
    assert_eq!(msgs.len(), 1);
    assert!(msgs[0].starts_with("error:"), "{}", msgs[0]);
    let ck = only_checkpoint(&env, &id);
    assert_eq!(ck["gaps"], json!([]), "a command that did not run leaves no gap");
    assert_eq!(ck["coverage"], "none");
}

#[test]
fn bash_runs_with_allow_bash_and_is_recorded_as_a_gap() {
    let env = Env::new();
    env.put("kept.txt", b"k\n");
    let command = "printf 'made\\n' > made.txt && echo ran";
    let (id, e) = env.exec_ok(
        turn_of(vec![
            call("write_file", json!({"path": "w.txt", "content": "w\n"})),
            call("bash", json!({"command": command})),
            call("bash", json!({"command": "echo second"})),
        ]),
        &["--allow-bash"],
    );
    assert_eq!(env.read("made.txt"), b"made\n");
    let r = e.tool_results();
    assert_eq!(r[1]["ok"], true, "{:?}", r[1]);
    let out = r[1]["content"].as_str().unwrap();
    assert!(out.contains("ran") && out.contains("[exit code 0]"), "{out}");
    let ck = only_checkpoint(&env, &id);
    assert_eq!(strings(&ck["paths"]), ["w.txt"], "shell effects are not captured");
    assert_eq!(ck["coverage"], "partial");
    let gaps = ck["gaps"].as_array().unwrap();
    assert_eq!(gaps.len(), 1, "{gaps:?}");
    assert_eq!(gaps[0]["reason"], "bash_side_effect");
    // One shell gap per turn, naming every command that ran.
    assert_eq!(gaps[0]["detail"], format!("{command}\necho second"));
    assert_eq!(gaps[0]["tool"], "bash");
}

#[test]
fn the_bash_gap_is_announced_in_the_event_stream() {
    let env = Env::new();
    let (_, e) = env.exec_ok(
        turn_of(vec![call("bash", json!({"command": "true"}))]),
        &["--allow-bash"],
    );
    let announced: Vec<&Value> = e
        .events
        .iter()
        .filter(|x| x["type"] == "checkpoint_captured")
        .collect();
    assert_eq!(announced.len(), 1, "{:?}", e.events);
    assert_eq!(gap_reasons(announced[0]), ["bash_side_effect"]);
    assert_eq!(announced[0]["gaps"][0]["detail"], "true");
}

// ---------------------------------------------------------------------------------------------
// Sessions across processes.

#[test]
fn a_session_continues_from_other_processes_with_monotonic_turns() {
    let env = Env::new();
    let (id, first) = env.exec_ok(
        turn_of(vec![call(
            "write_file",
            json!({"path": "n.txt", "content": "0\n"}),
        )]),
        &[],
    );
    assert_eq!(first.turn(), 0);
    for n in 1..=2u64 {
        let e = env.exec(
            Some(&id),
            turn_of(vec![call(
                "edit_file",
                json!({"path": "n.txt", "old_string": format!("{}\n", n - 1), "new_string": format!("{n}\n")}),
            )]),
            &[],
        );
        e.assert_ok();
        assert_eq!(e.session(), id);
        assert_eq!(e.turn(), n);
        assert_eq!(e.result()["head_id"], first.result()["head_id"]);
        assert_eq!(e.events[0]["type"], "turn_started");
        assert_eq!(e.events[0]["turn"], n);
        assert_eq!(e.events[e.events.len() - 2]["type"], "turn_finished");
    }
    assert_eq!(env.read("n.txt"), b"2\n");

    let transcript = env.transcript(&id);
    let user_turns: Vec<u64> = transcript
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["turn"].as_u64().unwrap())
        .collect();
    assert_eq!(user_turns, [0, 1, 2]);
    // Each turn: user, assistant with a call, its result, the closing answer.
    assert_eq!(transcript.len(), 12);
    let ok_results = tool_messages(&transcript)
        .iter()
        .filter(|m| !m.starts_with("error:"))
        .count();
    assert_eq!(ok_results, 3);

    let cks = env.checkpoints(&id);
    let turns: Vec<u64> = cks.iter().map(|c| c["turn"].as_u64().unwrap()).collect();
    assert_eq!(turns, [0, 1, 2]);
    assert!(cks
        .iter()
        .all(|c| strings(&c["paths"]) == ["n.txt"] && c["visible"] == true));
}

#[test]
fn an_exhausted_script_fails_the_turn_cleanly() {
    let env = Env::new();
    // One response with a call, then nothing: the second model request fails.
    let e = env.exec(
        None,
        json!([{"tool_calls": [call("write_file", json!({"path": "kept.txt", "content": "kept\n"}))]}]),
        &[],
    );
    assert_eq!(e.code, Some(1), "stderr: {}", e.stderr);
    let r = e.result();
    assert_eq!(r["ok"], false);
    assert_eq!(r["turn"], 0);
    let why = r["error"]["message"].as_str().expect("the result says why");
    assert!(why.contains("no response left"), "{why}");
    let finished = &e.events[e.events.len() - 2];
    assert_eq!(finished["type"], "turn_finished");
    assert_eq!(finished["ok"], false);
    assert_eq!(
        env.read("kept.txt"),
        b"kept\n",
        "what was written before the failure stays"
    );

    let id = e.session();
    let transcript = env.transcript(&id);
    assert_eq!(transcript[0]["role"], "user");
    assert_eq!(tool_messages(&transcript).len(), 1);
    let ck = only_checkpoint(&env, &id);
    assert_eq!(strings(&ck["paths"]), ["kept.txt"]);
    let fsck = env.run(&["fsck", "--session", &id]);
    assert_eq!(
        fsck.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&fsck.stdout)
    );

    // The session takes another turn.
    let next = env.exec(
        Some(&id),
        turn_of(vec![call(
            "edit_file",
            json!({"path": "kept.txt", "old_string": "kept", "new_string": "again"}),
        )]),
        &[],
    );
    next.assert_ok();
    assert_eq!(next.turn(), 1);
    assert_eq!(env.read("kept.txt"), b"again\n");
    assert_eq!(env.checkpoints(&id).len(), 2);
}

#[test]
fn sessions_lists_the_sessions_of_the_workspace_with_counts() {
    let env = Env::new();
    let (id, _) = env.exec_ok(json!([{"content": "hi"}]), &[]);
    env.exec(Some(&id), json!([{"content": "again"}]), &[])
        .assert_ok();
    // A session of another workspace is not listed.
    let other = env.outside("outside");
    let model = env.script(json!([{"content": "elsewhere"}]));
    let o = env
        .command()
        .args([
            "exec",
            "--model",
            &model,
            "--workspace",
            &other.display().to_string(),
            "hi",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));

    let ws = env.ws.display().to_string();
    let list = env.json(&["sessions", "--workspace", &ws]);
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 1, "{list:?}");
    let s = &list[0];
    assert_eq!(s["id"], id.as_str());
    assert_eq!(s["workspace"], ws.as_str());
    assert_eq!(s["heads"], 1);
    assert_eq!(s["turns"], 2);
    assert!(s["created_at"].is_string());
    let home = env.outside("home/sessions");
    assert_eq!(
        s["log_path"],
        home.join(format!("{id}.jsonl")).display().to_string()
    );
    assert_eq!(
        s["checkpoint_dir"],
        home.join(format!("{id}.ckpt")).display().to_string()
    );
    assert!(Path::new(s["log_path"].as_str().unwrap()).is_file());
    assert!(Path::new(s["checkpoint_dir"].as_str().unwrap()).is_dir());

    let theirs = env.json(&["sessions", "--workspace", &other.display().to_string()]);
    assert_eq!(theirs.as_array().unwrap().len(), 1);
    assert_ne!(theirs[0]["id"], id.as_str());
}

/// A running `exec` that holds a session's lease until it is released: its shell command waits
/// for a file to appear. Dropping the guard releases it and reaps the process, so a failing test
/// leaves nothing running.
struct Holder {
    child: std::process::Child,
    release: PathBuf,
}

impl Holder {
    fn release(&self) {
        std::fs::write(&self.release, b"").unwrap();
    }
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
fn a_second_writer_gets_the_lease_error_naming_the_holder() {
    let env = Env::new();
    let (id, _) = env.exec_ok(json!([{"content": "first"}]), &[]);
    // The holder: a turn whose shell command waits until the test releases it (or 60 s pass).
    let release = env.outside("release");
    let wait = format!(
        "while [ ! -e '{}' ]; do sleep 0.02; done; echo released",
        release.display()
    );
    let model = env.script(turn_of(vec![call(
        "bash",
        json!({"command": wait, "timeout_ms": 60_000}),
    )]));
    let mut holder = Holder {
        child: env
            .command()
            .args(env.exec_args(Some(&id), &model, &["--allow-bash"]))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
        release,
    };
    let mut lines = BufReader::new(holder.child.stdout.take().unwrap()).lines();
    // Wait until the holder runs the shell command: it holds the lease from its start until it
    // exits, and it cannot exit before the command is released.
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

    let second = env.exec(Some(&id), json!([{"content": "never"}]), &[]);
    assert_eq!(second.code, Some(1), "stderr: {}", second.stderr);
    assert!(
        second.stderr.contains("held by another writer"),
        "{}",
        second.stderr
    );
    assert!(
        second.stderr.contains(&format!("pid {}", holder.child.id())),
        "names the holder: {}",
        second.stderr
    );
    // On stdout only the result line (SPEC §11): `ok: false` and the error, coded.
    assert_eq!(second.events.len(), 1, "only the result: {:?}", second.events);
    assert_eq!(second.events[0]["type"], "result");
    assert_eq!(second.events[0]["ok"], false);
    assert_eq!(second.events[0]["error"]["code"], "busy");
    // Reading needs no lease (SPEC §6): the running turn's user message is already visible.
    let users = env.transcript(&id).iter().filter(|m| m["role"] == "user").count();
    assert_eq!(users, 2);
    assert_eq!(env.checkpoints(&id).len(), 2);
    assert_eq!(
        env.json(&["sessions", "--workspace", &env.ws.display().to_string()])[0]["turns"],
        2
    );

    holder.release();
    let rest: Vec<Value> = lines
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    assert!(holder.child.wait().unwrap().success());
    let result = rest.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["ok"], true);
    assert_eq!(result["turn"], 1);
    let bash = rest.iter().find(|v| v["type"] == "tool_result").unwrap();
    assert!(bash["content"].as_str().unwrap().contains("released"), "{bash}");
    // The refused writer left no trace: two turns, the second one the holder's.
    let users = env.transcript(&id).iter().filter(|m| m["role"] == "user").count();
    assert_eq!(users, 2);
    // Once the holder is gone, the session can be written again.
    let third = env.exec(Some(&id), json!([{"content": "now"}]), &[]);
    third.assert_ok();
    assert_eq!(third.turn(), 2);
}

#[test]
fn workspace_must_match_the_sessions_own() {
    let env = Env::new();
    let (id, _) = env.exec_ok(json!([{"content": "hi"}]), &[]);
    let exec_in = |workspace: &str| {
        let model = env.script(json!([{"content": "ok"}]));
        env.run(&[
            "exec",
            "--json",
            "--model",
            &model,
            "--session",
            &id,
            "--workspace",
            workspace,
            "hi",
        ])
    };
    let out = exec_in(&env.outside("outside").display().to_string());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["error"]["code"], "usage", "only the result line: {result}");
    let own = env.ws.display().to_string();
    assert!(stderr.contains(&own), "names the session's workspace: {stderr}");
    let users = |env: &Env| env.transcript(&id).iter().filter(|m| m["role"] == "user").count();
    assert_eq!(users(&env), 1, "nothing was written");

    // The same workspace spelled differently is the session's own.
    std::fs::create_dir(env.at("sub")).unwrap();
    let out = exec_in(&format!("{own}/sub/.."));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["turn"], 1);
    assert_eq!(users(&env), 2);
}

#[test]
fn argument_errors_have_the_contract_exit_codes() {
    let env = Env::new();
    let model = env.script(json!([{"content": "never"}]));
    let ws = env.ws.display().to_string();
    let missing_ws = env.outside("missing").display().to_string();
    let unknown = "01a22be9-0000-7000-8000-000000000000";
    let git_dir = env.ws.join(".git");
    std::fs::create_dir_all(&git_dir).unwrap();
    let git_dir = git_dir.display().to_string();
    // A bare repository (its config and hooks run commands) is no workspace either.
    let bare = env.outside("bare.git");
    for d in ["objects", "refs"] {
        std::fs::create_dir_all(bare.join(d)).unwrap();
    }
    std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    let bare = bare.display().to_string();
    let cases: [(&[&str], i32, &str); 9] = [
        (&["--workspace", "/", "--model", &model, "hi"], 2, "root"),
        (
            &["--workspace", &git_dir, "--model", &model, "hi"],
            2,
            "inside a `.git` directory",
        ),
        (
            &["--workspace", &bare, "--model", &model, "hi"],
            2,
            "is a git directory",
        ),
        (
            &["--workspace", &ws, "--model", &model, "  "],
            2,
            "prompt is empty",
        ),
        (
            &["--workspace", &missing_ws, "--model", &model, "hi"],
            2,
            "not a directory",
        ),
        (&["--workspace", &ws, "--model", "nosuch:x", "hi"], 2, "nosuch"),
        (
            &["--session", "../x", "--model", &model, "hi"],
            2,
            "not a valid session id",
        ),
        // An unknown session is not found, which is a usage error in every command.
        (&["--session", unknown, "--model", &model, "hi"], 2, unknown),
        // A missing file named on the command line is a usage error, in every command.
        (
            &["--workspace", &ws, "--model", "script:/no/such/script.json", "hi"],
            2,
            "/no/such/script.json",
        ),
    ];
    for (args, code, says) in cases {
        let mut all = vec!["exec", "--json"];
        all.extend_from_slice(args);
        let out = env.run(&all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        // On stdout one line: the result, `ok: false` with the error (SPEC §11).
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(stdout.lines().count(), 1, "{args:?}: {stdout}");
        let result: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(
            (&result["type"], &result["ok"]),
            (&json!("result"), &json!(false))
        );
        assert!(result["error"]["code"].is_string(), "{args:?}: {result}");
    }
    // None of them created a session.
    assert_eq!(env.json(&["sessions", "--workspace", &ws]), json!([]));
}

#[test]
fn an_error_message_says_its_cause_once() {
    let env = Env::new();
    let ws = env.ws.display().to_string();
    let out = env.run(&[
        "exec",
        "--workspace",
        &ws,
        "--model",
        "script:/no/such/script.json",
        "hi",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("No such file or directory").count(), 1, "{stderr}");
}
