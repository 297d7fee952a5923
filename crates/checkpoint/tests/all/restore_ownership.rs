//! Ownership across restores and their undo (SPEC §5.2 "ownership proof", §5.5; issue 25 items 1
//! and 6): undo gives back the ownership with the bytes — a hand edit or another session's write
//! that an `overwrite` replaced and the undo put back is again not Retrace's, so every later
//! restore reports it, across a restart too — and a file a restore finds already in its target
//! state becomes Retrace's.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use retrace_checkpoint::tx::TxKind;
use retrace_checkpoint::{BeginTurn, Change, CheckpointError, CheckpointStore, CommitOptions, StoreOptions};
use retrace_fsutil::Fs;
use retrace_protocol::{ChangeKind, ConflictReason, FileAction, OnConflict};
use retrace_testkit::Scratch;

fn opts() -> StoreOptions {
    StoreOptions {
        fs: Fs::without_sync(),
        clock: Arc::new(|| time::OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()),
        ..StoreOptions::default()
    }
}

fn open_at(sidecar: &Path, ws: &Path) -> CheckpointStore {
    CheckpointStore::open(sidecar, ws, opts()).unwrap()
}

fn open(s: &Scratch) -> CheckpointStore {
    open_at(&s.sidecar, &s.workspace)
}

fn begin(store: &mut CheckpointStore) -> u64 {
    store
        .begin_turn(BeginTurn {
            prompt: "p".into(),
            ..BeginTurn::default()
        })
        .unwrap()
}

/// An agent edit through the seam: `Some(bytes)` writes, `None` deletes.
fn edit(store: &mut CheckpointStore, ws: &Path, path: &str, bytes: Option<&[u8]>) {
    store
        .capture_before(&[Change::new(path, ChangeKind::Modify)], Some("write_file"))
        .unwrap();
    match bytes {
        Some(b) => fs::write(ws.join(path), b).unwrap(),
        None => fs::remove_file(ws.join(path)).unwrap(),
    }
    store.capture_after(&[PathBuf::from(path)]).unwrap();
}

fn read(ws: &Path, p: &str) -> Option<Vec<u8>> {
    fs::read(ws.join(p)).ok()
}

fn commit(
    store: &mut CheckpointStore,
    plan: &retrace_checkpoint::RestorePlan,
    on_conflict: OnConflict,
) -> Result<retrace_protocol::CodeOutcome, CheckpointError> {
    store.commit(
        plan,
        CommitOptions {
            confirm: true,
            on_conflict,
        },
    )
}

fn restore(store: &mut CheckpointStore, turn: u64, on_conflict: OnConflict) -> retrace_protocol::CodeOutcome {
    let plan = store.plan_restore(turn).unwrap();
    commit(store, &plan, on_conflict).unwrap()
}

fn conflict_of(store: &CheckpointStore, turn: u64, path: &str) -> Option<ConflictReason> {
    let plan = store.plan_restore(turn).unwrap();
    let f = plan.plan.files.iter().find(|f| f.path == path).unwrap();
    f.conflict.as_ref().map(|c| c.reason)
}

/// Every later restore of `path` reports it and leaves `keep` there: the dry run, `refuse`,
/// `skip`, and a single-file revert with `refuse` and `skip`.
fn assert_protected(store: &mut CheckpointStore, ws: &Path, turns: &[u64], path: &str, keep: &[u8]) {
    for &turn in turns {
        let reason = conflict_of(store, turn, path);
        assert!(
            reason.is_some(),
            "a restore to turn {turn} must report `{path}` as a conflict (the dry run shows none)"
        );
        let plan = store.plan_restore(turn).unwrap();
        let refused = commit(store, &plan, OnConflict::Refuse);
        assert!(
            matches!(refused, Err(CheckpointError::Refused { .. })),
            "turn {turn}, refuse: {refused:?}"
        );
        assert_eq!(read(ws, path).as_deref(), Some(keep));
        let plan = store.plan_restore(turn).unwrap();
        let out = commit(store, &plan, OnConflict::Skip).unwrap();
        assert!(
            out.conflicts.iter().any(|c| c.path == path),
            "turn {turn}, skip: `{path}` listed as skipped: {out:?}"
        );
        assert_eq!(read(ws, path).as_deref(), Some(keep), "turn {turn}, skip");
        if out.transaction_id.is_some() {
            store.undo(out.transaction_id.as_deref().unwrap()).unwrap();
        }
    }
    let plan = store.plan_file_revert(Path::new(path)).unwrap();
    assert!(
        plan.plan.files[0].conflict.is_some(),
        "a revert of `{path}` must report a conflict: {:?}",
        plan.plan.files[0]
    );
    let refused = commit(store, &plan, OnConflict::Refuse);
    assert!(
        matches!(refused, Err(CheckpointError::Refused { .. })),
        "{refused:?}"
    );
    let plan = store.plan_file_revert(Path::new(path)).unwrap();
    let out = commit(store, &plan, OnConflict::Skip).unwrap();
    assert_eq!(out.transaction_id, None);
    assert_eq!(read(ws, path).as_deref(), Some(keep), "revert, skip");
}

