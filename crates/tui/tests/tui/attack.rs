//! Defects found by a hostile test of the terminal UI (branch `tui-attack`). Each test fails
//! until its defect is fixed; the report on the branch says how each was found through the real
//! binary.

use ratatui::crossterm::event::KeyCode;
use retrace_protocol::{
    Event, FileAction, HeadId, JobKind, PlanDiff, PlanFile, RewindScope, RunningJob, SessionId,
    SessionStatus, ToolStatus,
};
use retrace_tui::view::ViewState;
use retrace_tui::{escape, Effect, Screen};

use crate::fixtures::*;

/// The screen as plain text, one line per row.
fn text(app: &retrace_tui::App, w: u16, h: u16) -> String {
    let backend = render(app, w, h);
    let buf = backend.buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

/// A failed edit, shown live with ✗, was shown with ✓ (and, with Ctrl-O, with the diff it never
/// applied) once the transcript was loaded from the log: after `/switch`, `/sessions`, `-c`, a
/// rewind or its undo. The items carry the status the controller recorded; a snapshot shows it.
#[test]
fn a_stored_failed_tool_call_is_not_shown_as_a_success() {
    let mut app = app();
    let items = vec![
        prompt("m0", 0, "fix it"),
        checkpoint(0, &[]),
        tool(
            "m1.0",
            0,
            "edit_file",
            "Edit nope.txt",
            ToolStatus::Failed,
            "error: file not found: `nope.txt`; find files with glob or list_dir",
        ),
    ];
    app.on_snapshot(snapshot_of(items, "main", 3));
    let screen = text(&app, 100, 20);
    let line = screen
        .lines()
        .find(|l| l.contains("Edit nope.txt"))
        .expect("the tool line");
    assert!(
        !line.contains('✓') && line.contains("✗ failed"),
        "a failed call shows as a success:\n{screen}"
    );
}

/// PgUp (or the wheel) far past the top keeps counting: after 50 PgUp on a short transcript the
/// first 49 PgDn do nothing visible. `App::scroll` is never clamped to what can be scrolled.
#[test]
fn paging_past_the_top_does_not_swallow_the_way_back() {
    let clock = Clock::new();
    let mut app = app_with_turns();
    app.set_viewport(80, 12);
    frame(&mut app, &mut ViewState::new(), 80, 12); // the runtime draws before any key
    for _ in 0..50 {
        app.on_key(key(KeyCode::PageUp), clock.at(0));
    }
    let top = text(&app, 80, 12);
    app.on_key(key(KeyCode::PageDown), clock.at(1));
    let after = text(&app, 80, 12);
    assert_ne!(top, after, "one PgDn after paging past the top changed nothing");
}

/// One slot (`App::awaiting`) for every answer: a request made while another is in flight takes
/// the earlier answer for its own. A commit in flight, then `/undo`: the commit's result is
/// reported as "undone", the undo's result is dropped, and the status line stays on the rewind's
/// head (retired by the undo) while the controller is on `main`.
#[test]
fn an_answer_is_not_taken_for_another_request() {
    let clock = Clock::new();
    let mut app = app_with_turns();
    app.on_key(key(KeyCode::Esc), clock.at(0));
    app.on_key(key(KeyCode::Esc), clock.at(100));
    app.on_checkpoints(&two_turns());
    app.on_key(key(KeyCode::Up), clock.at(200));
    app.on_key(key(KeyCode::Up), clock.at(300));
    app.on_key(key(KeyCode::Enter), clock.at(400));
    app.on_key(key(KeyCode::Char('1')), clock.at(500));
    app.on_plan(plan(0, RewindScope::Both));
    let commit = app.on_key(key(KeyCode::Enter), clock.at(600));
    assert!(matches!(commit.as_slice(), [Effect::Commit(_)]), "{commit:?}");
    // Typed before the commit's answer came back.
    type_text(&mut app, "/undo", clock.at(700));
    let undo = app.on_key(key(KeyCode::Enter), clock.at(800));
    // It waits for the commit's answer: no second request whose answer could be mistaken.
    assert!(undo.is_empty(), "{undo:?}");
    assert!(
        app.message().is_some_and(|m| m.starts_with("wait")),
        "{:?}",
        app.message()
    );
    // The commit's answer (a new head h2), then the undo's (back on main).
    let committed = result(RewindScope::Both, &["src/lib.rs"], &[]);
    app.on_result(&committed);
    assert!(
        !app.message().unwrap_or("").starts_with("undone"),
        "the commit's result was reported as an undo: {:?}",
        app.message()
    );
    assert!(app
        .message()
        .is_some_and(|m| m.starts_with("rewound to before turn 0")));
    // Now /undo goes (the refilled prompt cleared first).
    app.on_key(key(KeyCode::Esc), clock.at(850));
    type_text(&mut app, "/undo", clock.at(900));
    let undo = app.on_key(key(KeyCode::Enter), clock.at(1000));
    assert!(matches!(undo.as_slice(), [Effect::Undo(_)]), "{undo:?}");
    let mut undone = result(RewindScope::Code, &["src/lib.rs"], &[]);
    undone.head_id = HeadId::main();
    app.on_result(&undone);
    assert_eq!(app.status().head, "main");
    assert!(app.message().is_some_and(|m| m.starts_with("undone")));
}

/// `escape::invisible` misses invisible characters that pass for nothing: tag characters
/// (U+E0000–E007F, "ASCII smuggling"), the Hangul fillers, the soft hyphen, the combining
/// grapheme joiner, variation selectors. A head named `prod` + U+E0041 shows as `prod` in
/// `/heads`; a file `a.txt` + U+E0041 shows as `a.txt` in the preview.
#[test]
fn invisible_characters_are_shown_escaped() {
    for c in [
        '\u{e0041}',
        '\u{e0001}',
        '\u{3164}',
        '\u{115f}',
        '\u{ffa0}',
        '\u{ad}',
        '\u{34f}',
        '\u{fe0f}',
    ] {
        let name = format!("prod{c}");
        let shown = escape::line(&name);
        assert_ne!(shown, name, "U+{:04X} reaches the terminal as it is", c as u32);
    }
}

/// The refusal to allow a command not yet read whole ("read the whole command first …") is
/// written to the message row, which the approval box covers on any terminal where the command
/// is long; once the command is answered the stale refusal shows under the chat.
#[test]
fn the_refusal_to_allow_an_unread_command_shows_and_then_goes() {
    let clock = Clock::new();
    let mut app = app();
    app.set_viewport(100, 40);
    let command = (0..200).map(|i| format!("echo line{i}\n")).collect::<String>();
    app.feed(Event::ApprovalRequested {
        note: None,
        prefixes: Vec::new(),
        call_id: "c1".into(),
        tool: "bash".into(),
        command,
    });
    app.on_drawn(clock.at(0));
    assert_eq!(app.on_key(key(KeyCode::Char('y')), clock.at(600)), vec![]);
    let screen = text(&app, 100, 40);
    assert!(
        screen.contains("read the whole command"),
        "the refusal is hidden under the box:\n{screen}"
    );
    for _ in 0..40 {
        app.on_key(key(KeyCode::PageDown), clock.at(700));
    }
    let _ = text(&app, 100, 40);
    app.on_key(key(KeyCode::Char('y')), clock.at(800));
    assert_eq!(app.screen(), Screen::Chat);
    assert!(
        !app.message().unwrap_or("").contains("read the whole command"),
        "a stale refusal after the command was allowed: {:?}",
        app.message()
    );
}

/// The preview's rows are clipped at the box's edge, without an ellipsis: two long paths that
/// differ at the end look the same, and whichever one is deleted cannot be told.
#[test]
fn the_preview_shows_which_file_is_deleted() {
    let mut app = app();
    app.set_viewport(100, 30);
    let stem = format!("d/{}", "n".repeat(120));
    let mut p = plan(0, RewindScope::Code);
    p.files = vec![
        PlanFile {
            path: format!("{stem}_keep_me.txt"),
            action: FileAction::Unchanged,
            size: None,
            conflict: None,
            on_overwrite: None,
            diff: PlanDiff::default(),
        },
        PlanFile {
            path: format!("{stem}_delete_me.txt"),
            action: FileAction::Delete,
            size: None,
            conflict: None,
            on_overwrite: None,
            diff: PlanDiff::default(),
        },
    ];
    let clock = Clock::new();
    app.on_key(key(KeyCode::Esc), clock.at(0));
    app.on_key(key(KeyCode::Esc), clock.at(100));
    app.on_checkpoints(&two_turns());
    app.on_key(key(KeyCode::Up), clock.at(200));
    app.on_key(key(KeyCode::Up), clock.at(300));
    app.on_key(key(KeyCode::Enter), clock.at(400));
    app.on_key(key(KeyCode::Char('3')), clock.at(500));
    app.on_plan(p);
    assert_eq!(app.screen(), Screen::Preview);
    let screen = text(&app, 100, 30);
    assert!(
        screen.contains("delete_me"),
        "which file is deleted does not show:\n{screen}"
    );
}

/// A prompt that starts with a path (`/usr/bin/foo crashes …`) is taken for an unknown command
/// and removed from the input: what was typed is neither sent nor kept.
#[test]
fn a_prompt_starting_with_a_path_is_not_thrown_away() {
    let clock = Clock::new();
    let mut app = app();
    let prompt = "/usr/bin/foo crashes when run with -x; why?";
    type_text(&mut app, prompt, clock.at(0));
    let effects = app.on_key(key(KeyCode::Enter), clock.at(1));
    assert!(
        app.input().text() == prompt || effects == vec![Effect::Send(prompt.into())],
        "the prompt was dropped; the message: {:?}",
        app.message()
    );
}

/// Found by attack: after `Delivery::Lagged` the runtime asked for the transcript and the status
/// and applied the answers whenever they came, over whatever the live events did meanwhile. A
/// snapshot taken mid-turn and answered after `TurnFinished` wedged the UI: "working…" forever,
/// the answer gone, Enter refused ("a turn is running"), Esc and Ctrl-C cancelled nothing,
/// `/rewind` and `/sessions` refused. Seen through the real binary with a fast-streaming server.
/// A snapshot now comes with its event number and the events after it are applied to it (the
/// driver subscribes again from there); a status alone never decides whether a turn runs.
#[test]
fn a_stale_snapshot_does_not_bring_a_finished_turn_back() {
    let mut app = app();
    let session = SessionId::new("0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41");
    app.feed(Event::TurnStarted {
        session_id: session.clone(),
        head_id: HeadId::main(),
        turn: 0,
        prompt: "stream".into(),
    });
    app.feed(Event::ItemStarted {
        item: prompt("m0", 0, "stream"),
    });
    // A status asked for while the turn ran (the event stream was at 2)…
    let stale_status = SessionStatus {
        session_id: session,
        workspace: "/home/ada/project".into(),
        head_id: HeadId::main(),
        running: Some(RunningJob {
            kind: JobKind::Turn,
            turn: 0,
        }),
        model: Some("demo".into()),
        model_spec: Some("demo".into()),
        plan_mode: false,
        backend: Default::default(),
        last_event_seq: 2,
    };
    // … while the live events finished the turn.
    app.feed(Event::ItemStarted {
        item: answer("m1", 0, ""),
    });
    app.feed(Event::AssistantDelta {
        item_id: Some("m1".into()),
        text: "the whole answer".into(),
    });
    app.feed(Event::TurnFinished {
        ok: true,
        error: None,
        usage: None,
        turn: 0,
    });
    // Then the status arrives (asked for earlier, by a model change say).
    app.on_status(&stale_status);
    assert!(!app.status().running, "the finished turn runs again, for ever");
    let screen = text(&app, 80, 12);
    assert!(
        screen.contains("the whole answer"),
        "the answer is gone:\n{screen}"
    );
    // A snapshot taken mid-turn (at event 3: the answer started, empty), then the events after
    // it delivered again: the finished turn with its answer.
    let mut mid = snapshot_of(vec![prompt("m0", 0, "stream"), answer("m1", 0, "")], "main", 3);
    mid.status.running = stale_status.running;
    app.on_snapshot(mid);
    assert!(app.status().running);
    app.on_event(
        4,
        Event::AssistantDelta {
            item_id: Some("m1".into()),
            text: "the whole answer".into(),
        },
    );
    app.on_event(
        5,
        Event::TurnFinished {
            ok: true,
            error: None,
            usage: None,
            turn: 0,
        },
    );
    assert!(!app.status().running);
    let screen = text(&app, 80, 12);
    assert_eq!(screen.matches("the whole answer").count(), 1, "{screen}");
}
