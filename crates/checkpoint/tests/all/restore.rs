//! Code restore (SPEC §5.2–§5.6): plans, transactions, conflicts, undo, revert.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Arc;

use retrace_checkpoint::{BeginTurn, Change, CheckpointError, CheckpointStore, CommitOptions, StoreOptions};
use retrace_fsutil::Fs;
use retrace_protocol::{ChangeKind, ConflictReason, FileAction, Gap, GapReason, OnConflict};
use retrace_testkit::Scratch;

fn opts() -> StoreOptions {
    StoreOptions {
        fs: Fs::without_sync(),
        clock: Arc::new(|| time::OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()),
        ..StoreOptions::default()
    }
}

fn open(s: &Scratch) -> CheckpointStore {
    CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap()
}

fn begin(store: &mut CheckpointStore, prompt: &str) -> u64 {
    store
        .begin_turn(BeginTurn {
            prompt: prompt.into(),
            ..BeginTurn::default()
        })
        .unwrap()
}

/// An agent edit through the seam: `Some(bytes)` writes, `None` deletes.
fn edit(store: &mut CheckpointStore, s: &Scratch, path: &str, bytes: Option<&[u8]>) {
    store
        .capture_before(&[Change::new(path, ChangeKind::Modify)], Some("write_file"))
        .unwrap();
    match bytes {
        Some(b) => s.write(path, b).unwrap(),
        None => fs::remove_file(s.workspace.join(path)).unwrap(),
    }
    store.capture_after(&[PathBuf::from(path)]).unwrap();
}

/// An agent move through the seam.
fn mv(store: &mut CheckpointStore, s: &Scratch, from: &str, to: &str) {
    store
        .capture_before(
            &[
                Change::new(from, ChangeKind::Delete),
                Change::new(to, ChangeKind::Create),
            ],
            Some("move_file"),
        )
        .unwrap();
    let dst = s.workspace.join(to);
    fs::create_dir_all(dst.parent().unwrap()).unwrap();
    fs::rename(s.workspace.join(from), dst).unwrap();
    store
        .capture_after(&[PathBuf::from(from), PathBuf::from(to)])
        .unwrap();
}

fn read(s: &Scratch, p: &str) -> Option<Vec<u8>> {
    fs::read(s.workspace.join(p)).ok()
}

fn restore(store: &mut CheckpointStore, turn: u64, on_conflict: OnConflict) -> retrace_protocol::CodeOutcome {
    let plan = store.plan_restore(turn).unwrap();
    store
        .commit(
            &plan,
            CommitOptions {
                confirm: true,
                on_conflict,
            },
        )
        .unwrap()
}

fn no_leftovers(s: &Scratch) {
    fn walk(d: &std::path::Path) {
        for e in fs::read_dir(d).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            assert!(!name.contains(".retrace-"), "leftover {}", e.path().display());
            if e.file_type().unwrap().is_dir() {
                walk(&e.path());
            }
        }
    }
    walk(&s.workspace);
}

