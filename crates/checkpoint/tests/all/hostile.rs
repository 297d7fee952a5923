//! A hostile or untidy workspace meets restore, undo and the timeline (TESTING.md "A hostile
//! workspace", issue 13): legacy turns injected among v3 turns, FIFOs, directories and files where
//! a restore wants to write, unreadable files, a symlinked parent swapped in before an undo, names
//! as long as a name can be, and an ownership proof newer in a turn's record than in `state.json`.
//! Each is a conflict or a clear error: never a hang, never a write outside the workspace, never a
//! silent partial success.

use std::fs;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;

use crate::hostile_support::{begin, choice, edit, mkfifo, open, read};
use retrace_checkpoint::{CheckpointError, CheckpointStore, CommitOptions, StoreOptions};
use retrace_fsutil::{sha256_bytes, Fs};
use retrace_protocol::{ConflictReason, FileAction, OnConflict};
use retrace_testkit::Scratch;

/// A v2 record of turn `n` (written after the v3 turns: a later time) whose only entry is `path`
/// with the before-image `before`.
fn inject_v2(s: &Scratch, n: u64, path: &str, before: &[u8]) {
    let rec = serde_json::json!({
        "schemaVersion": 2, "turn": n, "time": "2099-01-01T00:00:00Z", "prompt": format!("legacy {n}"),
        "msgIndex": 0, "coverage": "complete", "coverageGaps": [],
        "files": [{"path": path, "content": String::from_utf8(before.to_vec()).unwrap(), "mode": 420,
                   "sha256": sha256_bytes(before), "captureSource": "previewer"}]
    });
    fs::write(
        s.sidecar.join(format!("turn-{n}.json")),
        serde_json::to_vec(&rec).unwrap(),
    )
    .unwrap();
}

/// Issue 13 item 2, repro A: a legacy turn 1 sits after v3 turn 0 on the timeline, so restoring
/// to turn 0 takes turn 0's before-image, not the legacy turn's.
#[test]
fn a_legacy_turn_sits_after_the_v3_turns_before_it() {
    let s = Scratch::new().unwrap();
    s.write("f", b"orig").unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store);
    edit(&mut store, &s, "f", Some(b"A"));
    store.end_turn();
    drop(store);
    inject_v2(&s, 1, "f", b"A");
    s.write("f", b"B").unwrap();
    let mut store = open(&s);
    let plan = store.plan_restore(t0).unwrap();
    store.commit(&plan, choice(OnConflict::Overwrite)).unwrap();
    assert_eq!(read(&s, "f").unwrap(), b"orig");
}

/// Issue 13 item 2, repro B: a restore made before a legacy turn was written is not pulled into a
/// restore to that turn.
#[test]
fn a_restore_before_a_legacy_turn_is_not_part_of_it() {
    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store);
    edit(&mut store, &s, "g", Some(b"g0"));
    store.end_turn();
    let plan = store.plan_restore(t0).unwrap();
    store.commit(&plan, choice(OnConflict::Refuse)).unwrap();
    assert_eq!(read(&s, "g"), None);
    drop(store);
    s.write("f", b"f1").unwrap();
    inject_v2(&s, 1, "f", b"f0");
    let store = open(&s);
    let plan = store.plan_restore(1).unwrap();
    let paths: Vec<&str> = plan.plan.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["f"], "turn 1 never touched g");
    // Single-file revert takes the same order: `f`'s earliest image is the legacy turn's.
    let revert = store.plan_file_revert(Path::new("f")).unwrap();
    assert_eq!(revert.plan.turn, 1);
}

