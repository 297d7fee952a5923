//! Format-1 logs (SPEC §6) through the real binary: an old flat log (one `{role, content}` per line,
//! no header) with an old checkpoint sidecar. Where the sidecar records a turn's `msgIndex`, that is
//! where the turn starts; a write takes `--workspace`, else the current directory, as the workspace
//! of the new session it creates, and every result names that session; `retrace sessions` lists
//! the old logs of the data root with their workspace unknown.
//!
//! Every test has its own temp dir holding the workspace (`ws/`, the current directory of every
//! command unless a test says otherwise), the data root (`home/`, as `RETRACE_HOME`), an empty
//! config dir (`xdg/`), `other/` and the scripts.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};
use tempfile::TempDir;

/// An old flat log. The old version opened a checkpoint for the messages at 0 ("create the hello
/// file"), 4 ("edit the readme") and 9 ("update logo and notes") — the fixture sidecar's `msgIndex`
/// for turns 0, 1 and 2 — but not for the follow-ups at 2 and 8. Counted as user messages, turn 1
/// would be the follow-up at 2 and turn 2 "edit the readme".
const OLD_LOG: &[&str] = &[
    r#"{"role":"user","content":"create the hello file"}"#,
    r#"{"role":"assistant","content":"created hello.txt"}"#,
    r#"{"role":"user","content":"and mention it in the README"}"#,
    r#"{"role":"assistant","content":"mentioned"}"#,
    r#"{"role":"user","content":"edit the readme"}"#,
    r#"{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"edit_file","arguments":"{\"path\":\"README.md\"}"}}]}"#,
    r#"{"role":"tool","content":"ok","tool_call_id":"c1"}"#,
    r#"{"role":"assistant","content":"edited"}"#,
    r#"{"role":"user","content":"thanks"}"#,
    r#"{"role":"user","content":"update logo and notes"}"#,
    r#"{"role":"assistant","content":"updated"}"#,
];

/// The contents of the first `n` messages of [`OLD_LOG`], as a transcript shows them.
fn old_contents(n: usize) -> Vec<String> {
    OLD_LOG[..n]
        .iter()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["content"].as_str().unwrap_or("").to_string()
        })
        .collect()
}

/// One test's private world.
struct Env {
    tmp: TempDir,
    /// The canonical workspace root.
    ws: PathBuf,
}

impl Env {
    /// The old log `old` with the legacy fixture sidecar beside it.
    fn new() -> Env {
        let env = Env::bare();
        env.write_old_log();
        retrace_testkit::copy_dir(
            &retrace_testkit::fixture("legacy-sidecar/sidecar"),
            &env.sessions().join("old.ckpt"),
        )
        .unwrap();
        env
    }

