//! Shared by the restore fault tests (`restore_faults.rs`, `restore_kill.rs`, `restore_disk_full.rs`):
//! the scenarios, workspace snapshots, and the invariants every interrupted restore, undo or
//! compensation must satisfy once recovery ran (SPEC §5.4, TESTING.md "Fault tests").

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use retrace_checkpoint::tx::{Manifest, TxKind, TxState};
use retrace_checkpoint::{
    BeginTurn, Change, CheckpointError, CheckpointStore, Clock, CommitOptions, StoreOptions,
};
use retrace_fsutil::{FaultInjector, Fs};
use retrace_protocol::{ChangeKind, OnConflict, Severity};
use retrace_testkit::Scratch;

/// A file's bytes and permission bits.
pub type FileState = (Vec<u8>, u32);
/// Every regular file of a workspace (or sidecar), by relative path.
pub type Snap = BTreeMap<String, FileState>;

pub fn fixed_clock() -> Clock {
    Arc::new(|| time::OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap())
}

pub fn opts(fs: Fs) -> StoreOptions {
    StoreOptions {
        session_id: Some("restore-faults".into()),
        fs,
        clock: fixed_clock(),
        ..StoreOptions::default()
    }
}

/// Opens with a healthy layer without fsync (this runs recovery).
pub fn open_healthy(sidecar: &Path, root: &Path) -> CheckpointStore {
    CheckpointStore::open(sidecar, root, opts(Fs::without_sync()))
        .unwrap_or_else(|e| panic!("reopening (recovery) failed: {e}"))
}

pub fn confirm(on_conflict: OnConflict) -> CommitOptions {
    CommitOptions {
        confirm: true,
        on_conflict,
    }
}

/// Every regular file under `dir` with its bytes and mode.
pub fn snapshot(dir: &Path) -> Snap {
    fn walk(root: &Path, dir: &Path, out: &mut Snap) {
        let Ok(rd) = fs::read_dir(dir) else { return };
        for e in rd {
            let e = e.unwrap();
            let p = e.path();
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                walk(root, &p, out);
            } else {
                let meta = fs::symlink_metadata(&p).unwrap();
                let bytes = if ft.is_file() {
                    fs::read(&p).unwrap()
                } else {
                    Vec::new()
                };
                let k = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(k, (bytes, meta.permissions().mode() & 0o7777));
            }
        }
    }
    let mut out = Snap::new();
    walk(dir, dir, &mut out);
    out
}

/// A readable account of how `got` differs from `want`.
pub fn diff(got: &Snap, want: &Snap) -> String {
    let mut out = Vec::new();
    let keys: BTreeSet<&String> = got.keys().chain(want.keys()).collect();
    for k in keys {
        match (got.get(k), want.get(k)) {
            (Some(_), None) => out.push(format!("  unexpected file `{k}`")),
            (None, Some(_)) => out.push(format!("  missing `{k}`")),
            (Some((gb, gm)), Some((wb, wm))) => {
                if gb != wb {
                    out.push(format!(
                        "  `{k}`: bytes {:?} (want {:?})",
                        String::from_utf8_lossy(&gb[..gb.len().min(40)]),
                        String::from_utf8_lossy(&wb[..wb.len().min(40)])
                    ));
                }
                if gm != wm {
                    out.push(format!("  `{k}`: mode {gm:o} (want {wm:o})"));
                }
            }
            (None, None) => {}
        }
    }
    out.join("\n")
}

/// Names in the workspace left by a transaction: temp files, parked deletes, kept copies.
pub fn transaction_leftovers(root: &Path) -> Vec<String> {
    snapshot(root)
        .into_keys()
        .filter(|k| {
            let name = k.rsplit('/').next().unwrap_or(k);
            name.contains(".retrace-")
        })
        .collect()
}

/// Temp files anywhere in the sidecar (`.*.tmp`).
pub fn sidecar_temps(sidecar: &Path) -> Vec<String> {
    snapshot(sidecar)
        .into_keys()
        .filter(|k| {
            let name = k.rsplit('/').next().unwrap_or(k);
            name.starts_with('.') && name.ends_with(".tmp")
        })
        .collect()
}

