//! The shell tool: policy, working directory, exit codes, timeout, output cap, cancel.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use retrace_protocol::GapReason;
use retrace_tools::{bash_side_effect_gap, BashPolicy, RunContext, ToolError};
use serde_json::json;

use crate::Scratch;

fn allow() -> RunContext<'static> {
    RunContext::new(BashPolicy::Allow, &|_: &str| true)
}

#[test]
fn preview_carries_the_command_and_no_changes() {
    let s = Scratch::new();
    let p = s.preview("bash", json!({"command": "touch x"})).unwrap();
    assert!(p.changes.is_empty());
    assert_eq!(p.shell_command.as_deref(), Some("touch x"));
    assert!(!s.path("x").exists());
    let g = bash_side_effect_gap("touch x");
    assert_eq!(g.reason, GapReason::BashSideEffect);
    assert_eq!(g.detail.as_deref(), Some("touch x"));
    assert!(!s.reg.get("bash").unwrap().read_only());
}

#[test]
fn allowed_command_runs_in_the_workspace_and_reports_its_exit_code() {
    let s = Scratch::new();
    let out = s
        .call_with(
            "bash",
            json!({"command": "pwd; echo to-err >&2; touch made; exit 3"}),
            &allow(),
        )
        .unwrap();
    let root = s.ws.root().to_string_lossy().into_owned();
    assert!(out.content.contains(&root), "{}", out.content);
    assert!(out.content.contains("to-err"), "{}", out.content);
    assert!(out.content.ends_with("[exit code 3]"), "{}", out.content);
    assert!(s.path("made").exists());
    let out = s.call_with("bash", json!({"command": "true"}), &allow()).unwrap();
    assert_eq!(out.content, "(no output)\n[exit code 0]");
    let out = s.call_with("bash", json!({"command": "cat"}), &allow()).unwrap();
    assert_eq!(out.content, "(no output)\n[exit code 0]", "stdin is closed");
}

#[test]
fn denied_command_is_an_error_result_and_does_not_run() {
    let s = Scratch::new();
    let ctx = RunContext::default();
    assert_eq!(ctx.bash_policy, BashPolicy::Deny);
    let err = s
        .call_with("bash", json!({"command": "touch ran"}), &ctx)
        .unwrap_err();
    assert!(matches!(err, ToolError::BashDisabled));
    assert_eq!(
        err.to_string(),
        "bash is disabled: shell commands are not allowed in this session (run with --allow-bash or set \
         [permissions] bash = \"allow\")"
    );
    assert!(err.touched_nothing());
    assert!(!s.path("ran").exists());
}

#[test]
fn ask_policy_asks_with_the_command() {
    let s = Scratch::new();
    let asked = RefCell::new(Vec::new());
    let no = |c: &str| {
        asked.borrow_mut().push(c.to_string());
        false
    };
    let ctx = RunContext::new(BashPolicy::Ask, &no);
    let err = s
        .call_with("bash", json!({"command": "touch ran"}), &ctx)
        .unwrap_err();
    assert!(matches!(err, ToolError::BashDeclined { .. }), "{err}");
    assert!(err.to_string().contains("declined"), "{err}");
    assert!(!s.path("ran").exists());
    let yes = |c: &str| {
        asked.borrow_mut().push(c.to_string());
        true
    };
    let ctx = RunContext::new(BashPolicy::Ask, &yes);
    s.call_with("bash", json!({"command": "touch ran"}), &ctx)
        .unwrap();
    assert!(s.path("ran").exists());
    assert_eq!(
        *asked.borrow(),
        vec!["touch ran".to_string(), "touch ran".to_string()]
    );
}

