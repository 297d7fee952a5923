//! Redo (SPEC §5.5): the line of restores walked both ways. Undo, redo, undo again ends where it
//! began, bytes, modes and ownership proofs alike, also with the store reopened between steps; a
//! file changed since the undo (by hand, by a later turn) refuses the redo, which then writes
//! nothing; a later turn that touched other files does not stop it; a new restore ends it.

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::restore_support::*;
use retrace_checkpoint::tx::{TxKind, TxState};
use retrace_checkpoint::{BeginTurn, CheckpointError, CheckpointStore, Limits, StoreOptions};
use retrace_fsutil::Fs;
use retrace_protocol::{ChangeKind, ConflictReason, OnConflict};

fn begin(store: &mut CheckpointStore, prompt: &str) -> u64 {
    store
        .begin_turn(BeginTurn {
            prompt: prompt.into(),
            ..BeginTurn::default()
        })
        .unwrap()
}

/// A later turn's agent edit of `path`.
fn agent_writes(store: &mut CheckpointStore, root: &Path, path: &str, bytes: &[u8]) {
    begin(store, "later");
    tool(store, root, &[(path, ChangeKind::Modify)], |r| {
        fs::write(r.join(path), bytes).unwrap()
    });
    store.end_turn();
}

/// Ids of the manifests on disk.
fn manifest_ids(sidecar: &Path) -> BTreeSet<String> {
    manifests_on_disk(sidecar).into_keys().collect()
}

fn assert_ws(root: &Path, want: &Snap, ctx: &str) {
    let ws = snapshot(root);
    assert!(ws == *want, "{ctx}:\n{}", diff(&ws, want));
}

#[test]
fn undo_redo_undo_ends_where_it_began_across_restarts() {
    let sc = small_scenario();
    let mut store = open_healthy(sc.sidecar(), &sc.root);
    assert!(store.redo_target().is_none(), "nothing was undone");
    let owned_at_start = store.state().owned.clone();
    let tx = restore_now(&mut store, sc.turn, OnConflict::Refuse)
        .transaction_id
        .unwrap();
    assert_ws(&sc.root, &sc.restore, "restored");
    let owned_restored = store.state().owned.clone();
    assert!(store.redo_target().is_none(), "a restore is not redone");

    drop(store);
    let mut store = open_healthy(sc.sidecar(), &sc.root);
    store.undo(&tx).unwrap();
    assert_ws(&sc.root, &sc.forward, "undone");
    assert_eq!(store.state().owned, owned_at_start);

    // Across a restart: the redo target is found from the manifests alone.
    drop(store);
    let mut store = open_healthy(sc.sidecar(), &sc.root);
    assert_eq!(store.redo_target().map(|m| m.id.clone()), Some(tx.clone()));
    assert!(store.undo_target().is_none());
    let out = store.redo(&tx).unwrap();
    assert_ws(&sc.root, &sc.restore, "redone");
    let redo_id = out.transaction_id.clone().unwrap();
    assert!(out.undo_available, "{out:?}");
    assert_eq!(out.files_written.len() + out.files_deleted.len(), 11);
    assert!(
        store.redo_target().is_none(),
        "a redo is redone only after its undo"
    );
    let m = store.transactions().find(|m| m.id == redo_id).unwrap().clone();
    assert_eq!(m.kind, TxKind::Restore, "a redo is of the kind it redoes");
    assert_eq!(m.redoes.as_deref(), Some(tx.as_str()));
    assert_eq!(m.turn, Some(sc.turn));
    // The restore's images are Retrace's own writes again, at the redo's place in time.
    for (rel, o) in &store.state().owned {
        if let Some(was) = owned_restored.get(rel) {
            assert_eq!(o.image, was.image, "{rel:?}");
        }
    }
    let orig = store.transactions().find(|m| m.id == tx).unwrap();
    assert_eq!(orig.state, TxState::Undone, "the redone restore stays undone");

    drop(store);
    let mut store = open_healthy(sc.sidecar(), &sc.root);
    assert_eq!(store.undo_target().map(|m| m.id.clone()), Some(redo_id.clone()));
    store.undo(&redo_id).unwrap();
    assert_ws(&sc.root, &sc.forward, "the redo undone");
    assert_eq!(
        store.state().owned,
        owned_at_start,
        "ownership came back with the bytes"
    );

    // And on: the walk goes both ways as long as the user likes.
    drop(store);
    let mut store = open_healthy(sc.sidecar(), &sc.root);
    assert_eq!(store.redo_target().map(|m| m.id.clone()), Some(redo_id.clone()));
    let again = store.redo(&redo_id).unwrap().transaction_id.unwrap();
    assert_ws(&sc.root, &sc.restore, "redone twice");
    store.undo(&again).unwrap();
    assert_ws(&sc.root, &sc.forward, "undone three times");
    assert!(store.fsck().ok, "{:#?}", store.fsck().problems);
    assert!(transaction_leftovers(&sc.root).is_empty());
}

