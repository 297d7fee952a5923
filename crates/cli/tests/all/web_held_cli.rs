//! The web UI after a new user's second trial: what a restore says and shows, and a session that
//! another Retrace holds, through the real `retrace serve` (and, for the page, Debian's chromium
//! driven by playwright-core, as `web_cli` starts it).
//!
//! - Over HTTP: a second `serve` on a workspace whose newest session another `serve` holds reads
//!   that session without its lease (its snapshot, checkpoints, heads and turn results, the status
//!   naming the holder in `held_by`), refuses to change it (`busy`), names the newest free session
//!   as the one to open first, and opens the held one as its own once the other has stopped.
//! - In the browser (`held.mjs`): the page opens the free session, shows the held one read-only
//!   with a panel saying who holds it and a New session button, sends no request that is refused,
//!   and opens the session by itself once the other server stops; at 1280×800 and 390×844.
//! - In the browser (`restores.mjs`): syntax colours, an unchanged write and a move as tool rows,
//!   the rewind menu's explanations, a restore row in the user's words, no Undo for a restore that
//!   changed nothing, a conflict preview opened on keeping the file, an undo that says its counts
//!   and gives the composer back, and heads told apart after undo and redo.

use crate::support;
use crate::web_cli::{
    browser_dir, can_run, clear_shots, shots_dir, spawn_serve, stop, write_script, Serve, TOKEN,
};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The port of a printed address (`http://127.0.0.1:PORT/?token=…`).
fn port_of(url: &str) -> u16 {
    url.split("127.0.0.1:")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {url}"))
}

/// One HTTP/1.1 request with the token; the status and the JSON answer (null when empty).
fn http(port: u16, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status: u16 = out[9..12].parse().unwrap();
    let (_, text) = out.split_once("\r\n\r\n").unwrap();
    let v = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(text).unwrap_or_else(|_| panic!("not JSON: {out}"))
    };
    (status, v)
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A workspace with one session no process holds (made by `retrace exec`, which has exited): the
/// data folder, the workspace, and that session's id.
fn with_a_free_session() -> (tempfile::TempDir, std::path::PathBuf, String) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let script = tmp.path().join("free.json");
    write_script(&script, &json!([{"content": "an older answer"}]));
    let out = support::isolated_retrace(tmp.path())
        .args(["exec", "--json", "--model"])
        .arg(format!("script:{}", script.display()))
        .arg("--workspace")
        .arg(&ws)
        .arg("an older free session")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let id = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v["session_id"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no session id in {stdout}"));
    // the held session, made next, is the newer one (sessions are listed by creation time)
    std::thread::sleep(Duration::from_millis(1100));
    (tmp, ws, id)
}

/// Starts server A (whose model writes `held.txt`) and server B on the same data and workspace.
fn two_servers(tmp: &Path, ws: &Path) -> ((Child, String), (Child, String)) {
    let a_script = tmp.join("a.json");
    write_script(
        &a_script,
        &json!([
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "held.txt", "content": "held\n"}}]},
            {"content": "held done"}
        ]),
    );
    let b_script = tmp.join("b.json");
    write_script(&b_script, &json!([]));
    let a = spawn_serve(tmp, ws, &a_script, 0);
    let b = spawn_serve(tmp, ws, &b_script, 0);
    (a, b)
}

#[test]
fn a_second_serve_reads_a_held_session_refuses_to_change_it_and_opens_the_free_one_first() {
    let (tmp, ws, free) = with_a_free_session();
    let ((mut a, url_a), (mut b, url_b)) = two_servers(tmp.path(), &ws);
    let (pa, pb) = (port_of(&url_a), port_of(&url_b));

    // A makes a session and runs a turn: A holds it.
    let (status, made) = http(pa, "POST", "/api/sessions", Some(json!({})));
    assert_eq!(status, 201, "{made}");
    let held = made["session_id"].as_str().unwrap().to_string();
    let (status, _) = http(
        pa,
        "POST",
        &format!("/api/sessions/{held}/messages"),
        Some(json!({"prompt": "the held prompt"})),
    );
    assert_eq!(status, 202);
    wait_for("A's turn to end", || {
        let (_, s) = http(pa, "GET", &format!("/api/sessions/{held}"), None);
        s["running"].is_null()
    });

    // B: the session to open first is the free one; the listing says who holds the other.
    let (_, info) = http(pb, "GET", "/api/workspace", None);
    assert_eq!(info["session"], free.as_str(), "{info}");
    let (_, list) = http(pb, "GET", "/api/sessions", None);
    let entry = |id: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == id)
            .cloned()
            .unwrap()
    };
    assert_eq!(entry(&held)["held_by"]["pid"], a.id(), "{list}");
    assert!(entry(&free).get("held_by").is_none(), "{list}");
    // A itself does not call its own session held.
    let (_, own) = http(pa, "GET", "/api/sessions", None);
    assert!(
        own.as_array().unwrap().iter().all(|e| e.get("held_by").is_none()),
        "{own}"
    );

    // B reads the held session from its log: its snapshot, saying who holds it.
    let (status, snap) = http(pb, "GET", &format!("/api/sessions/{held}?include=items"), None);
    assert_eq!(status, 200, "{snap}");
    let holder = &snap["status"]["held_by"];
    assert_eq!(holder["pid"], a.id(), "{snap}");
    let says = holder["says"].as_str().unwrap();
    assert!(
        says.starts_with(&format!(
            "This session is open in another Retrace (pid {}, since ",
            a.id()
        )) && says.ends_with(" UTC). Close it there, or start a new session here."),
        "{says}"
    );
    let kinds: Vec<&str> = snap["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"user_prompt") && kinds.contains(&"tool_call"),
        "{kinds:?}"
    );
    assert_eq!(snap["last_event_seq"], 0);
    let (status, plain) = http(pb, "GET", &format!("/api/sessions/{held}"), None);
    assert_eq!(
        (status, &plain["held_by"]["pid"]),
        (200, &json!(a.id())),
        "{plain}"
    );
    // … its checkpoints (every action unavailable, saying why), heads and results
    let (status, cps) = http(pb, "GET", &format!("/api/sessions/{held}/checkpoints"), None);
    assert_eq!(status, 200, "{cps}");
    let actions: Vec<&Value> = cps["entries"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e["actions"].as_array().unwrap())
        .collect();
    assert!(!actions.is_empty());
    assert!(
        actions
            .iter()
            .all(|a| a["available"] == false && a["reason"].as_str().unwrap().contains("in use by process")),
        "{cps}"
    );
    assert_eq!(
        http(pb, "GET", &format!("/api/sessions/{held}/heads"), None).0,
        200
    );
    assert_eq!(
        http(pb, "GET", &format!("/api/sessions/{held}/turns/0/results"), None).0,
        200
    );
    assert_eq!(
        http(pb, "GET", &format!("/api/sessions/{held}/transcript"), None).0,
        200
    );
    assert_eq!(
        http(
            pb,
            "GET",
            &format!("/api/sessions/{held}/history?path=held.txt"),
            None
        )
        .0,
        200
    );
    // … and changes nothing in it.
    let (status, refused) = http(
        pb,
        "POST",
        &format!("/api/sessions/{held}/messages"),
        Some(json!({"prompt": "mine"})),
    );
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (409, Some("busy")),
        "{refused}"
    );

    // A stops: B opens the session as its own.
    assert_eq!(stop(&mut a), Some(0));
    let (status, mine) = http(pb, "GET", &format!("/api/sessions/{held}?include=items"), None);
    assert_eq!(status, 200, "{mine}");
    assert!(mine["status"].get("held_by").is_none(), "{mine}");
    let (_, info) = http(pb, "GET", "/api/workspace", None);
    assert_eq!(info["session"], held.as_str(), "{info}");
    assert_eq!(stop(&mut b), Some(0));
}

