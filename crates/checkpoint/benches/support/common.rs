//! What the checkpoint benches and their interleaved examples share (each includes this file with
//! `#[path]`): test bytes, synced writes, a fresh durable sidecar with a turn begun (the capture
//! measurements), the restore measurements' workspace — N files of 16 KiB in `src/`, and the same
//! bytes in `orig/` for the floor's copies, all synced — and the timed restore itself.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

use std::path::PathBuf;

use retrace_checkpoint::{BeginTurn, Change, CheckpointStore, CommitOptions, StoreOptions};
use retrace_fsutil::Fs;
use retrace_protocol::{ChangeKind, OnConflict};
use tempfile::TempDir;

pub const FILE_LEN: usize = 16 << 10;

/// Deterministic, incompressible-looking bytes (xorshift); distinct seeds give distinct bytes.
pub fn content(len: usize, seed: u64) -> Vec<u8> {
    let mut x = (seed << 1) | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(len);
    out
}

pub fn sync_dir(p: &Path) {
    File::open(p).unwrap().sync_all().unwrap();
}

pub fn write_synced(p: &Path, bytes: &[u8]) {
    let mut f = File::create(p).unwrap();
    f.write_all(bytes).unwrap();
    f.sync_all().unwrap();
}

/// The workspace paths of the N files.
pub fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("src/file{i:04}.rs")).collect()
}

/// `root/ws/src/` (the workspace, N original files) and `root/orig/` (the same bytes, the floor's
/// source), all synced.
pub fn make_workspace(root: &Path, n: usize) {
    let ws = root.join("ws");
    fs::create_dir_all(ws.join("src")).unwrap();
    fs::create_dir_all(root.join("orig")).unwrap();
    for (i, name) in names(n).iter().enumerate() {
        let bytes = content(FILE_LEN, i as u64 + 1);
        write_synced(&ws.join(name), &bytes);
        write_synced(&root.join("orig").join(format!("file{i:04}.rs")), &bytes);
    }
    sync_dir(&ws.join("src"));
    sync_dir(&root.join("orig"));
    sync_dir(&ws);
    sync_dir(root);
}

/// A fresh durable sidecar (`Fs::durable()`, the production setting) for workspace `ws`, with a
/// turn begun: the untimed setup of one capture.
pub fn store_with_turn(ws: &Path) -> (TempDir, CheckpointStore) {
    let side = TempDir::new().unwrap();
    let opts = StoreOptions {
        session_id: Some("bench".into()),
        fs: Fs::durable(),
        ..StoreOptions::default()
    };
    let mut store = CheckpointStore::open(&side.path().join("s.ckpt"), ws, opts).unwrap();
    store
        .begin_turn(BeginTurn {
            prompt: "edit big.bin".into(),
            ..BeginTurn::default()
        })
        .unwrap();
    (side, store)
}

/// Opens a fresh durable sidecar at `sidecar` for workspace `ws` and runs one turn that edits all N
/// files through the seam (`capture_before` of all N in one call, the writes — each fsynced, then
/// their directory, as the tool's atomic write would — then `capture_after`): the untimed setup of
/// one restore. Returns the open store and the turn to restore to.
pub fn edit_turn(ws: &Path, sidecar: &Path, n: usize, round: u64) -> (CheckpointStore, u64) {
    let opts = StoreOptions {
        session_id: Some("bench".into()),
        fs: Fs::durable(),
        ..StoreOptions::default()
    };
    let mut store = CheckpointStore::open(sidecar, ws, opts).unwrap();
    let turn = store
        .begin_turn(BeginTurn {
            prompt: "rewrite every file".into(),
            ..BeginTurn::default()
        })
        .unwrap();
    let names = names(n);
    let changes: Vec<Change> = names.iter().map(|p| Change::new(p, ChangeKind::Modify)).collect();
    let report = store.capture_before(&changes, Some("edit")).unwrap();
    assert_eq!(report.captured.len(), n);
    for (i, name) in names.iter().enumerate() {
        write_synced(
            &ws.join(name),
            &content(FILE_LEN, 1_000_000 * (round + 1) + i as u64),
        );
    }
    sync_dir(&ws.join("src"));
    let paths: Vec<PathBuf> = names.iter().map(PathBuf::from).collect();
    store.capture_after(&paths).unwrap();
    store.end_turn();
    (store, turn)
}

/// The restore's floor: the N original files of `orig` (`fileNNNN.rs`) copied into new files in
/// `dst` named `<prefix>fileNNNN.rs`, each fsynced, then `dst` fsynced once. Returns the bytes copied.
pub fn floor_copy(orig: &Path, dst: &Path, n: usize, prefix: &str) -> std::io::Result<u64> {
    let mut total = 0;
    for i in 0..n {
        let name = format!("file{i:04}.rs");
        let mut from = File::open(orig.join(&name))?;
        let mut to = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dst.join(format!("{prefix}{name}")))?;
        total += std::io::copy(&mut from, &mut to)?;
        to.sync_all()?;
    }
    File::open(dst)?.sync_all()?;
    Ok(total)
}

/// The median of some measurements.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// `plan_restore` + `commit` of `turn` (the timed part of a restore); asserts N files were written.
pub fn restore(store: &mut CheckpointStore, turn: u64, n: usize) {
    let plan = store.plan_restore(turn).unwrap();
    let out = store
        .commit(
            &plan,
            CommitOptions {
                confirm: true,
                on_conflict: OnConflict::Refuse,
            },
        )
        .unwrap();
    assert_eq!(out.files_written.len(), n);
}