/// Issue 13 items 3 and 7: what stands at a target decides, typed before anything is opened.
#[test]
fn special_files_directories_and_files_above_are_type_changes() {
    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store);
    for p in ["fifo.txt", "dir.txt", "d/below.txt", "plain.txt"] {
        edit(&mut store, &s, p, Some(b"agent"));
    }
    store.end_turn();
    // The agent's files were absent at turn 0; the user put other things there since.
    fs::remove_file(s.workspace.join("fifo.txt")).unwrap();
    mkfifo(&s.workspace.join("fifo.txt"));
    fs::remove_file(s.workspace.join("dir.txt")).unwrap();
    fs::create_dir(s.workspace.join("dir.txt")).unwrap();
    fs::remove_dir_all(s.workspace.join("d")).unwrap();
    s.write("d", b"a file where the directory was").unwrap();
    let plan = store.plan_restore(t0).unwrap();
    let mut got: Vec<(String, Option<ConflictReason>, FileAction, Option<FileAction>)> = plan
        .plan
        .files
        .iter()
        .map(|f| {
            (
                f.path.clone(),
                f.conflict.as_ref().map(|c| c.reason),
                f.action,
                f.on_overwrite,
            )
        })
        .collect();
    got.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        got,
        [
            ("d/below.txt".into(), None, FileAction::Unchanged, None),
            (
                "dir.txt".into(),
                Some(ConflictReason::TypeChange),
                FileAction::Skip,
                Some(FileAction::Skip)
            ),
            (
                "fifo.txt".into(),
                Some(ConflictReason::TypeChange),
                FileAction::Skip,
                Some(FileAction::Skip)
            ),
            ("plain.txt".into(), None, FileAction::Delete, None),
        ]
    );
    // User changes: refused by default, nothing written…
    assert!(matches!(
        store.commit(&plan, choice(OnConflict::Refuse)),
        Err(CheckpointError::Refused { .. })
    ));
    assert!(s.workspace.join("plain.txt").exists());
    // …and never written over, even with overwrite.
    let out = store.commit(&plan, choice(OnConflict::Overwrite)).unwrap();
    assert_eq!(out.files_deleted, ["plain.txt"]);
    assert!(fs::symlink_metadata(s.workspace.join("fifo.txt"))
        .unwrap()
        .file_type()
        .is_fifo());
    assert!(s.workspace.join("dir.txt").is_dir());
    assert_eq!(read(&s, "d").unwrap(), b"a file where the directory was");
}

/// An unreadable file at a target is a conflict, not an unsafe path that the default skips. As
/// root, nothing is unreadable: the test says so and runs what it can.
#[test]
fn an_unreadable_target_is_a_conflict() {
    let s = Scratch::new().unwrap();
    s.write("secret", b"v0").unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store);
    edit(&mut store, &s, "secret", Some(b"v1"));
    store.end_turn();
    fs::set_permissions(s.workspace.join("secret"), fs::Permissions::from_mode(0o000)).unwrap();
    if fs::read(s.workspace.join("secret")).is_ok() {
        eprintln!("notice: running as root, so no file is unreadable; the CLI test covers this case as another user");
        return;
    }
    let plan = store.plan_restore(t0).unwrap();
    assert_eq!(plan.plan.conflicts[0].reason, ConflictReason::Unreadable);
    assert!(store.commit(&plan, choice(OnConflict::Refuse)).is_err());
}

/// Issue 13 item 4: a symlinked parent swapped in before an undo leads nowhere outside.
#[test]
fn undo_never_creates_directories_through_a_symlink() {
    let s = Scratch::new().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store);
    edit(&mut store, &s, "p/q/new.txt", Some(b"made by the agent"));
    store.end_turn();
    let plan = store.plan_restore(t0).unwrap();
    let out = store.commit(&plan, choice(OnConflict::Refuse)).unwrap();
    assert_eq!(out.files_deleted, ["p/q/new.txt"]);
    // The turn made `p/q`; the restore left it empty and removed it.
    assert!(!s.workspace.join("p").exists());
    std::os::unix::fs::symlink(outside.path(), s.workspace.join("p")).unwrap();
    let err = store.undo(out.transaction_id.as_deref().unwrap()).unwrap_err();
    assert!(matches!(err, CheckpointError::UndoRefused { .. }), "{err}");
    assert_eq!(
        fs::read_dir(outside.path()).unwrap().count(),
        0,
        "nothing outside"
    );
    // With the symlink gone, the undo makes the directories again, inside.
    fs::remove_file(s.workspace.join("p")).unwrap();
    store.undo(out.transaction_id.as_deref().unwrap()).unwrap();
    assert_eq!(read(&s, "p/q/new.txt").unwrap(), b"made by the agent");
    assert!(!s.workspace.join("p").is_symlink());
}

