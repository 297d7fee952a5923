//! The terminal UI end to end (issue 15): the real binary in a real terminal (`tmux`), a script
//! model, and the files on disk. Type two prompts, Esc Esc, Up, Up, Enter, `3`, Enter: the files
//! are as before turn 0; `/undo` brings them back, `/redo` takes them away again and `/undo` back; Esc Esc Enter changes nothing; `2` shows the
//! conversation's preview and Enter rewinds it, the files untouched. A turn's tool
//! calls and checkpoint show the same rows live and after the UI is started again on the
//! session, and a code rewind and its undo keep them. `/diff 0` shows a demo turn's file,
//! `/history` its versions, and one of them is restored on disk and undone.

use crate::support;
use crate::support::tmux::{
    flat, launch, launch_with, model_args, scratch, script_args, tmux_or_skip, wait_gone,
};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

/// Waits (up to 10 s) until process `pid` has exited (gone, or a zombie not yet reaped).
fn wait_exit(pid: &str) {
    let proc_dir = PathBuf::from(format!("/proc/{pid}"));
    let start = Instant::now();
    while proc_dir.exists() {
        let state = std::fs::read_to_string(proc_dir.join("stat")).unwrap_or_default();
        if state.split_whitespace().nth(2) == Some("Z") {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "retrace {pid} still runs after its terminal went away"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn files(ws: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(ws)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The rows that show tool calls, their files and checkpoints, in order.
fn item_rows(screen: &str) -> Vec<String> {
    screen
        .lines()
        .map(str::trim)
        .filter(|l| {
            l.starts_with('⏺')
                || l.starts_with("✓ checkpoint")
                || ["created ", "modified ", "deleted ", "moved "]
                    .iter()
                    .any(|w| l.starts_with(w))
        })
        .map(str::to_string)
        .collect()
}

/// A turn that creates, modifies and moves a file and fails to delete one shows each call's
/// title, status and files, and its checkpoint's file count, live; the UI started again on the
/// session (`--continue`) shows the same rows. A code rewind and its undo keep the checkpoint's
/// count, and each is said once, at once: its ⎌ line in place of the note the session keeps.
#[test]
fn a_turn_shows_the_same_rows_live_after_a_restart_and_after_a_rewind() {
    let (tmp, ws) = scratch();
    std::fs::write(ws.join("b.txt"), "one\n").unwrap();
    std::fs::write(ws.join("old.txt"), "moving\n").unwrap();
    let args = script_args(
        tmp.path(),
        &ws,
        json!({"responses": [
            {"content": "on it", "tool_calls": [
                {"name": "write_file", "arguments": {"path": "new.txt", "content": "fresh\n"}},
                {"name": "edit_file", "arguments": {"path": "b.txt", "old_string": "one", "new_string": "two"}},
                {"name": "move_file", "arguments": {"from": "old.txt", "to": "moved.txt"}},
                {"name": "delete_file", "arguments": {"path": "missing.txt"}}
            ]},
            {"content": "all four done"}
        ]}),
    );
    let Some(t) = launch(tmp.path(), "retrace-items", (120, 40), &args, false) else {
        return;
    };
    t.text("change the files");
    t.keys(&["Enter"]);
    t.wait("the turn", |s| {
        s.contains("all four done") && !s.contains("working…")
    });
    let live = item_rows(&t.screen());
    let expected = [
        "✓ checkpoint saved · turn 0 · 4 files recorded",
        "⏺ Created new.txt +1 −0 ✓",
        "created new.txt +1 −0",
        "⏺ Edited b.txt +1 −1 ✓",
        "modified b.txt +1 −1",
        "⏺ Moved old.txt → moved.txt ✓",
        "moved old.txt → moved.txt",
    ];
    assert_eq!(live[..expected.len()], expected, "{live:#?}\n{}", t.screen());
    assert_eq!(live.len(), expected.len() + 1, "{live:#?}");
    assert!(
        live[expected.len()].starts_with("⏺ Delete missing.txt ✗ failed: file not found"),
        "{live:#?}"
    );
    t.keys(&["C-d"]);
    wait_gone(&t);

    // Started again on the same session: the same rows, from what is stored.
    let again = vec![
        "--workspace".to_string(),
        ws.display().to_string(),
        "--continue".to_string(),
    ];
    let Some(t2) = launch(tmp.path(), "retrace-items-again", (120, 40), &again, false) else {
        return;
    };
    t2.wait("the turn's rows", |s| s.contains("all four done"));
    assert_eq!(item_rows(&t2.screen()), live, "{}", t2.screen());

    // A code rewind to before turn 0: the files are back, said once (the ⎌ line, not also the
    // note kept for the model), and the checkpoint still counts the files it holds.
    t2.esc_esc();
    t2.wait("the picker", |s| s.contains("(current)"));
    t2.keys(&["Up", "Enter"]);
    t2.wait("the menu", |s| s.contains("Restore code") && s.contains("Turn 0"));
    t2.keys(&["3"]);
    t2.wait("the preview", |s| s.contains("Restore code to before turn 0"));
    t2.keys(&["Enter"]);
    let restored = "⎌ restored code to before turn 0: ";
    t2.wait("the restore's line", |s| flat(s).contains(restored));
    assert_eq!(files(&ws), ["b.txt", "old.txt"]);
    let screen = t2.screen();
    assert!(!flat(&screen).contains("※ Restored "), "said twice:\n{screen}");
    assert!(item_rows(&screen).contains(&expected[0].to_string()), "{screen}");

    // Its undo: the files are as the turn left them, a second line says so, the count stays.
    t2.text("/undo");
    t2.keys(&["Enter"]);
    t2.wait("the undo's line", |s| {
        flat(s).contains("⎌ undid the code restore to before turn 0")
    });
    assert_eq!(files(&ws), ["b.txt", "moved.txt", "new.txt"]);
    let screen = t2.screen();
    assert!(item_rows(&screen).contains(&expected[0].to_string()), "{screen}");
    assert!(
        flat(&screen).contains(restored),
        "the first line stays:\n{screen}"
    );
    assert!(!flat(&screen).contains("※ Undid"), "said twice:\n{screen}");
    t2.keys(&["C-d"]);
    wait_gone(&t2);
    drop(t);
}

#[test]
fn rewind_and_undo_in_a_real_terminal() {
    let (tmp, ws) = scratch();
    std::fs::write(ws.join("keep.txt"), "kept\n").unwrap();
    let args = script_args(
        tmp.path(),
        &ws,
        json!({"responses": [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "one.txt", "content": "1\n"}}]},
            {"content": "wrote one"},
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "two.txt", "content": "2\n"}}]},
            {"content": "wrote two"}
        ]}),
    );
    let Some(t) = launch(tmp.path(), "retrace-e2e", (100, 30), &args, false) else {
        return;
    };

    t.text("first");
    t.keys(&["Enter"]);
    // A turn is over when its answer is shown and the "working…" line is gone.
    t.wait("turn 0", |s| s.contains("wrote one") && !s.contains("working…"));
    t.text("second");
    t.keys(&["Enter"]);
    t.wait("turn 1", |s| s.contains("wrote two") && !s.contains("working…"));
    assert_eq!(files(&ws), ["keep.txt", "one.txt", "two.txt"]);

    // Esc Esc Enter: the picker opens on "(current)", and Enter there changes nothing.
    t.esc_esc();
    t.wait("the picker", |s| s.contains("(current)"));
    t.keys(&["Enter"]);
    t.wait("the picker to close", |s| !s.contains("(current)"));
    assert_eq!(files(&ws), ["keep.txt", "one.txt", "two.txt"]);

    // Esc Esc, Up, Up (turn 0), Enter, 3 (restore code), Enter (confirm the preview).
    t.esc_esc();
    t.wait("the picker", |s| s.contains("(current)"));
    t.keys(&["Up", "Up", "Enter"]);
    t.wait("the menu", |s| s.contains("Restore code") && s.contains("Turn 0"));
    t.keys(&["3"]);
    t.wait("the preview", |s| s.contains("Restore code to before turn 0"));
    t.keys(&["Enter"]);
    t.wait("the rewind", |s| s.contains("rewound to before turn 0"));
    assert_eq!(files(&ws), ["keep.txt"]);

    t.text("/undo");
    t.keys(&["Enter"]);
    let start = Instant::now();
    while files(&ws) != ["keep.txt", "one.txt", "two.txt"] {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "undo: {:?}\n{}",
            files(&ws),
            t.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(std::fs::read_to_string(ws.join("two.txt")).unwrap(), "2\n");

    // /redo: the rewind once more; /undo takes the redo back.
    t.wait("the undo's answer", |s| s.contains("/redo to apply it again"));
    t.text("/redo");
    t.keys(&["Enter"]);
    t.wait("the redo", |s| s.contains("redone: 2 files deleted"));
    assert_eq!(files(&ws), ["keep.txt"]);
    t.text("/undo");
    t.keys(&["Enter"]);
    t.wait("the redo undone", |s| s.contains("undone: 2 files written"));
    assert_eq!(files(&ws), ["keep.txt", "one.txt", "two.txt"]);

    // Esc Esc, Up (turn 1), Enter, 2 (restore the conversation): its preview says what the
    // conversation goes back to and that no file changes; nothing is committed before Enter.
    t.esc_esc();
    t.wait("the picker", |s| s.contains("(current)"));
    t.keys(&["Up", "Enter"]);
    t.wait("the menu", |s| {
        s.contains("Restore conversation") && s.contains("Turn 1")
    });
    t.keys(&["2"]);
    t.wait("the conversation's preview", |s| {
        s.contains("Restore conversation to before turn 1") && s.contains("files: untouched")
    });
    assert!(t.screen().contains("› second"), "{}", t.screen());
    t.keys(&["Enter"]);
    t.wait("the conversation rewind and the new head", |s| {
        s.contains("rewound to before turn 1: the conversation only") && !s.contains("wrote two")
    });
    assert_eq!(files(&ws), ["keep.txt", "one.txt", "two.txt"]);
    // The prompt is back in the input: Esc clears it, so Ctrl-D below finds it empty.
    assert!(t.screen().contains("second"), "{}", t.screen());
    t.keys(&["Escape"]);
    // (The status line names the new head after that prompt: "rewind before “second”".)
    t.wait("the input cleared", |s| !s.contains("│second"));

    // Ctrl-D on the empty input quits; the terminal is the shell's again.
    t.keys(&["C-d"]);
    let start = Instant::now();
    while t
        .tmux()
        .args(["has-session", "-t", &t.name])
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap()
        .success()
    {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "still running:\n{}",
            t.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Two demo turns, then `/diff 0` shows the file the first one created, `/history` lists the
/// file's versions, and Enter on the first turn's end, confirmed in its preview, puts that
/// version back on disk; `/undo` takes the restore back.
#[test]
fn diff_history_and_a_version_restored_in_a_real_terminal() {
    let (tmp, ws) = scratch();
    let Some(t) = launch(
        tmp.path(),
        "retrace-history",
        (120, 40),
        &model_args(&ws, "demo"),
        false,
    ) else {
        return;
    };
    let notes = || std::fs::read_to_string(ws.join("demo/notes.md")).unwrap();
    t.text("first");
    t.keys(&["Enter"]);
    t.wait("turn 0", |s| {
        s.contains("Demo answer 1") && !s.contains("working…")
    });
    let first = notes();
    t.text("second");
    t.keys(&["Enter"]);
    t.wait("turn 1", |s| {
        s.contains("Demo answer 2") && !s.contains("working…")
    });
    let second = notes();
    assert_ne!(first, second);

    t.text("/diff 0");
    t.keys(&["Enter"]);
    t.wait("turn 0's diff", |s| {
        s.contains("What turn 0 changed") && s.contains("created demo/notes.md +")
    });
    t.keys(&["Escape"]);
    t.wait("the diff closed", |s| !s.contains("What turn 0 changed"));

    t.text("/history demo/notes.md");
    t.keys(&["Enter"]);
    t.wait("the history", |s| {
        s.contains("History of demo/notes.md") && s.contains("turn 0 end") && s.contains("now")
    });
    // The cursor starts on "now"; Up to "turn 0 end".
    let rows: Vec<String> = t
        .screen()
        .lines()
        .filter_map(|l| l.split('│').nth(1))
        .map(str::trim)
        .filter(|l| l.trim_start_matches("› ").starts_with('v'))
        .map(str::to_string)
        .collect();
    let cursor = rows.iter().position(|r| r.starts_with('›')).unwrap();
    let target = rows.iter().position(|r| r.contains("turn 0 end")).unwrap();
    for _ in target..cursor {
        t.keys(&["Up"]);
    }
    t.wait("the cursor on turn 0's end", |s| {
        s.lines().any(|l| l.contains("│› v") && l.contains("turn 0 end"))
    });
    t.keys(&["Enter"]);
    t.wait("the revert's preview", |s| {
        s.contains("Restore demo/notes.md to v")
    });
    t.keys(&["Enter"]);
    t.wait("the revert", |s| s.contains("restored demo/notes.md to v"));
    assert_eq!(notes(), first);

    t.text("/undo");
    t.keys(&["Enter"]);
    t.wait("the undo", |s| s.contains("/redo to apply it again"));
    assert_eq!(notes(), second);
    t.keys(&["C-d"]);
    wait_gone(&t);
}

/// Found when a test's terminal went away: the UI kept running, spinning, after the hangup. It
/// must end, restoring nothing it cannot and releasing the session.
#[test]
fn the_ui_ends_when_its_terminal_goes_away() {
    let (tmp, ws) = scratch();
    let Some(t) = launch(
        tmp.path(),
        "retrace-hup",
        (80, 24),
        &model_args(&ws, "demo"),
        false,
    ) else {
        return;
    };
    let pid = t.pane("#{pane_pid}");
    assert!(!pid.is_empty());
    let _ = t
        .tmux()
        .arg("kill-server")
        .stderr(std::process::Stdio::null())
        .status();
    wait_exit(&pid);
}

/// With no key for the model, the UI still opens and its first screen says so and what to do, as
/// does `/model`'s list; `/model demo` then answers.
#[test]
fn without_a_key_the_first_screen_says_what_to_do() {
    let (tmp, ws) = scratch();
    let Some(t) = launch(
        tmp.path(),
        "retrace-nokey",
        (160, 24),
        &["--workspace".to_string(), ws.display().to_string()],
        false,
    ) else {
        return;
    };
    t.wait("the first screen", |s| {
        s.contains("/model demo") && s.contains("DEEPSEEK_API_KEY")
    });
    // `/model` lists the default model with what it lacks, never as "configured".
    t.text("/model ");
    t.wait("the models", |s| {
        s.lines().any(|l| {
            l.contains("deepseek:deepseek-chat") && l.contains("no API key: export DEEPSEEK_API_KEY")
        }) && !s.contains("configured")
    });
    t.keys(&["C-u"]);
    t.text("/model demo");
    t.keys(&["Enter"]);
    t.wait("the model", |s| s.contains("model changed"));
    t.text("hello");
    t.keys(&["Enter"]);
    t.wait("the demo's answer", |s| {
        s.contains("Demo answer 1") && !s.contains("working…")
    });
    assert!(ws.join("demo/notes.md").exists());
    t.keys(&["C-d"]);
}

/// Found by attack: a SIGINT from outside ended the UI without restoring the terminal; a SIGQUIT
/// left it raw, on the alternate screen, with mouse reports on. Both end it like SIGTERM: the
/// screen is the shell's again. (The exit status, 128 + the signal, is not checked here: tmux
/// does not always report it.)
#[test]
fn a_sigint_or_sigquit_from_outside_restores_the_terminal() {
    for sig in ["-INT", "-QUIT"] {
        let (tmp, ws) = scratch();
        let Some(t) = launch(
            tmp.path(),
            "retrace-int",
            (80, 24),
            &model_args(&ws, "demo"),
            true,
        ) else {
            return;
        };
        let pane = |format: &str| t.pane(format);
        assert_eq!(pane("#{alternate_on}"), "1");
        let pid = pane("#{pane_pid}");
        let killed = Command::new("kill").args([sig, &pid]).status().unwrap();
        assert!(killed.success());
        let start = Instant::now();
        while pane("#{pane_dead}") != "1" {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "{sig}: still running:\n{}",
                t.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(
            pane("#{alternate_on}#{mouse_standard_flag}#{mouse_sgr_flag}"),
            "000",
            "{sig}: the terminal was not restored"
        );
    }
}

/// `/sessions` lists the workspace's sessions and Enter opens another in place; the wheel is
/// reported (buttons only, no motion) while the UI runs and switched off after; on leaving, the
/// UI says how to resume the session it showed last.
#[test]
fn sessions_switch_in_place_and_the_ui_says_how_to_resume() {
    let (tmp, ws) = scratch();
    if !tmux_or_skip() {
        return;
    }
    let out = support::isolated_retrace(tmp.path())
        .args(["exec", "--json", "--model", "demo", "--workspace"])
        .arg(&ws)
        .arg("an earlier session")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap();
    let earlier: serde_json::Value = serde_json::from_str(last).unwrap();
    let earlier = earlier["session_id"].as_str().unwrap().to_string();

    let args = model_args(&ws, "demo");
    let Some(t) = launch(tmp.path(), "retrace-sessions", (120, 30), &args, true) else {
        return;
    };
    let pane = |format: &str| t.pane(format);
    assert_eq!(
        pane("#{mouse_standard_flag}#{mouse_sgr_flag}#{mouse_button_flag}#{mouse_all_flag}"),
        "1100"
    );
    t.text("/sessions");
    t.keys(&["Enter"]);
    t.wait("the sessions", |s| {
        // Rows end with the id's last 12 characters (ids made the same day share their start).
        s.contains("Sessions of this workspace") && s.contains(&earlier[earlier.len() - 12..])
    });
    // The cursor starts on this (newest) session; the earlier one is below it.
    t.keys(&["Down", "Enter"]);
    t.wait("the earlier session", |s| {
        s.contains(&format!("on session {earlier}")) && s.contains("an earlier session")
    });
    t.keys(&["C-d"]);
    let hint = format!("resume it with `retrace --session {earlier}`");
    let start = Instant::now();
    loop {
        // The whole pane, scrolled-off lines included: the hint is printed where the shell was.
        let out = t
            .tmux()
            .args(["capture-pane", "-p", "-S", "-", "-t", &t.name])
            .output()
            .unwrap();
        let all = String::from_utf8_lossy(&out.stdout).into_owned();
        if all.contains(&hint) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no resume hint:\n{all}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        pane("#{alternate_on}#{mouse_standard_flag}#{mouse_sgr_flag}"),
        "000"
    );
}

/// Found by attack: closing the terminal while an approved shell command ran left the turn
/// running (the exit hint's `println!` panicked on the closed terminal before the session was
/// shut down): the agent went on writing files with no one watching. The UI must cancel the turn,
/// kill the shell and exit.
#[test]
fn closing_the_terminal_during_a_shell_command_stops_the_turn() {
    let (tmp, ws) = scratch();
    let args = script_args(
        tmp.path(),
        &ws,
        json!({"responses": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 3; echo late > late.txt"}}]},
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "after.txt", "content": "x\n"}}]},
            {"content": "done"}
        ]}),
    );
    let Some(t) = launch(tmp.path(), "retrace-close", (100, 30), &args, false) else {
        return;
    };
    t.text("go");
    t.keys(&["Enter"]);
    t.wait("the approval", |s| s.contains("Run this shell command?"));
    // Keys within the approval's guard time after it showed are typing, not an answer.
    std::thread::sleep(Duration::from_millis(700));
    t.keys(&["a"]);
    t.wait("the shell to start", |s| !s.contains("Run this shell command?"));
    let pid = t.pane("#{pane_pid}");
    let _ = t
        .tmux()
        .arg("kill-server")
        .stderr(std::process::Stdio::null())
        .status();
    wait_exit(&pid);
    // Past the shell's sleep: neither it nor the next step wrote anything.
    std::thread::sleep(Duration::from_secs(4));
    assert!(!ws.join("late.txt").exists(), "the shell command ran on");
    assert!(!ws.join("after.txt").exists(), "the turn went on");
}

