//! The web UI (SPEC §9.2) end to end: the real `retrace serve` and a real browser.
//!
//! - Debian's chromium driven by `playwright-core` (`crates/web/tests/browser/flow.mjs`): two turns
//!   through the composer, hover rewind with its preview, the files on disk, undo, one rewind by
//!   keyboard alone with the focus checked after every dialog, restore conversation, versions and a
//!   head switch, a damaged head list (faked in the answer) shown once and marked, a shell
//!   command's approval, fork and summarize, plan mode (a write refused unrun, the switch followed
//!   in a second tab), compact (the summary and the last turn, the original head in Versions), a
//!   new session's shareable address and a refused compaction.
//! - Debian's firefox-esr driven by `puppeteer-core` over WebDriver BiDi
//!   (`crates/web/tests/browser/firefox.mjs`): a smoke test of one turn, restore code through the
//!   preview, the file on disk, undo, the plan mode switch across a reload.
//! - chromium again with a 20,000-token context window (`auto.mjs`): two long prompts, the second
//!   compacts on its own during its turn, and the page says so.
//!
//! Screenshots go to `CARGO_TARGET_TMPDIR/web-screenshots/` (`NN-step.png` from chromium,
//! `firefox.png`, `auto-compacted.png`). Each needs `node`, its browser (`/usr/bin/chromium` or
//! `CHROMIUM`, `/usr/bin/firefox-esr` or `FIREFOX`) and `npm ci` run in the scripts' folder; when
//! one is missing the test says so and passes, unless `CI` is set, where it fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

const TOKEN: &str = "web-test-token-0123456789";

fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../web/tests/browser")
}

fn shots_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("web-screenshots")
}

/// What is missing to run a browser test, if anything: node, the browser (`env`, else `default`)
/// and the npm package that drives it.
fn missing(env: &str, default: &str, package: &str) -> Option<String> {
    let node = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !node.map(|s| s.success()).unwrap_or(false) {
        return Some("node is not installed".into());
    }
    let browser = std::env::var(env).unwrap_or_else(|_| default.into());
    if !Path::new(&browser).exists() {
        let apt = Path::new(default).file_name().unwrap().to_string_lossy();
        return Some(format!("{browser} is missing (apt-get install {apt})"));
    }
    if !browser_dir().join("node_modules").join(package).is_dir() {
        return Some(format!(
            "{package} is not installed (npm ci in {})",
            browser_dir().display()
        ));
    }
    None
}

/// Whether the test can run: if not, it says why and passes, except in CI, where it fails.
fn can_run(what: &str, env: &str, default: &str, package: &str) -> bool {
    let Some(why) = missing(env, default, package) else {
        return true;
    };
    assert!(
        std::env::var_os("CI").is_none(),
        "the {what} test cannot run in CI: {why}"
    );
    eprintln!("skipping the {what} test: {why}");
    false
}

/// `retrace serve` on a fresh workspace with a script model answering `responses`.
struct Serve {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    child: Child,
    /// The printed address, with `?token=`.
    url: String,
}

impl Serve {
    fn start(responses: Value) -> Serve {
        Serve::start_with_config(responses, None)
    }

    /// As [`Serve::start`], with `config` as its config file.
    fn start_with_config(responses: Value, config: Option<&str>) -> Serve {
        let tmp = tempfile::tempdir().unwrap();
        if let Some(text) = config {
            std::fs::create_dir_all(tmp.path().join("xdg/retrace")).unwrap();
            std::fs::write(tmp.path().join("xdg/retrace/config.toml"), text).unwrap();
        }
        let ws = tmp.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let script = tmp.path().join("script.json");
        std::fs::write(&script, json!({ "responses": responses }).to_string()).unwrap();

        let mut c = support::isolated_retrace(tmp.path());
        c.args(["serve", "--port", "0", "--workspace"])
            .arg(&ws)
            .arg("--model")
            .arg(format!("script:{}", script.display()))
            .env("RETRACE_TOKEN", TOKEN)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = c.spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("retrace: listening on ")
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
            .to_string();
        Serve {
            _tmp: tmp,
            ws,
            child,
            url,
        }
    }

