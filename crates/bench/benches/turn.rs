//! In-process timing of one turn's checkpoint with criterion (TESTING.md "Benchmarks" 1), on a
//! generated 1,000-file tree (about 10 MB): the whole comparison, with rewinds, storage and
//! correctness checks, is the `retrace-bench` binary.
//!
//! - `per_turn/retrace`: `begin_turn` + `capture_before` + the edit + `capture_after` of one ~10 KB
//!   file, the production durable `Fs` (fsync on), default retention.
//! - `per_turn/shadow_git`: the same edit + `git add -A && git commit` in a shadow repository
//!   (git's defaults).
//! - `per_turn/floor`: copying the edited file's bytes to a new file and fsyncing it.
//!
//! Temp dirs live under the system temp dir (a real disk on the machines BENCHMARKS.md describes).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::{self, File};
use std::io;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use retrace_bench::ours::Ours;
use retrace_bench::shadow::{wait_background, ShadowGit};
use retrace_bench::tree::{plan_tree, ten_kb_candidates, text, write_tree, Edit, Rng};
use retrace_checkpoint::Limits;

fn per_turn(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap();
    let (ws_ours, ws_git) = (root.join("ws-ours"), root.join("ws-git"));
    let specs = plan_tree(1_000, 7);
    let manifest = write_tree(&specs, &[&ws_ours, &ws_git]).unwrap();
    let (mut man_ours, mut man_git) = (manifest.clone(), manifest);
    let candidates = ten_kb_candidates(&specs);
    let mut rng = Rng::new(11);
    let mut edit = move || {
        let rel = candidates[rng.below(candidates.len())].clone();
        let len = rng.range(9_000, 11_000);
        Edit::write(rel, text(&mut rng, len))
    };
    let tag = format!("criterion-{}", std::process::id());
    let mut git = ShadowGit::init(&root.join("shadow"), &ws_git, false, &tag).unwrap();
    git.checkpoint("checkpoint 0").unwrap();
    wait_background(&tag).unwrap();
    let mut ours = Ours::open(&root.join("s.ckpt"), &ws_ours, Limits::default()).unwrap();

    let mut g = c.benchmark_group("per_turn");
    g.sample_size(20).measurement_time(Duration::from_secs(10));
    g.bench_function("retrace", |b| {
        b.iter_batched(
            &mut edit,
            |e| ours.turn("turn", &[e], &mut man_ours).unwrap(),
            criterion::BatchSize::PerIteration,
        )
    });
    g.bench_function("shadow_git", |b| {
        b.iter_batched(
            &mut edit,
            |e| {
                retrace_bench::tree::apply(&ws_git, &e, &mut man_git).unwrap();
                git.checkpoint("turn").unwrap();
            },
            criterion::BatchSize::PerIteration,
        )
    });
    let floor = root.join("floor");
    fs::create_dir_all(&floor).unwrap();
    let mut n = 0u64;
    g.bench_function("floor", |b| {
        b.iter_batched(
            &mut edit,
            |e| {
                n += 1;
                let mut from = File::open(ws_ours.join(&e.rel)).unwrap();
                let mut to = File::create(floor.join(n.to_string())).unwrap();
                io::copy(&mut from, &mut to).unwrap();
                to.sync_all().unwrap();
            },
            criterion::BatchSize::PerIteration,
        )
    });
    g.finish();
    wait_background(&tag).unwrap();
}

criterion_group!(benches, per_turn);
criterion_main!(benches);
