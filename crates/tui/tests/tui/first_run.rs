//! The first screen (the welcome panel, with and without a model that can answer), the status
//! line at 80 columns and narrower, and `/status` (insta snapshots).

use insta::assert_snapshot;
use ratatui::crossterm::event::KeyCode;
use retrace_protocol::{
    Event, HeadEntry, HeadId, HeadKind, ModelSpec, SessionEntry, SessionId, SessionUsage, TokenUsage,
};
use retrace_tui::scrollback::conversation_rows;
use retrace_tui::{App, Effect, ModelProblem};

use crate::fixtures::*;

fn empty(model: Option<&str>) -> App {
    let mut app = app();
    let mut snap = snapshot_of(Vec::new(), "main", 0);
    snap.status.model = model.map(str::to_string);
    snap.status.model_spec = snap.status.model.clone();
    app.on_snapshot(snap);
    app
}

fn no_key() -> App {
    let mut app = empty(None);
    app.set_model_problem(Some(ModelProblem {
        model: "deepseek:deepseek-chat".into(),
        reason:
            "DEEPSEEK_API_KEY is not set: export it, or pick another model: openai:NAME, demo or script:FILE"
                .into(),
        key_env: Some("DEEPSEEK_API_KEY".into()),
    }));
    app
}

#[test]
fn welcome_with_a_model() {
    let app = empty(Some("demo"));
    let screen = rows(&app, 80, 24).join("\n");
    assert!(screen.contains("every edit can be taken back: Esc Esc"));
    assert_snapshot!("welcome", screen);
}

#[test]
fn welcome_without_a_key_explains_what_to_do() {
    let app = no_key();
    let screen = rows(&app, 80, 24);
    let all = screen.join("\n");
    for words in [
        "DEEPSEEK_API_KEY",
        "export",
        "retrace config",
        "/model demo",
        "/home/ada/project",
    ] {
        assert!(all.contains(words), "{words} missing:\n{all}");
    }
    // Wrapped inside the panel, nothing cut.
    assert!(!all.contains('…'), "{all}");
    assert_snapshot!("welcome_no_key", all);
    // At 120 columns too.
    assert_snapshot!("welcome_no_key_120", rows(&app, 120, 24).join("\n"));
}

#[test]
fn a_prompt_typed_before_a_model_is_set_is_kept() {
    let mut app = no_key();
    let clock = Clock::new();
    type_text(&mut app, "add a mul function", clock.at(0));
    let effects = app.on_key(key(KeyCode::Enter), clock.at(10));
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::Send(_))),
        "{effects:?}"
    );
    assert_eq!(app.input().text(), "add a mul function");
    assert!(
        app.message().unwrap().contains("/model demo"),
        "{:?}",
        app.message()
    );
    // The input cleared to type /model demo: once the model is set, the prompt comes back.
    app.on_key(key(KeyCode::Esc), clock.at(20));
    assert_eq!(app.input().text(), "");
    type_text(&mut app, "/model demo", clock.at(30));
    let effects = app.on_key(key(KeyCode::Enter), clock.at(40));
    assert!(matches!(effects.as_slice(), [Effect::SetModel(_)]), "{effects:?}");
    let mut snap = snapshot_of(Vec::new(), "main", 0);
    snap.status.model = Some("demo".into());
    snap.status.model_spec = snap.status.model.clone();
    app.on_status(&snap.status);
    assert_eq!(app.input().text(), "add a mul function");
    let effects = app.on_key(key(KeyCode::Enter), clock.at(50));
    assert_eq!(effects, vec![Effect::Send("add a mul function".into())]);
}

