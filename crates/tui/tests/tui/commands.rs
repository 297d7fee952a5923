//! The commands and lists beside the rewind flow: `/heads` (a tree, Enter switches), `/fork
//! [name]`, `/fork --worktree DIR` (and the menu's fork into a new workspace), `/sessions`, Tab
//! completion, the mouse wheel, and moving inside a multi-line input.

use insta::assert_snapshot;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEventKind};
use retrace_protocol::{
    ActionKind, ForkRequest, HeadEntry, HeadId, HeadKind, SessionEntry, SessionId, SessionStatus,
    SwitchRequest, WorkspaceForkRequest,
};
use retrace_tui::view::ViewState;
use retrace_tui::{App, Effect, Screen};

use crate::fixtures::*;

fn head(id: &str, kind: HeadKind, parent: Option<&str>, selected: bool) -> HeadEntry {
    HeadEntry {
        id: HeadId::new(id),
        kind,
        name: (id == "h3").then(|| "try-sqlite".to_string()),
        parent_head: parent.map(HeadId::new),
        fork_from: None,
        selected,
        retired: id == "h2",
        message_count: 6,
        turns: 2,
        last_activity: None,
        title: String::new(),
    }
}

fn heads() -> Vec<HeadEntry> {
    vec![
        head("main", HeadKind::Main, None, false),
        head("h2", HeadKind::Rewind, Some("main"), false),
        head("h3", HeadKind::Fork, Some("h2"), true),
        head("h4", HeadKind::Summary, Some("main"), false),
    ]
}

const CURRENT: &str = "0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41";
const OTHER: &str = "0196b1c4-0000-7a10-8c55-0e6f3c2b9d42";

fn session(id: &str, turns: usize) -> SessionEntry {
    SessionEntry {
        id: SessionId::new(id),
        format: 2,
        workspace: Some("/home/ada/project".into()),
        created_at: Some("2026-05-01T10:40:00Z".into()),
        log_path: format!("/data/sessions/{id}.jsonl"),
        checkpoint_dir: format!("/data/sessions/{id}.ckpt"),
        heads: 1,
        turns,
        first_prompt: None,
        last_used_at: None,
        forked_from: None,
        forks: Vec::new(),
    }
}

fn command(app: &mut App, text: &str) -> Vec<Effect> {
    let clock = Clock::new();
    type_text(app, text, clock.at(0));
    app.on_key(key(KeyCode::Enter), clock.at(1))
}

#[test]
fn heads_show_as_a_tree_and_enter_switches() {
    let mut app = app();
    assert_eq!(command(&mut app, "/branch"), vec![Effect::LoadHeads]);
    app.on_heads(heads());
    assert_eq!(app.screen(), Screen::Heads);
    assert_snapshot!("heads_tree", render(&app, 80, 14));
    let now = Clock::new().at(0);
    // Enter on the selected head changes nothing.
    let mut same = app.clone();
    assert!(same.on_key(key(KeyCode::Enter), now).is_empty());
    assert_eq!(same.screen(), Screen::Chat);
    // Up twice reaches `h2`; Enter switches to it.
    app.on_key(key(KeyCode::Up), now);
    app.on_key(key(KeyCode::Char('k')), now);
    let effects = app.on_key(key(KeyCode::Enter), now);
    assert_eq!(
        effects,
        vec![Effect::Switch(SwitchRequest { head: "main".into() })]
    );
    assert_eq!(app.screen(), Screen::Chat);
}

#[test]
fn fork_with_a_name_asks_for_the_turn() {
    let mut app = app();
    assert_eq!(
        command(&mut app, "/fork try sqlite"),
        vec![Effect::LoadCheckpoints]
    );
    app.on_checkpoints(&two_turns());
    assert_eq!(app.screen(), Screen::Picker);
    assert_snapshot!("fork_picker", render(&app, 80, 12));
    let now = Clock::new().at(0);
    // Enter on "(current)" forks nothing.
    let mut same = app.clone();
    assert!(same.on_key(key(KeyCode::Enter), now).is_empty());
    assert_eq!(same.screen(), Screen::Chat);
    app.on_key(key(KeyCode::Up), now);
    let effects = app.on_key(key(KeyCode::Enter), now);
    assert_eq!(
        effects,
        vec![Effect::Fork(ForkRequest {
            turn: 1,
            name: Some("try sqlite".into()),
            select: true,
        })]
    );
}