#[test]
fn restore_undo_round_trip_with_create_edit_delete_move() {
    let s = Scratch::new().unwrap();
    s.write("keep.txt", b"untouched").unwrap();
    s.write("a.txt", b"a0").unwrap();
    s.write("gone.txt", b"g0").unwrap();
    s.write("src.txt", b"s0").unwrap();
    let mut store = open(&s);
    let t1 = begin(&mut store, "one");
    edit(&mut store, &s, "a.txt", Some(b"a1"));
    edit(&mut store, &s, "new.txt", Some(b"n1"));
    let _t2 = begin(&mut store, "two");
    edit(&mut store, &s, "gone.txt", None);
    mv(&mut store, &s, "src.txt", "d/dst.txt");
    edit(&mut store, &s, "a.txt", Some(b"a2"));
    store.end_turn();

    let plan = store.plan_restore(t1).unwrap();
    let actions: Vec<(String, FileAction)> = plan
        .plan
        .files
        .iter()
        .map(|f| (f.path.clone(), f.action))
        .collect();
    assert_eq!(
        actions,
        [
            ("a.txt".into(), FileAction::Write),
            ("new.txt".into(), FileAction::Delete),
            ("gone.txt".into(), FileAction::Write),
            ("src.txt".into(), FileAction::Write),
            ("d/dst.txt".into(), FileAction::Delete),
        ]
    );
    assert!(plan.plan.conflicts.is_empty());
    assert!(!plan.plan.requires_confirmation);
    // Planning changes nothing.
    assert_eq!(read(&s, "a.txt").unwrap(), b"a2");
    let out = store.commit(&plan, CommitOptions::default()).unwrap();
    assert_eq!(read(&s, "a.txt").unwrap(), b"a0");
    assert_eq!(read(&s, "new.txt"), None);
    assert_eq!(read(&s, "gone.txt").unwrap(), b"g0");
    assert_eq!(read(&s, "src.txt").unwrap(), b"s0");
    assert_eq!(read(&s, "d/dst.txt"), None);
    assert_eq!(read(&s, "keep.txt").unwrap(), b"untouched");
    assert!(out.undo_available);
    no_leftovers(&s);

    // Undo from another process brings the forward images back.
    drop(store);
    let mut store = open(&s);
    let tx = out.transaction_id.unwrap();
    store.undo(&tx).unwrap();
    assert_eq!(read(&s, "a.txt").unwrap(), b"a2");
    assert_eq!(read(&s, "new.txt").unwrap(), b"n1");
    assert_eq!(read(&s, "gone.txt"), None);
    assert_eq!(read(&s, "src.txt"), None);
    assert_eq!(read(&s, "d/dst.txt").unwrap(), b"s0");
    no_leftovers(&s);
    assert!(matches!(
        store.undo(&tx),
        Err(CheckpointError::UndoUnavailable { .. })
    ));
    assert!(store.fsck().ok, "{:#?}", store.fsck().problems);
}

#[test]
fn rewinding_to_turn_3_then_turn_1_has_no_false_conflicts() {
    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    let mut turns = Vec::new();
    for i in 0..5u8 {
        turns.push(begin(&mut store, &format!("t{i}")));
        edit(&mut store, &s, "f.txt", Some(&[b'0' + i]));
        edit(&mut store, &s, &format!("only{i}.txt"), Some(b"x"));
    }
    store.end_turn();
    let out = restore(&mut store, turns[3], OnConflict::Refuse);
    assert!(out.conflicts.is_empty());
    assert_eq!(read(&s, "f.txt").unwrap(), b"2");
    let out = restore(&mut store, turns[1], OnConflict::Refuse);
    assert!(out.conflicts.is_empty(), "{:?}", out.conflicts);
    assert_eq!(read(&s, "f.txt").unwrap(), b"0");
    for i in 1..5 {
        assert_eq!(read(&s, &format!("only{i}.txt")), None);
    }
    assert_eq!(read(&s, "only0.txt").unwrap(), b"x");
}

#[test]
fn restore_then_new_turn_then_restore_before_the_first_restore() {
    let s = Scratch::new().unwrap();
    s.write("f", b"v0").unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store, "t0");
    edit(&mut store, &s, "f", Some(b"v1"));
    let t1 = begin(&mut store, "t1");
    edit(&mut store, &s, "f", Some(b"v2"));
    edit(&mut store, &s, "g", Some(b"g1"));
    store.end_turn();
    restore(&mut store, t1, OnConflict::Refuse); // f = v1, g gone
    assert_eq!(read(&s, "f").unwrap(), b"v1");
    let t2 = begin(&mut store, "t2");
    edit(&mut store, &s, "f", Some(b"v3"));
    store.end_turn();
    // To t2: as the workspace was when t2 started (after the restore).
    let plan = store.plan_restore(t2).unwrap();
    assert_eq!(plan.plan.files.len(), 1);
    // To t0: f as it was when t0 started, g absent (it was at t0 too).
    restore(&mut store, t0, OnConflict::Refuse);
    assert_eq!(read(&s, "f").unwrap(), b"v0");
    assert_eq!(read(&s, "g"), None);
    // And to t1 now means f = v1 again: the restores' forward images sit on the timeline.
    let out = restore(&mut store, t1, OnConflict::Refuse);
    assert!(out.conflicts.is_empty());
    assert_eq!(read(&s, "f").unwrap(), b"v1");
}

