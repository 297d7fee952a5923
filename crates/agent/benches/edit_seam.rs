//! The price of the capture seam on one edit (TESTING.md "Benchmarks"; target: with ≤ 3× without).
//!
//! An `edit_file` on a 64 KiB text file through the whole tool path, on a durable workspace
//! (`Workspace::new`, so `Fs::durable()`: temp file, fsync, rename, directory fsync):
//!
//! - `without`: `EditFile::preview`, then `EditFile::run`.
//! - `with`: the same, wrapped as `crates/control/src/seam.rs` wraps it: after the preview,
//!   `CheckpointStore::capture_before` of the previewed change (a first touch: every iteration runs
//!   in a new turn, begun outside the timed region), with the intent the preview carries, and
//!   after the run `capture_after_known` of the previewed path (the intent, since the edit
//!   succeeded). The store is durable too (`StoreOptions::default()`, default retention).
//!
//! Each iteration swaps one marker for another, so every edit changes the file and the next one
//! finds its `old_string`. Untimed, before each timed edit, one directory fsync commits whatever
//! metadata the previous iteration or the turn's setup left in the journal, so no timed fsync pays
//! for work outside its own iteration. Temp dirs are under the system temp dir (the real disk).
//!
//! `paired` then measures both paths alternately, pair by pair, and prints the medians, the median
//! of the per-pair ratios and where the seamed path spends its time: the fair ratio on a machine
//! whose fsync latency drifts (see [`paired`]).
//!
//! Run: `cargo bench -p retrace-agent --bench edit_seam`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::File;
use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use retrace_checkpoint::{BeginTurn, Change, CheckpointStore, StoreOptions};
use retrace_tools::{DynTool, EditFile, Preview, RunContext, Workspace};
use serde_json::{json, Value};
use tempfile::TempDir;

const SIZE: usize = 64 << 10;
const FILE: &str = "big.txt";
const MARKS: [&str; 2] = ["@@MARK_A@@", "@@MARK_B@@"];

/// 64 KiB of source-like text with one marker in the middle.
fn text() -> String {
    let mut out = String::with_capacity(SIZE);
    let mut n = 0u32;
    while out.len() < SIZE {
        if n == 800 {
            out.push_str(MARKS[0]);
            out.push('\n');
        }
        out.push_str(&format!(
            "    let value_{n:05} = compute({n}, \"lorem ipsum\");\n"
        ));
        n += 1;
    }
    out.truncate(SIZE - 1);
    out.push('\n');
    assert_eq!(out.matches(MARKS[0]).count(), 1);
    out
}

fn sync_dir(dir: &Path) {
    File::open(dir).unwrap().sync_all().unwrap();
}

/// A durable workspace holding the file, written and synced.
fn workspace() -> (TempDir, Workspace) {
    let tmp = TempDir::new().unwrap();
    let root = tmp.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    let mut f = File::create(root.join(FILE)).unwrap();
    f.write_all(text().as_bytes()).unwrap();
    f.sync_all().unwrap();
    sync_dir(&root);
    let ws = Workspace::new(&root).unwrap();
    (tmp, ws)
}

/// The `edit_file` arguments of iteration `i`: swap the marker present now for the other one.
fn args(i: u64) -> Value {
    let (old, new) = if i.is_multiple_of(2) {
        (MARKS[0], MARKS[1])
    } else {
        (MARKS[1], MARKS[0])
    };
    json!({"path": FILE, "old_string": old, "new_string": new})
}

/// The tool path without the seam.
fn edit(ws: &Workspace, args: &Value, ctx: &RunContext<'_>) {
    let preview = EditFile.preview(ws, args).unwrap();
    EditFile.run(ws, args, &preview, ctx).unwrap();
}

/// The tool path with the seam, as `StoreSeam::before`/`after` do it. Returns the time of each
/// phase: preview, capture_before, run, capture_after.
fn edit_captured(
    ws: &Workspace,
    store: &mut CheckpointStore,
    args: &Value,
    ctx: &RunContext<'_>,
) -> [Duration; 4] {
    let t0 = Instant::now();
    let preview: Preview = EditFile.preview(ws, args).unwrap();
    let t1 = Instant::now();
    // With the intent the preview carries, as the controller's seam journals it.
    let changes: Vec<Change> = preview
        .changes
        .iter()
        .map(|c| {
            let change = Change::new(c.abs.clone(), c.kind);
            match &c.after {
                Some(a) => change.with_intent(retrace_checkpoint::model::Image {
                    existed: a.exists,
                    sha256: a.sha256.clone(),
                    mode: a.mode,
                }),
                None => change,
            }
        })
        .collect();
    let report = store.capture_before(&changes, Some("edit_file")).unwrap();
    assert_eq!(report.captured.len(), 1, "a first touch every iteration");
    let t2 = Instant::now();
    let result = EditFile.run(ws, args, &preview, ctx);
    let t3 = Instant::now();
    // As the seam does: a tool that succeeded left its intents, which are not read back.
    let known: Vec<(PathBuf, Option<retrace_checkpoint::model::Image>)> = changes
        .iter()
        .map(|c| (c.path.clone(), c.intent.clone().filter(|_| result.is_ok())))
        .collect();
    store.capture_after_known(&known).unwrap();
    let t4 = Instant::now();
    result.unwrap();
    [t1 - t0, t2 - t1, t3 - t2, t4 - t3]
}

