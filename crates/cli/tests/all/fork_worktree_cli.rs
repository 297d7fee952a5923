//! `retrace fork --worktree DIR` through the real binary and the script model (SPEC §5.1 "Fork
//! into a new workspace", §11): in a git repository with commits, staged, unstaged and untracked
//! changes, and in a plain directory (the git backend there), the new workspace's files are the
//! source's as they stood when the turn started, file by file with modes and symlinks, hand edits
//! since taken back; the source's files, index and refs do not change; a directory that is not
//! empty is a usage error that makes nothing; the new session runs turns and rewinds on its own;
//! `sessions` links both; `sessions delete` keeps the worktree unless asked.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::git_backend_cli::git;
use crate::support::world::{turn_of, write, World};

/// What stands at a path: a file's bytes and mode, or a symlink's text.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    File(Vec<u8>, u32),
    Link(String),
}

type Tree = BTreeMap<String, Node>;

/// Every file and symlink under `dir`, `.git` (a directory or a worktree's file) left out.
fn tree(dir: &Path) -> Tree {
    fn go(root: &Path, dir: &Path, out: &mut Tree) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel == ".git" {
                continue;
            }
            let ty = e.file_type().unwrap();
            if ty.is_symlink() {
                let target = std::fs::read_link(&p).unwrap();
                out.insert(rel, Node::Link(target.to_string_lossy().into_owned()));
            } else if ty.is_dir() {
                go(root, &p, out);
            } else {
                let mode = e.metadata().unwrap().permissions().mode() & 0o7777;
                out.insert(rel, Node::File(std::fs::read(&p).unwrap(), mode));
            }
        }
    }
    let mut out = Tree::new();
    go(dir, dir, &mut out);
    out
}

/// Every file under `dir`, bytes only (a `.git` directory, all of it).
fn bytes_under(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn go(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(rd) = std::fs::read_dir(dir) else { return };
        for e in rd {
            let p = e.unwrap().path();
            if p.is_dir() {
                go(root, &p, out);
            } else if let Ok(b) = std::fs::read(&p) {
                out.insert(p.strip_prefix(root).unwrap().to_string_lossy().into_owned(), b);
            }
        }
    }
    let mut out = BTreeMap::new();
    go(dir, dir, &mut out);
    out
}