    /// Runs `node SCRIPT URL WORKSPACE SCREENSHOT_DIR` in the scripts' folder (3 minutes at
    /// most), then stops the server; the script's status (None: timed out), and serve's exit code.
    fn run(mut self, script: &str) -> (Option<ExitStatus>, Option<i32>) {
        let mut node = Command::new("node")
            .current_dir(browser_dir())
            .arg(script)
            .arg(&self.url)
            .arg(&self.ws)
            .arg(shots_dir())
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
        eprintln!("{script}: {:.1} s", start.elapsed().as_secs_f64());
        kill(Pid::from_raw(self.child.id() as i32), Signal::SIGTERM).unwrap();
        let code = self.child.wait().unwrap().code();
        (status, code)
    }
}

/// Removes earlier screenshots whose names `pred` picks (the two tests share the folder).
fn clear_shots(pred: impl Fn(&str) -> bool) {
    let Ok(dir) = std::fs::read_dir(shots_dir()) else {
        return;
    };
    for e in dir.flatten() {
        if pred(&e.file_name().to_string_lossy()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[test]
fn the_web_ui_rewinds_undoes_and_switches_heads_in_a_real_browser() {
    if !can_run("browser", "CHROMIUM", "/usr/bin/chromium", "playwright-core") {
        return;
    }
    let serve = Serve::start(json!([
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "one.txt", "content": "1\n"}}]},
        {"content": "wrote one"},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "two.txt", "content": "2\n"}}]},
        {"content": "wrote two"},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo no > never.txt"}}]},
        {"content": "not run"},
        {"content": "the summary of turns 0 and 1"},
        // plan mode: the write is refused unrun, then the plan
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "three.txt", "content": "3\n"}}]},
        {"content": "the plan: write three.txt"},
        {"content": "answer four"},
        {"content": "answer five"},
        // the compact button's summary
        {"content": "the compacted summary of the session"}
    ]));
    clear_shots(|n| n.starts_with(|c: char| c.is_ascii_digit()));
    let (status, code) = serve.run("flow.mjs");
    let status = status.expect("the browser flow timed out");
    assert!(
        status.success(),
        "the browser flow failed ({status}); screenshots in {}",
        shots_dir().display()
    );
    assert_eq!(code, Some(0), "serve did not stop cleanly");
    assert!(shots_dir().join("17-narrow.png").exists());
}

#[test]
fn the_web_ui_runs_a_turn_restores_code_and_undoes_in_firefox() {
    if !can_run("firefox", "FIREFOX", "/usr/bin/firefox-esr", "puppeteer-core") {
        return;
    }
    let serve = Serve::start(json!([
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "one.txt", "content": "1\n"}}]},
        {"content": "wrote one"}
    ]));
    clear_shots(|n| n == "firefox.png");
    let (status, code) = serve.run("firefox.mjs");
    let status = status.expect("the firefox flow timed out");
    assert!(
        status.success(),
        "the firefox flow failed ({status}); screenshot in {}",
        shots_dir().display()
    );
    assert_eq!(code, Some(0), "serve did not stop cleanly");
    assert!(shots_dir().join("firefox.png").exists());
}

#[test]
fn the_web_ui_shows_an_automatic_compaction_in_a_real_browser() {
    if !can_run("browser", "CHROMIUM", "/usr/bin/chromium", "playwright-core") {
        return;
    }
    // 20,000 tokens, compacted past 80 %: two prompts of about 7,500 tokens each (estimated; the
    // script model reports no usage) pass it in the second turn, which compacts first.
    let serve = Serve::start_with_config(
        json!([
            {"content": "zero"},
            {"content": "SUMMARY: the user sent a long text."},
            {"content": "one"}
        ]),
        Some("[model]\ncontext_window = 20000\ncompact_at = 0.8\n"),
    );
    clear_shots(|n| n == "auto-compacted.png");
    let (status, code) = serve.run("auto.mjs");
    let status = status.expect("the auto-compaction flow timed out");
    assert!(
        status.success(),
        "the auto-compaction flow failed ({status}); screenshot in {}",
        shots_dir().display()
    );
    assert_eq!(code, Some(0), "serve did not stop cleanly");
    assert!(shots_dir().join("auto-compacted.png").exists());
}