#[test]
fn an_all_unchanged_restore_writes_nothing_and_keeps_the_undo_target() {
    let s = Scratch::new().unwrap();
    s.write("f", b"v0").unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store, "t0");
    edit(&mut store, &s, "f", Some(b"v1"));
    store.end_turn();
    let out = restore(&mut store, t0, OnConflict::Refuse);
    let tx = out.transaction_id.unwrap();
    let plan = store.plan_restore(t0).unwrap();
    assert!(plan.plan.files.iter().all(|f| f.action == FileAction::Unchanged));
    let again = store.commit(&plan, CommitOptions::default()).unwrap();
    assert_eq!(again.transaction_id, None);
    assert!(again.undo_available);
    assert_eq!(store.undo_target().unwrap().id, tx);
}

#[test]
fn each_conflict_reason() {
    let s = Scratch::new().unwrap();
    for f in ["edited", "moded", "recreated", "vanished"] {
        s.write(f, b"0").unwrap();
    }
    let mut store = open(&s);
    let t0 = begin(&mut store, "t0");
    edit(&mut store, &s, "edited", Some(b"1"));
    edit(&mut store, &s, "moded", Some(b"1"));
    edit(&mut store, &s, "recreated", None);
    edit(&mut store, &s, "vanished", Some(b"1"));
    edit(&mut store, &s, "clean", Some(b"1"));
    store.end_turn();
    s.write("edited", b"user").unwrap();
    fs::set_permissions(s.workspace.join("moded"), fs::Permissions::from_mode(0o755)).unwrap();
    s.write("recreated", b"back").unwrap();
    fs::remove_file(s.workspace.join("vanished")).unwrap();
    let plan = store.plan_restore(t0).unwrap();
    let reasons: Vec<(String, Option<ConflictReason>)> = plan
        .plan
        .files
        .iter()
        .map(|f| (f.path.clone(), f.conflict.as_ref().map(|c| c.reason)))
        .collect();
    assert_eq!(
        reasons,
        [
            ("edited".into(), Some(ConflictReason::ManualEdit)),
            ("moded".into(), Some(ConflictReason::ModeChange)),
            ("recreated".into(), Some(ConflictReason::DeletedAndRecreated)),
            ("vanished".into(), Some(ConflictReason::ExternalChange)),
            ("clean".into(), None),
        ]
    );
    let c = &plan.plan.conflicts[0];
    assert_eq!(
        c.current_sha256.as_deref(),
        Some(retrace_fsutil::sha256_bytes(b"user").as_str())
    );
    assert_eq!(
        c.last_owned_sha256.as_deref(),
        Some(retrace_fsutil::sha256_bytes(b"1").as_str())
    );
    assert_eq!(
        c.checkpoint_sha256.as_deref(),
        Some(retrace_fsutil::sha256_bytes(b"0").as_str())
    );
    // refuse: nothing written.
    let err = store.commit(&plan, CommitOptions::default()).unwrap_err();
    assert!(
        matches!(err, CheckpointError::Refused { ref conflicts } if conflicts.len() == 4),
        "{err}"
    );
    assert_eq!(read(&s, "clean").unwrap(), b"1");
    assert_eq!(read(&s, "edited").unwrap(), b"user");
    // skip: only the clean file.
    let out = store
        .commit(
            &plan,
            CommitOptions {
                confirm: false,
                on_conflict: OnConflict::Skip,
            },
        )
        .unwrap();
    assert_eq!(out.files_deleted, ["clean"]);
    assert_eq!(out.conflicts.len(), 4);
    assert_eq!(read(&s, "edited").unwrap(), b"user");
}

