//! `retrace fork --worktree DIR` and `sessions delete --remove-worktree` against what stands in
//! their way (SPEC §5.1 "Fork into a new workspace"): only the directory the fork made is ever
//! removed (another directory at its path since, a worktree of another repository, a session
//! that recorded nothing are refused with exit 3 and left whole); two forks into one directory
//! never share it; a copy keeps no set-user-ID bit; the repository's file system monitor is not
//! started; a DIR that names nothing usable is a usage error naming `--worktree`; a repository
//! git refuses to open is an error, never a silent copy; the leftover of an interrupted fork is
//! recognised; a fork stopped by a signal removes what it made; a file system mounted inside a
//! fork's directory stops its removal before anything is removed.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::git_backend_cli::git;
use crate::support::world::{turn_of, write, World};

fn repo_with_a_turn(w: &World) -> String {
    w.put("a.txt", b"a0\n");
    git(&w.ws, &["init", "-q"]);
    git(&w.ws, &["add", "."]);
    git(&w.ws, &["commit", "-q", "-m", "first"]);
    w.exec(None, "zero", turn_of(vec![write("a.txt", "a turn 0\n")]))
}

/// The arguments of `retrace fork --json` of `id` at turn 0 into `dir`.
fn fork_args<'a>(id: &'a str, dir: &'a Path) -> [&'a str; 8] {
    [
        "fork",
        "--session",
        id,
        "--turn",
        "0",
        "--worktree",
        dir.to_str().unwrap(),
        "--json",
    ]
}

fn fork(w: &World, id: &str, dir: &Path, code: i32) -> (String, String) {
    w.code(&fork_args(id, dir), code)
}

fn new_session(w: &World, id: &str, dir: &Path) -> String {
    let (out, _) = fork(w, id, dir, 0);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    j["session_id"].as_str().unwrap().to_string()
}

#[test]
fn another_directory_standing_where_the_copy_was_is_never_removed() {
    let w = World::new();
    let id = w.exec(None, "zero", turn_of(vec![write("a.txt", "a turn 0\n")]));
    let dir = w.tmp.path().join("fk");
    let new = new_session(&w, &id, &dir);
    std::fs::rename(&dir, w.tmp.path().join("moved")).unwrap();
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("precious.txt"), b"mine\n").unwrap();
    let (_, stderr) = w.code(&["sessions", "delete", &new, "--remove-worktree"], 3);
    assert!(stderr.contains("not the directory the fork made"), "{stderr}");
    assert!(stderr.contains("keep the directory"), "{stderr}");
    assert_eq!(std::fs::read(dir.join("precious.txt")).unwrap(), b"mine\n");
    assert!(w.log(&new).exists(), "nothing was deleted");

    // A session that recorded nothing of its directory (an earlier build) is refused too.
    let log = std::fs::read_to_string(w.log(&new)).unwrap();
    let (header, rest) = log.split_once('\n').unwrap();
    let at = header.find(",\"made\":{").unwrap();
    let end = at + header[at..].find('}').unwrap() + 1;
    let header = format!("{}{}", &header[..at], &header[end..]);
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::rename(w.tmp.path().join("moved"), &dir).unwrap();
    std::fs::write(w.log(&new), format!("{header}\n{rest}")).unwrap();
    let (_, stderr) = w.code(&["sessions", "delete", &new, "--remove-worktree"], 3);
    assert!(stderr.contains("earlier build"), "{stderr}");
    assert!(dir.is_dir() && w.log(&new).exists());
}

/// Found by the second attack: a log header edited to name another directory as the one the fork
/// made (the source's workspace here) had that directory removed.
#[test]
fn a_header_naming_a_directory_other_than_the_sessions_workspace_removes_nothing() {
    let w = World::new();
    let id = w.exec(None, "zero", turn_of(vec![write("a.txt", "a turn 0\n")]));
    let dir = w.tmp.path().join("fk");
    let new = new_session(&w, &id, &dir);
    let log = std::fs::read_to_string(w.log(&new)).unwrap();
    let (header, rest) = log.split_once('\n').unwrap();
    let mut h: serde_json::Value = serde_json::from_str(header).unwrap();
    h["forked_from"]["directory"] = w.ws.display().to_string().into();
    std::fs::write(w.log(&new), format!("{h}\n{rest}")).unwrap();
    let (_, stderr) = w.code(&["sessions", "delete", &new, "--remove-worktree"], 3);
    assert!(stderr.contains("which is not its workspace"), "{stderr}");
    assert!(w.ws.join("a.txt").exists() && dir.is_dir());
    assert!(w.log(&new).exists(), "nothing was deleted");
}

