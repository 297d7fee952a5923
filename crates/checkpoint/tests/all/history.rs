//! A file's history (SPEC §5.8): every version of one path, oldest first, across turns, hand
//! edits, restores and undo.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use retrace_checkpoint::{BeginTurn, Change, CheckpointStore, CommitOptions, StoreOptions};
use retrace_fsutil::{sha256_bytes, Fs};
use retrace_protocol::{ChangeKind, OnConflict, VersionOrigin};
use retrace_testkit::Scratch;

fn opts() -> StoreOptions {
    StoreOptions {
        session_id: Some("history".into()),
        fs: Fs::without_sync(),
        clock: Arc::new(|| time::OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()),
        ..StoreOptions::default()
    }
}

fn turn(store: &mut CheckpointStore, s: &Scratch, path: &str, bytes: &[u8]) -> u64 {
    let n = store.begin_turn(BeginTurn::default()).unwrap();
    store
        .capture_before(&[Change::new(path, ChangeKind::Modify)], Some("write_file"))
        .unwrap();
    s.write(path, bytes).unwrap();
    store.capture_after(&[PathBuf::from(path)]).unwrap();
    store.finish_turn().unwrap();
    n
}

#[test]
fn turns_hand_edits_restores_and_undo_are_versions_in_order() {
    let s = Scratch::new().unwrap();
    let mut store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    turn(&mut store, &s, "a.txt", b"one\n");
    turn(&mut store, &s, "a.txt", b"two\n");
    s.write("a.txt", b"by hand\n").unwrap();
    let plan = store.plan_restore(1).unwrap();
    let opts = CommitOptions {
        confirm: true,
        on_conflict: OnConflict::Overwrite,
    };
    let done = store.commit(&plan, opts).unwrap();
    let restore_tx = done.transaction_id.clone().unwrap();
    store.undo(&restore_tx).unwrap();
    let h = store.file_history(Path::new("a.txt")).unwrap();
    let seen: Vec<(VersionOrigin, Option<String>)> =
        h.versions.iter().map(|v| (v.origin, v.sha256.clone())).collect();
    let sha = |b: &[u8]| Some(sha256_bytes(b));
    assert_eq!(
        seen,
        [
            (VersionOrigin::TurnStart, None),
            (VersionOrigin::TurnEnd, sha(b"one\n")),
            (VersionOrigin::TurnStart, sha(b"one\n")),
            (VersionOrigin::TurnEnd, sha(b"two\n")),
            (VersionOrigin::BeforeRestore, sha(b"by hand\n")),
            (VersionOrigin::Restore, sha(b"one\n")),
            (VersionOrigin::Undo, sha(b"by hand\n")),
            (VersionOrigin::Now, sha(b"by hand\n")),
        ],
        "{h:#?}"
    );
    let numbers: Vec<u32> = h.versions.iter().map(|v| v.version).collect();
    assert_eq!(numbers, (1..=8).collect::<Vec<u32>>());
    // A redo is a version of its own.
    store.redo(&restore_tx).unwrap();
    let h2 = store.file_history(Path::new("a.txt")).unwrap();
    let tail: Vec<VersionOrigin> = h2.versions[7..].iter().map(|v| v.origin).collect();
    assert_eq!(tail, [VersionOrigin::Redo, VersionOrigin::Now], "{h2:#?}");
    assert_eq!(h2.versions[7].sha256, sha(b"one\n"));
    assert!(h.versions.iter().all(|v| v.restorable), "{h:#?}");
    assert!(!h.versions[0].existed);
    assert_eq!(h.versions[1].turn, Some(0));
    assert_eq!(h.versions[3].size, Some(4));
    assert_eq!(
        h.versions[4].size,
        Some(8),
        "the hand edit's size, from the forward image"
    );
    fs::remove_file(s.workspace.join("a.txt")).unwrap();
    let h = store.file_history(Path::new("a.txt")).unwrap();
    let last = h.versions.last().unwrap();
    assert_eq!((last.origin, last.existed), (VersionOrigin::Now, false));
}

