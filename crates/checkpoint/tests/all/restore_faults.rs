//! Failpoint tests of code restore, undo and compensation (TESTING.md layer 3, SPEC §5.4–§5.5).
//!
//! Each test runs one operation with `FaultInjector::crash_at(k)` for k = 1, 2, 3, … until a run
//! completes: the k-th durable step fails and every later one too, as if the process had died there.
//! After each crashed run the store is dropped and reopened with a healthy file system, which runs
//! recovery, and then: every target equals its forward image or its restore image (bytes and mode),
//! all of them the same one (all-or-nothing, decided by whether the manifest reached `committed`);
//! no transaction file is left in the workspace and no temp file in the sidecar; every manifest is
//! terminal; a second recovery changes nothing; fsck finds no error; and the operation can be run
//! again successfully.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::restore_support::*;
use retrace_checkpoint::tx::{TxKind, TxState};
use retrace_checkpoint::{CheckpointError, CheckpointStore, Clock, StoreOptions};
use retrace_fsutil::{FaultInjector, Fs};
use retrace_protocol::{ConflictReason, OnConflict};

/// Upper bound of the k loops: far above any operation's number of durable steps.
const MAX_STEPS: u64 = 2_000;

fn faulty(inj: &Arc<FaultInjector>) -> StoreOptions {
    opts(Fs::without_sync().with_faults(inj.clone()))
}

/// The label of the step the run died at.
fn died_at(inj: &FaultInjector) -> String {
    inj.trail().last().cloned().unwrap_or_default()
}

/// Opens the scenario's store under `o` and restores the first turn.
fn restore_under(sc: &Scenario, o: StoreOptions) -> Result<retrace_protocol::CodeOutcome, CheckpointError> {
    let mut store = CheckpointStore::open(sc.sidecar(), &sc.root, o)?;
    let plan = store.plan_restore(sc.turn)?;
    store.commit(&plan, confirm(OnConflict::Refuse))
}

/// What [`crash_at_every_step`] saw: the phase on disk at each crash, how many crashed runs were
/// rolled back and how many finished, and the number of durable steps.
pub(crate) struct CrashTally {
    pub phases: BTreeMap<Phase, u64>,
    pub rolled_back: u64,
    pub finished: u64,
    pub steps: u64,
}

/// A restore of the scenarios `build` makes (of `targets` files) crashed at every durable step in
/// turn, each followed by recovery and its checks, until a run completes.
pub(crate) fn crash_at_every_step(build: &dyn Fn() -> Scenario, targets: usize) -> CrashTally {
    let known = BTreeSet::new();
    let mut phases: BTreeMap<Phase, u64> = BTreeMap::new();
    let (mut rolled_back, mut finished) = (0u64, 0u64);
    let mut k = 1;
    loop {
        let sc = build();
        let inj = FaultInjector::crash_at(k);
        let res = restore_under(&sc, faulty(&inj));
        if !inj.crashed() {
            let out = res.unwrap_or_else(|e| panic!("the run without a crash failed: {e}"));
            assert_eq!(out.files_written.len() + out.files_deleted.len(), targets);
            assert!(
                snapshot(&sc.root) == sc.restore,
                "{}",
                diff(&snapshot(&sc.root), &sc.restore)
            );
            let store = open_healthy(sc.sidecar(), &sc.root);
            let expect = Expect {
                before: &sc.forward,
                after: &sc.restore,
                kind: TxKind::Restore,
                known: &known,
            };
            assert!(check_recovered(
                &store,
                &sc.root,
                sc.sidecar(),
                &expect,
                "no crash"
            ));
            check_idempotent(&store, &sc.root, sc.sidecar(), "no crash");
            break;
        }
        let ctx = format!("restore, crash at step {k} ({})", died_at(&inj));
        *phases
            .entry(phase_on_disk(sc.sidecar(), &known, TxKind::Restore))
            .or_default() += 1;
        let mut store = open_healthy(sc.sidecar(), &sc.root);
        let expect = Expect {
            before: &sc.forward,
            after: &sc.restore,
            kind: TxKind::Restore,
            known: &known,
        };
        let happened = check_recovered(&store, &sc.root, sc.sidecar(), &expect, &ctx);
        if res.is_ok() {
            assert!(
                happened,
                "{ctx}: commit reported success, recovery rolled it back"
            );
        }
        if happened {
            finished += 1;
        } else {
            rolled_back += 1;
        }
        check_idempotent(&store, &sc.root, sc.sidecar(), &ctx);
        // After recovery a fresh restore to the same turn works, with no false conflict.
        let out = restore_now(&mut store, sc.turn, OnConflict::Refuse);
        assert!(out.conflicts.is_empty(), "{ctx}: {:?}", out.conflicts);
        let ws = snapshot(&sc.root);
        assert!(
            ws == sc.restore,
            "{ctx}: fresh restore:\n{}",
            diff(&ws, &sc.restore)
        );
        k += 1;
        assert!(k < MAX_STEPS, "the restore never completed");
    }
    CrashTally {
        phases,
        rolled_back,
        finished,
        steps: k - 1,
    }
}