/// Found by a new user's trial: text typed while a turn ran answered the shell approval that came
/// up meanwhile ("typing while waiting" approved `rm README.md` with its `y`). Keys typed ahead
/// of the box, or within its guard time, never answer it; they go to the input.
#[test]
fn typing_ahead_never_answers_a_shell_approval() {
    let (tmp, ws) = scratch();
    std::fs::write(ws.join("README.md"), "read me\n").unwrap();
    let args = script_args(
        tmp.path(),
        &ws,
        json!({"responses": [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "README.md"}}]},
            {"tool_calls": [{"name": "bash", "arguments": {"command": "rm README.md"}}]},
            {"content": "done"}
        ]}),
    );
    let Some(t) = launch(tmp.path(), "retrace-typeahead", (100, 30), &args, false) else {
        return;
    };
    t.text("tidy up");
    t.keys(&["Enter"]);
    // Typed on at a brisk pace while the turn runs and its approval comes up: every `y`, `a` and
    // `n` of it lands before the box or within its guard time. A word a time (one tmux call
    // each), so that a slow machine does not stretch the pauses past the guard.
    let typed = "yes and then you typing while waiting";
    for (i, word) in typed.split(' ').enumerate() {
        t.text(&if i == 0 {
            word.to_string()
        } else {
            format!(" {word}")
        });
        std::thread::sleep(Duration::from_millis(40));
    }
    t.wait("the approval", |s| s.contains("Run this shell command?"));
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        t.screen().contains("Run this shell command?"),
        "the typing answered the approval:\n{}",
        t.screen()
    );
    assert!(
        ws.join("README.md").exists(),
        "the typing approved `rm README.md`"
    );
    // A deliberate answer after the guard: deny.
    std::thread::sleep(Duration::from_millis(700));
    t.keys(&["n"]);
    t.wait("the turn to end", |s| {
        s.contains("done") && !s.contains("Run this shell command?")
    });
    assert!(ws.join("README.md").exists(), "the command ran");
    t.wait("the typed text in the input", |s| s.contains(typed));
}

