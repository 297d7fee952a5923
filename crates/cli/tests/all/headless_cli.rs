//! The headless contract of SPEC §11 that every command shares (issue 25): with `--json` every
//! failure is one JSON document on stdout (`exec`: a last `result` line) with the exit code it has
//! without `--json`; `-c` and unambiguous id prefixes on every command that takes `--session`; an
//! unknown session pointing to `retrace sessions`; OpenAI model names without a provider; a huge or
//! endless prompt read in bounded memory; `--help` listing the exit codes.
//!
//! Each test has its own temp dir holding two workspaces (`ws/`, `other/`), the data root (`home/`)
//! and the script model files; commands run in the temp dir unless a test says otherwise.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};
use tempfile::TempDir;

struct Env {
    tmp: TempDir,
    ws: PathBuf,
    other: PathBuf,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        for d in ["ws/sub", "other", "home", "xdg", "scripts"] {
            std::fs::create_dir_all(tmp.path().join(d)).unwrap();
        }
        let ws = std::fs::canonicalize(tmp.path().join("ws")).unwrap();
        let other = std::fs::canonicalize(tmp.path().join("other")).unwrap();
        Env { tmp, ws, other }
    }

    fn command(&self, dir: &Path) -> Command {
        let mut c = support::isolated_retrace(self.tmp.path());
        c.current_dir(dir);
        c
    }

    fn run_in(&self, dir: &Path, args: &[&str]) -> Output {
        self.command(dir).args(args).output().unwrap()
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_in(self.tmp.path(), args)
    }

    /// A command that must succeed; its stdout as one JSON document.
    fn json_in(&self, dir: &Path, args: &[&str]) -> Value {
        let out = self.run_in(dir, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", text(&out.stdout)))
    }

    fn script(&self, name: &str, responses: Value) -> String {
        let path = self.tmp.path().join("scripts").join(format!("{name}.json"));
        std::fs::write(&path, json!({ "responses": responses }).to_string()).unwrap();
        format!("script:{}", path.display())
    }

    /// One `exec --json` turn in `dir` that must finish; every stdout line is JSON. Returns the
    /// lines.
    fn exec_in(&self, dir: &Path, args: &[&str], responses: Value) -> Vec<Value> {
        let model = self.script(&format!("exec-{}", rand_name()), responses);
        let mut all = vec!["exec", "--json", "--model", &model];
        all.extend_from_slice(args);
        let out = self.run_in(dir, &all);
        assert_eq!(out.status.code(), Some(0), "exec {args:?}: {}", text(&out.stderr));
        let lines: Vec<Value> = text(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        assert_eq!(lines.last().unwrap()["type"], "result");
        lines
    }

    /// A session of `ws` whose turn 0 writes `a.txt` and turn 1 `b.txt`, and a session of
    /// `other`; returns the first one's id.
    fn two_sessions(&self) -> String {
        let r = self.exec_in(&self.ws, &["write a"], writes("a.txt", "one\n"));
        let id = r.last().unwrap()["session_id"].as_str().unwrap().to_string();
        self.exec_in(&self.ws, &["--session", &id, "write b"], writes("b.txt", "two\n"));
        self.exec_in(&self.other, &["write c"], writes("c.txt", "three\n"));
        id
    }

    fn ids(&self) -> Vec<String> {
        let mut all = Vec::new();
        for dir in [&self.ws, &self.other] {
            let list = self.json_in(dir, &["sessions", "--json"]);
            all.extend(
                list.as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s["id"].as_str().unwrap().to_string()),
            );
        }
        all
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn rand_name() -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    format!(
        "{}",
        SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos()
    )
}

/// A script whose one step writes `path`, then ends the turn.
fn writes(path: &str, content: &str) -> Value {
    json!([
        {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]},
        {"content": "done"}
    ])
}

/// The shortest prefix of `id` that no other of `all` starts with.
fn unique_prefix(id: &str, all: &[String]) -> String {
    (1..=id.len())
        .map(|n| &id[..n])
        .find(|p| all.iter().filter(|o| o.starts_with(p)).count() == 1)
        .unwrap()
        .to_string()
}