#[test]
fn a_crash_at_every_step_of_a_restore_recovers_all_or_nothing() {
    let CrashTally {
        phases,
        rolled_back,
        finished,
        steps,
    } = crash_at_every_step(&small_scenario, 11);
    let k = steps + 1;
    eprintln!(
        "restore: {} crash points; phases on disk at the crash {phases:?}; {rolled_back} rolled back, {finished} finished",
        k - 1
    );
    assert!(
        k > 60,
        "only {} durable steps: the loop covered too little",
        k - 1
    );
    for p in [
        Phase::NoManifest,
        Phase::Prepared,
        Phase::Committing,
        Phase::Committed,
    ] {
        assert!(
            phases.get(&p).copied().unwrap_or(0) > 0,
            "no crash landed in {p:?}"
        );
    }
    assert!(rolled_back > 0 && finished > 0);
}

#[test]
fn a_crash_at_every_step_of_an_undo_recovers_all_or_nothing() {
    let mut phases: BTreeMap<Phase, u64> = BTreeMap::new();
    let (mut rolled_back, mut finished) = (0u64, 0u64);
    let mut k = 1;
    loop {
        let sc = small_scenario();
        let mut store = open_healthy(sc.sidecar(), &sc.root);
        let tx = restore_now(&mut store, sc.turn, OnConflict::Refuse)
            .transaction_id
            .unwrap();
        drop(store);
        let known: BTreeSet<String> = [tx.clone()].into();
        let inj = FaultInjector::crash_at(k);
        let res = CheckpointStore::open(sc.sidecar(), &sc.root, faulty(&inj)).and_then(|mut s| s.undo(&tx));
        // The undo moves from the restore images back to the forward images.
        let expect = Expect {
            before: &sc.restore,
            after: &sc.forward,
            kind: TxKind::Undo,
            known: &known,
        };
        if !inj.crashed() {
            res.unwrap_or_else(|e| panic!("the undo without a crash failed: {e}"));
            assert!(
                snapshot(&sc.root) == sc.forward,
                "{}",
                diff(&snapshot(&sc.root), &sc.forward)
            );
            let store = open_healthy(sc.sidecar(), &sc.root);
            assert!(check_recovered(
                &store,
                &sc.root,
                sc.sidecar(),
                &expect,
                "no crash"
            ));
            check_idempotent(&store, &sc.root, sc.sidecar(), "no crash");
            break;
        }
        let ctx = format!("undo, crash at step {k} ({})", died_at(&inj));
        *phases
            .entry(phase_on_disk(sc.sidecar(), &known, TxKind::Undo))
            .or_default() += 1;
        let mut store = open_healthy(sc.sidecar(), &sc.root);
        let happened = check_recovered(&store, &sc.root, sc.sidecar(), &expect, &ctx);
        if res.is_ok() {
            assert!(happened, "{ctx}: undo reported success, recovery rolled it back");
        }
        let orig = store.transactions().find(|m| m.id == tx).unwrap().clone();
        check_idempotent(&store, &sc.root, sc.sidecar(), &ctx);
        if happened {
            finished += 1;
            let undo = store.transactions().find(|m| m.id != tx).unwrap();
            assert_eq!(
                orig.state,
                TxState::Undone,
                "{ctx}: the undone restore is not marked"
            );
            assert_eq!(orig.undone_by.as_deref(), Some(undo.id.as_str()), "{ctx}");
            assert!(store.undo_target().is_none(), "{ctx}: an undo cannot be undone");
            // A fresh restore to the same turn works.
            let out = restore_now(&mut store, sc.turn, OnConflict::Refuse);
            assert!(out.conflicts.is_empty(), "{ctx}: {:?}", out.conflicts);
            let ws = snapshot(&sc.root);
            assert!(
                ws == sc.restore,
                "{ctx}: fresh restore:\n{}",
                diff(&ws, &sc.restore)
            );
        } else {
            rolled_back += 1;
            assert_eq!(orig.state, TxState::Committed, "{ctx}");
            assert_eq!(
                store.undo_target().map(|m| m.id.clone()),
                Some(tx.clone()),
                "{ctx}: the restore is no longer undoable"
            );
            // The undo can be run again.
            store
                .undo(&tx)
                .unwrap_or_else(|e| panic!("{ctx}: undo after recovery: {e}"));
            let ws = snapshot(&sc.root);
            assert!(
                ws == sc.forward,
                "{ctx}: undo after recovery:\n{}",
                diff(&ws, &sc.forward)
            );
        }
        k += 1;
        assert!(k < MAX_STEPS, "the undo never completed");
    }
    eprintln!(
        "undo: {} crash points; phases on disk at the crash {phases:?}; {rolled_back} rolled back, {finished} finished",
        k - 1
    );
    assert!(
        k > 60,
        "only {} durable steps: the loop covered too little",
        k - 1
    );
    for p in [
        Phase::NoManifest,
        Phase::Prepared,
        Phase::Committing,
        Phase::Committed,
    ] {
        assert!(
            phases.get(&p).copied().unwrap_or(0) > 0,
            "no crash landed in {p:?}"
        );
    }
    assert!(rolled_back > 0 && finished > 0);
}