    /// The directories only.
    fn bare() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        for d in ["ws", "home/sessions", "xdg", "other", "scripts"] {
            std::fs::create_dir_all(tmp.path().join(d)).unwrap();
        }
        let ws = std::fs::canonicalize(tmp.path().join("ws")).unwrap();
        Env { tmp, ws }
    }

    fn write_old_log(&self) {
        std::fs::write(self.old_log(), OLD_LOG.join("\n") + "\n").unwrap();
    }

    fn sessions(&self) -> PathBuf {
        self.tmp.path().join("home/sessions")
    }

    fn old_log(&self) -> PathBuf {
        self.sessions().join("old.jsonl")
    }

    fn other(&self) -> PathBuf {
        std::fs::canonicalize(self.tmp.path().join("other")).unwrap()
    }

    /// The ids of every session log in the data root.
    fn logs(&self) -> Vec<String> {
        let mut ids: Vec<String> = std::fs::read_dir(self.sessions())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter_map(|n| n.strip_suffix(".jsonl").map(str::to_string))
            .collect();
        ids.sort();
        ids
    }

    /// `retrace` run in `dir` with this test's environment.
    fn command_in(&self, dir: &Path) -> Command {
        let mut c = support::isolated_retrace(self.tmp.path());
        c.current_dir(dir);
        c
    }

    fn run_in(&self, dir: &Path, args: &[&str]) -> Output {
        self.command_in(dir).args(args).output().unwrap()
    }

    /// Runs `retrace ARGS` (split at spaces) from a current directory that was deleted.
    fn run_in_deleted_dir(&self, args: &str) -> Output {
        let gone = self.tmp.path().join("gone");
        let script = format!(
            "mkdir '{g}' && cd '{g}' && rmdir '{g}' && exec \"$0\" {args}",
            g = gone.display()
        );
        let c = support::isolated_retrace(self.tmp.path());
        let mut sh = Command::new("sh");
        sh.args(["-c", &script])
            .arg(c.get_program())
            .env_clear()
            .envs(c.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
            .env("PATH", std::env::var_os("PATH").unwrap_or_default());
        sh.output().unwrap()
    }

    /// Runs in the workspace.
    fn run(&self, args: &[&str]) -> Output {
        self.run_in(&self.ws, args)
    }

    /// Runs with `--json` in `dir`, expects exit 0 and exactly one JSON document on stdout.
    fn json_in(&self, dir: &Path, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.run_in(dir, &all);
        assert_eq!(
            out.status.code(),
            Some(0),
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
        self.json_in(&self.ws, args)
    }

    fn transcript(&self, id: &str) -> Vec<Value> {
        self.json(&["transcript", "--session", id])
            .as_array()
            .unwrap()
            .clone()
    }

    fn contents(&self, id: &str) -> Vec<String> {
        self.transcript(id)
            .iter()
            .map(|m| m["content"].as_str().unwrap().to_string())
            .collect()
    }

    /// The header (line 1) of a session's log.
    fn header(&self, id: &str) -> Value {
        let text = std::fs::read_to_string(self.sessions().join(format!("{id}.jsonl"))).unwrap();
        serde_json::from_str(text.lines().next().unwrap()).unwrap()
    }

    /// Writes a script model file (SPEC §11.2) and returns the `--model` value naming it.
    fn script(&self, name: &str, responses: Value) -> String {
        let path = self.tmp.path().join("scripts").join(name);
        std::fs::write(&path, json!({ "responses": responses }).to_string()).unwrap();
        format!("script:{}", path.display())
    }

    /// A checkpoint record `turn-N.json` in the old log's sidecar.
    fn record(&self, record: Value) {
        let dir = self.sessions().join("old.ckpt");
        std::fs::create_dir_all(&dir).unwrap();
        let n = record["turn"].as_u64().unwrap();
        std::fs::write(dir.join(format!("turn-{n}.json")), record.to_string()).unwrap();
    }
}

/// A session made by a write to `old`: a format-2 log whose header says where it came from and
/// which workspace it took.
fn assert_made_from_old(env: &Env, id: &str, messages: usize, workspace: &Path) {
    assert_ne!(id, "old");
    let h = env.header(id);
    assert_eq!(h["format"], 2, "{h}");
    assert_eq!(h["workspace"], workspace.to_str().unwrap(), "{h}");
    assert_eq!(
        h["forked_from"],
        json!({"session_id": "old", "format": 1, "messages": messages}),
        "{h}"
    );
}

/// The session a human-readable result says to use next.
fn next_session(stdout: &[u8]) -> String {
    let text = String::from_utf8_lossy(stdout);
    let line = text
        .lines()
        .find(|l| l.contains("is an old (format-1) log and stays as it was"))
        .unwrap_or_else(|| panic!("no word of the new session: {text}"));
    line.rsplit("use --session ")
        .next()
        .unwrap()
        .trim_end_matches(" from now on")
        .to_string()
}

// ---------------------------------------------------------------------------------------------
// 1. The sidecar's msgIndex decides where a turn starts.

#[test]
fn a_recorded_msg_index_decides_where_the_turn_starts_and_what_a_rewind_keeps() {
    let env = Env::new();
    let before = std::fs::read(env.old_log()).unwrap();

    // Turns 0, 1 and 2 start where the sidecar says; the follow-ups open no turn.
    let t = env.transcript("old");
    let turns: Vec<(usize, u64)> = t
        .iter()
        .enumerate()
        .filter_map(|(i, m)| m["turn"].as_u64().map(|n| (i, n)))
        .collect();
    assert_eq!(turns, [(0, 0), (4, 1), (9, 2)]);
    // The checkpoint list agrees: 0–2 are on the conversation, the others (their messages were
    // never logged) are code restore only.
    let cps = env.json(&["checkpoints", "--session", "old"]);
    let visible: Vec<(u64, bool)> = cps
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["turn"].as_u64().unwrap(), c["visible"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        visible,
        [
            (0, true),
            (1, true),
            (2, true),
            (3, false),
            (4, false),
            (6, false)
        ]
    );
    let sessions = env.json(&["sessions"]);
    assert_eq!(sessions[0]["turns"], 3, "{sessions}");

    // A conversation rewind to before turn 1 keeps exactly the 4 messages before "edit the readme".
    let r = env.json(&[
        "rewind",
        "--session",
        "old",
        "--turn",
        "1",
        "--scope",
        "conversation",
    ]);
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["conversation_forked"], true, "{r}");
    assert_eq!(r["prompt"], "edit the readme", "{r}");
    let new = r["session_id"].as_str().unwrap().to_string();
    assert_made_from_old(&env, &new, 4, &env.ws);
    assert_eq!(env.contents(&new), old_contents(4));
    // The kept turn keeps its number and place.
    let t = env.transcript(&new);
    assert_eq!(t[0]["turn"], 0);
    assert!(t[1..].iter().all(|m| m.get("turn").is_none()), "{t:?}");

    // And to turn 2: the 9 messages before "update logo and notes", the follow-up "thanks" too.
    let r = env.json(&[
        "rewind",
        "--session",
        "old",
        "--turn",
        "2",
        "--scope",
        "conversation",
    ]);
    let new2 = r["session_id"].as_str().unwrap().to_string();
    assert_ne!(new2, new);
    assert_made_from_old(&env, &new2, 9, &env.ws);
    assert_eq!(env.contents(&new2), old_contents(9));
    assert_eq!(
        std::fs::read(env.old_log()).unwrap(),
        before,
        "the old log is untouched"
    );
}

