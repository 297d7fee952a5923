//! Failpoint test of redo (TESTING.md layer 3, SPEC §5.4–§5.5), as `restore_faults.rs` does for
//! restore and undo: a redo crashed at every durable step in turn, then the store reopened with a
//! healthy file system (recovery). Every target then holds what the undo left or what the redo
//! writes, all of them the same one; nothing of the transaction is left in the workspace or the
//! sidecar; a second recovery changes nothing; and the walk goes on from where it stopped (redo
//! again, or undo the redo).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::restore_support::*;
use retrace_checkpoint::tx::{TxKind, TxState};
use retrace_checkpoint::CheckpointStore;
use retrace_fsutil::{FaultInjector, Fs};
use retrace_protocol::OnConflict;

/// Upper bound of the k loop: far above a redo's number of durable steps.
const MAX_STEPS: u64 = 2_000;

#[test]
fn a_crash_at_every_step_of_a_redo_recovers_all_or_nothing() {
    let mut phases: BTreeMap<Phase, u64> = BTreeMap::new();
    let (mut rolled_back, mut finished) = (0u64, 0u64);
    let mut k = 1;
    loop {
        let sc = small_scenario();
        let mut store = open_healthy(sc.sidecar(), &sc.root);
        let tx = restore_now(&mut store, sc.turn, OnConflict::Refuse)
            .transaction_id
            .unwrap();
        store.undo(&tx).unwrap();
        drop(store);
        let known: BTreeSet<String> = manifests_on_disk(sc.sidecar()).into_keys().collect();
        let inj = FaultInjector::crash_at(k);
        let faulty = opts(Fs::without_sync().with_faults(Arc::clone(&inj)));
        let res = CheckpointStore::open(sc.sidecar(), &sc.root, faulty).and_then(|mut s| s.redo(&tx));
        // The redo moves from what the undo left (the forward images) to the restore's images;
        // it is a transaction of the kind it redoes.
        let expect = Expect {
            before: &sc.forward,
            after: &sc.restore,
            kind: TxKind::Restore,
            known: &known,
        };
        if !inj.crashed() {
            res.unwrap_or_else(|e| panic!("the redo without a crash failed: {e}"));
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
        let ctx = format!(
            "redo, crash at step {k} ({})",
            inj.trail().last().cloned().unwrap_or_default()
        );
        *phases
            .entry(phase_on_disk(sc.sidecar(), &known, TxKind::Restore))
            .or_default() += 1;
        let mut store = open_healthy(sc.sidecar(), &sc.root);
        let happened = check_recovered(&store, &sc.root, sc.sidecar(), &expect, &ctx);
        if res.is_ok() {
            assert!(happened, "{ctx}: redo reported success, recovery rolled it back");
        }
        check_idempotent(&store, &sc.root, sc.sidecar(), &ctx);
        let orig = store.transactions().find(|m| m.id == tx).unwrap().clone();
        assert_eq!(
            orig.state,
            TxState::Undone,
            "{ctx}: a redo leaves the redone restore undone"
        );
        if happened {
            finished += 1;
            let redo = store.undo_target().map(|m| m.id.clone());
            let redo = redo.unwrap_or_else(|| panic!("{ctx}: the redo is not undoable"));
            assert!(store.redo_target().is_none(), "{ctx}");
            store
                .undo(&redo)
                .unwrap_or_else(|e| panic!("{ctx}: undo of the redo: {e}"));
            let ws = snapshot(&sc.root);
            assert!(
                ws == sc.forward,
                "{ctx}: undo of the redo:\n{}",
                diff(&ws, &sc.forward)
            );
        } else {
            rolled_back += 1;
            assert_eq!(
                store.redo_target().map(|m| m.id.clone()),
                Some(tx.clone()),
                "{ctx}: the restore is no longer redoable"
            );
            store
                .redo(&tx)
                .unwrap_or_else(|e| panic!("{ctx}: redo after recovery: {e}"));
            let ws = snapshot(&sc.root);
            assert!(
                ws == sc.restore,
                "{ctx}: redo after recovery:\n{}",
                diff(&ws, &sc.restore)
            );
        }
        k += 1;
        assert!(k < MAX_STEPS, "the redo never completed");
    }
    eprintln!(
        "redo: {} crash points; phases on disk at the crash {phases:?}; {rolled_back} rolled back, {finished} finished",
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
