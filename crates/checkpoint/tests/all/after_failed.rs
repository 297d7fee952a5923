//! A tool that failed proves nothing (SPEC §5.2 "ownership proof"): after a failed call, a path
//! becomes Retrace's only where the disk holds what the tool meant to leave. The common failure —
//! the user changed the file between the preview and the run, so the tool refused — must leave
//! the user's bytes theirs, or a later restore would overwrite them without a conflict.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use retrace_checkpoint::model::Image;
use retrace_checkpoint::{BeginTurn, Change, CheckpointStore, StoreOptions};
use retrace_fsutil::{sha256_bytes, Fs};
use retrace_protocol::{ChangeKind, ConflictReason, FileAction};
use retrace_testkit::Scratch;

fn open(s: &Scratch) -> CheckpointStore {
    let opts = StoreOptions {
        fs: Fs::without_sync(),
        clock: Arc::new(|| time::OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()),
        ..StoreOptions::default()
    };
    CheckpointStore::open(&s.sidecar, &s.workspace, opts).unwrap()
}

fn begin(store: &mut CheckpointStore) -> u64 {
    store
        .begin_turn(BeginTurn {
            prompt: "p".into(),
            ..BeginTurn::default()
        })
        .unwrap()
}

fn image(bytes: &[u8]) -> Image {
    Image {
        existed: true,
        sha256: Some(sha256_bytes(bytes)),
        mode: Some(0o644),
    }
}

fn write(ws: &Path, path: &str, bytes: &[u8]) {
    let p = ws.join(path);
    fs::write(&p, bytes).unwrap();
    let mut perm = fs::metadata(&p).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o644);
    fs::set_permissions(&p, perm).unwrap();
}

/// Turn 0 writes `a.txt`; turn 1's edit of it is refused because the user saved the file after
/// the preview. A restore to turn 0 (which would write `a.txt` back to its state before turn 0)
/// must find the user's bytes a conflict.
#[test]
fn a_failed_tool_does_not_make_the_users_bytes_retraces() {
    let s = Scratch::new().unwrap();
    let ws = s.workspace.clone();
    let mut store = open(&s);
    begin(&mut store);
    let first = b"written by the agent\n";
    store
        .capture_before(
            &[Change::new("a.txt", ChangeKind::Create).with_intent(image(first))],
            Some("write_file"),
        )
        .unwrap();
    write(&ws, "a.txt", first);
    store.capture_after(&[PathBuf::from("a.txt")]).unwrap();
    store.finish_turn().unwrap();

    begin(&mut store);
    let meant = b"written by the agent, edited\n";
    store
        .capture_before(
            &[Change::new("a.txt", ChangeKind::Modify).with_intent(image(meant))],
            Some("edit_file"),
        )
        .unwrap();
    // The user saves the file; the tool's re-check refuses; the seam reports the failure.
    let users = b"the user's own words\n";
    write(&ws, "a.txt", users);
    store
        .capture_after_failed(&[(ws.join("a.txt"), Some(image(meant)))])
        .unwrap();
    store.finish_turn().unwrap();

    for turn in [0, 1] {
        let plan = store.plan_restore(turn).unwrap();
        let f = plan.plan.files.iter().find(|f| f.path == "a.txt").unwrap();
        assert_eq!(f.action, FileAction::Skip, "turn {turn}: {f:?}");
        assert_eq!(
            f.conflict.as_ref().map(|c| c.reason),
            Some(ConflictReason::ManualEdit),
            "turn {turn}: {f:?}"
        );
    }
    // Reopened (state.json and the records as written), the same.
    drop(store);
    let store = open(&s);
    let plan = store.plan_restore(0).unwrap();
    let f = plan.plan.files.iter().find(|f| f.path == "a.txt").unwrap();
    assert_eq!(
        f.conflict.as_ref().map(|c| c.reason),
        Some(ConflictReason::ManualEdit)
    );
    assert_eq!(fs::read(ws.join("a.txt")).unwrap(), users);
}

/// A tool that wrote its intent and then reported a failure still leaves Retrace's own bytes.
#[test]
fn a_failed_tool_whose_write_landed_leaves_them_retraces() {
    let s = Scratch::new().unwrap();
    let ws = s.workspace.clone();
    let mut store = open(&s);
    begin(&mut store);
    let meant = b"landed\n";
    store
        .capture_before(
            &[Change::new("b.txt", ChangeKind::Create).with_intent(image(meant))],
            Some("write_file"),
        )
        .unwrap();
    write(&ws, "b.txt", meant);
    store
        .capture_after_failed(&[(ws.join("b.txt"), Some(image(meant)))])
        .unwrap();
    store.finish_turn().unwrap();
    let plan = store.plan_restore(0).unwrap();
    let f = plan.plan.files.iter().find(|f| f.path == "b.txt").unwrap();
    assert_eq!(f.action, FileAction::Delete, "{f:?}");
    assert!(f.conflict.is_none(), "{f:?}");
}
