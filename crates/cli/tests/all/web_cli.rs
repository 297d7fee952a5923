//! The web UI (SPEC §9.2) end to end: the real `retrace serve` and a real browser.
//!
//! - Debian's chromium driven by `playwright-core` (`crates/web/tests/browser/flow.mjs`): two turns
//!   through the composer, a prompt's rewind menu with its preview, the files on disk, undo, one rewind by
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
//! - chromium again (`rows.mjs`): the rows of a session (prompts, checkpoints with their file
//!   counts, reasoning, tool calls with their diffs, restore notes) are the same seen live in one
//!   tab and another, after a reload (one in the middle of a turn waiting for an approval), after
//!   a code rewind and its undo, and after the server restarts (the page says to open the new
//!   address; opened, it shows the same rows, and a new turn goes on live).
//!
//! - chromium again (`actions.mjs`): what the page offers on a turn is its checkpoint entry's
//!   `actions` (the same labels in the same order, an unavailable one disabled with its reason),
//!   on the prompts and in the Versions panel; a conflicted plan's choices are offered with none
//!   picked, the file table follows the pick, and `confirm` is sent only once the user ticked it.
//!
//! - chromium again (`history.mjs`): each prompt's results summary from its checkpoint entry,
//!   opened (by mouse and by keyboard) into its files with their numbered diffs and its command
//!   with its exit code, read once; the Versions panel's +/− and results; a file's history opened
//!   from its name (on top of a restore's preview too), a version restored through the preview
//!   (its diff, its confirmation), the file on disk, then undo and redo.
//!
//! - chromium again (`ux.mjs`), at 1280×800 and 390×844: the header's one row (the model as a
//!   select, switched and back; the workspace and its git branch; sessions by first prompt and
//!   relative time), the empty state, a model answer in markdown holding `<img onerror>`,
//!   `<script>` and `javascript:` links (rendered, and nothing runs), tool rows in the items' words
//!   (a file written again reads "Edited") with file chips, one rewind menu per prompt (the entry's actions, the file-changing ones marked; the last
//!   prompt's whole in view and reachable, with the composer made taller too), fork
//!   and summarize asking first with Confirm primary, a skipped restore's toast saying nothing
//!   changed without moving the transcript, the Versions drawer; on the phone the model shows whole
//!   by its short name, and every button, link, select and summary shown measures at least 44 px.
//!
//! - chromium again (`mcp.mjs`): an MCP tool call asked about, allowed for the session (its second
//!   call not asked), its result, and the header's MCP servers (the reference everything server,
//!   installed by `npm ci` in `crates/mcp/tests/servers`).
//!
//! Each script starts through `launch.mjs` (its arguments, the browser, the pages' console and page
//! errors, screenshots). Screenshots go to `CARGO_TARGET_TMPDIR/web-screenshots/` (`NN-step.png` from chromium,
//! `firefox.png`, `auto-compacted.png`, `mcp.png`, `rows-*.png`, `actions-*.png`, `history-*.png`, `ux-*.png`). Each needs `node`, its browser (`/usr/bin/chromium` or
//! `CHROMIUM`, `/usr/bin/firefox-esr` or `FIREFOX`) and `npm ci` run in the scripts' folder; when
//! one is missing the test says so and passes, unless `CI` is set, where it fails.

use crate::support;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

pub(crate) const TOKEN: &str = "web-test-token-0123456789";

pub(crate) fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../web/tests/browser")
}