/// The flow: an `overwrite` restore over a hand edit, undo, then plain restores.
#[test]
fn undoing_an_overwrite_gives_the_hand_edit_back_not_to_retrace() {
    let s = Scratch::new().unwrap();
    let ws = s.workspace.clone();
    let mut store = open(&s);
    let t0 = begin(&mut store);
    store
        .capture_before(&[Change::new("a.txt", ChangeKind::Create)], Some("write_file"))
        .unwrap();
    fs::write(ws.join("a.txt"), b"one").unwrap();
    store.capture_after(&[PathBuf::from("a.txt")]).unwrap();
    let t1 = begin(&mut store);
    edit(&mut store, &ws, "a.txt", Some(b"two"));
    store.end_turn();
    let owned_before = store.state().owned.clone();

    fs::write(ws.join("a.txt"), b"HAND EDIT").unwrap();
    assert_eq!(conflict_of(&store, t1, "a.txt"), Some(ConflictReason::ManualEdit));
    let out = restore(&mut store, t1, OnConflict::Overwrite);
    assert_eq!(read(&ws, "a.txt").as_deref(), Some(&b"one"[..]));
    store.undo(out.transaction_id.as_deref().unwrap()).unwrap();
    assert_eq!(read(&ws, "a.txt").as_deref(), Some(&b"HAND EDIT"[..]));
    // The proofs are what they were before the restore, sequence included.
    assert_eq!(store.state().owned, owned_before);

    assert_protected(&mut store, &ws, &[t1, t0], "a.txt", b"HAND EDIT");
    // And after a restart: state.json and the manifests agree.
    drop(store);
    let mut store = open(&s);
    assert_eq!(store.state().owned, owned_before);
    assert_protected(&mut store, &ws, &[t1, t0], "a.txt", b"HAND EDIT");
    // A new turn, then the restore that would have deleted it: still refused.
    begin(&mut store);
    edit(&mut store, &ws, "b.txt", Some(b"b"));
    store.end_turn();
    assert_protected(&mut store, &ws, &[t0], "a.txt", b"HAND EDIT");
}

/// The same when state.json is lost after the undo: rebuilt from the manifests, the hand edit is
/// still not Retrace's.
#[test]
fn ownership_after_an_undo_is_rebuilt_from_the_manifests() {
    let s = Scratch::new().unwrap();
    let ws = s.workspace.clone();
    let mut store = open(&s);
    begin(&mut store);
    store
        .capture_before(&[Change::new("a.txt", ChangeKind::Create)], Some("write_file"))
        .unwrap();
    fs::write(ws.join("a.txt"), b"one").unwrap();
    store.capture_after(&[PathBuf::from("a.txt")]).unwrap();
    let t1 = begin(&mut store);
    edit(&mut store, &ws, "a.txt", Some(b"two"));
    store.end_turn();
    fs::write(ws.join("a.txt"), b"HAND EDIT").unwrap();
    let out = restore(&mut store, t1, OnConflict::Overwrite);
    // The manifest says what was Retrace's before.
    let m = store
        .transactions()
        .find(|m| Some(&m.id) == out.transaction_id.as_ref())
        .unwrap();
    let before = m.targets[0].owned_before.clone().expect("ownedBefore recorded");
    assert!(m.owned_recorded);
    assert_eq!(
        before.image.sha256.as_deref(),
        Some(retrace_fsutil::sha256_bytes(b"two").as_str())
    );
    let undo = store.undo(out.transaction_id.as_deref().unwrap()).unwrap();
    let u = store
        .transactions()
        .find(|m| Some(&m.id) == undo.transaction_id.as_ref())
        .unwrap();
    assert_eq!(u.kind, TxKind::Undo);
    assert_eq!(u.targets[0].owned_after.as_ref(), Some(&before));
    drop(store);
    // state.json written by a store that crashed before its last proofs: the restore's entry.
    let state = s.sidecar.join("state.json");
    let mut v: serde_json::Value = serde_json::from_slice(&fs::read(&state).unwrap()).unwrap();
    v["owned"]["a.txt"] = serde_json::json!({
        "existed": true, "sha256": retrace_fsutil::sha256_bytes(b"one"), "mode": 0o644, "seq": 0
    });
    fs::write(&state, serde_json::to_vec(&v).unwrap()).unwrap();
    let mut store = open(&s);
    assert_eq!(conflict_of(&store, t1, "a.txt"), Some(ConflictReason::ManualEdit));
    assert_protected(&mut store, &ws, &[t1], "a.txt", b"HAND EDIT");
}