/// A clock that, once armed, recreates `late.txt` with the user's bytes the first time the store asks
/// for the time. The store asks when a transaction starts: after commit's re-check, before any rename,
/// so the change is seen only by the check just before `late.txt`'s rename (`external_change`).
fn clock_that_edits(root: &Path, armed: Arc<AtomicBool>) -> Clock {
    let late = root.join("late.txt");
    let inner = fixed_clock();
    Arc::new(move || {
        if armed.swap(false, Ordering::SeqCst) {
            fs::write(&late, USER_LATE).unwrap();
            fs::set_permissions(&late, fs::Permissions::from_mode(0o644)).unwrap();
        }
        inner()
    })
}

#[test]
fn a_crash_at_every_step_of_a_compensation_recovers_the_forward_images() {
    let known = BTreeSet::new();
    let mut phases: BTreeMap<Phase, u64> = BTreeMap::new();
    let mut first_committing: Option<u64> = None;
    let mut late_index: Option<u64> = None;
    let mut in_compensation = 0u64;
    let mut k = 1;
    loop {
        let sc = small_scenario();
        // Without the restore, the workspace is the forward images plus the user's late.txt.
        let mut user = sc.forward.clone();
        user.insert("late.txt".into(), (USER_LATE.to_vec(), 0o644));
        let inj = FaultInjector::crash_at(k);
        let armed = Arc::new(AtomicBool::new(false));
        let o = StoreOptions {
            clock: clock_that_edits(&sc.root, armed.clone()),
            ..faulty(&inj)
        };
        let res = CheckpointStore::open(sc.sidecar(), &sc.root, o).and_then(|mut store| {
            let plan = store.plan_restore(sc.turn)?;
            assert!(plan.plan.conflicts.is_empty());
            armed.store(true, Ordering::SeqCst);
            store.commit(&plan, confirm(OnConflict::Refuse))
        });
        assert!(!armed.load(Ordering::SeqCst), "the external edit did not happen");
        let Err(err) = res else {
            panic!("the commit cannot succeed: late.txt changed under it");
        };
        let expect = Expect {
            before: &user,
            after: &sc.restore,
            kind: TxKind::Restore,
            known: &known,
        };
        if !inj.crashed() {
            assert!(
                matches!(&err, CheckpointError::ExternalChange { path } if path == "late.txt"),
                "{err}"
            );
            let ws = snapshot(&sc.root);
            assert!(ws == user, "compensation without a crash:\n{}", diff(&ws, &user));
            let store = open_healthy(sc.sidecar(), &sc.root);
            assert!(!check_recovered(
                &store,
                &sc.root,
                sc.sidecar(),
                &expect,
                "no crash"
            ));
            assert!(store.transactions().all(|m| m.state == TxState::Aborted));
            check_idempotent(&store, &sc.root, sc.sidecar(), "no crash");
            break;
        }
        let ctx = format!("compensation, crash at step {k} ({})", died_at(&inj));
        let phase = phase_on_disk(sc.sidecar(), &known, TxKind::Restore);
        *phases.entry(phase).or_default() += 1;
        if phase == Phase::Committing {
            let first = *first_committing.get_or_insert(k);
            let i = *late_index.get_or_insert_with(|| {
                let ms = manifests_on_disk(sc.sidecar());
                let m = ms.values().next().unwrap();
                m.targets.iter().position(|t| t.path == "late.txt").unwrap() as u64
            });
            // Step `first` made the committing manifest durable; then `i` renames; then compensation.
            if k > first + i {
                in_compensation += 1;
            }
        }
        let mut store = open_healthy(sc.sidecar(), &sc.root);
        let happened = check_recovered(&store, &sc.root, sc.sidecar(), &expect, &ctx);
        assert!(
            !happened,
            "{ctx}: a restore over a changed file reached `committed`"
        );
        // No target was changed after its rename, so no recovery copy was ever needed.
        for m in store.transactions() {
            assert_eq!(m.state, TxState::Aborted, "{ctx}: manifest {}", m.id);
        }
        check_idempotent(&store, &sc.root, sc.sidecar(), &ctx);
        // A fresh restore sees late.txt as the user's (deleted and recreated) and restores the rest.
        let out = restore_now(&mut store, sc.turn, OnConflict::Skip);
        let reasons: Vec<(String, ConflictReason)> =
            out.conflicts.iter().map(|c| (c.path.clone(), c.reason)).collect();
        assert_eq!(
            reasons,
            [("late.txt".to_string(), ConflictReason::DeletedAndRecreated)],
            "{ctx}"
        );
        let mut want = sc.restore.clone();
        want.insert("late.txt".into(), (USER_LATE.to_vec(), 0o644));
        let ws = snapshot(&sc.root);
        assert!(ws == want, "{ctx}: fresh restore:\n{}", diff(&ws, &want));
        k += 1;
        assert!(k < MAX_STEPS, "the compensation never completed");
    }
    eprintln!(
        "compensation: {} crash points; phases on disk at the crash {phases:?}; {in_compensation} inside the compensation",
        k - 1
    );
    assert!(
        late_index == Some(10),
        "late.txt is target {late_index:?}, not the last of 11"
    );
    assert!(
        in_compensation >= 20,
        "only {in_compensation} crashes landed inside the compensation"
    );
}