fn begin(store: &mut CheckpointStore, i: u64) {
    store.end_turn();
    store
        .begin_turn(BeginTurn {
            prompt: format!("edit {i}"),
            ..BeginTurn::default()
        })
        .unwrap();
}

fn edit_seam(c: &mut Criterion) {
    let ctx = RunContext::default();
    let mut g = c.benchmark_group("edit_seam_64KiB");
    g.throughput(Throughput::Bytes(SIZE as u64));
    g.sample_size(20);

    let (_tmp, ws) = workspace();
    let mut i = 0u64;
    g.bench_function("without", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let a = args(i);
                sync_dir(ws.root());
                let t = Instant::now();
                edit(&ws, &a, &ctx);
                total += t.elapsed();
                i += 1;
            }
            total
        });
    });
    drop((_tmp, ws));

    let (tmp, ws) = workspace();
    let sidecar = tmp.path().join("s.ckpt");
    let opts = StoreOptions {
        session_id: Some("bench".into()),
        ..StoreOptions::default()
    };
    let mut store = CheckpointStore::open(&sidecar, ws.root(), opts).unwrap();
    let mut i = 0u64;
    g.bench_function("with", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let a = args(i);
                begin(&mut store, i);
                sync_dir(ws.root());
                let t = Instant::now();
                black_box(edit_captured(&ws, &mut store, &a, &ctx));
                total += t.elapsed();
                i += 1;
            }
            total
        });
    });
    g.finish();

    // What was measured did what it should: the newest turn kept the file's bytes before its edit.
    // (Nothing ran when a filter skipped this group.)
    if let Some(last) = store.list().into_iter().last() {
        assert_eq!(last.paths, [FILE]);
        assert_eq!(last.bytes, SIZE as u64);
        assert!(store.fsck().ok, "{:?}", store.fsck().problems);
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The same two paths measured in pairs, alternating which goes first, so both sides see the same
/// disk: on a shared machine the price of an fsync drifts by 10× between criterion's two runs, which
/// makes the ratio of their separate medians meaningless. Prints the medians, the median of the
/// per-pair ratios and the median of each phase of the seamed path.
fn paired(_c: &mut Criterion) {
    // Only under `cargo bench` (which passes `--bench`): not in `cargo test --benches`, `--test`
    // or `--list`.
    let argv: Vec<String> = std::env::args().collect();
    if !argv.iter().any(|a| a == "--bench") || argv.iter().any(|a| a == "--test" || a == "--list") {
        return;
    }
    let ctx = RunContext::default();
    let (_t0, plain) = workspace();
    let (tmp, seamed) = workspace();
    let opts = StoreOptions {
        session_id: Some("bench".into()),
        ..StoreOptions::default()
    };
    let mut store = CheckpointStore::open(&tmp.path().join("s.ckpt"), seamed.root(), opts).unwrap();
    let (mut without, mut with, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let mut phases: [Vec<f64>; 4] = Default::default();
    let started = Instant::now();
    let mut k = 0u64;
    while k < 400 && (k < 40 || started.elapsed() < Duration::from_secs(10)) {
        let a = args(k);
        let mut one = |seam: bool| -> f64 {
            if seam {
                begin(&mut store, k);
                sync_dir(seamed.root());
                let p = edit_captured(&seamed, &mut store, &a, &ctx);
                for (v, d) in phases.iter_mut().zip(p) {
                    v.push(ms(d));
                }
                p.iter().map(|d| ms(*d)).sum()
            } else {
                sync_dir(plain.root());
                let t = Instant::now();
                edit(&plain, &a, &ctx);
                ms(t.elapsed())
            }
        };
        let (w, p) = if k.is_multiple_of(2) {
            let p = one(false);
            (one(true), p)
        } else {
            let w = one(true);
            (w, one(false))
        };
        without.push(p);
        with.push(w);
        ratios.push(w / p);
        k += 1;
    }
    let [pv, cb, run, ca] = &mut phases;
    println!(
        "edit_seam_64KiB/paired ({k} pairs): without {:.3} ms, with {:.3} ms (medians); \
         median per-pair ratio {:.2}x (target <= 3x)",
        median(&mut without),
        median(&mut with),
        median(&mut ratios)
    );
    println!(
        "edit_seam_64KiB/paired phases of `with` (medians): preview {:.3} ms, capture_before {:.3} ms, \
         run {:.3} ms, capture_after {:.3} ms",
        median(pv),
        median(cb),
        median(run),
        median(ca)
    );
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8))
}

criterion_group! {
    name = benches;
    config = config();
    targets = edit_seam, paired
}
criterion_main!(benches);
