//! Whole flows through the state machine: keys in, effects out, answers fed back.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use retrace_protocol::{
    ActionKind, ApprovalDecision, CommitRewind, Event, HeadId, OnConflict, PrepareRewind, RedoRequest,
    RewindScope, SessionId, UndoRequest,
};
use retrace_tui::scrollback::conversation_rows;
use retrace_tui::{Effect, Mode, Screen};

use crate::fixtures::*;

#[test]
fn esc_esc_enter_changes_nothing_then_code_and_conversation_rewinds() {
    let clock = Clock::new();
    let mut app = app_with_turns();

    // Esc Esc 100 ms apart on an empty idle input asks for the checkpoints.
    assert!(app.on_key(key(KeyCode::Esc), clock.at(0)).is_empty());
    assert_eq!(
        app.on_key(key(KeyCode::Esc), clock.at(100)),
        vec![Effect::LoadCheckpoints]
    );
    app.on_checkpoints(&two_turns());
    let Mode::Picker(p) = app.mode() else {
        panic!("{:?}", app.mode())
    };
    assert_eq!(p.rows.len(), 2);
    assert_eq!(p.selected, 2, "(current) is selected on opening");
    // Enter on (current): no effect, the picker closes.
    assert!(app.on_key(key(KeyCode::Enter), clock.at(200)).is_empty());
    assert_eq!(app.screen(), Screen::Chat);

    // Esc Esc, Up Up reaches turn 0, Enter opens the menu with `2` highlighted.
    app.on_key(key(KeyCode::Esc), clock.at(1000));
    assert_eq!(
        app.on_key(key(KeyCode::Esc), clock.at(1100)),
        vec![Effect::LoadCheckpoints]
    );
    app.on_checkpoints(&two_turns());
    app.on_key(key(KeyCode::Up), clock.at(1200));
    app.on_key(key(KeyCode::Up), clock.at(1300));
    assert!(app.on_key(key(KeyCode::Enter), clock.at(1400)).is_empty());
    let Mode::Menu(m) = app.mode() else {
        panic!("{:?}", app.mode())
    };
    assert_eq!(m.entry.turn, 0);
    assert_eq!(m.highlighted, 1, "key 2");
    assert_eq!(
        m.current().map(|a| a.action),
        Some(ActionKind::RestoreConversation)
    );

    // `3` restore code: prepare, preview, Enter commits, the result is reported.
    assert_eq!(
        app.on_key(key(KeyCode::Char('3')), clock.at(1500)),
        vec![Effect::PrepareRewind(PrepareRewind {
            turn: 0,
            scope: RewindScope::Code
        })]
    );
    assert!(app.on_plan(plan(0, RewindScope::Code)).is_empty());
    assert_eq!(app.screen(), Screen::Preview);
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(1600)),
        vec![Effect::Commit(CommitRewind {
            plan_id: "plan-0".into(),
            confirm: false,
            on_conflict: OnConflict::Refuse,
            in_place: true,
        })]
    );
    app.on_result(&result(RewindScope::Code, &["src/lib.rs"], &["tests/parse.rs"]));
    assert_eq!(
        app.message(),
        Some("rewound to before turn 0: 1 file written, 1 deleted — /undo to take it back")
    );
    assert_eq!(app.input().text(), "", "a code restore leaves the input alone");

    // /undo.
    type_text(&mut app, "/undo", clock.at(1700));
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(1800)),
        vec![Effect::Undo(UndoRequest::default())]
    );
    let mut undone = result(RewindScope::Code, &["src/lib.rs", "tests/parse.rs"], &[]);
    undone.undo_available = false;
    undone.redo_available = true;
    app.on_result(&undone);
    assert_eq!(
        app.message(),
        Some("undone: 2 files written — /redo to apply it again")
    );

    // /redo: the undone rewind again, its answer saying that /undo takes it back; refused, the
    // controller's reason is shown and the UI waits for nothing more.
    type_text(&mut app, "/redo", clock.at(1820));
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(1840)),
        vec![Effect::Redo(RedoRequest::default())]
    );
    app.on_result(&result(RewindScope::Code, &["src/lib.rs"], &["tests/parse.rs"]));
    assert_eq!(
        app.message(),
        Some("redone: 1 file written, 1 deleted — /undo to take it back")
    );
    type_text(&mut app, "/redo", clock.at(1860));
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(1880)),
        vec![Effect::Redo(RedoRequest::default())]
    );
    app.on_error(&retrace_protocol::Error::new(
        retrace_protocol::ErrorCode::Conflict,
        "redo refused: 1 file changed since the undo (src/lib.rs: edited outside Retrace); nothing was written",
    ));
    assert!(
        app.message()
            .is_some_and(|m| m.contains("src/lib.rs: edited outside Retrace")),
        "{:?}",
        app.message()
    );
    app.on_result(&result(RewindScope::Code, &["x"], &[]));
    assert!(
        app.message()
            .is_some_and(|m| m.contains("edited outside Retrace")),
        "an answer nothing waits for changes nothing"
    );

    // `2` restore conversation: prepared and previewed like the others (what the conversation
    // goes back to; no file), committed with Enter, the prompt refilled.
    type_text(&mut app, "/rewind", clock.at(2000));
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(2100)),
        vec![Effect::LoadCheckpoints]
    );
    app.on_checkpoints(&two_turns());
    app.on_key(key(KeyCode::Char('k')), clock.at(2200));
    app.on_key(key(KeyCode::Char('k')), clock.at(2300));
    app.on_key(key(KeyCode::Enter), clock.at(2400));
    assert_eq!(
        app.on_key(key(KeyCode::Char('2')), clock.at(2500)),
        vec![Effect::PrepareRewind(PrepareRewind {
            turn: 0,
            scope: RewindScope::Conversation
        })]
    );
    assert!(app.on_plan(plan(0, RewindScope::Conversation)).is_empty());
    assert_eq!(app.screen(), Screen::Preview, "nothing is committed unseen");
    let screen = format!("{:?}", render(&app, 80, 24));
    assert!(
        screen.contains("Restore conversation to before turn 0")
            && screen.contains("› write a tokenizer in src/lib.rs")
            && screen.contains("files: untouched"),
        "{screen}"
    );
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(2600)),
        vec![Effect::Commit(CommitRewind {
            plan_id: "plan-0".into(),
            confirm: false,
            on_conflict: OnConflict::Refuse,
            in_place: true,
        })]
    );
    // The new head's items come with its event (a new snapshot), not with the answer.
    app.on_result(&result(RewindScope::Conversation, &[], &[]));
    assert_eq!(app.input().text(), "write a tokenizer in src/lib.rs");
    assert_eq!(app.status().head, "h2");
    assert_eq!(
        app.message(),
        Some("rewound to before turn 0: the conversation only — /undo to take it back")
    );
}