#[test]
fn overwrite_then_undo_returns_the_users_bytes() {
    let s = Scratch::new().unwrap();
    s.write("f", b"orig").unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store, "t0");
    edit(&mut store, &s, "f", Some(b"agent"));
    store.end_turn();
    s.write("f", b"user's work").unwrap();
    let out = restore(&mut store, t0, OnConflict::Overwrite);
    assert_eq!(out.conflicts[0].reason, ConflictReason::ManualEdit);
    assert_eq!(read(&s, "f").unwrap(), b"orig");
    store.undo(out.transaction_id.as_deref().unwrap()).unwrap();
    assert_eq!(read(&s, "f").unwrap(), b"user's work");
}

#[test]
fn unverified_missing_payload_and_unsafe_paths() {
    let s = Scratch::new().unwrap();
    s.write("big", &[1u8; 100]).unwrap();
    s.write("real/x", b"x0").unwrap();
    let limits = retrace_checkpoint::Limits {
        max_file_bytes: 10,
        ..Default::default()
    };
    let mut store =
        CheckpointStore::open(&s.sidecar, &s.workspace, StoreOptions { limits, ..opts() }).unwrap();
    let t0 = begin(&mut store, "t0");
    edit(&mut store, &s, "big", Some(b"small"));
    edit(&mut store, &s, "nostate", Some(b"1"));
    edit(&mut store, &s, "real/x", Some(b"x1"));
    store.end_turn();
    // Lose the ownership proof of one file.
    drop(store);
    let state_path = s.sidecar.join("state.json");
    if let Ok(bytes) = fs::read(&state_path) {
        let mut state: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        state["owned"].as_object_mut().unwrap().remove("nostate");
        fs::write(&state_path, serde_json::to_vec(&state).unwrap()).unwrap();
    }
    // The turn's after-images taken out of the log (their frames made a kind no build reads).
    let _ = t0;
    crate::log_support::edit_headers(&crate::log_support::segment(&s.sidecar), |h| {
        if h["line"]["after"].is_object() {
            h["k"] = serde_json::json!("forgotten");
        }
    });
    // Swap a symlink in as a directory component.
    fs::rename(s.workspace.join("real"), s.workspace.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink("elsewhere", s.workspace.join("real")).unwrap();
    let mut store = open(&s);
    let plan = store.plan_restore(t0).unwrap();
    let reasons: Vec<Option<ConflictReason>> = plan
        .plan
        .files
        .iter()
        .map(|f| f.conflict.as_ref().map(|c| c.reason))
        .collect();
    assert_eq!(
        reasons,
        [
            Some(ConflictReason::MissingPayload),
            Some(ConflictReason::Unverified),
            Some(ConflictReason::PathUnsafe)
        ]
    );
    assert!(
        plan.plan.requires_confirmation,
        "an oversized gap needs confirmation"
    );
    // path_unsafe never blocks and is never written; overwrite writes the unverified file only.
    let out = store
        .commit(
            &plan,
            CommitOptions {
                confirm: true,
                on_conflict: OnConflict::Overwrite,
            },
        )
        .unwrap();
    assert_eq!(out.files_deleted, ["nostate"]);
    assert!(out.files_written.is_empty());
    assert_eq!(fs::read(s.workspace.join("elsewhere/x")).unwrap(), b"x1");
}

#[test]
fn a_shell_gap_requires_confirmation() {
    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store, "t0");
    edit(&mut store, &s, "f", Some(b"1"));
    store
        .record_gap(Gap {
            tool: Some("bash".into()),
            detail: Some("rm -rf build".into()),
            ..Gap::new(GapReason::BashSideEffect)
        })
        .unwrap();
    store.end_turn();
    let plan = store.plan_restore(t0).unwrap();
    assert!(plan.plan.requires_confirmation);
    assert_eq!(plan.plan.gaps[0].detail.as_deref(), Some("rm -rf build"));
    assert!(matches!(
        store.commit(&plan, CommitOptions::default()),
        Err(CheckpointError::ConfirmationRequired)
    ));
    assert!(read(&s, "f").is_some());
    store
        .commit(
            &plan,
            CommitOptions {
                confirm: true,
                ..Default::default()
            },
        )
        .unwrap();
    assert!(read(&s, "f").is_none());
}

