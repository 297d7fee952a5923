//! `/diff [turn]`: what a turn changed, as the controller's `turn_results` says it: its files,
//! each diff opened in place with the preview's keys, its commands and its gaps; `h` on a file
//! opens its history.

use insta::assert_snapshot;
use ratatui::crossterm::event::KeyCode;
use retrace_protocol::{
    ChangeAction, Coverage, Error, ErrorCode, FileVersion, ToolStatus, TurnCommand, TurnFile, TurnResults,
};
use retrace_tui::{App, Effect, Mode, Screen};

use crate::fixtures::*;
use crate::history::{command, history, press};

fn file(action: ChangeAction, path: &str, diff: &str) -> TurnFile {
    let count = |c: char| diff.lines().filter(|l| l.starts_with(c)).count() as u64;
    let v = |size| {
        Some(FileVersion {
            sha256: Some("ab".into()),
            size: Some(size),
            mode: None,
        })
    };
    TurnFile {
        path: path.into(),
        action,
        from: None,
        diff: diff.into(),
        added: count('+'),
        removed: count('-'),
        binary: false,
        diff_truncated: false,
        before: v(40),
        after: v(52),
        unknown: None,
    }
}

/// Turn 1: a modified file (with a control character in its text), a binary one, a move, one
/// whose change cannot be shown; three commands and a shell gap.
pub fn results() -> TurnResults {
    let mut binary = file(ChangeAction::Create, "assets/logo.png", "");
    binary.binary = true;
    binary.before = None;
    binary.after.as_mut().unwrap().size = Some(2048);
    let mut moved = file(ChangeAction::Move, "src/lexer.rs", "");
    moved.from = Some("src/tokens.rs".into());
    let mut lost = file(ChangeAction::Modify, "notes/\u{202e}txt.md", "");
    lost.unknown = Some("its bytes at the turn's end are no longer kept".into());
    let mut cut = file(
        ChangeAction::Modify,
        "src/lib.rs",
        "@@ -1,3 +1,4 @@\n pub fn tokenize(s: &str) -> Vec<&str> {\n-    s.split(' ').collect()\n+    s.split([' ', '\\t'])\n+        .collect() // \u{1b}[2J\n }\n",
    );
    cut.diff_truncated = true;
    TurnResults {
        turn: 1,
        prompt: "make the parser accept tabs\nand add a test".into(),
        coverage: Coverage::Partial,
        files: vec![
            cut,
            binary,
            moved,
            lost,
            file(
                ChangeAction::Create,
                "tests/parse.rs",
                "@@ -0,0 +1,2 @@\n+#[test]\n+fn tabs() {}\n",
            ),
        ],
        commands: vec![
            TurnCommand {
                command: "cargo test".into(),
                exit_code: Some(0),
                duration_ms: Some(1234),
                status: ToolStatus::Ok,
            },
            TurnCommand {
                command: "grep -q tab\nsrc/lib.rs".into(),
                exit_code: Some(1),
                duration_ms: Some(30),
                status: ToolStatus::Ok,
            },
            TurnCommand {
                command: "sleep 100".into(),
                exit_code: None,
                duration_ms: None,
                status: ToolStatus::Cancelled,
            },
        ],
        gaps: vec![shell_gap(1, "cargo test")],
    }
}

pub fn diff_screen(app: &App) -> &retrace_tui::screens::diff::TurnDiff {
    match app.mode() {
        Mode::Diff(d) => d,
        _ => panic!("not on /diff"),
    }
}

#[test]
fn diff_shows_a_turns_files_commands_and_gaps() {
    let mut app = app_with_turns();
    // Without a turn: the latest one of the chat whose checkpoint is kept.
    assert_eq!(command(&mut app, "/diff"), vec![Effect::LoadTurnResults(1)]);
    app.on_turn_results(results());
    assert_eq!(app.screen(), Screen::Diff);
    assert_snapshot!("diff_closed", render(&app, 90, 30));

    // The first file's diff opens in place, numbered; the cursor moves with n/p and stops at the
    // ends; the binary file and the one whose change cannot be shown say so.
    assert!(press(&mut app, KeyCode::Char('d')).is_empty());
    for code in [KeyCode::Char('n'), KeyCode::Char(' '), KeyCode::Char('n')] {
        press(&mut app, code);
    }
    press(&mut app, KeyCode::Char('n'));
    press(&mut app, KeyCode::Enter);
    assert_eq!(diff_screen(&app).list.cursor, 3);
    assert_eq!(
        diff_screen(&app).list.open.iter().copied().collect::<Vec<_>>(),
        [0, 1, 3]
    );
    assert_snapshot!("diff_open", render(&app, 90, 40));
    for _ in 0..9 {
        press(&mut app, KeyCode::Char('n'));
    }
    assert_eq!(diff_screen(&app).list.cursor, 4);

    // Esc closes it; an explicit turn is asked for as it is.
    assert!(press(&mut app, KeyCode::Esc).is_empty());
    assert_eq!(app.screen(), Screen::Chat);
    assert_eq!(command(&mut app, "/diff 0"), vec![Effect::LoadTurnResults(0)]);
}

#[test]
fn a_turn_not_kept_shows_the_controllers_error() {
    let mut app = app_with_turns();
    assert_eq!(command(&mut app, "/diff 7"), vec![Effect::LoadTurnResults(7)]);
    app.on_error(&Error::new(
        ErrorCode::NotFound,
        "turn 7 is not retained (removed by retention)",
    ));
    assert_eq!(app.screen(), Screen::Chat);
    assert_eq!(
        app.message(),
        Some("error: turn 7 is not retained (removed by retention)")
    );
    // The answer of a request nobody waits for any more opens nothing.
    app.on_turn_results(results());
    assert_eq!(app.screen(), Screen::Chat);

    // No turn yet: nothing is asked; a turn that is not a number is a usage.
    let mut empty = crate::fixtures::app();
    assert!(command(&mut empty, "/diff").is_empty());
    assert_eq!(
        empty.message(),
        Some("no turn with a checkpoint yet: nothing to show")
    );
    assert!(command(&mut empty, "/diff last").is_empty());
    assert_eq!(empty.message(), Some("usage: /diff [turn]"));
}

#[test]
fn h_on_a_diffs_file_opens_its_history_and_esc_comes_back() {
    let mut app = app_with_turns();
    command(&mut app, "/diff 1");
    app.on_turn_results(results());
    press(&mut app, KeyCode::Char('n'));
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(
        press(&mut app, KeyCode::Char('h')),
        vec![Effect::LoadHistory("src/lexer.rs".into())]
    );
    app.on_file_history(history());
    press(&mut app, KeyCode::Esc);
    assert_eq!(diff_screen(&app).list.cursor, 2);
    press(&mut app, KeyCode::Char('q'));
    assert_eq!(app.screen(), Screen::Chat);
}