#[test]
fn fork_into_a_new_workspace_asks_for_the_turn_or_takes_it_from_the_menu() {
    let mut app = app();
    assert_eq!(
        command(&mut app, "/fork --worktree ../try b"),
        vec![Effect::LoadCheckpoints]
    );
    app.on_checkpoints(&two_turns());
    assert_eq!(app.screen(), Screen::Picker);
    let now = Clock::new().at(0);
    // Enter on "(current)": nothing to fork at; the picker stays and says to choose a turn.
    assert!(app.on_key(key(KeyCode::Enter), now).is_empty());
    assert_eq!(app.screen(), Screen::Picker);
    assert!(
        app.message().unwrap().contains("choose a turn"),
        "{:?}",
        app.message()
    );
    app.on_key(key(KeyCode::Up), now);
    assert_eq!(
        app.on_key(key(KeyCode::Enter), now),
        vec![Effect::ForkWorkspace(WorkspaceForkRequest {
            turn: 1,
            worktree: "../try b".into(),
            name: None,
        })]
    );
    assert_eq!(app.screen(), Screen::Chat);

    // Not offered at a turn (the entry says why): refused, nothing asked.
    let mut app = self::app();
    let mut listing = two_turns();
    for a in &mut listing.entries[1].actions {
        if a.action == ActionKind::ForkWorkspace {
            a.available = false;
            a.reason = Some("history after this turn was pruned".into());
        }
    }
    command(&mut app, "/fork --worktree /tmp/x");
    app.on_checkpoints(&listing);
    app.on_key(key(KeyCode::Up), now);
    assert!(app.on_key(key(KeyCode::Enter), now).is_empty());
    assert!(app.message().unwrap().contains("pruned"), "{:?}", app.message());

    // From the action menu (key 7): the command with its turn, for the directory to be typed.
    let mut app = self::app();
    open_menu(&mut app, &two_turns(), 0);
    assert!(app.on_key(key(KeyCode::Char('7')), now).is_empty());
    assert_eq!(app.screen(), Screen::Chat);
    assert_eq!(app.input().text(), "/fork --turn 0 --worktree ");
    type_text(&mut app, "/tmp/try", now);
    assert_eq!(
        app.on_key(key(KeyCode::Enter), now),
        vec![Effect::ForkWorkspace(WorkspaceForkRequest {
            turn: 0,
            worktree: "/tmp/try".into(),
            name: None,
        })]
    );
}

#[test]
fn sessions_lists_this_workspace_and_enter_opens_another() {
    let mut app = app();
    assert_eq!(command(&mut app, "/sessions"), vec![Effect::LoadSessions]);
    let mut old = session("0196b1c4-1111-7a10-8c55-0e6f3c2b9d43", 1);
    old.workspace = None; // an old flat log: opened by id, not listed here
    app.on_sessions(vec![session(OTHER, 5), session(CURRENT, 2), old]);
    assert_eq!(app.screen(), Screen::Sessions);
    assert_snapshot!("sessions", render(&app, 80, 12));
    let now = Clock::new().at(0);
    // The cursor starts on this session: Enter keeps it.
    let mut same = app.clone();
    assert!(same.on_key(key(KeyCode::Enter), now).is_empty());
    app.on_key(key(KeyCode::Up), now);
    assert_eq!(
        app.on_key(key(KeyCode::Enter), now),
        vec![Effect::OpenSession(OTHER.into())]
    );
    let status = SessionStatus {
        session_id: SessionId::new(OTHER),
        workspace: "/home/ada/project".into(),
        head_id: HeadId::main(),
        running: None,
        model: None,
        model_spec: None,
        plan_mode: false,
        backend: Default::default(),
        last_event_seq: 0,
    };
    let mut opened = snapshot();
    opened.status = status;
    app.on_session_opened(opened);
    assert_eq!(app.status().session, OTHER);
    assert_eq!(app.status().model.as_deref(), Some("demo"));
    assert!(app.message().is_some_and(|m| m.contains(OTHER)));
    assert!(!app.transcript().items().is_empty());
}

