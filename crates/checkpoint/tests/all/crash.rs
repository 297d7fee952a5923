//! Failpoint tests of the checkpoint store (TESTING.md layer 3) and retention (SPEC §3.4).
//!
//! A fixed scenario (turns with captures of existing and new files, a shell gap, a delete, a move,
//! and in one variant retention pruning whole turns) runs with `FaultInjector::crash_at(k)` for
//! k = 1, 2, 3, … until a run completes: the k-th durable step fails and so does every later one, as
//! if the process had died there. The scenario behaves like the agent: it stops at the first error
//! and never runs an edit whose capture failed. After each crashed run the sidecar is reopened with a
//! healthy file system and must show that nothing promised was lost: every turn `begin_turn` handed
//! out is listed (unless the complete run prunes it), every before-image a successful
//! `capture_before` promised is there byte for byte, turn numbers are never reused, fsck finds no
//! error, and the store accepts a new turn.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use retrace_checkpoint::{BeforeImage, BeginTurn, Change, CheckpointStore, Clock, Limits, StoreOptions};
use retrace_fsutil::{FaultInjector, Fs, RelPath};
use retrace_protocol::{ChangeKind, Coverage, Gap, GapReason, Severity};
use retrace_testkit::Scratch;
use time::OffsetDateTime;

fn fixed_clock() -> Clock {
    Arc::new(|| OffsetDateTime::UNIX_EPOCH + time::Duration::seconds(1_767_607_200))
}

fn options(fs: Fs, limits: Limits) -> StoreOptions {
    StoreOptions {
        session_id: Some("crash-session".into()),
        limits,
        fs,
        clock: fixed_clock(),
        ..StoreOptions::default()
    }
}

fn rel(p: &str) -> RelPath {
    RelPath::from_stored(p.as_bytes()).unwrap()
}

/// A file's bytes and mode, or `None` when it does not exist.
type State = Option<(Vec<u8>, u32)>;

fn read_state(root: &Path, p: &str) -> State {
    let abs = root.join(p);
    let bytes = fs::read(&abs).ok()?;
    let mode = fs::metadata(&abs).unwrap().permissions().mode() & 0o7777;
    Some((bytes, mode))
}

/// The initial workspace.
const FILES: &[(&str, &[u8], u32)] = &[
    ("keep.txt", b"kept as is\n", 0o644),
    ("edit.txt", b"old\r\nbytes\0with NUL\xff", 0o600),
    ("gone.txt", b"delete me\n", 0o644),
    ("mv-src.bin", b"\xff\xfe\x00moved bytes", 0o755),
    ("big.bin", &[0xab; 200], 0o644),
];