/// Issue 13 item 6: a name as long as a name can be is restored, deleted and undone; the temp and
/// `.bak` names Retrace makes beside it are short enough.
#[test]
fn the_longest_names_are_restored() {
    let s = Scratch::new().unwrap();
    let long = "n".repeat(250);
    let gone = "g".repeat(244);
    s.write(&long, b"old").unwrap();
    s.write(&gone, b"there").unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store);
    edit(&mut store, &s, &long, Some(b"new"));
    edit(&mut store, &s, &gone, None);
    edit(&mut store, &s, "short", Some(b"created"));
    store.end_turn();
    let plan = store.plan_restore(t0).unwrap();
    let out = store.commit(&plan, choice(OnConflict::Skip)).unwrap();
    assert_eq!(read(&s, &long).unwrap(), b"old");
    assert_eq!(read(&s, &gone).unwrap(), b"there");
    assert_eq!(read(&s, "short"), None);
    store.undo(out.transaction_id.as_deref().unwrap()).unwrap();
    assert_eq!(read(&s, &long).unwrap(), b"new");
    assert_eq!(read(&s, &gone), None);
    let left: Vec<_> = fs::read_dir(&s.workspace)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("retrace"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Issue 13 item 8: after a crash mid-turn `state.json` is older than the turn's record; the
/// record's after-image (the agent's own write) is the proof, not a manual edit.
#[test]
fn the_newest_after_image_is_the_proof() {
    let s = Scratch::new().unwrap();
    s.write("f", b"v0").unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store);
    edit(&mut store, &s, "f", Some(b"v1"));
    store.end_turn();
    // Turn 1 writes f again; its record gets the after-image at the next capture, then the
    // process dies before the end of the turn (state.json still says v1).
    let _t1 = begin(&mut store);
    edit(&mut store, &s, "f", Some(b"v2"));
    edit(&mut store, &s, "other", Some(b"x"));
    std::mem::forget(store);
    let mut store = open(&s);
    let plan = store.plan_restore(t0).unwrap();
    // `f`'s after-image reached the record at the next capture: it is the proof, no conflict.
    // (`other`'s had no later write to ride on: unverified, the documented price of not syncing
    // after every tool call.)
    let conflicted: Vec<&str> = plan.plan.conflicts.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(conflicted, ["other"]);
    store.commit(&plan, choice(OnConflict::Skip)).unwrap();
    assert_eq!(read(&s, "f").unwrap(), b"v0");
}

