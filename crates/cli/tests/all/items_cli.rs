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
            ("Write a.txt", "ok"),
            ("Edit b.txt", "ok"),
            ("Move a.txt → c.txt", "ok"),
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