#[test]
fn a_worktree_put_at_the_forks_path_since_is_never_removed() {
    let w = World::new();
    let id = repo_with_a_turn(&w);
    git(&w.ws, &["branch", "feature"]);
    let dir = w.tmp.path().join("fk");
    let new = new_session(&w, &id, &dir);
    // The same repository, a worktree of a branch at the same path (same admin name).
    git(&w.ws, &["worktree", "remove", "--force", dir.to_str().unwrap()]);
    git(
        &w.ws,
        &["worktree", "add", "-q", dir.to_str().unwrap(), "feature"],
    );
    std::fs::write(dir.join("work.txt"), b"uncommitted\n").unwrap();
    let (_, stderr) = w.code(&["sessions", "delete", &new, "--remove-worktree"], 3);
    assert!(stderr.contains("not the directory the fork made"), "{stderr}");
    assert_eq!(std::fs::read(dir.join("work.txt")).unwrap(), b"uncommitted\n");
    assert_eq!(git(&w.ws, &["worktree", "list"]).lines().count(), 2);

    // A worktree of another repository at that path.
    git(&w.ws, &["worktree", "remove", "--force", dir.to_str().unwrap()]);
    let other = w.tmp.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("o.txt"), b"o\n").unwrap();
    git(&other, &["init", "-q"]);
    git(&other, &["add", "."]);
    git(&other, &["commit", "-q", "-m", "o"]);
    git(
        &other,
        &["worktree", "add", "-q", dir.to_str().unwrap(), "-b", "b2"],
    );
    std::fs::write(dir.join("precious.txt"), b"p\n").unwrap();
    w.code(&["sessions", "delete", &new, "--remove-worktree"], 3);
    assert!(dir.join("precious.txt").is_file());
    assert_eq!(git(&other, &["worktree", "list"]).lines().count(), 2);

    // A fork's worktree removed by hand: the session goes, and the source forgets the worktree.
    let again = w.tmp.path().join("again");
    let new = new_session(&w, &id, &again);
    std::fs::remove_dir_all(&again).unwrap();
    let removed = w.json(&["sessions", "delete", &new, "--remove-worktree"]);
    assert_eq!(removed["worktree_removed"], false);
    assert_eq!(git(&w.ws, &["worktree", "list"]).lines().count(), 1);
}

#[test]
fn two_forks_into_one_directory_never_share_it() {
    let w = World::new();
    std::fs::create_dir(w.ws.join("d")).unwrap();
    for i in 0..300 {
        w.put(&format!("d/f{i}.txt"), b"x\n");
    }
    // Two sessions (a fork holds its source's lease: two forks of one session take turns).
    let ids = [
        w.exec(None, "zero", turn_of(vec![write("a.txt", "a turn 0\n")])),
        w.exec(None, "zero again", turn_of(vec![write("b.txt", "b turn 0\n")])),
    ];
    let dir = w.tmp.path().join("race");
    // Run them at once.
    let mut spawned: Vec<_> = ids.iter().map(|id| spawn_fork(&w, id, &dir)).collect();
    let outs: Vec<_> = spawned.drain(..).map(|c| c.wait_with_output().unwrap()).collect();
    let won = outs.iter().filter(|o| o.status.success()).count();
    assert!(won <= 1, "both forks took the directory");
    for o in outs.iter().filter(|o| !o.status.success()) {
        // While the other fork runs it is `busy` ("… is making it now"); once it is whole, the
        // directory is "not empty". Never told to remove what a running fork is making.
        let stderr = String::from_utf8_lossy(&o.stderr);
        match o.status.code() {
            Some(1) => assert!(stderr.contains("is making"), "{stderr}"),
            Some(2) => assert!(stderr.contains("not empty"), "{stderr}"),
            other => panic!("{other:?}: {stderr}"),
        }
        assert!(!stderr.contains("interrupted"), "{stderr}");
        assert!(stderr.contains("--worktree"), "{stderr}");
    }
}

