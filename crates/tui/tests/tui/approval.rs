//! The approval box against typing ahead (found by a new user's trial: "typing while waiting",
//! typed while a turn ran, approved `rm README.md` with its `y`; "and then you" denied a command
//! with its `n`). No key pressed before the box was drawn, or within the guard time after it (or
//! after the last key it held back), answers it; what was typed goes to the input.

use insta::assert_snapshot;
use ratatui::crossterm::event::KeyCode;
use retrace_protocol::{ApprovalDecision, Event, HeadId, SessionId};
use retrace_tui::{App, Effect, Screen, APPROVAL_GUARD};

use crate::fixtures::*;

const GUARD: u64 = APPROVAL_GUARD.as_millis() as u64;

fn asking(command: &str) -> App {
    let mut app = app();
    app.feed(Event::TurnStarted {
        session_id: SessionId::new("s"),
        head_id: HeadId::main(),
        turn: 0,
        prompt: "tidy up".into(),
    });
    app.feed(Event::ApprovalRequested {
        note: Some(NOTE.into()),
        prefixes: Vec::new(),
        call_id: "c1".into(),
        tool: "bash".into(),
        command: command.into(),
    });
    app
}

/// What the controller says of a shell command where it is approved.
const NOTE: &str = "Retrace cannot take back what a shell command changes: its changes to files are not checkpointed, and a restore will list this command as a gap.";

/// Types `text` one key every `gap` ms from `start`; returns the effects and when it ended.
fn type_slowly(app: &mut App, text: &str, clock: &Clock, start: u64, gap: u64) -> (Vec<Effect>, u64) {
    let mut effects = Vec::new();
    let mut t = start;
    for c in text.chars() {
        effects.extend(app.on_key(key(KeyCode::Char(c)), clock.at(t)));
        t += gap;
    }
    (effects, t - gap)
}

#[test]
fn keys_typed_ahead_never_answer_and_go_to_the_input() {
    let clock = Clock::new();
    let mut app = asking("rm README.md");
    // Typed before the box was ever drawn: the `y` of "typing" must not allow it.
    let (effects, _) = type_slowly(&mut app, "typing while waiting", &clock, 0, 5);
    assert_eq!(effects, vec![]);
    assert_eq!(app.screen(), Screen::Approval);
    app.on_drawn(clock.at(200));
    // Typed on after it was drawn, at a normal pace (120 ms a key) for longer than the guard:
    // the box waits until the typing stops, so the `n` of "and" denies nothing.
    let (effects, end) = type_slowly(&mut app, " and then you", &clock, 210, 120);
    assert_eq!(effects, vec![]);
    assert!(end - 210 > GUARD, "the typing outlasts the guard");
    // Enter and Esc within the guard are held back too.
    assert_eq!(app.on_key(key(KeyCode::Enter), clock.at(end + 10)), vec![]);
    assert_eq!(app.on_key(key(KeyCode::Esc), clock.at(end + 20)), vec![]);
    assert_eq!(app.screen(), Screen::Approval);
    assert_eq!(app.input().text(), "typing while waiting and then you");
    let screen = format!("{:?}", render(&app, 80, 24));
    assert!(screen.contains("typing went to the input"), "{screen}");
    // A key after the guard is a choice.
    assert_eq!(
        app.on_key(key(KeyCode::Char('n')), clock.at(end + 20 + GUARD)),
        vec![Effect::Approve {
            call_id: "c1".into(),
            decision: ApprovalDecision::Deny
        }]
    );
    assert_eq!(app.screen(), Screen::Chat);
    assert_eq!(app.input().text(), "typing while waiting and then you");
}

#[test]
fn a_key_within_the_guard_after_the_box_was_drawn_is_typing() {
    let clock = Clock::new();
    let mut app = asking("rm README.md");
    app.on_drawn(clock.at(0));
    assert_eq!(app.on_key(key(KeyCode::Char('y')), clock.at(GUARD - 1)), vec![]);
    assert_eq!(app.input().text(), "y");
    // Backspace takes it out of the input again, and restarts the guard.
    assert_eq!(app.on_key(key(KeyCode::Backspace), clock.at(GUARD + 100)), vec![]);
    assert_eq!(app.input().text(), "");
    assert_eq!(app.on_key(key(KeyCode::Char('y')), clock.at(2 * GUARD)), vec![]);
    assert_eq!(
        app.on_key(key(KeyCode::Char('y')), clock.at(3 * GUARD + 1)),
        vec![Effect::Approve {
            call_id: "c1".into(),
            decision: ApprovalDecision::Once
        }]
    );
}

