//! The input behaves like a shell's (issue 28): readline keys across lines, a pasted block folded
//! and sent whole, and the `/` palette with `/model`'s list.

use insta::assert_snapshot;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use retrace_protocol::{ModelSpec, Provider};
use retrace_tui::{App, Effect, ModelProblem, Screen};

use crate::fixtures::*;

fn alt(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT)
}

fn press(app: &mut App, keys: &[KeyEvent]) -> Vec<Effect> {
    let now = Clock::new().at(0);
    keys.iter().flat_map(|k| app.on_key(*k, now)).collect()
}

/// The input's text with `|` at the cursor.
fn cursor(app: &App) -> String {
    let mut s = app.input().shown().to_string();
    s.insert(app.input().cursor(), '|');
    s
}

#[test]
fn readline_keys_edit_like_a_shell() {
    let mut app = app();
    let now = Clock::new().at(0);
    type_text(&mut app, "hello world foo", now);
    press(&mut app, &[ctrl('a')]);
    assert_eq!(cursor(&app), "|hello world foo");
    press(&mut app, &[ctrl('e')]);
    assert_eq!(cursor(&app), "hello world foo|");
    // Alt-B moves a word back and types nothing.
    press(&mut app, &[alt('b')]);
    assert_eq!(cursor(&app), "hello world |foo");
    press(&mut app, &[ctrl('w')]);
    assert_eq!(cursor(&app), "hello |foo");
    press(&mut app, &[ctrl('e'), ctrl('y')]);
    assert_eq!(cursor(&app), "hello fooworld |");
    press(&mut app, &[ctrl('a'), alt('f'), ctrl('k')]);
    assert_eq!(cursor(&app), "hello|");
    press(&mut app, &[ctrl('a'), alt('d')]);
    assert_eq!(cursor(&app), "|");
    press(&mut app, &[ctrl('y')]);
    assert_eq!(
        cursor(&app),
        "hello|",
        "Ctrl-K then Alt-D: the last kill is Alt-D's alone"
    );
    press(&mut app, &[ctrl('u')]);
    assert_eq!(cursor(&app), "|");
    // Alt-Backspace kills a word back; other Alt keys type nothing.
    type_text(&mut app, "git commit", now);
    press(
        &mut app,
        &[KeyEvent::new(KeyCode::Backspace, KeyModifiers::ALT), alt('x')],
    );
    assert_eq!(cursor(&app), "git |");
}

#[test]
fn readline_keys_work_on_the_cursors_line_of_a_multi_line_input() {
    let mut app = app();
    let now = Clock::new().at(0);
    type_text(&mut app, "first line", now);
    press(&mut app, &[KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT)]);
    type_text(&mut app, "second line", now);
    press(&mut app, &[ctrl('a')]);
    assert_eq!(cursor(&app), "first line\n|second line");
    press(&mut app, &[ctrl('k')]);
    assert_eq!(cursor(&app), "first line\n|");
    press(&mut app, &[ctrl('u')]);
    assert_eq!(
        cursor(&app),
        "first line|",
        "Ctrl-U at a line's start joins it to the one above"
    );
    press(&mut app, &[KeyEvent::new(KeyCode::Up, KeyModifiers::NONE)]);
    assert_eq!(
        app.input().text(),
        "first line",
        "Up with text moves, it recalls nothing"
    );
    press(&mut app, &[ctrl('e'), ctrl('u'), ctrl('y'), ctrl('y')]);
    assert_eq!(cursor(&app), "first linefirst line|");
}

fn block(n: usize) -> String {
    (1..=n).map(|i| format!("fn line_{i}() {{}}\n")).collect()
}

#[test]
fn a_pasted_block_shows_folded_and_is_sent_whole() {
    let mut app = app_with_turns();
    let now = Clock::new().at(0);
    type_text(&mut app, "review this: ", now);
    app.on_paste(&block(120).replace('\n', "\r\n"));
    type_text(&mut app, " thanks", now);
    assert_snapshot!("folded_paste", render(&app, 80, 24));
    assert!(rows(&app, 80, 24)
        .iter()
        .any(|r| r.contains("review this: [pasted 120 lines] thanks")));
    // A short paste goes in as it is; nothing was sent by its line breaks.
    app.on_paste("a\nb");
    press(&mut app, &[KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE)]);
    press(&mut app, &[KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE)]);
    press(&mut app, &[KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE)]);
    let sent = press(&mut app, &[key(KeyCode::Enter)]);
    assert_eq!(
        sent,
        vec![Effect::Send(format!("review this: {} thanks", block(120)))]
    );
    // Up recalls it folded; Backspace on the fold removes the block.
    press(&mut app, &[key(KeyCode::Up)]);
    assert!(app.input().shown().chars().count() < 40);
    for _ in 0.." thanks".len() {
        press(&mut app, &[key(KeyCode::Left)]);
    }
    press(&mut app, &[key(KeyCode::Backspace)]);
    assert_eq!(app.input().text(), "review this:  thanks");
}

