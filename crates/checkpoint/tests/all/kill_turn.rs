//! A process killed in the middle of a turn (issue 25 items 2 and 4), at every phase of each tool
//! call (its intent journaled and its temp file half written; its write landed but its after-image
//! not recorded; its after-image in memory only, while the model is asked again), and at every
//! durable step of the end of the turn. The store is then dropped without its `Drop` (as SIGKILL
//! would) and reopened: a code restore of the killed turn must bring everything back with no
//! conflict, and leave no temp file and no directory the turn made.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use retrace_checkpoint::model::Image;
use retrace_checkpoint::{BeginTurn, Change, CheckpointStore, Clock, CommitOptions, StoreOptions};
use retrace_fsutil::{sha256_bytes, tool_temp_name, FaultInjector, Fs};
use retrace_protocol::{ChangeKind, ConflictReason, FileAction, OnConflict};

fn clock() -> Clock {
    Arc::new(|| time::OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap())
}

fn open(sidecar: &Path, ws: &Path, fs_: Fs) -> CheckpointStore {
    let opts = StoreOptions {
        session_id: Some("kill-turn".into()),
        fs: fs_,
        clock: clock(),
        ..StoreOptions::default()
    };
    CheckpointStore::open(sidecar, ws, opts).unwrap()
}

/// [`open`] as the process `pid` (the one a kill ends): its intents name it.
fn open_as(sidecar: &Path, ws: &Path, fs_: Fs, pid: u32) -> CheckpointStore {
    let opts = StoreOptions {
        session_id: Some("kill-turn".into()),
        fs: fs_,
        clock: clock(),
        writer_pid: pid,
        ..StoreOptions::default()
    };
    CheckpointStore::open(sidecar, ws, opts).unwrap()
}

const MODE: u32 = 0o644;

/// The number of the killed turn (the first is 0).
const KILLED: u64 = 1;

/// One tool call of the killed turn: what it changes, and the bytes it leaves (`None`: deletes).
struct Call {
    path: &'static str,
    kind: ChangeKind,
    bytes: Option<&'static [u8]>,
}

const CALLS: [Call; 5] = [
    Call {
        path: "over.txt",
        kind: ChangeKind::Modify,
        bytes: Some(b"overwritten\n"),
    },
    Call {
        path: "edit.txt",
        kind: ChangeKind::Modify,
        bytes: Some(b"edit, edited\n"),
    },
    Call {
        path: "gone.txt",
        kind: ChangeKind::Delete,
        bytes: None,
    },
    Call {
        path: "new/dir/made.txt",
        kind: ChangeKind::Create,
        bytes: Some(b"made\n"),
    },
    Call {
        path: "over.txt",
        kind: ChangeKind::Modify,
        bytes: Some(b"overwritten twice\n"),
    },
];

/// Where in call `k` (0-based) the process dies.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Its intent is journaled and its temp file half written: the rename never happens.
    DuringWrite,
    /// Its write landed; `capture_after` never ran.
    AfterWrite,
    /// `capture_after` ran (in memory): the agent goes on to the next call or the model.
    AfterCapture,
}

fn intent(c: &Call) -> Image {
    match c.bytes {
        Some(b) => Image {
            existed: true,
            sha256: Some(sha256_bytes(b)),
            mode: Some(MODE),
        },
        None => Image::absent(),
    }
}