#[test]
fn a_crash_during_the_recovery_of_an_interrupted_restore_recovers_all_or_nothing() {
    let known = BTreeSet::new();
    let mut committing_points = 0u64;
    let mut recovery_crashes = 0u64;
    let mut k1 = 1;
    loop {
        let sc = small_scenario();
        let inj1 = FaultInjector::crash_at(k1);
        let _ = restore_under(&sc, faulty(&inj1));
        if !inj1.crashed() {
            break;
        }
        // Only crashes that leave a `committing` transaction make recovery compensate.
        if phase_on_disk(sc.sidecar(), &known, TxKind::Restore) != Phase::Committing {
            k1 += 1;
            assert!(k1 < MAX_STEPS);
            continue;
        }
        committing_points += 1;
        drop(sc);
        let mut k2 = 1;
        loop {
            let sc = small_scenario();
            let inj1 = FaultInjector::crash_at(k1);
            let _ = restore_under(&sc, faulty(&inj1));
            assert!(inj1.crashed());
            let inj2 = FaultInjector::crash_at(k2);
            let reopened = CheckpointStore::open(sc.sidecar(), &sc.root, faulty(&inj2));
            let crashed = inj2.crashed();
            drop(reopened);
            let ctx = format!(
                "restore crashed at step {k1} ({}), recovery crashed at step {k2} ({})",
                died_at(&inj1),
                if crashed {
                    died_at(&inj2)
                } else {
                    "no crash".into()
                }
            );
            let store = open_healthy(sc.sidecar(), &sc.root);
            let expect = Expect {
                before: &sc.forward,
                after: &sc.restore,
                kind: TxKind::Restore,
                known: &known,
            };
            let happened = check_recovered(&store, &sc.root, sc.sidecar(), &expect, &ctx);
            assert!(
                !happened,
                "{ctx}: a committing restore is rolled back, never finished"
            );
            check_idempotent(&store, &sc.root, sc.sidecar(), &ctx);
            if !crashed {
                break;
            }
            recovery_crashes += 1;
            k2 += 1;
            assert!(k2 < MAX_STEPS, "recovery never completed");
        }
        k1 += 1;
        assert!(k1 < MAX_STEPS);
    }
    eprintln!(
        "recovery: {committing_points} restore crash points leave `committing`; {recovery_crashes} crashes inside their recovery"
    );
    assert!(
        committing_points >= 11,
        "only {committing_points} crash points during the renames"
    );
    assert!(
        recovery_crashes >= 50,
        "only {recovery_crashes} crashes inside recovery"
    );
}