/// Issue 13 item 5: a restore killed after its renames, then a user change recovery cannot settle
/// (a file where a restored file's directory was): the store still opens, says what it set aside,
/// never touches the user's file, and works.
#[test]
fn recovery_never_locks_the_user_out() {
    use retrace_fsutil::FaultInjector;
    let faulty = |inj: &std::sync::Arc<FaultInjector>| StoreOptions {
        fs: Fs::without_sync().with_faults(inj.clone()),
        ..StoreOptions::default()
    };
    let scenario = || {
        let s = Scratch::new().unwrap();
        s.write("d/a.txt", b"a0").unwrap();
        s.write("e.txt", b"e0").unwrap();
        let mut store = open(&s);
        let t0 = begin(&mut store);
        edit(&mut store, &s, "d/a.txt", Some(b"a1"));
        edit(&mut store, &s, "e.txt", Some(b"e1"));
        store.end_turn();
        drop(store);
        (s, t0)
    };
    let (s, t0) = scenario();
    let count = FaultInjector::crash_at(0);
    let mut st = CheckpointStore::open(&s.sidecar, &s.workspace, faulty(&count)).unwrap();
    let plan = st.plan_restore(t0).unwrap();
    st.commit(&plan, choice(OnConflict::Refuse)).unwrap();
    let total = count.steps();
    // The last crash point at which both targets are renamed and the manifest still says
    // `committing`.
    let (s, _) = (1..total)
        .rev()
        .find_map(|k| {
            let (s, t0) = scenario();
            let inj = FaultInjector::crash_at(k);
            let mut st = CheckpointStore::open(&s.sidecar, &s.workspace, faulty(&inj)).unwrap();
            let plan = st.plan_restore(t0).unwrap();
            let _ = st.commit(&plan, choice(OnConflict::Refuse));
            std::mem::forget(st);
            let committing = fs::read_dir(s.sidecar.join("transactions"))
                .unwrap()
                .flatten()
                .any(|e| fs::read_to_string(e.path()).unwrap().contains("\"committing\""));
            let renamed =
                read(&s, "d/a.txt").as_deref() == Some(b"a0") && read(&s, "e.txt").as_deref() == Some(b"e0");
            (committing && renamed).then_some((s, k))
        })
        .expect("a crash after the renames");
    // The user turns the directory into a file before anything else runs.
    fs::remove_dir_all(s.workspace.join("d")).unwrap();
    s.write("d", b"the user's file").unwrap();
    let mut store = open(&s);
    assert_eq!(read(&s, "d").unwrap(), b"the user's file", "never overwritten");
    assert!(
        store
            .load_problems()
            .iter()
            .any(|p| p.path.starts_with("transactions/") && p.problem.contains("could not be rolled back")),
        "{:?}",
        store.load_problems()
    );
    // And the session goes on: a new turn captures and restores as usual.
    let t = begin(&mut store);
    edit(&mut store, &s, "new.txt", Some(b"n"));
    store.end_turn();
    let plan = store.plan_restore(t).unwrap();
    store.commit(&plan, choice(OnConflict::Refuse)).unwrap();
    assert_eq!(read(&s, "new.txt"), None);
}

/// Issue 13 item 14: a directory that is no sidecar is an error, not "ok, no checkpoints"; a
/// mutation sequence that could only overflow is a corrupt `state.json`, and nothing is written.
#[test]
fn not_a_sidecar_and_a_forged_sequence_are_errors() {
    let etc = tempfile::tempdir().unwrap();
    fs::write(etc.path().join("passwd"), b"root:x:0:0").unwrap();
    let e = CheckpointStore::open_bare(etc.path()).unwrap_err();
    assert!(e.to_string().contains("not a checkpoint sidecar"), "{e}");
    assert!(CheckpointStore::open_bare(&etc.path().join("missing")).is_err());

    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    begin(&mut store);
    edit(&mut store, &s, "f", Some(b"x"));
    store.end_turn();
    drop(store);
    let state = s.sidecar.join("state.json");
    let mut v: serde_json::Value = fs::read(&state)
        .map(|b| serde_json::from_slice(&b).unwrap())
        .unwrap_or_else(|_| serde_json::json!({"owned": {}}));
    v["mutationSeq"] = serde_json::json!(u64::MAX);
    fs::write(&state, serde_json::to_vec(&v).unwrap()).unwrap();
    let e = CheckpointStore::open(&s.sidecar, &s.workspace, StoreOptions::default()).unwrap_err();
    assert!(matches!(e, CheckpointError::Corrupt { .. }), "{e}");
    assert!(e.to_string().contains("state.json"), "{e}");
    // Reading still works, for fsck and the listing; fsck says what is wrong.
    let report = CheckpointStore::open_bare(&s.sidecar).unwrap().fsck();
    assert!(
        !report.ok && format!("{report:?}").contains("state.json"),
        "{report:?}"
    );
    // The same sequence in a turn's record: that record is named, not an intact state.json.
    v["mutationSeq"] = serde_json::json!(3);
    fs::write(&state, serde_json::to_vec(&v).unwrap()).unwrap();
    let seg = crate::log_support::segment(&s.sidecar);
    crate::log_support::edit_headers(&seg, |h| {
        if h["line"]["entry"].is_object() {
            h["line"]["entry"]["seq"] = serde_json::json!(u64::MAX);
        }
    });
    let e = CheckpointStore::open(&s.sidecar, &s.workspace, StoreOptions::default()).unwrap_err();
    assert!(e.to_string().contains("log/0.seg"), "{e}");
    assert!(!CheckpointStore::open_bare(&s.sidecar).unwrap().fsck().ok);
}

