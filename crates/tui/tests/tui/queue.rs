//! Prompts typed while a turn runs are queued (issue 28): shown above the input, taken back with
//! Up, removed with Esc (the next Esc cancels the turn), sent when the turn ends, back in the
//! input when it fails.

use insta::assert_snapshot;
use ratatui::crossterm::event::KeyCode;
use retrace_protocol::{Event, HeadId, SessionId};
use retrace_tui::{App, Effect};

use crate::fixtures::*;

fn running() -> App {
    let mut app = app_with_turns();
    app.feed(Event::TurnStarted {
        session_id: SessionId::new("0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41"),
        head_id: HeadId::main(),
        turn: 2,
        prompt: "run the tests".into(),
    });
    app.feed(Event::ItemStarted {
        item: prompt("m6", 2, "run the tests"),
    });
    app
}

fn finished(app: &mut App, ok: bool) -> Vec<Effect> {
    app.feed(Event::TurnFinished {
        turn: 2,
        ok,
        error: (!ok).then(|| "cancelled".to_string()),
        usage: None,
    })
}

#[test]
fn enter_while_a_turn_runs_queues_the_prompt_and_sends_it_after() {
    let mut app = running();
    let clock = Clock::new();
    assert!(type_text(&mut app, "now fix the failures", clock.at(0)).is_empty());
    assert!(app.on_key(key(KeyCode::Enter), clock.at(1)).is_empty());
    assert!(app.input().is_empty());
    assert_eq!(app.message(), None, "no message: the queue shows it");
    assert_snapshot!("queued_prompt", render(&app, 80, 24));
    assert!(rows(&app, 80, 24)
        .iter()
        .any(|r| r.contains("queued: now fix the failures")));
    // A second one is added to it.
    type_text(&mut app, "and commit", clock.at(2));
    app.on_key(key(KeyCode::Enter), clock.at(3));
    assert_eq!(
        finished(&mut app, true),
        vec![Effect::Send("now fix the failures\nand commit".into())]
    );
    assert!(app.queued().is_none());
    assert_eq!(app.message(), None);
    assert!(!rows(&app, 80, 24).iter().any(|r| r.contains("queued")));
    // It is in the history, as if typed.
    app.on_key(key(KeyCode::Up), clock.at(4));
    assert_eq!(app.input().text(), "now fix the failures\nand commit");
}

#[test]
fn up_takes_the_queued_prompt_back_and_esc_removes_it_before_cancelling() {
    let mut app = running();
    let clock = Clock::new();
    type_text(&mut app, "queued one", clock.at(0));
    app.on_key(key(KeyCode::Enter), clock.at(1));
    // Up on the empty input: back to edit.
    app.on_key(key(KeyCode::Up), clock.at(2));
    assert_eq!(app.input().text(), "queued one");
    assert!(app.queued().is_none());
    type_text(&mut app, "!", clock.at(3));
    app.on_key(key(KeyCode::Enter), clock.at(4));
    assert_eq!(
        app.queued().map(|q| q.whole().into_owned()).as_deref(),
        Some("queued one!")
    );
    // Esc: the queued prompt goes, the turn keeps running; Esc again cancels it.
    assert!(app.on_key(key(KeyCode::Esc), clock.at(5)).is_empty());
    assert!(app.queued().is_none());
    assert!(app.status().running);
    assert_eq!(
        app.on_key(key(KeyCode::Esc), clock.at(1000)),
        vec![Effect::Cancel]
    );
    // Nothing is sent when it ends.
    assert!(finished(&mut app, false).is_empty());
}

#[test]
fn a_turn_that_fails_puts_the_queued_prompt_back_in_the_input() {
    let mut app = running();
    let clock = Clock::new();
    type_text(&mut app, "next", clock.at(0));
    app.on_key(key(KeyCode::Enter), clock.at(1));
    // Ctrl-C cancels the turn and keeps the queue; typed text stays after it.
    assert_eq!(app.on_key(ctrl('c'), clock.at(2)), vec![Effect::Cancel]);
    type_text(&mut app, "more", clock.at(3));
    assert!(finished(&mut app, false).is_empty());
    assert_eq!(app.input().text(), "next\nmore");
    assert!(app.queued().is_none());
    assert!(app.message().is_some_and(|m| m.contains("back in the input")));
}

#[test]
fn commands_still_run_while_a_turn_runs() {
    let mut app = running();
    let clock = Clock::new();
    type_text(&mut app, "/help", clock.at(0));
    app.on_key(key(KeyCode::Enter), clock.at(1));
    assert_eq!(app.screen(), retrace_tui::Screen::Help);
    assert!(app.queued().is_none());
}