#[test]
fn a_plan_goes_stale_when_the_workspace_generation_moves() {
    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store, "t0");
    edit(&mut store, &s, "f", Some(b"1"));
    let plan = store.plan_restore(t0).unwrap();
    edit(&mut store, &s, "g", Some(b"1"));
    assert!(matches!(
        store.commit(&plan, CommitOptions::default()),
        Err(CheckpointError::StalePlan { .. })
    ));
}

#[test]
fn undo_is_refused_after_a_new_turn_or_when_a_file_moved() {
    let s = Scratch::new().unwrap();
    s.write("f", b"0").unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store, "t0");
    edit(&mut store, &s, "f", Some(b"1"));
    store.end_turn();
    let out = restore(&mut store, t0, OnConflict::Refuse);
    let tx = out.transaction_id.unwrap();
    // A mode-only change counts.
    fs::set_permissions(s.workspace.join("f"), fs::Permissions::from_mode(0o700)).unwrap();
    assert!(matches!(
        store.undo(&tx),
        Err(CheckpointError::UndoRefused { .. })
    ));
    fs::set_permissions(s.workspace.join("f"), fs::Permissions::from_mode(0o644)).unwrap();
    begin(&mut store, "t1");
    assert!(matches!(
        store.undo(&tx),
        Err(CheckpointError::UndoUnavailable { .. })
    ));
}

#[test]
fn a_mode_only_change_is_restored() {
    let s = Scratch::new().unwrap();
    s.write("run.sh", b"#!/bin/sh\n").unwrap();
    fs::set_permissions(s.workspace.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store, "t0");
    store
        .capture_before(&[Change::new("run.sh", ChangeKind::Modify)], None)
        .unwrap();
    fs::set_permissions(s.workspace.join("run.sh"), fs::Permissions::from_mode(0o644)).unwrap();
    store.capture_after(&[PathBuf::from("run.sh")]).unwrap();
    store.end_turn();
    let plan = store.plan_restore(t0).unwrap();
    assert_eq!(plan.plan.files[0].action, FileAction::Write);
    store.commit(&plan, CommitOptions::default()).unwrap();
    let mode = fs::metadata(s.workspace.join("run.sh"))
        .unwrap()
        .permissions()
        .mode()
        & 0o7777;
    assert_eq!(mode, 0o755);
}

#[test]
fn single_file_revert_goes_back_to_before_the_first_touch() {
    let s = Scratch::new().unwrap();
    s.write("f", b"orig").unwrap();
    let mut store = open(&s);
    begin(&mut store, "t0");
    edit(&mut store, &s, "f", Some(b"one"));
    edit(&mut store, &s, "other", Some(b"x"));
    begin(&mut store, "t1");
    edit(&mut store, &s, "f", Some(b"two"));
    store.end_turn();
    let plan = store.plan_file_revert(std::path::Path::new("f")).unwrap();
    assert_eq!(plan.plan.files.len(), 1);
    let out = store.commit(&plan, CommitOptions::default()).unwrap();
    assert_eq!(read(&s, "f").unwrap(), b"orig");
    assert_eq!(read(&s, "other").unwrap(), b"x");
    store.undo(out.transaction_id.as_deref().unwrap()).unwrap();
    assert_eq!(read(&s, "f").unwrap(), b"two");
}

