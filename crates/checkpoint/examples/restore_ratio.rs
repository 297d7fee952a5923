//! Code restore cost against the floor, interleaved: each round times one `plan_restore` + `commit`
//! of N files of 16 KiB and one copy of the same N files with an fsync per file, back to back, so
//! load from other processes on a shared machine falls on both alike. Complements
//! `cargo bench -p retrace-checkpoint --bench restore` (criterion runs all restore iterations, then
//! all floor iterations).
//!
//! ```text
//! cargo run --release -p retrace-checkpoint --example restore_ratio [ROUNDS]     # interleaved
//! cargo run --release -p retrace-checkpoint --example restore_ratio ROUNDS keep  # same, deleting
//!                                            # nothing until a size's rounds are over (see below)
//! # one step per process, to count its syscalls (strace -f -c -e fsync,fdatasync …):
//! target/release/examples/restore_ratio setup DIR N   # workspace + sidecar with the edit turn
//! target/release/examples/restore_ratio open DIR      # only open the sidecar (to subtract)
//! target/release/examples/restore_ratio restore DIR   # open + plan_restore + commit
//! target/release/examples/restore_ratio floor DIR     # the floor's copy
//! ```
//!
//! Setup (untimed): a workspace with N files of 16 KiB in `src/`, synced; a fresh durable sidecar;
//! one turn that edits all N through the seam (`capture_before` of all N in one call, the writes —
//! each fsynced with its directory, as the tool's atomic write would — then `capture_after`). A
//! restore to that turn then writes N files. The floor copies the original N files into a fresh,
//! synced directory: create, write 16 KiB, fsync, per file, and one fsync of the directory at the end.
//! A second floor does the same beside the N workspace files (in `ws/src/`, where the restore's temp
//! files go), and its copies are removed afterwards, untimed. Each round runs the three back to back,
//! rotating which goes first.
//!
//! `keep`: every round deletes thousands of files (the previous sidecar with its payloads and
//! forward images, the floors' copies). On an ext4 without a journal (the machine of
//! BENCHMARKS.md), creating an inode skips, one by one, the inodes of its group deleted in the last
//! seconds (`recently_deleted`), so that churn makes every later creation slower. With `keep`,
//! nothing is deleted until all rounds of a size are over: the same measurements without the
//! harness's own churn.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use retrace_checkpoint::{CheckpointStore, StoreOptions};
use retrace_fsutil::Fs;
use tempfile::TempDir;

#[path = "../benches/support/common.rs"]
mod common;
use common::{edit_turn, floor_copy, make_workspace, median, restore, sync_dir};

fn store_opts() -> StoreOptions {
    StoreOptions {
        session_id: Some("bench".into()),
        fs: Fs::durable(),
        ..StoreOptions::default()
    }
}

fn fresh_dir(under: &Path) -> TempDir {
    let d = TempDir::new_in(under).unwrap();
    sync_dir(d.path());
    sync_dir(under);
    d
}

/// What a round leaves to delete: with `keep`, deleted only after the last round of a size.
#[derive(Default)]
struct Graveyard {
    keep: bool,
    dirs: Vec<TempDir>,
    files: Vec<PathBuf>,
}

impl Graveyard {
    fn bury(&mut self, d: TempDir) {
        if self.keep {
            self.dirs.push(d);
        }
    }

    fn bury_files(&mut self, files: Vec<PathBuf>) {
        if self.keep {
            self.files.extend(files);
        } else {
            remove_files(&files);
        }
    }

    fn empty(&mut self) {
        remove_files(&std::mem::take(&mut self.files));
        self.dirs.clear();
    }
}

fn remove_files(files: &[PathBuf]) {
    for f in files {
        fs::remove_file(f).unwrap();
    }
    if let Some(dir) = files.first().and_then(|f| f.parent()) {
        sync_dir(dir);
    }
}

fn time_restore(root: &Path, n: usize, round: u64, graves: &mut Graveyard) -> f64 {
    let side = TempDir::new_in(root).unwrap();
    let (mut store, turn) = edit_turn(&root.join("ws"), &side.path().join("s.ckpt"), n, round);
    let t = Instant::now();
    restore(&mut store, turn, n);
    let ms = t.elapsed().as_secs_f64() * 1e3;
    drop(store);
    graves.bury(side);
    ms
}

fn time_floor(root: &Path, n: usize, graves: &mut Graveyard) -> f64 {
    let d = fresh_dir(root);
    let t = Instant::now();
    floor_copy(&root.join("orig"), d.path(), n, "").unwrap();
    let ms = t.elapsed().as_secs_f64() * 1e3;
    graves.bury(d);
    ms
}