#[test]
fn a_copy_keeps_no_set_user_or_group_id_and_the_monitor_of_the_repository_is_not_started() {
    let w = World::new();
    let id = repo_with_a_turn(&w);
    w.put("tool", b"#!/bin/sh\n");
    std::fs::set_permissions(w.ws.join("tool"), std::fs::Permissions::from_mode(0o6755)).unwrap();
    let ran = w.tmp.path().join("monitor-ran");
    let monitor = w.tmp.path().join("monitor.sh");
    std::fs::write(&monitor, format!("#!/bin/sh\ntouch {}\n", ran.display())).unwrap();
    std::fs::set_permissions(&monitor, std::fs::Permissions::from_mode(0o755)).unwrap();
    git(&w.ws, &["config", "core.fsmonitor", monitor.to_str().unwrap()]);
    let dir = w.tmp.path().join("fk");
    new_session(&w, &id, &dir);
    let mode = std::fs::metadata(dir.join("tool")).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o755, "an untracked file carried into the worktree");
    assert!(!ran.exists(), "the repository's file system monitor ran");

    // A plain copy.
    let w = World::new();
    w.put("tool", b"#!/bin/sh\n");
    std::fs::set_permissions(w.ws.join("tool"), std::fs::Permissions::from_mode(0o4750)).unwrap();
    let id = w.exec(None, "zero", turn_of(vec![write("a.txt", "a turn 0\n")]));
    let dir = w.tmp.path().join("copy");
    new_session(&w, &id, &dir);
    let mode = std::fs::metadata(dir.join("tool")).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o750);
}

#[test]
fn a_directory_that_names_nothing_usable_is_a_usage_error_naming_worktree() {
    let w = World::new();
    let id = w.exec(None, "zero", turn_of(vec![write("a.txt", "a turn 0\n")]));
    let bad = std::ffi::OsStr::from_bytes(b"bad\xffname");
    let out = w
        .command()
        .args(["fork", "--session", &id, "--turn", "0", "--worktree"])
        .arg(w.tmp.path().join(bad))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--worktree") && stderr.contains("UTF-8"),
        "{stderr}"
    );
    assert!(!w.tmp.path().join(bad).exists());
    let long = w.tmp.path().join("z".repeat(300));
    for (dir, says) in [
        (w.ws.clone(), "own workspace"),
        (long, "cannot create"),
        (Path::new("/proc/retrace-fork").to_path_buf(), "cannot create"),
    ] {
        let (_, stderr) = fork(&w, &id, &dir, 2);
        assert!(stderr.contains("--worktree") && stderr.contains(says), "{stderr}");
    }
    let (_, stderr) = w.code(&["fork", "--session", &id, "--turn", "0", "--worktree", ""], 2);
    assert!(stderr.contains("--worktree"), "{stderr}");
}

#[test]
fn a_repository_git_refuses_is_an_error_and_a_main_tree_of_a_linked_worktree_is_refused() {
    let w = World::new();
    let id = repo_with_a_turn(&w);
    // `.git` names a repository that is not there.
    std::fs::rename(w.ws.join(".git"), w.tmp.path().join("moved.git")).unwrap();
    std::fs::write(w.ws.join(".git"), b"gitdir: /nonexistent/.git\n").unwrap();
    let dir = w.tmp.path().join("fk");
    let (_, stderr) = fork(&w, &id, &dir, 1);
    assert!(stderr.contains("git refuses to open it"), "{stderr}");
    assert!(!dir.exists());
    std::fs::remove_file(w.ws.join(".git")).unwrap();
    std::fs::rename(w.tmp.path().join("moved.git"), w.ws.join(".git")).unwrap();

    // The workspace a linked worktree: its main working tree is the repository too.
    let linked = w.tmp.path().join("linked");
    git(
        &w.ws,
        &["worktree", "add", "-q", "--detach", linked.to_str().unwrap()],
    );
    let model = w.script(turn_of(vec![write("a.txt", "l\n")]));
    let linked_ws = linked.to_str().unwrap();
    let (stdout, _) = w.code(
        &[
            "exec",
            "--json",
            "--workspace",
            linked_ws,
            "--model",
            &model,
            "go",
        ],
        0,
    );
    let result: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let id = result["session_id"].as_str().unwrap().to_string();
    let inside = w.ws.join("inside-main");
    let (_, stderr) = fork(&w, &id, &inside, 2);
    assert!(stderr.contains("--worktree"), "{stderr}");
    assert!(!inside.exists());
}

