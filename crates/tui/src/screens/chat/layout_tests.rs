//! The kept layout against a layout made from nothing, after every kind of change.

use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::text::Line;
use ratatui::Terminal;
use retrace_protocol::{
    CheckpointItem, Coverage, Event, HeadId, Item, ItemBody, SessionId, SessionSnapshot, SessionStatus,
    ToolCallItem, ToolStatus,
};

use super::ChatLayout;
use crate::app::{App, AppOptions};
use crate::screens::chat::draw as chat;
use crate::status::StatusInfo;
use crate::transcript::Entry;
use crate::view::{Theme, ViewState};

fn item(id: String, turn: u64, body: ItemBody) -> Item {
    Item {
        id,
        turn: Some(turn),
        body,
    }
}

fn text(id: String, turn: u64, text: String) -> Item {
    item(
        id,
        turn,
        ItemBody::AssistantText {
            text,
            reasoning: None,
        },
    )
}

fn tool(id: String, turn: u64, title: String, status: ToolStatus, output: String) -> Item {
    item(
        id,
        turn,
        ItemBody::ToolCall(Box::new(ToolCallItem {
            call_id: "c".into(),
            tool: "read_file".into(),
            title,
            target: None,
            arguments: serde_json::json!({}),
            status,
            output,
            output_truncated: false,
            changes: Vec::new(),
            gaps: Vec::new(),
            exit_code: None,
        })),
    )
}

fn checkpoint(turn: u64, files: &[&str]) -> Item {
    item(
        format!("checkpoint-{turn}"),
        turn,
        ItemBody::Checkpoint(CheckpointItem {
            files: files.iter().map(|f| f.to_string()).collect(),
            gaps: Vec::new(),
            coverage: Coverage::Complete,
            retained: true,
        }),
    )
}

/// `turns` turns, five entries each: a prompt, its checkpoint, an answer, a tool call, an answer.
fn items(turns: usize, word: &str) -> Vec<Item> {
    let mut out = Vec::new();
    for t in 1..=turns {
        let n = t as u64;
        out.push(item(
            format!("m{t}p"),
            n,
            ItemBody::UserPrompt {
                text: format!("prompt {t}: {}", word.repeat(t * 7)),
            },
        ));
        out.push(checkpoint(n, &[]));
        out.push(text(format!("m{t}a"), n, format!("{word} ").repeat(40)));
        out.push(tool(
            format!("m{t}a.0"),
            n,
            format!("Read src/{word}{t}.rs"),
            ToolStatus::Ok,
            "line\n".repeat(t * 3),
        ));
        out.push(text(
            format!("m{t}b"),
            n,
            format!("done {t}\n\n{}", word.repeat(90)),
        ));
    }
    out
}

fn snapshot(items: Vec<Item>, seq: u64) -> SessionSnapshot {
    SessionSnapshot {
        status: SessionStatus {
            session_id: SessionId::new("s"),
            workspace: "/w".into(),
            head_id: HeadId::main(),
            running: None,
            model: Some("demo".into()),
            model_spec: Some("demo".into()),
            plan_mode: false,
            backend: Default::default(),
            last_event_seq: seq,
        },
        items,
        heads: Vec::new(),
        head_id: HeadId::main(),
        pending_approvals: Vec::new(),
        context_tokens: None,
        usage: Default::default(),
        last_event_seq: seq,
    }
}

fn app(no_color: bool) -> App {
    let status = StatusInfo {
        model: Some("demo".into()),
        workspace: "/w".into(),
        session: "s".into(),
        head: "main".into(),
        ..StatusInfo::default()
    };
    let mut app = App::new(status, AppOptions { no_color });
    app.on_snapshot(snapshot(items(4, "wörd"), 10));
    app
}

/// The next event, numbered after the last one shown.
fn feed(app: &mut App, event: Event) {
    let seq = app.last_event_seq() + 1;
    app.on_event(seq, event);
}

fn draw(app: &App, state: &mut ViewState, w: u16, h: u16) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| crate::view::draw(f, app, state)).unwrap();
    t.backend().buffer().clone()
}

