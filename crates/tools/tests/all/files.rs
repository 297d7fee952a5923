//! What previews say each call does to each file (`Preview::files`, with diffs), and the typed
//! arguments behind the registry: every tool's messages, a call parsed once.

use retrace_protocol::{ChangeAction, FileChange};
use retrace_tools::{BashPolicy, Registry, RunContext};
use serde_json::{json, Value};

use crate::Scratch;

fn files(s: &Scratch, tool: &str, args: Value) -> Vec<FileChange> {
    s.preview(tool, args).unwrap().files
}

#[test]
fn edits_carry_the_diff_of_the_file() {
    let s = Scratch::new();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    s.write("a.txt", &text);
    let f = files(
        &s,
        "edit_file",
        json!({"path": "a.txt", "old_string": "line 5\n", "new_string": "five\nand a half\n"}),
    );
    assert_eq!(f.len(), 1);
    assert_eq!((f[0].path.as_str(), f[0].action), ("a.txt", ChangeAction::Modify));
    assert_eq!((f[0].added, f[0].removed, f[0].binary), (2, 1, false));
    assert_eq!(
        f[0].diff,
        "@@ -2,7 +2,8 @@\n line 2\n line 3\n line 4\n-line 5\n+five\n+and a half\n line 6\n line 7\n line 8\n"
    );
    let f = files(
        &s,
        "multi_edit",
        json!({"path": "a.txt", "edits": [
            {"old_string": "line 1\n", "new_string": ""},
            {"old_string": "line 10", "new_string": "ten"}
        ]}),
    );
    assert_eq!((f[0].added, f[0].removed), (1, 2));
    assert!(
        f[0].diff.starts_with("@@ -1,4 +1,3 @@\n-line 1\n line 2\n"),
        "{}",
        f[0].diff
    );
    assert!(f[0].diff.ends_with("-line 10\n+ten\n"), "{}", f[0].diff);
}

#[test]
fn write_file_creates_or_modifies() {
    let s = Scratch::new();
    let f = files(&s, "write_file", json!({"path": "new.txt", "content": "a\nb"}));
    assert_eq!(f[0].action, ChangeAction::Create);
    assert_eq!(
        f[0].diff,
        "@@ -0,0 +1,2 @@\n+a\n+b\n\\ No newline at end of file\n"
    );
    assert_eq!((f[0].added, f[0].removed), (2, 0));
    s.write("old.txt", "a\nb\n");
    let f = files(&s, "write_file", json!({"path": "old.txt", "content": "a\nc\n"}));
    assert_eq!(f[0].action, ChangeAction::Modify);
    assert_eq!(f[0].diff, "@@ -1,2 +1,2 @@\n a\n-b\n+c\n");
    s.write("blob.bin", b"\x00\x01");
    let f = files(&s, "write_file", json!({"path": "blob.bin", "content": "text"}));
    assert!(f[0].binary);
    assert_eq!((f[0].diff.as_str(), f[0].added, f[0].removed), ("", 0, 0));
}

#[test]
fn write_file_over_a_large_file_has_no_diff() {
    let s = Scratch::new();
    let big = "x\n".repeat(retrace_tools::diff::MAX_DIFF_INPUT / 2 + 1);
    s.write("big.txt", &big);
    let p = s
        .preview("write_file", json!({"path": "big.txt", "content": "small\n"}))
        .unwrap();
    assert!(p.files[0].binary);
    assert_eq!((p.files[0].added, p.files[0].removed), (0, 0));
    // The hash is still of the whole file.
    let sha = retrace_fsutil::sha256_bytes(big.as_bytes());
    assert_eq!(p.changes[0].seen.sha256.as_deref(), Some(sha.as_str()));
}

#[test]
fn delete_removes_every_line_and_move_is_one_move() {
    let s = Scratch::new();
    s.write("a.txt", "one\ntwo\n");
    let f = files(&s, "delete_file", json!({"path": "a.txt"}));
    assert_eq!(f[0].action, ChangeAction::Delete);
    assert_eq!(f[0].diff, "@@ -1,2 +0,0 @@\n-one\n-two\n");
    assert_eq!((f[0].added, f[0].removed), (0, 2));
    let p = s
        .preview("move_file", json!({"from": "a.txt", "to": "b/a.txt"}))
        .unwrap();
    assert_eq!(p.changes.len(), 2);
    assert_eq!(p.files.len(), 1);
    let m = &p.files[0];
    assert_eq!(m.action, ChangeAction::Move);
    assert_eq!((m.path.as_str(), m.from.as_deref()), ("b/a.txt", Some("a.txt")));
    assert_eq!((m.diff.as_str(), m.added, m.removed), ("", 0, 0));
}

#[test]
fn read_tools_and_bash_change_no_file() {
    let s = Scratch::new();
    s.write("a.txt", "x\n");
    assert!(files(&s, "read_file", json!({"path": "a.txt"})).is_empty());
    assert!(files(&s, "grep", json!({"pattern": "x"})).is_empty());
    assert!(files(&s, "bash", json!({"command": "true"})).is_empty());
}

/// A call without arguments names the first required field and the form it takes.
#[test]
fn missing_fields_are_named_with_their_form() {
    let s = Scratch::new();
    for spec in Registry::standard().specs() {
        if spec.name == "list_dir" {
            continue; // its path defaults to "."
        }
        let first = spec.parameters["required"][0].as_str().unwrap();
        let msg = s.preview(&spec.name, json!({})).unwrap_err().to_string();
        let expected = format!("invalid arguments for {}: `{first}` is required (", spec.name);
        assert!(msg.starts_with(&expected), "{msg}");
        assert!(!msg.contains("(a value)"), "{msg}");
    }
    let msg = s
        .preview("multi_edit", json!({"path": "f.txt"}))
        .unwrap_err()
        .to_string();
    assert_eq!(
        msg,
        "invalid arguments for multi_edit: `edits` is required (an array of {old_string, new_string, replace_all?} objects)"
    );
    let msg = s
        .preview("move_file", json!({"from": "a", "to": 7}))
        .unwrap_err()
        .to_string();
    assert_eq!(
        msg,
        "invalid arguments for move_file: `to` must be a string, got the number 7"
    );
    let msg = s
        .preview("read_file", json!({"path": "a", "limit": 0}))
        .unwrap_err()
        .to_string();
    assert_eq!(msg, "invalid arguments for read_file: `limit` must be at least 1");
    // Unknown fields are ignored, as before.
    s.write("a.txt", "x\n");
    s.preview("read_file", json!({"path": "a.txt", "verbose": true}))
        .unwrap();
}

#[test]
fn a_prepared_call_is_parsed_once_then_previewed_and_run() {
    let s = Scratch::new();
    s.write("a.txt", "x\n");
    let tool = s.reg.get("edit_file").unwrap();
    let call = tool
        .prepare(&json!({"path": "a.txt", "old_string": "x", "new_string": "y"}))
        .unwrap();
    assert_eq!(call.name(), "edit_file");
    let p = call.preview(&s.ws).unwrap();
    let allow = |_: &str| true;
    call.run(&s.ws, &p, &RunContext::new(BashPolicy::Allow, &allow))
        .unwrap();
    assert_eq!(s.text("a.txt"), "y\n");
    let err = tool.prepare(&json!({"path": "a.txt"})).err().unwrap();
    assert!(err.to_string().contains("`old_string` is required"), "{err}");
}
