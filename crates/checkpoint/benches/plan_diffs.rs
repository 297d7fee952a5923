//! What a restore plan's diffs cost: `plan_restore` of a turn that edited 1000 text files of
//! about 16 KiB (400 lines each), with the plan's diffs (the default `DiffBudget`) and without
//! them (a budget of no time: no file is diffed, each is `diff_deferred`), in two shapes:
//!
//! - `edited`: the turn changed 4 lines of each file (a diff of a few hunks per file);
//! - `rewritten`: the turn changed every line of each file (each diff is the whole file twice,
//!   cut at 64 KiB; the plan's 1 MiB of text runs out after a few dozen files, and the rest keep
//!   only their counts).
//!
//! Planning changes nothing, so one setup (untimed: a workspace, a sidecar without fsyncs, the
//! turn) serves every iteration; the files are in the page cache, as after the turn that wrote
//! them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use retrace_checkpoint::{BeginTurn, Change, CheckpointStore, DiffBudget, StoreOptions};
use retrace_fsutil::Fs;
use retrace_protocol::ChangeKind;
use tempfile::TempDir;

const FILES: usize = 1000;
/// A shape of the turn's edits: its name, and which lines of each file it changed.
type Shape = (&'static str, fn(usize) -> bool);
const LINES: usize = 400;

/// File `i`'s text: 400 lines of about 40 bytes; line `j` is changed (`tag`) when `changed(j)`.
fn text(i: usize, tag: &str, changed: impl Fn(usize) -> bool) -> String {
    (0..LINES)
        .map(|j| {
            let t = if changed(j) { tag } else { "orig" };
            format!("    let value_{j:03} = compute({i}, {j}); // {t}\n")
        })
        .collect()
}

/// A store whose turn 0 changed every file (`changed` lines of each); the temp dir and the store.
fn setup(changed: impl Fn(usize) -> bool + Copy) -> (TempDir, CheckpointStore) {
    let tmp = TempDir::new().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    let names: Vec<String> = (0..FILES).map(|i| format!("src/file{i:04}.rs")).collect();
    for (i, n) in names.iter().enumerate() {
        std::fs::write(ws.join(n), text(i, "orig", |_| false)).unwrap();
    }
    let store = open(tmp.path(), &ws, DiffBudget::default());
    let mut store = store;
    store.begin_turn(BeginTurn::default()).unwrap();
    let changes: Vec<Change> = names.iter().map(|p| Change::new(p, ChangeKind::Modify)).collect();
    store.capture_before(&changes, Some("edit")).unwrap();
    for (i, n) in names.iter().enumerate() {
        std::fs::write(ws.join(n), text(i, "edited by the turn", changed)).unwrap();
    }
    let paths: Vec<PathBuf> = names.iter().map(PathBuf::from).collect();
    store.capture_after(&paths).unwrap();
    store.end_turn();
    (tmp, store)
}

fn open(tmp: &Path, ws: &Path, plan_diffs: DiffBudget) -> CheckpointStore {
    let opts = StoreOptions {
        fs: Fs::without_sync(),
        plan_diffs,
        ..StoreOptions::default()
    };
    CheckpointStore::open(&tmp.join("s.ckpt"), ws, opts).unwrap()
}

fn plan_diffs(c: &mut Criterion) {
    let shapes: [Shape; 2] = [("edited", |j| j % 100 == 7), ("rewritten", |_| true)];
    for (shape, changed) in shapes {
        let (tmp, store) = setup(changed);
        let ws = tmp.path().join("ws");
        let without = open(
            tmp.path(),
            &ws,
            DiffBudget {
                time: Duration::ZERO,
                ..DiffBudget::default()
            },
        );
        let mut g = c.benchmark_group(format!("plan_{FILES}_{shape}"));
        g.sample_size(20);
        g.bench_function("diffs", |b| {
            b.iter(|| black_box(store.plan_restore(0).unwrap()));
        });
        g.bench_function("no_diffs", |b| {
            b.iter(|| black_box(without.plan_restore(0).unwrap()));
        });
        g.finish();
        // What the plan carries, once (for BENCHMARKS.md).
        let plan = store.plan_restore(0).unwrap();
        let files = &plan.plan.files;
        let text: usize = files.iter().map(|f| f.diff.text.len()).sum();
        let cut = files.iter().filter(|f| f.diff.truncated).count();
        let deferred = files.iter().filter(|f| f.diff.deferred).count();
        let json = serde_json::to_vec(&plan.plan).unwrap().len();
        eprintln!(
            "{shape}: {text} bytes of diff text, {cut} cut, {deferred} deferred, plan JSON {json} bytes"
        );
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
    targets = plan_diffs
}
criterion_main!(benches);
