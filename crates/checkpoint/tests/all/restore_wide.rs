//! Failpoint tests of a restore wide enough to be written and published by several threads
//! (`workers.rs`: 32 targets or more): whatever step fails, and in whichever order the threads
//! reached their steps, recovery leaves every target forward or every target restored, and an
//! error reported in-process leaves the workspace as it was.

use std::collections::BTreeSet;

use crate::restore_support::*;
use retrace_checkpoint::tx::TxKind;
use retrace_checkpoint::{CheckpointError, CheckpointStore, StoreOptions};
use retrace_fsutil::{FaultInjector, Fs};
use retrace_protocol::OnConflict;

/// Files the turn edits (and `FILES / 8` it creates): above the threshold of several threads.
const FILES: usize = 40;
/// Upper bound of the k loops.
const MAX_STEPS: u64 = 3_000;

fn restore_under(sc: &Scenario, o: StoreOptions) -> Result<retrace_protocol::CodeOutcome, CheckpointError> {
    let mut store = CheckpointStore::open(sc.sidecar(), &sc.root, o)?;
    let plan = store.plan_restore(sc.turn)?;
    store.commit(&plan, confirm(OnConflict::Refuse))
}

fn faulty(inj: &std::sync::Arc<FaultInjector>) -> StoreOptions {
    opts(Fs::without_sync().with_faults(inj.clone()))
}

#[test]
fn a_crash_at_every_step_of_a_wide_restore_recovers_all_or_nothing() {
    let known = BTreeSet::new();
    let (mut rolled_back, mut finished) = (0u64, 0u64);
    let mut k = 1;
    loop {
        let sc = wide_scenario(FILES);
        let inj = FaultInjector::crash_at(k);
        let res = restore_under(&sc, faulty(&inj));
        let expect = Expect {
            before: &sc.forward,
            after: &sc.restore,
            kind: TxKind::Restore,
            known: &known,
        };
        if !inj.crashed() {
            let out = res.unwrap_or_else(|e| panic!("the run without a crash failed: {e}"));
            assert!(out.files_written.len() + out.files_deleted.len() >= 32);
            assert!(
                snapshot(&sc.root) == sc.restore,
                "{}",
                diff(&snapshot(&sc.root), &sc.restore)
            );
            break;
        }
        let ctx = format!("wide restore, crash at step {k}");
        let mut store = open_healthy(sc.sidecar(), &sc.root);
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
        let out = restore_now(&mut store, sc.turn, OnConflict::Refuse);
        assert!(out.conflicts.is_empty(), "{ctx}: {:?}", out.conflicts);
        assert!(snapshot(&sc.root) == sc.restore, "{ctx}: fresh restore");
        k += 1;
        assert!(k < MAX_STEPS, "the restore never completed");
    }
    assert!(
        rolled_back > 0 && finished > 0,
        "{rolled_back} rolled back, {finished} finished"
    );
}

#[test]
fn an_error_at_any_step_of_a_wide_restore_decides_it_there_and_then() {
    let mut k = 1;
    let (mut failed, mut succeeded) = (0u64, 0u64);
    loop {
        let sc = wide_scenario(FILES);
        let inj = FaultInjector::fail_once_at(k);
        let res = restore_under(&sc, faulty(&inj));
        let steps = inj.steps();
        let now = snapshot(&sc.root);
        match &res {
            Ok(_) => {
                succeeded += 1;
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
