//! SIGKILL torture of a long code restore, and of its redo (TESTING.md layer 3).
//!
//! The parent builds a workspace where one turn edited 200 files (modified, deleted, mode-only
//! changes, and 25 files created), then re-executes this test binary as a child that opens the store
//! with the production layer (`Fs::durable()`), plans the restore of that turn, prints `READY` and
//! commits. The parent kills it with SIGKILL after a delay drawn from a seeded xorshift, aimed in turn
//! at the prepare phase, the renames, the tail after `committed`, and anywhere (the phase windows are
//! measured first on runs that are not killed). Then it reopens the store, which runs recovery, and
//! checks what `restore_faults.rs` checks after a failpoint: all 225 targets forward or all restored,
//! matching the manifest; no transaction file in the workspace, no temp file in the sidecar; every
//! manifest terminal; a second recovery changes nothing; fsck clean; a fresh restore works.
//!
//! The same for a redo: the restore is committed and undone first, then the child redoes it (from
//! what the undo left back to the restore's images), and after recovery the walk goes on (the redo
//! again when it was rolled back, its undo when it happened).
//!
//! `RETRACE_SOAK_ITERATIONS` sets the number of kills (default 50), `RETRACE_KILL_SEED` the seed.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::restore_support::*;
use retrace_checkpoint::tx::TxKind;
use retrace_checkpoint::CheckpointStore;
use retrace_fsutil::Fs;
use retrace_protocol::OnConflict;

/// The child test's full name (`--exact`): its module in the `tests/all` binary, then its name.
const CHILD_TEST: &str = "restore_kill::restore_kill_child";
const ENV_WS: &str = "RETRACE_KILL_CHILD_WS";
const ENV_SIDECAR: &str = "RETRACE_KILL_CHILD_SIDECAR";
const ENV_TURN: &str = "RETRACE_KILL_CHILD_TURN";
/// Set for a redo: the undone transaction the child redoes.
const ENV_REDO: &str = "RETRACE_KILL_CHILD_REDO";
/// Files the turn edits.
const FILES: usize = 200;
/// Targets of the restore: the 200 edited files and the 25 created ones.
const TARGETS: usize = FILES + FILES / 8;
/// No child may take longer than this to reach `READY` or to finish.
const CHILD_TIMEOUT: Duration = Duration::from_secs(60);
/// Without `RETRACE_SOAK_ITERATIONS`, the test stops early (after at least 10 kills) past this.
const BUDGET: Duration = Duration::from_secs(40);

/// The child: restores the turn it is given, or redoes the transaction it is given. Run only by the parent test, with the environment set.
#[test]
#[ignore = "the child process of the sigkill_at_random_moments_of_a_* tests"]
fn restore_kill_child() {
    let (Some(ws), Some(sidecar), Some(turn)) = (
        std::env::var_os(ENV_WS),
        std::env::var_os(ENV_SIDECAR),
        std::env::var(ENV_TURN).ok(),
    ) else {
        eprintln!("{CHILD_TEST}: not started by the SIGKILL test; nothing to do");
        return;
    };
    let turn: u64 = turn.parse().unwrap();
    let mut store = CheckpointStore::open(Path::new(&sidecar), Path::new(&ws), opts(Fs::durable())).unwrap();
    let redo = std::env::var(ENV_REDO).ok();
    let plan = match redo {
        Some(_) => None,
        None => Some(store.plan_restore(turn).unwrap()),
    };
    if let Some(plan) = &plan {
        assert!(plan.plan.conflicts.is_empty(), "{:?}", plan.plan.conflicts);
    }
    let mut out = std::io::stdout();
    // On a line of its own: libtest has printed `test <name> ... ` without a newline.
    writeln!(out, "\nREADY").unwrap();
    out.flush().unwrap();
    let done = match (&plan, &redo) {
        (Some(plan), _) => store.commit(plan, confirm(OnConflict::Refuse)).unwrap(),
        (None, Some(tx)) => store.redo(tx).unwrap(),
        (None, None) => unreachable!(),
    };
    writeln!(
        out,
        "DONE {}",
        done.files_written.len() + done.files_deleted.len()
    )
    .unwrap();
    out.flush().unwrap();
}

/// xorshift64: reproducible delays from a printed seed.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// Uniform in `[lo, hi]`.
    fn between(&mut self, lo: Duration, hi: Duration) -> Duration {
        let (lo, hi) = (lo.as_micros() as u64, hi.as_micros().max(lo.as_micros()) as u64);
        Duration::from_micros(lo + self.next() % (hi - lo + 1))
    }
}

/// A running child and the lines it prints.
struct Running {
    child: Child,
    lines: mpsc::Receiver<(String, Instant)>,
    stderr: std::thread::JoinHandle<String>,
}

/// What the child runs: the restore of the scenario's turn, or (`Some`: the transaction, restored
/// and undone by the parent) its redo.
type Redo<'a> = Option<&'a str>;

