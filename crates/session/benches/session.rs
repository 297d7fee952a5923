//! Session log costs (issue 4; TESTING.md "Benchmarks" item 4).
//!
//! - `append/message`: one assistant message appended (one `write`, no fsync: messages inside a
//!   turn are fsynced at turn end), production `Fs` (fsync on).
//! - `append/turn_start`: a turn's user message + `turn` line, fsynced (the turn boundary).
//! - `fork/durable/<n>` and `fork/no_fsync/<n>`: forking from the tip of a head that has `n`
//!   messages (one `fork` line; the durable variant includes its fsync). The figure must not grow
//!   with `n`: the no-fsync variant shows the structural cost alone.
//! - `open_project/10000_messages_3_heads`: `open_reader` + `project(selected)` of a 10,000-message log
//!   with three heads, about 5 MB (target ≤ 50 ms); `open_writer_project` the same with the lease.
//!
//! Temp dirs live under the system temp dir.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use retrace_fsutil::Fs;
use retrace_session::{ForkSpec, HeadId, NewMessage, Role, Session, SessionId, SessionOptions, TurnStart};
use tempfile::TempDir;

fn options(fs: Fs) -> SessionOptions {
    SessionOptions {
        fs,
        ..SessionOptions::default()
    }
}

/// Text of about `len` bytes, varied so nothing compresses to nothing.
fn text(len: usize, seed: usize) -> String {
    const WORDS: [&str; 8] = ["fn ", "let ", "value", " = ", "self.", "path", "();\n", "// ok "];
    let mut s = String::with_capacity(len + 8);
    let mut i = seed;
    while s.len() < len {
        s.push_str(WORDS[i % WORDS.len()]);
        i = i.wrapping_mul(31).wrapping_add(7);
    }
    s
}

/// Appends `turns` turns of four messages (user ~100 B, assistant with a tool call ~300 B, tool
/// result ~1 KiB, assistant ~400 B) to `head`.
fn fill(s: &mut Session, head: &HeadId, turns: usize, seed: usize) {
    for t in 0..turns {
        let k = seed + t;
        let turn = s.next_turn();
        s.start_turn(TurnStart {
            turn,
            head: head.clone(),
            message_id: None,
            content: text(100, k),
        })
        .unwrap();
        let mut call = NewMessage::new(Role::Assistant, text(300, k + 1));
        call.tool_calls.push(retrace_session::ToolCall {
            id: format!("call-{k}"),
            name: "edit_file".into(),
            arguments: format!(r#"{{"path":"src/f{k}.rs","old_string":"a","new_string":"b"}}"#),
        });
        s.append(head, call).unwrap();
        let mut result = NewMessage::new(Role::Tool, text(1024, k + 2));
        result.tool_call_id = Some(format!("call-{k}"));
        s.append(head, result).unwrap();
        s.append(head, NewMessage::new(Role::Assistant, text(400, k + 3)))
            .unwrap();
        s.end_turn().unwrap();
    }
}

fn new_session(dir: &Path, fs: Fs) -> Session {
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    options(fs).create(&dir.join("sessions"), &ws).unwrap()
}

fn bench_append(c: &mut Criterion) {
    let mut g = c.benchmark_group("append");
    let tmp = TempDir::new().unwrap();
    let mut s = new_session(tmp.path(), Fs::durable());
    let main = HeadId::main();
    fill(&mut s, &main, 25, 0);
    let body = text(400, 3);
    g.bench_function("message", |b| {
        b.iter(|| {
            s.append(&main, NewMessage::new(Role::Assistant, body.clone()))
                .unwrap()
        })
    });
    g.bench_function("turn_start", |b| {
        b.iter(|| {
            let turn = s.next_turn();
            s.start_turn(TurnStart {
                turn,
                head: main.clone(),
                message_id: None,
                content: body.clone(),
            })
            .unwrap()
        })
    });
    g.finish();
}

fn bench_fork(c: &mut Criterion) {
    let mut g = c.benchmark_group("fork");
    for (label, fs) in [("durable", Fs::durable()), ("no_fsync", Fs::without_sync())] {
        for messages in [100usize, 10_000] {
            let tmp = TempDir::new().unwrap();
            let mut s = new_session(tmp.path(), Fs::without_sync());
            let main = HeadId::main();
            fill(&mut s, &main, messages / 4, 0);
            let id = s.id().clone();
            drop(s);
            let mut s = options(fs.clone())
                .open_writer(&tmp.path().join("sessions"), &id)
                .unwrap();
            assert_eq!(s.head(&main).unwrap().message_count, messages);
            let tip = s.tip(&main).unwrap().cloned();
            g.bench_with_input(BenchmarkId::new(label, messages), &messages, |b, _| {
                b.iter(|| s.fork(&main, tip.as_ref(), ForkSpec::default()).unwrap())
            });
        }
    }
    g.finish();
}

/// A 10,000-message log: main with 1,500 turns (6,000 messages), a rewind at turn 500 continued by
/// 500 turns, and a fork of that at its turn 750 continued by 500 turns; the last one selected.
fn big_log(dir: &Path) -> SessionId {
    let mut s = new_session(dir, Fs::without_sync());
    let main = HeadId::main();
    fill(&mut s, &main, 1_500, 0);
    let before = s.boundary(&main, 500).unwrap().before;
    let r = s.fork(&main, before.as_ref(), ForkSpec::default()).unwrap().head;
    fill(&mut s, &r, 500, 7);
    let before = s.boundary(&r, 1_750).unwrap().before;
    let f = s
        .fork(
            &r,
            before.as_ref(),
            ForkSpec {
                select: true,
                ..ForkSpec::default()
            },
        )
        .unwrap()
        .head;
    fill(&mut s, &f, 500, 13);
    let lines = std::fs::read_to_string(s.log_path()).unwrap();
    let written = lines
        .lines()
        .filter(|l| l.starts_with(r#"{"type":"message""#))
        .count();
    assert_eq!(written, 10_000);
    let id = s.id().clone();
    drop(s);
    id
}

fn bench_open(c: &mut Criterion) {
    let mut g = c.benchmark_group("open_project");
    g.sample_size(30);
    let tmp = TempDir::new().unwrap();
    let id = big_log(tmp.path());
    let dir = tmp.path().join("sessions");
    let log = dir.join(format!("{id}.jsonl"));
    let size = std::fs::metadata(&log).unwrap().len();
    let opts = options(Fs::durable());
    {
        let s = opts.open_reader(&dir, &id).unwrap();
        let heads = s.heads().len();
        let projected = s.project(s.selected()).unwrap().len();
        eprintln!(
            "open_project: log of {size} bytes, 10000 messages, {heads} heads, selected path of {projected}"
        );
    }
    g.bench_function("10000_messages_3_heads", |b| {
        b.iter(|| {
            let s = opts.open_reader(&dir, &id).unwrap();
            let n = s.project(s.selected()).unwrap().len();
            black_box(n)
        })
    });
    g.bench_function("open_writer_project", |b| {
        b.iter(|| {
            let s = opts.open_writer(&dir, &id).unwrap();
            let n = s.project(s.selected()).unwrap().len();
            black_box(n)
        })
    });
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_append, bench_fork, bench_open
}
criterion_main!(benches);
