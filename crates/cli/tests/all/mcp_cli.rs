//! MCP servers through the real binary and the script model (SPEC §8.1), against the reference
//! servers installed by `npm ci` in `crates/mcp/tests/servers` (as `.ci/run` does): tools called
//! and their results, permissions, plan mode, `retrace mcp list` and `retrace config`, an MCP
//! write as a gap in the snapshot backend and restored by a code rewind in the git backend, and
//! no server process left after any kind of exit.

use crate::support::world::World;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

/// The reference servers' directory.
fn modules() -> PathBuf {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp/tests/servers/node_modules/@modelcontextprotocol");
    assert!(
        dir.join("server-everything/dist/index.js").exists(),
        "the MCP test servers are not installed: run `npm ci` in crates/mcp/tests/servers (.ci/run does)"
    );
    dir
}

/// `[mcp_servers.everything]` (stdio; `marker` is an extra argument naming the test's process)
/// and `[mcp_servers.fs]` scoped to the workspace, then `extra`.
fn config(w: &World, marker: &str, extra: &str) {
    let m = modules();
    let text = format!(
        "[mcp_servers.everything]\ncommand = \"node\"\nargs = [\"{}\", \"stdio\", \"{marker}\"]\nenv = {{ RETRACE_TEST_SECRET = \"hunter2\" }}\n\n[mcp_servers.fs]\ncommand = \"node\"\nargs = [\"{}\", \"{}\"]\n\n{extra}",
        m.join("server-everything/dist/index.js").display(),
        m.join("server-filesystem/dist/index.js").display(),
        w.ws.display()
    );
    w.write_config(&text);
}

/// The arguments of a confirmed code rewind of session `id` to before turn 0.
pub(crate) fn code_rewind_to_turn_0(id: &str) -> [&str; 8] {
    [
        "rewind",
        "--session",
        id,
        "--turn",
        "0",
        "--scope",
        "code",
        "--yes",
    ]
}

