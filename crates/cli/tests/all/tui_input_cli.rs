//! The terminal UI's input in a real terminal (issue 28), the real binary under `tmux`: readline
//! keys edit the input line, a bracketed paste of 120 lines shows folded and is sent whole, `/`
//! opens the command palette (typing filters, Tab completes), `/model` lists the models, a
//! prompt typed while a turn runs is queued, sent when the turn ends, or removed with Esc, and a
//! prompt longer than the box wraps in it, the cursor after its last character.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support;
use crate::support::tmux::{
    input_line, launch, launch_with, model_args, paste, scratch, script_args, wait_input,
};

#[test]
fn readline_keys_edit_the_input_line() {
    let (tmp, ws) = scratch();
    let Some(t) = launch(
        tmp.path(),
        "retrace-keys",
        (100, 30),
        &model_args(&ws, "demo"),
        false,
    ) else {
        return;
    };
    t.text("hello world foo");
    wait_input(&t, "hello world foo");
    t.keys(&["C-a", "C-k"]);
    wait_input(&t, "");
    t.keys(&["C-y"]);
    wait_input(&t, "hello world foo");
    // Alt-B moves a word back (it used to type "b").
    t.keys(&["M-b"]);
    t.text("X");
    wait_input(&t, "hello world Xfoo");
    t.keys(&["C-e", "C-w"]);
    wait_input(&t, "hello world");
    t.keys(&["C-y", "C-y"]);
    wait_input(&t, "hello world XfooXfoo");
    t.keys(&["C-u"]);
    wait_input(&t, "");
}

#[test]
fn a_pasted_block_shows_folded_and_is_sent_whole() {
    let (tmp, ws) = scratch();
    let args = script_args(
        tmp.path(),
        &ws,
        json!({"responses": [{"content": "read them all"}]}),
    );
    let Some(t) = launch(tmp.path(), "retrace-paste", (100, 30), &args, false) else {
        return;
    };
    let block: String = (1..=120).map(|i| format!("line {i} of the paste\n")).collect();
    t.text("look: ");
    paste(&t, &block);
    wait_input(&t, "look: [pasted 120 lines]");
    t.text(" thanks");
    wait_input(&t, "look: [pasted 120 lines] thanks");
    // Its line breaks sent nothing: still in the input.
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(input_line(&t.screen()), "look: [pasted 120 lines] thanks");
    t.keys(&["Enter"]);
    t.wait("the answer", |s| s.contains("read them all"));
    // The session's log has the whole prompt.
    let out = support::isolated_retrace(tmp.path())
        .args(["transcript", "--continue", "--json", "--workspace"])
        .arg(&ws)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let want = format!("look: {block} thanks");
    let mut texts = Vec::new();
    strings(&v, &mut texts);
    assert!(texts.contains(&want), "not sent whole: {v}");
}

fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

#[test]
fn slash_lists_the_commands_and_model_lists_the_models() {
    let (tmp, ws) = scratch();
    let Some(t) = launch(
        tmp.path(),
        "retrace-palette",
        (100, 30),
        &model_args(&ws, "demo"),
        false,
    ) else {
        return;
    };
    t.text("/");
    t.wait("the palette", |s| {
        s.contains("Commands") && s.contains("/rewind") && s.contains("open the rewind picker")
    });
    t.text("he");
    t.wait("the list filtered", |s| {
        s.contains("/heads") && s.contains("/help") && !s.contains("/rewind")
    });
    t.keys(&["Tab"]);
    wait_input(&t, "/heads");
    t.keys(&["C-u"]);
    wait_input(&t, "");
    t.wait("the palette closed", |s| !s.contains("Commands"));

    // `/model` alone lists the models to choose; Enter on one uses it.
    t.text("/model");
    t.keys(&["Enter"]);
    t.wait("the models", |s| {
        s.contains("Models")
            && s.contains("deepseek:deepseek-chat")
            && s.contains("script:FILE")
            && s.contains("demo")
            && !s.contains("usage: /model")
    });
    t.text("demo");
    t.keys(&["Enter"]);
    t.wait("the model used", |s| {
        s.contains("model changed") && !s.contains("Models")
    });
}

/// A turn whose shell command takes a while, then answers "first done"; the next turn answers
/// "second done".
fn slow_turn(tmp: &std::path::Path, ws: &std::path::Path) -> Vec<String> {
    script_args(
        tmp,
        ws,
        json!({"responses": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 2"}}]},
            {"content": "first done"},
            {"content": "second done"}
        ]}),
    )
}

