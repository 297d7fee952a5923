//! Code restore against the physical floor (issue 3): `plan_restore` + `commit` of 1, 100 and 1000
//! files of 16 KiB, beside copying the same files with an fsync per file.
//!
//! - `restore_<N>/restore`: the untimed setup opens a fresh durable sidecar (`Fs::durable()`, the
//!   production setting) for a workspace of N files of 16 KiB in `src/`, and runs one turn that edits
//!   all N through the seam (`capture_before` of all N in one call, the writes — each fsynced with
//!   its directory, as the tool's atomic write would — then `capture_after`). Timed: `plan_restore`
//!   of that turn + `commit`, which writes N files back.
//! - `restore_<N>/floor`: the N original files copied into a fresh, synced directory: per file
//!   create, write 16 KiB (`io::copy`), fsync; then one fsync of the directory.
//!
//! All temp dirs are under the system temp dir (the real disk, ext4, on the machine BENCHMARKS.md
//! describes). Nothing an iteration makes (a sidecar, a floor's copies) is deleted before the group
//! of its N is over: on an ext4 without a journal, creating an inode skips every inode of its group
//! deleted in the last minute, so deleting each iteration's files slows the next iterations' file
//! creations, the more the more files an iteration deletes (BENCHMARKS.md, "Machine"). Criterion
//! runs all restore iterations, then all floor iterations; on a shared machine whose fsync latency
//! drifts, `examples/restore_ratio.rs` (the same setup, alternating the two) is the robust figure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, SamplingMode, Throughput};
use retrace_checkpoint::CheckpointStore;
use tempfile::TempDir;

#[path = "support/common.rs"]
mod common;
use common::{edit_turn, floor_copy, make_workspace, restore, sync_dir, FILE_LEN};

const COUNTS: &[usize] = &[1, 100, 1000];

/// A fresh durable sidecar in `root` with one turn that edits all N files (untimed); the sidecar's
/// temp dir, the open store and the turn to restore to.
fn edit_turn_in(root: &Path, n: usize, round: u64) -> (TempDir, CheckpointStore, u64) {
    let side = TempDir::new_in(root).unwrap();
    let (store, turn) = edit_turn(&root.join("ws"), &side.path().join("s.ckpt"), n, round);
    (side, store, turn)
}

fn restore_vs_floor(c: &mut Criterion) {
    for &n in COUNTS {
        let tmp = TempDir::new().unwrap();
        let root = tmp.path();
        make_workspace(root, n);
        let mut g = c.benchmark_group(format!("restore_{n}"));
        g.throughput(Throughput::Bytes((n * FILE_LEN) as u64));
        // One iteration per sample: an iteration of 1000 files takes a second or more.
        g.sampling_mode(SamplingMode::Flat);
        g.sample_size(if n >= 1000 { 10 } else { 20 });
        let mut round = 0u64;
        // What the iterations made (sidecars, the floors' copies) is deleted only once the group is
        // over: see the module documentation.
        let mut sidecars: Vec<(TempDir, CheckpointStore)> = Vec::new();
        let mut copies: Vec<TempDir> = Vec::new();
        g.bench_function("restore", |b| {
            b.iter_batched(
                || {
                    round += 1;
                    edit_turn_in(root, n, round)
                },
                |(side, mut store, turn)| {
                    restore(&mut store, turn, n);
                    sidecars.push((side, store));
                },
                BatchSize::PerIteration,
            );
        });
        g.bench_function("floor", |b| {
            b.iter_batched(
                || {
                    let d = TempDir::new_in(root).unwrap();
                    sync_dir(d.path());
                    sync_dir(root);
                    d
                },
                |d| {
                    black_box(floor_copy(&root.join("orig"), d.path(), n, "").unwrap());
                    copies.push(d);
                },
                BatchSize::PerIteration,
            );
        });
        g.finish();
        drop(sidecars);
        drop(copies);
    }
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
}

criterion_group! {
    name = benches;
    config = config();
    targets = restore_vs_floor
}
criterion_main!(benches);