#[test]
fn a_symlink_swapped_in_between_plan_and_commit_is_refused() {
    let s = Scratch::new().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("f"), b"outside").unwrap();
    s.write("d/f", b"0").unwrap();
    s.write("g", b"0").unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store, "t0");
    edit(&mut store, &s, "d/f", Some(b"1"));
    edit(&mut store, &s, "g", Some(b"1"));
    store.end_turn();
    let plan = store.plan_restore(t0).unwrap();
    assert!(plan.plan.conflicts.is_empty());
    // Between plan and commit, `d` becomes a symlink to a directory outside the workspace that holds
    // a file with the very bytes Retrace last wrote.
    fs::write(outside.path().join("f"), b"1").unwrap();
    fs::rename(s.workspace.join("d"), s.workspace.join("d-moved")).unwrap();
    std::os::unix::fs::symlink(outside.path(), s.workspace.join("d")).unwrap();
    // The commit holds the files to the plan that was shown: `d/f` moved since, so the whole
    // commit is refused as `external_change` (under any choice), and nothing is written anywhere.
    for on_conflict in [OnConflict::Refuse, OnConflict::Skip, OnConflict::Overwrite] {
        let plan = plan.clone();
        let err = store
            .commit(
                &plan,
                CommitOptions {
                    confirm: false,
                    on_conflict,
                },
            )
            .unwrap_err();
        match err {
            CheckpointError::Changed { conflicts } => {
                assert_eq!(conflicts.len(), 1, "{conflicts:?}");
                assert_eq!(conflicts[0].path, "d/f");
                assert_eq!(conflicts[0].reason, ConflictReason::ExternalChange);
            }
            other => panic!("expected Changed, got {other:?}"),
        }
        assert_eq!(read(&s, "g").unwrap(), b"1", "nothing written");
    }
    // Previewed again, the symlink shows: that file is refused (path_unsafe, never written), and,
    // as SPEC §5.2 rule 1 says, it does not block the other files.
    let plan = store.plan_restore(t0).unwrap();
    assert_eq!(plan.plan.conflicts.len(), 1);
    assert_eq!(plan.plan.conflicts[0].reason, ConflictReason::PathUnsafe);
    let out = store.commit(&plan, CommitOptions::default()).unwrap();
    assert_eq!(out.conflicts.len(), 1);
    assert_eq!(out.conflicts[0].reason, ConflictReason::PathUnsafe);
    assert_eq!(out.files_written, ["g"]);
    assert_eq!(
        fs::read(outside.path().join("f")).unwrap(),
        b"1",
        "nothing written outside the workspace"
    );
    assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 1);
    // Same when the target itself becomes a symlink to a file outside.
    let t1 = begin(&mut store, "t1");
    edit(&mut store, &s, "h", Some(b"1"));
    store.end_turn();
    let shown = store.plan_restore(t1).unwrap();
    fs::remove_file(s.workspace.join("h")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("f"), s.workspace.join("h")).unwrap();
    assert!(matches!(
        store.commit(&shown, CommitOptions::default()),
        Err(CheckpointError::Changed { .. })
    ));
    // Previewed again, the only file is an unsafe path: nothing can be written, under any choice,
    // and that is no success (SPEC §5.2).
    let plan = store.plan_restore(t1).unwrap();
    assert_eq!(plan.blocking_conflicts(), 1);
    for on_conflict in [OnConflict::Refuse, OnConflict::Skip, OnConflict::Overwrite] {
        match store.commit(
            &plan,
            CommitOptions {
                confirm: false,
                on_conflict,
            },
        ) {
            Err(CheckpointError::Refused { conflicts }) => {
                assert_eq!(conflicts.len(), 1);
                assert_eq!(conflicts[0].reason, ConflictReason::PathUnsafe);
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
    assert_eq!(fs::read(outside.path().join("f")).unwrap(), b"1");
    assert!(fs::symlink_metadata(s.workspace.join("h"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn terminal_manifests_older_than_the_oldest_turn_are_pruned_with_their_blobs() {
    let s = Scratch::new().unwrap();
    s.write("f", b"user v0").unwrap();
    let limits = retrace_checkpoint::Limits {
        max_turns: 2,
        ..Default::default()
    };
    let mut store =
        CheckpointStore::open(&s.sidecar, &s.workspace, StoreOptions { limits, ..opts() }).unwrap();
    let t0 = begin(&mut store, "t0");
    edit(&mut store, &s, "f", Some(b"agent v1"));
    store.end_turn();
    let out = restore(&mut store, t0, OnConflict::Refuse);
    let tx = out.transaction_id.unwrap();
    let blob = s.sidecar.join(retrace_checkpoint::pack_rel_path(&tx));
    assert!(blob.exists(), "the forward image is in the transaction's pack");
    let mode = fs::metadata(&blob).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "private, whatever the workspace file's mode");
    // While the restore is the undo target, its turn is held and its manifest kept.
    assert!(store.transactions().any(|m| m.id == tx));
    for i in 0..3 {
        begin(&mut store, &format!("later {i}"));
        edit(&mut store, &s, "f", Some(format!("v{i}").as_bytes()));
    }
    store.end_turn();
    assert!(store.turn(t0).is_none());
    assert!(
        !store.transactions().any(|m| m.id == tx),
        "the old manifest is pruned"
    );
    assert!(!blob.exists(), "and its pack collected");
    assert!(store.fsck().ok, "{:#?}", store.fsck().problems);
}

#[test]
fn fsck_checks_manifests_and_their_blobs() {
    let s = Scratch::new().unwrap();
    s.write("f", b"v0").unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store, "t0");
    edit(&mut store, &s, "f", Some(b"v1"));
    store.end_turn();
    let out = restore(&mut store, t0, OnConflict::Refuse);
    assert!(store.fsck().ok);
    let pack = s.sidecar.join(retrace_checkpoint::pack_rel_path(
        out.transaction_id.as_deref().unwrap(),
    ));
    fs::write(&pack, b"rot").unwrap();
    let report = store.fsck();
    assert!(!report.ok);
    let p = report
        .problems
        .iter()
        .find(|p| p.path.starts_with("forward/"))
        .unwrap();
    assert_eq!(p.file.as_deref(), Some("f"));
    assert!(p.problem.contains(out.transaction_id.as_deref().unwrap()));
    fs::write(s.sidecar.join("transactions/broken.json"), b"{").unwrap();
    drop(store);
    // A manifest that cannot be read stops writes (naming it); reading still works, and fsck says.
    let e = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap_err();
    assert!(e.to_string().contains("transactions/broken.json"), "{e}");
    let store = CheckpointStore::open_read_only(&s.sidecar, &s.workspace).unwrap();
    assert!(store
        .fsck()
        .problems
        .iter()
        .any(|p| p.path == "transactions/broken.json"));
}

/// After-images reach the log with the turn's next append or its end, not after every tool call.
/// A process that dies mid-turn loses the newest proofs: a restore then reports those files as
/// conflicts and never overwrites them; a turn that ended keeps every proof.
#[test]
fn ownership_proofs_are_written_at_the_end_of_the_turn_and_a_crash_only_costs_conflicts() {
    let s = Scratch::new().unwrap();
    s.write("a.txt", b"a0\n").unwrap();
    s.write("b.txt", b"b0\n").unwrap();
    let mut store = open(&s);
    let t1 = begin(&mut store, "one");
    edit(&mut store, &s, "a.txt", Some(b"a1\n"));
    store.end_turn();
    drop(store);
    let afters = |turn: u64| {
        crate::log_support::frames_of(&s.sidecar, turn, "line")
            .into_iter()
            .filter(|(_, f)| f.header["line"]["after"]["seq"].is_u64())
            .count()
    };
    assert_eq!(afters(t1), 1, "the proof of a.txt, with its sequence");

    // A second turn edits b.txt, then the process dies before the turn ends (no Drop).
    let mut store = open(&s);
    let t2 = begin(&mut store, "two");
    edit(&mut store, &s, "b.txt", Some(b"b1\n"));
    assert_eq!(afters(t2), 0, "no write per tool call");
    std::mem::forget(store);

    let mut store = open(&s);
    let plan = store.plan_restore(t1).unwrap();
    let reason = |p: &str| {
        let f = plan.plan.files.iter().find(|f| f.path == p).unwrap();
        f.conflict.as_ref().map(|c| c.reason)
    };
    assert_eq!(reason("b.txt"), Some(ConflictReason::Unverified), "{plan:?}");
    assert_eq!(reason("a.txt"), None, "{plan:?}");
    let err = store.commit(&plan, CommitOptions::default()).unwrap_err();
    assert!(matches!(err, CheckpointError::Refused { .. }), "{err}");
    assert_eq!(read(&s, "b.txt").unwrap(), b"b1\n");
    assert_eq!(read(&s, "a.txt").unwrap(), b"a1\n");
}
