//! Long sessions through the state machine: `/compact` and its line, an automatic compaction in
//! the middle of a turn (the reload keeps the turn's streamed items, once each), plan mode shown
//! and toggled, and snapshots of both.

use insta::assert_snapshot;
use retrace_protocol::{
    Event, HeadId, HeadRef, Role, SessionId, SummarizeDirection, ToolCall, TranscriptEntry,
};
use retrace_tui::transcript::Item;
use retrace_tui::{App, Effect};

use crate::fixtures::*;

const SESSION: &str = "0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41";
const LINE: &str = "compacted: about 5200 → 800 tokens; the full conversation stays a version (/heads)";

/// The summary head's stored messages: the system prompt, the summary, then turn 1 as it was.
fn summary_transcript() -> Vec<TranscriptEntry> {
    let full = transcript();
    let mut out = vec![
        full[0].clone(),
        msg("m9", Role::User, "Summary: a tokenizer in src/lib.rs."),
    ];
    out.extend(full[5..].iter().cloned());
    out
}

fn texts(app: &App) -> Vec<String> {
    app.transcript()
        .items()
        .iter()
        .map(|i| match i {
            Item::User { text, .. } => format!("user: {text}"),
            Item::Assistant { text } => format!("assistant: {text}"),
            Item::Reasoning { text } => format!("reasoning: {text}"),
            Item::Tool { id, ok, .. } => format!("tool {id} {ok:?}"),
            Item::System { text } => format!("system: {text}"),
            Item::Error { text } => format!("error: {text}"),
        })
        .collect()
}

/// `/compact` on the two-turn fixture, answered as the controller answers it.
fn compacted() -> App {
    let mut app = app();
    app.on_transcript(&transcript());
    type_text(&mut app, "/compact", Clock::new().at(0));
    assert_eq!(
        app.on_key(key(ratatui::crossterm::event::KeyCode::Enter), Clock::new().at(1)),
        vec![Effect::Compact]
    );
    app.on_event(Event::SummaryStarted {
        turn: 1,
        direction: SummarizeDirection::UpTo,
    });
    assert!(app.status().running && app.status().compacting);
    assert!(texts(&app)
        .last()
        .unwrap()
        .contains("compacting the turns before turn 1"));
    assert_eq!(
        app.on_event(Event::HeadChanged {
            head_id: HeadId::new("h4")
        }),
        vec![Effect::LoadTranscript]
    );
    app.on_event(Event::Compacted {
        head_id: HeadId::new("h4"),
        from_head: HeadId::main(),
        turn: 1,
        automatic: false,
        before_tokens: 5200,
        after_tokens: 800,
    });
    assert_eq!(
        app.on_event(Event::SummaryFinished {
            turn: 1,
            ok: true,
            head_id: Some(HeadId::new("h4")),
            error: None,
        }),
        vec![Effect::LoadTranscript]
    );
    let r = HeadRef {
        head_id: HeadId::new("h4"),
        session_id: SessionId::new(SESSION),
    };
    assert_eq!(app.on_compact_done(&r), vec![Effect::LoadTranscript]);
    // Three reloads asked for; each gives the same transcript.
    app.on_transcript(&summary_transcript());
    app.on_transcript(&summary_transcript());
    app
}

#[test]
fn compact_reloads_the_summary_head_and_says_how_much_smaller() {
    let app = compacted();
    assert!(!app.status().running && !app.status().compacting);
    assert_eq!(app.status().head, "h4");
    assert_eq!(app.message(), Some(LINE));
    assert_eq!(
        texts(&app),
        [
            "user: Summary: a tokenizer in src/lib.rs.".to_string(),
            "user: make the parser accept tabs\nand add a test".to_string(),
            "assistant: Tabs are accepted now. I ran the tests:\n\tall 3 pass.".to_string(),
            format!("system: {LINE}"),
        ]
    );
    assert_snapshot!(render(&app, 80, 16));
}