/// Issue 13 item 14: a v2 record whose `blobRef` is a path, not a digest, is never followed: the
/// entry has no usable payload (`missing_payload`, naming the record, SPEC §5.2 rule 3), reading
/// its before-image is a `corrupt` error, and fsck reports the record as an error.
#[test]
fn a_forged_blob_ref_is_never_followed() {
    let s = Scratch::new().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret"), b"outside").unwrap();
    let forged = format!("../../../../../../../..{}/secret", outside.path().display());
    let rec = serde_json::json!({
        "schemaVersion": 2, "turn": 0, "time": "2099-01-01T00:00:00Z", "prompt": "forged",
        "msgIndex": 0, "coverage": "complete", "coverageGaps": [],
        "files": [{"path": "f", "blobRef": forged, "mode": 420, "captureSource": "previewer"},
                  {"path": "g", "content": "g0", "sha256": sha256_bytes(b"g0"), "mode": 420,
                   "captureSource": "previewer"}]
    });
    fs::create_dir_all(&s.sidecar).unwrap();
    fs::write(s.sidecar.join("turn-0.json"), serde_json::to_vec(&rec).unwrap()).unwrap();
    s.write("f", b"now").unwrap();
    s.write("g", b"g1").unwrap();
    let mut store = open(&s);
    let plan = store.plan_restore(0).unwrap();
    let f = plan.plan.conflicts.iter().find(|c| c.path == "f").unwrap();
    assert_eq!(f.reason, ConflictReason::MissingPayload);
    let rel = retrace_fsutil::RelPath::normalize(&s.workspace, Path::new("f")).unwrap();
    let e = store.before_image(0, &rel).unwrap_err();
    assert!(matches!(e, CheckpointError::Corrupt { .. }), "{e}");
    assert!(e.to_string().contains("turn-0.json"), "{e}");
    let report = store.fsck();
    assert!(!report.ok, "a corrupt entry is an fsck error");
    let text = format!("{report:?}");
    assert!(text.contains("turn-0.json") && text.contains("blobRef"), "{text}");
    // The other file of the turn is restored (it has no proof of its own: overwrite); `f` is
    // left as it is under any choice.
    store.commit(&plan, choice(OnConflict::Overwrite)).unwrap();
    assert_eq!(read(&s, "g").unwrap(), b"g0");
    assert_eq!(read(&s, "f").unwrap(), b"now");
    assert_eq!(fs::read(outside.path().join("secret")).unwrap(), b"outside");
}

/// Issue 13 item 14: a manifest left in flight whose target leads outside the workspace is a
/// corrupt manifest naming its file; the writer refuses to open and nothing outside is touched.
#[test]
fn a_forged_manifest_target_is_corrupt_and_never_followed() {
    let s = Scratch::new().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    fs::write(&victim, b"keep me").unwrap();
    let mut store = open(&s);
    begin(&mut store);
    edit(&mut store, &s, "f", Some(b"x"));
    store.end_turn();
    drop(store);
    let txd = s.sidecar.join("transactions");
    fs::create_dir_all(&txd).unwrap();
    for target in ["../../../../../../../../../../tmp/x", victim.to_str().unwrap()] {
        let id = "00000009-deadbeef";
        let m = serde_json::json!({
            "id": id, "kind": "restore", "state": "committing", "time": "2026-01-01T00:00:00Z",
            "seq": 9, "turn": 0,
            "targets": [{"path": target, "action": "delete", "published": true,
                         "restore": {"existed": false}, "forward": {"existed": true, "sha256": sha256_bytes(b"keep me")}}]
        });
        let path = txd.join(format!("{id}.json"));
        fs::write(&path, serde_json::to_vec(&m).unwrap()).unwrap();
        let e = match CheckpointStore::open(&s.sidecar, &s.workspace, StoreOptions::default()) {
            Ok(_) => panic!("opened with a forged manifest {target}"),
            Err(e) => e,
        };
        assert!(e.to_string().contains(&format!("{id}.json")), "{e}");
        assert_eq!(fs::read(&victim).unwrap(), b"keep me");
        fs::remove_file(&path).unwrap();
    }
}

