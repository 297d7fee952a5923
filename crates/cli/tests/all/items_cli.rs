//! The session's view through the real binary: the items `exec --json` streams, applied as every
//! frontend applies them, equal what `transcript --items --json` reads back from disk — ids,
//! titles, statuses and changes with their diffs.

use serde_json::{json, Value};

use crate::support::world::World;

#[test]
fn the_streamed_items_are_the_items_read_back() {
    let w = World::new();
    w.put("b.txt", b"one\n");
    let model = w.script(json!([
        {"content": "working", "tool_calls": [
            {"name": "write_file", "arguments": {"path": "a.txt", "content": "new\n"}},
            {"name": "edit_file", "arguments": {"path": "b.txt", "old_string": "one", "new_string": "two"}},
            {"name": "move_file", "arguments": {"from": "a.txt", "to": "c.txt"}},
            {"name": "delete_file", "arguments": {"path": "missing.txt"}}
        ]},
        {"content": "done"}
    ]));
    let args = w.exec_args(None, &model, "make files");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (stdout, _) = w.code(&args, 0);
    let mut live = Vec::new();
    for line in stdout.lines() {
        retrace_testkit::items::apply_item_event(&mut live, &serde_json::from_str(line).unwrap());
    }
    let result: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let id = result["session_id"].as_str().unwrap();
    let stored = w.json(&["transcript", "--session", id, "--items"]);
    assert_eq!(
        Value::Array(live.clone()),
        stored,
        "streamed and stored items differ"
    );

    let tools: Vec<&Value> = live.iter().filter(|i| i["kind"] == "tool_call").collect();
    let shown: Vec<(&str, &str)> = tools
        .iter()
        .map(|t| (t["title"].as_str().unwrap(), t["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        shown,
        [
            ("Created a.txt", "ok"),
            ("Edited b.txt", "ok"),
            ("Moved a.txt → c.txt", "ok"),
            ("Delete missing.txt", "failed")
        ]
    );
    let change = |t: &Value| t["changes"][0].clone();
    assert_eq!(change(tools[0])["action"], "create");
    assert_eq!(change(tools[1])["action"], "modify");
    assert_eq!(change(tools[1])["diff"], "@@ -1 +1 @@\n-one\n+two\n");
    assert_eq!(
        (
            change(tools[1])["added"].clone(),
            change(tools[1])["removed"].clone()
        ),
        (json!(1), json!(1))
    );
    assert_eq!(change(tools[2])["action"], "move");
    assert_eq!(change(tools[2])["from"], "a.txt");
    assert!(tools[3]["changes"].is_null(), "a failed call changed nothing");
    let checkpoint = live.iter().find(|i| i["kind"] == "checkpoint").unwrap();
    assert_eq!(checkpoint["files"].as_array().unwrap().len(), 3, "{checkpoint}");
}

/// The diffs live in `<id>.diffs`, not in the log that every open replays; a lost diffs file
/// leaves the changes with their counts and `diff_lost`, never a wrong or missing item.
#[test]
fn diffs_are_kept_apart_from_the_log_and_their_loss_is_said() {
    let w = World::new();
    w.put("b.txt", b"one\n");
    let model = w.script(json!([
        {"content": "", "tool_calls": [
            {"name": "edit_file", "arguments": {"path": "b.txt", "old_string": "one", "new_string": "distinctive"}}
        ]},
        {"content": "done"}
    ]));
    let args = w.exec_args(None, &model, "edit");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (stdout, _) = w.code(&args, 0);
    let result: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let id = result["session_id"].as_str().unwrap();
    let log = std::fs::read_to_string(w.sessions_dir().join(format!("{id}.jsonl"))).unwrap();
    let diffs = w.sessions_dir().join(format!("{id}.diffs"));
    assert!(log.contains(r#""diffs_apart":true"#), "{log}");
    assert!(!log.contains("+distinctive"), "the log holds no diff text: {log}");
    assert!(std::fs::read_to_string(&diffs).unwrap().contains("+distinctive"));

    let change = |items: &Value| {
        items
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["kind"] == "tool_call")
            .unwrap()["changes"][0]
            .clone()
    };
    let kept = change(&w.json(&["transcript", "--session", id, "--items"]));
    assert_eq!(kept["diff"], "@@ -1 +1 @@\n-one\n+distinctive\n");
    assert!(kept["diff_lost"].is_null());

    std::fs::remove_file(&diffs).unwrap();
    let lost = change(&w.json(&["transcript", "--session", id, "--items"]));
    assert_eq!(lost["diff"], "");
    assert_eq!(lost["diff_lost"], true);
    assert_eq!(
        (lost["added"].clone(), lost["removed"].clone()),
        (json!(1), json!(1))
    );

    // The session goes on: the next result's diffs start a new file.
    let model = w.script(json!([
        {"content": "", "tool_calls": [
            {"name": "write_file", "arguments": {"path": "c.txt", "content": "c\n"}}
        ]},
        {"content": "done"}
    ]));
    let args = w.exec_args(Some(id), &model, "more");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    w.code(&args, 0);
    assert!(std::fs::read_to_string(&diffs).unwrap().contains("+c"));
}
