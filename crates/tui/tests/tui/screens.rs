//! Snapshots of every screen (insta, `tests/tui/snapshots/`). A UI change comes with its diff.

use insta::assert_snapshot;
use ratatui::crossterm::event::KeyCode;
use retrace_protocol::{
    ActionKind, ChangeAction, Event, HeadEntry, HeadId, HeadKind, RewindScope, SessionId, SessionUsage,
    TokenUsage, ToolStatus,
};
use retrace_tui::App;

use crate::fixtures::*;

/// The app after two turns and a third one running (streaming, a tool call waiting).
fn chatting() -> App {
    let mut app = app_with_turns();
    let spent = TokenUsage {
        prompt_tokens: 1200,
        completion_tokens: 85,
        total_tokens: 1285,
        cached_tokens: 0,
    };
    // the tally as the controller says it (a demo model reporting tokens, without the context)
    app.feed(Event::Usage {
        usage: SessionUsage {
            says: vec!["1.2k in 85 out".into()],
            ..demo_tally(spent, None)
        },
    });
    app.feed(Event::TurnFinished {
        turn: 1,
        ok: true,
        error: None,
        usage: Some(spent),
    });
    app.feed(Event::TurnStarted {
        session_id: SessionId::new("0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41"),
        head_id: HeadId::main(),
        turn: 2,
        prompt: "now run \u{1b}[31mclippy\u{1b}[0m".into(),
    });
    app.feed(Event::ItemStarted {
        item: prompt("m6", 2, "now run \u{1b}[31mclippy\u{1b}[0m"),
    });
    app.feed(Event::ItemStarted {
        item: checkpoint(2, &[]),
    });
    app.feed(Event::ItemStarted {
        item: answer("m7", 2, ""),
    });
    app.feed(Event::ReasoningDelta {
        item_id: Some("m7".into()),
        text: "The user wants clippy.\nI should run it.".into(),
    });
    app.feed(Event::AssistantDelta {
        item_id: Some("m7".into()),
        text: "Running clippy".into(),
    });
    app.feed(Event::AssistantDelta {
        item_id: Some("m7".into()),
        text: " now.".into(),
    });
    app.feed(Event::ItemStarted {
        item: tool(
            "m7.0",
            2,
            "bash",
            "Run cargo clippy -- -D warnings",
            ToolStatus::Running,
            "",
        ),
    });
    app.feed(Event::ItemUpdated {
        item: checkpoint(2, &["src/lib.rs"]),
    });
    app.feed(Event::Notice {
        message: "model request retried (HTTP 429)".into(),
        retry: None,
    });
    app.on_tick();
    app
}

fn open_picker(app: &mut App) {
    let clock = Clock::new();
    app.on_key(key(KeyCode::Esc), clock.at(0));
    app.on_key(key(KeyCode::Esc), clock.at(100));
    app.on_checkpoints(&two_turns());
}

#[test]
fn chat_with_a_running_turn() {
    assert_snapshot!(render(&chatting(), 80, 24));
}

#[test]
fn picker_with_a_shell_gap() {
    let mut app = app_with_turns();
    open_picker(&mut app);
    assert_snapshot!(render(&app, 80, 20));
}

/// Each turn shows the `+A −R` the listing counts for it; a turn recorded before the counts were
/// kept shows none, nor does a turn that changed no line (it only moved files).
#[test]
fn picker_with_counts() {
    let clock = Clock::new();
    let mut app = app_with_turns();
    let mut l = two_turns();
    l.entries[1].added = Some(12);
    l.entries[1].removed = Some(3);
    l.entries
        .push(entry(2, "rename \u{1b}[2Jtokens", &["src/lib.rs"]));
    l.entries[2].added = Some(1);
    l.entries[2].removed = Some(1);
    l.entries.push(entry(3, "move the notes", &["a.md", "b.md"]));
    l.entries[3].added = Some(0);
    l.entries[3].removed = Some(0);
    app.on_key(key(KeyCode::Esc), clock.at(0));
    app.on_key(key(KeyCode::Esc), clock.at(100));
    app.on_checkpoints(&l);
    assert_snapshot!(render(&app, 100, 20));
}

#[test]
fn menu_with_a_disabled_action() {
    let clock = Clock::new();
    let mut app = app_with_turns();
    let mut l = two_turns();
    l.entries[0] = unavailable(
        l.entries[0].clone(),
        &[
            ActionKind::RestoreBoth,
            ActionKind::RestoreConversation,
            ActionKind::Fork,
            ActionKind::SummarizeFrom,
            ActionKind::SummarizeUpTo,
        ],
        "not on this head",
    );
    app.on_key(key(KeyCode::Esc), clock.at(0));
    app.on_key(key(KeyCode::Esc), clock.at(100));
    app.on_checkpoints(&l);
    app.on_key(key(KeyCode::Up), clock.at(200));
    app.on_key(key(KeyCode::Up), clock.at(300));
    app.on_key(key(KeyCode::Enter), clock.at(400));
    assert_snapshot!(render(&app, 80, 20));
}

#[test]
fn preview_with_conflicts_and_a_shell_gap() {
    let clock = Clock::new();
    let mut app = app_with_turns();
    open_picker(&mut app);
    app.on_key(key(KeyCode::Up), clock.at(200));
    app.on_key(key(KeyCode::Up), clock.at(300));
    app.on_key(key(KeyCode::Enter), clock.at(400));
    app.on_key(key(KeyCode::Char('3')), clock.at(500));
    app.on_plan(conflicted_plan());
    // Skip is preselected; Tab goes to overwrite, then to refuse, which cannot commit.
    app.on_key(key(KeyCode::Tab), clock.at(550));
    app.on_key(key(KeyCode::Tab), clock.at(560));
    app.on_key(key(KeyCode::Enter), clock.at(600)); // shows the hint: conflicts need a choice
    assert_snapshot!(render(&app, 80, 24));
}