#[test]
fn slash_opens_a_palette_that_filters_completes_and_runs() {
    let mut app = app_with_turns();
    let now = Clock::new().at(0);
    type_text(&mut app, "/", now);
    assert_snapshot!("palette", render(&app, 80, 24));
    let shown = rows(&app, 80, 24).join("\n");
    for c in retrace_tui::command::COMMANDS.iter().take(5) {
        assert!(shown.contains(c.0), "{} missing:\n{shown}", c.0);
    }
    type_text(&mut app, "he", now);
    let shown = rows(&app, 80, 24).join("\n");
    assert!(shown.contains("/heads") && shown.contains("/help"), "{shown}");
    assert!(!shown.contains("/rewind"), "{shown}");
    // Down, Tab: the second one completed.
    press(&mut app, &[key(KeyCode::Down), key(KeyCode::Tab)]);
    assert_eq!(app.input().text(), "/help");
    press(&mut app, &[key(KeyCode::Enter)]);
    assert_eq!(app.screen(), Screen::Help);
    press(&mut app, &[key(KeyCode::Esc)]);

    // Enter on a command that needs an argument completes it.
    type_text(&mut app, "/sw", now);
    assert!(press(&mut app, &[key(KeyCode::Enter)]).is_empty());
    assert_eq!(app.input().text(), "/switch ");
    press(&mut app, &[ctrl('u')]);

    // Enter runs the one selected: `/re` is `/rewind` first.
    type_text(&mut app, "/re", now);
    assert_eq!(
        press(&mut app, &[key(KeyCode::Enter)]),
        vec![Effect::LoadCheckpoints]
    );

    // Esc closes it and keeps the text; it opens again once the input is emptied.
    let mut app = crate::fixtures::app();
    type_text(&mut app, "/u", now);
    press(&mut app, &[key(KeyCode::Esc)]);
    assert_eq!(app.input().text(), "/u");
    assert!(!rows(&app, 80, 24).join("\n").contains("Commands"));
    press(&mut app, &[key(KeyCode::Backspace), key(KeyCode::Backspace)]);
    type_text(&mut app, "/", now);
    assert!(rows(&app, 80, 24).join("\n").contains("Commands"));
    // A path is no command: no palette.
    type_text(&mut app, "etc/hosts", now);
    assert!(!rows(&app, 80, 24).join("\n").contains("Commands"));
}

#[test]
fn model_alone_lists_the_models_to_choose() {
    let mut app = app_with_turns();
    let now = Clock::new().at(0);
    type_text(&mut app, "/model", now);
    // Enter on `/model` lists the models (no "usage: /model <spec>").
    assert!(press(&mut app, &[key(KeyCode::Enter)]).is_empty());
    assert_eq!(app.input().text(), "/model ");
    assert_snapshot!("model_list", render(&app, 80, 24));
    let shown = rows(&app, 80, 24).join("\n");
    for m in [
        "deepseek:deepseek-chat",
        "deepseek:deepseek-reasoner",
        "demo",
        "script:FILE",
    ] {
        assert!(shown.contains(m), "{m}:\n{shown}");
    }
    // Typing filters; Enter uses the one selected.
    type_text(&mut app, "dem", now);
    assert_eq!(
        press(&mut app, &[key(KeyCode::Enter)]),
        vec![Effect::SetModel(ModelSpec::demo())]
    );
    assert!(app.input().is_empty());
    // `script:FILE` is a form: Enter leaves the path to type.
    type_text(&mut app, "/model scr", now);
    assert!(press(&mut app, &[key(KeyCode::Enter)]).is_empty());
    assert_eq!(app.input().text(), "/model script:");
    type_text(&mut app, "/tmp/s.json", now);
    assert_eq!(
        press(&mut app, &[key(KeyCode::Enter)]),
        vec![Effect::SetModel(ModelSpec::script("/tmp/s.json"))]
    );

    // The configured model is offered whole (its endpoint kept), first.
    let mut local = ModelSpec::new(Provider::OpenAi, "llama3");
    local.base_url = Some("http://127.0.0.1:8080/v1".into());
    app.set_configured_model(Some(&local));
    type_text(&mut app, "/model ", now);
    let shown = rows(&app, 80, 24).join("\n");
    let (llama, demo) = (shown.find("llama3"), shown.find("demo "));
    assert!(llama.is_some() && llama < demo, "{shown}");
    type_text(&mut app, "llama", now);
    assert_eq!(
        press(&mut app, &[key(KeyCode::Enter)]),
        vec![Effect::SetModel(local)]
    );
}