#[test]
fn timeout_kills_the_whole_process_group() {
    let s = Scratch::new();
    let started = Instant::now();
    let err = s
        .call_with(
            "bash",
            json!({"command": "sleep 30 & echo $! > bg.pid; echo before; wait", "timeout_ms": 300}),
            &allow(),
        )
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the command was not killed"
    );
    match &err {
        ToolError::Timeout { timeout_ms, output } => {
            assert_eq!(*timeout_ms, 300);
            assert!(output.contains("before"), "{output}");
        }
        other => panic!("{other}"),
    }
    assert!(
        err.to_string().starts_with("command timed out after 300 ms"),
        "{err}"
    );
    let pid = s.text("bg.pid").trim().to_string();
    // The background `sleep` was in the group: it is gone (or a zombie being reaped).
    let mut alive = true;
    for _ in 0..100 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.is_empty() || stat.contains(") Z ") {
            alive = false;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive, "background process {pid} survived the timeout");
}

#[test]
fn default_timeout_comes_from_the_context() {
    let s = Scratch::new();
    let ctx = allow().with_bash_timeout(Duration::from_millis(200));
    let err = s
        .call_with("bash", json!({"command": "sleep 30"}), &ctx)
        .unwrap_err();
    assert!(matches!(err, ToolError::Timeout { timeout_ms: 200, .. }), "{err}");
}

#[test]
fn output_is_capped_with_a_note() {
    let s = Scratch::new();
    let ctx = allow().with_output_cap(1000);
    let out = s
        .call_with(
            "bash",
            json!({"command": "echo FIRST; yes line | head -n 20000; echo LAST"}),
            &ctx,
        )
        .unwrap();
    assert!(out.content.len() < 1200, "{} bytes", out.content.len());
    assert!(out.content.starts_with("FIRST\n"), "{}", out.content);
    assert!(
        out.content
            .contains("bytes omitted: output is capped at 1000 bytes"),
        "{}",
        out.content
    );
    assert!(out.content.ends_with("LAST\n[exit code 0]"), "{}", out.content);
}

#[test]
fn cancel_stops_the_command() {
    let s = Scratch::new();
    let cancel = Arc::new(AtomicBool::new(false));
    let ctx = allow().with_cancel(cancel.clone());
    let flag = cancel.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        flag.store(true, Ordering::SeqCst);
    });
    let err = s
        .call_with("bash", json!({"command": "sleep 30"}), &ctx)
        .unwrap_err();
    t.join().unwrap();
    assert!(matches!(err, ToolError::Cancelled), "{err}");
}

#[test]
fn bad_arguments_are_explained() {
    let s = Scratch::new();
    let msg = |args| s.preview("bash", args).unwrap_err().to_string();
    assert_eq!(
        msg(json!({})),
        "invalid arguments for bash: `command` is required (a string)"
    );
    assert!(msg(json!({"command": "  "})).contains("`command` is empty"));
    assert!(msg(json!({"command": "ls", "timeout_ms": 0})).contains("between 1 and 600000"));
    assert!(msg(json!({"command": "ls", "timeout_ms": "soon"})).contains("non-negative integer"));
}

/// A command leads a session of its own: its process group is its own (a kill reaches all it
/// started), and it has no controlling terminal, so nothing it runs can write over the terminal
/// Retrace is shown in, or stop waiting to read from it.
#[test]
fn a_command_runs_in_a_session_of_its_own_without_a_terminal() {
    let s = Scratch::new();
    let out = s
        .call_with(
            "bash",
            json!({"command": "set -- $(cut -d' ' -f5,6 /proc/$$/stat); echo \"pid=$$ pgid=$1 sid=$2\"; (echo x > /dev/tty) 2>/dev/null && echo tty-open || echo no-tty"}),
            &allow(),
        )
        .unwrap();
    let line = out.content.lines().next().unwrap_or_default().to_string();
    let field = |k: &str| {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{k}=")))
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(field("pid"), field("pgid"), "{}", out.content);
    assert_eq!(field("pid"), field("sid"), "{}", out.content);
    assert!(out.content.contains("no-tty"), "{}", out.content);
}