#[test]
fn a_hand_edit_since_the_undo_refuses_the_redo_and_writes_nothing() {
    let sc = small_scenario();
    let mut store = open_healthy(sc.sidecar(), &sc.root);
    let tx = restore_now(&mut store, sc.turn, OnConflict::Refuse)
        .transaction_id
        .unwrap();
    store.undo(&tx).unwrap();
    fs::write(sc.root.join("a.txt"), b"the user's edit\n").unwrap();
    fs::set_permissions(sc.root.join("exec.sh"), fs::Permissions::from_mode(0o700)).unwrap();
    fs::write(sc.root.join("late.txt"), b"made again by hand\n").unwrap();
    let ws = snapshot(&sc.root);
    let sidecar = snapshot(sc.sidecar());
    let ids = manifest_ids(sc.sidecar());

    let err = store.redo(&tx).unwrap_err();
    let CheckpointError::RedoRefused { conflicts } = &err else {
        panic!("expected a refused redo, got {err}");
    };
    let mut reasons: Vec<(&str, ConflictReason)> =
        conflicts.iter().map(|c| (c.path.as_str(), c.reason)).collect();
    reasons.sort_by_key(|(p, _)| *p);
    assert_eq!(
        reasons,
        [
            ("a.txt", ConflictReason::ManualEdit),
            ("exec.sh", ConflictReason::ModeChange),
            ("late.txt", ConflictReason::DeletedAndRecreated),
        ],
        "{err}"
    );
    assert!(err.to_string().contains("a.txt"), "{err}");
    let a = conflicts.iter().find(|c| c.path == "a.txt").unwrap();
    assert_eq!(
        a.current_sha256.as_deref(),
        Some(retrace_fsutil::sha256_bytes(b"the user's edit\n").as_str())
    );
    assert_eq!(
        a.checkpoint_sha256.as_deref(),
        Some(retrace_fsutil::sha256_bytes(b"a0\r\nsecond line\r\n").as_str())
    );
    assert_eq!(
        a.last_owned_sha256.as_deref(),
        Some(retrace_fsutil::sha256_bytes(b"a2\n").as_str())
    );
    assert_ws(&sc.root, &ws, "a refused redo writes nothing");
    assert!(snapshot(sc.sidecar()) == sidecar, "nor anything in the sidecar");
    assert_eq!(manifest_ids(sc.sidecar()), ids);
    assert!(matches!(
        store.check_redo(&tx),
        Err(CheckpointError::RedoRefused { .. })
    ));
    // Still the redo target: once the files are back as the undo left them, it goes ahead.
    assert_eq!(store.redo_target().map(|m| m.id.clone()), Some(tx.clone()));
    for (p, (bytes, mode)) in &sc.forward {
        fs::write(sc.root.join(p), bytes).unwrap();
        fs::set_permissions(sc.root.join(p), fs::Permissions::from_mode(*mode)).unwrap();
    }
    fs::remove_file(sc.root.join("late.txt")).unwrap();
    store.check_redo(&tx).unwrap();
    store.redo(&tx).unwrap();
    assert_ws(&sc.root, &sc.restore, "redone");
}

#[test]
fn a_redo_after_a_later_turn_that_touched_other_files_goes_ahead() {
    let sc = small_scenario();
    let mut store = open_healthy(sc.sidecar(), &sc.root);
    let tx = restore_now(&mut store, sc.turn, OnConflict::Refuse)
        .transaction_id
        .unwrap();
    store.undo(&tx).unwrap();
    agent_writes(&mut store, &sc.root, "keep.txt", b"a later turn's edit\n");
    // A turn does not end redo (it ends undo).
    drop(store);
    let mut store = open_healthy(sc.sidecar(), &sc.root);
    assert_eq!(store.redo_target().map(|m| m.id.clone()), Some(tx.clone()));
    let out = store.redo(&tx).unwrap();
    let mut want = sc.restore.clone();
    want.get_mut("keep.txt").unwrap().0 = b"a later turn's edit\n".to_vec();
    assert_ws(&sc.root, &want, "redone after a later turn");
    // The redo is the newest write: undone like any restore.
    let redo_id = out.transaction_id.unwrap();
    assert!(out.undo_available);
    store.undo(&redo_id).unwrap();
    let mut back = sc.forward.clone();
    back.get_mut("keep.txt").unwrap().0 = b"a later turn's edit\n".to_vec();
    assert_ws(&sc.root, &back, "the redo undone");
    // The later turn's restore sees the redo and its undo on the timeline: no false conflict.
    let plan = store.plan_restore(sc.turn).unwrap();
    assert!(plan.plan.conflicts.is_empty(), "{:?}", plan.plan.conflicts);
}

