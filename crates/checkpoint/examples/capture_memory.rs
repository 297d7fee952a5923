//! Peak-memory harness for capture (TESTING.md "Benchmarks" 6): run it under `/usr/bin/time -v` and
//! compare "Maximum resident set size" of the two modes.
//!
//! ```text
//! cargo build --release -p retrace-checkpoint --example capture_memory
//! /usr/bin/time -v target/release/examples/capture_memory baseline
//! /usr/bin/time -v target/release/examples/capture_memory capture
//! ```
//!
//! Both modes write a 32 MiB workspace file (streamed, 64 KiB at a time), open a sidecar with the
//! production durable `Fs` and begin a turn; only `capture` then captures the file's before-image.
//! The difference of the two peaks is what capturing costs in memory. Each mode also prints its own
//! peak (`VmHWM`) to stderr. An optional second argument sets the size in MiB (default 32).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::{self, File};
use std::io::Write;

use retrace_checkpoint::{BeginTurn, Change, CheckpointStore, StoreOptions};
use retrace_fsutil::Fs;
use retrace_protocol::ChangeKind;

fn vm_hwm() -> String {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM"))
                .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "))
        })
        .unwrap_or_else(|| "?".into())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_default();
    let capture = match mode.as_str() {
        "capture" => true,
        "baseline" => false,
        _ => {
            eprintln!("usage: capture_memory capture|baseline [MiB]");
            std::process::exit(2);
        }
    };
    let mib: usize = args.next().map_or(32, |s| s.parse().expect("a size in MiB"));

    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    fs::create_dir_all(&ws).unwrap();
    let path = ws.join("big.bin");
    {
        // Streamed: the harness itself never holds the file.
        let mut f = File::create(&path).unwrap();
        let mut chunk = vec![0u8; 64 * 1024];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..mib * 16 {
            for b in chunk.chunks_mut(8) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                b.copy_from_slice(&x.to_le_bytes()[..b.len()]);
            }
            f.write_all(&chunk).unwrap();
        }
        f.sync_all().unwrap();
    }
    let opts = StoreOptions {
        session_id: Some("memory".into()),
        fs: Fs::durable(),
        ..StoreOptions::default()
    };
    let mut store = CheckpointStore::open(&tmp.path().join("s.ckpt"), &ws, opts).unwrap();
    let turn = store
        .begin_turn(BeginTurn {
            prompt: "edit big.bin".into(),
            ..BeginTurn::default()
        })
        .unwrap();
    if capture {
        let report = store
            .capture_before(&[Change::new("big.bin", ChangeKind::Modify)], Some("edit"))
            .unwrap();
        assert_eq!(report.captured.len(), 1);
        eprintln!("captured: gaps {:?}, VmHWM={}", report.gaps, vm_hwm());
        if mib <= 32 {
            // At or under the default 32 MiB cap the bytes are kept; over it, only hashed.
            assert!(report.gaps.is_empty(), "{:?}", report.gaps);
            let payload = tmp.path().join(format!("s.ckpt/turns/{turn}/files/0000.before"));
            assert_eq!(fs::metadata(payload).unwrap().len(), (mib as u64) << 20);
        }
    }
    eprintln!("mode={mode} size={mib}MiB VmHWM={}", vm_hwm());
}
