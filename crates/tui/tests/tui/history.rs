//! A file's history, walked both ways: `/history <path>` lists every version of a file, and Enter
//! on one prepares its single-file revert, previewed like a rewind and committed with
//! `commit_revert`, then undone and redone; `h` on a file of a rewind's preview opens its history.

use insta::assert_snapshot;
use ratatui::crossterm::event::KeyCode;
use retrace_protocol::{
    CommitRevert, Error, ErrorCode, FileAction, FileHistory, HistoryVersion, OnConflict, PlanBlocker,
    PrepareRevert, RewindPlan, RewindScope, UndoRequest, VersionOrigin,
};
use retrace_tui::{App, Effect, Mode, Screen};

use crate::fixtures::*;

pub fn press(app: &mut App, code: KeyCode) -> Vec<Effect> {
    app.on_key(key(code), Clock::new().at(0))
}

/// Types `command` and presses Enter; returns what it asked for.
pub fn command(app: &mut App, command: &str) -> Vec<Effect> {
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

/// A one-file plan restoring `src/lib.rs` to version `v`, as `prepare_revert` makes it.
pub fn revert_plan(v: u32) -> RewindPlan {
    let mut p = plan(0, RewindScope::Code);
    p.plan_id = format!("revert-{v}");
    p.files.truncate(1);
    p
}

fn history_screen(app: &App) -> &retrace_tui::screens::history::History {
    match app.mode() {
        Mode::History(h) => h,
        _ => panic!("not on /history"),
    }
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

    // Enter on v2 prepares its revert; the plan is previewed, its file's diff open.
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
        Some("restored src/lib.rs to v2: 1 file written — /undo to take it back")
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
    assert_eq!(
        app.message(),
        Some("undone: 1 file written — /redo to apply it again")
    );
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
    // A revert's plan, as the controller makes it, offers no `skip`.
    p.choices.retain(|c| c.on_conflict != OnConflict::Skip);
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

/// Through the real controller: two turns write and edit a file; `/diff` shows the last one's
/// change, `/history` its versions, Enter on the first turn's end restores it on disk after its
/// preview, and `/undo` and `/redo` walk that restore both ways.
#[test]
fn a_version_restored_through_the_real_controller_and_walked_both_ways() {
    use crate::whole_flow::{idle_after, scripted, send, until, Scripted};
    use retrace_control::Service;
    use retrace_tui::{AppOptions, Driver};
    use serde_json::json;

    let Scripted { _tmp, ws, rt, opts } = scripted(
        json!([
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.md", "content": "one\n"}}]},
            {"content": "wrote it"},
            {"tool_calls": [{"name": "edit_file", "arguments": {"path": "notes.md", "old_string": "one", "new_string": "two"}}]},
            {"content": "edited it"}
        ]),
        |_| {},
    );
    rt.block_on(async {
        let svc = Service::new(opts);
        let handle = svc.create(&ws).await.unwrap();
        let mut ui = Driver::open(svc.clone(), handle, AppOptions { no_color: true }, None)
            .await
            .unwrap();
        let clock = Clock::new();
        let notes = || std::fs::read_to_string(ws.join("notes.md")).unwrap();
        send(&mut ui, &clock, 0, "write notes");
        until(&mut ui, "turn 0", |u| idle_after(u, "wrote it")).await;
        send(&mut ui, &clock, 10, "edit notes");
        until(&mut ui, "turn 1", |u| idle_after(u, "edited it")).await;
        assert_eq!(notes(), "two\n");

        // `/diff`: the latest turn, its one file with its counts and diff.
        send(&mut ui, &clock, 20, "/diff");
        until(&mut ui, "the diff", |u| u.app().screen() == Screen::Diff).await;
        let d = crate::turn_diff::diff_screen(ui.app());
        assert_eq!(d.results.turn, 1);
        assert_eq!(d.results.files.len(), 1);
        let f = &d.results.files[0];
        assert_eq!((f.path.as_str(), f.added, f.removed), ("notes.md", 1, 1));
        assert!(f.diff.contains("+two"), "{}", f.diff);
        ui.key(key(KeyCode::Esc), clock.at(30));

        // `/history`: Enter on turn 0's end, previewed, then committed.
        send(&mut ui, &clock, 40, "/history notes.md");
        until(&mut ui, "the history", |u| u.app().screen() == Screen::History).await;
        let h = history_screen(ui.app());
        let at = h
            .history
            .versions
            .iter()
            .position(|v| v.origin == VersionOrigin::TurnEnd && v.turn == Some(0))
            .unwrap();
        let version = h.history.versions[at].version;
        for _ in at..h.cursor {
            ui.key(key(KeyCode::Up), clock.at(50));
        }
        ui.key(key(KeyCode::Enter), clock.at(60));
        until(&mut ui, "the revert's preview", |u| {
            u.app().screen() == Screen::Preview
        })
        .await;
        ui.key(key(KeyCode::Enter), clock.at(70));
        let done = format!("restored notes.md to v{version}: 1 file written — /undo to take it back");
        until(&mut ui, "the revert", |u| {
            u.app().message() == Some(done.as_str())
        })
        .await;
        assert_eq!(notes(), "one\n");

        // Undo, then redo.
        send(&mut ui, &clock, 80, "/undo");
        until(&mut ui, "the undo", |u| {
            u.app()
                .message()
                .is_some_and(|m| m.contains("/redo to apply it again"))
        })
        .await;
        assert_eq!(notes(), "two\n");
        send(&mut ui, &clock, 90, "/redo");
        until(&mut ui, "the redo", |u| {
            u.app().message().is_some_and(|m| m.starts_with("redone"))
        })
        .await;
        assert_eq!(notes(), "one\n");
    });
}