/// Blobs that share their inode with another name (a forward image kept by hard link whose
/// transaction has not finished with it), as `path (links)`.
pub fn shared_blobs(sidecar: &Path) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    ["forward", "blobs"]
        .iter()
        .flat_map(|d| {
            let dir = sidecar.join(d);
            snapshot(&dir).into_keys().filter_map(move |k| {
                let links = fs::symlink_metadata(dir.join(&k)).ok()?.nlink();
                (links > 1).then(|| format!("{d}/{k} ({links})"))
            })
        })
        .collect()
}

/// Manifests as they are on disk now (no recovery), by id.
pub fn manifests_on_disk(sidecar: &Path) -> BTreeMap<String, Manifest> {
    let mut out = BTreeMap::new();
    let Ok(rd) = fs::read_dir(sidecar.join("transactions")) else {
        return out;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || !name.ends_with(".json") {
            continue;
        }
        let m: Manifest = serde_json::from_slice(&fs::read(e.path()).unwrap())
            .unwrap_or_else(|err| panic!("manifest `{name}` is not valid after a crash: {err}"));
        out.insert(m.id.clone(), m);
    }
    out
}

/// Where an interrupted run stopped, judged from the manifest of its transaction on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// No manifest yet.
    NoManifest,
    /// `prepared`: blobs and temp files being written.
    Prepared,
    /// `committing`: renames (or compensation) under way.
    Committing,
    /// `committed` (state.json, `.bak` clean-up, or an undo's original not yet marked).
    Committed,
    /// `aborted` or `undone`: the run had finished its work.
    Terminal,
}

/// The phase of the transaction of `kind` that is not among `known`.
pub fn phase_on_disk(sidecar: &Path, known: &BTreeSet<String>, kind: TxKind) -> Phase {
    let ms = manifests_on_disk(sidecar);
    let new: Vec<&Manifest> = ms
        .values()
        .filter(|m| !known.contains(&m.id) && m.kind == kind)
        .collect();
    assert!(new.len() <= 1, "one run wrote {} manifests", new.len());
    match new.first().map(|m| m.state) {
        None => Phase::NoManifest,
        Some(TxState::Prepared) => Phase::Prepared,
        Some(TxState::Committing) => Phase::Committing,
        Some(TxState::Committed) => Phase::Committed,
        Some(TxState::Aborted | TxState::Undone) => Phase::Terminal,
    }
}

/// What a run may leave after recovery: the workspace before it, or after it.
pub struct Expect<'a> {
    /// The workspace if the transaction did not happen (its forward images).
    pub before: &'a Snap,
    /// The workspace if it happened (its restore images).
    pub after: &'a Snap,
    /// The kind of the run's transaction.
    pub kind: TxKind,
    /// Manifest ids that existed before the run.
    pub known: &'a BTreeSet<String>,
}

/// The invariants after recovery. Returns whether the run's transaction happened.
pub fn check_recovered(store: &CheckpointStore, root: &Path, sidecar: &Path, e: &Expect, ctx: &str) -> bool {
    let leftovers = transaction_leftovers(root);
    assert!(
        leftovers.is_empty(),
        "{ctx}: transaction files left in the workspace after recovery: {leftovers:?}"
    );
    for m in store.transactions() {
        if m.state.is_terminal() {
            continue;
        }
        assert!(
            m.state == TxState::Committing && m.targets.iter().any(|t| t.recovery_copy.is_some()),
            "{ctx}: manifest {} is {:?} after recovery (only a committing one with a recovery copy may stay open)",
            m.id,
            m.state
        );
    }
    let new: Vec<&Manifest> = store
        .transactions()
        .filter(|m| !e.known.contains(&m.id))
        .collect();
    assert!(new.len() <= 1, "{ctx}: one run left {} manifests", new.len());
    assert!(
        new.iter().all(|m| m.kind == e.kind),
        "{ctx}: unexpected manifest kind {:?}",
        new.iter().map(|m| m.kind).collect::<Vec<_>>()
    );
    let happened = new.iter().any(|m| m.state.happened());
    let ws = snapshot(root);
    let want = if happened { e.after } else { e.before };
    assert!(
        ws == *want,
        "{ctx}: after recovery the workspace is neither all-forward nor all-restored (manifest {}):\n{}",
        if happened {
            "happened: expected every target restored"
        } else {
            "did not happen: expected every target forward"
        },
        diff(&ws, want)
    );
    let temps = sidecar_temps(sidecar);
    assert!(
        temps.is_empty(),
        "{ctx}: sidecar temp files after recovery: {temps:?}"
    );
    let shared = shared_blobs(sidecar);
    assert!(
        shared.is_empty(),
        "{ctx}: blobs that are still another file's inode after recovery: {shared:?}"
    );
    let errors: Vec<_> = store
        .fsck()
        .problems
        .into_iter()
        .filter(|p| p.severity == Severity::Error)
        .collect();
    assert!(
        errors.is_empty(),
        "{ctx}: fsck errors after recovery: {errors:#?}"
    );
    happened
}

