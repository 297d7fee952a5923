//! The web UI after a new user's third trial, through the real `retrace serve` and Debian's
//! chromium driven by playwright-core (as `web_cli` starts it):
//!
//! - `status.mjs`: the status line under the prompt reads as the terminal UI's — the model, the
//!   context, the session's tokens and their cost at the configured price — in the controller's
//!   words, the same after a reload.
//! - `queue.mjs`: Enter while a turn runs queues the prompt (shown under the transcript; Esc and
//!   Remove drop it, Edit and ↑ take it back), sent when the turn ends, given back when the turn is
//!   cancelled; its buttons are touch targets on a phone.
//! - `naming.mjs`: the picker names a new session by its first prompt while that turn still runs.
//! - `endpoint.mjs`: a model with an endpoint of its own is matched to the offered list by its
//!   status's `model_spec`, never by cutting its label.
//!
//! Screenshots go to `CARGO_TARGET_TMPDIR/web-screenshots/` (`status-*.png`, `queue-*.png`,
//! `naming-*.png`, `endpoint-*.png`).

use crate::web_cli::{can_run, clear_shots, shots_dir, Serve};

use serde_json::json;

/// Runs `script` against `serve`; fails with where the screenshots are.
fn run(serve: Serve, script: &str, shot: &str) {
    let (status, code) = serve.run(script);
    let status = status.unwrap_or_else(|| panic!("{script} timed out"));
    assert!(
        status.success(),
        "{script} failed ({status}); screenshots in {}",
        shots_dir().display()
    );
    assert_eq!(code, Some(0), "serve did not stop cleanly");
    assert!(shots_dir().join(format!("{shot}.png")).exists());
}

#[test]
fn the_page_shows_the_sessions_tally_like_the_terminal_ui() {
    if !can_run("browser", "CHROMIUM", "/usr/bin/chromium", "playwright-core") {
        return;
    }
    let serve = Serve::start_with_config_for(
        json!([
            {"content": "one", "usage": {"prompt_tokens": 1200, "completion_tokens": 300}},
            {"content": "two", "usage": {"prompt_tokens": 2400, "completion_tokens": 300}}
        ]),
        |script| {
            Some(format!(
                "[prices.{:?}]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\n",
                format!("script:{}", script.display())
            ))
        },
    );
    clear_shots(|n| n.starts_with("status-"));
    run(serve, "status.mjs", "status-line");
}

#[test]
fn the_page_queues_a_prompt_while_a_turn_runs() {
    if !can_run("browser", "CHROMIUM", "/usr/bin/chromium", "playwright-core") {
        return;
    }
    let serve = Serve::start(json!([
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo checked"}}]},
        {"content": "not run"},
        {"content": "the queued answer"},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo again"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo last"}}]}
    ]));
    clear_shots(|n| n.starts_with("queue-"));
    run(serve, "queue.mjs", "queue-phone");
}

#[test]
fn the_picker_names_a_new_session_by_its_prompt_mid_turn() {
    if !can_run("browser", "CHROMIUM", "/usr/bin/chromium", "playwright-core") {
        return;
    }
    let serve = Serve::start(json!([
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo named"}}]},
        {"content": "not run"}
    ]));
    clear_shots(|n| n.starts_with("naming-"));
    run(serve, "naming.mjs", "naming-mid-turn");
}

#[test]
fn the_model_select_matches_an_endpoint_model_by_its_spec() {
    if !can_run("browser", "CHROMIUM", "/usr/bin/chromium", "playwright-core") {
        return;
    }
    let serve = Serve::start(json!([{"content": "hi"}]));
    clear_shots(|n| n.starts_with("endpoint-"));
    run(serve, "endpoint.mjs", "endpoint-model");
}
