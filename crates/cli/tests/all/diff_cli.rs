//! `retrace diff`: a turn's results through the real binary — each file's diff from the turn's
//! start to its end, its shell commands with exit codes, exact after later hand edits.

use serde_json::{json, Value};

use crate::support::world::World;

#[test]
fn a_turns_results_with_its_commands_stay_exact_after_a_hand_edit() {
    let w = World::new();
    w.put("a.txt", b"one\ntwo\n");
    let id = w.exec(
        None,
        "change things",
        json!([
            {"content": "", "tool_calls": [
                {"name": "edit_file", "arguments": {"path": "a.txt", "old_string": "two", "new_string": "2"}},
                {"name": "write_file", "arguments": {"path": "new.txt", "content": "fresh\n"}},
                {"name": "bash", "arguments": {"command": "echo checked; exit 3"}}
            ]},
            {"content": "done"}
        ]),
    );
    let args = ["diff", "--session", id.as_str(), "--turn", "0"];
    let r = w.json(&args);
    assert_eq!(r["turn"], 0);
    assert_eq!(r["prompt"], "change things");
    let files = r["files"].as_array().unwrap();
    let by = |p: &str| files.iter().find(|f| f["path"] == p).unwrap().clone();
    assert_eq!(by("a.txt")["action"], "modify");
    assert_eq!(by("a.txt")["diff"], "@@ -1,2 +1,2 @@\n one\n-two\n+2\n");
    assert_eq!(
        (by("a.txt")["added"].clone(), by("a.txt")["removed"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(by("a.txt")["binary"], false);
    assert_eq!(by("new.txt")["action"], "create");
    assert_eq!(by("new.txt")["diff"], "@@ -0,0 +1 @@\n+fresh\n");
    let commands = r["commands"].as_array().unwrap();
    assert_eq!(commands.len(), 1, "{r}");
    assert_eq!(commands[0]["command"], "echo checked; exit 3");
    assert_eq!(commands[0]["exit_code"], 3);
    assert!(commands[0]["duration_ms"].is_u64(), "{r}");
    assert_eq!(r["coverage"], "partial");

    // Hand edits afterwards change nothing in the turn's results.
    w.put("a.txt", b"edited by hand\n");
    std::fs::remove_file(w.ws.join("new.txt")).unwrap();
    assert_eq!(w.json(&args), r);

    // Plain text: the same, as a person reads it.
    let (text, _) = w.code(&["diff", "--session", id.as_str(), "--turn", "0"], 0);
    assert!(
        text.contains("modified a.txt (+1 −1)\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"),
        "{text}"
    );
    assert!(text.contains("$ echo checked; exit 3 → exit 3"), "{text}");
    assert!(!text.contains('\x1b'), "no colour when piped: {text}");
}

#[test]
fn a_turn_that_is_not_there_is_not_found() {
    let w = World::new();
    let id = w.exec(None, "nothing", json!([{"content": "done"}]));
    let out = w.run(&["diff", "--session", id.as_str(), "--turn", "7", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    let err: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(err["error"]["code"], "not_found", "{err}");
}

#[test]
fn history_lists_each_version_of_a_file() {
    let w = World::new();
    w.put("a.txt", b"one\n");
    let id = w.exec(
        None,
        "first",
        json!([
            {"content": "", "tool_calls": [
                {"name": "write_file", "arguments": {"path": "a.txt", "content": "two\n"}}
            ]},
            {"content": "done"}
        ]),
    );
    w.put("a.txt", b"by hand\n");
    let h = w.json(&["history", "--session", id.as_str(), "a.txt"]);
    assert_eq!(h["path"], "a.txt");
    let origins: Vec<&str> = h["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["origin"].as_str().unwrap())
        .collect();
    assert_eq!(origins, ["turn_start", "turn_end", "now"], "{h}");
    assert_eq!(h["versions"][2]["size"], 8);
    assert_eq!(h["versions"][0]["turn"], 0);
    let out = w.run(&["history", "--session", id.as_str(), "never.txt", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    let (text, _) = w.code(&["history", "--session", id.as_str(), "a.txt"], 0);
    assert!(text.starts_with("a.txt\n  v1   turn 0 start"), "{text}");
}

#[test]
fn revert_to_a_version_is_an_undoable_one_file_restore() {
    let w = World::new();
    w.put("a.txt", b"one\n");
    let id = w.exec(
        None,
        "first",
        json!([
            {"content": "", "tool_calls": [
                {"name": "write_file", "arguments": {"path": "a.txt", "content": "two\n"}}
            ]},
            {"content": "done"}
        ]),
    );
    w.exec(
        Some(&id),
        "second",
        json!([
            {"content": "", "tool_calls": [
                {"name": "write_file", "arguments": {"path": "a.txt", "content": "three\n"}}
            ]},
            {"content": "done"}
        ]),
    );
    // v2 is turn 0's end: "two".
    let r = w.json(&["revert", "--session", id.as_str(), "a.txt", "--version", "2"]);
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(w.read("a.txt").as_deref(), Some("two\n"));
    w.json(&["undo", "--session", id.as_str()]);
    assert_eq!(w.read("a.txt").as_deref(), Some("three\n"));
    let out = w.run(&[
        "revert",
        "--session",
        id.as_str(),
        "a.txt",
        "--version",
        "40",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(err["error"]["code"], "not_found", "{err}");
}
