//! The terminal UI on the real binary under tmux: an answer's markdown drawn (no `**`, no
//! fences), the first screen without a key (what to export, `retrace config`, `/model demo`) with
//! a typed prompt kept, the status line whole at 80×24 (tokens, context, the configured price's
//! cost), `/status`, and the conversation left in the terminal's scrollback after quitting.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::tmux::{flat, launch, launch_with, model_args, scratch, script_args, Tmux};

/// The whole pane, the lines scrolled off the top included.
fn history(t: &Tmux) -> String {
    let out = t
        .tmux()
        .args(["capture-pane", "-p", "-S", "-", "-t", &t.name])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Waits (up to 20 s) until the whole pane satisfies `done`.
fn wait_history(t: &Tmux, what: &str, done: impl Fn(&str) -> bool) -> String {
    let start = Instant::now();
    loop {
        let all = history(t);
        if done(&all) {
            return all;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "waited for {what}; the pane:\n{all}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// An answer in markdown, as a model writes one.
const ANSWER: &str = "Here is **the plan**:\n\n1. Read `calc/ops.py`\n2. Add `mul`\n   - with a test\n\n```python\ndef mul(a, b):\n    return a * b\n```\n\n| op | done |\n|---|---|\n| mul | yes |\n\nDone.";

#[test]
fn markdown_is_drawn_and_stays_in_the_scrollback_after_quitting() {
    let (tmp, ws) = scratch();
    let args = script_args(
        tmp.path(),
        &ws,
        json!({"responses": [{"content": ANSWER, "usage": {"prompt_tokens": 1234, "completion_tokens": 56}}]}),
    );
    let Some(t) = launch(tmp.path(), "retrace-markdown", (80, 24), &args, true) else {
        return;
    };
    t.text("plan the mul change");
    t.keys(&["Enter"]);
    t.wait("the answer", |s| s.contains("Done.") && !s.contains("working…"));
    let screen = t.screen();
    for raw in ["**", "```", "`calc"] {
        assert!(!screen.contains(raw), "{raw} shows:\n{screen}");
    }
    for drawn in [
        "Here is the plan:",
        "1. Read calc/ops.py",
        "◦ with a test",
        "    def mul(a, b):",
        "        return a * b",
        "op  │ done",
    ] {
        assert!(screen.contains(drawn), "{drawn} missing:\n{screen}");
    }
    t.keys(&["C-d"]);
    // The UI is gone; its conversation is on the normal screen, above the resume line.
    let all = wait_history(&t, "the resume line", |a| a.contains("resume it with"));
    assert_eq!(t.pane("#{alternate_on}"), "0");
    let prompt = all.find("› plan the mul change").expect(&all);
    let code = all.find("    def mul(a, b):").expect(&all);
    let resume = all.find("resume it with `retrace --session ").unwrap();
    assert!(prompt < code && code < resume, "{all}");
    assert!(!all[prompt..].contains("**"), "{all}");
}

#[test]
fn without_a_key_the_first_screen_explains_and_a_typed_prompt_is_kept() {
    let (tmp, ws) = scratch();
    let args = vec!["--workspace".to_string(), ws.display().to_string()];
    let Some(t) = launch(tmp.path(), "retrace-welcome", (80, 24), &args, false) else {
        return;
    };
    t.wait("the welcome", |s| {
        s.contains("every edit can be taken back: Esc Esc")
    });
    let screen = flat(&t.screen());
    for words in [
        "DEEPSEEK_API_KEY is not set",
        "export DEEPSEEK_API_KEY=",
        "retrace config",
        "/model demo",
        "deepseek:deepseek-chat cannot answer yet",
    ] {
        assert!(screen.contains(words), "{words} missing:\n{}", t.screen());
    }
    // No row of the panel is cut.
    assert!(!t.screen().contains('…'), "{}", t.screen());
    t.text("add a mul function");
    t.keys(&["Enter"]);
    t.wait("the prompt kept", |s| {
        s.contains("no model can answer yet") && s.contains("│add a mul function")
    });
    // Cleared to pick the demo model; the prompt comes back once it can answer.
    t.keys(&["Escape"]);
    // A moment apart: Esc and what follows sent in one go read as an Alt key.
    std::thread::sleep(Duration::from_millis(150));
    t.text("/model demo");
    t.keys(&["Enter"]);
    t.wait("the prompt back", |s| {
        s.contains("your prompt is back") && s.contains("│add a mul function")
    });
    t.keys(&["Enter"]);
    t.wait("the demo's answer", |s| {
        s.contains("Demo answer") && !s.contains("working…")
    });
    t.keys(&["C-d"]);
}

#[test]
fn the_status_line_fits_80_columns_and_status_shows_the_rest() {
    let (tmp, ws) = scratch();
    let script = tmp.path().join("s.json");
    std::fs::write(
        &script,
        json!({"responses": [
            {"content": "one", "usage": {"prompt_tokens": 21000, "completion_tokens": 1500, "cached_tokens": 20000}},
            {"content": "two", "usage": {"prompt_tokens": 23000, "completion_tokens": 500}}
        ]})
        .to_string(),
    )
    .unwrap();
    let model = format!("script:{}", script.display());
    // A price for this model in the config: the cost shows.
    let xdg = tmp.path().join("xdg/retrace");
    std::fs::create_dir_all(&xdg).unwrap();
    std::fs::write(
        xdg.join("config.toml"),
        format!(
            "[prices.{:?}]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\ncached_input_per_mtok = 0.5\n",
            model
        ),
    )
    .unwrap();
    let Some(t) = launch_with(
        tmp.path(),
        "retrace-status",
        (80, 24),
        &model_args(&ws, &model),
        false,
        &[],
    ) else {
        return;
    };
    for (i, prompt) in ["first", "second"].iter().enumerate() {
        t.text(prompt);
        t.keys(&["Enter"]);
        let answer = ["one", "two"][i];
        t.wait("the answer", |s| {
            s.contains(&format!("  {answer}")) && !s.contains("working…")
        });
    }
    let screen = t.screen();
    let status = screen.lines().last().unwrap_or("");
    // 44k in, 2k out: 24,000 fresh at $1, 20,000 cached at $0.5, 2,000 out at $2 = $0.038.
    for part in ["35% context", "44.0k in 2.0k out", "$0.0380"] {
        assert!(status.contains(part), "{part} missing: {status:?}");
    }
    // The script's long path may be shortened, in the model's name only: nothing else is cut.
    let model_part = status.split(" · ").next().unwrap_or("");
    assert!(
        !status[model_part.len()..].contains('…') && !status.contains(ws.to_str().unwrap()),
        "{status:?}"
    );
    t.text("/status");
    t.keys(&["Enter"]);
    t.wait("the status", |s| {
        s.contains("backend") && s.contains("from the cache")
    });
    let all = flat(&t.screen());
    for part in [
        "retrace --session",
        &ws.display().to_string(),
        "20.0k from the cache",
        "$0.0380",
    ] {
        assert!(all.contains(part), "{part} missing:\n{}", t.screen());
    }
    t.keys(&["C-d"]);
}