#[test]
fn a_later_turn_that_touched_a_restored_file_makes_the_redo_a_conflict() {
    let sc = small_scenario();
    let mut store = open_healthy(sc.sidecar(), &sc.root);
    let tx = restore_now(&mut store, sc.turn, OnConflict::Refuse)
        .transaction_id
        .unwrap();
    store.undo(&tx).unwrap();
    agent_writes(&mut store, &sc.root, "a.txt", b"a3\n");
    let ws = snapshot(&sc.root);
    let err = store.redo(&tx).unwrap_err();
    assert!(
        matches!(&err, CheckpointError::RedoRefused { conflicts }
            if conflicts.len() == 1 && conflicts[0].path == "a.txt" && conflicts[0].reason == ConflictReason::ManualEdit),
        "{err}"
    );
    assert_ws(&sc.root, &ws, "nothing was written");
}

/// A later turn rewrote the file, then someone put back the very bytes the undo had left: the
/// bytes match, but the file is not what the undo left as Retrace's last write (SPEC §5.5: a file
/// changed since is a conflict), so the redo writes nothing.
#[test]
fn bytes_put_back_after_a_later_turn_still_make_the_redo_a_conflict() {
    let sc = small_scenario();
    let mut store = open_healthy(sc.sidecar(), &sc.root);
    let tx = restore_now(&mut store, sc.turn, OnConflict::Refuse)
        .transaction_id
        .unwrap();
    store.undo(&tx).unwrap();
    let left = fs::read(sc.root.join("a.txt")).unwrap();
    agent_writes(&mut store, &sc.root, "a.txt", b"a3\n");
    fs::write(sc.root.join("a.txt"), &left).unwrap();
    let ws = snapshot(&sc.root);
    let err = store.redo(&tx).unwrap_err();
    assert!(
        matches!(&err, CheckpointError::RedoRefused { conflicts }
            if conflicts.len() == 1 && conflicts[0].path == "a.txt"),
        "{err}"
    );
    assert_ws(&sc.root, &ws, "nothing was written");
}

/// Found by the property soak: a later turn that writes the very bytes the undo left changed
/// nothing, so the redo goes ahead.
#[test]
fn a_later_write_of_the_same_bytes_is_no_conflict() {
    let sc = small_scenario();
    let mut store = open_healthy(sc.sidecar(), &sc.root);
    let tx = restore_now(&mut store, sc.turn, OnConflict::Refuse)
        .transaction_id
        .unwrap();
    store.undo(&tx).unwrap();
    let left = fs::read(sc.root.join("a.txt")).unwrap();
    agent_writes(&mut store, &sc.root, "a.txt", &left);
    store.redo(&tx).unwrap();
}

#[test]
fn a_new_restore_ends_redo() {
    let sc = small_scenario();
    let mut store = open_healthy(sc.sidecar(), &sc.root);
    let tx = restore_now(&mut store, sc.turn, OnConflict::Refuse)
        .transaction_id
        .unwrap();
    store.undo(&tx).unwrap();
    let later = sc.turn + 2;
    restore_now(&mut store, later, OnConflict::Refuse);
    assert!(store.redo_target().is_none());
    let err = store.redo(&tx).unwrap_err();
    assert!(matches!(err, CheckpointError::RedoUnavailable { .. }), "{err}");
    assert!(err.to_string().starts_with("nothing to redo"), "{err}");
    // Nor is an undo redone: redo names the undone transaction.
    let undo_id = store
        .transactions()
        .find(|m| m.kind == TxKind::Undo)
        .unwrap()
        .id
        .clone();
    assert!(matches!(
        store.redo(&undo_id),
        Err(CheckpointError::RedoUnavailable { .. })
    ));
}