#[test]
fn the_web_ui_shows_a_session_another_retrace_holds_read_only_in_a_real_browser() {
    if !can_run("browser", "CHROMIUM", "/usr/bin/chromium", "playwright-core") {
        return;
    }
    let (tmp, ws, free) = with_a_free_session();
    let ((mut a, url_a), (mut b, url_b)) = two_servers(tmp.path(), &ws);
    clear_shots(|n| n.starts_with("held-"));
    let mut node = Command::new("node")
        .current_dir(browser_dir())
        .arg("held.mjs")
        .arg(&url_b)
        .arg(&ws)
        .arg(shots_dir())
        .arg(&url_a)
        .arg(a.id().to_string())
        .arg(&free)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to_node = node.stdin.take();
    let from_node = BufReader::new(node.stdout.take().unwrap());
    let start = Instant::now();
    let mut a_code = None;
    for line in from_node.lines().map_while(Result::ok) {
        if line == "STOP_A" {
            a_code = stop(&mut a);
            // the answer, and the end of node's input
            if let Some(mut w) = to_node.take() {
                writeln!(w, "stopped").unwrap();
            }
        } else {
            println!("{line}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(180),
            "the held flow timed out"
        );
    }
    let status = node.wait().unwrap();
    if a_code.is_none() {
        a_code = stop(&mut a);
    }
    let b_code = stop(&mut b);
    assert!(
        status.success(),
        "the held flow failed ({status}); screenshots in {}",
        shots_dir().display()
    );
    assert_eq!(
        (a_code, b_code),
        (Some(0), Some(0)),
        "a server did not stop cleanly"
    );
    assert!(shots_dir().join("held-released.png").exists());
}

#[test]
fn the_web_ui_says_what_restores_did_in_a_real_browser() {
    if !can_run("browser", "CHROMIUM", "/usr/bin/chromium", "playwright-core") {
        return;
    }
    let answer = "Here it is:\n\n```python\ndef add(a, b):\n    return a + b\n```\n\nwrote the notes";
    let serve = Serve::start(json!([
        {"tool_calls": [
            {"name": "write_file", "arguments": {"path": "demo/notes.md", "content": "# notes\n- a\n- b\n- c\n- d\n"}},
            {"name": "write_file", "arguments": {"path": "demo/todo.txt", "content": "todo\n"}},
            {"name": "write_file", "arguments": {"path": "demo/old.txt", "content": "old\n"}}
        ]},
        {"content": answer},
        {"tool_calls": [
            // written again as it was, and moved
            {"name": "write_file", "arguments": {"path": "demo/todo.txt", "content": "todo\n"}},
            {"name": "move_file", "arguments": {"from": "demo/old.txt", "to": "demo/archive/old.txt"}}
        ]},
        {"content": "tidied"},
        {"tool_calls": [
            {"name": "edit_file", "arguments": {"path": "demo/notes.md", "old_string": "- a\n", "new_string": "- a (reviewed)\n"}}
        ]},
        {"content": "marked"}
    ]));
    clear_shots(|n| n.starts_with("restores-"));
    let (status, code) = serve.run("restores.mjs");
    let status = status.expect("the restores flow timed out");
    assert!(
        status.success(),
        "the restores flow failed ({status}); screenshots in {}",
        shots_dir().display()
    );
    assert_eq!(code, Some(0), "serve did not stop cleanly");
    assert!(shots_dir().join("restores-phone-menu.png").exists());
}