fn put(w: &World, rel: &str, bytes: &[u8]) {
    let p = w.ws.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// `t` without the paths at or under `gone`.
fn without(t: &Tree, gone: &[&str]) -> Tree {
    t.iter()
        .filter(|(k, _)| {
            !gone
                .iter()
                .any(|g| k.as_str() == *g || k.starts_with(&format!("{g}/")))
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn assert_trees_eq(got: &Tree, want: &Tree, what: &str) {
    if got == want {
        return;
    }
    let mut lines = Vec::new();
    for k in got
        .keys()
        .chain(want.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        match (got.get(k), want.get(k)) {
            (Some(g), Some(x)) if g != x => lines.push(format!("  {k}: {g:?}, want {x:?}")),
            (Some(_), None) => lines.push(format!("  {k}: unexpected")),
            (None, Some(_)) => lines.push(format!("  {k}: missing")),
            _ => {}
        }
    }
    panic!("{what}:\n{}", lines.join("\n"));
}

/// The state of a repository that must not change: its index's bytes and its refs.
fn repo_state(ws: &Path) -> (Vec<u8>, BTreeMap<String, Vec<u8>>, String) {
    let git_dir = ws.join(".git");
    let mut refs = bytes_under(&git_dir.join("refs"));
    for f in ["HEAD", "packed-refs"] {
        if let Ok(b) = std::fs::read(git_dir.join(f)) {
            refs.insert(f.to_string(), b);
        }
    }
    (
        std::fs::read(git_dir.join("index")).unwrap(),
        refs,
        git(ws, &["for-each-ref"]),
    )
}

/// The number of the newest checkpoint of session `id`.
fn last_turn(w: &World, id: &str) -> u64 {
    let list = w.json(&["checkpoints", "--session", id]);
    list.as_array()
        .unwrap()
        .iter()
        .map(|e| e["turn"].as_u64().unwrap())
        .max()
        .unwrap()
}

fn skipped_of(j: &Value) -> Vec<(String, String)> {
    j["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap_or("-").to_string(),
                s["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// A repository with two commits, then staged, unstaged and untracked changes, an unstaged
/// deletion, an untracked symlink and ignored files; returns the session after three turns and
/// the workspace as it stood when turn 1 started.
fn repository_with_three_turns(w: &World) -> (String, Tree) {
    put(w, "a.txt", b"a0\n");
    put(w, "b.txt", b"b0\n");
    put(w, "run.sh", b"#!/bin/sh\necho hi\n");
    chmod(&w.ws.join("run.sh"), 0o755);
    put(w, "dir/c.txt", b"c0\n");
    put(w, "gone.txt", b"g0\n");
    put(w, ".gitignore", b"build/\n*.log\n");
    git(&w.ws, &["init", "-q"]);
    git(&w.ws, &["add", "."]);
    git(&w.ws, &["commit", "-q", "-m", "first"]);
    put(w, "a.txt", b"a1\n");
    git(&w.ws, &["commit", "-q", "-am", "second"]);
    put(w, "a.txt", b"a staged\n");
    put(w, "staged-new.txt", b"new and staged\n");
    git(&w.ws, &["add", "a.txt", "staged-new.txt"]);
    put(w, "b.txt", b"b unstaged\n");
    put(w, "dir/c.txt", b"c staged\n");
    git(&w.ws, &["add", "dir/c.txt"]);
    put(w, "dir/c.txt", b"c staged, then changed\n");
    std::fs::remove_file(w.ws.join("gone.txt")).unwrap();
    put(w, "untracked.txt", b"untracked\n");
    chmod(&w.ws.join("untracked.txt"), 0o600);
    std::os::unix::fs::symlink("../outside/target", w.ws.join("link")).unwrap();
    put(w, "build/out.bin", b"\0built\0");
    put(w, "x.log", b"log\n");

    let id = w.exec(None, "zero", turn_of(vec![write("a.txt", "a turn 0\n")]));
    let at_turn_1 = tree(&w.ws);
    w.exec(
        Some(&id),
        "one",
        turn_of(vec![
            write("b.txt", "b turn 1\n"),
            write("dir/c.txt", "c turn 1\n"),
            write("t1/made.txt", "made in turn 1\n"),
        ]),
    );
    w.exec(
        Some(&id),
        "two",
        turn_of(vec![
            write("a.txt", "a turn 2\n"),
            write("untracked.txt", "untracked, turn 2\n"),
        ]),
    );
    assert_eq!(last_turn(w, &id), 2);
    // Edited by hand since turn 1 changed it: taken back too (nothing of the source is written).
    put(w, "b.txt", b"b by hand\n");
    (id, at_turn_1)
}

#[test]
fn a_fork_into_a_git_worktree_holds_the_files_of_the_turns_start_and_the_source_is_untouched() {
    let w = World::new();
    let (id, at_turn_1) = repository_with_three_turns(&w);
    let source = tree(&w.ws);
    let repo = repo_state(&w.ws);
    let log = std::fs::read(w.log(&id)).unwrap();
    let dir = w.tmp.path().join("try-b");

    let j = w.json(&[
        "fork",
        "--session",
        &id,
        "--turn",
        "1",
        "--worktree",
        dir.to_str().unwrap(),
        "--name",
        "try-b",
    ]);
    let new = j["session_id"].as_str().unwrap().to_string();
    let dir = std::fs::canonicalize(&dir).unwrap();
    assert_ne!(new, id);
    assert_eq!(j["source_session_id"], id.as_str());
    assert_eq!(j["head_id"], "main");
    assert_eq!(j["workspace"], dir.to_str().unwrap());
    assert_eq!(j["git_worktree"], true);
    assert_eq!(j["turn"], 1);
    // b.txt, dir/c.txt and t1/made.txt (turn 1), a.txt and untracked.txt (turn 2).
    assert_eq!(j["files_restored"], 5, "{j}");
    assert_eq!(
        skipped_of(&j),
        [
            ("build/".to_string(), "ignored".to_string()),
            ("x.log".to_string(), "ignored".to_string())
        ]
    );

    // File by file, modes and symlinks too: the source at turn 1's start, ignored files left out.
    assert_trees_eq(
        &tree(&dir),
        &without(&at_turn_1, &["build", "x.log"]),
        "the worktree against the source at turn 1's start",
    );
    assert!(!dir.join("t1").exists(), "the directory turn 1 made is not there");
    // A worktree of the same repository, detached at its HEAD.
    assert!(dir.join(".git").is_file());
    assert_eq!(
        git(&dir, &["rev-parse", "HEAD"]),
        git(&w.ws, &["rev-parse", "HEAD"])
    );
    assert_eq!(git(&dir, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(), "HEAD");
    // The source: its files, index and refs, and its session, as they were.
    assert_trees_eq(&tree(&w.ws), &source, "the source workspace");
    assert_eq!(repo_state(&w.ws), repo, "the source's index and refs");
    assert_eq!(
        std::fs::read(w.log(&id)).unwrap(),
        log,
        "the source session's log"
    );

    // Both sessions name each other.
    let listed = w.json(&["sessions", "--workspace", dir.to_str().unwrap()]);
    let entry = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == new.as_str())
        .unwrap();
    assert_eq!(
        entry["forked_from"],
        json!({"session_id": id, "turn": 1, "directory": dir.to_str().unwrap(), "git_worktree": true})
    );
    assert_eq!(entry["turns"], 1, "turn 0 is copied with the conversation");
    let listed = w.json(&["sessions", "--workspace", w.ws.to_str().unwrap()]);
    let source_entry = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id.as_str())
        .unwrap();
    assert_eq!(source_entry["forks"], json!([new]));
    let transcript = w.json(&["transcript", "--session", &new]);
    let said: Vec<&str> = transcript
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(said.first(), Some(&"zero"));
    assert!(!said.contains(&"one"), "{said:?}");

    // The new session runs a turn and rewinds it on its own; the source does not move.
    w.exec(
        Some(&new),
        "in the fork",
        turn_of(vec![write("fork.txt", "forked\n")]),
    );
    assert!(dir.join("fork.txt").is_file());
    assert!(!w.ws.join("fork.txt").exists());
    let turn = last_turn(&w, &new).to_string();
    let r = w.json(&[
        "rewind",
        "--session",
        &new,
        "--turn",
        &turn,
        "--scope",
        "code",
        "--yes",
    ]);
    assert_eq!(r["ok"], true, "{r}");
    assert!(!dir.join("fork.txt").exists());
    assert_trees_eq(
        &tree(&dir),
        &without(&at_turn_1, &["build", "x.log"]),
        "the worktree after its own turn was rewound",
    );
    assert_trees_eq(
        &tree(&w.ws),
        &source,
        "the source workspace after the fork's turn",
    );
    assert_eq!(
        repo_state(&w.ws),
        repo,
        "the source's index and refs after the fork's turn"
    );

    // Deleting the new session keeps its worktree unless asked, and says how to remove it.
    let out = w.run(&["sessions", "delete", &new, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let removed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(removed["worktree"], dir.to_str().unwrap());
    assert_eq!(removed["worktree_removed"], false);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("git worktree remove"), "{said}");
    // The session is gone: deleting it again with --remove-worktree is no way out.
    assert!(!said.contains("--remove-worktree"), "{said}");
    assert!(dir.join("a.txt").is_file(), "the worktree stays");
}

#[test]
fn deleting_a_forked_session_removes_its_worktree_only_when_asked() {
    let w = World::new();
    let (id, _) = repository_with_three_turns(&w);
    let dir = w.tmp.path().join("wt");
    let j = w.json(&[
        "fork",
        "--session",
        &id,
        "--turn",
        "2",
        "--worktree",
        dir.to_str().unwrap(),
    ]);
    let new = j["session_id"].as_str().unwrap();
    assert_eq!(git(&w.ws, &["worktree", "list"]).lines().count(), 2);
    let removed = w.json(&["sessions", "delete", new, "--remove-worktree"]);
    assert_eq!(removed["worktree_removed"], true);
    assert!(!dir.exists());
    assert_eq!(git(&w.ws, &["worktree", "list"]).lines().count(), 1);
}

#[test]
fn a_fork_of_a_plain_directory_is_a_copy_and_takes_back_the_shell_commands_changes() {
    let w = World::new();
    put(&w, "a.txt", b"a0\n");
    put(&w, "run.sh", b"#!/bin/sh\n");
    chmod(&w.ws.join("run.sh"), 0o755);
    put(&w, "sub/d.txt", b"d0\n");
    put(&w, ".gitignore", b"*.log\n");
    put(&w, "x.log", b"log\n");
    std::os::unix::fs::symlink("../elsewhere", w.ws.join("out")).unwrap();
    let exec = |session: Option<&str>, command: &str| -> String {
        let model = w.script(turn_of(vec![
            json!({"name": "bash", "arguments": {"command": command}}),
        ]));
        let mut args = vec![
            "exec",
            "--json",
            "--backend",
            "git",
            "--allow-bash",
            "--model",
            &model,
        ];
        let ws = w.ws.display().to_string();
        match session {
            Some(id) => args.extend(["--session", id]),
            None => args.extend(["--workspace", &ws]),
        }
        args.push("run it");
        let (stdout, _) = w.code(&args, 0);
        let result: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
        assert_eq!(result["ok"], true, "{result}");
        result["session_id"].as_str().unwrap().to_string()
    };
    let id = exec(None, "printf 'a turn 0\\n' > a.txt");
    let at_turn_1 = tree(&w.ws);
    exec(
        Some(&id),
        "printf 'a turn 1\\n' > a.txt && rm sub/d.txt && printf 'n\\n' > n.txt && chmod 644 run.sh",
    );
    put(&w, "a.txt", b"a by hand\n");
    let source = tree(&w.ws);
    let dir = w.tmp.path().join("copy");

    let j = w.json(&[
        "fork",
        "--session",
        &id,
        "--turn",
        "1",
        "--worktree",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(j["git_worktree"], false);
    assert_eq!(skipped_of(&j), [("x.log".to_string(), "ignored".to_string())]);
    assert_trees_eq(
        &tree(&dir),
        &without(&at_turn_1, &["x.log"]),
        "the copy against the source at turn 1's start",
    );
    assert_eq!(
        std::fs::read_link(dir.join("out")).unwrap(),
        Path::new("../elsewhere"),
        "a symlink is copied as a symlink"
    );
    assert_trees_eq(&tree(&w.ws), &source, "the source workspace");

    // The new session (the git backend too) runs a shell command and rewinds it.
    let new = j["session_id"].as_str().unwrap();
    let model = w.script(turn_of(vec![
        json!({"name": "bash", "arguments": {"command": "printf 'x\\n' > made.txt"}}),
    ]));
    let (stdout, _) = w.code(
        &[
            "exec",
            "--json",
            "--allow-bash",
            "--model",
            &model,
            "--session",
            new,
            "go",
        ],
        0,
    );
    assert!(stdout.lines().last().unwrap().contains("\"ok\":true"), "{stdout}");
    assert!(dir.join("made.txt").is_file());
    let turn = last_turn(&w, new).to_string();
    w.json(&[
        "rewind",
        "--session",
        new,
        "--turn",
        &turn,
        "--scope",
        "code",
        "--yes",
    ]);
    assert!(!dir.join("made.txt").exists());
    assert_trees_eq(&tree(&w.ws), &source, "the source workspace at the end");
}

#[test]
fn a_directory_that_is_not_empty_is_a_usage_error_and_nothing_is_made() {
    let w = World::new();
    let (id, _) = repository_with_three_turns(&w);
    let dir = w.tmp.path().join("taken");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("mine.txt"), b"mine\n").unwrap();
    let sessions = std::fs::read_dir(w.sessions_dir()).unwrap().count();
    let source = tree(&w.ws);
    let repo = repo_state(&w.ws);

    let (_, stderr) = w.code(
        &[
            "fork",
            "--session",
            &id,
            "--turn",
            "1",
            "--worktree",
            dir.to_str().unwrap(),
            "--json",
        ],
        2,
    );
    assert!(stderr.contains("not empty"), "{stderr}");
    assert_eq!(bytes_under(&dir).len(), 1, "the directory is as it was");
    assert_eq!(std::fs::read_dir(w.sessions_dir()).unwrap().count(), sessions);
    assert_eq!(git(&w.ws, &["worktree", "list"]).lines().count(), 1);
    assert_trees_eq(&tree(&w.ws), &source, "the source workspace");
    assert_eq!(repo_state(&w.ws), repo);
    // Inside the repository: refused the same way.
    let inside = w.ws.join("inner");
    w.code(
        &[
            "fork",
            "--session",
            &id,
            "--turn",
            "1",
            "--worktree",
            inside.to_str().unwrap(),
        ],
        2,
    );
    assert!(!inside.exists());
    // A turn the session does not have: as `fork` says it, nothing made.
    let nowhere = w.tmp.path().join("nowhere");
    w.code(
        &[
            "fork",
            "--session",
            &id,
            "--turn",
            "9",
            "--worktree",
            nowhere.to_str().unwrap(),
        ],
        2,
    );
    assert!(!nowhere.exists());
}

#[test]
fn the_terminal_ui_forks_into_a_new_workspace_and_opens_the_new_session_there() {
    let w = World::new();
    let id = w.exec(None, "zero", turn_of(vec![write("a.txt", "a turn 0\n")]));
    w.exec(Some(&id), "one", turn_of(vec![write("a.txt", "a turn 1\n")]));
    let dir = w.tmp.path().join("from-the-ui");
    let args: Vec<String> = ["--session", id.as_str(), "--model", "demo"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let Some(t) = crate::support::tmux::launch(w.tmp.path(), "retrace-fork-worktree", (120, 30), &args, true)
    else {
        return;
    };
    t.text(&format!("/fork --turn 1 --worktree {}", dir.display()));
    t.keys(&["Enter"]);
    t.wait("the new session", |s| {
        crate::support::tmux::flat(s).contains("forked turn 1 into")
    });
    // Turn 0, copied from the source, has no checkpoint here: nothing says it was lost.
    t.wait("the copied prompt", |s| s.contains("zero"));
    let screen = t.screen();
    assert!(!screen.contains("no longer kept"), "{screen}");
    let dir = std::fs::canonicalize(&dir).unwrap();
    assert_eq!(std::fs::read(dir.join("a.txt")).unwrap(), b"a turn 0\n");
    assert_eq!(std::fs::read(w.ws.join("a.txt")).unwrap(), b"a turn 1\n");
    let listed = w.json(&["sessions", "--workspace", dir.to_str().unwrap()]);
    let new = listed[0]["id"].as_str().unwrap().to_string();
    assert_eq!(listed[0]["forked_from"]["session_id"], id.as_str());
    // Leaving, the UI says how to resume the session it is on: the new one.
    t.keys(&["C-d"]);
    let hint = format!("retrace --session {new}");
    let start = std::time::Instant::now();
    loop {
        let out = t
            .tmux()
            .args(["capture-pane", "-p", "-S", "-", "-t", &t.name])
            .output()
            .unwrap();
        let all = String::from_utf8_lossy(&out.stdout).into_owned();
        if all.contains(&hint) {
            break;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(20),
            "no resume hint for the new session:\n{all}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The page's fork into a new workspace, in Debian's chromium (`crates/web/tests/browser/
/// forkspace.mjs`, started as the web UI's tests start theirs, `web_cli.rs`): the action asks
/// for the directory and the new session opens in a new tab. Without node, chromium or
/// `playwright-core` (`npm ci` in that folder) it says so and passes, except in CI.
#[test]
fn the_page_forks_into_a_new_workspace_and_opens_it_in_a_new_tab() {
    use std::io::BufRead;
    let browser_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../web/tests/browser");
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let missing = if !node {
        Some("node is not installed".to_string())
    } else if !Path::new(&chromium).exists() {
        Some(format!("{chromium} is missing"))
    } else if !browser_dir.join("node_modules/playwright-core").is_dir() {
        Some(format!(
            "playwright-core is not installed (npm ci in {})",
            browser_dir.display()
        ))
    } else {
        None
    };
    if let Some(why) = missing {
        assert!(
            std::env::var_os("CI").is_none(),
            "the browser test cannot run in CI: {why}"
        );
        eprintln!("skipping the browser test: {why}");
        return;
    }
    let w = World::new();
    let model = w.script(json!([
        {"tool_calls": [write("one.txt", "1\n")]},
        {"content": "wrote one"},
        {"tool_calls": [write("one.txt", "2\n"), write("two.txt", "2\n")]},
        {"content": "changed one"}
    ]));
    let mut serve = w
        .command()
        .args(["serve", "--port", "0", "--workspace"])
        .arg(&w.ws)
        .args(["--model", &model])
        .env("RETRACE_TOKEN", "fork-worktree-test-token-0123456789")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(serve.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("retrace: listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
        .to_string();
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("web-screenshots");
    let mut script = Command::new("node")
        .current_dir(&browser_dir)
        .arg("forkspace.mjs")
        .arg(&url)
        .arg(&w.ws)
        .arg(&shots)
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = script.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > std::time::Duration::from_secs(180) {
            let _ = script.kill();
            let _ = script.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(serve.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let code = serve.wait().unwrap().code();
    let status = status.expect("the browser script timed out");
    assert!(
        status.success(),
        "the browser script failed ({status}); screenshots in {}",
        shots.display()
    );
    assert_eq!(code, Some(0), "serve did not stop cleanly");
}

#[test]
fn the_human_form_names_the_new_workspace_escaped() {
    let w = World::new();
    let id = w.exec(None, "zero", turn_of(vec![write("a.txt", "a0\n")]));
    w.exec(Some(&id), "one", turn_of(vec![write("a.txt", "a1\n")]));
    let dir = w.tmp.path().join("odd\u{1b}[31mname");
    let (stdout, _) = w.code(
        &[
            "fork",
            "--session",
            &id,
            "--turn",
            "1",
            "--worktree",
            dir.to_str().unwrap(),
        ],
        0,
    );
    assert!(!stdout.contains('\u{1b}'), "{stdout:?}");
    assert!(
        stdout.contains("files put back as they stood when turn 1 started: 1"),
        "{stdout}"
    );
    assert!(stdout.contains("a copy of the workspace"), "{stdout}");
    assert!(
        stdout.contains(&format!("forked from {id} at turn 1")),
        "{stdout}"
    );
    assert_eq!(std::fs::read(dir.join("a.txt")).unwrap(), b"a0\n");
}
