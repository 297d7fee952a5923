//! "file changed since it was read": every edit tool re-checks existence, SHA-256 and mode.

use retrace_tools::ToolError;
use serde_json::{json, Value};

use crate::{set_mode, Scratch};

/// Previews `args`, lets `meddle` change the workspace, runs, and checks the refusal.
fn refused_after(tool: &str, args: Value, meddle: impl FnOnce(&Scratch), path: &str) {
    let s = Scratch::new();
    s.write("f.txt", "original\n");
    s.write("keep.txt", "keep\n");
    let p = s.preview(tool, args.clone()).unwrap();
    meddle(&s);
    let after_meddle: Vec<_> = ["f.txt", "g.txt", "keep.txt"]
        .iter()
        .map(|f| std::fs::read(s.path(f)).ok())
        .collect();
    let err = s.run(tool, args, &p).unwrap_err();
    assert!(matches!(err, ToolError::FileChanged { .. }), "{tool}: {err}");
    assert_eq!(
        err.to_string(),
        format!("file changed since it was read: {path}; read it again and redo the change")
    );
    let now: Vec<_> = ["f.txt", "g.txt", "keep.txt"]
        .iter()
        .map(|f| std::fs::read(s.path(f)).ok())
        .collect();
    assert_eq!(now, after_meddle, "{tool} wrote after a refusal");
}

fn change_content(s: &Scratch) {
    s.write("f.txt", "someone else\n");
}

#[test]
fn edit_file_rechecks() {
    let args = json!({"path": "f.txt", "old_string": "original", "new_string": "mine"});
    refused_after("edit_file", args.clone(), change_content, "f.txt");
    refused_after(
        "edit_file",
        args.clone(),
        |s| set_mode(&s.path("f.txt"), 0o600),
        "f.txt",
    );
    refused_after(
        "edit_file",
        args,
        |s| std::fs::remove_file(s.path("f.txt")).unwrap(),
        "f.txt",
    );
}

#[test]
fn multi_edit_rechecks() {
    let args = json!({"path": "f.txt", "edits": [{"old_string": "original", "new_string": "mine"}]});
    refused_after("multi_edit", args, change_content, "f.txt");
}

#[test]
fn write_file_rechecks_existing_and_new_files() {
    refused_after(
        "write_file",
        json!({"path": "f.txt", "content": "mine"}),
        change_content,
        "f.txt",
    );
    refused_after(
        "write_file",
        json!({"path": "g.txt", "content": "mine"}),
        |s| s.write("g.txt", "appeared"),
        "g.txt",
    );
}

#[test]
fn delete_and_move_recheck_their_source() {
    refused_after("delete_file", json!({"path": "f.txt"}), change_content, "f.txt");
    refused_after(
        "move_file",
        json!({"from": "f.txt", "to": "g.txt"}),
        change_content,
        "f.txt",
    );
}

#[test]
fn run_refuses_a_preview_of_another_call() {
    let s = Scratch::new();
    s.write("a.txt", "a");
    s.write("b.txt", "b");
    let p = s.preview("delete_file", json!({"path": "a.txt"})).unwrap();
    let err = s.run("delete_file", json!({"path": "b.txt"}), &p).unwrap_err();
    assert!(matches!(err, ToolError::PreviewMismatch { .. }), "{err}");
    assert!(s.path("b.txt").exists());
}