fn spawn_child(sc: &Scenario, redo: Redo) -> Running {
    let exe = std::env::current_exe().unwrap();
    let mut command = Command::new(exe);
    if let Some(tx) = redo {
        command.env(ENV_REDO, tx);
    }
    let mut child = command
        .args([
            "--exact",
            CHILD_TEST,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ENV_WS, &sc.root)
        .env(ENV_SIDECAR, sc.sidecar())
        .env(ENV_TURN, sc.turn.to_string())
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send((line, Instant::now())).is_err() {
                break;
            }
        }
    });
    let stderr = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    Running { child, lines, stderr }
}

impl Running {
    /// Waits for a line starting with `prefix`; `None` when the child closed its output first.
    fn wait_line(&self, prefix: &str) -> Option<Instant> {
        let deadline = Instant::now() + CHILD_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok((line, at)) if line.starts_with(prefix) => return Some(at),
                Ok(_) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return None,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    panic!("the child printed no `{prefix}` in {CHILD_TIMEOUT:?}")
                }
            }
        }
    }

    /// Waits for the exit (bounded), returning the status and the child's stderr.
    fn finish(mut self) -> (std::process::ExitStatus, String) {
        let deadline = Instant::now() + CHILD_TIMEOUT;
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the child did not exit within {CHILD_TIMEOUT:?}");
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        (status, self.stderr.join().unwrap())
    }
}

/// When, after `READY`, a child that is not killed reaches each phase (seen by polling the manifest).
#[derive(Debug, Clone, Copy, Default)]
struct Windows {
    prepared: Duration,
    committing: Duration,
    committed: Duration,
    done: Duration,
}

/// The wide scenario, and for a redo the restore committed and undone: the transaction to redo
/// and the manifests there before the child runs.
fn prepared(redo: bool) -> (Scenario, Option<String>, BTreeSet<String>) {
    let sc = wide_scenario(FILES);
    if !redo {
        return (sc, None, BTreeSet::new());
    }
    let mut store = open_healthy(sc.sidecar(), &sc.root);
    let tx = restore_now(&mut store, sc.turn, OnConflict::Refuse)
        .transaction_id
        .unwrap();
    store.undo(&tx).unwrap();
    let known = store.transactions().map(|m| m.id.clone()).collect();
    drop(store);
    assert!(
        snapshot(&sc.root) == sc.forward,
        "the undo did not put everything back"
    );
    (sc, Some(tx), known)
}

fn calibrate(redo: bool) -> Windows {
    let mut runs = Vec::new();
    for _ in 0..3 {
        let (sc, tx, known) = prepared(redo);
        let run = spawn_child(&sc, tx.as_deref());
        let Some(ready) = run.wait_line("READY") else {
            let (status, stderr) = run.finish();
            panic!("calibration: the child died before READY: {status}\n{stderr}");
        };
        let mut w = Windows::default();
        let (mut seen_prep, mut seen_committing, mut seen_committed) = (false, false, false);
        let done = loop {
            if let Ok((line, at)) = run.lines.try_recv() {
                if line.starts_with("DONE") {
                    break at;
                }
            }
            let phase = Some(phase_on_disk(sc.sidecar(), &known, TxKind::Restore));
            let now = ready.elapsed();
            if phase >= Some(Phase::Prepared) && !seen_prep {
                seen_prep = true;
                w.prepared = now;
            }
            if phase >= Some(Phase::Committing) && !seen_committing {
                seen_committing = true;
                w.committing = now;
            }
            if phase >= Some(Phase::Committed) && !seen_committed {
                seen_committed = true;
                w.committed = now;
            }
            assert!(ready.elapsed() < CHILD_TIMEOUT, "calibration run did not finish");
            // Gently: the poll must not slow the child down much.
            std::thread::sleep(Duration::from_micros(200));
        };
        w.done = done - ready;
        let (status, stderr) = run.finish();
        assert!(status.success(), "calibration child failed: {status}\n{stderr}");
        let ws = snapshot(&sc.root);
        assert!(
            ws == sc.restore,
            "calibration restore:\n{}",
            diff(&ws, &sc.restore)
        );
        // Phases too short for the poll to see take the time of the next one seen.
        if !seen_committed {
            w.committed = w.done;
        }
        if !seen_committing {
            w.committing = w.committed;
        }
        if !seen_prep {
            w.prepared = w.committing.min(Duration::from_micros(100));
        }
        runs.push(w);
    }
    runs.sort_by_key(|w| w.done);
    runs[1]
}

#[test]
fn sigkill_at_random_moments_of_a_restore_recovers_all_or_nothing() {
    torture(false, 50);
}

#[test]
fn sigkill_at_random_moments_of_a_redo_recovers_all_or_nothing() {
    torture(true, 20);
}