/// Any version can be restored as a one-file plan: from a before-image, an end pack, or the
/// forward image of a restore (the hand edit it replaced); with the conflict checks and the undo
/// of a revert.
#[test]
fn any_version_is_restored_with_conflict_checks_and_undo() {
    let s = Scratch::new().unwrap();
    let mut store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    turn(&mut store, &s, "a.txt", b"one\n");
    turn(&mut store, &s, "a.txt", b"two\n");
    s.write("a.txt", b"by hand\n").unwrap();
    let overwrite = CommitOptions {
        confirm: true,
        on_conflict: OnConflict::Overwrite,
    };
    let refuse = CommitOptions {
        confirm: true,
        on_conflict: OnConflict::Refuse,
    };
    // v2: turn 0's end ("one"), kept in its end pack. The hand edit is a conflict.
    let plan = store.plan_file_version(Path::new("a.txt"), 2).unwrap();
    assert_eq!(plan.plan.conflicts.len(), 1, "{:?}", plan.plan);
    assert!(store.commit(&plan, refuse).is_err());
    assert_eq!(s.read("a.txt").unwrap(), b"by hand\n");
    let done = store.commit(&plan, overwrite).unwrap();
    assert_eq!(s.read("a.txt").unwrap(), b"one\n");
    // The revert's forward image is the hand edit: a version, restorable in turn.
    let h = store.file_history(Path::new("a.txt")).unwrap();
    let hand = h
        .versions
        .iter()
        .find(|v| v.origin == VersionOrigin::BeforeRestore)
        .unwrap()
        .version;
    let plan = store.plan_file_version(Path::new("a.txt"), hand).unwrap();
    assert!(
        plan.plan.conflicts.is_empty(),
        "Retrace wrote what is there: {:?}",
        plan.plan
    );
    store.commit(&plan, refuse).unwrap();
    assert_eq!(s.read("a.txt").unwrap(), b"by hand\n");
    // v1: absent (before turn 0): a deletion.
    let plan = store.plan_file_version(Path::new("a.txt"), 1).unwrap();
    let out = store.commit(&plan, refuse).unwrap();
    assert!(!s.workspace.join("a.txt").exists());
    store.undo(out.transaction_id.as_deref().unwrap()).unwrap();
    assert_eq!(s.read("a.txt").unwrap(), b"by hand\n");
    let _ = done;
    // A version that is not there.
    let err = store.plan_file_version(Path::new("a.txt"), 99).unwrap_err();
    assert!(err.to_string().contains("has no version 99"), "{err}");
    let err = store.plan_file_version(Path::new("never.txt"), 1).unwrap_err();
    assert!(err.to_string().contains("never.txt"), "{err}");
}

/// The file on disk is never read through a symbolic link: a parent directory swapped for a link
/// to somewhere else gives a `now` that is not restorable and carries no hash of what is there.
#[test]
fn now_is_never_read_through_a_symlinked_directory() {
    let s = Scratch::new().unwrap();
    let mut store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    fs::create_dir_all(s.workspace.join("sub")).unwrap();
    turn(&mut store, &s, "sub/f.txt", b"agent\n");
    let outside = s.sidecar.parent().unwrap().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("f.txt"), b"secret\n").unwrap();
    fs::remove_dir_all(s.workspace.join("sub")).unwrap();
    std::os::unix::fs::symlink(&outside, s.workspace.join("sub")).unwrap();
    let h = store.file_history(Path::new("sub/f.txt")).unwrap();
    let now = h.versions.last().unwrap();
    assert_eq!(now.origin, VersionOrigin::Now);
    assert!(
        !now.restorable && now.sha256.is_none() && now.size.is_none(),
        "{now:#?}"
    );
    assert_ne!(now.sha256, Some(sha256_bytes(b"secret\n")));
}
