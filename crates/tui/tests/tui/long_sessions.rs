//! Long sessions through the state machine: `/compact` and its line, an automatic compaction in
//! the middle of a turn (the new head's snapshot, then the events after it: the turn's items
//! once each), a snapshot answered after the turn it saw running ended, plan mode shown and
//! toggled, and snapshots of the screens.

use insta::assert_snapshot;
use retrace_protocol::{
    Event, HeadId, HeadRef, Item, ItemBody, JobKind, NoteItem, NoteKind, RunningJob, SessionId,
    SessionSnapshot, SessionUsage, SummarizeDirection, TokenUsage, ToolStatus,
};
use retrace_tui::transcript::Entry;
use retrace_tui::{App, Effect};

use crate::fixtures::*;

const SESSION: &str = "0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41";
const LINE: &str = "compacted: about 5200 → 800 tokens; the full conversation stays a version (/heads)";

fn summary(id: &str, text: &str) -> Item {
    Item {
        id: id.into(),
        turn: None,
        body: ItemBody::Note(NoteItem {
            note: NoteKind::Compaction,
            text: format!("Earlier conversation summarized:\n{text}"),
        }),
    }
}

/// The summary head's items: the summary, then turn 1 as it was.
fn summary_snapshot(seq: u64) -> SessionSnapshot {
    let mut items = vec![summary("m9", "a tokenizer in src/lib.rs.")];
    items.extend(crate::fixtures::items().into_iter().skip(4));
    let mut snap = snapshot_of(items, "h4", seq);
    // the controller's tally: the compaction's estimate of the new head
    snap.usage = demo_tally(TokenUsage::default(), Some(800));
    snap
}

/// What the chat draws, entry by entry.
pub(crate) fn texts(app: &App) -> Vec<String> {
    app.transcript()
        .entries()
        .iter()
        .filter_map(|s| match &s.entry {
            Entry::Prompt { text } => Some(format!("user: {text}")),
            Entry::Checkpoint { turn, checkpoint } => {
                Some(format!("checkpoint {turn}: {} file(s)", checkpoint.files.len()))
            }
            Entry::Text { text } if text.is_empty() => None,
            Entry::Text { text } => Some(format!("assistant: {text}")),
            Entry::Reasoning { text } => Some(format!("reasoning: {text}")),
            Entry::Tool { call, .. } => Some(format!("tool {} {}", call.title, call.status.as_str())),
            Entry::Note { text } => Some(format!("note: {text}")),
            Entry::Notice { text } => Some(format!("notice: {text}")),
            Entry::Error { text } => Some(format!("error: {text}")),
            Entry::Info { rows } => Some(format!("info: {} row(s)", rows.len())),
            Entry::Restore { text } => Some(format!("restore: {text}")),
        })
        .collect()
}

/// `/compact` on the two-turn fixture, answered as the controller answers it.
fn compacted() -> App {
    let mut app = app_with_turns();
    type_text(&mut app, "/compact", Clock::new().at(0));
    assert_eq!(
        app.on_key(key(ratatui::crossterm::event::KeyCode::Enter), Clock::new().at(1)),
        vec![Effect::Compact]
    );
    app.feed(Event::SummaryStarted {
        turn: 1,
        direction: SummarizeDirection::UpTo,
    });
    assert!(app.status().running && app.status().compacting);
    assert!(app
        .message()
        .is_some_and(|m| m.contains("compacting the turns before turn 1")));
    assert_eq!(
        app.feed(Event::HeadChanged {
            head_id: HeadId::new("h4")
        }),
        vec![Effect::LoadSnapshot]
    );
    // One snapshot is on its way: the next events that need one do not ask again.
    assert!(app
        .feed(Event::Compacted {
            head_id: HeadId::new("h4"),
            from_head: HeadId::main(),
            turn: 1,
            automatic: false,
            before_tokens: 5200,
            after_tokens: 800,
        })
        .is_empty());
    // the controller's tally after it: the compaction's estimate is the new head's context
    app.feed(Event::Usage {
        usage: demo_tally(TokenUsage::default(), Some(800)),
    });
    assert!(app
        .feed(Event::SummaryFinished {
            turn: 1,
            ok: true,
            head_id: Some(HeadId::new("h4")),
            error: None,
        })
        .is_empty());
    let r = HeadRef {
        head_id: HeadId::new("h4"),
        session_id: SessionId::new(SESSION),
        title: String::new(),
    };
    app.on_compact_done(&r);
    // The snapshot, taken after the last event.
    app.on_snapshot(summary_snapshot(app.last_event_seq()));
    app
}