/// The longest prefix two ids share (never empty: ids start with their time).
fn common_prefix(a: &str, b: &str) -> String {
    a.chars()
        .zip(b.chars())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect()
}

/// Every command, with `--json`, in a failing way: stdout is exactly one JSON document with
/// `ok: false` and `error: {code, message}` (`exec`: JSON Lines whose last line is the `result`),
/// and the exit code is the one the same command has without `--json`.
#[test]
fn every_failure_is_one_json_document_with_the_exit_code_it_has_without_json() {
    let env = Env::new();
    let id = env.two_sessions();
    let all = env.ids();
    let other_id = all.iter().find(|o| **o != id).unwrap().clone();
    let ambiguous = common_prefix(&id, &other_id);
    // A hand edit of what turn 0 wrote: a code rewind over it is refused (a conflict).
    std::fs::write(env.ws.join("a.txt"), "mine\n").unwrap();
    let ws = env.ws.display().to_string();
    let missing_dir = env.tmp.path().join("nowhere").display().to_string();
    let missing_sidecar = env.tmp.path().join("nowhere.ckpt").display().to_string();
    let s: &str = &id;
    // (arguments without --json, exit code, error code)
    let table: Vec<(Vec<&str>, i32, &str)> = vec![
        (vec!["exec", "--session", "nope", "hi"], 2, "not_found"),
        (vec!["exec", "--model", "gpt-4o", "hi"], 2, "usage"),
        (vec!["exec", "--no-such-flag", "hi"], 2, "usage"),
        (vec!["exec", "-c", "--workspace", &missing_dir, "hi"], 2, "usage"),
        (vec!["sessions", "--workspace", &missing_dir], 2, "usage"),
        (vec!["sessions", "delete", "nope"], 2, "not_found"),
        (vec!["sessions", "prune", "--older-than", "soon"], 2, "usage"),
        (vec!["transcript", "--session", "nope"], 2, "not_found"),
        (
            vec!["transcript", "--session", s, "--head", "h-none"],
            2,
            "not_found",
        ),
        (vec!["transcript"], 2, "usage"),
        (vec!["checkpoints", "--session", "nope"], 2, "not_found"),
        (vec!["checkpoints", "--sidecar", &missing_sidecar], 2, "usage"),
        (vec!["fsck", "--session", "nope"], 2, "not_found"),
        (
            vec!["rewind", "--session", "nope", "--turn", "1", "--scope", "code"],
            2,
            "not_found",
        ),
        (
            vec!["rewind", "--session", s, "--turn", "9", "--scope", "code"],
            2,
            "not_found",
        ),
        (vec!["rewind", "--session", s, "--turn", "1"], 2, "usage"),
        (
            vec![
                "rewind",
                "--session",
                &ambiguous,
                "--turn",
                "1",
                "--scope",
                "code",
            ],
            2,
            "usage",
        ),
        (
            vec![
                "rewind",
                "--session",
                s,
                "--workspace",
                &ws,
                "--turn",
                "0",
                "--scope",
                "code",
            ],
            3,
            "conflict",
        ),
        (vec!["undo", "--session", s], 3, "refused"),
        (vec!["undo", "--session", "nope"], 2, "not_found"),
        (vec!["redo", "--session", s], 3, "refused"),
        (vec!["redo", "--session", "nope"], 2, "not_found"),
        (vec!["revert", "--session", s, "never.txt"], 2, "not_found"),
        (vec!["fork", "--session", s, "--turn", "9"], 2, "not_found"),
        (
            vec![
                "summarize",
                "--session",
                s,
                "--turn",
                "9",
                "--from",
                "--model",
                "demo",
            ],
            2,
            "not_found",
        ),
        (
            vec!["compact", "--session", "nope", "--model", "demo"],
            2,
            "not_found",
        ),
        (vec!["heads", "--session", "nope"], 2, "not_found"),
        (vec!["switch", "--session", s, "h-none"], 2, "not_found"),
        (vec!["config", "--model", "gpt-4o"], 2, "usage"),
    ];
    for (args, exit, code) in &table {
        let plain = env.run(args);
        assert_eq!(
            plain.status.code(),
            Some(*exit),
            "{args:?} without --json: {}",
            text(&plain.stderr)
        );
        let mut with_json = args.clone();
        with_json.push("--json");
        let out = env.run(&with_json);
        let stdout = text(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(*exit),
            "{with_json:?}: {}",
            text(&out.stderr)
        );
        assert!(text(&out.stderr).contains("retrace: error:") || text(&out.stderr).contains("error:"));
        let doc: Value = if args[0] == "exec" {
            let lines: Vec<Value> = stdout
                .lines()
                .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{with_json:?}: {e}: {l}")))
                .collect();
            let last = lines
                .last()
                .unwrap_or_else(|| panic!("{with_json:?}: no result line"))
                .clone();
            assert_eq!(last["type"], "result", "{with_json:?}: {stdout}");
            last
        } else {
            serde_json::from_str(&stdout)
                .unwrap_or_else(|e| panic!("{with_json:?}: stdout is not one JSON document ({e}): {stdout}"))
        };
        assert_eq!(doc["ok"], false, "{with_json:?}: {doc}");
        assert_eq!(doc["error"]["code"], *code, "{with_json:?}: {doc}");
        assert!(
            !doc["error"]["message"].as_str().unwrap_or("").is_empty(),
            "{with_json:?}: {doc}"
        );
    }
    // A refused plan is the plan itself, with `ok: false` and the error (and its details).
    let out = env.run(&[
        "rewind",
        "--session",
        s,
        "--turn",
        "0",
        "--scope",
        "code",
        "--json",
    ]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["plan_id"].is_string() && doc["files"].is_array(), "{doc}");
    assert_eq!(doc["error"]["code"], "conflict");
    assert_eq!(doc["error"]["details"]["kind"], "conflicts", "{doc}");
    // An unknown session points to `retrace sessions`, not to a file of the data root.
    let msg = doc_message(&env.run(&["heads", "--session", "nope", "--json"]));
    assert!(
        msg.contains("retrace sessions") && !msg.contains("home/sessions"),
        "{msg}"
    );
}