#[test]
fn enter_chooses_only_what_is_highlighted() {
    let clock = Clock::new();
    let mut app = asking("cargo test");
    app.on_drawn(clock.at(0));
    let t = GUARD + 10;
    // Nothing is highlighted at first: Enter alone chooses nothing.
    assert_eq!(app.on_key(key(KeyCode::Enter), clock.at(t)), vec![]);
    assert_eq!(app.screen(), Screen::Approval);
    let screen = format!("{:?}", render(&app, 80, 24));
    assert!(screen.contains("choose with ← → first"), "{screen}");
    app.on_key(key(KeyCode::Right), clock.at(t + 1));
    app.on_key(key(KeyCode::Right), clock.at(t + 2));
    assert_eq!(app.approval_choice(), Some(1));
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(t + 3)),
        vec![Effect::Approve {
            call_id: "c1".into(),
            decision: ApprovalDecision::Session
        }]
    );
}

#[test]
fn the_next_approval_waits_for_its_own_box() {
    let clock = Clock::new();
    let mut app = asking("ls");
    app.feed(Event::ApprovalRequested {
        note: None,
        prefixes: Vec::new(),
        call_id: "c2".into(),
        tool: "bash".into(),
        command: "rm -r build".into(),
    });
    app.on_drawn(clock.at(0));
    let answered = app.on_key(key(KeyCode::Char('y')), clock.at(GUARD));
    assert_eq!(answered.len(), 1, "{answered:?}");
    // `yy`: the second `y` comes before the next box was drawn; it allows nothing.
    assert_eq!(app.on_key(key(KeyCode::Char('y')), clock.at(GUARD + 30)), vec![]);
    assert_eq!(app.screen(), Screen::Approval);
    assert_eq!(app.approvals()[0].call_id, "c2");
    assert_eq!(app.input().text(), "y");
    // A paste under the box goes to the input as well.
    app.on_paste(" pasted");
    assert_eq!(app.input().text(), "y pasted");
    assert_eq!(app.screen(), Screen::Approval);
}

#[test]
fn the_box_says_what_for_the_session_covers_and_that_files_stay_changed() {
    let clock = Clock::new();
    let mut app = asking("rm README.md");
    app.on_drawn(clock.at(0));
    let screen = format!("{:?}", render(&app, 80, 24));
    for said in ["cannot take back", "this exact", "Allow once", "Deny"] {
        assert!(screen.contains(said), "{said:?} is not said:\n{screen}");
    }
}

/// Some servers number tool calls per response (`call_0` every time): a later approval with the
/// id of one answered before still waits for its own box.
#[test]
fn a_repeated_call_id_gets_a_guard_of_its_own() {
    let clock = Clock::new();
    let mut app = asking("ls");
    app.on_drawn(clock.at(0));
    assert_eq!(app.on_key(key(KeyCode::Char('y')), clock.at(GUARD)).len(), 1);
    app.feed(Event::ApprovalRequested {
        note: None,
        prefixes: Vec::new(),
        call_id: "c1".into(),
        tool: "bash".into(),
        command: "rm -r build".into(),
    });
    assert_eq!(app.on_key(key(KeyCode::Char('y')), clock.at(3 * GUARD)), vec![]);
    assert_eq!(app.screen(), Screen::Approval);
    assert_eq!(app.input().text(), "y");
}

#[test]
fn a_prefix_the_approval_offers_is_allowed_for_the_session_with_p() {
    let clock = Clock::new();
    let mut app = app();
    app.feed(Event::ApprovalRequested {
        note: Some(NOTE.into()),
        prefixes: vec!["npm test".into()],
        call_id: "c1".into(),
        tool: "bash".into(),
        command: "npm test -- --watch".into(),
    });
    app.on_drawn(clock.at(0));
    // A short code span is kept whole: its spaces do not break (they show as spaces).
    let screen = format!("{:?}", render(&app, 80, 24)).replace('\u{a0}', " ");
    for said in ["cannot take back", "starting with `npm test`", "p prefix"] {
        assert!(screen.contains(said), "{said:?} is not said:\n{screen}");
    }
    assert_eq!(
        app.on_key(key(KeyCode::Char('p')), clock.at(GUARD)),
        vec![Effect::AllowPrefix {
            call_id: "c1".into(),
            prefix: "npm test".into(),
        }]
    );
}

/// An approval of `command` offering `prefix` for the session.
fn asking_with_prefix(command: &str, prefix: &str) -> App {
    let mut app = app();
    app.feed(Event::TurnStarted {
        session_id: SessionId::new("s"),
        head_id: HeadId::main(),
        turn: 0,
        prompt: "run main".into(),
    });
    app.feed(Event::ApprovalRequested {
        note: Some("Retrace cannot take back what a shell command changes.".into()),
        prefixes: vec![prefix.into()],
        call_id: "c1".into(),
        tool: "bash".into(),
        command: command.into(),
    });
    app
}