#[test]
fn compact_shows_the_summary_head_and_says_how_much_smaller() {
    let app = compacted();
    assert!(!app.status().running && !app.status().compacting);
    assert_eq!(app.status().head, "h4");
    assert_eq!(app.message(), Some(LINE));
    assert_eq!(
        texts(&app),
        [
            "note: Earlier conversation summarized:\na tokenizer in src/lib.rs.",
            "user: make the parser accept tabs\nand add a test",
            "checkpoint 1: 2 file(s)",
            "assistant: Tabs are accepted now. I ran the tests:\n\tall 3 pass.",
        ]
    );
    assert_snapshot!(render(&app, 80, 16));
}

/// The status line's context, tokens and cost are the controller's tally: a snapshot's, then
/// each `usage` event's, in its words; nothing once the conversation is empty (a rewind to before
/// its first turn, whose snapshot says none).
#[test]
fn the_status_line_shows_the_controllers_tally() {
    let mut app = app();
    let mut snap = snapshot();
    let spent = TokenUsage {
        prompt_tokens: 5_000,
        completion_tokens: 100,
        total_tokens: 5_100,
        cached_tokens: 0,
    };
    snap.usage = SessionUsage::new(spent, Some(0.0007), None, Some(5_100), Some(65_536));
    app.on_snapshot(snap);
    assert_eq!(app.status().usage.context_tokens, Some(5_100));
    let line = rows(&app, 80, 24).pop().unwrap();
    for part in ["7% context", "5.0k in 100 out", "$0.0007"] {
        assert!(line.contains(part), "{part} missing: {line}");
    }
    // a request counted: the event's tally replaces the snapshot's (nothing is added up here)
    let more = TokenUsage {
        prompt_tokens: 12_000,
        completion_tokens: 300,
        total_tokens: 12_300,
        cached_tokens: 0,
    };
    app.feed(Event::Usage {
        usage: SessionUsage::new(more, None, None, Some(7_200), Some(65_536)),
    });
    let line = rows(&app, 80, 24).pop().unwrap();
    assert!(line.contains("10% context · 12.0k in 300 out"), "{line}");
    assert!(!line.contains('$'), "no price known, no cost: {line}");

    let mut app = app_with_turns();
    let mut snap = snapshot();
    snap.usage = SessionUsage::new(spent, None, None, Some(5_100), Some(65_536));
    app.on_snapshot(snap);
    app.on_snapshot(snapshot_of(Vec::new(), "h2", 20));
    assert_eq!(app.status().usage.context_tokens, None);
    assert!(!rows(&app, 80, 24).last().unwrap().contains("context"));
}

/// Found by the whole flow: the answer to `/compact` can come before the job's events; the
/// status line still says how much smaller the context got, not "summary written".
#[test]
fn the_compaction_line_stays_when_the_answer_comes_first() {
    let mut app = app_with_turns();
    type_text(&mut app, "/compact", Clock::new().at(0));
    app.on_key(key(ratatui::crossterm::event::KeyCode::Enter), Clock::new().at(1));
    app.feed(Event::SummaryStarted {
        turn: 1,
        direction: SummarizeDirection::UpTo,
    });
    app.on_compact_done(&HeadRef {
        head_id: HeadId::new("h4"),
        session_id: SessionId::new(SESSION),
        title: String::new(),
    });
    assert!(app.status().compacting, "its events have not come yet");
    app.feed(Event::HeadChanged {
        head_id: HeadId::new("h4"),
    });
    app.feed(Event::Compacted {
        head_id: HeadId::new("h4"),
        from_head: HeadId::main(),
        turn: 1,
        automatic: false,
        before_tokens: 5200,
        after_tokens: 800,
    });
    app.feed(Event::SummaryFinished {
        turn: 1,
        ok: true,
        head_id: Some(HeadId::new("h4")),
        error: None,
    });
    assert!(!app.status().compacting && !app.status().running);
    assert_eq!(app.message(), Some(LINE));
}