fn doc_message(out: &Output) -> String {
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["error"]["message"].as_str().unwrap().to_string()
}

/// `-c` (from the workspace or any directory under it) and an unambiguous id prefix name the same
/// session as its whole id, on every command that takes `--session`.
#[test]
fn continue_and_id_prefixes_work_on_every_session_command() {
    let env = Env::new();
    let id = env.two_sessions();
    let all = env.ids();
    let prefix = unique_prefix(&id, &all);
    assert!(prefix.len() < id.len());
    let sub = env.ws.join("sub");
    let script = env.script(
        "summary",
        json!([{"content": "a summary"}, {"content": "a summary"}]),
    );

    // The reading commands: the same document by whole id, prefix, and -c (from a subdirectory).
    for cmd in [
        vec!["heads"],
        vec!["transcript"],
        vec!["checkpoints"],
        vec!["fsck"],
        vec!["rewind", "--turn", "1", "--scope", "code", "--dry-run"],
    ] {
        let with = |sel: &[&str], dir: &Path| {
            let mut args = cmd.clone();
            args.extend_from_slice(sel);
            args.push("--json");
            let mut v = env.json_in(dir, &args);
            // A plan's id and expiry are new each time.
            if let Some(o) = v.as_object_mut() {
                o.remove("plan_id");
                o.remove("expires_at");
            }
            v
        };
        let whole = with(&["--session", &id], env.tmp.path());
        assert_eq!(
            with(&["--session", &prefix], env.tmp.path()),
            whole,
            "{cmd:?} by prefix"
        );
        assert_eq!(with(&["-c"], &sub), whole, "{cmd:?} -c from a subdirectory");
        assert_eq!(with(&["--continue"], &env.ws), whole, "{cmd:?} --continue");
        let ws = env.ws.display().to_string();
        assert_eq!(
            with(&["-c", "--workspace", &ws], env.tmp.path()),
            whole,
            "{cmd:?} -c --workspace"
        );
    }

    // The writing commands, each by prefix or -c.
    let p = prefix.as_str();
    let r = env.json_in(
        &sub,
        &["rewind", "-c", "--turn", "1", "--scope", "code", "--json"],
    );
    assert_eq!(r["session_id"], id.as_str());
    assert!(!env.ws.join("b.txt").exists());
    let u = env.json_in(env.tmp.path(), &["undo", "--session", p, "--json"]);
    assert_eq!(u["session_id"], id.as_str());
    assert!(env.ws.join("b.txt").exists());
    let r = env.json_in(env.tmp.path(), &["revert", "--session", p, "b.txt", "--json"]);
    assert_eq!(r["session_id"], id.as_str());
    assert!(!env.ws.join("b.txt").exists());
    env.json_in(&env.ws, &["undo", "-c", "--json"]);
    let f = env.json_in(
        &env.ws,
        &["fork", "-c", "--turn", "1", "--name", "early", "--json"],
    );
    assert_eq!(f["session_id"], id.as_str());
    let s = env.json_in(env.tmp.path(), &["switch", "--session", p, "main", "--json"]);
    assert_eq!(s["head_id"], "main");
    let sm = env.json_in(
        &sub,
        &[
            "summarize",
            "-c",
            "--turn",
            "1",
            "--up-to",
            "--model",
            &script,
            "--json",
        ],
    );
    assert_eq!(sm["session_id"], id.as_str());
    env.json_in(env.tmp.path(), &["switch", "--session", p, "main", "--json"]);
    let c = env.json_in(
        env.tmp.path(),
        &["compact", "--session", p, "--model", &script, "--json"],
    );
    assert_eq!(c["session_id"], id.as_str());
    let heads = env.json_in(env.tmp.path(), &["heads", "--session", &id, "--json"]);
    assert_eq!(
        heads.as_array().unwrap().len(),
        4,
        "main, the fork, the summary, the compaction: {heads}"
    );

    // exec: a prefix continues the session; -c continues the latest of the directory's workspace.
    let r = env.exec_in(
        env.tmp.path(),
        &["--session", p, "write d"],
        writes("d.txt", "4\n"),
    );
    assert_eq!(r.last().unwrap()["session_id"], id.as_str());
    let r = env.exec_in(&sub, &["-c", "write e"], writes("e.txt", "5\n"));
    assert_eq!(r.last().unwrap()["session_id"], id.as_str());
    assert!(env.ws.join("d.txt").exists() && env.ws.join("e.txt").exists());

    // A --workspace that is not the session's own is a usage error, for readers too.
    let other = env.other.display().to_string();
    for cmd in [
        vec!["heads"],
        vec!["rewind", "--turn", "1", "--scope", "code", "--dry-run"],
    ] {
        let mut args = cmd.clone();
        args.extend(["--session", p, "--workspace", &other]);
        let out = env.run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
    }
}