#[test]
fn slow_esc_esc_and_esc_with_text_do_not_open_the_picker() {
    let clock = Clock::new();
    let mut app = app();
    app.on_key(key(KeyCode::Esc), clock.at(0));
    assert!(
        app.on_key(key(KeyCode::Esc), clock.at(700)).is_empty(),
        "700 ms apart"
    );
    type_text(&mut app, "draft", clock.at(800));
    assert!(app.on_key(key(KeyCode::Esc), clock.at(900)).is_empty());
    assert_eq!(app.input().text(), "", "Esc with text clears it");
    assert!(
        app.on_key(key(KeyCode::Esc), clock.at(1000)).is_empty(),
        "the clearing Esc does not count"
    );
    assert_eq!(
        app.on_key(key(KeyCode::Esc), clock.at(1100)),
        vec![Effect::LoadCheckpoints]
    );
    // Checkpoints nobody asked for open nothing.
    let mut other = crate::fixtures::app();
    other.on_checkpoints(&two_turns());
    assert_eq!(other.screen(), Screen::Chat);
}

#[test]
fn menu_shows_disabled_actions_and_refuses_them() {
    let clock = Clock::new();
    let mut app = app();
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
    app.on_key(key(KeyCode::Esc), clock.at(10));
    app.on_checkpoints(&l);
    app.on_key(key(KeyCode::Up), clock.at(20));
    app.on_key(key(KeyCode::Up), clock.at(30));
    app.on_key(key(KeyCode::Enter), clock.at(40));
    assert!(
        app.on_key(key(KeyCode::Enter), clock.at(50)).is_empty(),
        "default 2 is unavailable"
    );
    assert!(app.message().unwrap().contains("not on this head"));
    assert!(app.on_key(key(KeyCode::Char('4')), clock.at(60)).is_empty());
    assert!(
        !app.on_key(key(KeyCode::Char('3')), clock.at(70)).is_empty(),
        "code stays offered"
    );
}

