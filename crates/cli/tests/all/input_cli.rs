//! The same bad input gets the same answer everywhere (issue 25, found by a hostile tester):
//! `--json=VALUE` still fails as JSON, session ids are case-insensitive, a session that is not
//! there is said without internal paths, `serve` refuses a workspace no session could use at its
//! start, and the prompt limit does not count a file's final newline.

use crate::support;

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;

fn run(tmp: &Path, args: &[&str]) -> Output {
    support::isolated_retrace(tmp).args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A session made with the demo model; its id.
fn session(tmp: &Path) -> String {
    let ws = tmp.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let out = run(
        tmp,
        &[
            "exec",
            "--json",
            "--model",
            "demo",
            "--workspace",
            ws.to_str().unwrap(),
            "hi",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let last: Value = serde_json::from_str(text(&out.stdout).lines().last().unwrap()).unwrap();
    last["session_id"].as_str().unwrap().to_string()
}

#[test]
fn json_with_a_value_still_fails_as_one_json_document() {
    let tmp = tempfile::tempdir().unwrap();
    for flag in ["--json=true", "--json=false"] {
        let out = run(tmp.path(), &["sessions", flag]);
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{flag}: not JSON: {}", text(&out.stdout)));
        assert_eq!(v["error"]["code"], "usage", "{v}");
    }
}

#[test]
fn session_ids_in_upper_case_name_the_session() {
    let tmp = tempfile::tempdir().unwrap();
    let id = session(tmp.path());
    let upper = id.to_ascii_uppercase();
    let out = run(tmp.path(), &["heads", "--session", &upper, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = run(tmp.path(), &["heads", "--session", &upper[..8], "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = run(tmp.path(), &["sessions", "delete", &upper, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!tmp
        .path()
        .join("home/sessions")
        .join(format!("{id}.jsonl"))
        .exists());
}

#[test]
fn deleting_a_session_that_is_not_there_says_it_once_without_internal_paths() {
    let tmp = tempfile::tempdir().unwrap();
    session(tmp.path());
    let out = run(tmp.path(), &["sessions", "delete", "zzzz"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no session zzzz"), "{err}");
    assert!(!err.contains("/sessions"), "an internal path: {err}");
    assert_eq!(err.matches("retrace sessions").count(), 1, "the hint once: {err}");
}

#[test]
fn serve_refuses_a_workspace_no_session_could_use_at_its_start() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    for ws in [Path::new("/"), home.as_path()] {
        let mut child = support::isolated_retrace(tmp.path())
            .args(["serve", "--port", "0", "--workspace", ws.to_str().unwrap()])
            .env("RETRACE_TOKEN", "input-cli-token-0123456789")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break Some(s);
            }
            if start.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            status.and_then(|s| s.code()),
            Some(2),
            "{}: {}{}",
            ws.display(),
            text(&out.stdout),
            text(&out.stderr)
        );
        assert!(!text(&out.stdout).contains("listening"), "{}", text(&out.stdout));
    }
}

#[test]
fn a_prompt_file_of_the_limit_and_a_newline_is_taken() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let file = tmp.path().join("prompt.txt");
    let mut body = "x".repeat(4 << 20);
    body.push('\n');
    std::fs::write(&file, &body).unwrap();
    let out = run(
        tmp.path(),
        &[
            "exec",
            "--json",
            "--model",
            "demo",
            "--workspace",
            ws.to_str().unwrap(),
            "--prompt-file",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // One byte more is over the limit.
    body.insert(0, 'x');
    std::fs::write(&file, &body).unwrap();
    let out = run(
        tmp.path(),
        &[
            "exec",
            "--json",
            "--model",
            "demo",
            "--workspace",
            ws.to_str().unwrap(),
            "--prompt-file",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

/// A file named on the command line that is missing is a usage error (exit 2) naming it, in every
/// command; so is a base URL that is no URL (without the unrelated `--model` hint).
#[test]
fn a_missing_file_or_a_bad_url_on_the_command_line_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let ws_arg = ws.to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (
            &["exec", "--workspace", ws_arg, "--prompt-file", "/nonexist/p"],
            "/nonexist/p",
        ),
        (
            &[
                "exec",
                "--workspace",
                ws_arg,
                "--model",
                "script:/nonexist/s",
                "x",
            ],
            "/nonexist/s",
        ),
        (
            &["checkpoints", "--sidecar", "/nonexist/c.ckpt"],
            "/nonexist/c.ckpt",
        ),
        (&["fsck", "--sidecar", "/nonexist/c.ckpt"], "/nonexist/c.ckpt"),
        (
            &["exec", "--workspace", ws_arg, "--base-url", "notaurl", "x"],
            "notaurl",
        ),
        (
            &[
                "exec",
                "--workspace",
                ws_arg,
                "--model",
                "openai:gpt-4o",
                "--base-url",
                "ftp://x",
                "x",
            ],
            "ftp://x",
        ),
    ];
    for (args, named) in cases {
        let mut all = args.to_vec();
        all.push("--json");
        let out = run(tmp.path(), &all);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        // One document: pretty (the read commands) or the last line (exec).
        let stdout = text(&out.stdout);
        let last: Value = serde_json::from_str(&stdout)
            .or_else(|_| serde_json::from_str(stdout.lines().last().unwrap_or("")))
            .unwrap_or(Value::Null);
        assert_eq!(last["error"]["code"], "usage", "{args:?}: {}", text(&out.stdout));
        assert!(err.contains(named), "{args:?}: {err}");
        assert!(!err.contains("--model picks"), "{args:?}: {err}");
    }
}