#[test]
fn preview_of_a_conversation_rewind() {
    let clock = Clock::new();
    let mut app = app_with_turns();
    open_picker(&mut app);
    app.on_key(key(KeyCode::Up), clock.at(200));
    app.on_key(key(KeyCode::Enter), clock.at(300));
    app.on_key(key(KeyCode::Char('2')), clock.at(400));
    let mut p = plan(1, RewindScope::Conversation);
    p.prompt = "make the parser accept tabs\nand add a test".into();
    app.on_plan(p);
    assert_snapshot!(render(&app, 80, 20));
}

#[test]
fn preview_with_skip_picked() {
    let clock = Clock::new();
    let mut app = app_with_turns();
    open_picker(&mut app);
    app.on_key(key(KeyCode::Up), clock.at(200));
    app.on_key(key(KeyCode::Up), clock.at(300));
    app.on_key(key(KeyCode::Enter), clock.at(400));
    app.on_key(key(KeyCode::Char('1')), clock.at(500));
    let mut p = conflicted_plan();
    p.scope = RewindScope::Both;
    app.on_plan(p);
    app.on_key(key(KeyCode::Char('s')), clock.at(600));
    assert_snapshot!(render(&app, 80, 30));
}

#[test]
fn approval_modal() {
    let mut app = chatting();
    app.feed(Event::ApprovalRequested {
        note: Some("Retrace cannot take back what a shell command changes: its changes to files are not checkpointed, and a restore will list this command as a gap.".into()),
        prefixes: vec!["cargo clippy".into()],
        call_id: "c7".into(),
        tool: "bash".into(),
        command: "cargo clippy -- -D warnings".into(),
    });
    assert_snapshot!(render(&app, 80, 24));
}

#[test]
fn help() {
    let clock = Clock::new();
    let mut app = app();
    type_text(&mut app, "/help", clock.at(0));
    app.on_key(key(KeyCode::Enter), clock.at(1));
    assert_snapshot!(render(&app, 80, 24));
}

#[test]
fn heads() {
    let mut app = app();
    let head = |id: &str, kind, parent: Option<&str>, selected| HeadEntry {
        id: HeadId::new(id),
        kind,
        name: None,
        parent_head: parent.map(HeadId::new),
        fork_from: None,
        selected,
        retired: false,
        message_count: 6,
        turns: 2,
        last_activity: None,
        title: String::new(),
    };
    app.on_heads(vec![
        head("main", HeadKind::Main, None, false),
        head("h2", HeadKind::Rewind, Some("main"), true),
    ]);
    assert_snapshot!(render(&app, 60, 12));
}

#[test]
fn after_a_conversation_rewind() {
    let clock = Clock::new();
    let mut app = app_with_turns();
    open_picker(&mut app);
    app.on_key(key(KeyCode::Up), clock.at(200));
    app.on_key(key(KeyCode::Up), clock.at(300));
    app.on_key(key(KeyCode::Enter), clock.at(400));
    app.on_key(key(KeyCode::Char('1')), clock.at(500));
    app.on_plan(plan(0, RewindScope::Both));
    app.on_key(key(KeyCode::Char('y')), clock.at(600));
    app.on_result(&result(RewindScope::Both, &["src/lib.rs"], &["tests/parse.rs"]));
    assert_snapshot!(render(&app, 80, 16));
}

#[test]
fn narrow_terminal() {
    let mut app = chatting();
    assert_snapshot!("narrow_chat", render(&app, 40, 10));
    open_picker(&mut app);
    app.feed(Event::TurnFinished {
        turn: 2,
        ok: true,
        error: None,
        usage: None,
    });
    open_picker(&mut app);
    assert_snapshot!("narrow_picker", render(&app, 40, 10));
    assert_snapshot!("too_small", render(&app, 39, 9));
}

#[test]
fn details_show_diffs_outputs_and_reasoning() {
    let mut app = chatting();
    let output: String = (1..=30)
        .map(|i| format!("warning {i}: unused variable\n"))
        .collect();
    app.feed(Event::ItemCompleted {
        item: tool(
            "m7.0",
            2,
            "bash",
            "Run cargo clippy -- -D warnings",
            ToolStatus::Ok,
            &output,
        ),
    });
    let edit = with_changes(
        tool("m7.1", 2, "edit_file", "Edit src/lib.rs", ToolStatus::Running, ""),
        vec![change(
            ChangeAction::Modify,
            "src/lib.rs",
            "@@ -1,4 +1,4 @@\n fn parse(s: &str) {\n-    let x = 1;\n+    s.split('\\t').count();\n     todo!()\n }\n",
        )],
    );
    app.feed(Event::ItemStarted { item: edit.clone() });
    let mut done = edit;
    if let retrace_protocol::ItemBody::ToolCall(call) = &mut done.body {
        call.status = ToolStatus::Ok;
        call.output = "Edited `src/lib.rs`: replaced 1 occurrence.".into();
    }
    app.feed(Event::ItemCompleted { item: done });
    app.feed(Event::ItemStarted {
        item: tool(
            "m7.2",
            2,
            "delete_file",
            "Delete missing.txt",
            ToolStatus::Failed,
            "error: file not found: `missing.txt`",
        ),
    });
    assert_snapshot!("details_folded", render(&app, 80, 24));
    app.on_key(ctrl('o'), Clock::new().at(0));
    assert!(app.details());
    assert_snapshot!("details_shown", render(&app, 80, 40));
    app.on_key(ctrl('o'), Clock::new().at(0));
    assert!(!app.details());
}