/// Found by a new user's trial: in `retrace demo`, `/model` Enter Enter picked DeepSeek (the list
/// started on its first row) and failed for want of a key. It starts on the model in use.
#[test]
fn the_model_list_opens_on_the_model_in_use() {
    let mut app = app_with_turns();
    let now = Clock::new().at(0);
    type_text(&mut app, "/model", now);
    assert!(press(&mut app, &[key(KeyCode::Enter)]).is_empty());
    assert_eq!(
        press(&mut app, &[key(KeyCode::Enter)]),
        vec![Effect::SetModel(ModelSpec::demo())]
    );
}

/// Found by a new user's trial: with no API key set, `/model` called the default model
/// "configured", as if it could answer. Its row says what is missing instead.
#[test]
fn the_model_list_says_a_configured_model_lacks_its_key() {
    let mut app = app_with_turns();
    let chat = ModelSpec::new(Provider::DeepSeek, "deepseek-chat");
    app.set_configured_model(Some(&chat));
    type_text(&mut app, "/model ", Clock::new().at(0));
    let row = |app: &retrace_tui::App| {
        rows(app, 100, 24)
            .into_iter()
            .find(|r| r.contains("deepseek:deepseek-chat"))
            .unwrap()
    };
    assert!(row(&app).contains("configured"), "{}", row(&app));
    app.set_model_problem(Some(ModelProblem {
        model: chat.to_string(),
        reason: "DEEPSEEK_API_KEY is not set".into(),
        key_env: Some("DEEPSEEK_API_KEY".into()),
    }));
    assert!(
        row(&app).contains("no API key: export DEEPSEEK_API_KEY") && !row(&app).contains("configured"),
        "{}",
        row(&app)
    );
    // A problem with another model says nothing about this one.
    app.set_model_problem(Some(ModelProblem {
        model: "openai:gpt-4o".into(),
        reason: "OPENAI_API_KEY is not set".into(),
        key_env: Some("OPENAI_API_KEY".into()),
    }));
    assert!(row(&app).contains("configured"), "{}", row(&app));
}

fn no_key_for_the_default() -> App {
    let mut app = app();
    let mut snap = snapshot_of(Vec::new(), "main", 0);
    snap.status.model = None;
    app.on_snapshot(snap);
    app.set_model_problem(Some(ModelProblem {
        model: "deepseek:deepseek-chat".into(),
        reason: "DEEPSEEK_API_KEY is not set".into(),
        key_env: Some("DEEPSEEK_API_KEY".into()),
    }));
    app
}

/// The two DeepSeek models are described in the same words, whether the key is missing or not.
#[test]
fn the_deepseek_models_are_described_alike() {
    let mut app = no_key_for_the_default();
    let chat = ModelSpec::new(Provider::DeepSeek, "deepseek-chat");
    app.set_configured_model(Some(&chat));
    type_text(&mut app, "/model ", Clock::new().at(0));
    let screen = rows(&app, 100, 24);
    let row = |name: &str| {
        screen
            .iter()
            .rfind(|r| r.contains(&format!("deepseek:{name} ")))
            .unwrap()
            .split(name)
            .nth(1)
            .unwrap()
            .trim()
            .trim_end_matches('│')
            .trim()
            .to_string()
    };
    assert_eq!(
        row("deepseek-chat"),
        "DeepSeek, no API key: export DEEPSEEK_API_KEY"
    );
    assert_eq!(row("deepseek-reasoner"), row("deepseek-chat"));
}

/// The palette shows as many commands as fit above the input and counts those cut off, as the
/// other boxes do: at 80×24 and 120×40 every one shows (8 did before, with no sign of the rest);
/// on a lower terminal those below are counted.
#[test]
fn the_palette_shows_what_fits_and_counts_the_rest() {
    let mut app = app();
    press(&mut app, &[key(KeyCode::Char('/'))]);
    for (w, h) in [(80, 24), (120, 40)] {
        let all = rows(&app, w, h).join("\n");
        assert!(!all.contains("more below"), "{all}");
        for name in ["/rewind", "/status", "/help", "/quit"] {
            assert!(all.contains(name), "{name} missing at {w}×{h}:\n{all}");
        }
    }
    let low = rows(&app, 80, 16).join("\n");
    assert!(low.contains("more below"), "{low}");
    // On the last row: those above are counted.
    press(&mut app, &[key(KeyCode::Up)]);
    let low = rows(&app, 80, 16).join("\n");
    assert!(low.contains("more above"), "{low}");
}