/// An ambiguous prefix is a usage error naming every candidate; -c where the workspace has no
/// session, and neither --session nor -c, are usage errors too.
#[test]
fn an_ambiguous_prefix_lists_the_candidates() {
    let env = Env::new();
    let id = env.two_sessions();
    let all = env.ids();
    let other_id = all.iter().find(|o| **o != id).unwrap().clone();
    let shared = common_prefix(&id, &other_id);
    let out = env.run(&["heads", "--session", &shared]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("ambiguous"), "{err}");
    for candidate in all.iter().filter(|c| c.starts_with(&shared)) {
        assert!(err.contains(candidate.as_str()), "{candidate} named: {err}");
    }
    // Deleting is no exception: nothing is deleted on an ambiguous prefix.
    let out = env.run(&["sessions", "delete", &shared]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(env.ids().len(), all.len());
    let other_prefix = unique_prefix(&other_id, &all);
    let gone = env.json_in(env.tmp.path(), &["sessions", "delete", &other_prefix, "--json"]);
    assert_eq!(gone["id"], other_id.as_str());
    assert_eq!(env.ids(), vec![id.clone()]);
    let empty = env.tmp.path().join("ws-none");
    std::fs::create_dir(&empty).unwrap();
    let out = env.run_in(&empty, &["heads", "-c"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let out = env.run(&["undo"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("-c"), "{}", text(&out.stderr));
}

/// `--model gpt-4o` is not silently a DeepSeek model: the error suggests `openai:gpt-4o`. A model
/// that cannot be used lists the choices once.
#[test]
fn an_openai_name_without_a_provider_suggests_openai() {
    let env = Env::new();
    for name in ["gpt-4o", "o3-mini", "chatgpt-4o-latest"] {
        let out = env.run_in(&env.ws, &["exec", "--model", name, "hi"]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = text(&out.stderr);
        assert!(err.contains(&format!("did you mean openai:{name}?")), "{err}");
    }
    // Nothing was created for the refused runs.
    assert!(env.ids().is_empty());
    let out = env.run_in(&env.ws, &["exec", "--model", "deepseek:deepseek-chat", "hi"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert_eq!(err.matches("script:FILE").count(), 1, "the choices once: {err}");
}

/// A prompt from `/dev/zero` (a file, or standard input) stops at the 4 MiB limit plus one byte:
/// the usual clear usage error, in bounded memory (the peak resident size as `/usr/bin/time`
/// measures it; without it, an address-space limit the old behaviour would break).
#[test]
fn an_endless_prompt_is_refused_in_bounded_memory() {
    let env = Env::new();
    let time = Path::new("/usr/bin/time");
    let exe = env!("CARGO_BIN_EXE_retrace");
    for (name, args, stdin) in [
        ("file", vec!["exec", "--prompt-file", "/dev/zero"], false),
        ("stdin", vec!["exec", "-"], true),
    ] {
        let peak = env.tmp.path().join(format!("peak-{name}"));
        // 1 GiB of address space at most: the old code read everything, and fails here at once.
        let mut script = String::from("ulimit -v 1048576; exec ");
        if time.exists() {
            script.push_str(&format!("{} -f %M -o {} ", time.display(), peak.display()));
        }
        script.push_str("\"$@\"");
        let mut c = Command::new("/bin/sh");
        c.current_dir(&env.ws)
            .env_clear()
            .env("RETRACE_HOME", env.tmp.path().join("home"))
            .env("HOME", env.tmp.path())
            .env("XDG_CONFIG_HOME", env.tmp.path().join("xdg"))
            .env("PATH", "/usr/bin:/bin")
            .args(["-c", &script, "sh", exe])
            .args(&args)
            .stdin(if stdin {
                Stdio::from(std::fs::File::open("/dev/zero").unwrap())
            } else {
                Stdio::null()
            });
        let out = c.output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains("limit of 4 MiB"), "{name}: {err}");
        if time.exists() {
            // The last line (a line before it says the command's exit status).
            let report = std::fs::read_to_string(&peak).unwrap();
            let kib: u64 = report.lines().last().unwrap().trim().parse().unwrap();
            assert!(kib < 100 * 1024, "{name}: peak resident size {kib} KiB");
        }
    }
    assert!(env.ids().is_empty(), "no session for a refused prompt");
}

/// `--help` lists the exit codes; `exec --json` gives a tool call's arguments as a JSON object.
#[test]
fn help_lists_exit_codes_and_tool_call_arguments_are_json() {
    let env = Env::new();
    for args in [vec!["--help"], vec!["exec", "--help"], vec!["rewind", "--help"]] {
        let out = env.run(&args);
        assert_eq!(out.status.code(), Some(0));
        let help = text(&out.stdout);
        for code in [
            "0 ok",
            "1 error",
            "2 usage",
            "3 refused",
            "4 confirmation required",
        ] {
            assert!(help.contains(code), "{args:?} {code}: {help}");
        }
    }
    let lines = env.exec_in(&env.ws, &["write a"], writes("a.txt", "one\n"));
    let call = lines.iter().find(|l| l["type"] == "tool_call").unwrap();
    assert_eq!(
        call["arguments"],
        json!({"path": "a.txt", "content": "one\n"}),
        "{call}"
    );
}