/// The rows of the approval box that hold its buttons, without the box's borders.
fn button_rows(app: &App, w: u16, h: u16) -> Vec<String> {
    rows(app, w, h)
        .iter()
        .filter_map(|r| {
            let inner = r.trim().trim_start_matches('│').trim_end_matches('│').trim_end();
            (inner.contains("[ ") || inner.contains(" ]")).then(|| inner.to_string())
        })
        .collect()
}

#[test]
fn an_approval_button_is_never_split_across_rows() {
    for (command, prefix) in [
        ("python3 main.py --verbose", "python3 main.py"),
        (
            "cargo test --workspace --all-features -- --nocapture",
            "cargo test --workspace --all-features",
        ),
    ] {
        let app = asking_with_prefix(command, prefix);
        for (w, h) in [(120, 40), (100, 30), (80, 24), (60, 24), (40, 40)] {
            let buttons = button_rows(&app, w, h);
            assert!(!buttons.is_empty(), "no buttons at {w}x{h}");
            for row in &buttons {
                // Whole buttons only: each row starts one and ends one.
                assert!(
                    row.starts_with("[ ") && row.ends_with(" ]"),
                    "a button split at {w}x{h}: {buttons:#?}"
                );
                assert_eq!(row.matches("[ ").count(), row.matches(" ]").count(), "{row}");
            }
            let all = buttons.join("  ");
            for label in ["Allow once", "for the session", "Deny"] {
                assert!(all.contains(label), "{label} at {w}x{h}: {buttons:#?}");
            }
        }
    }
    // At 40 columns the long prefix is shortened inside its label, which still says what it is.
    let app = asking_with_prefix(
        "cargo test --workspace --all-features -- --nocapture",
        "cargo test --workspace --all-features",
    );
    let narrow = button_rows(&app, 40, 40).join("\n");
    assert!(narrow.contains("…` for the session ]"), "{narrow}");
    assert_snapshot!(
        "approval_buttons_80",
        button_rows(
            &asking_with_prefix("python3 main.py --verbose", "python3 main.py"),
            80,
            24
        )
        .join("\n")
    );
}

/// The sentence about the prefix wraps around its code span, not inside it: at 120 columns the
/// box is 100 wide and "`python3 app.py`" would have broken after "`python3".
#[test]
fn the_prefix_sentence_keeps_its_code_span_whole() {
    let clock = Clock::new();
    let mut app = app();
    app.feed(Event::ApprovalRequested {
        note: Some(NOTE.into()),
        prefixes: vec!["python3 app.py".into()],
        call_id: "c1".into(),
        tool: "bash".into(),
        command: "python3 app.py --verbose".into(),
    });
    app.on_drawn(clock.at(0));
    let shown: Vec<String> = rows(&app, 120, 40)
        .into_iter()
        .map(|r| r.replace('\u{a0}', " "))
        .collect();
    let at = shown
        .iter()
        .find(|r| r.contains("`python3"))
        .unwrap_or_else(|| panic!("{shown:#?}"));
    assert!(at.contains("`python3 app.py`"), "{shown:#?}");
}

/// An approval of `command` by `tool` (an MCP tool, a resource request).
fn asking_tool(tool: &str, command: &str) -> App {
    let mut app = app();
    app.feed(Event::TurnStarted {
        session_id: SessionId::new("s"),
        head_id: HeadId::main(),
        turn: 0,
        prompt: "look".into(),
    });
    app.feed(Event::ApprovalRequested {
        note: None,
        prefixes: Vec::new(),
        call_id: "c1".into(),
        tool: tool.into(),
        command: command.into(),
    });
    app
}

/// Found by an attack: an MCP tool's box said both that `session` allows the tool whatever its
/// arguments and that it "allows this exact command again, no other" (the shell's words).
#[test]
fn an_mcp_approval_says_what_for_the_session_allows() {
    let app = asking_tool("mcp__evil__writer", "mcp__evil__writer {\"path\":\"a\"}");
    let screen = rows(&app, 100, 30).join("\n");
    assert!(screen.contains("Run this MCP tool call?"), "{screen}");
    assert!(
        screen.contains("allows every call of `mcp__evil__writer`, with any input"),
        "{screen}"
    );
    assert!(!screen.contains("exact command"), "{screen}");
    assert!(
        screen.contains("Allow this tool for the session (any input)"),
        "{screen}"
    );
    let app = asking_tool("read_mcp_resource", "read_mcp_resource evil evil://r");
    let screen = rows(&app, 100, 30).join("\n");
    assert!(
        screen.contains("Ask this MCP server for its resources?"),
        "{screen}"
    );
    assert!(screen.contains("allows this exact request again"), "{screen}");
    assert!(!screen.contains("shell command"), "{screen}");
}
