//! The git backend never takes for a command's creation what only came into the walk's sight: a
//! file un-ignored by an edit of `.gitignore`, the files of a nested repository whose `.git` went,
//! a directory made readable. A rewind leaves them as they are (an `untracked` gap says so), and
//! restores what the command did make or change. A process killed during a command leaves the
//! command's shell gap: the turn never claims what it did not capture.

use crate::git_backend_cli::{git, session_of, tree, World};
use crate::support;

use std::time::Duration;

use serde_json::Value;

/// The session an `exec --json` ran in, from its lines.
fn session_of_output(out: &std::process::Output) -> String {
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    session_of(&lines)
}

fn gaps(cps: &Value, turn: usize) -> Vec<(String, String)> {
    cps[turn]["gaps"]
        .as_array()
        .map(|g| {
            g.iter()
                .map(|g| {
                    (
                        g["reason"].as_str().unwrap_or("").to_string(),
                        g["path"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn files_that_only_came_into_sight_survive_a_rewind() {
    let w = World::new();
    w.put(".gitignore", b"secret.env\nbuild/\n");
    w.put("secret.env", b"API_KEY=precious\n");
    w.put("build/out.bin", b"artifact\n");
    w.put("keep.txt", b"keep\n");
    w.put("vendor/lib/lib.c", b"lib code\n");
    w.put("vendor/lib/src/deep.c", b"deep\n");
    git(&w.ws.join("vendor/lib"), &["init", "-q"]);
    git(&w.ws.join("vendor/lib"), &["add", "-A"]);
    git(&w.ws.join("vendor/lib"), &["commit", "-q", "-m", "init"]);
    // older than the command by more than the clock's margin
    std::thread::sleep(Duration::from_millis(300));
    let before = tree(&w.ws, &[]);

    let lines = w.exec(
        None,
        &[
            "rm -rf vendor/lib/.git",
            "rm .gitignore",
            "echo made > build/new.txt && echo changed > keep.txt",
        ],
    );
    let id = session_of(&lines);
    let cps = w.json(&["checkpoints", "--session", &id, "--json"]);
    let g = gaps(&cps, 0);
    for path in ["secret.env", "build", "vendor/lib"] {
        assert!(
            g.contains(&("untracked".to_string(), path.to_string())),
            "{path} came into sight: {g:?}\n{cps}"
        );
    }
    assert!(
        !g.iter().any(|(r, _)| r == "bash_side_effect"),
        "every command's changes were captured: {g:?}"
    );
    let files: Vec<&str> = cps[0]["paths"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f.as_str())
        .collect();
    assert!(!files.contains(&"secret.env"), "{files:?}");

    let r = w.rewind_code(&id, 0);
    assert_eq!(r["ok"], true, "{r}");
    let deleted = r["files_deleted"].as_array().cloned().unwrap_or_default();
    assert!(
        !deleted.iter().any(|d| d == "secret.env" || d == "build/out.bin"),
        "{r}"
    );
    let after = tree(&w.ws, &[]);
    assert_eq!(after.get("secret.env"), before.get("secret.env"));
    assert_eq!(after.get("build/out.bin"), before.get("build/out.bin"));
    assert_eq!(after.get("vendor/lib/lib.c"), before.get("vendor/lib/lib.c"));
    assert_eq!(
        after.get("vendor/lib/src/deep.c"),
        before.get("vendor/lib/src/deep.c")
    );
    assert_eq!(after.get(".gitignore"), before.get(".gitignore"), "restored");
    assert_eq!(after.get("keep.txt"), before.get("keep.txt"), "restored");
    assert!(!after.contains_key("build/new.txt"), "the command made it");
}

#[test]
fn a_file_that_becomes_ignored_is_not_a_deletion() {
    let w = World::new();
    w.put("notes.txt", b"mine\n");
    w.put("a.txt", b"a\n");
    std::thread::sleep(Duration::from_millis(300));
    let lines = w.exec(
        None,
        &["echo notes.txt > .gitignore && echo more >> notes.txt && echo A > a.txt"],
    );
    let id = session_of(&lines);
    let r = w.rewind_code(&id, 0);
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(std::fs::read(w.ws.join("notes.txt")).unwrap(), b"mine\n");
    assert_eq!(std::fs::read(w.ws.join("a.txt")).unwrap(), b"a\n");
    assert!(!w.ws.join(".gitignore").exists());
}

/// A directory that could not be read (as a user other than root) and is made readable by the
/// command: its files are not the command's.
#[test]
fn a_directory_made_readable_keeps_its_files() {
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata("/proc/self").map_or(true, |m| m.uid() == 0) {
        eprintln!("root reads every directory: not tried");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let w = World::new();
    w.put("locked/s", b"secret\n");
    std::fs::set_permissions(w.ws.join("locked"), std::fs::Permissions::from_mode(0o000)).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let lines = w.exec(None, &["chmod 755 locked"]);
    let id = session_of(&lines);
    let r = w.rewind_code(&id, 0);
    std::fs::set_permissions(w.ws.join("locked"), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(std::fs::read(w.ws.join("locked/s")).unwrap(), b"secret\n", "{r}");
}

/// Killed while its shell command runs: the turn keeps the command's shell gap (what it changed
/// was never captured), and the next turn is captured as usual.
#[test]
fn a_kill_during_a_command_leaves_its_gap() {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    use std::time::Instant;

    let w = World::new();
    w.put("f", b"orig\n");
    w.put("g", b"keep\n");
    let model = w.script("kill", "echo killed-write >> f; rm g; echo n > newf; sleep 30");
    let ws = w.ws.display().to_string();
    let mut child = w.spawn_exec(&model, std::process::Stdio::null());
    let deadline = Instant::now() + Duration::from_secs(60);
    while !w.ws.join("newf").exists() {
        assert!(Instant::now() < deadline, "the command never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
    child.wait().unwrap();
    let sessions = w.json(&["sessions", "--workspace", &ws, "--json"]);
    let id = sessions[0]["id"]
        .as_str()
        .or(sessions[0]["session_id"].as_str())
        .unwrap()
        .to_string();
    let cps = w.json(&["checkpoints", "--session", &id, "--json"]);
    let g = gaps(&cps, 0);
    assert!(
        g.iter().any(|(r, _)| r == "bash_side_effect"),
        "the killed command is a gap: {cps}"
    );
    assert_ne!(cps[0]["coverage"], "complete", "{cps}");
    let lines = w.exec(Some(&id), &["echo t2 >> f"]);
    assert_eq!(lines.last().unwrap()["ok"], true);
    let cps = w.json(&["checkpoints", "--session", &id, "--json"]);
    let last = cps.as_array().unwrap().len() - 1;
    assert_eq!(cps[last]["coverage"], "complete", "{cps}");
}

/// Two sessions of one workspace at once: what changed while another session was writing is not
/// taken as the command's (an `external_writer` gap each), so rewinding one session never undoes
/// the other's work.
#[test]
fn another_sessions_writes_during_a_command_are_never_taken_as_its_own() {
    let w = World::new();
    w.put("base", b"base\n");
    let script = |name: &str, command: &str| w.script(name, command);
    let spawn = |model: &str| w.spawn_exec(model, std::process::Stdio::piped());
    let b = spawn(&script(
        "b",
        "sleep 1; echo 'B important work' > b.txt; echo B >> base; sleep 2",
    ));
    std::thread::sleep(Duration::from_millis(300));
    let a = spawn(&script("a", "sleep 2; echo A > a.txt"));
    let a_out = a.wait_with_output().unwrap();
    b.wait_with_output().unwrap();
    let id = session_of_output(&a_out);
    let cps = w.json(&["checkpoints", "--session", &id, "--json"]);
    let g = gaps(&cps, 0);
    assert!(
        g.contains(&("external_writer".to_string(), "b.txt".to_string())),
        "{g:?}"
    );
    let r = w.rewind_code(&id, 0);
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(std::fs::read(w.ws.join("b.txt")).unwrap(), b"B important work\n");
    assert_eq!(std::fs::read(w.ws.join("base")).unwrap(), b"base\nB\n");
}

/// The same when the other session's whole turn falls inside the command (found by the attack on
/// the git backend: it holds no lease at the command's start nor at its end, and a rewind of the
/// command's turn deleted its file): a session whose lease was taken or log written while the
/// command ran was writing too.
#[test]
fn a_session_that_opens_and_closes_during_a_command_is_a_writer_too() {
    let w = World::new();
    w.put("base", b"base\n");
    let a = w.spawn_exec(
        &w.script("a2", "sleep 2; echo A > a.txt"),
        std::process::Stdio::piped(),
    );
    std::thread::sleep(Duration::from_millis(600));
    let b = w.spawn_exec(
        &w.script("b2", "echo 'B work' > o.txt"),
        std::process::Stdio::piped(),
    );
    let b_out = b.wait_with_output().unwrap();
    assert!(
        b_out.status.success(),
        "{}",
        String::from_utf8_lossy(&b_out.stderr)
    );
    let a_out = a.wait_with_output().unwrap();
    let id = session_of_output(&a_out);
    let cps = w.json(&["checkpoints", "--session", &id, "--json"]);
    let g = gaps(&cps, 0);
    assert!(
        g.contains(&("external_writer".to_string(), "o.txt".to_string())),
        "{g:?}"
    );
    let r = w.rewind_code(&id, 0);
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(std::fs::read(w.ws.join("o.txt")).unwrap(), b"B work\n");
}

/// The object store holds what the workspace holds now, not every version ever seen: older blobs
/// were copied into the checkpoint store when their change was found, and go when the session
/// closes. Every turn still rewinds exactly.
#[test]
fn the_object_store_keeps_only_the_workspace_as_it_is() {
    let w = World::new();
    w.put("a.txt", b"v0\n");
    w.put("b.txt", b"b\n");
    let mut id: Option<String> = None;
    for v in 1..=4 {
        let lines = w.exec(id.as_deref(), &[&format!("echo v{v} > a.txt")]);
        id = lines.last().unwrap()["session_id"].as_str().map(str::to_string);
    }
    let id = id.unwrap();
    let objects = w
        .tmp
        .path()
        .join(format!("home/sessions/{id}.ckpt/git/repo.git/objects"));
    let count = walkdir_count(&objects);
    assert_eq!(count, 2, "a.txt and b.txt as they are now");
    for turn in (0..4).rev() {
        let r = w.json(&[
            "rewind",
            "--session",
            &id,
            "--turn",
            &turn.to_string(),
            "--scope",
            "code",
            "--json",
            "--yes",
        ]);
        assert_eq!(r["ok"], true, "{r}");
        assert_eq!(
            std::fs::read(w.ws.join("a.txt")).unwrap(),
            format!("v{turn}\n").as_bytes()
        );
    }
}

fn walkdir_count(dir: &std::path::Path) -> usize {
    let Ok(fans) = std::fs::read_dir(dir) else {
        return 0;
    };
    fans.flatten()
        .filter(|f| f.file_name().len() == 2)
        .map(|f| std::fs::read_dir(f.path()).map_or(0, |d| d.count()))
        .sum()
}

/// `retrace rewind` of a git-backend turn that changed 1,500 files, killed with SIGKILL at
/// moments spread over the restore: `fsck` is clean, the rewind run again restores every file
/// exactly, and the next turn is captured as usual.
#[test]
fn sigkill_during_a_git_backend_restore_leaves_both_stores_consistent() {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;

    for (round, delay_ms) in [30u64, 120, 300, 700].into_iter().enumerate() {
        let w = World::new();
        for i in 0..1500 {
            w.put(&format!("d{}/f{i}.txt", i % 15), format!("file {i}\n").as_bytes());
        }
        let before = tree(&w.ws, &[]);
        let lines = w.exec(None, &["for f in d*/f*.txt; do echo changed >> $f; done"]);
        let id = session_of(&lines);
        let mut child = support::isolated_retrace(w.tmp.path())
            .args([
                "rewind",
                "--session",
                &id,
                "--turn",
                "0",
                "--scope",
                "code",
                "--json",
                "--yes",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
        child.wait().unwrap();
        let (code, out, err) = w.run(&["fsck", "--session", &id, "--json"]);
        assert_eq!(code, 0, "round {round} ({delay_ms} ms): fsck: {out}\n{err}");
        // the rewind again: finishes what was cut (or finds it done) and restores exactly
        let (code, out, err) = w.run(&[
            "rewind",
            "--session",
            &id,
            "--turn",
            "0",
            "--scope",
            "code",
            "--json",
            "--yes",
        ]);
        assert_eq!(code, 0, "round {round}: rewind: {out}\n{err}");
        assert_eq!(tree(&w.ws, &[]), before, "round {round}: every file as it was");
        let lines = w.exec(Some(&id), &["echo next > next.txt"]);
        assert_eq!(lines.last().unwrap()["ok"], true, "round {round}");
        let (code, out, err) = w.run(&["fsck", "--session", &id, "--json"]);
        assert_eq!(code, 0, "round {round}: fsck at the end: {out}\n{err}");
    }
}

/// A file a command un-ignores and rewrites in place in the same command was there before it, out
/// of sight (its birth time says so): not the command's creation, so a rewind leaves it and says
/// so, and restores the ignore file.
#[test]
fn a_file_un_ignored_and_rewritten_by_one_command_is_not_its_creation() {
    let w = World::new();
    w.put(".gitignore", b"*.x\n");
    w.put("a.x", b"precious\n");
    w.put("b", b"1\n");
    let lines = w.exec(None, &["true"]);
    let id = session_of(&lines);
    // older than the command by more than the clock's margin
    std::thread::sleep(Duration::from_millis(300));
    w.exec(Some(&id), &["rm .gitignore; echo 2 > a.x; echo 2 > b"]);
    let cps = w.json(&["checkpoints", "--session", &id, "--json"]);
    let g = gaps(&cps, 1);
    assert!(
        g.contains(&("untracked".to_string(), "a.x".to_string())),
        "a.x came into sight: {g:?}\n{cps}"
    );
    let r = w.rewind_code(&id, 1);
    assert_eq!(r["ok"], true, "{r}");
    let after = tree(&w.ws, &[]);
    assert_eq!(after["a.x"].0, b"2\n", "left as it is, never deleted: {r}");
    assert_eq!(after[".gitignore"].0, b"*.x\n", "restored");
    assert_eq!(after["b"].0, b"1\n", "restored");
}

/// A kept file the same command makes ignored through `.git/info/exclude` (which change
/// notification of the workspace's tree does not see) and rewrites is still the command's change:
/// the look after it walks everything again, and a rewind restores the file.
#[test]
fn a_file_a_command_ignores_through_info_exclude_and_rewrites_is_restored() {
    let w = World::new();
    git(&w.ws, &["init", "-q"]);
    w.put("a.x", b"1\n");
    w.put("b", b"1\n");
    let lines = w.exec(None, &["true"]);
    let id = session_of(&lines);
    w.exec(
        Some(&id),
        &["echo '*.x' >> .git/info/exclude; echo 2 > a.x; echo 2 > b"],
    );
    let r = w.rewind_code(&id, 1);
    assert_eq!(r["ok"], true, "{r}");
    let after = tree(&w.ws, &[".git"]);
    assert_eq!(after["a.x"].0, b"1\n", "{r}");
    assert_eq!(after["b"].0, b"1\n", "{r}");
}
