//! Every box over the chat at 80×24 (issue 28): it clears the rows it stands on (no transcript
//! text or input-box corner beside it), and what does not fit ends in "…" or wraps, never cut
//! with no sign. One snapshot per box.

use insta::assert_snapshot;
use ratatui::crossterm::event::KeyCode;
use retrace_protocol::{Event, HeadEntry, HeadId, HeadKind, SessionEntry, SessionId};
use retrace_tui::{App, Screen};

use crate::fixtures::*;
use crate::history::{command, history, press};
use crate::turn_diff::results;

/// Turns with long prompts and paths, and a long transcript behind the boxes.
fn busy() -> App {
    let mut app = app_with_turns();
    for i in 0..12 {
        app.feed(Event::Notice {
            message: format!("a transcript line that runs the whole width of the screen and on, number {i}"),
            retry: None,
        });
    }
    app
}

fn long_listing() -> retrace_protocol::CheckpointListing {
    let mut l = two_turns();
    l.entries.push(entry(
        2,
        "rename every tokenizer function to lexer and update the callers in the crate",
        &[
            "src/a/very/deeply/nested/module/with/a/long/name/tokenizer.rs",
            "src/lib.rs",
            "tests/parse.rs",
        ],
    ));
    l
}

/// The rows of the box on screen (those between its top and bottom borders, both included) have
/// nothing beside it: every cell left of its left border is blank.
fn clears_beside(app: &App) -> Vec<String> {
    let rows = rows(app, 80, 24);
    let top = rows.iter().position(|r| r.trim_start().starts_with('┌')).unwrap();
    let left = rows[top].find('┌').unwrap();
    for r in &rows[top..rows.len() - 4] {
        if let Some(border) = r.find(['│', '└']) {
            if border == left {
                assert!(
                    r[..left].trim().is_empty(),
                    "beside the box: {r:?}\n{}",
                    rows.join("\n")
                );
            }
        }
    }
    rows
}

fn head(id: &str, kind: HeadKind, parent: Option<&str>, selected: bool, name: Option<&str>) -> HeadEntry {
    HeadEntry {
        id: HeadId::new(id),
        kind,
        name: name.map(str::to_string),
        parent_head: parent.map(HeadId::new),
        fork_from: None,
        selected,
        retired: false,
        message_count: 6,
        turns: 2,
        last_activity: None,
        title: String::new(),
    }
}

fn session(id: &str, prompt: &str) -> SessionEntry {
    SessionEntry {
        id: SessionId::new(id),
        format: 2,
        workspace: Some("/home/ada/project".into()),
        created_at: Some("2026-05-01T10:40:00Z".into()),
        log_path: String::new(),
        checkpoint_dir: String::new(),
        heads: 1,
        turns: 3,
        first_prompt: Some(prompt.into()),
        last_used_at: None,
        forked_from: None,
        forks: Vec::new(),
    }
}

#[test]
fn every_box_fits_80_by_24_and_clears_its_rows() {
    // The rewind picker, long prompts and paths cut with "…".
    let mut app = busy();
    let clock = Clock::new();
    app.on_key(key(KeyCode::Esc), clock.at(0));
    app.on_key(key(KeyCode::Esc), clock.at(100));
    app.on_checkpoints(&long_listing());
    assert_eq!(app.screen(), Screen::Picker);
    let rows = clears_beside(&app);
    assert!(rows.iter().any(|r| r.contains('…')), "{}", rows.join("\n"));
    assert_snapshot!("popup_picker", render(&app, 80, 24));

    // Its action menu.
    let mut app = busy();
    open_menu(&mut app, &long_listing(), 2);
    clears_beside(&app);
    assert_snapshot!("popup_menu", render(&app, 80, 24));

    // The preview of a restore with conflicts and a shell gap.
    let mut app = busy();
    open_menu(&mut app, &two_turns(), 0);
    press(&mut app, KeyCode::Char('1'));
    app.on_plan(conflicted_plan());
    assert_eq!(app.screen(), Screen::Preview);
    clears_beside(&app);
    assert_snapshot!("popup_preview", render(&app, 80, 24));

    // The help: long descriptions wrap under themselves.
    let mut app = busy();
    command(&mut app, "/help");
    let rows = clears_beside(&app);
    assert!(rows
        .iter()
        .any(|r| r.contains("clear the input / remove the queued")));
    assert_snapshot!("popup_help", render(&app, 80, 24));

    // Heads and sessions.
    let mut app = busy();
    app.on_heads(vec![
        head("main", HeadKind::Main, None, false, None),
        head(
            "h2",
            HeadKind::Fork,
            Some("main"),
            true,
            Some("try the lexer rename with a much longer name than fits"),
        ),
    ]);
    clears_beside(&app);
    assert_snapshot!("popup_heads", render(&app, 80, 24));
    let mut app = busy();
    app.on_sessions(vec![
        session("0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41", "write a tokenizer"),
        session(
            "0196b1c4-0000-7a10-8c55-0e6f3c2b9d42",
            "a first prompt long enough that it cannot fit on one row of an eighty column screen",
        ),
    ]);
    clears_beside(&app);
    assert_snapshot!("popup_sessions", render(&app, 80, 24));

    // A turn's diff and a file's history.
    let mut app = busy();
    command(&mut app, "/diff 1");
    app.on_turn_results(results());
    clears_beside(&app);
    assert_snapshot!("popup_diff", render(&app, 80, 24));
    let mut app = busy();
    command(&mut app, "/history src/lib.rs");
    app.on_file_history(history());
    clears_beside(&app);
    assert_snapshot!("popup_history", render(&app, 80, 24));

    // An approval.
    let mut app = busy();
    app.feed(Event::ApprovalRequested {
        note: Some("Retrace cannot take back what a shell command changes.".into()),
        prefixes: vec!["cargo test".into()],
        call_id: "c1".into(),
        tool: "bash".into(),
        command: "cargo test --workspace -- --nocapture && cargo clippy --all-targets".into(),
    });
    clears_beside(&app);
    assert_snapshot!("popup_approval", render(&app, 80, 24));
}