#[test]
fn preview_with_conflicts_opens_on_keeping_them_and_esc_goes_back() {
    let clock = Clock::new();
    let mut app = app();
    restore_code_of_turn_0(&mut app, &clock);
    app.on_plan(conflicted_plan());
    assert_eq!(app.screen(), Screen::Preview);
    app.on_key(key(KeyCode::Esc), clock.at(80));
    assert_eq!(app.screen(), Screen::Menu, "Esc goes back to the menu");
    app.on_key(key(KeyCode::Char('3')), clock.at(90));
    app.on_plan(conflicted_plan());
    // `o` picks overwrite (it commits nothing by itself); Enter commits it, confirmed: the plan
    // spans a shell command.
    assert!(app.on_key(key(KeyCode::Char('o')), clock.at(100)).is_empty());
    assert_eq!(app.screen(), Screen::Preview);
    let effects = app.on_key(key(KeyCode::Enter), clock.at(110));
    assert_eq!(
        effects,
        vec![Effect::Commit(CommitRewind {
            plan_id: "plan-0".into(),
            confirm: true,
            on_conflict: OnConflict::Overwrite,
            in_place: true,
        })]
    );
}

#[test]
fn preview_with_conflicts_commits_keeping_them_on_enter() {
    // The preview opens on the choice the controller preselects, as the page does: the
    // conflicted files are kept and the rest restored.
    let clock = Clock::new();
    let mut app = app();
    restore_code_of_turn_0(&mut app, &clock);
    let plan = conflicted_plan();
    assert_eq!(plan.preselected(), Some(OnConflict::Skip));
    app.on_plan(plan);
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(60)),
        vec![Effect::Commit(CommitRewind {
            plan_id: "plan-0".into(),
            confirm: true,
            on_conflict: OnConflict::Skip,
            in_place: true,
        })]
    );
}

/// Esc Esc, turn 0 picked, "restore code" (3) chosen: the app waits for the plan.
fn restore_code_of_turn_0(app: &mut retrace_tui::App, clock: &Clock) {
    app.on_key(key(KeyCode::Esc), clock.at(0));
    app.on_key(key(KeyCode::Esc), clock.at(10));
    app.on_checkpoints(&two_turns());
    app.on_key(key(KeyCode::Up), clock.at(20));
    app.on_key(key(KeyCode::Up), clock.at(30));
    app.on_key(key(KeyCode::Enter), clock.at(40));
    app.on_key(key(KeyCode::Char('3')), clock.at(50));
}

#[test]
fn input_keys_send_newline_history_and_quit() {
    let clock = Clock::new();
    let mut app = app();
    type_text(&mut app, "first", clock.at(0));
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT), clock.at(1));
    type_text(&mut app, "line", clock.at(2));
    app.on_key(ctrl('j'), clock.at(3));
    assert_eq!(app.input().text(), "first\nline\n");
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(4)),
        vec![Effect::Send("first\nline\n".into())]
    );
    assert!(app.input().is_empty());
    app.on_key(key(KeyCode::Up), clock.at(5));
    assert_eq!(app.input().text(), "first\nline\n", "Up on empty input recalls");
    app.on_key(ctrl('c'), clock.at(6));
    assert!(app.input().is_empty(), "Ctrl-C clears");
    assert!(
        app.on_key(ctrl('c'), clock.at(7)).is_empty(),
        "first Ctrl-C on empty input warns"
    );
    assert_eq!(app.on_key(ctrl('c'), clock.at(8)), vec![Effect::Quit]);
    assert!(app.should_quit());
    let mut app = crate::fixtures::app();
    assert_eq!(app.on_key(ctrl('d'), clock.at(0)), vec![Effect::Quit]);
}

#[test]
fn running_turn_esc_cancels_and_approvals_answer() {
    let clock = Clock::new();
    let mut app = app();
    app.feed(Event::TurnStarted {
        session_id: SessionId::new("s"),
        head_id: HeadId::main(),
        turn: 0,
        prompt: "go".into(),
    });
    assert_eq!(app.on_key(key(KeyCode::Esc), clock.at(0)), vec![Effect::Cancel]);
    assert_eq!(app.on_key(ctrl('c'), clock.at(1)), vec![Effect::Cancel]);
    app.feed(Event::ApprovalRequested {
        note: None,
        prefixes: Vec::new(),
        call_id: "c9".into(),
        tool: "bash".into(),
        command: "cargo test".into(),
    });
    assert_eq!(app.screen(), Screen::Approval);
    app.on_drawn(clock.at(2));
    assert_eq!(
        app.on_key(key(KeyCode::Char('a')), clock.at(2 + 500)),
        vec![Effect::Approve {
            call_id: "c9".into(),
            decision: ApprovalDecision::Session
        }]
    );
    assert_eq!(app.screen(), Screen::Chat);
    app.feed(Event::TurnFinished {
        turn: 0,
        ok: true,
        error: None,
        usage: None,
    });
    assert!(!app.status().running);
}

