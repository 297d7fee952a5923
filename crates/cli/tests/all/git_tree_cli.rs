//! The git backend and the shape of the tree a shell command leaves (through the real binary
//! and the script model): a deep tree it makes is recorded once per directory and rewinds whole;
//! a repository of its own it makes, and a directory the walk cannot read, are gaps, never files a
//! rewind deletes nor changes silently lost; new directories go with the last file reverted.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::git_backend_cli::{changed_paths, session_of, tree, World};

/// The last `checkpoint_captured` event of an `exec --json` run's lines.
fn last_captured(lines: &[Value]) -> &Value {
    lines
        .iter()
        .rev()
        .find(|l| l["type"] == "checkpoint_captured")
        .unwrap()
}

/// Bytes of every checkpoint log segment under `home` (the sessions' records).
fn log_bytes(home: &Path) -> u64 {
    let mut total = 0;
    for s in std::fs::read_dir(home.join("sessions")).unwrap() {
        let log = s.unwrap().path().join("log");
        if let Ok(segs) = std::fs::read_dir(&log) {
            total += segs.map(|e| e.unwrap().metadata().unwrap().len()).sum::<u64>();
        }
    }
    total
}

/// A command that makes a deep tree with a file at every level: its record names each directory
/// it made once (not once for every file below it: 5 MB of record for 200 levels, cubic in the
/// depth), and a rewind takes the whole tree away, directories and all.
#[test]
fn a_deep_tree_a_command_makes_is_recorded_once_per_directory_and_rewinds_whole() {
    let w = World::new();
    w.put("base", b"1\n");
    let id = session_of(&w.exec(None, &["true"]));
    let before = log_bytes(&w.tmp.path().join("home"));
    w.exec(
        Some(&id),
        &[
            "p=.; for i in $(seq 1 200); do p=$p/d; mkdir $p; echo $i > $p/f; done; \
           mkdir -p x/y; echo a > x/y/a; echo b > x/y/b",
        ],
    );
    let items = w.json(&["transcript", "--session", &id, "--items", "--json"]);
    assert_eq!(changed_paths(&items).len(), 202, "{items}");
    let grew = log_bytes(&w.tmp.path().join("home")) - before;
    assert!(grew < 1_000_000, "the turn's record took {grew} bytes");
    w.rewind_code(&id, 1);
    assert_eq!(tree(&w.ws, &[".git"]).keys().collect::<Vec<_>>(), ["base"]);
    assert!(
        !w.ws.join("d").exists() && !w.ws.join("x").exists(),
        "no directory left"
    );
}

/// A repository of its own that a command makes is not a file the command created: a gap, which
/// a rewind leaves as it is (and does not refuse over); the rest of the command is restored.
#[test]
fn a_repository_a_command_makes_is_a_gap_a_rewind_leaves() {
    let w = World::new();
    w.put("base", b"1\n");
    let id = session_of(&w.exec(None, &["true"]));
    w.exec(
        Some(&id),
        &["mkdir other && cd other && git init -q && echo 7 > o.txt && cd .. && echo 2 > base"],
    );
    let items = w.json(&["transcript", "--session", &id, "--items", "--json"]);
    assert_eq!(changed_paths(&items), ["base"], "{items}");
    let out = w.rewind_code(&id, 1);
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(std::fs::read(w.ws.join("base")).unwrap(), b"1\n");
    assert_eq!(std::fs::read(w.ws.join("other/o.txt")).unwrap(), b"7\n");
    assert!(w.ws.join("other/.git").is_dir());
}

/// A git directory standing on its own — the one `git init --separate-git-dir` makes beside its
/// work tree, or a bare repository — is a repository too: a gap a rewind leaves, never files it
/// deletes (which left the work tree's `.git` naming nothing).
#[test]
fn a_git_directory_a_command_makes_apart_from_its_work_tree_is_left_by_a_rewind() {
    let w = World::new();
    w.put("base", b"1\n");
    w.put("kept/a", b"a\n");
    let id = session_of(&w.exec(None, &["true"]));
    w.exec(
        Some(&id),
        &[
            "git init -q --separate-git-dir=gd sub && git init -q --bare bare.git \
           && git init -q --bare kept && echo 2 > base",
        ],
    );
    let items = w.json(&["transcript", "--session", &id, "--items", "--json"]);
    assert_eq!(changed_paths(&items), ["base"], "{items}");
    // The preview names each repository it leaves, one line each.
    let (_, text, _) = w.run(&[
        "rewind",
        "--session",
        &id,
        "--turn",
        "1",
        "--scope",
        "code",
        "--dry-run",
    ]);
    for repo in ["bare.git", "gd", "sub"] {
        let line = format!("! turn 1: {repo} — out of the walk's sight (ignored, a repository of its own");
        assert!(text.contains(&line), "{repo}: {text}");
    }
    let out = w.rewind_code(&id, 1);
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(std::fs::read(w.ws.join("base")).unwrap(), b"1\n");
    assert_eq!(std::fs::read(w.ws.join("kept/a")).unwrap(), b"a\n");
    for head in ["gd/HEAD", "bare.git/HEAD", "kept/HEAD"] {
        assert!(w.ws.join(head).is_file(), "{head} is still there");
    }
    let status = Command::new("git")
        .args(["-C", "sub", "status", "--short"])
        .current_dir(&w.ws)
        .output()
        .unwrap();
    assert!(status.status.success(), "{status:?}");
}