pub(crate) fn shots_dir() -> PathBuf {
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
pub(crate) fn can_run(what: &str, env: &str, default: &str, package: &str) -> bool {
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
pub(crate) struct Serve {
    tmp: tempfile::TempDir,
    ws: PathBuf,
    child: Child,
    /// The printed address, with `?token=`.
    url: String,
    /// What the model answers after a restart (`RESTART` from the script).
    after_restart: Option<Value>,
}

/// Starts `retrace serve` on `port` (0: a free one) with the data under `tmp`, the workspace `ws`
/// and the script model `script`: the process, and the address it printed.
pub(crate) fn spawn_serve(tmp: &Path, ws: &Path, script: &Path, port: u16) -> (Child, String) {
    let mut c = support::isolated_retrace(tmp);
    c.args(["serve", "--port", &port.to_string(), "--workspace"])
        .arg(ws)
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
    (child, url)
}

/// Writes a script model's file answering `responses`.
pub(crate) fn write_script(path: &Path, responses: &Value) {
    std::fs::write(path, json!({ "responses": responses }).to_string()).unwrap();
}

/// Stops a server as a user would (SIGTERM); its exit code.
pub(crate) fn stop(child: &mut Child) -> Option<i32> {
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).unwrap();
    child.wait().unwrap().code()
}

impl Serve {
    pub(crate) fn start(responses: Value) -> Serve {
        Serve::start_with_config(responses, None)
    }

    /// As [`Serve::start`], with `config` as its config file.
    pub(crate) fn start_with_config(responses: Value, config: Option<&str>) -> Serve {
        Serve::start_with_config_for(responses, |_| config.map(str::to_string))
    }

    /// As [`Serve::start`], with the config file `config` writes for the script model's file.
    pub(crate) fn start_with_config_for(
        responses: Value,
        config: impl FnOnce(&Path) -> Option<String>,
    ) -> Serve {
        let tmp = tempfile::tempdir().unwrap();
        let script = tmp.path().join("script.json");
        if let Some(text) = config(&script) {
            std::fs::create_dir_all(tmp.path().join("xdg/retrace")).unwrap();
            std::fs::write(tmp.path().join("xdg/retrace/config.toml"), text).unwrap();
        }
        let ws = tmp.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        write_script(&script, &responses);
        let (child, url) = spawn_serve(tmp.path(), &ws, &script, 0);
        Serve {
            tmp,
            ws,
            child,
            url,
            after_restart: None,
        }
    }

    /// Stops the server and starts another on the same port, data and workspace, its model
    /// answering `after_restart`; a new page key, so the page must be opened again.
    fn restart(&mut self) {
        assert_eq!(stop(&mut self.child), Some(0), "serve did not stop cleanly");
        let port: u16 = self
            .url
            .split("127.0.0.1:")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {}", self.url));
        let script = self.tmp.path().join("script-after-restart.json");
        write_script(&script, &self.after_restart.take().unwrap_or(json!([])));
        let (child, url) = spawn_serve(self.tmp.path(), &self.ws, &script, port);
        self.child = child;
        self.url = url;
    }

    /// Runs `node SCRIPT URL WORKSPACE SCREENSHOT_DIR` in the scripts' folder (3 minutes at
    /// most), then stops the server; the script's status (None: timed out), and serve's exit code.
    /// A line `RESTART` from the script restarts the server ([`Serve::restart`]); the script gets
    /// the new address on its standard input. Its other lines are passed on.
    pub(crate) fn run(mut self, script: &str) -> (Option<ExitStatus>, Option<i32>) {
        let mut node = Command::new("node")
            .current_dir(browser_dir())
            .arg(script)
            .arg(&self.url)
            .arg(&self.ws)
            .arg(shots_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut to_node = node.stdin.take().unwrap();
        let from_node = node.stdout.take().unwrap();
        let (lines, said) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(from_node).lines().map_while(Result::ok) {
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        let start = Instant::now();
        let status = loop {
            while let Ok(line) = said.try_recv() {
                if line == "RESTART" {
                    self.restart();
                    writeln!(to_node, "{}", self.url).unwrap();
                } else {
                    println!("{line}");
                }
            }
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
        // what it said last
        while let Ok(line) = said.recv_timeout(Duration::from_secs(1)) {
            println!("{line}");
        }
        eprintln!("{script}: {:.1} s", start.elapsed().as_secs_f64());
        let code = stop(&mut self.child);
        (status, code)
    }
}

/// Removes earlier screenshots whose names `pred` picks (the two tests share the folder).
pub(crate) fn clear_shots(pred: impl Fn(&str) -> bool) {
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

#[test]
fn the_web_ui_shows_the_same_rows_live_after_a_reload_a_rewind_and_a_restart() {
    if !can_run("browser", "CHROMIUM", "/usr/bin/chromium", "playwright-core") {
        return;
    }
    let mut serve = Serve::start(json!([
        {"reasoning": "a file of three lines", "content": "writing a.txt",
         "tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "1\n2\n3\n"}}]},
        {"content": "wrote a.txt"},
        {"tool_calls": [
            {"name": "edit_file", "arguments": {"path": "a.txt", "old_string": "2\n", "new_string": "two\n"}},
            {"name": "write_file", "arguments": {"path": "b.txt", "content": "b\n"}}
        ]},
        {"content": "edited a.txt and wrote b.txt"},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo c > c.txt"}}]},
        {"content": "ran it"}
    ]));
    serve.after_restart = Some(json!([{"content": "after the restart"}]));
    clear_shots(|n| n.starts_with("rows-"));
    let (status, code) = serve.run("rows.mjs");
    let status = status.expect("the rows flow timed out");
    assert!(
        status.success(),
        "the rows flow failed ({status}); screenshots in {}",
        shots_dir().display()
    );
    assert_eq!(code, Some(0), "serve did not stop cleanly");
    assert!(shots_dir().join("rows-restarted.png").exists());
}

#[test]
fn the_web_ui_offers_what_the_server_says_on_each_turn_in_a_real_browser() {
    if !can_run("browser", "CHROMIUM", "/usr/bin/chromium", "playwright-core") {
        return;
    }
    let serve = Serve::start(json!([
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "one.txt", "content": "1\n"}}]},
        {"content": "wrote one"},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "two.txt", "content": "2\n"}}]},
        {"content": "wrote two"},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo c > c.txt"}}]},
        {"content": "ran it"}
    ]));
    clear_shots(|n| n.starts_with("actions-"));
    let (status, code) = serve.run("actions.mjs");
    let status = status.expect("the actions flow timed out");
    assert!(
        status.success(),
        "the actions flow failed ({status}); screenshots in {}",
        shots_dir().display()
    );
    assert_eq!(code, Some(0), "serve did not stop cleanly");
    assert!(shots_dir().join("actions-off-head.png").exists());
}