/// A session on DeepSeek (through a local endpoint), mid-turn, in plan mode, on a named fork.
fn busy(width_of_model: &str) -> App {
    let mut app = app_with_turns();
    let mut snap = snapshot();
    snap.status.model = Some(width_of_model.to_string());
    // As the controller says it: the model without the endpoint the label names.
    snap.status.model_spec = width_of_model.split(" at ").next().map(str::to_string);
    app.on_status(&snap.status);
    app.set_head_names(&[HeadEntry {
        id: HeadId::new("h2"),
        kind: HeadKind::Fork,
        name: Some("try sqlite".into()),
        parent_head: Some(HeadId::main()),
        fork_from: None,
        selected: true,
        retired: false,
        message_count: 6,
        turns: 2,
        last_activity: None,
        title: String::new(),
    }]);
    app.on_head_ref(&retrace_protocol::HeadRef {
        head_id: HeadId::new("h2"),
        session_id: SessionId::new("0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41"),
        title: String::new(),
    });
    let usage = TokenUsage {
        prompt_tokens: 41_234,
        completion_tokens: 1_502,
        total_tokens: 42_736,
        cached_tokens: 30_000,
    };
    app.feed(Event::StepFinished {
        turn: 1,
        step: 0,
        finish_reason: None,
        usage: Some(usage),
    });
    // The controller's tally after it: DeepSeek's price, its 65.5k-token window.
    let price = retrace_protocol::Prices::default().of("deepseek:deepseek-chat");
    app.feed(Event::Usage {
        usage: SessionUsage::new(
            usage,
            price.map(|p| p.cost(&usage)),
            price,
            Some(usage.total_tokens),
            Some(65_536),
        ),
    });
    app.feed(Event::TurnFinished {
        turn: 1,
        ok: true,
        error: None,
        usage: Some(usage),
    });
    app.feed(Event::PlanMode { on: true });
    app.feed(Event::TurnStarted {
        session_id: SessionId::new("0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41"),
        head_id: HeadId::new("h2"),
        turn: 2,
        prompt: "go on".into(),
    });
    app
}

#[test]
fn the_status_line_fits_80_columns() {
    let app = busy("deepseek:deepseek-chat at http://127.0.0.1:47124");
    let last = |w: u16| rows(&app, w, 24).pop().unwrap();
    let line = last(80);
    // What does not fit is left out from the end, and says so: the turn and the head.
    assert!(line.trim_end().ends_with("· …"), "{line}");
    for part in [
        "PLAN",
        "deepseek:deepseek-chat",
        "65% context",
        "41.2k in 1.5k out",
        "$0.0021",
    ] {
        assert!(line.contains(part), "{part} missing: {line}");
    }
    assert!(
        !line.contains("127.0.0.1") && !line.contains("0196b1c4"),
        "{line}"
    );
    let wide = last(120);
    assert!(wide.contains("turn 2 · head try sqlite"), "{wide}");
    // Narrower: the least needed parts go first, never a part cut in the middle; the model's
    // name is shortened before the cost goes.
    let narrow = last(50);
    assert!(
        narrow.contains("65% context") && narrow.trim_end().ends_with("· …"),
        "{narrow}"
    );
    assert_snapshot!("status_line", [line, wide, narrow, last(40)].join("\n"));
}

#[test]
fn status_lists_what_the_line_leaves_out() {
    let mut app = busy("deepseek:deepseek-chat at http://127.0.0.1:47124");
    app.feed(Event::TurnFinished {
        turn: 2,
        ok: true,
        error: None,
        usage: None,
    });
    let clock = Clock::new();
    type_text(&mut app, "/status", clock.at(0));
    let effects = app.on_key(key(KeyCode::Enter), clock.at(10));
    assert_eq!(effects, vec![Effect::LoadStatusReport]);
    let entry: SessionEntry = serde_json::from_value(serde_json::json!({
        "id": "0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41", "format": 2, "workspace": "/home/ada/project",
        "created_at": null, "log_path": "/home/ada/.local/share/retrace/sessions/0196b1c4/log.jsonl",
        "checkpoint_dir": "/x", "heads": 2, "turns": 2
    }))
    .unwrap();
    app.on_status_report(&[entry]);
    let screen = rows(&app, 100, 30).join("\n");
    for part in [
        "session    0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41",
        "workspace  /home/ada/project",
        "endpoint   http://127.0.0.1:47124",
        "coverage   snapshot backend: the edit tools' changes; a shell command's cannot be rewound",
        "log        /home/ada/.local/share/retrace/sessions/0196b1c4/log.jsonl",
    ] {
        assert!(screen.contains(part), "{part} missing:\n{screen}");
    }
    assert_snapshot!("status_command", screen);
}

