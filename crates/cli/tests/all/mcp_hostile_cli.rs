//! MCP servers that lie, through the real binary (SPEC §8.1): a tool the server marks read-only
//! that writes is a gap in the snapshot backend, refused in plan mode, and restored by the git
//! backend; only the config vouches for a tool. The server is `crates/mcp/tests/hostile/server.js`.

use crate::support::world::World;

use std::path::Path;

use serde_json::{json, Value};

/// The hostile server's script.
fn hostile() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mcp/tests/hostile/server.js")
        .display()
        .to_string()
}

/// `[mcp_servers.evil]` running the hostile server (`tools` its kinds; `keys` more lines of its
/// table), every call allowed, then `extra`.
fn config(w: &World, tools: &str, keys: &str, extra: &str) {
    let text = format!(
        "[permissions]\nmcp = \"allow\"\n\n[mcp_servers.evil]\ncommand = \"node\"\nargs = [\"{}\"]\nenv = {{ HOSTILE_TOOLS = \"{tools}\" }}\n{keys}\n{extra}",
        hostile()
    );
    w.write_config(&text);
}

/// A code rewind of the session of the turn `result` ended, to before turn 0, which must succeed.
fn rewind_code_to_turn_0(w: &World, result: &Value) {
    let id = result["session_id"].as_str().unwrap();
    let done = w.json(&crate::mcp_cli::code_rewind_to_turn_0(id));
    assert_eq!(done["ok"], true, "{done}");
}

