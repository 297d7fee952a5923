//! A turn of many tool calls (issue 13 item 13): N `capture_before` + `capture_after` pairs in one
//! turn, then the end of the turn. Before the journal each capture rewrote the turn's whole
//! record, so the cost grew with N²; now each appends one line.
//!
//! Two shapes of turn: `new` (each call edits a file of its own: a first touch per call) and
//! `same` (every call edits one file again: the turn touched it before). Each with the intents the
//! edit tools' previews carry (`intents`, as the controller's seam captures; issue 25 item 2) and
//! without them (`none`, as before intents existed: `capture_after` reads the file back).
//!
//! Prints, per N, shape, intents and file-system layer (fsync on, as in production, and off, to see
//! the algorithmic cost alone): the whole turn, the mean call in the first and in the last tenth of
//! the turn (flat when the cost is O(N)), the end of the turn (the record written whole once), and
//! the fsyncs the turn issued (files and directories, counted at their failpoints).
//!
//! `cargo run --release -p retrace-checkpoint --example turn_calls -- 1000 10000`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use retrace_checkpoint::model::Image;
use retrace_checkpoint::{BeginTurn, Change, CheckpointStore, StoreOptions};
use retrace_fsutil::{sha256_bytes, FaultInjector, Fs};
use retrace_protocol::ChangeKind;

struct Measured {
    total: Duration,
    first: Duration,
    last: Duration,
    end: Duration,
    fsyncs: usize,
}

fn run(n: usize, same: bool, intents: bool, fs_: Fs) -> Measured {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    fs::create_dir(&ws).unwrap();
    let files = if same { 1 } else { n };
    for i in 0..files {
        fs::write(ws.join(format!("f{i:05}.rs")), format!("fn f{i}() {{}}\n")).unwrap();
    }
    let counter = FaultInjector::crash_at(0);
    let opts = StoreOptions {
        fs: fs_.with_faults(counter.clone()),
        ..StoreOptions::default()
    };
    let mut store = CheckpointStore::open(&tmp.path().join("s.ckpt"), &ws, opts).unwrap();
    store.begin_turn(BeginTurn::default()).unwrap();
    let steps_before = counter.trail().len();
    let tenth = (n / 10).max(1);
    let (mut first, mut last) = (Duration::ZERO, Duration::ZERO);
    let start = Instant::now();
    for i in 0..n {
        let p = PathBuf::from(format!("f{:05}.rs", if same { 0 } else { i }));
        let bytes = format!("fn f{i}() {{ todo!() }}\n");
        let t = Instant::now();
        let mut change = Change::new(&p, ChangeKind::Modify);
        let intent = Image {
            existed: true,
            sha256: Some(sha256_bytes(bytes.as_bytes())),
            mode: Some(0o644),
        };
        if intents {
            change = change.with_intent(intent.clone());
        }
        store.capture_before(&[change], Some("edit_file")).unwrap();
        fs::write(ws.join(&p), &bytes).unwrap();
        let known = intents.then_some(intent);
        store.capture_after_known(&[(p, known)]).unwrap();
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
    assert_eq!(store.list()[0].file_count, files);
    let fsyncs = counter
        .trail()
        .iter()
        .skip(steps_before)
        .filter(|l| l.starts_with("sync"))
        .count();
    Measured {
        total,
        first: first / tenth as u32,
        last: last / tenth as u32,
        end: ended,
        fsyncs,
    }
}

fn main() {
    let ns: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let ns = if ns.is_empty() { vec![1000, 10000] } else { ns };
    println!(
        "{:>7}  {:>5}  {:>8}  {:>6}  {:>10}  {:>14}  {:>14}  {:>10}  {:>7}",
        "calls", "files", "intents", "fsync", "turn", "call (first)", "call (last)", "end", "fsyncs"
    );
    for n in ns {
        for same in [false, true] {
            for intents in [false, true] {
                for (name, fs_) in [("on", Fs::durable()), ("off", Fs::without_sync())] {
                    let m = run(n, same, intents, fs_);
                    println!(
                        "{n:>7}  {:>5}  {:>8}  {name:>6}  {:>8.2} s  {:>11.1} µs  {:>11.1} µs  {:>7.1} ms  {:>7}",
                        if same { "same" } else { "new" },
                        if intents { "intents" } else { "none" },
                        m.total.as_secs_f64(),
                        m.first.as_secs_f64() * 1e6,
                        m.last.as_secs_f64() * 1e6,
                        m.end.as_secs_f64() * 1e3,
                        m.fsyncs
                    );
                }
            }
        }
    }
}
