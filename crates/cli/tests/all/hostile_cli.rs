//! A hostile or untidy workspace through the real binary (issue 13 items 1, 3, 4, 6, 7): an editor
//! that keeps a file open across a rewind, a FIFO at a target, a symlinked parent swapped in before
//! an undo, the longest names, a directory and an unreadable file where a restore wants to write.
//! Each ends in a clear exit code with nothing lost and nothing written outside; none hangs (every
//! command runs under a timeout).

use crate::support;

use std::io::{Seek, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tempfile::TempDir;

struct Env {
    tmp: TempDir,
    ws: PathBuf,
    scripts: std::cell::Cell<usize>,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        for d in ["ws", "home", "xdg", "scripts", "outside"] {
            std::fs::create_dir(tmp.path().join(d)).unwrap();
        }
        let ws = std::fs::canonicalize(tmp.path().join("ws")).unwrap();
        Env {
            tmp,
            ws,
            scripts: std::cell::Cell::new(0),
        }
    }

    fn outside(&self) -> PathBuf {
        self.tmp.path().join("outside")
    }

    fn at(&self, rel: &str) -> PathBuf {
        self.ws.join(rel)
    }

    /// Runs `retrace args…` (killed after 60 s: a hang fails the test instead of the CI run).
    fn run_as(&self, args: &[&str], wrap: &[&str]) -> Output {
        let mut cmd = if wrap.is_empty() {
            support::isolated_retrace(self.tmp.path())
        } else {
            let mut c = Command::new(wrap[0]);
            c.args(&wrap[1..])
                .arg(env!("CARGO_BIN_EXE_retrace"))
                .current_dir(self.tmp.path())
                .env("RETRACE_HOME", self.tmp.path().join("home"))
                .env("XDG_CONFIG_HOME", self.tmp.path().join("xdg"))
                .env("HOME", self.tmp.path())
                .stdin(Stdio::null());
            c
        };
        let mut child = cmd
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        loop {
            if child.try_wait().unwrap().is_some() {
                return child.wait_with_output().unwrap();
            }
            if start.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                panic!("retrace {args:?} hung");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_as(args, &[])
    }

    fn code(&self, args: &[&str], code: i32) -> Output {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    fn json(&self, args: &[&str], code: i32) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.code(&all, code);
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn script(&self, calls: Vec<Value>) -> String {
        let n = self.scripts.get();
        self.scripts.set(n + 1);
        let path = self.tmp.path().join(format!("scripts/s{n}.json"));
        let responses = json!([{"content": "working", "tool_calls": calls}, {"content": "done"}]);
        std::fs::write(&path, json!({ "responses": responses }).to_string()).unwrap();
        format!("script:{}", path.display())
    }

    /// One turn; returns the session id.
    fn turn(&self, session: Option<&str>, calls: Vec<Value>) -> String {
        let model = self.script(calls);
        let ws = self.ws.display().to_string();
        let mut args = vec!["exec", "--json", "--model", &model];
        match session {
            Some(id) => args.extend(["--session", id]),
            None => args.extend(["--workspace", &ws]),
        }
        args.push("go");
        let out = self.code(&args, 0);
        let last: Value =
            serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
        last["session_id"].as_str().unwrap().to_string()
    }
}

fn write(path: &str, content: &str) -> Value {
    json!({"name": "write_file", "arguments": {"path": path, "content": content}})
}

fn delete(path: &str) -> Value {
    json!({"name": "delete_file", "arguments": {"path": path}})
}

fn reasons(plan: &Value) -> Vec<(String, String)> {
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

/// Item 1: an editor keeps `a.txt` open across the rewind and saves into it afterwards; the undo
/// still brings back the agent's bytes, and fsck finds nothing wrong.
#[test]
fn an_editor_holding_the_file_open_cannot_spoil_the_undo() {
    let env = Env::new();
    let id = env.turn(None, vec![write("a.txt", "agent\n")]);
    let mut editor = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(env.at("a.txt"))
        .unwrap();
    env.code(&["rewind", "--session", &id, "--turn", "0", "--scope", "code"], 0);
    assert!(!env.at("a.txt").exists());
    editor.rewind().unwrap();
    editor.write_all(b"EDITOR-SAVE").unwrap();
    editor.sync_all().unwrap();
    drop(editor);
    env.code(&["undo", "--session", &id], 0);
    assert_eq!(std::fs::read(env.at("a.txt")).unwrap(), b"agent\n");
    env.code(&["fsck", "--session", &id], 0);
}

/// Items 3 and 7: a FIFO and a directory where a file was are type changes: the plan comes back
/// at once, the rewind is refused (exit 3) and writes nothing, skip leaves them alone.
#[test]
fn a_fifo_or_a_directory_at_a_target_is_refused_not_a_hang() {
    let env = Env::new();
    let id = env.turn(
        None,
        vec![
            write("d/a.txt", "a0\n"),
            write("d/b.txt", "b0\n"),
            write("c.txt", "c0\n"),
        ],
    );
    env.turn(
        Some(&id),
        vec![
            write("d/a.txt", "a1\n"),
            write("d/b.txt", "b1\n"),
            write("c.txt", "c1\n"),
        ],
    );
    std::fs::remove_file(env.at("d/b.txt")).unwrap();
    assert!(Command::new("mkfifo")
        .arg(env.at("d/b.txt"))
        .status()
        .unwrap()
        .success());
    std::fs::remove_file(env.at("c.txt")).unwrap();
    std::fs::create_dir(env.at("c.txt")).unwrap();
    let rewind = ["rewind", "--session", &id, "--turn", "1", "--scope", "code"];
    let mut dry = rewind.to_vec();
    dry.push("--dry-run");
    let plan = env.json(&dry, 0);
    let mut got = reasons(&plan);
    got.sort();
    assert_eq!(
        got,
        [
            ("c.txt".to_string(), "type_change".to_string()),
            ("d/b.txt".into(), "type_change".into())
        ]
    );
    let refused = env.json(&rewind, 3);
    assert_eq!(refused["blockers"][0]["kind"], "conflicts");
    assert_eq!(
        std::fs::read(env.at("d/a.txt")).unwrap(),
        b"a1\n",
        "nothing written"
    );
    // Not even overwrite writes over them; the clean file is restored.
    let mut overwrite = rewind.to_vec();
    overwrite.extend(["--on-conflict", "overwrite"]);
    let done = env.json(&overwrite, 0);
    assert_eq!(done["files_written"], json!(["d/a.txt"]));
    assert_eq!(std::fs::read(env.at("d/a.txt")).unwrap(), b"a0\n");
    assert!(env.at("c.txt").is_dir());
    assert!(std::fs::symlink_metadata(env.at("d/b.txt"))
        .unwrap()
        .file_type()
        .is_fifo());
}

/// Item 4: an undo never creates directories through a symlinked parent.
#[test]
fn undo_refuses_a_symlinked_parent_and_creates_nothing_outside() {
    let env = Env::new();
    let id = env.turn(None, vec![write("p/q/new.txt", "made by the agent\n")]);
    env.code(&["rewind", "--session", &id, "--turn", "0", "--scope", "code"], 0);
    std::fs::remove_dir_all(env.at("p")).ok();
    std::os::unix::fs::symlink(env.outside(), env.at("p")).unwrap();
    let out = env.code(&["undo", "--session", &id], 3);
    assert!(String::from_utf8_lossy(&out.stderr).contains("p/q/new.txt"));
    assert_eq!(
        std::fs::read_dir(env.outside()).unwrap().count(),
        0,
        "nothing outside"
    );
}

/// Item 6: a name as long as a name can be, deleted by the agent, comes back.
#[test]
fn the_longest_names_come_back() {
    let env = Env::new();
    let long = "L".repeat(244);
    std::fs::write(env.at(&long), b"precious\n").unwrap();
    let id = env.turn(None, vec![delete(&long), write("other.txt", "x\n")]);
    assert!(!env.at(&long).exists());
    env.code(
        &[
            "rewind",
            "--session",
            &id,
            "--turn",
            "0",
            "--scope",
            "code",
            "--on-conflict",
            "skip",
        ],
        0,
    );
    assert_eq!(std::fs::read(env.at(&long)).unwrap(), b"precious\n");
    env.code(&["undo", "--session", &id], 0);
    assert!(!env.at(&long).exists());
}

/// Item 7: an unreadable file at a target is a user change that refuses by default (exit 3), not
/// an unsafe path the default skips. Root reads everything, so this runs as `nobody`.
#[test]
fn an_unreadable_target_refuses_as_another_user() {
    if !Path::new("/usr/bin/setpriv").exists() {
        eprintln!("notice: setpriv is missing; the unreadable-file case was not run");
        return;
    }
    let env = Env::new();
    // Everything this test touches belongs to nobody (uid 65534); the binary must be reachable.
    let mut a = env.tmp.path().to_path_buf();
    while let Some(p) = a.parent() {
        let mode = std::fs::metadata(p).unwrap().permissions().mode();
        if mode & 0o001 == 0 {
            eprintln!(
                "notice: {} is not traversable by others; the unreadable-file case was not run",
                p.display()
            );
            return;
        }
        a = p.to_path_buf();
    }
    let chown = Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(env.tmp.path())
        .status()
        .unwrap();
    assert!(chown.success());
    std::fs::set_permissions(env.tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"];
    let model = env.script(vec![write("secret.txt", "agent\n")]);
    let ws = env.ws.display().to_string();
    let out = env.run_as(
        &["exec", "--json", "--model", &model, "--workspace", &ws, "go"],
        &nobody,
    );
    if out.status.code() != Some(0) && String::from_utf8_lossy(&out.stderr).contains("Permission denied") {
        eprintln!(
            "notice: the built binary is not runnable by nobody here; the unreadable-file case was not run"
        );
        return;
    }
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last: Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    let id = last["session_id"].as_str().unwrap().to_string();
    std::fs::set_permissions(env.at("secret.txt"), std::fs::Permissions::from_mode(0o000)).unwrap();
    assert_eq!(std::fs::metadata(env.at("secret.txt")).unwrap().uid(), 65534);
    let out = env.run_as(
        &[
            "rewind",
            "--session",
            &id,
            "--turn",
            "0",
            "--scope",
            "code",
            "--json",
        ],
        &nobody,
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        reasons(&plan),
        [("secret.txt".to_string(), "unreadable".to_string())]
    );
    assert!(env.at("secret.txt").exists(), "nothing written");
    // No choice writes an unreadable file: the refusal says so, not which flag to pass.
    let said = format!("{plan}{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("no choice can write these files"), "{said}");
    assert!(!said.contains("--on-conflict skip or overwrite"), "{said}");
}

/// Every file of a rewind unsafe to write (its directory swapped for a symlink to elsewhere): no
/// choice can write it, so another `--on-conflict` is no way out; the refusal says so and, for
/// `--scope both`, how to rewind the conversation alone. Nothing is written outside.
#[test]
fn a_rewind_no_choice_can_write_says_so_and_how_to_rewind_the_conversation() {
    let env = Env::new();
    let id = env.turn(None, vec![write("a/b/f.txt", "made by the agent\n")]);
    std::fs::rename(env.at("a"), env.outside().join("a")).unwrap();
    std::os::unix::fs::symlink(env.outside().join("a"), env.at("a")).unwrap();
    for (scope, hint) in [("both", true), ("code", false)] {
        let out = env.code(
            &[
                "rewind",
                "--session",
                &id,
                "--turn",
                "0",
                "--scope",
                scope,
                "--yes",
                "--on-conflict",
                "skip",
            ],
            3,
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("no choice can write these files"), "{scope}: {err}");
        assert!(!err.contains("--on-conflict skip or overwrite"), "{scope}: {err}");
        assert_eq!(err.contains("--scope conversation"), hint, "{scope}: {err}");
    }
    assert_eq!(
        std::fs::read(env.outside().join("a/b/f.txt")).unwrap(),
        b"made by the agent\n"
    );
    let out = env.code(
        &[
            "rewind",
            "--session",
            &id,
            "--turn",
            "0",
            "--scope",
            "conversation",
        ],
        0,
    );
    assert!(out.status.success());
}