/// `/status` at 80 columns with the trial's log path: the value wraps under its column, between
/// the path's names, never inside one; the scrollback printed on quitting has the same rows.
#[test]
fn status_wraps_a_long_path_between_its_names() {
    let mut app = app_with_turns();
    let clock = Clock::new();
    type_text(&mut app, "/status", clock.at(0));
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(10)),
        vec![Effect::LoadStatusReport]
    );
    let id = "01a24e3b-e369-739d-9782-9433e7203709";
    let mut snap = snapshot();
    snap.status.session_id = SessionId::new(id);
    app.on_status(&snap.status);
    let log = format!("/work/trial-home/sessions/{id}.jsonl");
    let entry: SessionEntry = serde_json::from_value(serde_json::json!({
        "id": id, "format": 2, "workspace": "/work/trial-ws", "created_at": null,
        "log_path": log, "checkpoint_dir": "/x", "heads": 1, "turns": 2
    }))
    .unwrap();
    app.on_status_report(&[entry]);
    let screen = rows(&app, 80, 40);
    let at = screen
        .iter()
        .position(|r| r.trim_start().starts_with("log "))
        .unwrap();
    let (first, second) = (screen[at].trim_end(), screen[at + 1].trim_end());
    assert!(first.ends_with("/work/trial-home/sessions/"), "{first}");
    assert!(second.trim_start() == format!("{id}.jsonl"), "{second}");
    // Under the value column.
    let column = first.find("/work").unwrap();
    assert_eq!(second.find(id), Some(column), "{first}\n{second}");
    for r in &screen {
        let w = unicode_width::UnicodeWidthStr::width(r.as_str());
        assert!(w <= 80, "{r}");
    }
    assert_snapshot!("status_at_80", screen.join("\n"));
    // The scrollback: the same rows, at the terminal's width.
    let printed: Vec<String> = conversation_rows(&app, 80)
        .iter()
        .map(|l| l.to_string())
        .collect();
    let at = printed
        .iter()
        .position(|r| r.trim_start().starts_with("log "))
        .unwrap();
    assert!(printed[at].trim_end().ends_with("/sessions/"), "{printed:#?}");
    assert_eq!(printed[at + 1].trim(), format!("{id}.jsonl"));
    // The context row says the figure is the window's size.
    let all = screen.join("\n");
    assert!(all.contains("context    a window of 65.5k tokens"), "{all}");
}

/// The trial's status line at 80 columns: a script's long path as the model, plan mode, tokens,
/// a cost and the turn. The model's name is shortened; nothing else goes.
#[test]
fn the_status_line_shortens_a_long_model_before_dropping_the_cost() {
    let mut app = app_with_turns();
    let model = "script:/work/trial-out/scripts/p.json";
    let mut snap = snapshot();
    snap.status.model = Some(model.into());
    snap.status.model_spec = snap.status.model.clone();
    app.on_status(&snap.status);
    let price = retrace_protocol::Price {
        input_per_mtok: 0.3,
        output_per_mtok: 0.6,
        cached_input_per_mtok: None,
    };
    let usage = TokenUsage {
        prompt_tokens: 30_000,
        completion_tokens: 2_000,
        total_tokens: 32_000,
        cached_tokens: 0,
    };
    app.feed(Event::StepFinished {
        turn: 1,
        step: 0,
        finish_reason: None,
        usage: Some(usage),
    });
    // The controller's tally at the configured price.
    app.feed(Event::Usage {
        usage: SessionUsage::new(
            usage,
            Some(price.cost(&usage)),
            Some(price),
            Some(usage.total_tokens),
            Some(65_536),
        ),
    });
    app.feed(Event::TurnFinished {
        turn: 1,
        ok: true,
        error: None,
        usage: Some(usage),
    });
    app.feed(Event::PlanMode { on: true });
    let wide = rows(&app, 120, 24).pop().unwrap();
    assert!(wide.contains(model) && wide.contains("turn 1"), "{wide}");
    let line = rows(&app, 80, 24).pop().unwrap();
    for part in [
        "PLAN",
        "script:…",
        "p.json",
        "context",
        "30.0k in 2.0k out",
        "$0.0102",
        "turn 1",
    ] {
        assert!(line.contains(part), "{part} missing: {line}");
    }
    // Narrower still: what goes leaves a "…".
    let narrow = rows(&app, 66, 24).pop().unwrap();
    assert!(
        narrow.contains("$0.0102") && narrow.trim_end().ends_with("· …"),
        "{narrow}"
    );
    assert_snapshot!("status_line_trial", [wide, line, narrow].join("\n"));
}

