//! The rewind record a transaction keeps (`extra`, FORMATS §9.1.1): stored typed and versioned,
//! records of earlier builds still read, and one that cannot be read stops its undo with an error
//! naming the manifest, never taken for a restore of files only.

use std::fs;
use std::path::PathBuf;

use retrace_checkpoint::tx::{RewindRecord, REWIND_RECORD_VERSION};
use retrace_checkpoint::{BeginTurn, Change, CheckpointError, CheckpointStore, CommitOptions, StoreOptions};
use retrace_fsutil::Fs;
use retrace_protocol::{ChangeKind, HeadId, RewindScope, Severity};
use retrace_testkit::Scratch;
use serde_json::{json, Value};

fn open(s: &Scratch) -> CheckpointStore {
    let opts = StoreOptions {
        fs: Fs::without_sync(),
        ..StoreOptions::default()
    };
    CheckpointStore::open(&s.sidecar, &s.workspace, opts).unwrap()
}

/// A turn that changed `a.txt` from `old` to `new`.
fn one_edit(s: &Scratch) -> (CheckpointStore, u64) {
    s.write("a.txt", b"old").unwrap();
    let mut store = open(s);
    let turn = store.begin_turn(BeginTurn::default()).unwrap();
    store
        .capture_before(&[Change::new("a.txt", ChangeKind::Modify)], Some("write_file"))
        .unwrap();
    s.write("a.txt", b"new").unwrap();
    store.capture_after(&[PathBuf::from("a.txt")]).unwrap();
    store.end_turn();
    (store, turn)
}

/// The record as builds before `version` wrote it.
fn unversioned(turn: u64) -> Value {
    json!({"scope": "both", "turn": turn, "parent_head": "main", "new_head": "h-1", "base_messages": 2})
}

fn manifest_path(s: &Scratch, id: &str) -> PathBuf {
    s.sidecar.join("transactions").join(format!("{id}.json"))
}

fn stored_extra(s: &Scratch, id: &str) -> Value {
    let m: Value = serde_json::from_slice(&fs::read(manifest_path(s, id)).unwrap()).unwrap();
    m["extra"].clone()
}

/// Replaces the manifest's record on disk.
fn set_extra(s: &Scratch, id: &str, extra: Value) {
    let path = manifest_path(s, id);
    let mut m: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    m["extra"] = extra;
    fs::write(&path, serde_json::to_vec_pretty(&m).unwrap()).unwrap();
}

fn restore(store: &mut CheckpointStore, turn: u64, extra: Value) -> String {
    let plan = store.plan_restore(turn).unwrap();
    let opts = CommitOptions {
        confirm: true,
        ..CommitOptions::default()
    };
    let outcome = store.commit_tagged(&plan, opts, Some(extra)).unwrap();
    outcome.transaction_id.unwrap()
}

#[test]
fn a_record_is_stored_with_its_version_and_read_back_typed() {
    let s = Scratch::new().unwrap();
    let (mut store, turn) = one_edit(&s);
    let id = restore(&mut store, turn, unversioned(turn));
    let extra = stored_extra(&s, &id);
    assert_eq!(extra["version"], json!(REWIND_RECORD_VERSION));
    let m = store.transactions().find(|m| m.id == id).unwrap().clone();
    let record = store.rewind_record(&m).unwrap().unwrap();
    assert_eq!(
        record,
        RewindRecord {
            scope: RewindScope::Both,
            turn,
            parent_head: HeadId::new("main"),
            new_head: Some(HeadId::new("h-1")),
            base_messages: 2,
        }
    );
    // A conversation-only rewind keeps its record the same way.
    let m = store.record_rewind(turn, unversioned(turn)).unwrap();
    assert_eq!(stored_extra(&s, &m.id)["version"], json!(REWIND_RECORD_VERSION));
}

#[test]
fn a_record_of_an_earlier_build_still_reads_and_its_rewind_is_undone() {
    let s = Scratch::new().unwrap();
    let (mut store, turn) = one_edit(&s);
    let id = restore(&mut store, turn, unversioned(turn));
    drop(store);
    set_extra(&s, &id, unversioned(turn));
    let mut store = open(&s);
    let m = store.undo_target().unwrap().clone();
    assert_eq!(
        store.rewind_record(&m).unwrap().unwrap().new_head,
        Some(HeadId::new("h-1"))
    );
    store.undo(&id).unwrap();
    assert_eq!(fs::read(s.workspace.join("a.txt")).unwrap(), b"new");
    // A manifest with no record is a restore of files only.
    let (plan, opts) = (
        store.plan_restore(turn).unwrap(),
        CommitOptions {
            confirm: true,
            ..CommitOptions::default()
        },
    );
    let id = store.commit(&plan, opts).unwrap().transaction_id.unwrap();
    let m = store.transactions().find(|m| m.id == id).unwrap().clone();
    assert_eq!(store.rewind_record(&m).unwrap(), None);
}

#[test]
fn an_unreadable_record_stops_its_undo_naming_the_manifest() {
    for bad in [
        json!({"version": 2, "scope": "both", "turn": 1, "parent_head": "main"}),
        json!({"scope": "everything", "turn": 1, "parent_head": "main"}),
        json!("both"),
    ] {
        let s = Scratch::new().unwrap();
        let (mut store, turn) = one_edit(&s);
        let id = restore(&mut store, turn, unversioned(turn));
        drop(store);
        set_extra(&s, &id, bad.clone());
        let before = fs::read(manifest_path(&s, &id)).unwrap();
        let mut store = open(&s);
        let e = store.undo(&id).unwrap_err();
        match &e {
            CheckpointError::Corrupt { path, detail } => {
                assert_eq!(path, &manifest_path(&s, &id), "{e}");
                assert!(detail.contains("rewind record"), "{e}");
            }
            other => panic!("{bad}: {other}"),
        }
        // Nothing was put back, and the manifest is as it was.
        assert_eq!(fs::read(s.workspace.join("a.txt")).unwrap(), b"old");
        assert_eq!(fs::read(manifest_path(&s, &id)).unwrap(), before);
        let report = store.fsck();
        assert!(
            report
                .problems
                .iter()
                .any(|p| p.path == format!("transactions/{id}.json")
                    && p.severity == Severity::Warning
                    && p.problem.contains("rewind record")),
            "{:#?}",
            report.problems
        );
    }
}

#[test]
fn something_that_is_no_rewind_record_is_refused_before_anything_is_written() {
    let s = Scratch::new().unwrap();
    let (mut store, turn) = one_edit(&s);
    let plan = store.plan_restore(turn).unwrap();
    let opts = CommitOptions {
        confirm: true,
        ..CommitOptions::default()
    };
    let e = store
        .commit_tagged(&plan, opts, Some(json!({"scope": "code"})))
        .unwrap_err();
    assert!(matches!(e, CheckpointError::Corrupt { .. }), "{e}");
    assert_eq!(fs::read(s.workspace.join("a.txt")).unwrap(), b"new");
    assert_eq!(store.transactions().count(), 0);
    assert!(store.record_rewind(turn, json!(null)).is_err());
    assert_eq!(store.transactions().count(), 0);
}