/// A file the user created where Retrace had none: after the overwrite and its undo, Retrace owns
/// no such file (no proof), so the restore that would delete it reports it.
#[test]
fn undoing_an_overwrite_of_a_file_retrace_never_owned_leaves_it_unowned() {
    let s = Scratch::new().unwrap();
    let ws = s.workspace.clone();
    let mut store = open(&s);
    let t0 = begin(&mut store);
    store
        .capture_before(&[Change::new("a.txt", ChangeKind::Create)], Some("write_file"))
        .unwrap();
    fs::write(ws.join("a.txt"), b"one").unwrap();
    store.capture_after(&[PathBuf::from("a.txt")]).unwrap();
    store.end_turn();
    // The agent's file goes; Retrace takes the ownership of "absent" with the restore.
    let out = restore(&mut store, t0, OnConflict::Refuse);
    assert_eq!(out.files_deleted, vec!["a.txt".to_string()]);
    // The user writes a file of their own there; an overwrite restore to turn 0 deletes it ...
    fs::write(ws.join("a.txt"), b"MINE").unwrap();
    assert_eq!(
        conflict_of(&store, t0, "a.txt"),
        Some(ConflictReason::DeletedAndRecreated)
    );
    let owned_before = store.state().owned.clone();
    let out = restore(&mut store, t0, OnConflict::Overwrite);
    assert_eq!(read(&ws, "a.txt"), None);
    // ... and undo brings it back, as the user's.
    store.undo(out.transaction_id.as_deref().unwrap()).unwrap();
    assert_eq!(read(&ws, "a.txt").as_deref(), Some(&b"MINE"[..]));
    assert_eq!(store.state().owned, owned_before);
    assert_protected(&mut store, &ws, &[t0], "a.txt", b"MINE");
}

/// `revert --overwrite` of a hand edit, then undo.
#[test]
fn undoing_a_forced_revert_gives_the_hand_edit_back_not_to_retrace() {
    let s = Scratch::new().unwrap();
    let ws = s.workspace.clone();
    s.write("a.txt", b"base").unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store);
    edit(&mut store, &ws, "a.txt", Some(b"agent"));
    store.end_turn();
    fs::write(ws.join("a.txt"), b"HAND EDIT").unwrap();
    let plan = store.plan_file_revert(Path::new("a.txt")).unwrap();
    assert_eq!(plan.plan.files[0].action, FileAction::Skip);
    let out = commit(&mut store, &plan, OnConflict::Overwrite).unwrap();
    assert_eq!(read(&ws, "a.txt").as_deref(), Some(&b"base"[..]));
    store.undo(out.transaction_id.as_deref().unwrap()).unwrap();
    assert_eq!(read(&ws, "a.txt").as_deref(), Some(&b"HAND EDIT"[..]));
    assert_protected(&mut store, &ws, &[t0], "a.txt", b"HAND EDIT");
    drop(store);
    let mut store = open(&s);
    assert_protected(&mut store, &ws, &[t0], "a.txt", b"HAND EDIT");
}

/// Two sessions on one workspace: the other session's write, overwritten and put back by undo, is
/// never Retrace's in this session.
#[test]
fn undoing_an_overwrite_of_another_sessions_write_leaves_it_theirs() {
    let s = Scratch::new().unwrap();
    let ws = s.workspace.clone();
    let other_sidecar = s.tmp.path().join("other.ckpt");
    s.write("a.txt", b"base").unwrap();
    let mut mine = open(&s);
    let t0 = begin(&mut mine);
    edit(&mut mine, &ws, "a.txt", Some(b"mine"));
    mine.end_turn();
    let mut theirs = open_at(&other_sidecar, &ws);
    begin(&mut theirs);
    edit(&mut theirs, &ws, "a.txt", Some(b"THEIRS"));
    theirs.end_turn();

    assert_eq!(conflict_of(&mine, t0, "a.txt"), Some(ConflictReason::ManualEdit));
    let out = restore(&mut mine, t0, OnConflict::Overwrite);
    assert_eq!(read(&ws, "a.txt").as_deref(), Some(&b"base"[..]));
    mine.undo(out.transaction_id.as_deref().unwrap()).unwrap();
    assert_eq!(read(&ws, "a.txt").as_deref(), Some(&b"THEIRS"[..]));
    assert_protected(&mut mine, &ws, &[t0], "a.txt", b"THEIRS");
    drop(mine);
    let mut mine = open(&s);
    assert_protected(&mut mine, &ws, &[t0], "a.txt", b"THEIRS");
}