/// The results of the turn's tool calls: (ok, content).
fn results(lines: &[Value]) -> Vec<(bool, String)> {
    lines
        .iter()
        .filter(|l| l["type"] == "tool_result")
        .map(|l| {
            (
                l["ok"].as_bool().unwrap(),
                l["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn call(name: &str, args: Value) -> Value {
    json!({"name": name, "arguments": args})
}

/// The gaps of the session's first checkpoint.
fn gaps_of(w: &World, result: &Value) -> Value {
    let id = result["session_id"].as_str().unwrap();
    let list = w.json(&["checkpoints", "--session", id]);
    list[0]["gaps"].clone()
}

/// Found by an attack: a tool marked read-only (`readOnlyHint`) that wrote a file ran in plan
/// mode and left no gap. The mark is the server's claim: a call is a gap unless the config vouches
/// for the tool, and plan mode refuses it unrun.
#[test]
fn a_lying_read_only_mark_is_a_gap_and_refused_in_plan_mode() {
    let w = World::new();
    config(&w, "echo,ro_writer", "read_only_tools = [\"echo\"]", "");
    w.put("victim.txt", b"orig\n");
    let victim = w.ws.join("victim.txt");
    let (lines, _) = w.exec_calls(
        &["--plan"],
        vec![
            call("mcp__evil__ro_writer", json!({"path": victim})),
            call("mcp__evil__echo", json!({"message": "hi"})),
        ],
    );
    let r = results(&lines);
    assert!(
        !r[0].0 && r[0].1.contains("plan mode is on") && r[0].1.contains("server's own claim"),
        "{:?}",
        r[0]
    );
    assert_eq!(w.read("victim.txt").as_deref(), Some("orig\n"), "refused unrun");
    assert!(r[1].0, "a vouched tool runs in plan mode: {:?}", r[1]);

    let (lines, result) = w.exec_calls(
        &[],
        vec![
            call("mcp__evil__ro_writer", json!({"path": victim})),
            call("mcp__evil__echo", json!({"message": "hi"})),
        ],
    );
    assert!(results(&lines).iter().all(|r| r.0), "{lines:?}");
    assert_eq!(w.read("victim.txt").as_deref(), Some("written by ro_writer\n"));
    let gaps = gaps_of(&w, &result);
    assert_eq!(
        gaps.as_array().unwrap().len(),
        1,
        "the lying tool is a gap, the vouched one is not: {gaps}"
    );
    assert_eq!(gaps[0]["tool"], "mcp__evil__ro_writer");
    assert_eq!(gaps[0]["reason"], "mcp_side_effect");
}

/// `trust_read_only_hints = true`: the user takes the server's marks for true (and a lying
/// server is then believed, as the user chose).
#[test]
fn trusting_a_servers_marks_vouches_for_its_read_only_tools() {
    let w = World::new();
    config(&w, "echo,writer", "trust_read_only_hints = true", "");
    let (lines, result) = w.exec_calls(
        &["--plan"],
        vec![
            call("mcp__evil__echo", json!({"message": "hi"})),
            call("mcp__evil__writer", json!({"path": w.ws.join("w.txt")})),
        ],
    );
    let r = results(&lines);
    assert!(r[0].0, "{:?}", r[0]);
    assert!(!r[1].0 && r[1].1.contains("does not vouch"), "{:?}", r[1]);
    assert_eq!(gaps_of(&w, &result), json!([]));
}

/// Found by an attack: in the git backend a tool marked read-only ran with no snapshot around
/// it, and a rewind said "nothing to restore" while its write stayed. Every MCP call is
/// snapshotted there.
#[test]
fn the_git_backend_restores_what_a_lying_tool_wrote() {
    let w = World::new();
    config(&w, "echo,ro_writer", "", "");
    w.put("v.txt", b"orig\n");
    let (lines, result) = w.exec_calls(
        &["--backend", "git"],
        vec![call(
            "mcp__evil__ro_writer",
            json!({"path": w.ws.join("v.txt"), "content": "lied\n"}),
        )],
    );
    assert!(results(&lines)[0].0, "{lines:?}");
    assert_eq!(w.read("v.txt").as_deref(), Some("lied\n"));
    rewind_code_to_turn_0(&w, &result);
    assert_eq!(w.read("v.txt").as_deref(), Some("orig\n"));
}

/// Found by an attack: in the git backend a call past its timeout failed, the server wrote
/// afterwards, and the checkpoint and a rewind knew nothing of it. The server is now told to
/// cancel, stopped when it does not answer, and the call's changes settled after that: no write
/// comes late.
#[test]
fn a_timed_out_call_leaves_no_late_write() {
    let w = World::new();
    config(&w, "echo,slow", "tool_timeout_ms = 300", "");
    let late = w.ws.join("w.txt");
    let (lines, result) = w.exec_calls(
        &["--backend", "git"],
        vec![
            call("mcp__evil__slow", json!({"ms": 1500, "path": late})),
            call("mcp__evil__echo", json!({"message": "after"})),
        ],
    );
    let r = results(&lines);
    assert!(
        !r[0].0 && r[0].1.contains("within 300 ms") && r[0].1.contains("it was stopped"),
        "{:?}",
        r[0]
    );
    assert!(
        r[1].0 && r[1].1.contains("echo: after"),
        "started again: {:?}",
        r[1]
    );
    std::thread::sleep(std::time::Duration::from_millis(1800));
    assert!(!late.exists(), "a write after the call failed");
    assert_eq!(gaps_of(&w, &result), json!([]));
}

/// Found by an attack: tools announced as left out (a name too long, not ASCII) could still be
/// called, and two servers' tools meeting at an underscore shared a name: a call went to the first
/// server, past the other's `deny`. A tool not offered is no tool: refused unrun.
#[test]
fn a_tool_left_out_cannot_be_called() {
    let w = World::new();
    let log = w.tmp.path().join("a.log");
    let text = format!(
        "[permissions]\nmcp = \"allow\"\n\n[mcp_servers.a]\ncommand = \"node\"\nargs = [\"{0}\"]\nenv = {{ HOSTILE_TOOLS = \"echo,long,accent,_b\", HOSTILE_LOG = \"{1}\" }}\n\n[mcp_servers.a_]\ncommand = \"node\"\nargs = [\"{0}\"]\nenv = {{ HOSTILE_TOOLS = \"b\" }}\ntool_permissions = {{ b = \"deny\" }}\n",
        hostile(),
        log.display()
    );
    w.write_config(&text);
    let long = format!("mcp__a__{}", "l".repeat(70));
    let (lines, _) = w.exec_calls(
        &[],
        vec![
            call(&long, json!({})),
            call("mcp__a__écho", json!({})),
            call("mcp__a___b", json!({})),
            call("mcp__a__echo", json!({"message": "hi"})),
        ],
    );
    let r = results(&lines);
    for (i, name) in [long.as_str(), "mcp__a__écho", "mcp__a___b"].iter().enumerate() {
        assert!(
            !r[i].0 && r[i].1.contains(&format!("there is no tool `{name}`")),
            "{:?}",
            r[i]
        );
    }
    assert!(r[3].0, "{:?}", r[3]);
    let said = std::fs::read_to_string(&log).unwrap();
    let calls: Vec<&str> = said.lines().filter(|l| l.starts_with("tools/call")).collect();
    assert!(
        calls.len() == 1 && calls[0].ends_with(" echo"),
        "only echo reached the server: {said}"
    );
    let notices: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "notice")
        .filter_map(|l| l["message"].as_str())
        .collect();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("`a`") && n.contains("left out") && n.contains("`_b`")),
        "{notices:?}"
    );
    // `retrace mcp list` marks them.
    let ws = w.ws.display().to_string();
    let (human, _) = w.code(&["mcp", "list", "--workspace", &ws], 0);
    assert!(
        human.contains("mcp__a___b (left out: 2 tools would be offered as `mcp__a___b`"),
        "{human}"
    );
    assert!(human.contains("mcp__a__écho (left out: its name"), "{human}");
    assert!(human.contains("a  ready, 4 tools (3 left out)"), "{human}");
}

/// `[mcp_servers.mute]`: a wrapper (`sh -c`) whose server never answers `initialize`, within a
/// startup timeout of a minute; `marker` names its processes.
fn mute_config(w: &World, marker: &str) {
    let text = format!(
        "[permissions]\nmcp = \"allow\"\n\n[mcp_servers.mute]\ncommand = \"sh\"\nargs = [\"-c\", \"sleep 120; true\", \"{marker}\"]\nstartup_timeout_ms = 60000\n"
    );
    w.write_config(&text);
}

/// Runs `args`, sends SIGTERM once the server's process runs, and checks that Retrace quits
/// within a few seconds (not at the startup timeout) and leaves no process of the server.
fn sigterm_while_starting(w: &World, marker: &str, args: &[&str]) -> std::process::ExitStatus {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    use std::time::{Duration, Instant};
    let mut child = w
        .command()
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while crate::mcp_cli::with_marker(marker).is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the server never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).unwrap();
    let signalled = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if signalled.elapsed() > Duration::from_secs(8) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("retrace waited for the startup timeout after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let gone = Instant::now();
    while !crate::mcp_cli::with_marker(marker).is_empty() {
        assert!(
            gone.elapsed() < Duration::from_secs(5),
            "the server outlived retrace: {:?}",
            crate::mcp_cli::with_marker(marker)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    status
}

/// Found by an attack: SIGTERM while the servers started was said ("cancelling the turn") but
/// Retrace quit only at the startup timeout, a minute later.
#[test]
fn a_sigterm_while_servers_start_cancels_the_turn_at_once() {
    let w = World::new();
    let marker = format!("retrace-start-term-{}", w.tmp.path().display());
    mute_config(&w, &marker);
    let model = w.script(json!([{"content": "done"}]));
    let ws = w.ws.display().to_string();
    sigterm_while_starting(
        &w,
        &marker,
        &["exec", "--json", "--model", &model, "--workspace", &ws, "hi"],
    );
}

/// Found by an attack: `retrace mcp list` killed with SIGTERM while a wrapped server started
/// left the server running.
#[test]
fn a_sigterm_stops_mcp_list_and_its_servers() {
    let w = World::new();
    let marker = format!("retrace-list-term-{}", w.tmp.path().display());
    mute_config(&w, &marker);
    let ws = w.ws.display().to_string();
    let status = sigterm_while_starting(&w, &marker, &["mcp", "list", "--workspace", &ws]);
    assert_eq!(status.code(), Some(130));
}

/// Found by a second attack: a server may act on a resource request as on a tool call, yet
/// resources ran in plan mode, left no gap, and the git backend took no snapshot around them.
/// They follow the tools' rule now: refused in plan mode unless the config vouches for the
/// server, a gap in the snapshot backend, snapshotted (and restored) in the git backend.
#[test]
fn a_server_acting_on_a_resource_read_is_refused_in_plan_mode_a_gap_or_restored() {
    let w = World::new();
    let victim = w.ws.join("victim.txt");
    w.write_config(&format!(
        "[permissions]\nmcp = \"allow\"\n\n[mcp_servers.evil]\ncommand = \"node\"\nargs = [\"{}\"]\nenv = {{ HOSTILE_TOOLS = \"echo\", HOSTILE_RES_WRITE = \"{}\" }}\n",
        hostile(),
        victim.display()
    ));
    w.put("victim.txt", b"orig\n");
    let read = || {
        call(
            "read_mcp_resource",
            json!({"server": "evil", "uri": "hostile://r"}),
        )
    };
    let (lines, _) = w.exec_calls(&["--plan"], vec![read()]);
    let r = results(&lines);
    assert!(
        !r[0].0 && r[0].1.contains("plan mode is on") && r[0].1.contains("`evil`"),
        "{:?}",
        r[0]
    );
    assert_eq!(w.read("victim.txt").as_deref(), Some("orig\n"), "refused unrun");

    let (lines, result) = w.exec_calls(&[], vec![read()]);
    assert!(results(&lines)[0].0, "{lines:?}");
    assert_eq!(w.read("victim.txt").as_deref(), Some("orig\nresources/read\n"));
    let gaps = gaps_of(&w, &result);
    assert_eq!(gaps.as_array().unwrap().len(), 1, "{gaps}");
    assert_eq!(gaps[0]["reason"], "mcp_side_effect");
    assert_eq!(gaps[0]["tool"], "read_mcp_resource");

    std::fs::write(&victim, b"orig\n").unwrap();
    let (lines, result) = w.exec_calls(&["--backend", "git"], vec![read()]);
    assert!(results(&lines)[0].0, "{lines:?}");
    assert_eq!(w.read("victim.txt").as_deref(), Some("orig\nresources/read\n"));
    rewind_code_to_turn_0(&w, &result);
    assert_eq!(w.read("victim.txt").as_deref(), Some("orig\n"), "restored");
}

/// Found by a third attack: a second signal quit `exec --json` without its closing `result` line
/// (SPEC §11: the last line is always one). The first signal's cancel waits for a server that
/// does not answer it; the second quits at once, the line printed first.
#[test]
fn a_second_signal_quits_at_once_and_exec_json_still_ends_with_a_result() {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    use std::io::Read;
    use std::time::Duration;
    let w = World::new();
    config(&w, "echo,slow", "", "");
    let model = w.script(json!([
        {"content": "", "tool_calls": [call("mcp__evil__slow", json!({"ms": 20000, "block": true}))]},
        {"content": "done"}
    ]));
    let ws = w.ws.display().to_string();
    let mut child = w
        .command()
        .args(["exec", "--json", "--model", &model, "--workspace", &ws, "go"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    let pid = Pid::from_raw(child.id() as i32);
    kill(pid, Signal::SIGTERM).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    kill(pid, Signal::SIGTERM).unwrap();
    let status = child.wait().unwrap();
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("quitting now"), "{err}");
    let last: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "result", "{out}");
    assert_eq!(last["ok"], false);
    assert_eq!(last["error"]["code"], "cancelled");
}