#[test]
fn a_pasted_newline_does_not_send() {
    let clock = Clock::new();
    let mut app = app();
    app.on_paste("fix this:\r\n  fn main() {}\n");
    assert_eq!(app.input().text(), "fix this:\n  fn main() {}\n");
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(0)),
        vec![Effect::Send("fix this:\n  fn main() {}\n".into())]
    );
}

/// Found by attack: a command whose dangerous part came after 60 blank lines was cut off in the
/// approval box, and `y` ran it. `y` and `a` now wait until the whole command has been shown;
/// `n` and Esc deny at once; the keys line always shows.
#[test]
fn a_command_is_allowed_only_once_it_has_been_seen_whole() {
    let clock = Clock::new();
    let mut app = app();
    app.set_viewport(100, 30);
    let command = format!("echo safe{}touch HIDDEN_DANGER", "\n".repeat(60));
    app.feed(Event::ApprovalRequested {
        note: None,
        prefixes: Vec::new(),
        call_id: "c1".into(),
        tool: "bash".into(),
        command,
    });
    app.on_drawn(clock.at(0));
    assert_eq!(app.on_key(key(KeyCode::Char('y')), clock.at(600)), vec![]);
    assert_eq!(app.screen(), Screen::Approval);
    let screen = format!("{:?}", render(&app, 100, 30));
    assert!(
        screen.contains("lines more") && screen.contains("n or Esc deny"),
        "{screen}"
    );
    for _ in 0..10 {
        app.on_key(key(KeyCode::PageDown), clock.at(700));
    }
    let screen = format!("{:?}", render(&app, 100, 30));
    assert!(
        screen.contains("HIDDEN_DANGER") && screen.contains("y once"),
        "{screen}"
    );
    assert_eq!(
        app.on_key(key(KeyCode::Char('y')), clock.at(800)),
        vec![Effect::Approve {
            call_id: "c1".into(),
            decision: ApprovalDecision::Once
        }]
    );
}

/// Found by attack: on a screen too small to show anything, Esc Esc, Up, Enter, 3, y restored
/// files unseen. Nothing is chosen there.
#[test]
fn nothing_is_chosen_on_a_screen_too_small_to_show_it() {
    let clock = Clock::new();
    let mut app = app();
    app.set_viewport(20, 5);
    app.on_key(key(KeyCode::Esc), clock.at(0));
    assert_eq!(
        app.on_key(key(KeyCode::Esc), clock.at(100)),
        vec![Effect::LoadCheckpoints]
    );
    app.on_checkpoints(&two_turns());
    assert_eq!(app.screen(), Screen::Picker);
    assert_eq!(app.on_key(key(KeyCode::Up), clock.at(200)), vec![]);
    assert_eq!(app.on_key(key(KeyCode::Enter), clock.at(300)), vec![]);
    assert_eq!(app.screen(), Screen::Picker);
    app.on_key(key(KeyCode::Esc), clock.at(400));
    assert_eq!(app.screen(), Screen::Chat);
}