#[test]
fn an_overwrite_redone_and_undone_gives_the_hand_edit_back_not_to_retrace() {
    let sc = small_scenario();
    fs::write(sc.root.join("a.txt"), b"HAND EDIT\n").unwrap();
    let mut store = open_healthy(sc.sidecar(), &sc.root);
    let owned_at_start = store.state().owned.clone();
    let out = restore_now(&mut store, sc.turn, OnConflict::Overwrite);
    assert_eq!(out.conflicts[0].reason, ConflictReason::ManualEdit);
    let tx = out.transaction_id.unwrap();
    store.undo(&tx).unwrap();
    assert_eq!(fs::read(sc.root.join("a.txt")).unwrap(), b"HAND EDIT\n");
    // The redo repeats the overwrite the user chose; its undo brings the hand edit back, and
    // with it the proofs of before: the hand edit is not Retrace's.
    let redo_id = store.redo(&tx).unwrap().transaction_id.unwrap();
    assert_eq!(fs::read(sc.root.join("a.txt")).unwrap(), b"a0\r\nsecond line\r\n");
    store.undo(&redo_id).unwrap();
    assert_eq!(fs::read(sc.root.join("a.txt")).unwrap(), b"HAND EDIT\n");
    assert_eq!(store.state().owned, owned_at_start);
    drop(store);
    let store = open_healthy(sc.sidecar(), &sc.root);
    assert_eq!(store.state().owned, owned_at_start);
    let plan = store.plan_restore(sc.turn).unwrap();
    let a = plan.plan.files.iter().find(|f| f.path == "a.txt").unwrap();
    assert_eq!(
        a.conflict.as_ref().map(|c| c.reason),
        Some(ConflictReason::ManualEdit)
    );
}

#[test]
fn a_conversation_only_rewind_is_redone_without_files() {
    let sc = small_scenario();
    let mut store = open_healthy(sc.sidecar(), &sc.root);
    let record = serde_json::json!({
        "scope": "conversation", "turn": sc.turn, "parent_head": "main", "new_head": "h-1", "base_messages": 1
    });
    let w = store.record_rewind(sc.turn, record).unwrap().id;
    store.undo(&w).unwrap();
    assert_eq!(store.redo_target().map(|m| m.id.clone()), Some(w.clone()));
    // Turns in between do not end it.
    agent_writes(&mut store, &sc.root, "keep.txt", b"later\n");
    drop(store);
    let mut store = open_healthy(sc.sidecar(), &sc.root);
    let out = store.redo(&w).unwrap();
    let r = out.transaction_id.unwrap();
    assert!(out.files_written.is_empty() && out.undo_available);
    let m = store.transactions().find(|m| m.id == r).unwrap().clone();
    assert_eq!((m.kind, m.state), (TxKind::Rewind, TxState::Committed));
    assert_eq!(m.redoes.as_deref(), Some(w.as_str()));
    let kept = store.rewind_record(&m).unwrap().unwrap();
    assert_eq!(kept.new_head.as_ref().map(|h| h.as_str()), Some("h-1"));
    store.undo(&r).unwrap();
    assert_eq!(store.redo_target().map(|m| m.id.clone()), Some(r.clone()));
    store.redo(&r).unwrap();
    assert!(store.redo_target().is_none());
}

#[test]
fn retention_keeps_what_redo_needs() {
    let sc = small_scenario();
    let o = StoreOptions {
        limits: Limits {
            max_turns: 2,
            ..Limits::default()
        },
        ..opts(Fs::without_sync())
    };
    let mut store = CheckpointStore::open(sc.sidecar(), &sc.root, o.clone()).unwrap();
    let tx = restore_now(&mut store, sc.turn, OnConflict::Refuse)
        .transaction_id
        .unwrap();
    store.undo(&tx).unwrap();
    for i in 0..4 {
        agent_writes(
            &mut store,
            &sc.root,
            "keep.txt",
            format!("later {i}\n").as_bytes(),
        );
    }
    assert!(store.list().len() <= 3, "retention ran");
    drop(store);
    let mut store = CheckpointStore::open(sc.sidecar(), &sc.root, o).unwrap();
    let out = store.redo(&tx).unwrap();
    let mut want = sc.restore.clone();
    want.get_mut("keep.txt").unwrap().0 = b"later 3\n".to_vec();
    assert_ws(&sc.root, &want, "redone after retention");
    store.undo(&out.transaction_id.unwrap()).unwrap();
}