/// A manifest of an earlier build (no `ownedBefore`, `ownedAfter`, `ownedRecorded`) with the
/// state.json it left (the put-back edit as Retrace's own at the undo's sequence): read the safe
/// way, the file is Retrace's no more.
#[test]
fn an_undo_of_an_earlier_build_leaves_its_files_unowned() {
    let s = Scratch::new().unwrap();
    let ws = s.workspace.clone();
    s.write("a.txt", b"base").unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store);
    edit(&mut store, &ws, "a.txt", Some(b"agent"));
    store.end_turn();
    fs::write(ws.join("a.txt"), b"HAND EDIT").unwrap();
    let out = restore(&mut store, t0, OnConflict::Overwrite);
    let undo = store.undo(out.transaction_id.as_deref().unwrap()).unwrap();
    let undo_id = undo.transaction_id.unwrap();
    let undo_seq = store.mutation_seq();
    drop(store);
    // Strip what this build adds, and put the old build's proof into state.json.
    for entry in fs::read_dir(s.sidecar.join("transactions")).unwrap() {
        let p = entry.unwrap().path();
        let mut v: serde_json::Value = serde_json::from_slice(&fs::read(&p).unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("ownedRecorded");
        for t in v["targets"].as_array_mut().unwrap() {
            t.as_object_mut().unwrap().remove("ownedBefore");
            t.as_object_mut().unwrap().remove("ownedAfter");
        }
        fs::write(&p, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    }
    let state = s.sidecar.join("state.json");
    let mut v: serde_json::Value = serde_json::from_slice(&fs::read(&state).unwrap()).unwrap();
    v["owned"]["a.txt"] = serde_json::json!({
        "existed": true, "sha256": retrace_fsutil::sha256_bytes(b"HAND EDIT"), "mode": 0o644, "seq": undo_seq
    });
    fs::write(&state, serde_json::to_vec(&v).unwrap()).unwrap();
    let mut store = open(&s);
    assert!(store.transactions().any(|m| m.id == undo_id && !m.owned_recorded));
    // The last write Retrace can still prove is the turn's after-image ("agent").
    assert_eq!(conflict_of(&store, t0, "a.txt"), Some(ConflictReason::ManualEdit));
    assert_protected(&mut store, &ws, &[t0], "a.txt", b"HAND EDIT");
}

/// Item 6: a file a restore finds already in its target state becomes Retrace's, so a later
/// restore does not call Retrace's own state an `external_change`.
#[test]
fn a_file_already_in_its_target_state_becomes_retraces() {
    let s = Scratch::new().unwrap();
    let ws = s.workspace.clone();
    let mut store = open(&s);
    let t0 = begin(&mut store);
    store
        .capture_before(&[Change::new("a.txt", ChangeKind::Create)], Some("write_file"))
        .unwrap();
    fs::write(ws.join("a.txt"), b"one").unwrap();
    store.capture_after(&[PathBuf::from("a.txt")]).unwrap();
    let t1 = begin(&mut store);
    edit(&mut store, &ws, "a.txt", Some(b"two"));
    store.end_turn();
    // The user deletes the file: a restore to turn 0 finds it as turn 0 began (absent).
    fs::remove_file(ws.join("a.txt")).unwrap();
    let plan = store.plan_restore(t0).unwrap();
    assert_eq!(plan.plan.files[0].action, FileAction::Unchanged);
    let out = commit(&mut store, &plan, OnConflict::Refuse).unwrap();
    assert_eq!(out.transaction_id, None, "nothing written, no transaction");
    // Now the restore to turn 1 writes "one" without a conflict: the absence is Retrace's.
    assert_eq!(conflict_of(&store, t1, "a.txt"), None);
    drop(store);
    let mut store = open(&s);
    assert_eq!(
        conflict_of(&store, t1, "a.txt"),
        None,
        "the claim survives a restart"
    );
    let out = restore(&mut store, t1, OnConflict::Refuse);
    assert_eq!(out.files_written, vec!["a.txt".to_string()]);
    assert_eq!(read(&ws, "a.txt").as_deref(), Some(&b"one"[..]));
}

/// The same inside a restore that writes other files: the unchanged file is claimed at the
/// transaction's sequence; the undo of that restore puts back only what it wrote.
#[test]
fn an_unchanged_file_of_a_restore_that_writes_is_claimed_too() {
    let s = Scratch::new().unwrap();
    let ws = s.workspace.clone();
    s.write("a.txt", b"a0").unwrap();
    s.write("b.txt", b"b0").unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store);
    edit(&mut store, &ws, "a.txt", Some(b"a1"));
    edit(&mut store, &ws, "b.txt", Some(b"b1"));
    store.end_turn();
    // The user puts b.txt back by hand: equal to turn 0's before-image.
    fs::write(ws.join("b.txt"), b"b0").unwrap();
    let plan = store.plan_restore(t0).unwrap();
    let actions: Vec<FileAction> = plan.plan.files.iter().map(|f| f.action).collect();
    assert_eq!(actions, vec![FileAction::Write, FileAction::Unchanged]);
    let out = commit(&mut store, &plan, OnConflict::Refuse).unwrap();
    let seq = store.mutation_seq();
    let b = retrace_fsutil::RelPath::from_stored(b"b.txt").unwrap();
    assert_eq!(store.state().owned[&b].seq, seq);
    assert_eq!(
        store.state().owned[&b].image.sha256.as_deref(),
        Some(retrace_fsutil::sha256_bytes(b"b0").as_str())
    );
    store.undo(out.transaction_id.as_deref().unwrap()).unwrap();
    assert_eq!(read(&ws, "a.txt").as_deref(), Some(&b"a1"[..]));
    assert_eq!(read(&ws, "b.txt").as_deref(), Some(&b"b0"[..]));
    // A later turn changes b.txt; the restore to before it owns b0, so it writes without conflict.
    let t1 = begin(&mut store);
    edit(&mut store, &ws, "b.txt", Some(b"b2"));
    store.end_turn();
    assert_eq!(conflict_of(&store, t1, "b.txt"), None);
    drop(store);
    let store = open(&s);
    assert_eq!(
        store.state().owned[&b].image.sha256.as_deref(),
        Some(retrace_fsutil::sha256_bytes(b"b2").as_str())
    );
}