/// Kills the child (a restore, or a redo) at seeded moments, `iterations` times unless
/// `RETRACE_SOAK_ITERATIONS` says otherwise, and checks each recovery.
fn torture(redo: bool, iterations: u64) {
    let what = if redo { "redo" } else { "restore" };
    let soak = std::env::var("RETRACE_SOAK_ITERATIONS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok());
    let iterations = soak.unwrap_or(iterations);
    let seed = std::env::var("RETRACE_KILL_SEED")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0x5eed_f00d_1e55_7e57)
        .max(1);
    let started = Instant::now();
    let w = calibrate(redo);
    eprintln!("sigkill ({what}): seed {seed}; phase windows after READY (median of 3 runs): {w:?}");
    let mut rng = XorShift(seed);
    let mut scale = 1.0f64;
    let mut phases: BTreeMap<&'static str, u64> = BTreeMap::new();
    let (mut rolled_back, mut finished, mut done) = (0u64, 0u64, 0u64);
    for it in 0..iterations {
        if soak.is_none() && it >= 10 && started.elapsed() > BUDGET {
            eprintln!("sigkill: stopping after {it} kills: over the {BUDGET:?} budget");
            break;
        }
        let (sc, tx, known) = prepared(redo);
        let zero = Duration::ZERO;
        let (aim, delay) = match it % 4 {
            0 => ("prepare", rng.between(zero, w.committing)),
            1 => ("renames", rng.between(w.committing, w.committed)),
            2 => ("tail", rng.between(w.committed, w.done)),
            _ => ("anywhere", rng.between(zero, w.done + w.done / 4)),
        };
        let delay = delay.mul_f64(scale);
        let run = spawn_child(&sc, tx.as_deref());
        let ready = run.wait_line("READY");
        if ready.is_none() {
            let (status, stderr) = run.finish();
            panic!("iteration {it}: the child died before READY: {status}\n{stderr}");
        }
        std::thread::sleep(delay);
        let mut run = run;
        let _ = run.child.kill();
        let (status, stderr) = run.finish();
        let killed = status.signal() == Some(9);
        assert!(
            killed || status.success(),
            "iteration {it}: the child failed on its own: {status}\n{stderr}"
        );
        let phase = phase_on_disk(sc.sidecar(), &known, TxKind::Restore);
        let label = match (killed, phase) {
            (false, _) => "completed before the kill",
            (true, Phase::NoManifest) => "no manifest yet",
            (true, Phase::Prepared) => "prepared",
            (true, Phase::Committing) => "committing",
            (true, Phase::Committed) => "committed",
            (true, Phase::Terminal) => "terminal",
        };
        *phases.entry(label).or_default() += 1;
        // The windows were measured on a machine as busy as it was then: follow its speed now.
        if !killed {
            scale *= 0.85;
        } else if aim != "prepare" && phase <= Phase::Prepared {
            scale = (scale * 1.1).min(2.0);
        }
        if !killed {
            done += 1;
        }
        let ctx =
            format!("{what} iteration {it} (aimed at {aim}, killed {delay:?} after READY, found {label})");
        let mut store = open_healthy(sc.sidecar(), &sc.root);
        let expect = Expect {
            before: &sc.forward,
            after: &sc.restore,
            kind: TxKind::Restore,
            known: &known,
        };
        let happened = check_recovered(&store, &sc.root, sc.sidecar(), &expect, &ctx);
        if !killed {
            assert!(
                happened,
                "{ctx}: the child finished but its restore was rolled back"
            );
        }
        if happened {
            finished += 1;
        } else {
            rolled_back += 1;
        }
        check_idempotent(&store, &sc.root, sc.sidecar(), &ctx);
        if let Some(tx) = &tx {
            // The walk goes on from where recovery left it: the redo again, or its undo.
            let (want, step) = if happened {
                let redone = store.undo_target().map(|m| m.id.clone());
                let redone = redone.unwrap_or_else(|| panic!("{ctx}: the redo is not undoable"));
                (&sc.forward, store.undo(&redone))
            } else {
                (&sc.restore, store.redo(tx))
            };
            step.unwrap_or_else(|e| panic!("{ctx}: the next step after recovery: {e}"));
            let ws = snapshot(&sc.root);
            assert!(ws == *want, "{ctx}: the next step:\n{}", diff(&ws, want));
            continue;
        }
        let out = restore_now(&mut store, sc.turn, OnConflict::Refuse);
        assert!(out.conflicts.is_empty(), "{ctx}: {:?}", out.conflicts);
        if !happened {
            assert_eq!(
                out.files_written.len() + out.files_deleted.len(),
                TARGETS,
                "{ctx}"
            );
        }
        let ws = snapshot(&sc.root);
        assert!(
            ws == sc.restore,
            "{ctx}: fresh restore:\n{}",
            diff(&ws, &sc.restore)
        );
    }
    let total = rolled_back + finished;
    eprintln!(
        "sigkill ({what}): {total} runs in {:?}: {phases:?}; after recovery {rolled_back} rolled back, {finished} done ({done} finished before the kill)",
        started.elapsed()
    );
    assert!(total >= 10);
    let mid_transaction = phases.get("prepared").copied().unwrap_or(0)
        + phases.get("committing").copied().unwrap_or(0)
        + phases.get("committed").copied().unwrap_or(0);
    assert!(
        mid_transaction > 0,
        "no kill landed inside the transaction: {phases:?}"
    );
    assert!(
        done < total,
        "every child finished before its kill: the kills tested nothing"
    );
}