/// A message about what the input holds goes once the input changes: it would speak of other
/// text.
#[test]
fn a_hint_about_the_input_goes_when_the_input_changes() {
    let mut app = no_key_for_the_default();
    let now = Clock::new().at(0);
    type_text(&mut app, "explain main.py", now);
    app.on_key(key(KeyCode::Enter), now);
    // `/model demo` was typed in its place (the prompt held), and a model can answer now: the
    // prompt comes back, said above the input.
    press(&mut app, &[ctrl('u')]);
    let mut snap = snapshot_of(Vec::new(), "main", 0);
    snap.status.model = Some("demo".into());
    app.on_status(&snap.status);
    assert_eq!(app.input().text(), "explain main.py");
    assert!(app.message().is_some_and(|m| m.contains("your prompt is back")));
    // Cleared and something else typed: the message is gone.
    press(&mut app, &[ctrl('u'), key(KeyCode::Char('x'))]);
    assert_eq!(app.input().text(), "x");
    assert_eq!(app.message(), None);
}

/// A long line wraps in the input box: Up and Down move between its rows (the readline keys still
/// act on the whole line), and Up on the first row of an empty input still recalls the history.
#[test]
fn up_and_down_move_between_the_rows_of_a_wrapped_line() {
    let mut app = app();
    app.set_viewport(40, 24); // the box is 38 cells wide inside its borders
    let now = Clock::new().at(0);
    type_text(&mut app, "sent before", now);
    press(&mut app, &[key(KeyCode::Enter)]);
    let text: String = (0..=10).map(|i| format!("word{i:02} ")).collect();
    type_text(&mut app, text.trim_end(), now);
    let shown = rows(&app, 40, 24).join("\n");
    assert!(shown.contains("word00 word01"), "the start shows:\n{shown}");
    assert!(shown.contains("word10"), "{shown}");
    // Rows of whole words: "word00 … word04 " (0..35), "word05 … word09 " (35..70), "word10".
    // From the end (cell 6 of the last row), Up goes up a row at the same cell.
    let end = app.input().cursor();
    assert_eq!(end, 76);
    press(&mut app, &[key(KeyCode::Up)]);
    assert_eq!(app.input().cursor(), 41);
    press(&mut app, &[key(KeyCode::Up)]);
    assert_eq!(app.input().cursor(), 6);
    // On the first row: no history for a typed line.
    press(&mut app, &[key(KeyCode::Up)]);
    assert_eq!(app.input().cursor(), 6);
    assert!(app.input().text().starts_with("word00"));
    press(&mut app, &[key(KeyCode::Down), key(KeyCode::Down)]);
    assert_eq!(app.input().cursor(), end);
    // Ctrl-A goes to the start of the whole line, Ctrl-E to its end.
    press(&mut app, &[ctrl('a')]);
    assert_eq!(app.input().cursor(), 0);
    press(&mut app, &[ctrl('e')]);
    assert_eq!(app.input().cursor(), end);
    // Emptied, Up recalls what was sent.
    press(&mut app, &[ctrl('u'), key(KeyCode::Up)]);
    assert_eq!(app.input().text(), "sent before");
}

/// Found by an acceptance trial: a model reached through `--base-url` (its label "SPEC at URL")
/// was not marked "in use" in `/model`'s list; `demo` was. It is matched by its spec.
#[test]
fn the_model_list_marks_a_model_with_an_endpoint_in_use() {
    let mut app = app();
    let chat = ModelSpec::new(Provider::DeepSeek, "deepseek-chat");
    let mut snap = snapshot_of(Vec::new(), "main", 0);
    snap.status.model = Some(format!("{chat} at http://127.0.0.1:9/v1"));
    snap.status.model_spec = Some(chat.to_string());
    app.on_snapshot(snap);
    app.set_configured_model(Some(&chat));
    type_text(&mut app, "/model ", Clock::new().at(0));
    let shown = rows(&app, 100, 24).join("\n");
    let listed: Vec<&str> = shown
        .lines()
        .filter(|r| r.contains("deepseek:deepseek-chat") && r.contains("configured"))
        .collect();
    assert!(listed.len() == 1 && listed[0].contains("in use"), "{shown}");
}