/// A restore to a v1 record (text only, no mode) writes the text with a new file's mode, and that
/// mode is part of what it proves it left: a later chmod by hand is a `mode_change` the next
/// restore reports, never one it puts back silently.
#[test]
fn a_v1_restore_proves_the_mode_it_wrote() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    let s = Scratch::new().unwrap();
    let ws = s.workspace.clone();
    let f = ws.join("f.txt");
    // An earlier build's turn 0 saw `f.txt` as "old".
    fs::create_dir_all(&s.sidecar).unwrap();
    let rec = serde_json::json!({
        "turn": 0, "time": "2027-01-15T08:00:00Z", "prompt": "legacy", "msgIndex": 0,
        "files": [{ "path": "f.txt", "content": "old\n" }],
    });
    fs::write(s.sidecar.join("turn-0.json"), serde_json::to_vec(&rec).unwrap()).unwrap();
    fs::write(&f, b"old\n").unwrap();
    fs::set_permissions(&f, fs::Permissions::from_mode(0o644)).unwrap();
    let mut store = open(&s);
    let t1 = begin(&mut store);
    edit(&mut store, &ws, "f.txt", Some(b"new\n"));
    store.end_turn();

    // Back to turn 0: the v1 text, written with a new file's mode.
    restore(&mut store, 0, OnConflict::Refuse);
    assert_eq!(read(&ws, "f.txt").as_deref(), Some(&b"old\n"[..]));
    assert_eq!(mode(&f), 0o644);
    // The user makes it private; a restore to turn 1 (whose before-image is mode 0644) sees it.
    fs::set_permissions(&f, fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(conflict_of(&store, t1, "f.txt"), Some(ConflictReason::ModeChange));
    let plan = store.plan_restore(t1).unwrap();
    let refused = commit(&mut store, &plan, OnConflict::Refuse);
    assert!(
        matches!(refused, Err(CheckpointError::Refused { .. })),
        "{refused:?}"
    );
    assert_eq!(mode(&f), 0o600, "the user's mode stays");
    drop(store);
    let store = open(&s);
    assert_eq!(conflict_of(&store, t1, "f.txt"), Some(ConflictReason::ModeChange));
}
