//! Directories the restored turns' tools created (SPEC §5.2): a restore that leaves them empty
//! removes them (`rmdir` only, never through a symlink), and undo creates them again. Anything
//! else in them — a user's file — keeps them.

use std::fs;
use std::path::Path;

use crate::hostile_support::{choice, edit as tool, open};
use retrace_checkpoint::{BeginTurn, CheckpointStore, CommitOptions, StoreOptions};
use retrace_protocol::OnConflict;
use retrace_testkit::Scratch;

fn yes() -> CommitOptions {
    choice(OnConflict::Refuse)
}

fn is_dir(s: &Scratch, p: &str) -> bool {
    s.workspace.join(p).symlink_metadata().is_ok_and(|m| m.is_dir())
}

#[test]
fn a_restore_removes_the_directories_its_turns_created_and_undo_brings_them_back() {
    let s = Scratch::new().unwrap();
    fs::create_dir(s.workspace.join("old")).unwrap();
    let mut store = open(&s);
    let t0 = store.begin_turn(BeginTurn::default()).unwrap();
    tool(&mut store, &s, "a/b/new.txt", Some(b"new"));
    tool(&mut store, &s, "old/x/y.txt", Some(b"y"));
    tool(&mut store, &s, "e/sub/gone.txt", Some(b"g"));
    // Emptied within the turn: `e/sub` is left empty, and still the turn's.
    tool(&mut store, &s, "e/sub/gone.txt", None);
    store.end_turn();

    let plan = store.plan_restore(t0).unwrap();
    let out = store.commit(&plan, yes()).unwrap();
    for d in ["a/b", "a", "old/x", "e/sub", "e"] {
        assert!(!is_dir(&s, d), "{d} should be gone");
    }
    assert!(
        is_dir(&s, "old"),
        "a directory that was there before the turn stays"
    );

    store.undo(out.transaction_id.as_deref().unwrap()).unwrap();
    assert_eq!(fs::read(s.workspace.join("a/b/new.txt")).unwrap(), b"new");
    assert_eq!(fs::read(s.workspace.join("old/x/y.txt")).unwrap(), b"y");
    assert!(
        is_dir(&s, "e/sub"),
        "the empty directory comes back with the undo"
    );
}

#[test]
fn a_directory_holding_anything_else_stays() {
    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    let t0 = store.begin_turn(BeginTurn::default()).unwrap();
    tool(&mut store, &s, "d/x.txt", Some(b"x"));
    tool(&mut store, &s, "d/inner/y.txt", Some(b"y"));
    store.end_turn();
    fs::write(s.workspace.join("d/mine.txt"), b"the user's").unwrap();

    let plan = store.plan_restore(t0).unwrap();
    store.commit(&plan, yes()).unwrap();
    assert!(!s.workspace.join("d/x.txt").exists());
    assert!(!is_dir(&s, "d/inner"), "emptied: removed");
    assert_eq!(fs::read(s.workspace.join("d/mine.txt")).unwrap(), b"the user's");
}

#[test]
fn a_revert_removes_the_directories_of_its_file_only() {
    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    store.begin_turn(BeginTurn::default()).unwrap();
    tool(&mut store, &s, "p/one.txt", Some(b"1"));
    tool(&mut store, &s, "q/two.txt", Some(b"2"));
    store.end_turn();
    fs::remove_file(s.workspace.join("q/two.txt")).unwrap();

    let plan = store.plan_file_revert(Path::new("p/one.txt")).unwrap();
    store.commit(&plan, yes()).unwrap();
    assert!(!is_dir(&s, "p"));
    assert!(is_dir(&s, "q"), "another file's directory is not the revert's");
}