/// The kept rows of the whole transcript (brought up to date) equal rows laid out from nothing,
/// and so does a frame.
fn assert_fresh(app: &App, state: &mut ViewState, w: u16, h: u16) {
    let drawn = draw(app, state, w, h);
    let width = usize::from(w);
    let l = &mut state.chat;
    l.update(app, width);
    let kept = l.rows(0, l.len());
    let mut afresh = chat::rows(app, width);
    if app.status().running {
        afresh.pop(); // the spinner's row is not kept
    }
    assert_eq!(kept, afresh);
    assert_eq!(
        drawn,
        draw(app, &mut ViewState::new(), w, h),
        "a fresh view state keeps nothing: it lays out afresh"
    );
}

/// A change made to an app.
type Mutation = Box<dyn Fn(&mut App)>;

/// What each kind of change does to an app whose layout is warm.
fn mutations() -> Vec<(&'static str, Mutation)> {
    vec![
        (
            "a line of the UI's own",
            Box::new(|a: &mut App| {
                feed(
                    a,
                    Event::Notice {
                        message: "a notice\nof two lines".into(),
                        retry: None,
                    },
                );
            }),
        ),
        (
            "assistant_delta continuing the last answer",
            Box::new(|a: &mut App| {
                feed(
                    a,
                    Event::AssistantDelta {
                        item_id: Some("m4b".into()),
                        text: " more words".repeat(20),
                    },
                );
            }),
        ),
        (
            "an answer starting after a line of the UI's own",
            Box::new(|a: &mut App| {
                feed(a, Event::Error { message: "e".into() });
                feed(
                    a,
                    Event::ItemStarted {
                        item: text("new".into(), 4, String::new()),
                    },
                );
                feed(
                    a,
                    Event::AssistantDelta {
                        item_id: Some("new".into()),
                        text: "new".into(),
                    },
                );
            }),
        ),
        (
            "reasoning_delta",
            Box::new(|a: &mut App| {
                for text in ["first\n", "second\nthird"] {
                    feed(
                        a,
                        Event::ReasoningDelta {
                            item_id: Some("m4b".into()),
                            text: text.into(),
                        },
                    );
                }
            }),
        ),
        (
            "an earlier call completed",
            Box::new(|a: &mut App| {
                feed(
                    a,
                    Event::ItemCompleted {
                        item: tool(
                            "m2a.0".into(),
                            2,
                            "Read src/x.rs".into(),
                            ToolStatus::Failed,
                            "x\n".repeat(500),
                        ),
                    },
                );
            }),
        ),
        (
            "an earlier checkpoint captured more",
            Box::new(|a: &mut App| {
                feed(
                    a,
                    Event::ItemUpdated {
                        item: checkpoint(1, &["a", "b"]),
                    },
                );
            }),
        ),
        (
            "an answer removed",
            Box::new(|a: &mut App| {
                feed(
                    a,
                    Event::ItemRemoved {
                        item_id: "m3b".into(),
                    },
                );
            }),
        ),
        (
            "a turn starting and running (the spinner), a call running",
            Box::new(|a: &mut App| {
                feed(
                    a,
                    Event::TurnStarted {
                        session_id: SessionId::new("s"),
                        head_id: HeadId::main(),
                        turn: 5,
                        prompt: "next".into(),
                    },
                );
                feed(
                    a,
                    Event::ItemStarted {
                        item: item("m5p".into(), 5, ItemBody::UserPrompt { text: "next".into() }),
                    },
                );
                feed(
                    a,
                    Event::ItemStarted {
                        item: tool(
                            "m5a.0".into(),
                            5,
                            "Run cargo test".into(),
                            ToolStatus::Running,
                            String::new(),
                        ),
                    },
                );
                a.on_tick();
            }),
        ),
        (
            "a snapshot of the same length replacing it",
            Box::new(|a: &mut App| {
                a.on_snapshot(snapshot(items(4, "other"), 30));
            }),
        ),
        (
            "a shorter snapshot replacing it",
            Box::new(|a: &mut App| {
                a.on_snapshot(snapshot(items(2, "short"), 30));
            }),
        ),
        (
            "the view generation",
            Box::new(|a: &mut App| a.chat.view_generation += 1),
        ),
        (
            "details shown (Ctrl-O)",
            Box::new(|a: &mut App| {
                let ctrl_o = ratatui::crossterm::event::KeyEvent::new(
                    ratatui::crossterm::event::KeyCode::Char('o'),
                    ratatui::crossterm::event::KeyModifiers::CONTROL,
                );
                a.on_key(ctrl_o, std::time::Instant::now());
            }),
        ),
        ("colours switched off", Box::new(|a: &mut App| a.no_color = true)),
        ("scrolled up", Box::new(|a: &mut App| a.chat.scroll = 7)),
    ]
}

