//! The cost of one frame of the terminal UI on a 1,000-message conversation (250 turns: a prompt,
//! an answer of a few paragraphs with a `read_file` call, its 300-line result, a final answer),
//! drawn at 120×40 into ratatui's `TestBackend` (the buffer diff included, no terminal I/O).
//!
//! - `frame/warm`: a frame when nothing changed since the last one.
//! - `frame/streaming`: one `assistant_delta` (a word) then a frame, while a turn runs (the spinner
//!   row shows). The streamed answer restarts every 1,000 deltas (about 6 KB), untimed.
//! - `frame/resize`: a frame at a width other than the last frame's (120 and 119 alternately):
//!   every item is wrapped again. The worst case.
//! - `frame/details_warm` and `frame/details_resize`: the same with Ctrl-O on (each tool call
//!   shows its output, folded after 12 lines): a warm frame, and the worst case.
//! - `frame/paste_1mib_lines` and `frame/paste_1mib_one_line`: a frame with 1 MiB pasted into the
//!   input box (16,384 lines of 63 characters, or one line), the cursor at its end.
//! - `first_draw`: `App::new` + `on_snapshot` of the 1,000 messages' items + the first frame:
//!   the UI's share of the first frame (the `first_frame` bench adds opening the session).
//!
//! Targets (the issue): a frame ≤ 16 ms; the first frame ≤ 150 ms after start.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use retrace_protocol::{Event, HeadId, Item, ItemBody, SessionId};
use retrace_tui::view::ViewState;
use retrace_tui::{App, AppOptions};
use support::{conversation, feed, frame, snapshot, status, terminal, Rng};

const W: u16 = 120;
const H: u16 = 40;

fn frames(c: &mut Criterion) {
    let mut g = c.benchmark_group("frame");

    // Each app has its view state (the kept rows), as in the runtime.
    let app = conversation();
    let mut state = ViewState::new();
    let mut t = terminal(W, H);
    frame(&mut t, &app, &mut state);
    g.bench_function("warm", |b| b.iter(|| frame(&mut t, &app, &mut state)));

    let mut base = conversation();
    let turn = support::TURNS as u64 + 1;
    feed(
        &mut base,
        Event::TurnStarted {
            session_id: SessionId::new("0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41"),
            head_id: HeadId::main(),
            turn,
            prompt: "explain the restore path".into(),
        },
    );
    feed(
        &mut base,
        Event::ItemStarted {
            item: Item {
                id: "streamed".into(),
                turn: Some(turn),
                body: ItemBody::AssistantText {
                    text: String::new(),
                    reasoning: None,
                },
            },
        },
    );
    let words: Vec<String> = {
        let mut rng = Rng::new(3);
        (0..1_000)
            .map(|i| {
                let w = support::sentence(&mut rng, 1);
                if i % 80 == 79 {
                    format!("{w}\n\n")
                } else {
                    format!("{w} ")
                }
            })
            .collect()
    };
    g.bench_function("streaming", |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            let mut app = base.clone();
            let mut state = ViewState::new();
            let mut t = terminal(W, H);
            frame(&mut t, &app, &mut state);
            let mut k = 0;
            for _ in 0..iters {
                if k == words.len() {
                    app = base.clone();
                    state = ViewState::new();
                    frame(&mut t, &app, &mut state);
                    k = 0;
                }
                let start = Instant::now();
                feed(
                    &mut app,
                    Event::AssistantDelta {
                        item_id: Some("streamed".into()),
                        text: words[k].clone(),
                    },
                );
                frame(&mut t, &app, &mut state);
                spent += start.elapsed();
                k += 1;
            }
            spent
        })
    });

    let mut wide = terminal(W, H);
    let mut narrow = terminal(W - 1, H);
    let mut flip = false;
    g.bench_function("resize", |b| {
        b.iter(|| {
            flip = !flip;
            frame(if flip { &mut narrow } else { &mut wide }, &app, &mut state)
        })
    });

    // Ctrl-O: every tool call shows its output (folded after 12 lines) and reasoning in full.
    let mut detailed = conversation();
    detailed.on_key(
        KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL),
        Instant::now(),
    );
    let mut detailed_state = ViewState::new();
    let mut t = terminal(W, H);
    frame(&mut t, &detailed, &mut detailed_state);
    g.bench_function("details_warm", |b| {
        b.iter(|| frame(&mut t, &detailed, &mut detailed_state))
    });
    let mut flip = false;
    g.bench_function("details_resize", |b| {
        b.iter(|| {
            flip = !flip;
            frame(
                if flip { &mut narrow } else { &mut wide },
                &detailed,
                &mut detailed_state,
            )
        })
    });

    for (name, paste) in [
        ("paste_1mib_lines", vec!["x".repeat(63); 16_384].join("\n")),
        ("paste_1mib_one_line", "y".repeat(1 << 20)),
    ] {
        let mut app = conversation();
        app.on_paste(&paste);
        let mut state = ViewState::new();
        let mut t = terminal(W, H);
        frame(&mut t, &app, &mut state);
        g.bench_function(name, |b| b.iter(|| frame(&mut t, &app, &mut state)));
    }
    g.finish();

    let stored = snapshot();
    c.bench_function("first_draw", |b| {
        b.iter_batched(
            || (terminal(W, H), stored.clone()),
            |(mut t, stored)| {
                let mut app = App::new(status(), AppOptions { no_color: false });
                app.on_snapshot(black_box(stored));
                frame(&mut t, &app, &mut ViewState::new());
                app
            },
            BatchSize::LargeInput,
        )
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .sample_size(30);
    targets = frames
}
criterion_main!(benches);