/// A directory a later command completes into a git directory (its `objects/` made last): a
/// rewind to before the files that are now the repository's writes and deletes nothing in it —
/// they are its config and refs now — and restores the rest.
#[test]
fn files_that_became_a_git_directorys_are_left_by_a_rewind() {
    let w = World::new();
    w.put("base", b"1\n");
    let id = session_of(&w.exec(None, &["true"]));
    w.exec(
        Some(&id),
        &["echo 2 > base && mkdir -p x/refs && echo 'ref: refs/heads/main' > x/HEAD && echo r > x/refs/r1"],
    );
    w.exec(Some(&id), &["mkdir x/objects"]);
    let out = w.rewind_code(&id, 1);
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(std::fs::read(w.ws.join("base")).unwrap(), b"1\n");
    assert_eq!(std::fs::read(w.ws.join("x/refs/r1")).unwrap(), b"r\n");
    assert!(w.ws.join("x/HEAD").is_file() && w.ws.join("x/objects").is_dir());
}

/// A directory made a git directory after a rewind (a symlinked `HEAD`, as old git made it): the
/// rewind's undo, and the redo after it, write nothing inside it — its config runs commands.
#[test]
fn an_undo_or_redo_never_writes_inside_a_git_directory_made_since() {
    let w = World::new();
    w.put("base", b"1\n");
    let id = session_of(&w.exec(None, &["true"]));
    w.exec(Some(&id), &["mkdir y && echo plain > y/config"]);
    w.exec(
        Some(&id),
        &["printf '[core]\\n\\tfsmonitor = evil\\n' > y/config"],
    );
    assert_eq!(w.rewind_code(&id, 2)["ok"], true);
    assert_eq!(std::fs::read(w.ws.join("y/config")).unwrap(), b"plain\n");
    let made = "mkdir y/objects y/refs && ln -s refs/heads/main y/HEAD";
    assert!(Command::new("bash")
        .args(["-c", made])
        .current_dir(&w.ws)
        .status()
        .unwrap()
        .success());
    let (code, _, err) = w.run(&["undo", "--session", &id, "--json"]);
    assert_eq!(code, 3, "the undo is refused: {err}");
    assert_eq!(std::fs::read(w.ws.join("y/config")).unwrap(), b"plain\n");
    // Undone before the directory became one, the redo is refused once it is.
    std::fs::remove_file(w.ws.join("y/HEAD")).unwrap();
    w.json(&["undo", "--session", &id, "--json"]);
    assert!(std::fs::read(w.ws.join("y/config"))
        .unwrap()
        .starts_with(b"[core]"));
    std::fs::write(w.ws.join("y/config"), b"[core]\n\tfsmonitor = evil\n").unwrap();
    std::os::unix::fs::symlink("refs/heads/main", w.ws.join("y/HEAD")).unwrap();
    let (code, _, err) = w.run(&["redo", "--session", &id, "--json"]);
    assert_eq!(code, 3, "the redo is refused: {err}");
    assert!(std::fs::read(w.ws.join("y/config"))
        .unwrap()
        .starts_with(b"[core]"));
}

/// A directory whose path is longer than the system allows cannot be walked: a command's change
/// in it is not tracked, and the turn says so (a gap naming the directory, partial coverage)
/// instead of calling itself complete.
#[test]
fn a_directory_too_deep_to_walk_is_a_gap_never_a_silent_loss() {
    let w = World::new();
    // 25 levels of 200-byte names, made one relative step at a time (a whole path that long
    // cannot be named at once).
    let made = Command::new("bash")
        .args([
            "-c",
            "n=$(printf '%0200d' 0); for i in $(seq 25); do mkdir $n && cd $n; done",
        ])
        .current_dir(&w.ws)
        .status()
        .unwrap();
    assert!(made.success());
    let id = session_of(&w.exec(None, &["true"]));
    let lines = w.exec(
        Some(&id),
        &["for i in $(seq 25); do cd 0*; done; echo changed > f"],
    );
    let captured = last_captured(&lines);
    let gaps = captured["gaps"].as_array().unwrap();
    assert!(
        gaps.iter()
            .any(|g| g["reason"] == "untracked" && g["detail"].as_str().unwrap().contains("cannot read")),
        "{captured}"
    );
    let items = w.json(&["transcript", "--session", &id, "--items", "--json"]);
    assert!(changed_paths(&items).is_empty(), "{items}");
}