#[test]
fn tab_completes_as_far_as_the_commands_agree() {
    let mut app = app();
    let now = Clock::new().at(0);
    type_text(&mut app, "/s", now);
    // With the palette closed (Esc), Tab completes by itself.
    app.on_key(key(KeyCode::Esc), now);
    assert_eq!(app.input().text(), "/s", "Esc closes the palette, the text stays");
    app.on_key(key(KeyCode::Tab), now);
    // `/switch` and `/sessions` share only `/s`: both are listed.
    assert_eq!(app.input().text(), "/s");
    assert!(app
        .message()
        .is_some_and(|m| m.contains("/switch") && m.contains("/sessions")));
    type_text(&mut app, "e", now);
    app.on_key(key(KeyCode::Tab), now);
    assert_eq!(app.input().text(), "/sessions ");
}

#[test]
fn the_wheel_scrolls_the_transcript_and_moves_through_lists() {
    let mut app = app_with_turns();
    frame(&mut app, &mut ViewState::new(), 80, 10); // the chat shows 6 of its rows
    app.on_mouse(MouseEventKind::ScrollUp);
    assert_eq!(app.scroll(), 3);
    app.on_mouse(MouseEventKind::ScrollDown);
    assert_eq!(app.scroll(), 0);
    // Far past the top, scrolling stops there (6 rows up): one notch down moves at once.
    for _ in 0..100 {
        app.on_mouse(MouseEventKind::ScrollUp);
    }
    assert_eq!(app.scroll(), 6);
    app.on_mouse(MouseEventKind::ScrollDown);
    assert_eq!(app.scroll(), 3);
    // A click does nothing.
    assert!(app
        .on_mouse(MouseEventKind::Down(ratatui::crossterm::event::MouseButton::Left))
        .is_empty());
    command(&mut app, "/heads");
    app.on_heads(heads());
    app.on_mouse(MouseEventKind::ScrollUp);
    let effects = app.on_key(key(KeyCode::Enter), Clock::new().at(0));
    assert_eq!(effects, vec![Effect::Switch(SwitchRequest { head: "h2".into() })]);
}

#[test]
fn up_and_down_move_inside_a_multi_line_input() {
    let mut app = app();
    let now = Clock::new().at(0);
    command(&mut app, "first prompt");
    type_text(&mut app, "one", now);
    app.on_key(KeyEvent::new(KeyCode::Char('j'), KeyModifiers::CONTROL), now);
    type_text(&mut app, "two", now);
    // Up moves to the first line instead of recalling the history.
    app.on_key(key(KeyCode::Up), now);
    type_text(&mut app, "!", now);
    assert_eq!(app.input().text(), "one!\ntwo");
    app.on_key(key(KeyCode::Down), now);
    type_text(&mut app, "?", now);
    assert_eq!(app.input().text(), "one!\ntwo?");
    // On an empty input Up still recalls the history.
    app.on_key(ctrl('c'), now);
    app.on_key(key(KeyCode::Up), now);
    assert_eq!(app.input().text(), "first prompt");
}

#[test]
fn a_long_preview_scrolls_no_further_than_its_end() {
    let clock = Clock::new();
    let mut app = app();
    app.on_key(key(KeyCode::Esc), clock.at(0));
    app.on_key(key(KeyCode::Esc), clock.at(100));
    app.on_checkpoints(&two_turns());
    app.on_key(key(KeyCode::Up), clock.at(200));
    app.on_key(key(KeyCode::Up), clock.at(300));
    app.on_key(key(KeyCode::Enter), clock.at(400));
    app.on_key(key(KeyCode::Char('3')), clock.at(500));
    let mut p = plan(0, retrace_protocol::RewindScope::Code);
    let template = p.files[0].clone();
    for i in 0..60 {
        let mut f = template.clone();
        f.path = format!("src/generated_{i}.rs");
        p.files.push(f);
    }
    app.on_plan(p);
    assert_eq!(app.screen(), Screen::Preview);
    frame(&mut app, &mut ViewState::new(), 80, 20);
    for _ in 0..500 {
        app.on_key(key(KeyCode::Down), clock.at(600));
    }
    let scroll = |app: &App| match app.mode() {
        retrace_tui::Mode::Preview(p) => p.list.scroll,
        _ => usize::MAX,
    };
    let bottom = scroll(&app);
    assert!(bottom > 40 && bottom < 80, "{bottom}");
    let screen = format!("{:?}", render(&app, 80, 20).buffer());
    assert!(screen.contains("generated_59"), "{screen}");
    // One Up moves at once.
    app.on_key(key(KeyCode::Up), clock.at(700));
    assert_eq!(scroll(&app), bottom - 1);
}