#[test]
fn without_a_recorded_msg_index_turns_are_counted_as_user_messages() {
    // No sidecar at all: turn N is the N-th user message.
    let env = Env::bare();
    env.write_old_log();
    let t = env.transcript("old");
    let turns: Vec<usize> = t
        .iter()
        .enumerate()
        .filter(|(_, m)| m.get("turn").is_some())
        .map(|(i, _)| i)
        .collect();
    assert_eq!(turns, [0, 2, 4, 8, 9]);
    let r = env.json(&[
        "rewind",
        "--session",
        "old",
        "--turn",
        "1",
        "--scope",
        "conversation",
    ]);
    let new = r["session_id"].as_str().unwrap();
    assert_eq!(env.contents(new), old_contents(2));

    // Turn 0 recorded without `msgIndex` (a v1 record may lack it), turn 1 recorded at 4: turn 0
    // is counted, turn 1 is where recorded, and turn 2, never recorded, is the first user
    // message after turn 1's ("thanks").
    let env = Env::bare();
    env.write_old_log();
    env.record(
        json!({"turn": 0, "time": "2026-01-05T10:00:00Z", "prompt": "create the hello file",
        "files": []}),
    );
    env.record(
        json!({"turn": 1, "time": "2026-01-05T10:05:00Z", "prompt": "edit the readme",
        "msgIndex": 4, "files": []}),
    );
    let t = env.transcript("old");
    let turns: Vec<(usize, u64)> = t
        .iter()
        .enumerate()
        .filter_map(|(i, m)| m["turn"].as_u64().map(|n| (i, n)))
        .collect();
    assert_eq!(turns, [(0, 0), (4, 1), (8, 2), (9, 3)]);

    // A recorded index that does not fit this log (past its end, or not a user message) is not
    // used: counting takes over.
    let env = Env::bare();
    env.write_old_log();
    env.record(
        json!({"turn": 1, "time": "2026-01-05T10:05:00Z", "prompt": "edit the readme",
        "msgIndex": 5, "files": []}),
    );
    env.record(
        json!({"turn": 2, "time": "2026-01-05T10:06:00Z", "prompt": "gone",
        "msgIndex": 400, "files": []}),
    );
    let t = env.transcript("old");
    assert_eq!(t[2]["turn"], 1, "{t:?}");
    assert_eq!(t[4]["turn"], 2, "{t:?}");
}