/// A process that has ended (its id is free): the owner of a temp file a kill left.
fn dead_pid() -> u32 {
    let mut c = std::process::Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

struct Run {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    sidecar: PathBuf,
    /// The workspace after turn 1: what a restore of turn 2 must give back.
    before: BTreeMap<String, Vec<u8>>,
    /// The process the kill ends (its number is free now).
    killed: u32,
}

impl Run {
    /// Turn 1 creates the three files (so that they are Retrace's own), and ends.
    fn new() -> Run {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        fs::create_dir(&ws).unwrap();
        let sidecar = tmp.path().join("s.ckpt");
        let mut store = open(&sidecar, &ws, Fs::without_sync());
        store.begin_turn(BeginTurn::default()).unwrap();
        for (p, b) in [
            ("over.txt", "over\n"),
            ("edit.txt", "edit\n"),
            ("gone.txt", "gone\n"),
        ] {
            let img = Image {
                existed: true,
                sha256: Some(sha256_bytes(b.as_bytes())),
                mode: Some(MODE),
            };
            store
                .capture_before(
                    &[Change::new(p, ChangeKind::Create).with_intent(img)],
                    Some("write_file"),
                )
                .unwrap();
            write(&ws.join(p), b.as_bytes());
            store.capture_after(&[PathBuf::from(p)]).unwrap();
        }
        store.finish_turn().unwrap();
        drop(store);
        let before = files(&ws);
        Run {
            _tmp: tmp,
            ws,
            sidecar,
            before,
            killed: dead_pid(),
        }
    }

    /// Turn 2's calls up to call `k` at `phase`; then the process dies (no `Drop`, no flush).
    fn kill_at(&self, k: usize, phase: Phase) {
        let mut store = open_as(&self.sidecar, &self.ws, Fs::without_sync(), self.killed);
        store.begin_turn(BeginTurn::default()).unwrap();
        for (i, c) in CALLS.iter().enumerate() {
            // Call `i`'s temp file is numbered `i`, as the tools number theirs in order.
            let change = Change::new(c.path, c.kind)
                .with_intent(intent(c))
                .with_temps_from(i as u64);
            store.capture_before(&[change], Some("tool")).unwrap();
            let abs = self.ws.join(c.path);
            if i == k && matches!(phase, Phase::DuringWrite) {
                // The tool made the directories and began its temp file.
                let dir = abs.parent().unwrap();
                fs::create_dir_all(dir).unwrap();
                let tmp = dir.join(tool_temp_name(abs.file_name().unwrap(), self.killed, i as u64));
                fs::write(tmp, b"half of it").unwrap();
                break;
            }
            perform(&abs, c.bytes);
            if i == k && matches!(phase, Phase::AfterWrite) {
                break;
            }
            store.capture_after(&[PathBuf::from(c.path)]).unwrap();
            if i == k {
                break;
            }
        }
        std::mem::forget(store);
    }

    /// Reopens (recovery runs), then restores the killed turn refusing conflicts: nothing may be in the way.
    fn restore_cleanly(&self, ctx: &str) {
        let mut store = open(&self.sidecar, &self.ws, Fs::without_sync());
        let plan = store.plan_restore(KILLED).unwrap();
        assert!(
            plan.plan.conflicts.is_empty(),
            "{ctx}: the turn's own writes are conflicts: {:#?}",
            plan.plan.conflicts
        );
        store
            .commit(
                &plan,
                CommitOptions {
                    confirm: true,
                    on_conflict: OnConflict::Refuse,
                },
            )
            .unwrap_or_else(|e| panic!("{ctx}: {e}"));
        assert_eq!(files(&self.ws), self.before, "{ctx}");
        assert_eq!(
            stray(&self.ws),
            Vec::<String>::new(),
            "{ctx}: left in the workspace"
        );
        let report = store.fsck();
        assert!(report.ok, "{ctx}: {:#?}", report.problems);
    }
}

fn write(abs: &Path, bytes: &[u8]) {
    fs::create_dir_all(abs.parent().unwrap()).unwrap();
    fs::write(abs, bytes).unwrap();
    fs::set_permissions(abs, fs::Permissions::from_mode(MODE)).unwrap();
}

fn perform(abs: &Path, bytes: Option<&[u8]>) {
    match bytes {
        Some(b) => write(abs, b),
        None => fs::remove_file(abs).unwrap(),
    }
}

/// Every regular file under `dir`, by relative path.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in walk(dir) {
        if e.is_file() {
            let rel = e.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            out.insert(rel, fs::read(&e).unwrap());
        }
    }
    out
}

