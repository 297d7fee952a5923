//! History you can see and walk both ways: `/diff [turn]` shows what a turn changed (its files,
//! each diff opened in place with the preview's keys, its commands and gaps), `/history <path>`
//! lists every version of a file, and Enter on one prepares its single-file revert, previewed
//! like a rewind and committed with `commit_revert`; `h` on a file of a preview or of `/diff`
//! opens its history.

use insta::assert_snapshot;
use ratatui::crossterm::event::KeyCode;
use retrace_protocol::{
    ChangeAction, CommitRevert, Coverage, Error, ErrorCode, FileAction, FileHistory, FileVersion,
    HistoryVersion, OnConflict, PlanBlocker, PrepareRevert, RewindPlan, RewindScope, ToolStatus, TurnCommand,
    TurnFile, TurnResults, UndoRequest, VersionOrigin,
};
use retrace_tui::{App, Effect, Mode, Screen};

use crate::fixtures::*;

fn press(app: &mut App, code: KeyCode) -> Vec<Effect> {
    app.on_key(key(code), Clock::new().at(0))
}

/// Types `command` and presses Enter; returns what it asked for.
fn command(app: &mut App, command: &str) -> Vec<Effect> {
    type_text(app, command, Clock::new().at(0));
    press(app, KeyCode::Enter)
}

fn version(n: u32, turn: Option<u64>, origin: VersionOrigin, sha: Option<&str>) -> HistoryVersion {
    HistoryVersion {
        version: n,
        turn,
        origin,
        time: Some(format!("2026-05-01T10:4{n}:0{n}.25Z")),
        sha256: sha.map(str::to_string),
        size: sha.map(|_| 1536),
        existed: sha.is_some(),
        transaction: None,
        restorable: true,
        reason: None,
    }
}

/// `src/lib.rs` created by turn 0, changed by turn 1, restored, and as it is now; one version's
/// bytes are no longer kept.
pub fn history() -> FileHistory {
    let mut lost = version(
        3,
        Some(1),
        VersionOrigin::TurnEnd,
        Some("9f86d081884c7d659a2feaa0"),
    );
    lost.restorable = false;
    lost.reason = Some("its bytes are no longer kept (retention)".into());
    FileHistory {
        path: "src/lib.rs".into(),
        versions: vec![
            version(1, Some(0), VersionOrigin::TurnStart, None),
            version(
                2,
                Some(0),
                VersionOrigin::TurnEnd,
                Some("2c26b46b68ffc68ff99b453c"),
            ),
            lost,
            version(
                4,
                None,
                VersionOrigin::BeforeRestore,
                Some("fcde2b2edba56bf408601fb7"),
            ),
            version(
                5,
                Some(1),
                VersionOrigin::Restore,
                Some("2c26b46b68ffc68ff99b453c"),
            ),
            version(6, None, VersionOrigin::Undo, Some("fcde2b2edba56bf408601fb7")),
            version(7, None, VersionOrigin::Redo, Some("2c26b46b68ffc68ff99b453c")),
            version(8, None, VersionOrigin::Now, Some("2c26b46b68ffc68ff99b453c")),
        ],
    }
}

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

/// A one-file plan restoring `src/lib.rs` to version `v`, as `prepare_revert` makes it.
pub fn revert_plan(v: u32) -> RewindPlan {
    let mut p = plan(0, RewindScope::Code);
    p.plan_id = format!("revert-{v}");
    p.files.truncate(1);
    p
}

fn diff_screen(app: &App) -> &retrace_tui::screens::diff::TurnDiff {
    match app.mode() {
        Mode::Diff(d) => d,
        _ => panic!("not on /diff"),
    }
}