/// An edit a tool performs once its capture succeeded.
#[derive(Debug, Clone)]
enum Edit {
    Write(&'static str, Vec<u8>),
    Delete(&'static str),
    Move(&'static str, &'static str),
}

fn perform(root: &Path, e: &Edit) {
    match e {
        Edit::Write(p, bytes) => {
            let abs = root.join(p);
            fs::create_dir_all(abs.parent().unwrap()).unwrap();
            fs::write(abs, bytes).unwrap();
        }
        Edit::Delete(p) => fs::remove_file(root.join(p)).unwrap(),
        Edit::Move(from, to) => {
            let target = root.join(to);
            fs::create_dir_all(target.parent().unwrap()).unwrap();
            fs::rename(root.join(from), target).unwrap();
        }
    }
}

/// A before-image a successful `capture_before` promised.
#[derive(Debug, Clone)]
struct Promise {
    turn: u64,
    /// The normalised workspace path.
    path: String,
    state: State,
}

/// What one run of the scenario did before it stopped.
struct Run {
    scratch: Scratch,
    root: PathBuf,
    store: CheckpointStore,
    /// Turns `begin_turn` handed out.
    begun: Vec<u64>,
    /// Turn numbers held with `hold` (and not released).
    held: Vec<u64>,
    promises: Vec<Promise>,
    /// Edits that ran (each after a successful capture).
    applied: Vec<Edit>,
}

type Step = Result<(), String>;

impl Run {
    fn new(fs_: Fs, limits: Limits) -> Run {
        let scratch = Scratch::new().unwrap();
        for (p, bytes, mode) in FILES {
            scratch.write(p, bytes).unwrap();
            fs::set_permissions(scratch.workspace.join(p), fs::Permissions::from_mode(*mode)).unwrap();
        }
        let root = fs::canonicalize(&scratch.workspace).unwrap();
        let store =
            CheckpointStore::open(&scratch.sidecar, &scratch.workspace, options(fs_, limits)).unwrap();
        Run {
            scratch,
            root,
            store,
            begun: Vec::new(),
            held: Vec::new(),
            promises: Vec::new(),
            applied: Vec::new(),
        }
    }

    fn begin(&mut self, prompt: &str) -> Step {
        let n = self
            .store
            .begin_turn(BeginTurn {
                prompt: prompt.into(),
                msg_index: 2 * self.begun.len() as u64,
                head: Some("main".into()),
                ..BeginTurn::default()
            })
            .map_err(|e| format!("begin_turn: {e}"))?;
        assert!(self.begun.iter().all(|&b| b < n), "turn {n} reuses or goes back");
        self.begun.push(n);
        Ok(())
    }

    /// One tool call through the seam, refusing the edit when the capture fails.
    fn tool(&mut self, changes: &[(&'static str, ChangeKind)], edits: Vec<Edit>) -> Step {
        let before: Vec<State> = changes.iter().map(|(p, _)| read_state(&self.root, p)).collect();
        let seam: Vec<Change> = changes.iter().map(|(p, k)| Change::new(*p, *k)).collect();
        let report = self
            .store
            .capture_before(&seam, Some("tool"))
            .map_err(|e| format!("capture_before (edit refused): {e}"))?;
        let turn = self.store.current_turn().unwrap();
        for ((p, _), state) in changes.iter().zip(before) {
            let key = self.store.normalize(Path::new(p)).unwrap();
            if report.captured.contains(&key) {
                self.promises.push(Promise {
                    turn,
                    path: key.to_lossy(),
                    state,
                });
            }
        }
        for e in edits {
            perform(&self.root, &e);
            self.applied.push(e);
        }
        let paths: Vec<PathBuf> = changes.iter().map(|(p, _)| PathBuf::from(p)).collect();
        self.store
            .capture_after(&paths)
            .map_err(|e| format!("capture_after: {e}"))
    }

    fn bash(&mut self, command: &str) -> Step {
        self.store
            .record_gap(Gap {
                reason: GapReason::BashSideEffect,
                tool: Some("bash".into()),
                path: None,
                detail: Some(command.into()),
            })
            .map_err(|e| format!("record_gap: {e}"))
    }

    /// The workspace the applied edits must have produced.
    fn expected_workspace(&self) -> BTreeMap<String, Vec<u8>> {
        let mut ws: BTreeMap<String, Vec<u8>> = FILES
            .iter()
            .map(|(p, b, _)| (p.to_string(), b.to_vec()))
            .collect();
        for e in &self.applied {
            match e {
                Edit::Write(p, b) => {
                    ws.insert(p.to_string(), b.clone());
                }
                Edit::Delete(p) => {
                    ws.remove(*p);
                }
                Edit::Move(f, t) => {
                    let b = ws.remove(*f).unwrap();
                    ws.insert(t.to_string(), b);
                }
            }
        }
        ws
    }
}

/// Which scenario to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// Two turns: capture, gap, delete, move. No retention.
    Capture,
    /// Three turns under small limits: turn 0 is held while turn 2 begins, so turn 1 is pruned by
    /// count; turn 0 is released and pruned by the byte budget when turn 2 captures; turn 2 stays
    /// although it alone is over the budget (it is the current turn).
    Pruning,
}

/// The scenario, behaving like the agent: stops at the first error.
fn scenario(r: &mut Run, variant: Variant) -> Step {
    r.begin("first: edit and create")?;
    r.tool(
        &[
            ("edit.txt", ChangeKind::Modify),
            ("new/new.txt", ChangeKind::Create),
        ],
        vec![
            Edit::Write("edit.txt", b"new\ncontent\n".to_vec()),
            Edit::Write("new/new.txt", b"created\r\n".to_vec()),
        ],
    )?;
    // Second touch of the same file in the same turn: first touch wins, nothing new to keep.
    r.tool(
        &[("./edit.txt", ChangeKind::Modify)],
        vec![Edit::Write("edit.txt", b"newer\n".to_vec())],
    )?;
    r.bash("cargo build")?;
    r.store.finish_turn().map_err(|e| e.to_string())?;
    if variant == Variant::Pruning {
        // An undoable transaction targets turn 0.
        r.store.hold(0);
        r.held.push(0);
    }

    r.begin("second: delete and move")?;
    r.tool(
        &[("gone.txt", ChangeKind::Delete)],
        vec![Edit::Delete("gone.txt")],
    )?;
    r.tool(
        &[
            ("mv-src.bin", ChangeKind::Delete),
            ("sub/mv-dst.bin", ChangeKind::Create),
        ],
        vec![Edit::Move("mv-src.bin", "sub/mv-dst.bin")],
    )?;
    r.store.finish_turn().map_err(|e| e.to_string())?;

    if variant == Variant::Pruning {
        r.begin("third: a large edit")?;
        r.store.release(0);
        r.held.clear();
        r.tool(
            &[("big.bin", ChangeKind::Modify), ("edit.txt", ChangeKind::Modify)],
            vec![
                Edit::Write("big.bin", b"small now".to_vec()),
                Edit::Write("edit.txt", b"third\n".to_vec()),
            ],
        )?;
        r.store.finish_turn().map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Every before-image promised for `turn` is in the reopened store, byte for byte.
fn check_promises(store: &CheckpointStore, promises: &[Promise], turn: u64, ctx: &str) {
    for p in promises.iter().filter(|p| p.turn == turn) {
        let what = format!("{ctx}: turn {turn} `{}`", p.path);
        let img = store
            .before_image(turn, &rel(&p.path))
            .unwrap_or_else(|e| panic!("{what}: promised before-image lost: {e}"));
        match (img, &p.state) {
            (BeforeImage::Absent, None) => {}
            (BeforeImage::Present { mode, reader, .. }, Some((bytes, m))) => {
                assert_eq!(mode, Some(*m), "{what}: mode");
                let got = reader
                    .read_all()
                    .unwrap_or_else(|e| panic!("{what}: payload unreadable: {e}"));
                assert!(got == *bytes, "{what}: bytes differ");
            }
            (img, want) => panic!("{what}: store has {img:?}, the capture saw {want:?}"),
        }
    }
}

fn workspace_files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let k = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(k, fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Every `.*.tmp` file under `dir`.
fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = fs::read_dir(dir) else { return out };
    for e in rd {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            out.extend(temp_files(&p));
        } else if name.starts_with('.') && name.ends_with(".tmp") {
            out.push(p);
        }
    }
    out
}

/// What the complete (crash-free) run ends with, to judge which turns retention may remove.
struct Reference {
    steps: u64,
    listed: Vec<u64>,
    /// Labels of the durable steps, in order.
    trail: Vec<String>,
}

/// Runs the scenario crashing at every durable step in turn.
fn crash_at_every_step(limits: Limits, variant: Variant) -> Reference {
    // The complete run first: how many durable steps there are, and which turns survive it.
    let inj = FaultInjector::crash_at(0);
    let mut full = Run::new(Fs::without_sync().with_faults(inj.clone()), limits);
    scenario(&mut full, variant).unwrap();
    let steps = inj.steps();
    let reopened = CheckpointStore::open(
        &full.scratch.sidecar,
        &full.root,
        options(Fs::without_sync(), limits),
    )
    .unwrap();
    let reference = Reference {
        steps,
        listed: reopened.list().iter().map(|e| e.turn).collect(),
        trail: inj.trail(),
    };
    for &t in &reference.listed {
        check_promises(&reopened, &full.promises, t, "complete run");
    }
    assert!(
        reopened.fsck().ok,
        "complete run: {:#?}",
        reopened.fsck().problems
    );

    let mut k = 1;
    loop {
        let inj = FaultInjector::crash_at(k);
        let mut run = Run::new(Fs::without_sync().with_faults(inj.clone()), limits);
        let result = scenario(&mut run, variant);
        if !inj.crashed() {
            result.unwrap();
            assert_eq!(
                k,
                steps + 1,
                "the run completed after {} steps, not {steps}",
                k - 1
            );
            break;
        }
        let err = result.expect_err("a crashed run must report an error");
        let label = inj.trail().last().cloned().unwrap_or_default();
        let ctx = format!("crash at step {k} ({label}; {err})");
        check_after_crash(run, limits, &reference, &ctx);
        k += 1;
    }
    reference
}

fn check_after_crash(run: Run, limits: Limits, reference: &Reference, ctx: &str) {
    // The edits that ran are exactly those whose capture succeeded: the workspace shows no other.
    assert_eq!(
        workspace_files(&run.root),
        run.expected_workspace(),
        "{ctx}: workspace"
    );
    let Run {
        scratch,
        root,
        store,
        begun,
        held,
        promises,
        ..
    } = run;
    let current = store.current_turn();
    drop(store);

    let mut store = CheckpointStore::open(&scratch.sidecar, &root, options(Fs::without_sync(), limits))
        .unwrap_or_else(|e| panic!("{ctx}: reopen failed: {e}"));
    // Opening for writing finished or rolled back what was in flight: no temp file is left.
    let temps = temp_files(&scratch.sidecar);
    assert!(temps.is_empty(), "{ctx}: temp files left after reopen: {temps:?}");
    let list = store.list();
    let listed: Vec<u64> = list.iter().map(|e| e.turn).collect();
    // Turns whose history retention removed, wholly or (crash in the middle) all but the marker.
    let mut pruned: Vec<u64> = Vec::new();
    for &t in &begun {
        let Some(entry) = list.iter().find(|e| e.turn == t) else {
            // Only retention may remove a turn, and only one the complete run removes too.
            assert!(
                !reference.listed.contains(&t),
                "{ctx}: turn {t} was handed out but is not listed (listed: {listed:?})"
            );
            pruned.push(t);
            continue;
        };
        let promised = promises.iter().any(|p| p.turn == t);
        if promised && entry.file_count == 0 {
            // A crash between deleting the turn's directory and its marker (SPEC §3.4 order): the
            // payload is hidden, the turn is not — and it must say so, not claim it touched nothing.
            assert!(
                !reference.listed.contains(&t),
                "{ctx}: turn {t} lost its files but retention does not remove it"
            );
            assert_eq!(entry.coverage, Coverage::Partial, "{ctx}: half-pruned turn {t}");
            assert!(
                entry.gaps.iter().any(|g| g.reason == GapReason::ExpiredPayload),
                "{ctx}: half-pruned turn {t} must carry an expired_payload gap: {:?}",
                entry.gaps
            );
            pruned.push(t);
        } else {
            check_promises(&store, &promises, t, ctx);
        }
    }
    // The current turn and the held ones are never pruned.
    for t in current.iter().chain(&held) {
        assert!(!pruned.contains(t), "{ctx}: protected turn {t} was pruned");
    }
    // A code restore to N is offered only while no turn at or after N lost its history.
    for e in &list {
        if pruned.iter().any(|&p| p >= e.turn) {
            assert_eq!(
                e.can_restore_code,
                Some(false),
                "{ctx}: restoring code to turn {} is offered though turn(s) {pruned:?} were pruned",
                e.turn
            );
        }
    }
    let next = store.next_turn();
    assert!(
        begun.iter().all(|&t| t < next),
        "{ctx}: next_turn {next} would reuse one of {begun:?}"
    );
    let report = store.fsck();
    let errors: Vec<_> = report
        .problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{ctx}: fsck errors: {errors:#?}");

    // The store works again: a fresh number, a durable capture.
    let n = store
        .begin_turn(BeginTurn {
            prompt: "after the crash".into(),
            ..BeginTurn::default()
        })
        .unwrap_or_else(|e| panic!("{ctx}: begin_turn after reopen: {e}"));
    assert!(
        n >= next && begun.iter().all(|&t| t < n),
        "{ctx}: turn {n} after {begun:?}"
    );
    let before = read_state(&root, "keep.txt");
    store
        .capture_before(&[Change::new("keep.txt", ChangeKind::Modify)], Some("tool"))
        .unwrap_or_else(|e| panic!("{ctx}: capture after reopen: {e}"));
    let promise = [Promise {
        turn: n,
        path: "keep.txt".into(),
        state: before,
    }];
    check_promises(&store, &promise, n, ctx);
    drop(store);
    let store = CheckpointStore::open(&scratch.sidecar, &root, options(Fs::without_sync(), limits)).unwrap();
    assert!(
        store.list().iter().any(|e| e.turn == n),
        "{ctx}: new turn {n} lost"
    );
    check_promises(&store, &promise, n, ctx);
    let report = store.fsck();
    assert!(
        report.ok,
        "{ctx}: fsck after the new turn: {:#?}",
        report.problems
    );
}

#[test]
fn crash_at_every_durable_step_of_capture() {
    let reference = crash_at_every_step(Limits::default(), Variant::Capture);
    println!(
        "capture scenario: {} durable steps, each crashed once",
        reference.steps
    );
    assert!(
        reference.steps >= 20,
        "only {} durable steps: the loop covers too little",
        reference.steps
    );
    assert_eq!(reference.listed, vec![0, 1]);
}

#[test]
fn crash_at_every_durable_step_with_pruning() {
    let limits = Limits {
        max_turns: 2,
        max_bytes: 150,
        ..Limits::default()
    };
    let reference = crash_at_every_step(limits, Variant::Pruning);
    println!(
        "pruning scenario: {} durable steps, each crashed once",
        reference.steps
    );
    assert!(reference.steps >= 20, "only {} durable steps", reference.steps);
    assert_eq!(
        reference.listed,
        vec![2],
        "the complete run prunes turns 1 then 0"
    );
    // The loop really went through the deletion of whole turns (a turn's directory, or its
    // `deleted` frame in the log).
    let removals = reference
        .trail
        .iter()
        .filter(|l| *l == "remove_dir_all" || *l == "delete_turn")
        .count();
    assert!(removals >= 2, "steps: {:?}", reference.trail);
}

// ---------------------------------------------------------------------------------------------
// Retention without crashes.

struct Session {
    scratch: Scratch,
    store: CheckpointStore,
    limits: Limits,
    /// Before-images promised, per turn.
    promises: Vec<Promise>,
}

impl Session {
    fn new(limits: Limits) -> Session {
        let scratch = Scratch::new().unwrap();
        for (p, bytes, mode) in FILES {
            scratch.write(p, bytes).unwrap();
            fs::set_permissions(scratch.workspace.join(p), fs::Permissions::from_mode(*mode)).unwrap();
        }
        let store = CheckpointStore::open(
            &scratch.sidecar,
            &scratch.workspace,
            options(Fs::without_sync(), limits),
        )
        .unwrap();
        Session {
            scratch,
            store,
            limits,
            promises: Vec::new(),
        }
    }

    /// Begins a turn that rewrites `path` with `bytes` (captured first).
    fn turn(&mut self, path: &'static str, bytes: &[u8]) -> u64 {
        self.store.end_turn();
        let n = self
            .store
            .begin_turn(BeginTurn {
                prompt: format!("write {path}"),
                ..BeginTurn::default()
            })
            .unwrap();
        let state = read_state(&self.scratch.workspace, path);
        self.store
            .capture_before(&[Change::new(path, ChangeKind::Modify)], Some("write_file"))
            .unwrap();
        self.scratch.write(path, bytes).unwrap();
        self.store.capture_after(&[PathBuf::from(path)]).unwrap();
        self.promises.push(Promise {
            turn: n,
            path: path.into(),
            state,
        });
        n
    }

    fn listed(&self) -> Vec<u64> {
        self.store.list().iter().map(|e| e.turn).collect()
    }

    /// The listed turns are exactly `want`, whole; pruned turns left nothing behind.
    fn expect(&self, want: &[u64], pruned: &[u64]) {
        assert_eq!(self.listed(), want);
        for &t in want {
            check_promises(&self.store, &self.promises, t, "retained turn");
        }
        let dir = &self.scratch.sidecar;
        for &t in pruned {
            assert!(
                !dir.join(format!("turn-{t}.json")).exists(),
                "marker of pruned turn {t}"
            );
            assert!(
                !dir.join("turns").join(t.to_string()).exists(),
                "directory of pruned turn {t}"
            );
        }
        let report = self.store.fsck();
        assert!(report.ok, "{:#?}", report.problems);
        assert!(
            report.problems.iter().all(|p| p.severity < Severity::Warning),
            "{:#?}",
            report.problems
        );
    }

    fn reopen(&mut self) {
        let store = CheckpointStore::open(
            &self.scratch.sidecar,
            &self.scratch.workspace,
            options(Fs::without_sync(), self.limits),
        )
        .unwrap();
        self.store = store;
    }
}

#[test]
fn retention_by_count_drops_whole_oldest_turns_but_spares_current_and_held() {
    let mut s = Session::new(Limits {
        max_turns: 2,
        ..Limits::default()
    });
    assert_eq!(s.turn("edit.txt", b"one"), 0);
    assert_eq!(s.turn("keep.txt", b"two"), 1);
    s.expect(&[0, 1], &[]);
    assert_eq!(s.turn("edit.txt", b"three"), 2);
    s.expect(&[1, 2], &[0]);

    // A held turn (an undoable transaction targets it) stays; the next oldest goes instead.
    s.store.hold(1);
    assert_eq!(s.turn("gone.txt", b"four"), 3);
    s.expect(&[1, 3], &[0, 2]);
    // A turn after 1 was pruned: restoring code to 1 is no longer offered, to 3 it is.
    let list = s.store.list();
    assert_eq!(list[0].can_restore_code, Some(false));
    assert_eq!(
        list[0].disabled_reason.as_deref(),
        Some("history after this turn was pruned")
    );
    assert_eq!(list[1].can_restore_code, Some(true));

    // Held twice, released once: still held.
    s.store.hold(1);
    s.store.release(1);
    assert_eq!(s.turn("edit.txt", b"five"), 4);
    s.expect(&[1, 4], &[0, 2, 3]);
    s.store.release(1);
    assert_eq!(s.turn("keep.txt", b"six"), 5);
    s.expect(&[4, 5], &[0, 1, 2, 3]);

    // The same after a restart, and numbers are never reused.
    s.reopen();
    s.expect(&[4, 5], &[0, 1, 2, 3]);
    assert_eq!(s.store.next_turn(), 6);
    assert_eq!(s.turn("edit.txt", b"seven"), 6);
    s.expect(&[5, 6], &[0, 1, 2, 3, 4]);
}

#[test]
fn retention_keeps_the_current_turn_even_when_the_limits_say_none() {
    let mut s = Session::new(Limits {
        max_turns: 0,
        max_bytes: 0,
        ..Limits::default()
    });
    assert_eq!(s.turn("edit.txt", b"one"), 0);
    s.expect(&[0], &[]);
    assert_eq!(s.turn("keep.txt", b"two"), 1);
    s.expect(&[1], &[0]);
    // Ended, not current any more: the next prune (after any capture or new turn) may take it, but
    // a hold keeps it.
    s.store.end_turn();
    s.store.hold(1);
    assert_eq!(s.turn("gone.txt", b"three"), 2);
    s.expect(&[1, 2], &[0]);
    s.reopen();
    // Holds live in memory: after a restart turn 1 is unprotected, the new current turn is not.
    assert_eq!(s.turn("edit.txt", b"four"), 3);
    s.expect(&[3], &[0, 1, 2]);
    assert_eq!(s.store.next_turn(), 4);
}

#[test]
fn retention_by_bytes_drops_oldest_first_and_keeps_protected_turns_over_budget() {
    let mut s = Session::new(Limits {
        max_turns: 100,
        max_bytes: 30,
        ..Limits::default()
    });
    // edit.txt starts at 21 bytes, keep.txt at 11: each turn's payload is its file's old size.
    assert_eq!(s.turn("keep.txt", &[b'a'; 20]), 0); // payload 11
    assert_eq!(s.turn("edit.txt", &[b'b'; 40]), 1); // payload 21: 32 > 30, turn 0 goes
    s.expect(&[1], &[0]);
    assert_eq!(s.turn("keep.txt", &[b'c'; 5]), 2); // payload 20: 41 > 30, turn 1 goes
    s.expect(&[2], &[0, 1]);
    s.store.hold(2);
    assert_eq!(s.turn("edit.txt", b"x"), 3); // payload 40: 60 > 30, but 2 is held, 3 current
    s.expect(&[2, 3], &[0, 1]);
    let list = s.store.list();
    assert_eq!(
        list.iter().map(|e| e.bytes).sum::<u64>(),
        60,
        "over budget, by design"
    );
    s.store.release(2);
    assert_eq!(s.turn("gone.txt", b"y"), 4); // payload 10: turn 2 (20) then 3 (40) go
    s.expect(&[4], &[0, 1, 2, 3]);
    assert_eq!(s.store.list()[0].coverage, Coverage::Complete);
}

// ---------------------------------------------------------------------------------------------
// A failure that passes (disk full, a file briefly in the way) instead of a crash.

/// A capture that failed for a passing reason and is then retried must capture again: the retry may
/// not call the path "already captured" while nothing of it was published, or the edit would run
/// before its before-image is durable (SPEC §3.2).
#[test]
fn a_retried_capture_is_durable_before_the_edit_runs() {
    // The steps a turn's start takes, counted on a first store; the second fails the capture's
    // first step once (a full disk, a file briefly in the way).
    let counted = |inj: std::sync::Arc<retrace_fsutil::FaultInjector>| {
        let scratch = Scratch::new().unwrap();
        scratch.write("a.txt", b"original\n").unwrap();
        let mut store = CheckpointStore::open(
            &scratch.sidecar,
            &scratch.workspace,
            options(Fs::without_sync().with_faults(inj.clone()), Limits::default()),
        )
        .unwrap();
        let n = store.begin_turn(BeginTurn::default()).unwrap();
        (scratch, store, n, inj.steps())
    };
    let (_, _, _, base) = counted(retrace_fsutil::FaultInjector::crash_at(0));
    let (scratch, mut store, n, _) = counted(retrace_fsutil::FaultInjector::fail_once_at(base + 1));
    let state = read_state(&scratch.workspace, "a.txt");
    let change = [Change::new("a.txt", ChangeKind::Modify)];
    assert!(store.capture_before(&change, Some("write_file")).is_err());

    let report = store.capture_before(&change, Some("write_file")).unwrap();
    // The edit would run now: what is on disk must already hold the before-image.
    let on_disk = CheckpointStore::open_bare(&scratch.sidecar).unwrap();
    let promise = [Promise {
        turn: n,
        path: "a.txt".into(),
        state,
    }];
    check_promises(&on_disk, &promise, n, "after a retried capture");
    assert_eq!(report.captured, vec![rel("a.txt")]);
}