/// Found by a new user's trial: "0 written, 1 deleted" left the skipped file out, and a restore
/// that skipped every file read like one that did something. The message counts skipped files,
/// names each with why it was skipped, and says plainly when no file changed.
#[test]
fn a_restore_says_what_it_skipped_and_when_nothing_changed() {
    let clock = Clock::new();
    let commit_code = |app: &mut retrace_tui::App, at: u64| {
        type_text(app, "/rewind", clock.at(at));
        app.on_key(key(KeyCode::Enter), clock.at(at + 1));
        app.on_checkpoints(&two_turns());
        app.on_key(key(KeyCode::Up), clock.at(at + 2));
        app.on_key(key(KeyCode::Up), clock.at(at + 3));
        app.on_key(key(KeyCode::Enter), clock.at(at + 4));
        app.on_key(key(KeyCode::Char('3')), clock.at(at + 5));
        app.on_plan(conflicted_plan());
        assert!(app.on_key(key(KeyCode::Char('s')), clock.at(at + 6)).is_empty());
        let effects = app.on_key(key(KeyCode::Enter), clock.at(at + 7));
        assert!(
            matches!(effects.as_slice(), [Effect::Commit(c)] if c.on_conflict == OnConflict::Skip),
            "{effects:?}"
        );
    };
    let mut app = app();
    commit_code(&mut app, 0);
    let mut r = result(RewindScope::Code, &[], &[]);
    r.conflicts = conflicted_plan().conflicts;
    r.transaction_id = None;
    r.undo_available = false;
    app.on_result(&r);
    assert_eq!(
        app.message(),
        Some(
            "nothing was restored: no file changed — 2 skipped (README.md: edited outside \
             Retrace; link/\\u{202e}gpj.exe: an unsafe path: outside the workspace or through a link)"
        )
    );

    commit_code(&mut app, 100);
    let mut r = result(RewindScope::Code, &[], &["tests/parse.rs"]);
    r.conflicts = conflicted_plan().conflicts[..1].to_vec();
    app.on_result(&r);
    assert_eq!(
        app.message(),
        Some(
            "rewound to before turn 0: 1 file deleted, 1 skipped (README.md: edited outside \
             Retrace) — /undo to take it back"
        )
    );
    // Found by the new-user trial: at 80 columns the line was cut before its "/undo" hint. It
    // wraps instead, whole, above the input box.
    let shown = rows(&app, 80, 24);
    let input = shown.iter().position(|r| r.starts_with("┌ Enter send")).unwrap();
    assert_eq!(
        shown[input - 2..input]
            .iter()
            .map(|r| r.trim_end())
            .collect::<Vec<_>>(),
        [
            "rewound to before turn 0: 1 file deleted, 1 skipped (README.md: edited outside",
            "  Retrace) — /undo to take it back"
        ],
        "{}",
        shown.join("\n")
    );
}

/// A message longer than three rows shows its first three, the last ending in "…".
#[test]
fn a_long_message_wraps_to_three_rows_at_most() {
    let mut app = app();
    app.say(&"every word of this message is one more word to show ".repeat(6));
    let shown = rows(&app, 40, 12);
    let input = shown.iter().position(|r| r.starts_with("┌ Enter")).unwrap();
    let said: Vec<&str> = shown[input - 3..input].iter().map(|r| r.trim_end()).collect();
    assert!(said[0].starts_with("every word"), "{said:#?}");
    assert!(said[1].starts_with("  ") && said[2].ends_with('…'), "{said:#?}");
    assert!(!shown[input - 4].contains("word"), "{}", shown.join("\n"));
}

/// A `both` rewind whose files were refused after its head was made (they changed between the
/// preview and the commit): the conversation is restored and the prompt is back, and the line
/// says that no file was.
#[test]
fn a_both_rewind_whose_files_were_refused_says_so() {
    let clock = Clock::new();
    let mut app = app();
    type_text(&mut app, "/rewind", clock.at(0));
    app.on_key(key(KeyCode::Enter), clock.at(1));
    app.on_checkpoints(&two_turns());
    app.on_key(key(KeyCode::Up), clock.at(2));
    app.on_key(key(KeyCode::Up), clock.at(3));
    app.on_key(key(KeyCode::Enter), clock.at(4));
    app.on_key(key(KeyCode::Char('1')), clock.at(5));
    assert!(app.on_plan(plan(0, RewindScope::Both)).is_empty());
    let effects = app.on_key(key(KeyCode::Enter), clock.at(6));
    assert!(matches!(effects.as_slice(), [Effect::Commit(_)]), "{effects:?}");
    let mut r = result(RewindScope::Both, &[], &[]);
    r.partial = true;
    r.error = Some("files changed since the preview: src/lib.rs".into());
    app.on_result(&r);
    assert_eq!(
        app.message(),
        Some("rewound the conversation to before turn 0, but no file was restored: files changed since the preview: src/lib.rs — /undo to take it back")
    );
    assert_eq!(app.input().text(), "write a tokenizer in src/lib.rs");
}