/// The turn's events up to a compaction, from `seq` 11 on: its prompt, an answer with a read,
/// a notice, the compaction (head `h5`), and the start of the next answer.
fn turn_until_compaction(app: &mut App) {
    app.feed(Event::TurnStarted {
        session_id: SessionId::new(SESSION),
        head_id: HeadId::main(),
        turn: 2,
        prompt: "third prompt".into(),
    });
    app.feed(Event::ItemStarted {
        item: prompt("m20", 2, "third prompt"),
    });
    app.feed(Event::ItemStarted {
        item: checkpoint(2, &[]),
    });
    app.feed(Event::ItemStarted {
        item: answer("m21", 2, ""),
    });
    app.feed(Event::AssistantDelta {
        item_id: Some("m21".into()),
        text: "Reading.".into(),
    });
    app.feed(Event::ItemCompleted {
        item: answer("m21", 2, "Reading."),
    });
    app.feed(Event::ItemStarted {
        item: tool(
            "m21.0",
            2,
            "read_file",
            "Read src/lib.rs",
            ToolStatus::Running,
            "",
        ),
    });
    app.feed(Event::ItemCompleted {
        item: tool(
            "m21.0",
            2,
            "read_file",
            "Read src/lib.rs",
            ToolStatus::Ok,
            "pub fn tokens() {}",
        ),
    });
    app.feed(Event::Notice {
        message: "the context is nearly full: summarizing the turns before this one".into(),
        retry: None,
    });
}

/// The new head's items at event `seq`: the summary, and turn 2 as far as it came.
fn mid_turn_snapshot(seq: u64, streamed: &str) -> SessionSnapshot {
    let mut snap = snapshot_of(
        vec![
            summary("m19", "turns 0 and 1."),
            prompt("m20", 2, "third prompt"),
            checkpoint(2, &[]),
            answer("m21", 2, "Reading."),
            tool(
                "m21.0",
                2,
                "read_file",
                "Read src/lib.rs",
                ToolStatus::Ok,
                "pub fn tokens() {}",
            ),
            answer("m22", 2, streamed),
        ],
        "h5",
        seq,
    );
    snap.status.running = Some(RunningJob {
        kind: JobKind::Turn,
        turn: 2,
    });
    snap
}

#[test]
fn an_automatic_compaction_mid_turn_shows_the_turn_once() {
    let mut app = app_with_turns();
    turn_until_compaction(&mut app);
    assert_eq!(
        app.feed(Event::HeadChanged {
            head_id: HeadId::new("h5")
        }),
        vec![Effect::LoadSnapshot]
    );
    app.feed(Event::Compacted {
        head_id: HeadId::new("h5"),
        from_head: HeadId::main(),
        turn: 2,
        automatic: true,
        before_tokens: 9000,
        after_tokens: 700,
    });
    app.feed(Event::ItemStarted {
        item: answer("m22", 2, ""),
    });
    let taken = app.last_event_seq();
    // The answer streams on before the snapshot arrives.
    app.feed(Event::AssistantDelta {
        item_id: Some("m22".into()),
        text: "Still".into(),
    });
    let still = taken + 1;

    // The snapshot (taken before "Still"), then the events after it, delivered again.
    app.on_snapshot(mid_turn_snapshot(taken, ""));
    app.on_event(
        still,
        Event::AssistantDelta {
            item_id: Some("m22".into()),
            text: "Still".into(),
        },
    );
    app.on_event(
        still + 1,
        Event::AssistantDelta {
            item_id: Some("m22".into()),
            text: " going.".into(),
        },
    );
    let expected = [
        "note: Earlier conversation summarized:\nturns 0 and 1.",
        "user: third prompt",
        "checkpoint 2: 0 file(s)",
        "assistant: Reading.",
        "tool Read src/lib.rs ok",
        "notice: the context is nearly full: summarizing the turns before this one",
        "assistant: Still going.",
    ];
    assert_eq!(texts(&app), expected);
    assert!(app.status().running, "the turn still runs");
    assert_eq!(app.status().head, "h5");
    assert!(app
        .message()
        .is_some_and(|m| m.starts_with("compacted automatically: about 9000 → 700 tokens")));

    // A second snapshot of the same changes nothing.
    app.on_snapshot(mid_turn_snapshot(still + 1, "Still going."));
    assert_eq!(texts(&app), expected);
}