/// `retrace fork --json` of `id` at turn 0 into `dir`, started (its output piped).
fn spawn_fork(w: &World, id: &str, dir: &Path) -> std::process::Child {
    w.command()
        .args(fork_args(id, dir))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// [`spawn_fork`], sent `signal` as soon as `dir` appears.
fn signal_part_way(w: &World, id: &str, dir: &Path, signal: nix::sys::signal::Signal) -> std::process::Child {
    let child = spawn_fork(w, id, dir);
    let start = std::time::Instant::now();
    while !dir.exists() && start.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
    child
}

#[test]
fn the_leftover_of_an_interrupted_fork_is_named_and_a_stopped_fork_removes_what_it_made() {
    let w = World::new();
    let id = repo_with_a_turn(&w);
    std::fs::create_dir(w.ws.join("u")).unwrap();
    for i in 0..2000 {
        w.put(&format!("u/f{i}.txt"), b"untracked\n");
    }
    // A file of the workspace named like the marker earlier builds kept is copied as any other.
    w.put(".retrace-fork-incomplete", b"mine\n");
    let whole = w.tmp.path().join("whole");
    fork(&w, &id, &whole, 0);
    assert_eq!(
        std::fs::read(whole.join(".retrace-fork-incomplete")).unwrap(),
        b"mine\n"
    );

    // SIGKILL part way: what it made stays, and a fork into it names it as an interrupted
    // fork's leftover (not merely "not empty", and not a fork still running).
    let left = w.tmp.path().join("left");
    let child = signal_part_way(&w, &id, &left, nix::sys::signal::Signal::SIGKILL);
    let killed = !child.wait_with_output().unwrap().status.success();
    if killed && std::fs::read_dir(&left).is_ok_and(|mut d| d.next().is_some()) {
        let (_, stderr) = fork(&w, &id, &left, 2);
        assert!(stderr.contains("interrupted fork"), "{stderr}");
    }

    // SIGTERM part way: what was made goes, the worktree is not registered.
    let dir = w.tmp.path().join("stopped");
    let child = signal_part_way(&w, &id, &dir, nix::sys::signal::Signal::SIGTERM);
    let out = child.wait_with_output().unwrap();
    if out.status.success() {
        // Finished before the signal came: whole.
        assert!(dir.join("u/f1999.txt").is_file());
    } else {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("interrupted") || stderr.contains("stopping"),
            "{stderr}"
        );
        assert!(!dir.exists(), "what the fork made was left");
        assert!(!git(&w.ws, &["worktree", "list"]).contains("stopped"));
    }
}