/// A restore, its undo and its redo each leave a line in the transcript that stays there: after
/// the last item of the conversation it left, on the head it left selected (the restore's and
/// the redo's on the head the restore made, the undo's at the end of the conversation it brought
/// back), after the next prompt, and in the scrollback printed on quitting, in the order things
/// happened.
#[test]
fn restores_undos_and_redos_stay_in_the_transcript() {
    let clock = Clock::new();
    let mut app = app_with_turns();
    open_menu(&mut app, &two_turns(), 1);
    // `1`: code and conversation.
    app.on_key(key(KeyCode::Char('1')), clock.at(0));
    app.on_plan(plan(1, RewindScope::Both));
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(10)),
        vec![Effect::Commit(CommitRewind {
            plan_id: "plan-1".into(),
            confirm: false,
            on_conflict: OnConflict::Refuse,
            in_place: true,
        })]
    );
    let mut r = result(RewindScope::Both, &["src/lib.rs"], &[]);
    r.head_id = HeadId::new("h2");
    app.on_result(&r);
    // The prompt came back into the input; cleared to type the commands.
    app.on_key(ctrl('u'), clock.at(15));
    let line = "⎌ restored code and conversation to before turn 1: 1 file written";
    // The new head's snapshot: turn 0 only.
    let turn0: Vec<_> = items()
        .into_iter()
        .filter(|i| i.turn.is_none_or(|t| t == 0))
        .collect();
    let mut snap = snapshot_of(turn0.clone(), "h2", 20);
    snap.status.model = Some("demo".into());
    snap.status.model_spec = snap.status.model.clone();
    app.on_snapshot(snap);
    let screen = rows(&app, 100, 30).join("\n");
    assert!(screen.contains(line), "{screen}");
    // It stays when the message above the input is gone.
    app.say("something else");
    assert!(rows(&app, 100, 30).join("\n").contains(line));

    // /undo, then /redo: each its line, after the first.
    type_text(&mut app, "/undo", clock.at(20));
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(30)),
        vec![Effect::Undo(UndoRequest::default())]
    );
    let mut undone = result(RewindScope::Both, &["src/lib.rs"], &[]);
    undone.head_id = HeadId::main();
    undone.redo_available = true;
    // The line waits for the conversation the undo brings back (a new snapshot is asked for).
    assert_eq!(app.on_result(&undone), vec![Effect::LoadSnapshot]);
    let mut snap = snapshot_of(items(), "main", 30);
    snap.status.model = Some("demo".into());
    snap.status.model_spec = snap.status.model.clone();
    app.on_snapshot(snap);
    // On main: the undo's line ends the chat, after the turn it brought back; the restore's
    // line, on the other head, is not among main's.
    let printed: Vec<String> = conversation_rows(&app, 100)
        .iter()
        .map(|l| l.to_string())
        .collect();
    let undid = printed
        .iter()
        .position(|r| {
            r.contains("⎌ undid the code and conversation restore to before turn 1: 1 file written")
        })
        .unwrap_or_else(|| panic!("{printed:#?}"));
    assert!(
        printed[undid + 1..].iter().all(|r| r.trim().is_empty()),
        "{printed:#?}"
    );
    assert!(!printed.iter().any(|r| r.contains(line)), "{printed:#?}");
    type_text(&mut app, "/redo", clock.at(40));
    app.on_key(key(KeyCode::Enter), clock.at(50));
    app.on_result(&result(RewindScope::Both, &["src/lib.rs"], &[]));
    let mut snap = snapshot_of(turn0, "h2", 40);
    snap.status.model = Some("demo".into());
    snap.status.model_spec = snap.status.model.clone();
    app.on_snapshot(snap);

    let printed: Vec<String> = conversation_rows(&app, 100)
        .iter()
        .map(|l| l.to_string())
        .collect();
    let find = |what: &str| {
        printed
            .iter()
            .position(|r| r.contains(what))
            .unwrap_or_else(|| panic!("{what}: {printed:#?}"))
    };
    // Back on the restore's head: its line, then the redo's, after turn 0; the undo's is main's.
    let (restored, redid) = (
        find(line),
        find("⎌ redid the code and conversation restore to before turn 1: 1 file written"),
    );
    assert!(restored < redid, "{printed:#?}");
    assert!(!printed.iter().any(|r| r.contains("⎌ undid")), "{printed:#?}");
    // The next prompt comes after them.
    app.feed(Event::TurnStarted {
        session_id: SessionId::new("0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41"),
        head_id: HeadId::new("h2"),
        turn: 1,
        prompt: "try again".into(),
    });
    assert_eq!(app.screen(), Screen::Chat);
    let printed: Vec<String> = conversation_rows(&app, 100)
        .iter()
        .map(|l| l.to_string())
        .collect();
    assert!(
        printed
            .iter()
            .any(|r| r.contains("⎌ redid the code and conversation restore")),
        "{printed:#?}"
    );
}
