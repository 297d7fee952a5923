//! Every edit tool's preview says what a successful run leaves at each path (`PlannedChange::after`):
//! the capture seam journals it before the write, and takes it as the after-image once the run
//! succeeded, so it must be exactly what is there afterwards (bytes' SHA-256, mode, existence).

use retrace_tools::{FileState, Preview};
use serde_json::json;

use crate::{set_mode, Scratch};

/// Runs `tool` and checks each previewed change's `after` against the disk.
fn intents_hold(s: &Scratch, tool: &str, args: serde_json::Value) {
    let preview: Preview = s.preview(tool, args.clone()).unwrap();
    assert!(!preview.changes.is_empty(), "{tool}");
    s.run(tool, args, &preview).unwrap();
    for c in &preview.changes {
        let after = c
            .after
            .clone()
            .unwrap_or_else(|| panic!("{tool}: no intent for {}", c.path));
        let now = FileState::read(&c.abs, &c.path.to_lossy()).unwrap();
        assert_eq!(after, now, "{tool}: {}", c.path);
    }
}

#[test]
fn each_edit_tool_leaves_exactly_what_its_preview_said() {
    let s = Scratch::new();
    s.write("a.txt", "one two\n");
    set_mode(&s.path("a.txt"), 0o751);
    intents_hold(
        &s,
        "write_file",
        json!({"path": "a.txt", "content": "three four\n"}),
    );
    intents_hold(&s, "write_file", json!({"path": "new/b.txt", "content": "b\n"}));
    intents_hold(
        &s,
        "edit_file",
        json!({"path": "a.txt", "old_string": "three", "new_string": "3"}),
    );
    intents_hold(
        &s,
        "multi_edit",
        json!({"path": "a.txt", "edits": [
            {"old_string": "3", "new_string": "三"},
            {"old_string": "four", "new_string": "4", "replace_all": true}
        ]}),
    );
    intents_hold(&s, "move_file", json!({"from": "a.txt", "to": "moved/a.txt"}));
    intents_hold(&s, "delete_file", json!({"path": "new/b.txt"}));
}