#[test]
fn the_web_ui_shows_turn_results_and_restores_a_file_version_in_a_real_browser() {
    if !can_run("browser", "CHROMIUM", "/usr/bin/chromium", "playwright-core") {
        return;
    }
    let serve = Serve::start(json!([
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "1\n2\n3\n"}}]},
        {"content": "wrote a.txt"},
        {"tool_calls": [
            {"name": "edit_file", "arguments": {"path": "a.txt", "old_string": "2\n", "new_string": "two\n"}},
            {"name": "bash", "arguments": {"command": "echo checked"}}
        ]},
        {"content": "edited a.txt"}
    ]));
    clear_shots(|n| n.starts_with("history-"));
    let (status, code) = serve.run("history.mjs");
    let status = status.expect("the history flow timed out");
    assert!(
        status.success(),
        "the history flow failed ({status}); screenshots in {}",
        shots_dir().display()
    );
    assert_eq!(code, Some(0), "serve did not stop cleanly");
    assert!(shots_dir().join("history-history-after.png").exists());
}

#[test]
fn the_web_ui_reads_like_a_days_work_at_desktop_and_phone_sizes_in_a_real_browser() {
    if !can_run("browser", "CHROMIUM", "/usr/bin/chromium", "playwright-core") {
        return;
    }
    // An answer in markdown holding HTML and javascript: links (rendered, and inert), a shell
    // command that exits 1; each session of the run (one per viewport) replays it from the start.
    let answer = "## Done\n\nI **created** `calc/ops.py` with *one* function:\n\n- add\n\
        - [the docs](https://example.com/docs)\n\n> a quote\n\n```python\ndef add(a, b):\n    return a + b\n```\n\n\
        | op | fn |\n|---|---|\n| + | add |\n\n<img src=x onerror=\"window.__pwned=1\">\n\n\
        <script>window.__pwned=2</script>\n\n[click me](javascript:window.__pwned=3) and \
        <a href=\"javascript:window.__pwned=4\">raw link</a>\n";
    let serve = Serve::start(json!([
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "calc/ops.py", "content": "def add(a, b):\n    return a + b\n"}}]},
        {"content": answer},
        {"tool_calls": [
            {"name": "edit_file", "arguments": {"path": "calc/ops.py", "old_string": "    return a + b\n", "new_string": "    return a + b\n# tested\n"}},
            // written again, a file that is there
            {"name": "write_file", "arguments": {"path": "calc/ops.py", "content": "def add(a, b):\n    return a + b\n# checked\n"}},
            {"name": "bash", "arguments": {"command": "echo testing; exit 1"}}
        ]},
        {"content": "edited and tested"}
    ]));
    // the workspace is on a git branch (read from .git/HEAD: no git needed)
    std::fs::create_dir(serve.ws.join(".git")).unwrap();
    std::fs::write(serve.ws.join(".git/HEAD"), "ref: refs/heads/trial\n").unwrap();
    clear_shots(|n| n.starts_with("ux-"));
    let (status, code) = serve.run("ux.mjs");
    let status = status.expect("the ux flow timed out");
    assert!(
        status.success(),
        "the ux flow failed ({status}); screenshots in {}",
        shots_dir().display()
    );
    assert_eq!(code, Some(0), "serve did not stop cleanly");
    assert!(shots_dir().join("ux-phone-versions.png").exists());
}

#[test]
fn the_web_ui_asks_for_an_mcp_call_and_shows_the_servers_in_a_real_browser() {
    if !can_run("browser", "CHROMIUM", "/usr/bin/chromium", "playwright-core") {
        return;
    }
    let everything = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mcp/tests/servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        everything.exists(),
        "the MCP test servers are not installed: run `npm ci` in crates/mcp/tests/servers (.ci/run does)"
    );
    let echo =
        |id: &str, m: &str| json!({"id": id, "name": "mcp__everything__echo", "arguments": {"message": m}});
    let serve = Serve::start_with_config(
        json!([
            {"content": "", "tool_calls": [echo("e1", "one"), echo("e2", "two")]},
            {"content": "echoed"}
        ]),
        Some(&format!(
            "[permissions]\nmcp = \"ask\"\n[mcp_servers.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\nread_only_tools = [\"echo\"]\n",
            serde_json::to_string(&everything.display().to_string()).unwrap()
        )),
    );
    clear_shots(|n| n == "mcp.png");
    let (status, code) = serve.run("mcp.mjs");
    let status = status.expect("the MCP flow timed out");
    assert!(
        status.success(),
        "the MCP flow failed ({status}); screenshot in {}",
        shots_dir().display()
    );
    assert_eq!(code, Some(0), "serve did not stop cleanly");
    assert!(shots_dir().join("mcp.png").exists());
}