#[test]
fn a_snapshot_answered_after_the_turn_ended_is_brought_up_to_date() {
    let mut app = app_with_turns();
    app.feed(Event::TurnStarted {
        session_id: SessionId::new(SESSION),
        head_id: HeadId::main(),
        turn: 2,
        prompt: "third prompt".into(),
    });
    app.feed(Event::ItemStarted {
        item: prompt("m20", 2, "third prompt"),
    });
    app.feed(Event::ItemStarted {
        item: answer("m21", 2, ""),
    });
    app.feed(Event::AssistantDelta {
        item_id: Some("m21".into()),
        text: "Half".into(),
    });
    assert_eq!(
        app.feed(Event::HeadChanged {
            head_id: HeadId::new("h5")
        }),
        vec![Effect::LoadSnapshot]
    );
    let taken = app.last_event_seq();
    let after = [
        Event::AssistantDelta {
            item_id: Some("m21".into()),
            text: " and whole.".into(),
        },
        Event::ItemCompleted {
            item: answer("m21", 2, "Half and whole."),
        },
        Event::Usage {
            usage: SessionUsage::new(
                TokenUsage {
                    prompt_tokens: 90,
                    completion_tokens: 10,
                    total_tokens: 100,
                    cached_tokens: 0,
                },
                None,
                None,
                None,
                None,
            ),
        },
        Event::TurnFinished {
            turn: 2,
            ok: true,
            error: None,
            usage: Some(TokenUsage {
                prompt_tokens: 90,
                completion_tokens: 10,
                total_tokens: 100,
                cached_tokens: 0,
            }),
        },
    ];
    for e in after.clone() {
        app.feed(e);
    }
    assert!(!app.status().running);
    assert_eq!(app.status().usage.input_tokens, 90);

    // The snapshot, taken while the turn ran, comes now: it is the truth as of its number…
    let mut snap = snapshot_of(
        vec![
            summary("m19", "Summary."),
            prompt("m20", 2, "third prompt"),
            answer("m21", 2, "Half"),
        ],
        "h5",
        taken,
    );
    snap.status.running = Some(RunningJob {
        kind: JobKind::Turn,
        turn: 2,
    });
    app.on_snapshot(snap);
    assert!(app.status().running);
    // … and the events after it, delivered again, bring it to now: the whole answer once, the
    // turn over, its tally as the controller said it.
    for (k, e) in after.into_iter().enumerate() {
        app.on_event(taken + 1 + k as u64, e);
    }
    assert_eq!(
        texts(&app),
        [
            "note: Earlier conversation summarized:\nSummary.",
            "user: third prompt",
            "assistant: Half and whole.",
        ]
    );
    assert!(!app.status().running);
    assert_eq!(app.status().usage.input_tokens, 90);
    // Events already shown are dropped.
    assert!(app
        .on_event(
            taken,
            Event::HeadChanged {
                head_id: HeadId::new("h6")
            }
        )
        .is_empty());
    assert_eq!(app.status().head, "h5");
}

#[test]
fn the_status_line_says_plan_while_plan_mode_is_on() {
    let mut app = app_with_turns();
    app.feed(Event::PlanMode { on: true });
    assert!(app.plan_mode());
    assert_snapshot!("plan_mode_on", render(&app, 80, 12));
    app.feed(Event::PlanMode { on: false });
    assert!(!render(&app, 80, 12).to_string().contains("PLAN"));
}