#[test]
fn every_kind_of_change_is_drawn() {
    for (what, mutate) in mutations() {
        let mut app = app(false);
        let mut state = ViewState::new();
        assert_fresh(&app, &mut state, 90, 30);
        mutate(&mut app);
        assert_fresh(&app, &mut state, 90, 30);
        // And once more, warm.
        assert_fresh(&app, &mut state, 90, 30);
        assert_eq!(
            draw(&app, &mut state, 90, 30),
            draw(&app, &mut ViewState::new(), 90, 30),
            "{what}"
        );
    }
}

/// Replaces every kept entry's rows with a marker, so what is laid out again shows.
fn mark(l: &mut ChatLayout) {
    for kept in &mut l.items {
        kept.rows = vec![Line::raw("MARK")];
    }
    let mut total = 0;
    l.ends = l
        .items
        .iter()
        .map(|_| {
            total += 1;
            total
        })
        .collect();
}

/// Which entries' kept rows are still the marker after an update at `width`.
fn marked(app: &App, l: &mut ChatLayout, width: usize) -> Vec<bool> {
    l.update(app, width);
    l.items.iter().map(|k| k.rows == [Line::raw("MARK")]).collect()
}

#[test]
fn a_change_lays_out_again_exactly_the_entries_it_touched() {
    let width = 90;
    let cases: Vec<(&str, Mutation, Vec<usize>)> = vec![
        // Entries: turn t (1…4) is 5(t-1) + 0 prompt, 1 checkpoint, 2 answer, 3 tool, 4 answer.
        (
            "a delta",
            Box::new(|a: &mut App| {
                feed(
                    a,
                    Event::AssistantDelta {
                        item_id: Some("m4b".into()),
                        text: "x".into(),
                    },
                );
            }),
            vec![19],
        ),
        (
            "a line of the UI's own",
            Box::new(|a: &mut App| {
                feed(
                    a,
                    Event::Notice {
                        message: "n".into(),
                        retry: None,
                    },
                );
            }),
            vec![20],
        ),
        (
            "a call completed",
            Box::new(|a: &mut App| {
                feed(
                    a,
                    Event::ItemCompleted {
                        item: tool(
                            "m2a.0".into(),
                            2,
                            "Read src/y.rs".into(),
                            ToolStatus::Ok,
                            "y".into(),
                        ),
                    },
                );
            }),
            vec![8],
        ),
        (
            "a capture",
            Box::new(|a: &mut App| {
                feed(
                    a,
                    Event::ItemUpdated {
                        item: checkpoint(3, &["a"]),
                    },
                );
            }),
            vec![11],
        ),
        (
            "an item given again unchanged",
            Box::new(|a: &mut App| {
                feed(
                    a,
                    Event::ItemCompleted {
                        item: checkpoint(3, &[]),
                    },
                );
            }),
            vec![],
        ),
        (
            "the spinner",
            Box::new(|a: &mut App| {
                a.status.running = true;
                a.on_tick();
            }),
            vec![],
        ),
        ("a scroll", Box::new(|a: &mut App| a.chat.scroll = 3), vec![]),
        (
            "a new snapshot with the same content",
            Box::new(|a: &mut App| {
                a.on_snapshot(snapshot(items(4, "wörd"), 30));
            }),
            (0..20).collect(),
        ),
        (
            "the view generation",
            Box::new(|a: &mut App| a.chat.view_generation += 1),
            (0..20).collect(),
        ),
        (
            "colours",
            Box::new(|a: &mut App| a.no_color = true),
            (0..20).collect(),
        ),
    ];
    for (what, mutate, touched) in cases {
        let mut app = app(false);
        let mut state = ViewState::new();
        assert_fresh(&app, &mut state, width as u16, 30);
        mark(&mut state.chat);
        mutate(&mut app);
        let marks = marked(&app, &mut state.chat, width);
        let expect: Vec<bool> = (0..marks.len()).map(|i| !touched.contains(&i)).collect();
        assert_eq!(marks, expect, "{what}");
    }
    // A new width lays out everything again.
    let app = app(false);
    let mut state = ViewState::new();
    assert_fresh(&app, &mut state, 90, 30);
    mark(&mut state.chat);
    assert!(marked(&app, &mut state.chat, 91).iter().all(|m| !m));
}