// ---------------------------------------------------------------------------------------------
// 2. The workspace of a write: --workspace, else the current directory.

#[test]
fn a_write_without_workspace_takes_the_current_directory() {
    let env = Env::bare();
    env.write_old_log();
    // A v1 record of turn 1: hello.txt held "hello\n" before it.
    env.record(
        json!({"turn": 1, "time": "2026-01-05T10:05:00Z", "prompt": "edit the readme",
        "msgIndex": 4, "files": [{"path": "hello.txt", "content": "hello\n"}]}),
    );
    std::fs::write(env.ws.join("hello.txt"), "hello, changed\n").unwrap();

    // A code rewind run in the workspace restores there (v1 records prove nothing: confirmed,
    // overwritten) and its note for the model went to a new session of this workspace.
    let r = env.json(&[
        "rewind",
        "--session",
        "old",
        "--turn",
        "1",
        "--scope",
        "code",
        "--yes",
        "--on-conflict",
        "overwrite",
    ]);
    assert_eq!(r["files_written"], json!(["hello.txt"]), "{r}");
    assert_eq!(
        std::fs::read_to_string(env.ws.join("hello.txt")).unwrap(),
        "hello\n"
    );
    let new = r["session_id"].as_str().unwrap().to_string();
    assert_made_from_old(&env, &new, OLD_LOG.len(), &env.ws);
    // The new session knows its workspace: it opens from anywhere, with no --workspace.
    let f = env.json_in(&env.other(), &["fork", "--session", &new, "--turn", "1"]);
    assert_eq!(f["session_id"], new.as_str());

    // --workspace wins over the current directory.
    let other = env.other();
    let f = env.json_in(
        &env.sessions(),
        &[
            "fork",
            "--session",
            "old",
            "--turn",
            "1",
            "--workspace",
            other.to_str().unwrap(),
        ],
    );
    assert_made_from_old(&env, f["session_id"].as_str().unwrap(), 4, &other);
}