/// Found by a new user's trial: `retrace -c` reopened a session started with `--model demo` with
/// no model. A resumed session keeps its model unless `--model` is given.
#[test]
fn continue_keeps_the_sessions_model() {
    let (tmp, ws) = scratch();
    let out = support::isolated_retrace(tmp.path())
        .args(["exec", "--workspace"])
        .arg(&ws)
        .args(["--model", "demo", "make notes"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let args = vec![
        "--workspace".to_string(),
        ws.display().to_string(),
        "--continue".to_string(),
    ];
    let Some(t) = launch(tmp.path(), "retrace-continue-model", (100, 30), &args, false) else {
        return;
    };
    t.wait("the demo model in the status line", |s| {
        s.lines().last().is_some_and(|l| l.starts_with("demo ·"))
            || s.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .is_some_and(|l| l.starts_with("demo ·"))
    });
    t.text("review them");
    t.keys(&["Enter"]);
    t.wait("the demo's answer", |s| s.contains("Demo answer 2"));
}

/// Found by attack: a `model` line written into the log named any URL, and the terminal UI
/// reopening the session sent the user's key there. It goes there without a key, and the first
/// screen says so.
#[test]
fn a_recorded_base_url_gets_no_key_and_the_first_screen_says_so() {
    use retrace_testkit::mock_openai::{sse, MockServer, Reply};
    let (tmp, ws) = scratch();
    let out = support::isolated_retrace(tmp.path())
        .args(["exec", "--json", "--workspace"])
        .arg(&ws)
        .args(["--model", "demo", "make notes"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let last: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    let id = last["session_id"].as_str().unwrap().to_string();
    let rt = support::mock_runtime();
    let done = Reply::body(sse::body(
        &[sse::content("hi from evil"), sse::finish("stop")],
        true,
    ));
    let evil = rt.block_on(MockServer::start(vec![done])).unwrap();
    let log = tmp.path().join("home/sessions").join(format!("{id}.jsonl"));
    let line = serde_json::json!({"type": "model", "spec": "deepseek:deepseek-chat", "base_url": format!("{}/evil", evil.base_url()), "at": "2026-12-06T13:56:40Z"});
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str(&format!("{line}\n"));
    std::fs::write(&log, text).unwrap();
    let args = vec!["--session".to_string(), id];
    let Some(t) = launch_with(
        tmp.path(),
        "retrace-recorded-url",
        (140, 30),
        &args,
        false,
        &[("DEEPSEEK_API_KEY", "sk-SECRET")],
    ) else {
        return;
    };
    t.wait("the notice", |s| s.contains("is not configured for a key"));
    t.text("hello");
    t.keys(&["Enter"]);
    t.wait("the answer", |s| s.contains("hi from evil"));
    assert_eq!(evil.request_count(), 1);
    for r in evil.requests() {
        let auth = r.header("authorization").unwrap_or("");
        assert!(
            !auth.contains("sk-SECRET"),
            "the key went to a recorded URL: {auth}"
        );
    }
}

/// Found by a re-attack: switching to a session through `/sessions` gave a recorded base URL the
/// key that opening it directly withholds. The switch withholds it too.
#[test]
fn switching_sessions_sends_no_key_to_a_recorded_base_url() {
    use retrace_testkit::mock_openai::{sse, MockServer, Reply};
    let (tmp, ws) = scratch();
    let exec = |prompt: &str| {
        let out = support::isolated_retrace(tmp.path())
            .args(["exec", "--json", "--workspace"])
            .arg(&ws)
            .args(["--model", "demo", prompt])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let last: serde_json::Value =
            serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
        last["session_id"].as_str().unwrap().to_string()
    };
    let older = exec("the older session");
    let rt = support::mock_runtime();
    let done = Reply::body(sse::body(
        &[sse::content("hi from evil"), sse::finish("stop")],
        true,
    ));
    let evil = rt.block_on(MockServer::start(vec![done])).unwrap();
    let log = tmp.path().join("home/sessions").join(format!("{older}.jsonl"));
    let line = serde_json::json!({"type": "model", "spec": "deepseek:deepseek-chat", "base_url": format!("{}/evil", evil.base_url()), "at": "2026-12-06T13:56:40Z"});
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str(&format!("{line}\n"));
    std::fs::write(&log, text).unwrap();
    // A newer session is the one `-c` opens; the older one is reached through /sessions.
    std::thread::sleep(Duration::from_millis(5));
    let _newer = exec("the newer session");
    let args = vec![
        "--workspace".to_string(),
        ws.display().to_string(),
        "--continue".to_string(),
        "--model".to_string(),
        "deepseek:deepseek-chat".to_string(),
    ];
    let Some(t) = launch_with(
        tmp.path(),
        "retrace-switch-url",
        (140, 30),
        &args,
        false,
        &[("DEEPSEEK_API_KEY", "sk-SECRET")],
    ) else {
        return;
    };
    t.wait("the session", |s| s.contains("the newer session"));
    t.text("/sessions");
    t.keys(&["Enter"]);
    // The list shows each session's first prompt and the end of its id (a UUIDv7 begins with
    // the time, so ids made the same day share their start).
    t.wait("the session list", |s| {
        s.contains("“the older session”") && s.contains(&older[older.len() - 12..])
    });
    t.keys(&["Down"]);
    t.keys(&["Enter"]);
    t.wait("the older session", |s| s.contains("the older session"));
    t.text("hello");
    t.keys(&["Enter"]);
    t.wait("the answer", |s| s.contains("hi from evil"));
    assert_eq!(evil.request_count(), 1);
    for r in evil.requests() {
        let auth = r.header("authorization").unwrap_or("");
        assert!(
            !auth.contains("sk-SECRET"),
            "the key went to a recorded URL: {auth}"
        );
    }
}