#[test]
fn streaming_and_resizing_draw_what_a_fresh_layout_draws() {
    let mut app = app(true);
    let mut state = ViewState::new();
    feed(
        &mut app,
        Event::TurnStarted {
            session_id: SessionId::new("s"),
            head_id: HeadId::main(),
            turn: 5,
            prompt: "stream".into(),
        },
    );
    feed(
        &mut app,
        Event::ItemStarted {
            item: text("s".into(), 5, String::new()),
        },
    );
    let sizes = [(90, 30), (90, 30), (41, 10), (120, 40), (200, 12), (90, 30)];
    for i in 0..120 {
        let text = match i % 7 {
            0 => "\n".to_string(),
            1 => "漢字 ".to_string(),
            2 => "\u{1b}[2J ".to_string(),
            _ => format!("word{i} "),
        };
        if i % 30 == 29 {
            feed(
                &mut app,
                Event::ReasoningDelta {
                    item_id: Some("s".into()),
                    text: "hm\n".into(),
                },
            );
        }
        feed(
            &mut app,
            Event::AssistantDelta {
                item_id: Some("s".into()),
                text,
            },
        );
        app.on_tick();
        app.chat.scroll = i % 5;
        let (w, h) = sizes[i % sizes.len()];
        assert_fresh(&app, &mut state, w, h);
    }
}

/// A long streamed answer is kept in pieces (only the newest changes as it grows) and draws
/// exactly as the same answer in one piece.
#[test]
fn a_long_streamed_answer_draws_as_the_whole() {
    let words: String = (0..4000)
        .map(|i| {
            if i % 37 == 36 {
                format!("w{i}\n\n")
            } else if i % 11 == 10 {
                format!("**w{i}**\n")
            } else {
                format!("w{i} ")
            }
        })
        .collect();
    let mut streamed = app(true);
    streamed.transcript.push_local(Entry::Notice { text: "-".into() });
    let before = streamed.transcript().entries().len();
    feed(
        &mut streamed,
        Event::ItemStarted {
            item: text("long".into(), 5, String::new()),
        },
    );
    let mut first_piece = None;
    for chunk in words.as_bytes().chunks(97) {
        feed(
            &mut streamed,
            Event::AssistantDelta {
                item_id: Some("long".into()),
                text: String::from_utf8(chunk.to_vec()).unwrap(),
            },
        );
        let entries = &streamed.transcript().entries()[before..];
        if entries.len() >= 2 {
            // Once a piece is followed by another, it never changes again.
            let revision = entries[0].revision;
            assert_eq!(*first_piece.get_or_insert(revision), revision);
        }
    }
    let pieces = streamed.transcript().entries().len() - before;
    assert!(pieces >= 2, "{pieces} piece(s)");
    let t = Theme::new(true);
    for w in [80, 33] {
        let drawn: Vec<Line> = streamed.transcript().entries()[before..]
            .iter()
            .flat_map(|s| chat::entry_rows(&s.entry, false, t, w))
            .collect();
        let whole = chat::entry_rows(&Entry::Text { text: words.clone() }, false, t, w);
        assert!(
            drawn == whole,
            "at width {w}: {} rows streamed, {} whole",
            drawn.len(),
            whole.len()
        );
    }
}
