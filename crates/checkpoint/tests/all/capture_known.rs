//! Before-images the caller knows (the git backend): a shell command's changes, captured after
//! the fact from what each path was, restore like an edit tool's, byte for byte with modes;
//! a hand edit after them is a conflict; created directories go again.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Arc;

use retrace_checkpoint::{
    BeginTurn, CheckpointStore, CommitOptions, Known, StoreOptions, SNAPSHOT_CAPTURE_SOURCE,
};
use retrace_fsutil::Fs;
use retrace_protocol::{GapReason, OnConflict};
use retrace_testkit::Scratch;

fn open(s: &Scratch) -> CheckpointStore {
    let opts = StoreOptions {
        fs: Fs::without_sync(),
        clock: Arc::new(|| time::OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()),
        ..StoreOptions::default()
    };
    CheckpointStore::open(&s.sidecar, &s.workspace, opts).unwrap()
}

/// A "shell command" that modifies, creates (in new directories), deletes, renames and chmods,
/// captured from known before-states; then the turn is rewound.
fn shell_turn(s: &Scratch, store: &mut CheckpointStore) -> u64 {
    s.write("m.txt", b"before\n").unwrap();
    s.write("d.txt", b"doomed\n").unwrap();
    s.write("r.txt", b"renamed\n").unwrap();
    s.write("x.sh", b"#!/bin/sh\n").unwrap();
    fs::set_permissions(s.workspace.join("x.sh"), fs::Permissions::from_mode(0o644)).unwrap();
    let n = store.begin_turn(BeginTurn::default()).unwrap();
    // the command runs
    s.write("m.txt", b"after sed\n").unwrap();
    fs::create_dir_all(s.workspace.join("new/deep")).unwrap();
    s.write("new/deep/c.txt", b"created\n").unwrap();
    fs::remove_file(s.workspace.join("d.txt")).unwrap();
    fs::rename(s.workspace.join("r.txt"), s.workspace.join("r2.txt")).unwrap();
    fs::set_permissions(s.workspace.join("x.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    // what the snapshots said it changed, as it was before
    let file = |b: &[u8], mode| Known::File {
        bytes: b.to_vec(),
        mode,
    };
    let items = vec![
        (PathBuf::from("m.txt"), file(b"before\n", 0o644)),
        (
            PathBuf::from("new/deep/c.txt"),
            Known::Absent {
                created_dirs: vec!["new".into(), "new/deep".into()],
            },
        ),
        (PathBuf::from("d.txt"), file(b"doomed\n", 0o644)),
        (PathBuf::from("r.txt"), file(b"renamed\n", 0o644)),
        (PathBuf::from("r2.txt"), Known::Absent { created_dirs: vec![] }),
        (PathBuf::from("x.sh"), file(b"#!/bin/sh\n", 0o644)),
        (
            PathBuf::from("huge.bin"),
            Known::Unkept {
                reason: GapReason::Oversized,
                detail: "over the cap".into(),
            },
        ),
    ];
    let paths: Vec<PathBuf> = items.iter().map(|(p, _)| p.clone()).collect();
    let report = store.capture_before_known(items, Some("bash")).unwrap();
    assert_eq!(report.captured.len(), 7);
    assert_eq!(report.gaps.len(), 1);
    let kept: Vec<PathBuf> = paths
        .into_iter()
        .filter(|p| p != &PathBuf::from("huge.bin"))
        .collect();
    store.capture_after(&kept).unwrap();
    store.finish_turn().unwrap();
    n
}

#[test]
fn a_shell_commands_changes_restore_byte_for_byte_with_modes() {
    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    let n = shell_turn(&s, &mut store);
    let t = store.turn(n).unwrap();
    assert!(t
        .files
        .iter()
        .all(|f| f.capture_source.as_deref() == Some(SNAPSHOT_CAPTURE_SOURCE)));
    let plan = store.plan_restore(n).unwrap();
    let done = store
        .commit(
            &plan,
            CommitOptions {
                confirm: true,
                on_conflict: OnConflict::Refuse,
            },
        )
        .unwrap();
    let read = |p: &str| fs::read(s.workspace.join(p)).ok();
    assert_eq!(read("m.txt").as_deref(), Some(&b"before\n"[..]));
    assert_eq!(read("d.txt").as_deref(), Some(&b"doomed\n"[..]));
    assert_eq!(read("r.txt").as_deref(), Some(&b"renamed\n"[..]));
    assert_eq!(read("r2.txt"), None);
    assert_eq!(read("new/deep/c.txt"), None);
    assert!(
        !s.workspace.join("new").exists(),
        "the directories the command made are gone"
    );
    let mode = fs::metadata(s.workspace.join("x.sh"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o644);
    assert!(store.fsck().ok, "{:?}", store.fsck());
    // and undone: the command's results are back
    store.undo(done.transaction_id.as_deref().unwrap()).unwrap();
    assert_eq!(read("m.txt").as_deref(), Some(&b"after sed\n"[..]));
    assert_eq!(read("new/deep/c.txt").as_deref(), Some(&b"created\n"[..]));
}

#[test]
fn a_hand_edit_after_the_command_is_a_conflict_and_survives_a_reopen() {
    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    let n = shell_turn(&s, &mut store);
    s.write("m.txt", b"by hand\n").unwrap();
    drop(store);
    let mut store = open(&s);
    let plan = store.plan_restore(n).unwrap();
    let conflicted: Vec<&str> = plan
        .plan
        .files
        .iter()
        .filter(|f| f.conflict.is_some())
        .map(|f| f.path.as_str())
        .collect();
    assert_eq!(conflicted, ["m.txt"]);
    let refused = store.commit(
        &plan,
        CommitOptions {
            confirm: true,
            on_conflict: OnConflict::Refuse,
        },
    );
    assert!(refused.is_err());
    assert_eq!(fs::read(s.workspace.join("m.txt")).unwrap(), b"by hand\n");
}