/// The floor written beside the N workspace files (in `ws/src/`, as `.copy-fileNNNN.rs`), the
/// directory the restore's temp files go to; the copies are removed afterwards, untimed. On the
/// machine BENCHMARKS.md describes, creating a file in a directory that already holds many costs
/// several times what it costs in an empty one.
fn time_floor_beside(root: &Path, n: usize, round: u64, graves: &mut Graveyard) -> f64 {
    let dst = root.join("ws").join("src");
    let prefix = format!(".copy{round}-");
    let t = Instant::now();
    floor_copy(&root.join("orig"), &dst, n, &prefix).unwrap();
    let ms = t.elapsed().as_secs_f64() * 1e3;
    graves.bury_files(
        (0..n)
            .map(|i| dst.join(format!("{prefix}file{i:04}.rs")))
            .collect(),
    );
    ms
}

fn paired(rounds: usize, keep: bool) {
    println!(
        "| files | floor (ms) | restore (ms) | ratio | target | met | floor beside the files (ms) | ratio to it |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (n, target) in [(1usize, None), (100, Some(2.0)), (1000, Some(2.0))] {
        let tmp = TempDir::new().unwrap();
        make_workspace(tmp.path(), n);
        let rounds = if n >= 1000 {
            rounds.div_ceil(2).max(5)
        } else {
            rounds
        };
        let (mut rest, mut floor, mut beside) = (Vec::new(), Vec::new(), Vec::new());
        let mut graves = Graveyard {
            keep,
            ..Graveyard::default()
        };
        // One unmeasured round each to warm the page cache and the code.
        time_restore(tmp.path(), n, 0, &mut graves);
        time_floor(tmp.path(), n, &mut graves);
        time_floor_beside(tmp.path(), n, 0, &mut graves);
        for i in 0..rounds {
            let round = i as u64 + 1;
            // Rotate which goes first, so none always follows another's deletions.
            for k in 0..3 {
                match (i + k) % 3 {
                    0 => rest.push(time_restore(tmp.path(), n, round, &mut graves)),
                    1 => floor.push(time_floor(tmp.path(), n, &mut graves)),
                    _ => beside.push(time_floor_beside(tmp.path(), n, round, &mut graves)),
                }
            }
        }
        graves.empty();
        let (r, f, b) = (median(rest), median(floor), median(beside));
        let ratio = r / f;
        let (t, met) = match target {
            Some(t) => (format!("≤ {t}×"), if ratio <= t { "yes" } else { "no" }),
            None => ("–".to_string(), "–"),
        };
        println!(
            "| {n} | {f:.2} | {r:.2} | {ratio:.2}× | {t} | {met} | {b:.2} | {:.2}× |",
            r / b
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = |i: usize| PathBuf::from(args.get(i).expect("a directory"));
    match args.first().map(String::as_str) {
        Some("setup") => {
            let root = dir(1);
            let n: usize = args.get(2).expect("N").parse().expect("a file count");
            fs::create_dir_all(&root).unwrap();
            make_workspace(&root, n);
            let (_store, turn) = edit_turn(&root.join("ws"), &root.join("s.ckpt"), n, 0);
            fs::write(root.join("turn"), format!("{turn} {n}")).unwrap();
            fs::create_dir_all(root.join("floor")).unwrap();
            sync_dir(&root.join("floor"));
        }
        Some("open") => {
            let root = dir(1);
            drop(CheckpointStore::open(&root.join("s.ckpt"), &root.join("ws"), store_opts()).unwrap());
        }
        Some("restore") => {
            let root = dir(1);
            let meta = fs::read_to_string(root.join("turn")).unwrap();
            let mut it = meta.split(' ').map(|s| s.parse::<u64>().unwrap());
            let (turn, n) = (it.next().unwrap(), it.next().unwrap() as usize);
            let mut store =
                CheckpointStore::open(&root.join("s.ckpt"), &root.join("ws"), store_opts()).unwrap();
            let t = Instant::now();
            restore(&mut store, turn, n);
            eprintln!("restore of {n} files: {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
        }
        Some("floor") => {
            let root = dir(1);
            let n = fs::read_dir(root.join("orig")).unwrap().count();
            let t = Instant::now();
            floor_copy(&root.join("orig"), &root.join("floor"), n, "").unwrap();
            eprintln!("floor of {n} files: {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
        }
        other => paired(
            other.map_or(21, |s| s.parse().expect("a round count")),
            args.get(1).is_some_and(|a| a == "keep"),
        ),
    }
}