/// The results of the turn's tool calls: (name, ok, content).
fn results(lines: &[Value]) -> Vec<(String, bool, String)> {
    lines
        .iter()
        .filter(|l| l["type"] == "tool_result")
        .map(|l| {
            (
                l["name"].as_str().unwrap().to_string(),
                l["ok"].as_bool().unwrap(),
                l["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn call(name: &str, args: Value) -> Value {
    json!({"name": name, "arguments": args})
}

#[test]
fn tools_and_resources_are_called_with_their_results() {
    let w = World::new();
    config(&w, "t1", "[permissions]\nmcp = \"allow\"\n");
    let (lines, _) = w.exec_calls(
        &[],
        vec![
            call("mcp__everything__echo", json!({"message": "hi"})),
            call("mcp__everything__get-sum", json!({"a": 2, "b": 40})),
            call("mcp__everything__get-sum", json!({"a": "two"})),
            call("mcp__everything__get-tiny-image", json!({})),
            call("list_mcp_resources", json!({})),
            call(
                "read_mcp_resource",
                json!({"server": "everything", "uri": "demo://resource/static/document/architecture.md"}),
            ),
            call("mcp__nobody__nothing", json!({})),
        ],
    );
    let r = results(&lines);
    assert_eq!(r[0], ("mcp__everything__echo".into(), true, "Echo: hi".into()));
    assert!(r[1].1 && r[1].2.contains("42"), "{:?}", r[1]);
    assert!(
        !r[2].1 && r[2].2.starts_with("error: "),
        "an error result: {:?}",
        r[2]
    );
    assert!(r[3].1 && r[3].2.contains("[an image (image/png"), "{:?}", r[3]);
    assert!(
        r[4].2
            .contains("everything: demo://resource/static/document/architecture.md"),
        "{:?}",
        r[4]
    );
    assert!(
        r[5].1
            && r[5]
                .2
                .starts_with("[resource demo://resource/static/document/architecture.md]"),
        "{:?}",
        r[5]
    );
    assert!(
        !r[6].1 && r[6].2.contains("there is no tool `mcp__nobody__nothing`"),
        "{:?}",
        r[6]
    );
}

#[test]
fn permissions_deny_refuse_and_headless_ask_is_refused_saying_why() {
    let w = World::new();
    // `ask` by default: a headless run cannot ask. A server's and a tool's overrides win.
    config(
        &w,
        "t2",
        "[mcp_servers.fs.tool_permissions]\nlist_allowed_directories = \"allow\"\nwrite_file = \"deny\"\n",
    );
    let (lines, _) = w.exec_calls(
        &[],
        vec![
            call("mcp__everything__echo", json!({"message": "hi"})),
            call("mcp__fs__list_allowed_directories", json!({})),
            call(
                "mcp__fs__write_file",
                json!({"path": w.ws.join("x.txt"), "content": "x"}),
            ),
            call(
                "read_mcp_resource",
                json!({"server": "everything", "uri": "demo://resource/static/document/architecture.md"}),
            ),
            call("list_mcp_resources", json!({})),
        ],
    );
    let r = results(&lines);
    // The refusal names the setting that asks, and what would let the call run.
    assert!(
        !r[0].1
            && r[0]
                .2
                .contains("needs approval (`[permissions] mcp`, `ask` unless")
            && r[0].2.contains("headless")
            && r[0].2.contains("`[mcp_servers.everything]` lets it run"),
        "{:?}",
        r[0]
    );
    // Found by an attack: a server's resources were read with no approval where its tools
    // needed one.
    assert!(
        !r[3].1 && r[3].2.contains("needs approval") && !r[3].2.contains("[resource"),
        "{:?}",
        r[3]
    );
    assert!(
        r[4].1 && !r[4].2.contains("demo://") && r[4].2.contains("not listed"),
        "{:?}",
        r[4]
    );
    assert!(
        r[1].1 && r[1].2.contains(&w.ws.display().to_string()),
        "{:?}",
        r[1]
    );
    assert!(!r[2].1 && r[2].2.contains("is not allowed"), "{:?}", r[2]);
    assert_eq!(w.read("x.txt"), None, "the denied call did not run");
    let statuses: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "item_completed" && l["item"]["kind"] == "tool_call")
        .map(|l| l["item"]["status"].as_str().unwrap_or_default())
        .collect();
    assert!(
        statuses.is_empty() || statuses.contains(&"denied"),
        "{statuses:?}"
    );
}

#[test]
fn plan_mode_offers_only_read_only_tools_and_refuses_the_rest_unrun() {
    let w = World::new();
    // The filesystem server's marks are trusted (keys of `[mcp_servers.fs]`, the last table).
    config(
        &w,
        "t3",
        "trust_read_only_hints = true\n[permissions]\nmcp = \"allow\"\n",
    );
    let (lines, _) = w.exec_calls(
        &["--plan"],
        vec![
            call("mcp__fs__list_allowed_directories", json!({})),
            call(
                "mcp__fs__write_file",
                json!({"path": w.ws.join("plan.txt"), "content": "x"}),
            ),
        ],
    );
    let r = results(&lines);
    assert!(r[0].1, "{:?}", r[0]);
    assert!(!r[1].1 && r[1].2.contains("plan mode is on"), "{:?}", r[1]);
    assert_eq!(w.read("plan.txt"), None);
}

#[test]
fn an_mcp_write_is_a_gap_in_the_snapshot_backend() {
    let w = World::new();
    // The read is vouched for (a key of `[mcp_servers.fs]`, the last table): no gap.
    config(
        &w,
        "t4",
        "read_only_tools = [\"read_text_file\"]\n[permissions]\nmcp = \"allow\"\n",
    );
    let (lines, result) = w.exec_calls(
        &[],
        vec![
            call(
                "mcp__fs__write_file",
                json!({"path": w.ws.join("a.txt"), "content": "by mcp\n"}),
            ),
            call("mcp__fs__read_text_file", json!({"path": w.ws.join("a.txt")})),
        ],
    );
    let r = results(&lines);
    assert!(r[0].1, "{:?}", r[0]);
    assert_eq!(w.read("a.txt").as_deref(), Some("by mcp\n"));
    let id = result["session_id"].as_str().unwrap();
    let list = w.json(&["checkpoints", "--session", id]);
    let gaps = &list[0]["gaps"];
    assert_eq!(
        gaps.as_array().unwrap().len(),
        1,
        "only the write is a gap: {gaps}"
    );
    assert_eq!(gaps[0]["reason"], "mcp_side_effect");
    assert_eq!(gaps[0]["tool"], "mcp__fs__write_file");
    assert_eq!(gaps[0]["detail"], "fs/write_file");
    assert_eq!(list[0]["coverage"], "partial");
    // Shown before a restore, which then needs a confirmation.
    let (_, err) = w.code(&["rewind", "--session", id, "--turn", "0", "--scope", "code"], 4);
    assert!(err.contains("confirmation required"), "{err}");
    let (out, _) = w.code(&["rewind", "--session", id, "--turn", "0", "--scope", "code"], 4);
    assert!(
        out.contains("fs/write_file — an MCP tool call: what it did is not tracked"),
        "{out}"
    );
    // Found by a third attack: the rewind then said every file was already as it was, while
    // `a.txt` kept the tool's write. It says what it knows: the tracked files, and the gaps left.
    let (out, _) = w.code(&code_rewind_to_turn_0(id), 0);
    assert!(
        out.contains("every file Retrace tracked is already as it was; what the gaps name was not tracked and is left as it is"),
        "{out}"
    );
    assert!(!out.contains("every file in the workspace"), "{out}");
    assert_eq!(w.read("a.txt").as_deref(), Some("by mcp\n"));
}

#[test]
fn the_git_backend_covers_an_mcp_write_and_a_code_rewind_restores_it() {
    let w = World::new();
    config(&w, "t5", "[permissions]\nmcp = \"allow\"\n");
    w.put("a.txt", b"before\n");
    let (lines, result) = w.exec_calls(
        &["--backend", "git"],
        vec![
            call(
                "mcp__fs__write_file",
                json!({"path": w.ws.join("a.txt"), "content": "by mcp\n"}),
            ),
            call(
                "mcp__fs__write_file",
                json!({"path": w.ws.join("new.txt"), "content": "new\n"}),
            ),
        ],
    );
    let r = results(&lines);
    assert!(r[0].1 && r[1].1, "{r:?}");
    assert_eq!(w.read("a.txt").as_deref(), Some("by mcp\n"));
    let id = result["session_id"].as_str().unwrap();
    let list = w.json(&["checkpoints", "--session", id]);
    assert_eq!(list[0]["gaps"], json!([]), "covered: {}", list[0]);
    let done = w.json(&code_rewind_to_turn_0(id));
    assert_eq!(done["ok"], true, "{done}");
    assert_eq!(w.read("a.txt").as_deref(), Some("before\n"));
    assert_eq!(w.read("new.txt"), None);
}

#[test]
fn mcp_list_and_config_show_the_servers_and_never_a_secret() {
    let w = World::new();
    config(
        &w,
        "t6",
        "[mcp_servers.mute]\ncommand = \"sh\"\nargs = [\"-c\", \"exec sleep 30\"]\nstartup_timeout_ms = 300\n\n[mcp_servers.off]\nurl = \"http://127.0.0.1:9/mcp\"\nbearer_token_env = \"RETRACE_TEST_TOKEN\"\nenabled = false\n",
    );
    let ws = w.ws.display().to_string();
    let list = w.json(&["mcp", "list", "--workspace", &ws]);
    let by = |name: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|s| s["server"] == name)
            .unwrap()
            .clone()
    };
    let everything = by("everything");
    assert_eq!(everything["status"], "ready");
    let echo = everything["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "echo")
        .unwrap();
    assert_eq!(echo["read_only"], true);
    assert!(echo["description"].as_str().unwrap().contains("Echo"));
    let write = by("fs")["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "write_file")
        .unwrap()
        .clone();
    assert_eq!(write["read_only"], false);
    assert_eq!(by("mute")["status"], "failed");
    assert!(by("mute")["error"]
        .as_str()
        .unwrap()
        .contains("did not start within 300 ms"));
    assert_eq!(by("off")["status"], "disabled");
    let (human, _) = w.code(&["mcp", "list", "--workspace", &ws], 0);
    assert!(human.contains("everything  ready"), "{human}");
    assert!(human.contains("mcp__fs__write_file  "), "{human}");
    // The server's mark alone is its word, not the user's.
    assert!(
        human.contains("mcp__everything__echo (read-only by the server's word, not vouched for)"),
        "{human}"
    );
    assert_eq!(echo["vouched_read_only"], false);

    let mut cmd = w.command();
    cmd.env("RETRACE_TEST_TOKEN", "tok-secret").args(["config"]);
    let human = String::from_utf8(cmd.output().unwrap().stdout).unwrap();
    assert!(human.contains("everything: node "), "{human}");
    assert!(human.contains("(env: RETRACE_TEST_SECRET)"), "{human}");
    assert!(
        human.contains("off: http://127.0.0.1:9/mcp (token: $RETRACE_TEST_TOKEN) — disabled"),
        "{human}"
    );
    let mut cmd = w.command();
    cmd.env("RETRACE_TEST_TOKEN", "tok-secret")
        .args(["config", "--json"]);
    let json_text = String::from_utf8(cmd.output().unwrap().stdout).unwrap();
    for text in [&human, &json_text] {
        assert!(
            !text.contains("hunter2") && !text.contains("tok-secret"),
            "{text}"
        );
    }
    let v: Value = serde_json::from_str(&json_text).unwrap();
    assert_eq!(v["permissions"]["mcp"], "ask");
    assert_eq!(v["mcp_servers"][0]["env"], json!(["RETRACE_TEST_SECRET"]));
}

#[test]
fn a_bad_server_config_is_a_usage_error_naming_it() {
    let w = World::new();
    config(
        &w,
        "t7",
        "[mcp_servers.both]\ncommand = \"x\"\nurl = \"http://x\"\n",
    );
    let (_, err) = w.code(&["config"], 2);
    assert!(
        err.contains("`[mcp_servers.both]`") && err.contains("not both"),
        "{err}"
    );
    // Found by an attack: an empty command and a startup timeout of 0 were accepted (every
    // server then failed), and such errors did not name the config file.
    let file = w.tmp.path().join("xdg/retrace/config.toml");
    for (table, said) in [
        ("[mcp_servers.empty]\ncommand = \"\"\n", "`command` is empty"),
        (
            "[mcp_servers.zero]\ncommand = \"x\"\nstartup_timeout_ms = 0\n",
            "`startup_timeout_ms` is 0",
        ),
    ] {
        std::fs::write(&file, table).unwrap();
        let (_, err) = w.code(&["config"], 2);
        assert!(err.contains(said), "{err}");
        assert!(
            err.contains(&format!("the config file `{}`", file.display())),
            "{err}"
        );
    }
}

/// The process ids whose command line holds `marker`.
pub(crate) fn with_marker(marker: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                s.rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z'))
            })
            .unwrap_or(true);
        if !zombie && cmdline.split(|b| *b == 0).any(|a| a == marker.as_bytes()) {
            out.push(pid);
        }
    }
    out
}

