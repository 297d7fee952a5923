//! Capture cost against the floor, interleaved: each round times one capture and one raw copy +
//! fsync of the same bytes back to back, so load from other processes on a shared machine falls on
//! both alike. Complements `cargo bench -p retrace-checkpoint` (criterion runs all capture iterations,
//! then all floor iterations).
//!
//! ```text
//! cargo run --release -p retrace-checkpoint --example capture_ratio [ROUNDS] [keep]
//! ```
//!
//! With `keep`, the rounds' files are deleted only after the last round of each size (see `main`).
//!
//! The setup of each iteration is the bench's: a fresh sidecar with a turn begun (durable `Fs`), or
//! a fresh synced directory for the floor, untimed. Prints median milliseconds and the ratio per size.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::time::Instant;

use retrace_checkpoint::Change;
use retrace_protocol::ChangeKind;
use tempfile::TempDir;

#[path = "../benches/support/common.rs"]
mod common;
use common::{content, median, store_with_turn};

fn fresh_dir() -> TempDir {
    let d = TempDir::new().unwrap();
    File::open(d.path()).unwrap().sync_all().unwrap();
    d
}

/// The temp dirs of the rounds, deleted at the end when `keep` is on (see `main`).
type Kept = Vec<TempDir>;

fn time_capture(ws: &Path, kept: &mut Option<Kept>) -> f64 {
    let (side, mut store) = store_with_turn(ws);
    let change = [Change::new("big.bin", ChangeKind::Modify)];
    let t = Instant::now();
    let report = store.capture_before(&change, Some("edit")).unwrap();
    let ms = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(report.captured.len(), 1);
    drop(store);
    match kept {
        Some(k) => k.push(side),
        None => drop(side),
    }
    ms
}

fn time_floor(src: &Path, kept: &mut Option<Kept>) -> f64 {
    let d = fresh_dir();
    let t = Instant::now();
    let mut from = File::open(src).unwrap();
    let mut to = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(d.path().join("copy.bin"))
        .unwrap();
    io::copy(&mut from, &mut to).unwrap();
    to.sync_all().unwrap();
    let ms = t.elapsed().as_secs_f64() * 1e3;
    if let Some(k) = kept {
        k.push(d);
    }
    ms
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map_or(101, |s| s.parse().expect("a round count"));
    // `keep`: no file is deleted until every round of a size is done. On a file system without a
    // journal, ext4 skips the inodes deleted in the last minute when it allocates one, so deleting
    // each round's files makes the next creations slower — more so for the side that creates more
    // inodes. An agent does not delete thousands of files a minute beside its captures.
    let keep = std::env::args().nth(2).is_some_and(|a| a == "keep");
    println!(
        "rounds per size: {rounds} (32 MiB: a quarter); files deleted {}",
        if keep {
            "after each size"
        } else {
            "after each round"
        }
    );
    let sizes: [(&str, usize, Option<f64>); 4] = [
        ("1KiB", 1 << 10, None),
        ("64KiB", 64 << 10, Some(3.0)),
        ("1MiB", 1 << 20, Some(1.5)),
        ("32MiB", 32 << 20, Some(1.3)),
    ];
    println!("| size | capture (ms) | floor (ms) | ratio | target | met |");
    println!("|---|---|---|---|---|---|");
    // `CAPTURE_SIZES=1MiB,32MiB` measures only those sizes.
    let only = std::env::var("CAPTURE_SIZES").ok();
    for (name, len, target) in sizes {
        if only.as_deref().is_some_and(|o| !o.split(',').any(|s| s == name)) {
            continue;
        }
        let ws = TempDir::new().unwrap();
        let src = ws.path().join("big.bin");
        let mut f = File::create(&src).unwrap();
        f.write_all(&content(len, len as u64)).unwrap();
        f.sync_all().unwrap();
        // Large sizes get fewer rounds (each round writes the file out twice).
        let n = if len >= 32 << 20 {
            rounds.div_ceil(4).max(5)
        } else {
            rounds
        };
        let (mut cap, mut floor) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut kept: Option<Kept> = keep.then(Vec::new);
        // One unmeasured round each to warm the page cache and the code.
        time_capture(ws.path(), &mut kept);
        time_floor(&src, &mut kept);
        for i in 0..n {
            // Alternate which goes first, so neither always follows the other's deletions.
            if i % 2 == 0 {
                cap.push(time_capture(ws.path(), &mut kept));
                floor.push(time_floor(&src, &mut kept));
            } else {
                floor.push(time_floor(&src, &mut kept));
                cap.push(time_capture(ws.path(), &mut kept));
            }
        }
        drop(kept);
        let (c, fl) = (median(cap), median(floor));
        let ratio = c / fl;
        let (t, met) = match target {
            Some(t) => (format!("≤ {t}×"), if ratio <= t { "yes" } else { "no" }),
            None => ("–".to_string(), "–"),
        };
        println!("| {name} | {c:.3} | {fl:.3} | {ratio:.2}× | {t} | {met} |");
    }
}