/// A log segment that cannot be read hides the turns recorded in it: fsck says so, and no code
/// restore to a turn before the next segment is offered (it would leave those turns' files as
/// they are); later turns go to a new segment and are restorable.
#[test]
fn an_unreadable_log_segment_makes_its_turns_unknown() {
    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    begin(&mut store);
    edit(&mut store, &s, "f", Some(b"x"));
    store.end_turn();
    drop(store);
    let seg = crate::log_support::segment(&s.sidecar);
    fs::rename(&seg, s.sidecar.join("kept-aside")).unwrap();
    fs::create_dir(&seg).unwrap();
    let bare = CheckpointStore::open_bare(&s.sidecar).unwrap();
    assert!(bare.list().is_empty());
    let report = bare.fsck();
    assert!(
        !report.ok && format!("{report:?}").contains("cannot be read"),
        "{report:?}"
    );
    let mut store = open(&s);
    let t1 = begin(&mut store);
    edit(&mut store, &s, "g", Some(b"y"));
    store.end_turn();
    let listed = store.list();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].turn, listed[0].can_restore_code),
        (t1, Some(true)),
        "{listed:?}"
    );
    assert!(t1 > 0);
}

/// Found by attack: one damaged line in the middle of a turn's journal dropped every later
/// capture silently, and a restore to the turn left those files as the agent wrote them, exit 0.
/// The same in the log: a damaged frame followed by others makes the turn unreadable (no restore
/// offered, fsck error), and the segment is never appended to again. (A damaged *last* frame is
/// what a crash leaves, and only that frame is dropped.)
#[test]
fn a_log_frame_damaged_in_the_middle_makes_its_turn_unreadable() {
    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store);
    for i in 0..6 {
        edit(&mut store, &s, &format!("f{i}"), Some(b"agent"));
    }
    std::mem::forget(store); // killed mid-turn
    let seg = crate::log_support::segment(&s.sidecar);
    let frames = crate::log_support::frames(&seg);
    assert!(frames.len() > 4);
    crate::log_support::patch(&seg, frames[2].header_at, b"#");
    let len = fs::metadata(&seg).unwrap().len();
    let bare = CheckpointStore::open_bare(&s.sidecar).unwrap();
    assert_eq!(
        bare.list()[0].can_restore_code,
        Some(false),
        "{:?}",
        bare.list()[0]
    );
    let report = bare.fsck();
    assert!(
        !report.ok && format!("{report:?}").contains("damaged"),
        "{report:?}"
    );
    // Opening for writing neither cuts the damage away nor appends after it.
    let mut store = open(&s);
    assert!(store.plan_restore(t0).is_err());
    let t1 = begin(&mut store);
    edit(&mut store, &s, "g", Some(b"y"));
    store.end_turn();
    assert_eq!(fs::metadata(&seg).unwrap().len(), len);
    assert_eq!(crate::log_support::segments(&s.sidecar).len(), 2);
    assert!(store.plan_restore(t1).is_ok());
}