/// Runs a turn whose MCP call takes 30 s, sends `signal` to Retrace once the server runs, and
/// checks that no server process is left.
fn no_orphan_after(signal: Signal) {
    let w = World::new();
    let marker = format!("retrace-orphan-test-{}", w.tmp.path().display());
    config(&w, &marker, "[permissions]\nmcp = \"allow\"\n");
    no_process_left_after(&w, &marker, signal);
}

/// Runs a turn whose call of `everything`'s long operation takes 30 s, sends `signal` to
/// Retrace once a process whose command line holds `marker` runs, and checks that none is left.
fn no_process_left_after(w: &World, marker: &str, signal: Signal) {
    let model = w.script(json!([
        {"content": "", "tool_calls": [call("mcp__everything__trigger-long-running-operation", json!({"duration": 30, "steps": 3}))]},
        {"content": "done"}
    ]));
    let ws = w.ws.display().to_string();
    let mut child = w
        .command()
        .args(["exec", "--json", "--model", &model, "--workspace", &ws, "go"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while with_marker(marker).is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the server never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    kill(Pid::from_raw(child.id() as i32), signal).unwrap();
    let exited = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if exited.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("retrace did not exit after {signal}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let gone = Instant::now();
    while !with_marker(marker).is_empty() {
        assert!(
            gone.elapsed() < Duration::from_secs(5),
            "a server outlived retrace after {signal}: {:?}",
            with_marker(marker)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn no_server_outlives_a_sigterm() {
    modules();
    no_orphan_after(Signal::SIGTERM);
}

#[test]
fn no_server_outlives_a_sighup() {
    modules();
    no_orphan_after(Signal::SIGHUP);
}

#[test]
fn no_server_outlives_a_sigkill() {
    modules();
    no_orphan_after(Signal::SIGKILL);
}

/// Found by a second attack: after a SIGKILL of Retrace, what a server had started (a wrapper's
/// child: the parent-death signal reaches the server's own process only) kept running. A
/// watchdog kills the rest of its process group.
#[test]
fn no_process_a_server_started_outlives_a_sigkill() {
    let w = World::new();
    let marker = format!("retrace-orphan-test-{}", w.tmp.path().display());
    let child = format!("{marker}-child");
    let script = format!(
        "sh -c 'sleep 300; :' {child} & exec node {} stdio {marker}",
        modules().join("server-everything/dist/index.js").display()
    );
    w.write_config(&format!(
        "[permissions]\nmcp = \"allow\"\n\n[mcp_servers.everything]\ncommand = \"sh\"\nargs = [\"-c\", {script:?}]\n"
    ));
    no_process_left_after(&w, &child, Signal::SIGKILL);
}

#[test]
fn no_server_outlives_a_finished_exec() {
    let w = World::new();
    let marker = format!("retrace-orphan-test-{}", w.tmp.path().display());
    config(&w, &marker, "[permissions]\nmcp = \"allow\"\n");
    w.exec_calls(&[], vec![call("mcp__everything__echo", json!({"message": "x"}))]);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(with_marker(&marker), Vec::<u32>::new());
}

/// Found by a third attack: an `[mcp_servers.NAME]` table that is not valid stopped `rewind`,
/// `undo` and the other commands that start no server (exit 2), while `checkpoints` went on. They
/// go on with a warning; the commands that start servers refuse it.
#[test]
fn a_bad_server_table_never_stands_between_a_user_and_a_restore() {
    let w = World::new();
    w.write_config("[permissions]\nmcp = \"allow\"\n");
    let (_, result) = w.exec_calls(&[], Vec::new());
    let id = result["session_id"].as_str().unwrap();
    w.write_config("[mcp_servers.broken]\nurl = \"ftp://me:hunter2@host/x\"\n");
    let mut dry_run = code_rewind_to_turn_0(id).to_vec();
    dry_run[7] = "--dry-run";
    for args in [
        dry_run,
        vec!["undo", "--session", id],
        vec!["fork", "--session", id, "--turn", "0"],
    ] {
        let out = w.run(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("warning") && err.contains("`[mcp_servers.broken]` is not valid"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("hunter2"), "{err}");
    }
    let (_, err) = w.code(&["mcp", "list", "--workspace", &w.ws.display().to_string()], 2);
    assert!(err.contains("`[mcp_servers.broken]` is not valid"), "{err}");
}

/// Found by a third attack: a misspelt tool in `tool_permissions` was said only in a turn's
/// notices, not by `retrace mcp list`, where a config is checked. It says it on stderr (the
/// listing, and its JSON, unchanged).
#[test]
fn mcp_list_says_a_config_name_that_matches_no_tool() {
    let w = World::new();
    config(&w, "t9", "tool_permissions = { writ_file = \"deny\" }\n");
    let ws = w.ws.display().to_string();
    for json in [false, true] {
        let mut args = vec!["mcp", "list", "--workspace", &ws];
        if json {
            args.push("--json");
        }
        let (out, err) = w.code(&args, 0);
        assert!(
            err.contains("`tool_permissions` names `writ_file`, which the server does not list"),
            "{err}"
        );
        assert!(!out.contains("writ_file"), "{out}");
    }
}
