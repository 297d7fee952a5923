//! The first frame on opening a real 1,000-message session (not criterion: each run needs a fresh
//! service, and the figure is a median of whole openings). Run with `cargo bench -p retrace-tui
//! --bench first_frame`.
//!
//! Setup (untimed): a session made by 250 real turns through the controller with the script model
//! (SPEC §11.2): each turn is a prompt, an answer of a few paragraphs with a `read_file` call of a
//! 300-line file, the tool's result and a final answer — 1,000 messages, about 7 MB of log.
//!
//! Each run (timed, as `retrace --session ID` does before its first frame, minus the terminal and
//! the process start): a new `Service`, `open` (the log read, the writer lease taken, the checkpoint
//! store opened), `Driver::open` (what the runtime does: `snapshot`, `subscribe`, `App::new` +
//! `on_snapshot`), and one frame
//! at 120×40 into ratatui's `TestBackend`. Then the session is closed, untimed. `FIRST_FRAME_RUNS`
//! sets the number of runs (default 15); `FIRST_FRAME_KEEP=DIR` builds the session in `DIR` and
//! keeps it (for timing the real binary on it).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use retrace_control::{Service, ServiceOptions, SessionHandle};
use retrace_protocol::{Delivery, Event, ModelSpec};
use retrace_tui::{AppOptions, Driver};
use serde_json::json;
use support::{answer, frame, prompt, terminal, tool_output, Rng, TURNS};

const FILES: usize = 10;

fn options(home: &Path) -> ServiceOptions {
    let mut opts = ServiceOptions::new(home);
    opts.env = std::sync::Arc::new(|_| None);
    opts
}

/// Writes the workspace's files and the script of every turn.
fn prepare(root: &Path) -> (PathBuf, ModelSpec) {
    let ws = root.join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    let mut rng = Rng::new(7);
    for k in 0..FILES {
        std::fs::write(ws.join(format!("src/module_{k}.rs")), tool_output(&mut rng)).unwrap();
    }
    let mut responses = Vec::new();
    for turn in 0..TURNS {
        responses.push(json!({
            "content": answer(&mut rng),
            "tool_calls": [{"name": "read_file", "arguments": {"path": format!("src/module_{}.rs", turn % FILES)}}],
        }));
        responses.push(json!({ "content": answer(&mut rng) }));
    }
    let script = root.join("script.json");
    std::fs::write(&script, json!({ "responses": responses }).to_string()).unwrap();
    (
        std::fs::canonicalize(&ws).unwrap(),
        ModelSpec::script(script.to_string_lossy()),
    )
}

async fn run_turn(h: &SessionHandle, text: String) {
    let mut sub = h.subscribe(None);
    let accepted = h.send(text).await.unwrap();
    loop {
        let d = tokio::time::timeout(Duration::from_secs(60), sub.recv())
            .await
            .expect("the turn finishes")
            .expect("the stream stays open");
        if let Delivery::Event(n) = d {
            if let Event::TurnFinished { turn, ok, error, .. } = n.event {
                if turn == accepted.turn {
                    assert!(ok, "turn {turn} failed: {error:?}");
                    return;
                }
            }
        }
    }
}

struct Run {
    open: Duration,
    load: Duration,
    draw: Duration,
    total: Duration,
}

async fn first_frame(home: &Path, ws: &Path, id: &str) -> Run {
    let svc = Service::new(options(home));
    let t0 = Instant::now();
    let h = svc.open(id, Some(ws)).await.unwrap();
    let t1 = Instant::now();
    // What the runtime does before its first frame: snapshot, subscribe, App.
    let ui = Driver::open(svc.clone(), h, AppOptions { no_color: false }, None)
        .await
        .unwrap();
    let t2 = Instant::now();
    let mut t = terminal(120, 40);
    frame(&mut t, ui.app(), &mut retrace_tui::view::ViewState::new());
    let t3 = Instant::now();
    assert!(
        ui.app().transcript().items().len() >= 4 * TURNS,
        "{} items",
        ui.app().transcript().items().len()
    );
    drop(ui);
    svc.shutdown().await;
    svc.wait_closed().await;
    Run {
        open: t1 - t0,
        load: t2 - t1,
        draw: t3 - t2,
        total: t3 - t0,
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

fn main() {
    let runs: usize = std::env::var("FIRST_FRAME_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    let keep = std::env::var_os("FIRST_FRAME_KEEP").map(PathBuf::from);
    let tmp = tempfile::tempdir().unwrap();
    let root = match &keep {
        Some(dir) => {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::canonicalize(dir).unwrap()
        }
        None => tmp.path().to_path_buf(),
    };
    let home = root.join("home");
    let (ws, model) = prepare(&root);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();

    let built = Instant::now();
    let id = rt.block_on(async {
        let mut opts = options(&home);
        opts.model = Some(model);
        let svc = Service::new(opts);
        let h = svc.create(&ws).await.unwrap();
        let mut rng = Rng::new(11);
        for _ in 0..TURNS {
            run_turn(&h, prompt(&mut rng)).await;
        }
        let id = h.session_id().to_string();
        drop(h);
        svc.shutdown().await;
        svc.wait_closed().await;
        id
    });
    let log = home.join("sessions").join(format!("{id}.jsonl"));
    let log_bytes = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
    println!(
        "session {id}: {TURNS} turns, log {:.1} MiB, built in {:.1} s",
        log_bytes as f64 / (1 << 20) as f64,
        built.elapsed().as_secs_f64()
    );

    let mut all = Vec::new();
    for i in 0..runs {
        let r = rt.block_on(first_frame(&home, &ws, &id));
        println!(
            "run {:>2}: open {} ms, driver (snapshot, app) {} ms, first draw {} ms, first frame {} ms",
            i + 1,
            ms(r.open),
            ms(r.load),
            ms(r.draw),
            ms(r.total)
        );
        all.push(r);
    }
    println!(
        "median of {runs}: open {} ms, driver (snapshot, app) {} ms, first draw {} ms, first frame {} ms (target ≤ 150 ms)",
        ms(median(all.iter().map(|r| r.open).collect())),
        ms(median(all.iter().map(|r| r.load).collect())),
        ms(median(all.iter().map(|r| r.draw).collect())),
        ms(median(all.iter().map(|r| r.total).collect())),
    );
    if keep.is_some() {
        println!(
            "kept: RETRACE_HOME={} retrace --session {id} --workspace {}",
            home.display(),
            ws.display()
        );
    }
}