#[test]
fn a_prompt_typed_while_a_turn_runs_is_sent_after_it() {
    let (tmp, ws) = scratch();
    let args = slow_turn(tmp.path(), &ws);
    let Some(t) = launch_with(
        tmp.path(),
        "retrace-queue",
        (100, 30),
        &args,
        false,
        &[("RETRACE_BASH", "allow")],
    ) else {
        return;
    };
    t.text("run the slow thing");
    t.keys(&["Enter"]);
    t.wait("the turn running", |s| s.contains("working"));
    t.text("then this");
    t.keys(&["Enter"]);
    t.wait("the prompt queued", |s| s.contains("queued: then this"));
    assert!(!t.screen().contains("a turn is running"), "{}", t.screen());
    t.wait("the queued prompt answered", |s| s.contains("second done"));
    let screen = t.screen();
    assert!(screen.contains("first done"), "{screen}");
    assert!(screen.contains("› then this"), "{screen}");
    assert!(!screen.contains("queued:"), "{screen}");
    assert!(!screen.contains("a turn is running"), "{screen}");
}

#[test]
fn esc_removes_a_queued_prompt_and_the_turn_goes_on() {
    let (tmp, ws) = scratch();
    let args = slow_turn(tmp.path(), &ws);
    let Some(t) = launch_with(
        tmp.path(),
        "retrace-unqueue",
        (100, 30),
        &args,
        false,
        &[("RETRACE_BASH", "allow")],
    ) else {
        return;
    };
    t.text("run the slow thing");
    t.keys(&["Enter"]);
    t.wait("the turn running", |s| s.contains("working"));
    t.text("never mind");
    t.keys(&["Enter"]);
    t.wait("the prompt queued", |s| s.contains("queued: never mind"));
    t.keys(&["Escape"]);
    t.wait("the queued prompt removed", |s| {
        !s.contains("queued: never mind") && s.contains("queued prompt removed")
    });
    t.wait("the turn's end", |s| s.contains("first done"));
    std::thread::sleep(Duration::from_millis(500));
    let screen = t.screen();
    assert!(!screen.contains("second done"), "{screen}");
    assert!(!screen.contains("› never mind"), "{screen}");
}

/// The cursor's cell in the pane: column, row.
fn cursor(t: &crate::support::tmux::Tmux) -> (usize, usize) {
    let n = |f: &str| t.pane(f).parse::<usize>().unwrap();
    (n("#{cursor_x}"), n("#{cursor_y}"))
}

/// A prompt longer than the input box wraps in it (a new user's third trial: it scrolled
/// sideways, its start out of sight), the cursor right after its last character; wide
/// characters take two cells, and one that does not fit starts the next row.
#[test]
fn a_long_prompt_wraps_in_the_input_box() {
    let (tmp, ws) = scratch();
    let Some(t) = launch(
        tmp.path(),
        "retrace-wrap",
        (80, 24),
        &model_args(&ws, "demo"),
        false,
    ) else {
        return;
    };
    let words: Vec<String> = (0..=20).map(|i| format!("word{i:02}")).collect();
    t.text(&words.join(" "));
    t.wait("the wrapped prompt", |s| {
        s.contains("│word00 word01") && s.contains("word20")
    });
    let screen = t.screen();
    let rows: Vec<&str> = screen.lines().collect();
    let y = rows.iter().position(|r| r.contains("word20")).unwrap();
    let x = rows[y][..rows[y].find("word20").unwrap()].chars().count() + "word20".len();
    assert_eq!(cursor(&t), (x, y), "{screen}");
    // Wide characters: 45 of them take 90 cells, 39 on a row of the 78 inside the box; the
    // cursor after the last, at cell 2 × 6 of the third row.
    t.keys(&["C-u"]);
    wait_input(&t, "");
    t.text(&"漢".repeat(45));
    t.wait("the wide prompt", |s| {
        s.contains(&"漢".repeat(6)) && !s.contains(&"漢".repeat(40))
    });
    let screen = t.screen();
    let rows: Vec<&str> = screen.lines().collect();
    let last = rows.iter().rposition(|r| r.contains('漢')).unwrap();
    assert_eq!(rows[last].matches('漢').count(), 6, "{screen}");
    assert_eq!(cursor(&t), (1 + 12, last), "{screen}");
}