/// Reopens again: recovery a second time must change nothing (no durable step at all, the same
/// workspace, sidecar and manifests).
pub fn check_idempotent(store: &CheckpointStore, root: &Path, sidecar: &Path, ctx: &str) {
    let ws = snapshot(root);
    let sc = snapshot(sidecar);
    let manifests: Vec<Manifest> = store.transactions().cloned().collect();
    let inj = FaultInjector::crash_at(0);
    let again = CheckpointStore::open(sidecar, root, opts(Fs::without_sync().with_faults(inj.clone())))
        .unwrap_or_else(|e| panic!("{ctx}: second recovery failed: {e}"));
    assert_eq!(
        inj.steps(),
        0,
        "{ctx}: second recovery wrote again: {:?}",
        inj.trail()
    );
    let ws2 = snapshot(root);
    assert!(
        ws2 == ws,
        "{ctx}: second recovery changed the workspace:\n{}",
        diff(&ws2, &ws)
    );
    let sc2 = snapshot(sidecar);
    assert!(
        sc2 == sc,
        "{ctx}: second recovery changed the sidecar:\n{}",
        diff(&sc2, &sc)
    );
    let manifests2: Vec<Manifest> = again.transactions().cloned().collect();
    assert_eq!(
        manifests2, manifests,
        "{ctx}: second recovery changed the manifests"
    );
}

