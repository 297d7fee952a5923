//! A turn of many tool calls (issue 13 item 13): N `capture_before` + `capture_after` pairs, one
//! file each, in one turn, then the end of the turn. Before the journal each capture rewrote the
//! turn's whole record, so the cost grew with N²; now each appends one line.
//!
//! Prints, per N and per file-system layer (fsync on, as in production, and off, to see the
//! algorithmic cost alone): the whole turn, the mean call in the first and in the last tenth of the
//! turn (flat when the cost is O(N)), and the end of the turn (the record written whole once).
//!
//! `cargo run --release -p retrace-checkpoint --example turn_calls -- 1000 10000`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use retrace_checkpoint::{BeginTurn, Change, CheckpointStore, StoreOptions};
use retrace_fsutil::Fs;
use retrace_protocol::ChangeKind;

fn run(n: usize, fs_: Fs) -> (Duration, Duration, Duration, Duration) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    fs::create_dir(&ws).unwrap();
    for i in 0..n {
        fs::write(ws.join(format!("f{i:05}.rs")), format!("fn f{i}() {{}}\n")).unwrap();
    }
    let opts = StoreOptions {
        fs: fs_,
        ..StoreOptions::default()
    };
    let mut store = CheckpointStore::open(&tmp.path().join("s.ckpt"), &ws, opts).unwrap();
    store.begin_turn(BeginTurn::default()).unwrap();
    let tenth = (n / 10).max(1);
    let (mut first, mut last) = (Duration::ZERO, Duration::ZERO);
    let start = Instant::now();
    for i in 0..n {
        let p = PathBuf::from(format!("f{i:05}.rs"));
        let t = Instant::now();
        store
            .capture_before(&[Change::new(&p, ChangeKind::Modify)], Some("edit_file"))
            .unwrap();
        fs::write(ws.join(&p), format!("fn f{i}() {{ todo!() }}\n")).unwrap();
        store.capture_after(&[p]).unwrap();
        let took = t.elapsed();
        if i < tenth {
            first += took;
        }
        if i >= n - tenth {
            last += took;
        }
    }
    let end = Instant::now();
    store.finish_turn().unwrap();
    let ended = end.elapsed();
    let total = start.elapsed();
    assert_eq!(store.list()[0].file_count, n);
    (total, first / tenth as u32, last / tenth as u32, ended)
}

fn main() {
    let ns: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let ns = if ns.is_empty() { vec![1000, 10000] } else { ns };
    println!(
        "{:>7}  {:>8}  {:>10}  {:>14}  {:>14}  {:>10}",
        "calls", "fsync", "turn", "call (first)", "call (last)", "end"
    );
    for n in ns {
        for (name, fs_) in [("on", Fs::durable()), ("off", Fs::without_sync())] {
            let (total, first, last, end) = run(n, fs_);
            println!(
                "{n:>7}  {name:>8}  {:>8.2} s  {:>11.1} µs  {:>11.1} µs  {:>7.1} ms",
                total.as_secs_f64(),
                first.as_secs_f64() * 1e6,
                last.as_secs_f64() * 1e6,
                end.as_secs_f64() * 1e3
            );
        }
    }
}