#[test]
fn an_automatic_compaction_mid_turn_keeps_the_streamed_items_once() {
    let mut app = app();
    app.on_transcript(&transcript());
    app.on_event(Event::TurnStarted {
        session_id: SessionId::new(SESSION),
        head_id: HeadId::main(),
        turn: 2,
        prompt: "third prompt".into(),
    });
    app.on_event(Event::AssistantDelta {
        item_id: None,
        text: "Reading.".into(),
    });
    app.on_event(Event::ToolCall {
        id: "c9".into(),
        name: "read_file".into(),
        arguments: r#"{"path":"src/lib.rs"}"#.into(),
    });
    app.on_event(Event::ToolResult {
        id: "c9".into(),
        name: "read_file".into(),
        ok: true,
        content: "pub fn tokens() {}".into(),
    });
    app.on_event(Event::Notice {
        message: "the context is nearly full: summarizing the turns before this one".into(),
        retry: None,
    });
    assert_eq!(
        app.on_event(Event::HeadChanged {
            head_id: HeadId::new("h5")
        }),
        vec![Effect::LoadTranscript]
    );
    assert!(app
        .on_event(Event::Compacted {
            head_id: HeadId::new("h5"),
            from_head: HeadId::main(),
            turn: 2,
            automatic: true,
            before_tokens: 9000,
            after_tokens: 700,
        })
        .is_empty());
    // The answer streams on before the reload arrives.
    app.on_event(Event::AssistantDelta {
        item_id: None,
        text: "Still".into(),
    });

    // The stored messages of the new head: the summary, and turn 2 so far (without what is
    // still streaming).
    let mut prompt = msg("m20", Role::User, "third prompt");
    prompt.turn = Some(2);
    let mut call = msg("m21", Role::Assistant, "Reading.");
    call.tool_calls = Some(vec![ToolCall {
        id: "c9".into(),
        name: "read_file".into(),
        arguments: r#"{"path":"src/lib.rs"}"#.into(),
    }]);
    let mut result = msg("m22", Role::Tool, "pub fn tokens() {}");
    result.tool_call_id = Some("c9".into());
    let stored = vec![
        msg("s", Role::System, "You are a coding agent."),
        msg("m19", Role::User, "Summary of turns 0 and 1."),
        prompt,
        call,
        result,
    ];
    app.on_transcript(&stored);
    app.on_event(Event::AssistantDelta {
        item_id: None,
        text: " going.".into(),
    });
    let line =
        "compacted automatically: about 9000 → 700 tokens; the full conversation stays a version (/heads)";
    let expected = [
        "user: Summary of turns 0 and 1.".to_string(),
        "user: third prompt".to_string(),
        "assistant: Reading.".to_string(),
        "tool c9 Some(true)".to_string(),
        "system: the context is nearly full: summarizing the turns before this one".to_string(),
        format!("system: {line}"),
        "assistant: Still going.".to_string(),
    ];
    assert_eq!(texts(&app), expected);
    assert!(app.status().running, "the turn still runs");
    assert_eq!(app.status().head, "h5");

    // A second reload (the same head) changes nothing.
    app.on_transcript(&stored);
    assert_eq!(texts(&app), expected);
}

#[test]
fn the_status_line_says_plan_while_plan_mode_is_on() {
    let mut app = app();
    app.on_transcript(&transcript());
    app.on_event(Event::PlanMode { on: true });
    assert!(app.plan_mode());
    assert_snapshot!("plan_mode_on", render(&app, 80, 12));
    app.on_event(Event::PlanMode { on: false });
    assert!(!render(&app, 80, 12).to_string().contains("PLAN"));
}

#[test]
fn a_reload_answered_after_the_turn_ended_is_followed_by_a_fresh_one() {
    let mut app = app();
    app.on_transcript(&transcript());
    app.on_event(Event::TurnStarted {
        session_id: SessionId::new(SESSION),
        head_id: HeadId::main(),
        turn: 2,
        prompt: "third prompt".into(),
    });
    app.on_event(Event::AssistantDelta {
        item_id: None,
        text: "Half".into(),
    });
    assert_eq!(
        app.on_event(Event::HeadChanged {
            head_id: HeadId::new("h5")
        }),
        vec![Effect::LoadTranscript]
    );
    app.on_event(Event::AssistantDelta {
        item_id: None,
        text: " and whole.".into(),
    });
    // The turn ends before the reload's answer: another reload is asked for.
    assert_eq!(
        app.on_event(Event::TurnFinished {
            turn: 2,
            ok: true,
            error: None,
            usage: None,
        }),
        vec![Effect::LoadTranscript]
    );
    // The first answer, taken mid-turn, lacks the end of the answer: the turn's items stay.
    let mut prompt = msg("m20", Role::User, "third prompt");
    prompt.turn = Some(2);
    let stale = vec![
        msg("s", Role::System, "You are a coding agent."),
        msg("m19", Role::User, "Summary."),
        prompt.clone(),
    ];
    app.on_transcript(&stale);
    let whole = [
        "user: Summary.".to_string(),
        "user: third prompt".to_string(),
        "assistant: Half and whole.".to_string(),
    ];
    assert_eq!(texts(&app), whole);
    // The fresh answer is the stored truth.
    let fresh = vec![
        msg("s", Role::System, "You are a coding agent."),
        msg("m19", Role::User, "Summary."),
        prompt,
        msg("m21", Role::Assistant, "Half and whole."),
    ];
    app.on_transcript(&fresh);
    assert_eq!(texts(&app), whole);
}
