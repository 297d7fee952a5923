//! The commit's re-plan reuses what the plan hashed only for files that did not change since
//! (`memo.rs`): an edit or a corrupted payload between plan and commit is still seen, even when it
//! keeps the file's size.

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use retrace_checkpoint::{
    BeginTurn, Change, CheckpointError, CheckpointStore, CommitOptions, RestorePlan, StoreOptions,
};
use retrace_fsutil::Fs;
use retrace_protocol::{ChangeKind, ConflictReason, OnConflict};
use retrace_testkit::Scratch;

fn open(s: &Scratch) -> CheckpointStore {
    let opts = StoreOptions {
        fs: Fs::without_sync(),
        ..StoreOptions::default()
    };
    CheckpointStore::open(&s.sidecar, &s.workspace, opts).unwrap()
}

/// A workspace whose `a` and `b` one turn rewrote (keeping their sizes), and the plan of a restore
/// to that turn.
fn planned() -> (Scratch, CheckpointStore, u64, RestorePlan) {
    let s = Scratch::new().unwrap();
    s.write("a", b"user-a0").unwrap();
    s.write("b", b"user-b0").unwrap();
    let mut store = open(&s);
    let t = store.begin_turn(BeginTurn::default()).unwrap();
    for (p, bytes) in [("a", b"agent-a"), ("b", b"agent-b")] {
        store
            .capture_before(&[Change::new(p, ChangeKind::Modify)], Some("write_file"))
            .unwrap();
        s.write(p, bytes).unwrap();
        store.capture_after(&[PathBuf::from(p)]).unwrap();
    }
    store.end_turn();
    let plan = store.plan_restore(t).unwrap();
    (s, store, t, plan)
}

fn refuse() -> CommitOptions {
    CommitOptions {
        confirm: true,
        on_conflict: OnConflict::Refuse,
    }
}

/// Past the file system's timestamp granularity, so that a write now changes the change time.
fn next_tick() {
    std::thread::sleep(Duration::from_millis(30));
}

#[test]
fn an_edit_of_the_same_size_between_plan_and_commit_is_a_conflict() {
    let (s, mut store, _, plan) = planned();
    assert!(plan.plan.conflicts.is_empty(), "{:?}", plan.plan.conflicts);
    next_tick();
    s.write("a", b"user-a1").unwrap();
    match store.commit(&plan, refuse()) {
        Err(CheckpointError::Changed { conflicts }) => {
            assert_eq!(conflicts.len(), 1, "{conflicts:?}");
            assert_eq!(conflicts[0].path, "a");
            assert_eq!(conflicts[0].reason, ConflictReason::ExternalChange);
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(fs::read(s.workspace.join("a")).unwrap(), b"user-a1");
    assert_eq!(fs::read(s.workspace.join("b")).unwrap(), b"agent-b");
}

#[test]
fn a_payload_corrupted_between_plan_and_commit_is_not_restored() {
    let (s, mut store, t, plan) = planned();
    next_tick();
    // The before-image of `a` (entry 0), same length, other bytes.
    let (seg, f) = crate::log_support::entry_frame(&s.sidecar, t, "a");
    assert_eq!(
        &fs::read(&seg).unwrap()[f.body_at..f.body_at + f.body_len],
        b"user-a0"
    );
    crate::log_support::patch(&seg, f.body_at, b"rotten!");
    match store.commit(&plan, refuse()) {
        Err(CheckpointError::Changed { conflicts }) => {
            assert_eq!(conflicts.len(), 1, "{conflicts:?}");
            assert_eq!(conflicts[0].reason, ConflictReason::MissingPayload);
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(fs::read(s.workspace.join("a")).unwrap(), b"agent-a");
    assert_eq!(fs::read(s.workspace.join("b")).unwrap(), b"agent-b");
}