/// Found by attack: a user's backup copy of a finished transaction's manifest under another name
/// locked the session. A copy whose own manifest is there is only noted; a misnamed manifest
/// that may be the only record of a transaction still stops writes.
#[test]
fn a_copy_of_a_finished_manifest_is_only_noted() {
    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store);
    edit(&mut store, &s, "f", Some(b"x"));
    store.end_turn();
    let plan = store.plan_restore(t0).unwrap();
    let out = store.commit(&plan, choice(OnConflict::Refuse)).unwrap();
    drop(store);
    let txd = s.sidecar.join("transactions");
    let id = out.transaction_id.unwrap();
    fs::copy(txd.join(format!("{id}.json")), txd.join("backup-of-restore.json")).unwrap();
    let store = open(&s);
    assert!(store.fsck().ok, "{:?}", store.fsck());
    drop(store);
    fs::rename(txd.join(format!("{id}.json")), txd.join("renamed.json")).unwrap();
    fs::remove_file(txd.join("backup-of-restore.json")).unwrap();
    let e = CheckpointStore::open(&s.sidecar, &s.workspace, StoreOptions::default()).unwrap_err();
    assert!(e.to_string().contains("renamed.json"), "{e}");
}

/// Found by attack: a single-file revert across a later turn's shell command (which may have
/// changed the file; it names no path) did not ask for confirmation, where a restore did.
#[test]
fn a_revert_across_a_shell_command_needs_confirmation() {
    let s = Scratch::new().unwrap();
    s.write("a.txt", b"orig").unwrap();
    let mut store = open(&s);
    begin(&mut store);
    edit(&mut store, &s, "a.txt", Some(b"agent"));
    store.end_turn();
    begin(&mut store);
    store
        .record_gap(retrace_protocol::Gap {
            reason: retrace_protocol::GapReason::BashSideEffect,
            tool: Some("bash".into()),
            path: None,
            detail: Some("sed -i s/agent/shell/ a.txt".into()),
        })
        .unwrap();
    store.end_turn();
    let plan = store.plan_file_revert(Path::new("a.txt")).unwrap();
    assert!(plan.plan.requires_confirmation, "{:?}", plan.plan);
    let e = store
        .commit(
            &plan,
            CommitOptions {
                confirm: false,
                on_conflict: OnConflict::Refuse,
            },
        )
        .unwrap_err();
    assert!(matches!(e, CheckpointError::ConfirmationRequired), "{e}");
}

/// Found by attack: a legacy record restored `.git/hooks/pre-commit` (a hook that runs on the
/// next commit) and handed out setuid bits. Nothing inside `.git/` is ever written (SPEC §1), and
/// a legacy record's mode gives permission bits only.
#[test]
fn a_legacy_record_never_writes_into_git_nor_sets_setuid() {
    let s = Scratch::new().unwrap();
    fs::create_dir_all(s.workspace.join(".git/hooks")).unwrap();
    fs::create_dir_all(&s.sidecar).unwrap();
    s.write("tool.sh", b"now").unwrap();
    let hook = b"#!/bin/sh\nevil\n";
    let rec = serde_json::json!({
        "schemaVersion": 2, "turn": 0, "time": "2099-01-01T00:00:00Z", "prompt": "legacy",
        "msgIndex": 0, "coverage": "complete", "coverageGaps": [],
        "files": [
            {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\nevil\n",
             "sha256": sha256_bytes(hook), "mode": 493, "captureSource": "previewer"},
            {"path": "tool.sh", "content": "old", "sha256": sha256_bytes(b"old"),
             "mode": 0o4755, "captureSource": "previewer"}
        ]
    });
    fs::write(s.sidecar.join("turn-0.json"), serde_json::to_vec(&rec).unwrap()).unwrap();
    let mut store = open(&s);
    let plan = store.plan_restore(0).unwrap();
    let git = plan
        .plan
        .files
        .iter()
        .find(|f| f.path == ".git/hooks/pre-commit")
        .unwrap();
    assert_eq!(
        git.conflict.as_ref().map(|c| c.reason),
        Some(ConflictReason::PathUnsafe)
    );
    store.commit(&plan, choice(OnConflict::Overwrite)).unwrap();
    assert!(!s.workspace.join(".git/hooks/pre-commit").exists());
    let mode = fs::metadata(s.workspace.join("tool.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, 0o755, "no setuid bit from a record");
}
