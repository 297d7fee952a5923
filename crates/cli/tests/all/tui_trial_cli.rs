//! What a second new-user trial found in the terminal UI, on the real binary under tmux: a
//! session quit without a prompt is not kept (nor offered to resume); `/model demo` typed after a
//! waiting prompt switches the model and gives the prompt back alone; `/status` at 80 columns
//! wraps the log's path between its names, on the screen and in the scrollback; a restore and
//! its undo stay in the transcript and the scrollback; approval buttons are never split, and a
//! denied command says so plainly; the status line shortens a long model's name before it drops
//! the cost; (a third trial) an undo's line ends the chat, after the turns it brought back.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support;
use crate::support::tmux::{
    flat, input_line, launch, launch_with, model_args, scratch, script_args, wait_input, Tmux,
};

/// The whole pane, the lines scrolled off the top included.
fn history(t: &Tmux) -> String {
    let out = t
        .tmux()
        .args(["capture-pane", "-p", "-S", "-", "-t", &t.name])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Waits until the UI has quit and left its pane (kept with `remain`) to the shell's output.
fn wait_dead(t: &Tmux) -> String {
    let start = Instant::now();
    while t.pane("#{pane_dead}") != "1" {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "still running:\n{}",
            t.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    history(t)
}

/// `retrace sessions --json` of workspace `ws`: the sessions' ids.
fn sessions(tmp: &Path, ws: &Path) -> Vec<String> {
    let out = support::isolated_retrace(tmp)
        .args(["sessions", "--json", "--workspace"])
        .arg(ws)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    list.as_array()
        .unwrap_or_else(|| panic!("{list}"))
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

/// Quitting without a prompt leaves no session behind and prints no resume line; a session with
/// a prompt stays, and `/sessions` then lists it alone.
#[test]
fn a_session_quit_without_a_prompt_is_not_kept() {
    let (tmp, ws) = scratch();
    let Some(t) = launch(
        tmp.path(),
        "retrace-empty",
        (80, 24),
        &model_args(&ws, "demo"),
        true,
    ) else {
        return;
    };
    // A model switch before any prompt does not make it worth keeping.
    t.text("/model demo");
    t.keys(&["Enter"]);
    t.wait("the switch", |s| s.contains("model changed"));
    t.keys(&["C-d"]);
    let all = wait_dead(&t);
    assert!(!all.contains("resume it with"), "{all}");
    assert_eq!(sessions(tmp.path(), &ws), Vec::<String>::new());
    drop(t);

    let Some(t) = launch(
        tmp.path(),
        "retrace-kept",
        (100, 30),
        &model_args(&ws, "demo"),
        true,
    ) else {
        return;
    };
    t.text("hello");
    t.keys(&["Enter"]);
    t.wait("the answer", |s| {
        s.contains("Demo answer 1") && !s.contains("working…")
    });
    t.text("/sessions");
    t.keys(&["Enter"]);
    t.wait("the sessions", |s| s.contains("Sessions of this workspace"));
    let screen = t.screen();
    assert!(!screen.contains("no prompt yet"), "{screen}");
    assert!(screen.contains("1 turn"), "{screen}");
    t.keys(&["Escape"]);
    t.keys(&["C-d"]);
    let all = wait_dead(&t);
    let listed = sessions(tmp.path(), &ws);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert!(
        all.contains(&format!("resume it with `retrace --session {}`", listed[0])),
        "{all}"
    );
}

/// No key: the prompt typed first waits; `/model demo` typed after it, as the hint says, switches
/// the model, and the prompt comes back alone.
#[test]
fn model_demo_typed_after_a_waiting_prompt_gives_the_prompt_back_alone() {
    let (tmp, ws) = scratch();
    let args = vec!["--workspace".to_string(), ws.display().to_string()];
    let Some(t) = launch(tmp.path(), "retrace-nokey2", (120, 30), &args, false) else {
        return;
    };
    t.text("explain main.py");
    t.keys(&["Enter"]);
    t.wait("the hint", |s| {
        s.contains("no model can answer yet") && s.contains("/model demo")
    });
    wait_input(&t, "explain main.py");
    t.text(" /model demo");
    t.keys(&["Enter"]);
    t.wait("the prompt back", |s| s.contains("your prompt is back"));
    assert_eq!(input_line(&t.screen()), "explain main.py");
    t.keys(&["Enter"]);
    t.wait("the demo's answer", |s| {
        s.contains("Demo answer 1") && s.contains("› explain main.py") && !s.contains("working…")
    });
    t.keys(&["C-d"]);
}

/// `/status` at 80 columns: the log's path wraps after a `/`, under its column, never inside a
/// name; the scrollback printed on quitting has the same rows.
#[test]
fn status_at_80_columns_wraps_the_log_path_between_its_names() {
    let (tmp, ws) = scratch();
    let Some(t) = launch(
        tmp.path(),
        "retrace-status80",
        (80, 40),
        &model_args(&ws, "demo"),
        true,
    ) else {
        return;
    };
    t.text("hello");
    t.keys(&["Enter"]);
    t.wait("the answer", |s| {
        s.contains("Demo answer 1") && !s.contains("working…")
    });
    t.text("/status");
    t.keys(&["Enter"]);
    t.wait("the status", |s| s.contains("  log "));
    let check = |text: &str| {
        let rows: Vec<&str> = text.lines().collect();
        let at = rows
            .iter()
            .rposition(|r| r.trim_start().starts_with("log "))
            .unwrap_or_else(|| panic!("{text}"));
        let (first, second) = (rows[at].trim_end(), rows[at + 1].trim_end());
        assert!(first.ends_with("/sessions/"), "{first}\n{second}");
        let name = second.trim_start();
        assert!(
            name.ends_with(".jsonl") && name.len() == 36 + 6,
            "{first}\n{second}"
        );
        assert_eq!(
            second.len() - name.len(),
            first.find('/').unwrap(),
            "under the value's column:\n{first}\n{second}"
        );
        assert!(rows.iter().all(|r| r.chars().count() <= 80));
    };
    check(&t.screen());
    let screen = flat(&t.screen());
    assert!(
        screen.contains("coverage") && screen.contains("endpoint"),
        "{screen}"
    );
    assert!(screen.contains("a window of"), "{screen}");
    t.keys(&["C-d"]);
    let all = wait_dead(&t);
    check(&all[..all.find("resume it with").unwrap_or(all.len())]);
}

/// A restore and its undo each leave a line in the transcript that stays after the next action
/// and in the scrollback after quitting.
#[test]
fn a_restore_and_its_undo_stay_in_the_scrollback() {
    let (tmp, ws) = scratch();
    let Some(t) = launch(
        tmp.path(),
        "retrace-restores",
        (100, 40),
        &model_args(&ws, "demo"),
        true,
    ) else {
        return;
    };
    t.text("hello");
    t.keys(&["Enter"]);
    t.wait("the answer", |s| {
        s.contains("Demo answer 1") && !s.contains("working…")
    });
    t.esc_esc();
    t.wait("the picker", |s| s.contains("(current)"));
    t.keys(&["Up", "Enter"]);
    t.wait("the menu", |s| s.contains("Restore code") && s.contains("Turn 0"));
    t.keys(&["3"]);
    t.wait("the preview", |s| s.contains("Restore code to before turn 0"));
    t.keys(&["Enter"]);
    let restored = "⎌ restored code to before turn 0: 2 files deleted";
    t.wait("the restore's line", |s| s.contains(restored));
    t.text("/undo");
    t.keys(&["Enter"]);
    let undone = "⎌ undid the code restore to before turn 0: 2 files written";
    t.wait("the undo's line", |s| s.contains(undone));
    // Another action: the message above the input changes, the lines stay.
    t.text("/status");
    t.keys(&["Enter"]);
    t.wait("the status", |s| s.contains("  log "));
    let screen = t.screen();
    assert!(screen.contains(undone), "{screen}");
    t.keys(&["C-d"]);
    let all = wait_dead(&t);
    let (a, b) = (all.find(restored), all.find(undone));
    assert!(matches!((a, b), (Some(a), Some(b)) if a < b), "{all}");
}

/// The trial's approval at 80 columns: every button whole on its row; denied, the row says
/// "⊘ denied" and no error text.
#[test]
fn approval_buttons_are_whole_and_a_denial_reads_plainly() {
    let (tmp, ws) = scratch();
    let args = script_args(
        tmp.path(),
        &ws,
        json!({"responses": [
            {"content": "Running it.", "tool_calls": [
                {"name": "bash", "arguments": {"command": "python3 main.py --verbose"}}
            ]},
            {"content": "It printed 5."}
        ]}),
    );
    let Some(t) = launch(tmp.path(), "retrace-approval80", (80, 24), &args, false) else {
        return;
    };
    t.text("run main");
    t.keys(&["Enter"]);
    t.wait("the approval", |s| s.contains("Run this shell command?"));
    let screen = t.screen();
    let buttons: Vec<&str> = screen
        .lines()
        .map(|r| r.trim().trim_start_matches('│').trim_end_matches('│').trim())
        .filter(|r| r.contains("[ ") || r.contains(" ]"))
        .collect();
    assert!(!buttons.is_empty(), "{screen}");
    for row in &buttons {
        assert!(
            row.starts_with("[ ") && row.ends_with(" ]"),
            "split: {buttons:#?}\n{screen}"
        );
    }
    assert!(
        buttons
            .iter()
            .any(|r| r.contains("[ Allow `python3 main.py …` for the session ]")),
        "{buttons:#?}"
    );
    // Past the guard time: `n` denies.
    std::thread::sleep(Duration::from_millis(700));
    t.keys(&["n"]);
    t.wait("the answer", |s| {
        s.contains("It printed 5.") && !s.contains("working…")
    });
    let screen = t.screen();
    let row = screen
        .lines()
        .find(|r| r.contains("⏺ Run python3 main.py --verbose"))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(row.trim_end().ends_with("⊘ denied"), "{row}");
    assert!(
        !screen.contains("error:") && !screen.contains("declined"),
        "{screen}"
    );
    t.keys(&["C-d"]);
}

/// A script's long path as the model, a price, plan mode, at 80 columns: the model's name is
/// shortened with "…"; the context, the tokens, the cost and the turn all show.
#[test]
fn the_status_line_shortens_a_long_model_name_before_the_cost() {
    let (tmp, ws) = scratch();
    let dir = tmp.path().join("scripts-for-the-trial/of-the-terminal-ui");
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("p.json");
    std::fs::write(
        &script,
        json!({"responses": [
            {"content": "planned", "usage": {"prompt_tokens": 30000, "completion_tokens": 2000}}
        ]})
        .to_string(),
    )
    .unwrap();
    let model = format!("script:{}", script.display());
    let xdg = tmp.path().join("xdg/retrace");
    std::fs::create_dir_all(&xdg).unwrap();
    std::fs::write(
        xdg.join("config.toml"),
        format!("[prices.{model:?}]\ninput_per_mtok = 0.3\noutput_per_mtok = 0.6\n"),
    )
    .unwrap();
    let Some(t) = launch_with(
        tmp.path(),
        "retrace-status-line",
        (80, 24),
        &model_args(&ws, &model),
        false,
        &[],
    ) else {
        return;
    };
    t.keys(&["BTab"]);
    t.wait("plan mode", |s| {
        s.lines().last().is_some_and(|l| l.contains("PLAN"))
    });
    t.text("plan it");
    t.keys(&["Enter"]);
    t.wait("the answer", |s| s.contains("planned") && !s.contains("working…"));
    let screen = t.screen();
    let status = screen.lines().last().unwrap();
    assert!(!status.contains(&model), "{status}");
    for part in [
        "PLAN",
        "…",
        "p.json",
        "% context",
        "30.0k in 2.0k out",
        "$0.0102",
        "turn 0",
    ] {
        assert!(status.contains(part), "{part} missing: {status:?}");
    }
    t.keys(&["C-d"]);
}

/// A new user's third trial: after restoring code and conversation to before turn 1, `/undo`'s
/// line landed where the restore had (mid-conversation, out of sight at 80×24, and before the
/// turn it brought back in the scrollback). It ends the chat now, after that turn, on the screen
/// and in the scrollback.
#[test]
fn an_undo_line_follows_the_turns_it_brought_back() {
    let (tmp, ws) = scratch();
    let Some(t) = launch(
        tmp.path(),
        "retrace-undo-order",
        (80, 24),
        &model_args(&ws, "demo"),
        true,
    ) else {
        return;
    };
    for (prompt, answer) in [("hello", "Demo answer 1"), ("again", "Demo answer 2")] {
        t.text(prompt);
        t.keys(&["Enter"]);
        t.wait(answer, |s| s.contains(answer) && !s.contains("working…"));
    }
    t.esc_esc();
    t.wait("the picker", |s| s.contains("(current)"));
    t.keys(&["Up", "Enter"]);
    t.wait("the menu", |s| s.contains("Turn 1"));
    t.keys(&["1"]);
    t.wait("the preview", |s| {
        s.contains("Restore code and conversation to before turn 1")
    });
    t.keys(&["Enter"]);
    t.wait("the restore's line", |s| {
        s.contains("⎌ restored code and conversation to before turn 1")
    });
    // The prompt came back into the input: cleared to type the command.
    t.keys(&["C-u"]);
    t.text("/undo");
    t.keys(&["Enter"]);
    let undone = "⎌ undid the code and conversation restore to before turn 1";
    t.wait(
        "the undo's line after the turn it brought back",
        |s| matches!((s.find("Demo answer 2"), s.find(undone)), (Some(a), Some(u)) if a < u),
    );
    t.keys(&["C-d"]);
    let all = wait_dead(&t);
    let (answer, undid) = (all.rfind("Demo answer 2"), all.rfind(undone));
    assert!(matches!((answer, undid), (Some(a), Some(u)) if a < u), "{all}");
}