#[test]
fn the_status_line_names_a_named_head() {
    let mut app = app();
    app.set_head_names(&heads());
    app.on_head_ref(&retrace_protocol::HeadRef {
        head_id: HeadId::new("h3"),
        session_id: SessionId::new(CURRENT),
        title: String::new(),
    });
    assert_eq!(app.head_name(), Some("try-sqlite"));
    let screen = format!("{:?}", render(&app, 100, 12).buffer());
    assert!(screen.contains("head try-sqlite"), "{screen}");
}

#[test]
fn compact_plan_and_new_parse() {
    use retrace_tui::command::{parse, Command};
    assert_eq!(parse("/compact"), Some(Command::Compact));
    assert_eq!(parse(" /compact "), Some(Command::Compact));
    assert_eq!(parse("/compact now"), Some(Command::Usage("/compact")));
    assert_eq!(parse("/plan"), Some(Command::Plan(None)));
    assert_eq!(parse("/plan on"), Some(Command::Plan(Some(true))));
    assert_eq!(parse("/plan  off "), Some(Command::Plan(Some(false))));
    assert_eq!(parse("/plan maybe"), Some(Command::Usage("/plan [on|off]")));
    assert_eq!(parse("/new"), Some(Command::New));
    assert_eq!(parse("/new x"), Some(Command::Usage("/new")));
    // A path is still a prompt.
    assert_eq!(parse("/plan/x.md is wrong"), None);
}

#[test]
fn compact_plan_and_new_ask_the_session() {
    let mut app = app();
    assert_eq!(command(&mut app, "/compact"), vec![Effect::Compact]);
    assert!(app.status().compacting);
    assert_eq!(
        command(&mut app, "/compact"),
        Vec::<Effect>::new(),
        "one compaction at a time"
    );
    app.on_compact_failed(&retrace_protocol::Error::new(
        retrace_protocol::ErrorCode::Refused,
        "nothing to summarize",
    ));
    assert!(!app.status().compacting);
    assert_eq!(app.message(), Some("cannot compact: nothing to summarize"));

    // /plan toggles from what the session says; /plan on|off set it.
    assert_eq!(command(&mut app, "/plan"), vec![Effect::SetPlanMode(true)]);
    app.feed(retrace_protocol::Event::PlanMode { on: true });
    assert!(app.plan_mode());
    assert_eq!(command(&mut app, "/plan"), vec![Effect::SetPlanMode(false)]);
    assert_eq!(command(&mut app, "/plan on"), vec![Effect::SetPlanMode(true)]);
    assert_eq!(command(&mut app, "/plan off"), vec![Effect::SetPlanMode(false)]);
    // Shift+Tab (BackTab) toggles it from the chat.
    let clock = Clock::new();
    assert_eq!(
        app.on_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT), clock.at(0)),
        vec![Effect::SetPlanMode(false)]
    );
    assert_eq!(command(&mut app, "/new"), vec![Effect::NewSession]);

    // Nothing of this while a turn runs, except plan mode (it applies from the next turn).
    app.feed(retrace_protocol::Event::TurnStarted {
        session_id: SessionId::new(CURRENT),
        head_id: HeadId::main(),
        turn: 0,
        prompt: "p".into(),
    });
    assert!(command(&mut app, "/compact").is_empty());
    assert!(app.message().unwrap().contains("a turn is running"));
    assert!(command(&mut app, "/new").is_empty());
    assert_eq!(command(&mut app, "/plan off"), vec![Effect::SetPlanMode(false)]);
}

#[test]
fn the_help_lists_compact_plan_and_new() {
    let names: Vec<&str> = retrace_tui::command::COMMANDS.iter().map(|(c, _)| *c).collect();
    for c in ["/compact", "/plan [on|off]", "/new"] {
        assert!(names.contains(&c), "{names:?}");
    }
    let mut app = app();
    command(&mut app, "/help");
    let shown = render(&app, 120, 60).to_string();
    for s in ["/compact", "/plan [on|off]", "/new", "Shift+Tab"] {
        assert!(shown.contains(s), "{s}: {shown}");
    }
}
