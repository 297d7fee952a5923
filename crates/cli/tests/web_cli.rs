//! The web UI (SPEC §9.2) end to end: the real `retrace serve` and Debian's chromium driven by
//! `playwright-core` (`crates/web/tests/browser/flow.mjs`): two turns through the composer, hover
//! rewind with its preview, the files on disk, undo, restore conversation, versions and a head
//! switch, a shell command's approval. Screenshots go to `CARGO_TARGET_TMPDIR/web-screenshots/`.
//!
//! Needs `node`, `/usr/bin/chromium` (or `CHROMIUM`) and `npm ci` run in the script's folder; when
//! one is missing the test says so and passes, unless `CI` is set, where it fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::json;

const TOKEN: &str = "web-test-token-0123456789";

fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../web/tests/browser")
}

/// What is missing to run the browser test, if anything.
fn missing() -> Option<String> {
    let node = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !node.map(|s| s.success()).unwrap_or(false) {
        return Some("node is not installed".into());
    }
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if !Path::new(&chromium).exists() {
        return Some(format!("{chromium} is missing (apt-get install chromium)"));
    }
    if !browser_dir().join("node_modules/playwright-core").is_dir() {
        return Some(format!(
            "playwright-core is not installed (npm ci in {})",
            browser_dir().display()
        ));
    }
    None
}

#[test]
fn the_web_ui_rewinds_undoes_and_switches_heads_in_a_real_browser() {
    if let Some(why) = missing() {
        assert!(
            std::env::var_os("CI").is_none(),
            "the browser test cannot run in CI: {why}"
        );
        eprintln!("skipping the browser test: {why}");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let script = tmp.path().join("script.json");
    let responses = json!([
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "one.txt", "content": "1\n"}}]},
        {"content": "wrote one"},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "two.txt", "content": "2\n"}}]},
        {"content": "wrote two"},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo no > never.txt"}}]},
        {"content": "not run"},
        {"content": "the summary of turns 0 and 1"}
    ]);
    std::fs::write(&script, json!({ "responses": responses }).to_string()).unwrap();

    let mut c = support::isolated_retrace(tmp.path());
    c.args(["serve", "--port", "0", "--workspace"])
        .arg(&ws)
        .arg("--model")
        .arg(format!("script:{}", script.display()))
        .env("RETRACE_TOKEN", TOKEN)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut server = c.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("retrace: listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
        .to_string();

    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("web-screenshots");
    let _ = std::fs::remove_dir_all(&shots);
    let mut node = Command::new("node")
        .current_dir(browser_dir())
        .arg("flow.mjs")
        .arg(&url)
        .arg(&ws)
        .arg(&shots)
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = node.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > Duration::from_secs(180) {
            let _ = node.kill();
            let _ = node.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };

    kill(Pid::from_raw(server.id() as i32), Signal::SIGTERM).unwrap();
    let code = server.wait().unwrap().code();
    let status = status.expect("the browser flow timed out");
    assert!(
        status.success(),
        "the browser flow failed ({status}); screenshots in {}",
        shots.display()
    );
    assert_eq!(code, Some(0), "serve did not stop cleanly");
    assert!(shots.join("13-narrow.png").exists());
}