#[test]
fn a_write_with_no_usable_workspace_is_a_usage_error_that_says_what_to_do() {
    let env = Env::new();
    let before = std::fs::read(env.old_log()).unwrap();
    let logs = env.logs();
    let check = |out: Output, why: &str| {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(out.stdout.is_empty());
        for words in ["session old is an old (format-1) log", why, "--workspace DIR"] {
            assert!(stderr.contains(words), "`{words}` in: {stderr}");
        }
        assert!(!stderr.contains("SessionOptions"), "{stderr}");
        assert_eq!(env.logs(), logs, "no session was made");
        assert_eq!(std::fs::read(env.old_log()).unwrap(), before);
    };

    // Run from the sessions directory itself (where the user found the log): a code restore would
    // write among the sessions, so it is no workspace.
    let sessions = env.sessions();
    for args in [
        &["fork", "--session", "old", "--turn", "1"][..],
        &[
            "rewind",
            "--session",
            "old",
            "--turn",
            "1",
            "--scope",
            "conversation",
        ],
        &["exec", "--session", "old", "--model", "demo", "hi"],
    ] {
        check(env.run_in(&sessions, args), "inside Retrace's data directory");
    }
    // The same when it is named.
    check(
        env.run(&[
            "fork",
            "--session",
            "old",
            "--turn",
            "1",
            "--workspace",
            env.tmp.path().join("home").to_str().unwrap(),
        ]),
        "inside Retrace's data directory",
    );

    // A current directory that was deleted.
    check(
        env.run_in_deleted_dir("fork --session old --turn 1"),
        "the current directory cannot be read",
    );

    // A session that records its workspace needs no current directory.
    let r = env.json(&["fork", "--session", "old", "--turn", "1"]);
    let new = r["session_id"].as_str().unwrap().to_string();
    let out = env.run_in_deleted_dir(&format!("fork --session {new} --turn 0 --json"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---------------------------------------------------------------------------------------------
// 3. Every result of a write names the session that holds it.

#[test]
fn every_write_to_an_old_log_names_the_new_session_that_holds_it() {
    let env = Env::new();
    let before = std::fs::read(env.old_log()).unwrap();
    let rewind = |scope: &str| {
        env.json(&[
            "rewind",
            "--session",
            "old",
            "--turn",
            "1",
            "--scope",
            scope,
            "--yes",
            "--on-conflict",
            "overwrite",
        ])
    };

    // Code: the conversation stays whole, plus the note for the model.
    let r = rewind("code");
    let id = r["session_id"].as_str().unwrap();
    assert_made_from_old(&env, id, OLD_LOG.len(), &env.ws);
    let t = env.transcript(id);
    assert_eq!(t.len(), OLD_LOG.len() + 1);
    assert_eq!(t.last().unwrap()["role"], "system");
    // A code rewind whose files are all as the plan wants writes nothing: nothing to hold, no
    // new session.
    let logs = env.logs();
    let r = rewind("code");
    assert_eq!(r["transaction_id"], Value::Null, "{r}");
    assert_eq!(r["session_id"], "old", "{r}");
    assert_eq!(env.logs(), logs);

    // Conversation and both: the new session holds the 4 messages before turn 1.
    for scope in ["conversation", "both"] {
        let r = rewind(scope);
        assert_eq!(r["ok"], true, "{scope}: {r}");
        let id = r["session_id"].as_str().unwrap();
        assert_made_from_old(&env, id, 4, &env.ws);
        assert_eq!(env.contents(id), old_contents(4), "{scope}");
        assert_eq!(
            r["head_id"], "main",
            "{scope}: the new session's main is the rewound head"
        );
    }
    // Fork: `{head_id, session_id}` (SPEC §11).
    let f = env.json(&["fork", "--session", "old", "--turn", "2", "--name", "retry"]);
    assert_eq!(f.as_object().unwrap().len(), 2, "{f}");
    let id = f["session_id"].as_str().unwrap();
    assert_made_from_old(&env, id, 9, &env.ws);
    assert_eq!(f["head_id"], "main");

    // Summarize (a script model writes the summary): the summary head is in the new session.
    let model = env.script("summary.json", json!([{"content": "SUMMARY OF TURN 0"}]));
    let s = env.json(&[
        "summarize",
        "--session",
        "old",
        "--turn",
        "1",
        "--up-to",
        "--model",
        &model,
    ]);
    assert_eq!(s.as_object().unwrap().len(), 2, "{s}");
    let id = s["session_id"].as_str().unwrap();
    assert_made_from_old(&env, id, OLD_LOG.len(), &env.ws);
    let mut want = vec!["SUMMARY OF TURN 0".to_string()];
    want.extend(old_contents(OLD_LOG.len()).split_off(4));
    assert_eq!(env.contents(id), want);
    assert_ne!(s["head_id"], "main");

    // A turn: the result line names the new session. Its number goes on from the turns of the
    // conversation (0–2); the new session has a sidecar of its own.
    let model = env.script("turn.json", json!([{"content": "hello again"}]));
    let out = env.run(&["exec", "--session", "old", "--json", "--model", &model, "next"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["turn"], 3, "{result}");
    let id = result["session_id"].as_str().unwrap();
    assert_made_from_old(&env, id, OLD_LOG.len(), &env.ws);
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("use --session {id}")));

    // Switch: selecting `main`, the old log's only head, writes nothing: it stays the session.
    let logs = env.logs();
    let s = env.json(&["switch", "--session", "old", "main"]);
    assert_eq!(s, json!({"head_id": "main", "session_id": "old"}));
    assert_eq!(env.logs(), logs);

    assert_eq!(
        std::fs::read(env.old_log()).unwrap(),
        before,
        "the old log is untouched"
    );
}

#[test]
fn human_output_says_which_session_to_use_next() {
    let env = Env::new();
    let out = env.run(&[
        "rewind",
        "--session",
        "old",
        "--turn",
        "1",
        "--scope",
        "conversation",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = next_session(&out.stdout);
    assert_made_from_old(&env, &id, 4, &env.ws);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("(workspace {})", env.ws.display())),
        "{text}"
    );

    let out = env.run(&["fork", "--session", "old", "--turn", "2"]);
    assert_eq!(out.status.code(), Some(0));
    let id = next_session(&out.stdout);
    assert_made_from_old(&env, &id, 9, &env.ws);
    // Used as told, it is an ordinary session: nothing more is said.
    let out = env.run(&["fork", "--session", &id, "--turn", "1"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("format-1"));

    let model = env.script("summary.json", json!([{"content": "S"}]));
    let out = env.run(&[
        "summarize",
        "--session",
        "old",
        "--turn",
        "1",
        "--from",
        "--model",
        &model,
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_made_from_old(&env, &next_session(&out.stdout), OLD_LOG.len(), &env.ws);
}

// ---------------------------------------------------------------------------------------------
// 4. `retrace sessions` lists the old logs, workspace unknown.

#[test]
fn sessions_lists_old_logs_for_every_workspace_after_its_own_sessions() {
    let env = Env::new();
    // Another old log.
    std::fs::write(
        env.sessions().join("older.jsonl"),
        "{\"role\":\"user\",\"content\":\"hi\"}\n",
    )
    .unwrap();

    // Only old logs: listed, with `format: 1` and no workspace.
    let list = env.json(&["sessions"]);
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["old", "older"]);
    let old = &list[0];
    assert_eq!(old["format"], 1);
    assert_eq!(old["workspace"], Value::Null);
    assert_eq!(old["created_at"], Value::Null);
    assert_eq!(old["heads"], 1);
    assert_eq!(old["turns"], 3);
    assert_eq!(old["log_path"], env.old_log().to_str().unwrap());
    let out = env.run(&["sessions"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("no sessions for"), "{text}");
    assert!(
        text.contains("old  (workspace unknown)  3 turns, 1 head"),
        "{text}"
    );

    // `exec --continue` never takes an old log for this workspace's latest session.
    let out = env.run(&["exec", "-c", "--model", "demo", "go on"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(env.logs(), ["old", "older"]);

    // A session of this workspace (made from the old log) and one of `other`.
    let mine = env.json(&["fork", "--session", "old", "--turn", "1"])["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let other = env.other();
    let theirs = env.json_in(&other, &["fork", "--session", "old", "--turn", "2"])["session_id"]
        .as_str()
        .unwrap()
        .to_string();

    for (dir, own) in [(&env.ws, &mine), (&other, &theirs)] {
        let list = env.json_in(dir, &["sessions"]);
        let got: Vec<(&str, &Value, &Value)> = list
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["id"].as_str().unwrap(), &s["format"], &s["workspace"]))
            .collect();
        assert_eq!(
            got,
            [
                (own.as_str(), &json!(2), &json!(dir.to_str().unwrap())),
                ("old", &json!(1), &Value::Null),
                ("older", &json!(1), &Value::Null),
            ],
            "{list}"
        );
        let out = env.run_in(dir, &["sessions"]);
        let text = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(lines[0].starts_with(own.as_str()), "{text}");
        assert!(
            lines[1].contains("old (format-1) logs, which record no workspace"),
            "{text}"
        );
        assert!(lines[2].starts_with("old  (workspace unknown)"), "{text}");
        assert!(lines[3].starts_with("older  (workspace unknown)"), "{text}");
    }
    // `--continue` now finds this workspace's own session.
    let out = env.run(&["exec", "-c", "--json", "--model", "demo", "go on"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let result: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(result["session_id"], mine.as_str());
}

/// An old log belongs to no workspace we know of: a prune of one workspace keeps it, a prune of
/// every workspace (`--all`) or a delete by id removes it with its old sidecar.
#[test]
fn old_logs_are_pruned_only_with_all_and_deleted_by_id() {
    let env = Env::new();
    let old = std::fs::File::options().write(true).open(env.old_log()).unwrap();
    old.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(90 * 86_400))
        .unwrap();
    let kept = env.json(&["sessions", "prune", "--older-than", "30d"]);
    assert_eq!(kept["removed"], json!([]));
    assert!(env.old_log().exists());
    let dry = env.json(&["sessions", "prune", "--older-than", "30d", "--all", "--dry-run"]);
    assert_eq!(dry["removed"][0]["id"], "old");
    assert_eq!(dry["removed"][0]["workspace"], Value::Null);
    assert!(env.old_log().exists());
    let gone = env.json(&["sessions", "delete", "old"]);
    assert_eq!(gone["id"], "old");
    assert!(!env.old_log().exists());
    assert!(!env.sessions().join("old.ckpt").exists());
}

/// Found by attack: an old log whose history holds a `tool` message that answers no call was sent
/// as it is, and strict servers refuse such a history on every turn. It is left out of requests.
#[test]
fn a_tool_result_that_answers_no_call_is_not_sent() {
    use retrace_testkit::mock_openai::{sse, MockServer, Reply};
    let env = Env::bare();
    std::fs::write(
        env.old_log(),
        [
            r#"{"role":"tool","content":"stray","tool_call_id":"zz"}"#,
            r#"{"role":"user","content":"hello"}"#,
            r#"{"role":"assistant","content":"hi"}"#,
        ]
        .join("\n")
            + "\n",
    )
    .unwrap();
    let rt = support::mock_runtime();
    let reply = Reply::body(sse::body(&[sse::content("ok"), sse::finish("stop")], true));
    let server = rt
        .block_on(MockServer::start_strict_with_key("k", vec![reply]))
        .unwrap();
    let out = env
        .command_in(&env.ws)
        .env("OPENAI_API_KEY", "k")
        .args([
            "exec",
            "--json",
            "--session",
            "old",
            "--model",
            "openai:m",
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
    assert_eq!(server.rejected(), 0);
    let sent = server.requests()[0].json();
    let roles: Vec<&str> = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
}

/// Found by attack: a restore of an old log's files said `undo_available: false`, yet `undo` on
/// the old id worked, and made yet another session. Now the result says it can be undone (through
/// the old id, which keeps the transaction), and the undo brings the files back without writing
/// to any log.
#[test]
fn a_restore_of_an_old_logs_files_is_undone_through_the_old_id() {
    let env = Env::new();
    let old_bytes = std::fs::read(env.old_log()).unwrap();
    let r = env.json(&[
        "rewind",
        "--session",
        "old",
        "--turn",
        "1",
        "--scope",
        "code",
        "--yes",
        "--on-conflict",
        "overwrite",
    ]);
    assert_eq!(r["undo_available"], true, "{r}");
    let written: Vec<String> = r["files_written"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    assert!(!written.is_empty(), "{r}");
    assert!(written.iter().all(|f| env.ws.join(f).exists()));
    let logs = env.logs();
    assert_eq!(logs.len(), 2, "{logs:?}");

    let u = env.json(&["undo", "--session", "old"]);
    assert_eq!(u["ok"], true, "{u}");
    assert_eq!(u["session_id"], "old", "the undo wrote to no log: {u}");
    assert!(written.iter().all(|f| !env.ws.join(f).exists()), "{u}");
    assert_eq!(env.logs(), logs, "no further session");
    assert_eq!(std::fs::read(env.old_log()).unwrap(), old_bytes);
}