/// Files a command made in new directories, reverted one by one in either order: the
/// directories go with the last of them (each directory is named by one file only).
#[test]
fn files_reverted_one_by_one_take_their_new_directories_in_either_order() {
    for order in [["d/e/a", "d/e/b"], ["d/e/b", "d/e/a"]] {
        let w = World::new();
        w.put("base", b"1\n");
        let id = session_of(&w.exec(None, &["true"]));
        w.exec(Some(&id), &["mkdir -p d/e && echo a > d/e/a && echo b > d/e/b"]);
        for f in order {
            w.json(&["revert", "--session", &id, "--yes", "--json", f]);
        }
        assert!(!w.ws.join("d").exists(), "{order:?}: no directory left");
        assert!(w.ws.join("base").exists());
    }
}

/// A directory the walk kept that a command makes a repository of its own (or removes and makes
/// again as one): what the command did to the files it kept there is still its change — a
/// rewritten file captured, a removed one a deletion — and a rewind brings them back; the new
/// repository stays.
#[test]
fn a_kept_directory_a_command_makes_a_repository_keeps_its_files_changes() {
    for command in [
        "git init -q plain && echo changed > plain/a && rm plain/c",
        "rm -rf plain && mkdir plain && git init -q plain && echo new > plain/z",
    ] {
        let w = World::new();
        w.put("plain/a", b"a\n");
        w.put("plain/c", b"c\n");
        let id = session_of(&w.exec(None, &["true"]));
        w.exec(Some(&id), &[command]);
        let items = w.json(&["transcript", "--session", &id, "--items", "--json"]);
        let changed = changed_paths(&items);
        assert!(changed.contains(&"plain/c".to_string()), "{command}: {items}");
        w.rewind_code(&id, 1);
        assert_eq!(std::fs::read(w.ws.join("plain/a")).unwrap(), b"a\n", "{command}");
        assert_eq!(std::fs::read(w.ws.join("plain/c")).unwrap(), b"c\n", "{command}");
        assert!(
            w.ws.join("plain/.git").is_dir(),
            "{command}: the repository stays"
        );
    }
}

/// Directories a command renames (`mv y y.old`) carry their files' inodes and change times along:
/// the files are the command's moves, not things that only came into sight — no gap, and a rewind
/// puts each directory back under its old name, the new one gone.
#[test]
fn directories_a_command_renames_are_its_moves_and_rewind_whole() {
    let w = World::new();
    w.put("y/g", b"orig\n");
    let id = session_of(&w.exec(None, &["mkdir x && echo f > x/f && echo mod > y/g"]));
    // born well before the command that moves them, as a user's files are
    std::thread::sleep(std::time::Duration::from_millis(300));
    let lines = w.exec(Some(&id), &["mv x x.old && mv y y.old"]);
    let last = last_captured(&lines);
    assert_eq!(last["gaps"].as_array().map(Vec::len), Some(0), "{last}");
    w.rewind_code(&id, 1);
    let after = tree(&w.ws, &[".git"]);
    let paths: Vec<&String> = after.keys().collect();
    assert_eq!(paths, ["x/f", "y/g"], "{after:?}");
    assert_eq!(after["y/g"].0, b"mod\n");
    assert!(!w.ws.join("x.old").exists() && !w.ws.join("y.old").exists());
}

/// A file whose path comes near the system's limit (4,080 of 4,096 bytes): its restore's temp
/// file and parked copy beside it have longer paths than one call takes, and are reached a piece
/// at a time; the rewind brings the file back, removes the new one, and leaves nothing beside it.
#[test]
fn a_file_whose_path_nears_the_limit_rewinds_and_leaves_nothing_beside_it() {
    let w = World::new();
    let mut dir = w.ws.clone();
    while 4080 - dir.as_os_str().len() > 201 + 21 {
        dir.push("p".repeat(200));
    }
    let last = 4080 - dir.as_os_str().len() - 1 - 20 - 1;
    dir.push("q".repeat(last));
    std::fs::create_dir_all(&dir).unwrap();
    let name = "f".repeat(20);
    let file = dir.join(&name);
    assert_eq!(file.as_os_str().len(), 4080);
    std::fs::write(&file, b"orig\n").unwrap();
    let rel = dir.strip_prefix(&w.ws).unwrap().display().to_string();
    let id = session_of(&w.exec(None, &["true"]));
    w.exec(
        Some(&id),
        &[&format!(
            "cd {rel} && echo changed > {name} && echo new > newfile"
        )],
    );
    w.rewind_code(&id, 1);
    assert_eq!(std::fs::read(&file).unwrap(), b"orig\n");
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, [name]);
}