/// Issue 13 item 9: an I/O error at any step of a restore (the process lives on) decides it
/// durably. Either the commit fails and every target is back to its forward image, or it
/// succeeds; and what the next open sees is that same decision: a restore the user was told
/// succeeded is never rolled back later, and one they were told failed never reappears.
#[test]
fn an_error_at_any_step_decides_the_restore_there_and_then() {
    each_error_decides(&small_scenario);
}

/// The loop of [`an_error_at_any_step_decides_the_restore_there_and_then`] on the scenarios
/// `build` makes (`restore_wide.rs` runs it on one wide enough for several threads).
pub(crate) fn each_error_decides(build: &dyn Fn() -> Scenario) {
    let mut k = 1;
    let (mut failed, mut succeeded) = (0u64, 0u64);
    loop {
        let sc = build();
        let inj = FaultInjector::fail_once_at(k);
        let res = restore_under(&sc, faulty(&inj));
        let steps = inj.steps();
        let now = snapshot(&sc.root);
        match &res {
            Ok(_) => {
                succeeded += 1;
                // A parked delete whose unlink failed after the commit is the one leftover a live
                // process may show; the next open removes it (checked below).
                let mut seen = now.clone();
                seen.retain(|p, _| !(p.contains(".retrace-") && p.ends_with(".bak")));
                assert!(seen == sc.restore, "k={k}: told ok: {}", diff(&seen, &sc.restore));
            }
            Err(e) => {
                failed += 1;
                assert!(
                    now == sc.forward,
                    "k={k} ({e}): told it failed, so nothing may stay written: {}",
                    diff(&now, &sc.forward)
                );
            }
        }
        // The next process sees the same decision.
        drop(open_healthy(sc.sidecar(), &sc.root));
        let later = snapshot(&sc.root);
        let decided = if res.is_ok() { &sc.restore } else { &sc.forward };
        assert!(
            later == *decided,
            "k={k}: recovery changed the outcome: {}",
            diff(&later, decided)
        );
        if k > steps {
            break;
        }
        k += 1;
        assert!(k < MAX_STEPS);
    }
    assert!(
        failed > 0 && succeeded > 0,
        "{failed} failed, {succeeded} succeeded"
    );
}

/// A restore killed mid-publish, a hand edit to a file it had renamed, then recovery: the edit is
/// kept and the transaction stays open on that one file. A later restore (skipping the edit) must
/// then stay as it was committed through any number of later opens — the open transaction never
/// goes back to the files it had put back, nor to those the later restore wrote (found by attacking
/// the parallel restore: the next open put the old bytes back over a finished rewind).
#[test]
fn a_transaction_left_open_never_rolls_back_a_later_restore() {
    left_open_then_restored(OnConflict::Skip);
    // Overwriting the edit (its bytes are in the open transaction's recovery copy and the new
    // one's pack): the open transaction lets go of that file too.
    left_open_then_restored(OnConflict::Overwrite);
}

