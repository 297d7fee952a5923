//! Retrace's side alone, in a loop, for a profiler (`perf record -g`): turns of one ~10 KB edit and
//! rewinds of 100 files on a generated tree, with fsync off by default so that the profile shows
//! the store's own work rather than the disk (`--fsync` turns it on).
//!
//! `cargo run --release -p retrace-bench --example profile_ours -- [turns|rewind] [--fsync]`

use std::time::Instant;

use anyhow::{Context, Result};
use retrace_bench::measure::median;
use retrace_bench::ours::{Ours, Rewind};
use retrace_bench::report::ms;
use retrace_bench::tree::{apply, plan_tree, ten_kb_candidates, text, write_tree, Edit, Op, Rng};
use retrace_checkpoint::Limits;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let what = args.first().map_or("turns", String::as_str).to_string();
    let fsync = args.iter().any(|a| a == "--fsync");
    let tmp = tempfile::tempdir()?;
    let root = std::fs::canonicalize(tmp.path())?;
    let ws = root.join("ws");
    let specs = plan_tree(1_000, 7);
    let mut man = write_tree(&specs, &[&ws])?;
    let open = |name: &str| {
        let dir = root.join(name);
        if fsync {
            Ours::open(&dir, &ws, Limits::default())
        } else {
            Ours::open_unsynced(&dir, &ws, Limits::default())
        }
    };
    let mut ours = open("s.ckpt")?;
    let candidates = ten_kb_candidates(&specs);
    let mut rng = Rng::new(3);
    let mut times = Vec::new();
    if what == "turns" {
        for i in 0..2_000 {
            let rel = candidates[rng.below(candidates.len())].clone();
            let len = rng.range(9_000, 11_000);
            let e = Edit::write(rel, text(&mut rng, len));
            let t = Instant::now();
            ours.turn(&format!("turn {i}"), &[e], &mut man)?;
            times.push(t.elapsed());
        }
    } else {
        for rep in 0..40 {
            let mut keys: Vec<String> = man.keys().cloned().collect();
            let mut groups: Vec<Vec<Edit>> = vec![Vec::new(); 4];
            for i in 0..100 {
                let j = i + rng.below(keys.len() - i);
                keys.swap(i, j);
                let len = rng.range(500, 20_000);
                groups[i % 4].push(Edit {
                    rel: keys[i].clone(),
                    op: Op::Write(text(&mut rng, len)),
                });
            }
            let mut first = None;
            for g in &groups {
                first.get_or_insert(ours.turn(&format!("rep {rep}"), g, &mut man)?);
            }
            let t = Instant::now();
            let r = ours.rewind(first.context("no turn")?, false)?;
            times.push(t.elapsed());
            let Rewind::Done(o) = r else {
                anyhow::bail!("refused")
            };
            // Keep the manifest in step: the restored files are back to their earlier bytes.
            for p in o.files_written {
                let bytes = std::fs::read(ws.join(&p))?;
                apply(&ws, &Edit::write(p, bytes), &mut man)?;
            }
        }
    }
    println!(
        "{what}: {} samples, median {} (fsync {})",
        times.len(),
        ms(median(&times)),
        if fsync { "on" } else { "off" }
    );
    Ok(())
}