/// Every file under `dir` with its bytes.
fn files_under(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    fn go(root: &Path, dir: &Path, out: &mut std::collections::BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                go(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    go(dir, dir, &mut out);
    out
}

#[test]
fn a_fork_waits_for_no_writer_and_writes_nothing_of_the_source() {
    let w = World::new();
    w.put("a.txt", b"a\n");
    let model = w.script(turn_of(vec![write("a.txt", "a turn 0\n")]));
    let ws = w.ws.display().to_string();
    let (stdout, _) = w.code(
        &[
            "exec",
            "--json",
            "--backend",
            "git",
            "--workspace",
            &ws,
            "--model",
            &model,
            "zero",
        ],
        0,
    );
    let result: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let id = result["session_id"].as_str().unwrap().to_string();
    w.exec(Some(&id), "one", turn_of(vec![write("a.txt", "a1\n")]));
    let home = w.tmp.path().join("home");
    // The lease file says who last held it: not part of what a fork must leave as it was.
    let kept = |m: std::collections::BTreeMap<String, Vec<u8>>| -> std::collections::BTreeMap<_, _> {
        m.into_iter().filter(|(k, _)| !k.ends_with(".lease")).collect()
    };
    let before = kept(files_under(&home));
    // Another process holds the session's writer lease (as a terminal UI or `serve` would): it
    // may run a turn while the files are copied, so the fork is refused, saying where to fork.
    let lease = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(w.sessions_dir().join(format!("{id}.lease")))
        .unwrap();
    lease.lock().unwrap();
    let dir = w.tmp.path().join("fk");
    let dir_arg = dir.display().to_string();
    let (_, busy) = w.code(
        &[
            "fork",
            "--session",
            &id,
            "--turn",
            "1",
            "--worktree",
            &dir_arg,
            "--json",
        ],
        1,
    );
    assert!(
        busy.contains("open in another Retrace") && busy.contains("/fork --worktree"),
        "{busy}"
    );
    assert!(!dir.exists(), "a refused fork made its directory");
    lease.unlock().unwrap();
    new_session(&w, &id, &dir);
    assert_eq!(std::fs::read(dir.join("a.txt")).unwrap(), b"a\n");
    let after: std::collections::BTreeMap<_, _> = kept(files_under(&home))
        .into_iter()
        .filter(|(k, _)| before.contains_key(k) || k.contains(&id))
        .collect();
    assert_eq!(
        after, before,
        "the source's log, sidecar and git store are as they were"
    );
}

fn skipped_paths(out: &str) -> Vec<(String, String)> {
    let j: serde_json::Value = serde_json::from_str(out).unwrap();
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

#[test]
fn a_path_whose_turn_start_was_written_is_not_listed_as_left_out_and_special_files_are() {
    for git_repo in [false, true] {
        let w = World::new();
        let id = if git_repo {
            repo_with_a_turn(&w)
        } else {
            w.put("a.txt", b"a0\n");
            w.exec(None, "zero", turn_of(vec![write("a.txt", "a turn 0\n")]))
        };
        // A FIFO where the file was, and one of its own.
        std::fs::remove_file(w.ws.join("a.txt")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(w.ws.join("a.txt"))
            .arg(w.ws.join("pipe"))
            .status()
            .unwrap();
        assert!(made.success());
        let dir = w.tmp.path().join("fk");
        let (out, _) = fork(&w, &id, &dir, 0);
        assert_eq!(std::fs::read(dir.join("a.txt")).unwrap(), b"a0\n");
        let skipped = skipped_paths(&out);
        assert_eq!(
            skipped,
            [("pipe".to_string(), "special".to_string())],
            "git: {git_repo}"
        );
    }
}

#[test]
fn removing_a_fork_never_reaches_into_a_file_system_mounted_inside_it() {
    for git_repo in [false, true] {
        let w = World::new();
        let id = if git_repo {
            repo_with_a_turn(&w)
        } else {
            w.exec(None, "zero", turn_of(vec![write("a.txt", "a turn 0\n")]))
        };
        let dir = w.tmp.path().join("fk");
        let new = new_session(&w, &id, &dir);
        let elsewhere = w.tmp.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("b.txt"), b"precious\n").unwrap();
        std::fs::create_dir(dir.join("mnt")).unwrap();
        let mounted = std::process::Command::new("mount")
            .arg("--bind")
            .arg(&elsewhere)
            .arg(dir.join("mnt"))
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            eprintln!("skipped: cannot bind-mount here (not root)");
            return;
        }
        // Unmounted before anything is asserted, so that a failure leaves no mount behind.
        let out = w.run(&["sessions", "delete", &new, "--remove-worktree"]);
        let umounted = std::process::Command::new("umount").arg(dir.join("mnt")).status();
        assert!(umounted.unwrap().success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{stderr}");
        assert!(stderr.contains("mounted inside it"), "{stderr}");
        assert_eq!(std::fs::read(elsewhere.join("b.txt")).unwrap(), b"precious\n");
        assert!(dir.join("mnt").is_dir(), "nothing was removed");
    }
}

#[test]
fn removing_the_worktree_of_a_session_that_has_none_says_so_and_keeps_its_workspace() {
    let w = World::new();
    let id = w.exec(None, "zero", turn_of(vec![write("a.txt", "a turn 0\n")]));
    let out = w.run(&["sessions", "delete", &id, "--remove-worktree"]);
    assert_eq!(out.status.code(), Some(0));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("not forked into a new workspace"), "{said}");
    assert!(w.ws.join("a.txt").is_file());
}

#[test]
fn a_worktree_fork_keeps_the_modes_of_untracked_directories() {
    let w = World::new();
    let id = repo_with_a_turn(&w);
    std::fs::create_dir(w.ws.join("private")).unwrap();
    std::fs::create_dir(w.ws.join("shared")).unwrap();
    w.put("private/key", b"k\n");
    w.put("shared/open.txt", b"o\n");
    std::fs::set_permissions(w.ws.join("private"), std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::set_permissions(w.ws.join("shared"), std::fs::Permissions::from_mode(0o777)).unwrap();
    let dir = w.tmp.path().join("modes");
    fork(&w, &id, &dir, 0);
    let mode = |p: &str| std::fs::metadata(dir.join(p)).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode("private"), 0o700, "a private directory stays private");
    assert_eq!(mode("shared"), 0o777);
    assert_eq!(std::fs::read(dir.join("private/key")).unwrap(), b"k\n");
}

#[test]
fn a_locked_worktree_is_not_removed_and_says_how_to_unlock_it() {
    let w = World::new();
    let id = repo_with_a_turn(&w);
    let dir = w.tmp.path().join("locked");
    let new = new_session(&w, &id, &dir);
    git(&w.ws, &["worktree", "lock", dir.to_str().unwrap()]);
    let (_, stderr) = w.code(&["sessions", "delete", &new, "--remove-worktree"], 3);
    assert!(stderr.contains("locked git worktree"), "{stderr}");
    assert!(stderr.contains("git worktree unlock"), "{stderr}");
    assert!(dir.join("a.txt").is_file(), "nothing was deleted");
    git(&w.ws, &["worktree", "unlock", dir.to_str().unwrap()]);
    w.code(&["sessions", "delete", &new, "--remove-worktree"], 0);
    assert!(!dir.exists());
    assert!(!git(&w.ws, &["worktree", "list"]).contains("locked"));
}