fn left_open_then_restored(choice: OnConflict) {
    let probe = small_scenario();
    let counting = FaultInjector::crash_at(0);
    restore_under(&probe, faulty(&counting)).unwrap();
    let trail = counting.trail();
    let first_rename = crate::hostile_support::publishing_rename(&trail);
    // Killed after a few renames.
    let sc = small_scenario();
    let inj = FaultInjector::crash_at(first_rename + 3);
    assert!(restore_under(&sc, faulty(&inj)).is_err());
    assert!(inj.crashed());
    let now = snapshot(&sc.root);
    let renamed: Vec<String> = now
        .iter()
        .filter(|(p, st)| sc.restore.get(*p) == Some(st) && sc.forward.get(*p) != Some(st))
        .map(|(p, _)| p.clone())
        .collect();
    assert!(!renamed.is_empty(), "no target was renamed before the crash");
    // The user edits one of them before anything reopens the store.
    let edited = &renamed[0];
    fs::write(sc.root.join(edited), b"the user's own edit\n").unwrap();
    // Recovery keeps the edit and stays open on it; everything else is back.
    drop(CheckpointStore::open(sc.sidecar(), &sc.root, opts(Fs::without_sync())).unwrap());
    let after_recovery = snapshot(&sc.root);
    let without = |s: &Snap| -> Snap {
        s.iter()
            .filter(|(p, _)| *p != edited && !p.contains(".retrace-recovery-"))
            .map(|(p, st)| (p.clone(), st.clone()))
            .collect()
    };
    assert_eq!(without(&after_recovery), without(&sc.forward));
    // A new restore that skips (or overwrites) the edited file commits.
    let mut store = open_healthy(sc.sidecar(), &sc.root);
    let plan = store.plan_restore(sc.turn).unwrap();
    store.commit(&plan, confirm(choice)).unwrap();
    drop(store);
    let committed = snapshot(&sc.root);
    assert_eq!(without(&committed), without(&sc.restore));
    // However often the store opens again, that restore stays as it was committed.
    for _ in 0..3 {
        drop(open_healthy(sc.sidecar(), &sc.root));
        let later = snapshot(&sc.root);
        assert!(
            later == committed,
            "an open changed a committed restore: {}",
            diff(&later, &committed)
        );
    }
    let expected = match choice {
        OnConflict::Overwrite => sc.restore[edited].0.clone(),
        _ => b"the user's own edit\n".to_vec(),
    };
    assert_eq!(fs::read(sc.root.join(edited)).unwrap(), expected);
}

/// A restore killed while preparing leaves temp files beside its targets until the next open for
/// writing; fsck, which opens nothing for writing, says they are there and whose they are.
#[test]
fn fsck_says_an_open_transactions_temp_files_are_in_the_workspace() {
    let probe = small_scenario();
    let counting = FaultInjector::crash_at(0);
    restore_under(&probe, faulty(&counting)).unwrap();
    let trail = counting.trail();
    let writes = trail.iter().filter(|l| *l == "write_temp").count() as u64;
    let after_temps = trail
        .iter()
        .position(|l| l == "sync_temp")
        .expect("the temp files are synced") as u64;
    assert!(writes >= 2);
    let sc = small_scenario();
    let inj = FaultInjector::crash_at(after_temps + 1);
    assert!(restore_under(&sc, faulty(&inj)).is_err());
    let temps = transaction_leftovers(&sc.root);
    assert!(!temps.is_empty(), "no temp file was left by the crash");
    let store = CheckpointStore::open_read_only(sc.sidecar(), &sc.root).unwrap();
    let report = store.fsck();
    let said = report
        .problems
        .iter()
        .find(|f| f.problem.contains("temp files"))
        .unwrap_or_else(|| panic!("fsck did not name the temp files: {:?}", report.problems));
    assert!(
        said.problem
            .contains(&format!("{} of its temp files", temps.len())),
        "{}",
        said.problem
    );
    drop(store);
    // The next open for writing removes them.
    drop(open_healthy(sc.sidecar(), &sc.root));
    assert!(transaction_leftovers(&sc.root).is_empty());
}
