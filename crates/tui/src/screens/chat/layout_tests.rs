//! The kept layout against a layout made from nothing, after every kind of change.

use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::text::Line;
use ratatui::Terminal;
use retrace_protocol::{Event, HeadId, MessageId, Role, SessionId, ToolCall, TranscriptEntry};

use super::ChatLayout;
use crate::app::{App, AppOptions};
use crate::screens::chat::draw as chat;
use crate::status::StatusInfo;
use crate::view::ViewState;

fn entry(n: usize, role: Role, content: &str) -> TranscriptEntry {
    TranscriptEntry {
        id: MessageId::new(format!("m{n}")),
        role,
        content: content.to_string(),
        tool_calls: None,
        tool_call_id: None,
        turn: None,
        usage: None,
    }
}

/// A system prompt, then `turns` turns: a prompt, an answer with a call, its result, an answer.
fn entries(turns: usize, word: &str) -> Vec<TranscriptEntry> {
    let mut out = vec![entry(0, Role::System, "instructions")];
    for t in 1..=turns {
        let mut user = entry(
            out.len(),
            Role::User,
            &format!("prompt {t}: {}", word.repeat(t * 7)),
        );
        user.turn = Some(t as u64);
        out.push(user);
        let mut call = entry(out.len(), Role::Assistant, &format!("{word} ").repeat(40));
        call.tool_calls = Some(vec![ToolCall {
            id: format!("c{t}"),
            name: "read_file".into(),
            arguments: format!(r#"{{"path":"src/{word}{t}.rs"}}"#),
        }]);
        out.push(call);
        let mut result = entry(out.len(), Role::Tool, &"line\n".repeat(t * 3));
        result.tool_call_id = Some(format!("c{t}"));
        out.push(result);
        out.push(entry(
            out.len(),
            Role::Assistant,
            &format!("done {t}\n\n{}", word.repeat(90)),
        ));
    }
    out
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
    app.on_transcript(&entries(4, "wörd"));
    app
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
            "push",
            Box::new(|a: &mut App| {
                a.on_event(Event::Notice {
                    message: "a notice\nof two lines".into(),
                    retry: None,
                });
            }),
        ),
        (
            "assistant_delta continuing the last answer",
            Box::new(|a: &mut App| {
                a.on_event(Event::AssistantDelta {
                    item_id: None,
                    text: " more words".repeat(20),
                });
            }),
        ),
        (
            "assistant_delta starting an answer",
            Box::new(|a: &mut App| {
                a.on_event(Event::Error { message: "e".into() });
                a.on_event(Event::AssistantDelta {
                    item_id: None,
                    text: "new".into(),
                });
            }),
        ),
        (
            "reasoning_delta",
            Box::new(|a: &mut App| {
                a.on_event(Event::ReasoningDelta {
                    item_id: None,
                    text: "first\n".into(),
                });
                a.on_event(Event::ReasoningDelta {
                    item_id: None,
                    text: "second\nthird".into(),
                });
            }),
        ),
        (
            "tool_result on an earlier call",
            Box::new(|a: &mut App| {
                a.on_event(Event::ToolResult {
                    id: "c2".into(),
                    name: "read_file".into(),
                    ok: false,
                    content: "x\n".repeat(500),
                });
            }),
        ),
        (
            "captured on an earlier turn",
            Box::new(|a: &mut App| {
                a.on_event(Event::CheckpointCaptured {
                    turn: 1,
                    paths: vec!["a".into(), "b".into()],
                    gaps: Vec::new(),
                });
            }),
        ),
        (
            "a turn starting and running (the spinner)",
            Box::new(|a: &mut App| {
                a.on_event(Event::TurnStarted {
                    session_id: SessionId::new("s"),
                    head_id: HeadId::main(),
                    turn: 5,
                    prompt: "next".into(),
                });
                a.on_tick();
            }),
        ),
        (
            "a transcript of the same length replacing it",
            Box::new(|a: &mut App| {
                a.on_transcript(&entries(4, "other"));
            }),
        ),
        (
            "a shorter transcript replacing it",
            Box::new(|a: &mut App| {
                a.on_transcript(&entries(2, "short"));
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

/// Replaces every kept item's rows with a marker, so what is laid out again shows.
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

/// Which items' kept rows are still the marker after an update at `width`.
fn marked(app: &App, l: &mut ChatLayout, width: usize) -> Vec<bool> {
    l.update(app, width);
    l.items.iter().map(|k| k.rows == [Line::raw("MARK")]).collect()
}

#[test]
fn a_change_lays_out_again_exactly_the_items_it_touched() {
    let width = 90;
    let cases: Vec<(&str, Mutation, Vec<usize>)> = vec![
        // Items: 0 user, 1 answer, 2 tool, 3 answer, 4 user, … 15 answer.
        (
            "a delta",
            Box::new(|a: &mut App| {
                a.on_event(Event::AssistantDelta {
                    item_id: None,
                    text: "x".into(),
                });
            }),
            vec![15],
        ),
        (
            "a new item",
            Box::new(|a: &mut App| {
                a.on_event(Event::Notice {
                    message: "n".into(),
                    retry: None,
                });
            }),
            vec![16],
        ),
        (
            "a tool result",
            Box::new(|a: &mut App| {
                a.on_event(Event::ToolResult {
                    id: "c2".into(),
                    name: "read_file".into(),
                    ok: true,
                    content: "y".into(),
                });
            }),
            vec![6],
        ),
        (
            "a capture",
            Box::new(|a: &mut App| {
                a.on_event(Event::CheckpointCaptured {
                    turn: 3,
                    paths: vec!["a".into()],
                    gaps: Vec::new(),
                });
            }),
            vec![8],
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
            "a new transcript with the same content",
            Box::new(|a: &mut App| {
                a.on_transcript(&entries(4, "wörd"));
            }),
            (0..16).collect(),
        ),
        (
            "the view generation",
            Box::new(|a: &mut App| a.chat.view_generation += 1),
            (0..16).collect(),
        ),
        (
            "colours",
            Box::new(|a: &mut App| a.no_color = true),
            (0..16).collect(),
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
    app.on_event(Event::TurnStarted {
        session_id: SessionId::new("s"),
        head_id: HeadId::main(),
        turn: 5,
        prompt: "stream".into(),
    });
    let sizes = [(90, 30), (90, 30), (41, 10), (120, 40), (200, 12), (90, 30)];
    for i in 0..120 {
        let text = match i % 7 {
            0 => "\n".to_string(),
            1 => "漢字 ".to_string(),
            2 => "\u{1b}[2J ".to_string(),
            _ => format!("word{i} "),
        };
        if i % 30 == 29 {
            app.on_event(Event::ReasoningDelta {
                item_id: None,
                text: "hm\n".into(),
            });
        }
        app.on_event(Event::AssistantDelta { item_id: None, text });
        app.on_tick();
        app.chat.scroll = i % 5;
        let (w, h) = sizes[i % sizes.len()];
        assert_fresh(&app, &mut state, w, h);
    }
}

/// A long streamed answer is kept in pieces (only the newest is wrapped again per frame) and
/// draws exactly as the same answer stored whole.
#[test]
fn a_long_streamed_answer_draws_as_the_whole() {
    use retrace_protocol::Event;
    let words: String = (0..4000)
        .map(|i| {
            if i % 37 == 36 {
                format!("w{i}\n")
            } else {
                format!("w{i} ")
            }
        })
        .collect();
    let base = || {
        let mut a = app(true);
        a.transcript
            .push(crate::transcript::Item::System { text: "-".into() });
        a
    };
    let mut streamed = base();
    for chunk in words.as_bytes().chunks(97) {
        streamed.on_event(Event::AssistantDelta {
            item_id: None,
            text: String::from_utf8(chunk.to_vec()).unwrap(),
        });
    }
    let before = base().transcript().items().len();
    let pieces = streamed.transcript().items().len() - before;
    assert!(pieces >= 2, "{pieces} item(s)");
    let mut whole = base();
    whole
        .transcript
        .push(crate::transcript::Item::Assistant { text: words });
    assert_eq!(whole.transcript().items().len() - before, 1);
    for w in [80, 33] {
        let (a, b) = (chat::rows(&streamed, w), chat::rows(&whole, w));
        assert!(
            a == b,
            "at width {w}: {} rows streamed, {} whole",
            a.len(),
            b.len()
        );
    }
}