fn history_screen(app: &App) -> &retrace_tui::screens::history::History {
    match app.mode() {
        Mode::History(h) => h,
        _ => panic!("not on /history"),
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
fn history_lists_versions_and_enter_previews_then_commits_a_revert() {
    let mut app = app_with_turns();
    assert_eq!(
        command(&mut app, "/history src/lib.rs"),
        vec![Effect::LoadHistory("src/lib.rs".into())]
    );
    app.on_file_history(history());
    assert_eq!(app.screen(), Screen::History);
    assert_eq!(history_screen(&app).cursor, 7, "on the file as it is now");
    assert_snapshot!("history", render(&app, 100, 20));

    // A version whose bytes are gone says why and asks nothing.
    for _ in 0..5 {
        press(&mut app, KeyCode::Up);
    }
    assert!(press(&mut app, KeyCode::Enter).is_empty());
    assert_eq!(
        app.message(),
        Some("v3 cannot be restored: its bytes are no longer kept (retention)")
    );
    assert_eq!(app.screen(), Screen::History);

    // Enter on v2 prepares its revert; the plan is previewed with its diff.
    press(&mut app, KeyCode::Up);
    assert_eq!(
        press(&mut app, KeyCode::Enter),
        vec![Effect::PrepareRevert(PrepareRevert {
            path: "src/lib.rs".into(),
            version: Some(2),
        })]
    );
    assert!(app.on_plan(revert_plan(2)).is_empty());
    assert_eq!(app.screen(), Screen::Preview);
    press(&mut app, KeyCode::Char('d'));
    assert_snapshot!("revert_preview", render(&app, 80, 24));

    // Esc goes back to the history, where the cursor stayed; Enter asks again.
    press(&mut app, KeyCode::Esc);
    assert_eq!(history_screen(&app).cursor, 1);
    assert_eq!(press(&mut app, KeyCode::Enter).len(), 1);
    app.on_plan(revert_plan(2));

    // Enter commits it as a revert, not a rewind.
    assert_eq!(
        press(&mut app, KeyCode::Enter),
        vec![Effect::CommitRevert(CommitRevert {
            plan_id: "revert-2".into(),
            overwrite: false,
            confirm: false,
        })]
    );
    assert_eq!(app.screen(), Screen::Chat);
    app.on_result(&result(RewindScope::Code, &["src/lib.rs"], &[]));
    assert_eq!(
        app.message(),
        Some("restored src/lib.rs to v2: 1 written — /undo to take it back")
    );

    // Its undo, then the redo the answer offers.
    assert_eq!(
        command(&mut app, "/undo"),
        vec![Effect::Undo(UndoRequest::default())]
    );
    let mut undone = result(RewindScope::Code, &["src/lib.rs"], &[]);
    undone.undo_available = false;
    undone.redo_available = true;
    app.on_result(&undone);
    assert_eq!(app.message(), Some("undone: 1 written — /redo to apply it again"));
}

#[test]
fn a_conflicting_revert_offers_only_what_its_commit_can_say() {
    let mut app = app_with_turns();
    command(&mut app, "/history src/lib.rs");
    app.on_file_history(history());
    press(&mut app, KeyCode::Home);
    press(&mut app, KeyCode::Down);
    assert_eq!(press(&mut app, KeyCode::Enter).len(), 1);
    let mut p = conflicted_plan();
    p.plan_id = "revert-2".into();
    app.on_plan(p);
    let Mode::Preview(preview) = app.mode() else {
        panic!("not previewing");
    };
    let offered: Vec<OnConflict> = preview.plan.choices.iter().map(|c| c.on_conflict).collect();
    assert_eq!(offered, [OnConflict::Refuse, OnConflict::Overwrite]);
    // `s` picks nothing; Enter says what to pick; `o` then Enter overwrites, confirmed.
    press(&mut app, KeyCode::Char('s'));
    assert!(press(&mut app, KeyCode::Enter).is_empty());
    let shown = rows(&app, 80, 30).join("\n");
    assert!(shown.contains("pick o (or Tab), then Enter"), "{shown}");
    assert!(shown.contains("o/Tab choose"), "{shown}");
    press(&mut app, KeyCode::Char('o'));
    assert_eq!(
        press(&mut app, KeyCode::Enter),
        vec![Effect::CommitRevert(CommitRevert {
            plan_id: "revert-2".into(),
            overwrite: true,
            confirm: true,
        })]
    );
    // The controller refuses: its error is said.
    app.on_error(&Error::new(
        ErrorCode::Conflict,
        "src/lib.rs changed since the preview",
    ));
    assert_eq!(app.message(), Some("error: src/lib.rs changed since the preview"));
}

#[test]
fn h_on_a_previews_file_opens_its_history_and_esc_comes_back() {
    let clock = Clock::new();
    let mut app = app_with_turns();
    open_menu(&mut app, &two_turns(), 0);
    app.on_key(key(KeyCode::Char('3')), clock.at(0));
    app.on_plan(plan(0, RewindScope::Code));
    press(&mut app, KeyCode::Char('n'));
    press(&mut app, KeyCode::Char('d'));
    assert_eq!(
        press(&mut app, KeyCode::Char('h')),
        vec![Effect::LoadHistory("tests/parse.rs".into())]
    );
    // Until the history comes: nothing else is asked for.
    assert_eq!(app.screen(), Screen::Chat);
    assert!(command(&mut app, "/undo").is_empty());
    assert_eq!(
        app.message(),
        Some("wait: the last request has not been answered yet")
    );
    let mut h = history();
    h.path = "tests/parse.rs".into();
    app.on_file_history(h);
    assert_eq!(app.screen(), Screen::History);
    assert_snapshot!("history_from_the_preview", render(&app, 80, 20));
    // Esc: the preview as it was, its cursor and open diff kept.
    press(&mut app, KeyCode::Esc);
    let Mode::Preview(p) = app.mode() else {
        panic!("not back on the preview");
    };
    assert_eq!(p.list.cursor, 1);
    assert_eq!(p.plan.plan_id, "plan-0");
    assert!(p.list.open.contains(&1));
    // A history that cannot be had says why, and the preview stays.
    assert_eq!(press(&mut app, KeyCode::Char('h')).len(), 1);
    app.on_error(&Error::new(
        ErrorCode::NotFound,
        "this session never touched `tests/parse.rs`",
    ));
    assert_eq!(app.screen(), Screen::Preview);
    // The rewind still commits as a rewind.
    assert!(matches!(
        press(&mut app, KeyCode::Enter).as_slice(),
        [Effect::Commit(_)]
    ));
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

#[test]
fn paths_and_reasons_in_a_history_are_escaped() {
    let mut app = app_with_turns();
    command(&mut app, "/history x");
    let mut h = history();
    h.path = "a\u{1b}[2J\u{202e}b.rs".into();
    h.versions[2].reason = Some("gone\r\n\u{7}".into());
    h.versions[1].time = Some("\u{1b}]0;x\u{7}".into());
    app.on_file_history(h);
    let shown = rows(&app, 120, 20).join("\n");
    assert!(shown.contains("History of a\\u{1b}[2J\\u{202e}b.rs"), "{shown}");
    assert!(shown.contains("cannot be restored: gone\\r\\n\\u{7}"), "{shown}");
    assert!(!shown.contains('\u{1b}') && !shown.contains('\u{7}'), "{shown}");
}

#[test]
fn the_revert_preview_blocks_on_what_the_plan_says() {
    let mut app = app_with_turns();
    command(&mut app, "/history src/lib.rs");
    app.on_file_history(history());
    press(&mut app, KeyCode::Up);
    press(&mut app, KeyCode::Enter);
    let mut p = revert_plan(7);
    p.blockers = vec![PlanBlocker::Unavailable {
        reason: "the file is outside the workspace".into(),
    }];
    p.files[0].action = FileAction::Unchanged;
    app.on_plan(p);
    assert!(press(&mut app, KeyCode::Enter).is_empty());
    assert!(rows(&app, 80, 24)
        .join("\n")
        .contains("cannot commit: the file is outside the workspace"));
}