/// A restore to `turn` on a healthy store; returns its outcome.
pub fn restore_now(
    store: &mut CheckpointStore,
    turn: u64,
    on_conflict: OnConflict,
) -> retrace_protocol::CodeOutcome {
    let plan = store.plan_restore(turn).unwrap();
    store.commit(&plan, confirm(on_conflict)).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Scenarios.

/// A workspace after a few turns of agent edits, with the two states a restore moves between.
pub struct Scenario {
    pub scratch: Scratch,
    /// The canonical workspace root.
    pub root: PathBuf,
    /// The first turn (what the tests restore to).
    pub turn: u64,
    /// The workspace when that turn started: the restore images.
    pub restore: Snap,
    /// The workspace now: the forward images.
    pub forward: Snap,
}

impl Scenario {
    pub fn sidecar(&self) -> &Path {
        &self.scratch.sidecar
    }
}

/// A scratch workspace and sidecar. The fault loops build hundreds of them, so they go to a RAM file
/// system when there is one (`$RETRACE_FAULT_TMPDIR`, else `/dev/shm`): the properties under test
/// are the order of renames and writes, not the speed of a disk.
pub fn scratch() -> Scratch {
    let base = std::env::var_os("RETRACE_FAULT_TMPDIR")
        .map(PathBuf::from)
        .or_else(|| Some(PathBuf::from("/dev/shm")).filter(|p| writable_dir(p)));
    match base {
        Some(base) => scratch_in(&base),
        None => Scratch::new().unwrap(),
    }
}

/// A scratch workspace and sidecar under `base`.
pub fn scratch_in(base: &Path) -> Scratch {
    let tmp = tempfile::Builder::new()
        .prefix("retrace-faults-")
        .tempdir_in(base)
        .unwrap();
    let workspace = tmp.path().join("ws");
    fs::create_dir(&workspace).unwrap();
    let sidecar = tmp.path().join("data").join("s.ckpt");
    Scratch {
        tmp,
        workspace,
        sidecar,
    }
}

fn writable_dir(p: &Path) -> bool {
    p.is_dir() && tempfile::tempdir_in(p).is_ok()
}

fn begin(store: &mut CheckpointStore, prompt: &str) -> u64 {
    store
        .begin_turn(BeginTurn {
            prompt: prompt.into(),
            ..BeginTurn::default()
        })
        .unwrap()
}

fn set_mode(p: &Path, mode: u32) {
    fs::set_permissions(p, fs::Permissions::from_mode(mode)).unwrap();
}

/// One tool call through the seam: capture, edit, record the after-images.
pub fn tool(
    store: &mut CheckpointStore,
    root: &Path,
    changes: &[(&str, ChangeKind)],
    edit: impl FnOnce(&Path),
) {
    let seam: Vec<Change> = changes.iter().map(|(p, k)| Change::new(*p, *k)).collect();
    store.capture_before(&seam, Some("tool")).unwrap();
    edit(root);
    let paths: Vec<PathBuf> = changes.iter().map(|(p, _)| PathBuf::from(p)).collect();
    store.capture_after(&paths).unwrap();
}

fn write(root: &Path, p: &str, bytes: &[u8]) {
    let abs = root.join(p);
    fs::create_dir_all(abs.parent().unwrap()).unwrap();
    fs::write(abs, bytes).unwrap();
}

/// The initial workspace of the small scenario: `(path, bytes, mode)`.
pub const INITIAL: &[(&str, &[u8], u32)] = &[
    ("keep.txt", b"never touched\n", 0o644),
    ("a.txt", b"a0\r\nsecond line\r\n", 0o644),
    ("bin.dat", b"\x00\x01\x02\xff\xfe binary\x00", 0o600),
    ("exec.sh", b"#!/bin/sh\necho hi\n", 0o755),
    ("gone.txt", b"delete me\n", 0o644),
    ("src.bin", b"\xff\xfe\x00moved bytes", 0o640),
    ("nested/deep/c.txt", b"c0\n", 0o644),
    ("olddir/y.txt", b"y0\n", 0o644),
    ("late.txt", b"late0\n", 0o644),
];

/// Bytes an outside editor writes in the compensation test.
pub const USER_LATE: &[u8] = b"the user's own late.txt\n";

/// The small scenario: three turns with modify, create, delete, a move, a mode change, a file whose
/// directory disappeared, and (last of all) the delete of `late.txt`. Restoring the first turn has
/// eleven targets; `late.txt` is the last one published.
pub fn small_scenario() -> Scenario {
    small_scenario_in(scratch())
}

/// [`small_scenario`] in a given scratch directory.
pub fn small_scenario_in(scratch: Scratch) -> Scenario {
    for (p, bytes, mode) in INITIAL {
        scratch.write(p, bytes).unwrap();
        set_mode(&scratch.workspace.join(p), *mode);
    }
    let root = fs::canonicalize(&scratch.workspace).unwrap();
    let restore = snapshot(&root);
    let mut store = open_healthy(&scratch.sidecar, &root);
    let turn = begin(&mut store, "first: edit and create");
    tool(&mut store, &root, &[("a.txt", ChangeKind::Modify)], |r| {
        write(r, "a.txt", b"a1\n")
    });
    tool(&mut store, &root, &[("new.txt", ChangeKind::Create)], |r| {
        write(r, "new.txt", b"created\n")
    });
    tool(&mut store, &root, &[("bin.dat", ChangeKind::Modify)], |r| {
        write(r, "bin.dat", b"\x00\x00replaced\xff")
    });
    store.end_turn();
    begin(&mut store, "second: mode, delete, create in a new dir");
    tool(&mut store, &root, &[("exec.sh", ChangeKind::Modify)], |r| {
        set_mode(&r.join("exec.sh"), 0o644)
    });
    tool(&mut store, &root, &[("gone.txt", ChangeKind::Delete)], |r| {
        fs::remove_file(r.join("gone.txt")).unwrap()
    });
    tool(&mut store, &root, &[("newdir/x.txt", ChangeKind::Create)], |r| {
        write(r, "newdir/x.txt", b"x1\n")
    });
    tool(&mut store, &root, &[("olddir/y.txt", ChangeKind::Delete)], |r| {
        fs::remove_file(r.join("olddir/y.txt")).unwrap()
    });
    // Not through a tool: the directory is gone, so the restore must create it again.
    fs::remove_dir(root.join("olddir")).unwrap();
    tool(&mut store, &root, &[("a.txt", ChangeKind::Modify)], |r| {
        write(r, "a.txt", b"a2\n")
    });
    store.end_turn();
    begin(&mut store, "third: move, edit, delete");
    tool(
        &mut store,
        &root,
        &[
            ("src.bin", ChangeKind::Delete),
            ("sub/dst.bin", ChangeKind::Create),
        ],
        |r| {
            fs::create_dir_all(r.join("sub")).unwrap();
            fs::rename(r.join("src.bin"), r.join("sub/dst.bin")).unwrap();
        },
    );
    tool(
        &mut store,
        &root,
        &[("nested/deep/c.txt", ChangeKind::Modify)],
        |r| {
            write(r, "nested/deep/c.txt", b"c2\n");
            set_mode(&r.join("nested/deep/c.txt"), 0o600);
        },
    );
    tool(&mut store, &root, &[("late.txt", ChangeKind::Delete)], |r| {
        fs::remove_file(r.join("late.txt")).unwrap()
    });
    store.end_turn();
    drop(store);
    let forward = snapshot(&root);
    Scenario {
        scratch,
        root,
        turn,
        restore,
        forward,
    }
}

/// Content of file `i` of the wide scenario in version `v`.
fn wide_bytes(i: usize, v: u8) -> Vec<u8> {
    let len = 512 + (i * 997) % 12_000;
    (0..len)
        .map(|j| {
            (j as u8)
                .wrapping_mul(31)
                .wrapping_add(i as u8)
                .wrapping_add(v.wrapping_mul(101))
        })
        .collect()
}

/// The wide scenario: `n` files over eight directories; one turn edits all of them through one tool
/// call (most are modified, some deleted, some only change mode) and creates `n / 8` more.
pub fn wide_scenario(n: usize) -> Scenario {
    wide_scenario_in(scratch(), n)
}

/// [`wide_scenario`] in a given scratch directory.
pub fn wide_scenario_in(scratch: Scratch, n: usize) -> Scenario {
    let root = fs::canonicalize(&scratch.workspace).unwrap();
    let path = |i: usize| format!("d{}/f{i:03}.txt", i % 8);
    for i in 0..n {
        write(&root, &path(i), &wide_bytes(i, 0));
        set_mode(&root.join(path(i)), if i % 10 == 0 { 0o755 } else { 0o644 });
    }
    let restore = snapshot(&root);
    let mut store = open_healthy(&scratch.sidecar, &root);
    let turn = begin(&mut store, "wide: edit every file");
    let created: Vec<String> = (0..n / 8).map(|j| format!("new/n{j:03}.txt")).collect();
    let mut changes: Vec<(String, ChangeKind)> = (0..n)
        .map(|i| {
            let k = if i % 7 == 3 {
                ChangeKind::Delete
            } else {
                ChangeKind::Modify
            };
            (path(i), k)
        })
        .collect();
    changes.extend(created.iter().map(|p| (p.clone(), ChangeKind::Create)));
    let borrowed: Vec<(&str, ChangeKind)> = changes.iter().map(|(p, k)| (p.as_str(), *k)).collect();
    tool(&mut store, &root, &borrowed, |r| {
        for i in 0..n {
            let p = r.join(path(i));
            if i % 7 == 3 {
                fs::remove_file(p).unwrap();
            } else if i % 10 == 0 {
                set_mode(&p, 0o644);
            } else {
                fs::write(p, wide_bytes(i, 1)).unwrap();
            }
        }
        for (j, p) in created.iter().enumerate() {
            write(r, p, &wide_bytes(j, 7));
        }
    });
    store.end_turn();
    drop(store);
    let forward = snapshot(&root);
    Scenario {
        scratch,
        root,
        turn,
        restore,
        forward,
    }
}

/// Whether `e` (or what it wraps) is a "no space left on device" error, and the path it names.
pub fn enospc_path(e: &CheckpointError) -> Option<PathBuf> {
    match e {
        CheckpointError::Io { path, source, .. } if source.raw_os_error() == Some(28) => Some(path.clone()),
        _ => None,
    }
}