/// Temp files and directories in `dir`.
fn stray(dir: &Path) -> Vec<String> {
    walk(dir)
        .into_iter()
        .filter(|p| p.is_dir() || p.to_string_lossy().contains(".retrace-"))
        .map(|p| p.strip_prefix(dir).unwrap().to_string_lossy().into_owned())
        .collect()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

#[test]
fn a_kill_at_any_phase_of_any_tool_call_leaves_the_turn_restorable_without_conflicts() {
    for (k, call) in CALLS.iter().enumerate() {
        for phase in [Phase::DuringWrite, Phase::AfterWrite, Phase::AfterCapture] {
            let run = Run::new();
            run.kill_at(k, phase);
            run.restore_cleanly(&format!("killed in call {k} ({}) {phase:?}", call.path));
        }
    }
}

#[test]
fn a_kill_at_any_durable_step_of_the_end_of_the_turn_leaves_it_restorable() {
    // The steps a whole turn takes before its end, counted once.
    let counted = {
        let run = Run::new();
        let inj = FaultInjector::crash_at(0);
        let mut store = open(&run.sidecar, &run.ws, Fs::without_sync().with_faults(inj.clone()));
        store.begin_turn(BeginTurn::default()).unwrap();
        for c in &CALLS {
            store
                .capture_before(
                    &[Change::new(c.path, c.kind).with_intent(intent(c))],
                    Some("tool"),
                )
                .unwrap();
            perform(&run.ws.join(c.path), c.bytes);
            store.capture_after(&[PathBuf::from(c.path)]).unwrap();
        }
        let before_end = inj.steps();
        store.finish_turn().unwrap();
        (before_end, inj.steps())
    };
    assert!(counted.1 > counted.0, "the end of the turn takes no durable step");
    for k in counted.0 + 1..=counted.1 {
        let run = Run::new();
        let inj = FaultInjector::crash_at(k);
        let mut store = open(&run.sidecar, &run.ws, Fs::without_sync().with_faults(inj.clone()));
        store.begin_turn(BeginTurn::default()).unwrap();
        for c in &CALLS {
            store
                .capture_before(
                    &[Change::new(c.path, c.kind).with_intent(intent(c))],
                    Some("tool"),
                )
                .unwrap();
            perform(&run.ws.join(c.path), c.bytes);
            store.capture_after(&[PathBuf::from(c.path)]).unwrap();
        }
        assert!(store.finish_turn().is_err(), "step {k}: no crash");
        std::mem::forget(store);
        run.restore_cleanly(&format!("killed at durable step {k} of the end of the turn"));
    }
}

/// What recovery settles never covers a user's change: a file edited after the kill, whether the
/// tool's write had landed or not, is a conflict, and its bytes stay.
#[test]
fn a_file_changed_after_the_kill_is_still_a_conflict() {
    for phase in [Phase::DuringWrite, Phase::AfterWrite, Phase::AfterCapture] {
        let run = Run::new();
        run.kill_at(0, phase);
        fs::write(run.ws.join("over.txt"), b"mine\n").unwrap();
        let store = open(&run.sidecar, &run.ws, Fs::without_sync());
        let plan = store.plan_restore(KILLED).unwrap();
        let c: Vec<_> = plan
            .plan
            .conflicts
            .iter()
            .map(|c| (c.path.as_str(), c.reason))
            .collect();
        assert_eq!(c, vec![("over.txt", ConflictReason::ManualEdit)], "{phase:?}");
        let f = plan.plan.files.iter().find(|f| f.path == "over.txt").unwrap();
        assert_eq!(f.action, FileAction::Skip, "{phase:?}");
        assert_eq!(fs::read(run.ws.join("over.txt")).unwrap(), b"mine\n");
    }
}

/// A temp file whose process still runs is someone's write in progress (another session on the
/// same workspace): recovery leaves it, and fsck names it.
#[test]
fn a_temp_file_of_a_live_process_is_left_and_reported() {
    let run = Run::new();
    run.kill_at(0, Phase::AfterCapture);
    let live = run
        .ws
        .join(tool_temp_name("over.txt".as_ref(), std::process::id(), 99));
    fs::write(&live, b"in progress").unwrap();
    // A write of the killed turn, interrupted: its process is gone.
    let dead = run.ws.join(tool_temp_name("over.txt".as_ref(), run.killed, 0));
    fs::write(&dead, b"half").unwrap();
    // The killed writer's number, but a temp number its call did not journal: the user's.
    let other_n = run.ws.join(tool_temp_name("over.txt".as_ref(), run.killed, 7));
    fs::write(&other_n, b"mine too").unwrap();
    // Files of the user's that merely look like temp files: another process that has ended (not
    // the killed writer), and a FIFO and a symlink carrying the killed writer's number.
    let users = run.ws.join(tool_temp_name("over.txt".as_ref(), dead_pid(), 42));
    fs::write(&users, b"my only copy of the notes").unwrap();
    let fifo = run.ws.join(tool_temp_name("over.txt".as_ref(), run.killed, 1));
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let link = run.ws.join(tool_temp_name("over.txt".as_ref(), run.killed, 8));
    std::os::unix::fs::symlink("gone.txt", &link).unwrap();
    // Only the killed turn's paths are looked at: the kill's own leftovers go at the next open.
    let mut store = open(&run.sidecar, &run.ws, Fs::without_sync());
    assert!(!dead.exists(), "the dead process's temp file stayed");
    assert!(live.exists(), "a live process's temp file was removed");
    assert_eq!(fs::read(&users).unwrap(), b"my only copy of the notes");
    assert_eq!(fs::read(&other_n).unwrap(), b"mine too");
    fs::remove_file(&other_n).unwrap();
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    fs::remove_file(&fifo).unwrap();
    fs::remove_file(&link).unwrap();
    fs::remove_file(&users).unwrap();
    let report = store.fsck();
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.path == live.file_name().unwrap().to_string_lossy() && p.problem.contains("temp file")),
        "{:#?}",
        report.problems
    );
    // A restore of the turn neither touches nor trips over it.
    let plan = store.plan_restore(KILLED).unwrap();
    assert!(plan.plan.conflicts.is_empty(), "{:#?}", plan.plan.conflicts);
    store
        .commit(
            &plan,
            CommitOptions {
                confirm: true,
                on_conflict: OnConflict::Refuse,
            },
        )
        .unwrap();
    assert_eq!(fs::read(&live).unwrap(), b"in progress");
}