#[test]
fn a_directory_swapped_for_a_symlink_is_never_followed() {
    let s = Scratch::new().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::create_dir(outside.path().join("inner")).unwrap();
    let mut store = open(&s);
    let t0 = store.begin_turn(BeginTurn::default()).unwrap();
    tool(&mut store, &s, "top.txt", Some(b"t"));
    tool(&mut store, &s, "l/inner/z.txt", Some(b"z"));
    store.end_turn();
    // The user moves the turn's directory away and leaves a symlink to an outside directory
    // with an empty `inner` in its place.
    fs::rename(s.workspace.join("l"), s.workspace.join("l.moved")).unwrap();
    std::os::unix::fs::symlink(outside.path(), s.workspace.join("l")).unwrap();

    let plan = store.plan_restore(t0).unwrap();
    store
        .commit(
            &plan,
            CommitOptions {
                confirm: true,
                on_conflict: OnConflict::Skip,
            },
        )
        .unwrap();
    assert!(!s.workspace.join("top.txt").exists());
    assert!(outside.path().join("inner").is_dir(), "nothing removed outside");
    assert!(s
        .workspace
        .join("l")
        .symlink_metadata()
        .unwrap()
        .file_type()
        .is_symlink());
}

/// A record whose `createdDirs` names a directory that is no ancestor of its entry is not
/// trusted with it: the restore leaves that directory alone.
#[test]
fn a_forged_created_dir_is_never_removed() {
    let s = Scratch::new().unwrap();
    fs::create_dir(s.workspace.join("precious")).unwrap();
    let mut store = open(&s);
    let t0 = store.begin_turn(BeginTurn::default()).unwrap();
    tool(&mut store, &s, "n/new.txt", Some(b"n"));
    store.end_turn();
    drop(store);
    let (seg, f) = crate::log_support::entry_frame(&s.sidecar, t0, "n/new.txt");
    assert_eq!(f.header["line"]["entry"]["createdDirs"], serde_json::json!(["n"]));
    crate::log_support::edit_headers(&seg, |h| {
        if h["line"]["entry"]["path"] == "n/new.txt" {
            h["line"]["entry"]["createdDirs"] = serde_json::json!(["n", "precious"]);
        }
    });

    let mut store = open(&s);
    let plan = store.plan_restore(t0).unwrap();
    store.commit(&plan, yes()).unwrap();
    assert!(!is_dir(&s, "n"));
    assert!(is_dir(&s, "precious"));
}

/// A directory the restore removed that someone makes again (here another session's tool, then
/// the user emptying it) is theirs: reopening the store, with nothing written by this session
/// since, leaves it (recovery finishes only a restore killed before its `rmdir`).
#[test]
fn a_directory_made_again_after_the_restore_stays_across_a_reopen() {
    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    let t0 = store.begin_turn(BeginTurn::default()).unwrap();
    tool(&mut store, &s, "a", Some(b"a0"));
    tool(&mut store, &s, "a", Some(b"a1"));
    tool(&mut store, &s, "d/x.txt", Some(b"x"));
    store.end_turn();
    // The user puts a directory where `a` was: a type change the restore skips.
    fs::remove_file(s.workspace.join("a")).unwrap();
    fs::create_dir(s.workspace.join("a")).unwrap();

    let plan = store.plan_restore(t0).unwrap();
    store.commit(&plan, choice(OnConflict::Skip)).unwrap();
    assert!(!is_dir(&s, "d"), "the turn's directory goes with the restore");
    assert!(is_dir(&s, "a"), "the user's directory stays");

    // Another session on the same workspace writes `d/e/m.txt` (making `d` and `d/e` again); the
    // user deletes the file and `d/e`, and leaves `d`.
    let peer_sidecar = s.tmp.path().join("peer.ckpt");
    let mut peer = CheckpointStore::open(&peer_sidecar, &s.workspace, StoreOptions::default()).unwrap();
    peer.begin_turn(BeginTurn::default()).unwrap();
    tool(&mut peer, &s, "d/e/m.txt", Some(b"m"));
    fs::remove_file(s.workspace.join("d/e/m.txt")).unwrap();
    fs::remove_dir(s.workspace.join("d/e")).unwrap();
    assert!(is_dir(&s, "d"));

    for _ in 0..2 {
        drop(store);
        store = open(&s);
        assert!(
            is_dir(&s, "d"),
            "a directory made again since the restore is not Retrace's to remove"
        );
    }
}