/// The hint says to type `/model demo`; typed after the waiting prompt, as a person does, it
/// switches the model, and the prompt that comes back is the one typed, alone.
#[test]
fn model_demo_typed_after_a_waiting_prompt_switches_and_the_prompt_comes_back_alone() {
    let clock = Clock::new();
    let mut app = no_key();
    type_text(&mut app, "explain main.py", clock.at(0));
    assert!(app.on_key(key(KeyCode::Enter), clock.at(10)).is_empty());
    let hint = app.message().unwrap().to_string();
    assert!(hint.contains("/model demo"), "{hint}");
    type_text(&mut app, " /model demo", clock.at(20));
    assert_eq!(app.input().text(), "explain main.py /model demo");
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(30)),
        vec![Effect::SetModel(ModelSpec::demo())]
    );
    assert_eq!(app.input().text(), "");
    let mut snap = snapshot_of(Vec::new(), "main", 0);
    snap.status.model = Some("demo".into());
    snap.status.model_spec = snap.status.model.clone();
    app.on_status(&snap.status);
    assert_eq!(app.input().text(), "explain main.py");
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(40)),
        vec![Effect::Send("explain main.py".into())]
    );

    // Cleared first (Ctrl-U), then /model demo: the same prompt comes back.
    let mut app = no_key();
    type_text(&mut app, "explain main.py", clock.at(0));
    app.on_key(key(KeyCode::Enter), clock.at(10));
    app.on_key(ctrl('u'), clock.at(20));
    type_text(&mut app, "/model demo", clock.at(30));
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(40)),
        vec![Effect::SetModel(ModelSpec::demo())]
    );
    app.on_status(&snap.status);
    assert_eq!(app.input().text(), "explain main.py");

    // A switch that fails gives the prompt back at once.
    let mut app = no_key();
    type_text(
        &mut app,
        "explain main.py /model deepseek:deepseek-reasoner",
        clock.at(0),
    );
    assert!(matches!(
        app.on_key(key(KeyCode::Enter), clock.at(10)).as_slice(),
        [Effect::SetModel(_)]
    ));
    app.on_error(&retrace_protocol::Error::new(
        retrace_protocol::ErrorCode::Usage,
        "DEEPSEEK_API_KEY is not set",
    ));
    assert_eq!(app.input().text(), "explain main.py");

    // A `/model` that is part of a prompt's text is not taken for the command once a model
    // can answer.
    let mut app = app_with_turns();
    type_text(&mut app, "why does /model demo fail", clock.at(0));
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(10)),
        vec![Effect::Send("why does /model demo fail".into())]
    );
}

/// `/status` on a session with no prompt offers no resume (the session is not kept on quitting),
/// and the demo model costs nothing.
#[test]
fn status_of_an_empty_demo_session() {
    let mut app = app();
    let mut snap = snapshot_of(Vec::new(), "main", 0);
    snap.status.model = Some("demo".into());
    snap.status.model_spec = snap.status.model.clone();
    // The controller's tally: the demo model's price is nothing.
    snap.usage = SessionUsage::new(
        TokenUsage::default(),
        Some(0.0),
        Some(retrace_protocol::price::FREE),
        None,
        Some(65_536),
    );
    app.on_snapshot(snap);
    let clock = Clock::new();
    type_text(&mut app, "/status", clock.at(0));
    assert_eq!(
        app.on_key(key(KeyCode::Enter), clock.at(10)),
        vec![Effect::LoadStatusReport]
    );
    let entry: SessionEntry = serde_json::from_value(serde_json::json!({
        "id": "0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41", "format": 2, "workspace": "/home/ada/project",
        "created_at": null, "log_path": "/x/log.jsonl", "checkpoint_dir": "/x", "heads": 1, "turns": 0
    }))
    .unwrap();
    app.on_status_report(&[entry]);
    let screen = rows(&app, 120, 30).join("\n");
    assert!(!screen.contains("retrace --session"), "{screen}");
    for part in [
        "nothing yet: a session left without a prompt is not kept",
        "nothing: the demo model answers without a network",
    ] {
        assert!(screen.contains(part), "{part} missing:\n{screen}");
    }
    assert!(!screen.contains("no price"), "{screen}");
}

/// A model on an endpoint of its own: the status line names the model as `--model` takes it (the
/// controller's `model_spec`), `/status` the endpoint; no frontend cuts the label apart.
#[test]
fn a_model_on_its_own_endpoint_is_named_by_its_spec() {
    let mut app = app_with_turns();
    let mut snap = snapshot();
    snap.status.model = Some("openai:gpt-4o at http://127.0.0.1:8080".into());
    snap.status.model_spec = Some("openai:gpt-4o".into());
    app.on_status(&snap.status);
    assert_eq!(app.status().model_name(), Some("openai:gpt-4o"));
    assert_eq!(app.status().model_endpoint(), Some("http://127.0.0.1:8080"));
    let screen = rows(&app, 120, 30).join("\n");
    assert!(screen.contains("openai:gpt-4o"), "{screen}");
    assert!(!screen.contains("127.0.0.1"), "{screen}");
}
