//! Workspace path safety: escapes refused before anything is written; symlinks inside and hard
//! links edited but reported as gaps.

use std::fs;
use std::os::unix::fs::symlink;

use retrace_protocol::GapReason;
use retrace_tools::ToolError;
use serde_json::json;

use crate::Scratch;

fn assert_outside(err: ToolError) {
    assert!(matches!(err, ToolError::OutsideWorkspace { .. }), "{err}");
    assert!(err.to_string().contains("outside the workspace"), "{err}");
    assert!(err.touched_nothing());
}

#[test]
fn dot_dot_escape_is_refused() {
    let s = Scratch::new();
    fs::write(s.outside("x"), "outside").unwrap();
    for tool_args in [
        ("write_file", json!({"path": "../x", "content": "pwned"})),
        (
            "edit_file",
            json!({"path": "../x", "old_string": "outside", "new_string": "pwned"}),
        ),
        ("delete_file", json!({"path": "../x"})),
        ("move_file", json!({"from": "../x", "to": "x"})),
        ("read_file", json!({"path": "sub/../../x"})),
        ("list_dir", json!({"path": ".."})),
        ("grep", json!({"pattern": "o", "path": "../"})),
    ] {
        assert_outside(s.call(tool_args.0, tool_args.1).unwrap_err());
    }
    assert_eq!(fs::read(s.outside("x")).unwrap(), b"outside");
    assert!(!s.path("x").exists());
}

#[test]
fn absolute_paths_outside_are_refused_inside_accepted() {
    let s = Scratch::new();
    fs::write(s.outside("x"), "outside").unwrap();
    let abs_out = s.outside("x").to_string_lossy().into_owned();
    assert_outside(
        s.call("write_file", json!({"path": abs_out, "content": "pwned"}))
            .unwrap_err(),
    );
    assert_outside(
        s.preview(
            "edit_file",
            json!({"path": "/etc/passwd", "old_string": "root", "new_string": "toor"}),
        )
        .unwrap_err(),
    );
    assert_outside(s.call("read_file", json!({"path": "/etc/passwd"})).unwrap_err());
    assert_eq!(fs::read(s.outside("x")).unwrap(), b"outside");
    let abs_in = s.path("in.txt").to_string_lossy().into_owned();
    let p = s
        .preview("write_file", json!({"path": abs_in, "content": "ok"}))
        .unwrap();
    assert_eq!(p.changes[0].path.to_str(), Some("in.txt"));
}

#[test]
fn symlinks_leading_outside_are_refused() {
    let s = Scratch::new();
    fs::write(s.outside("secret"), "outside").unwrap();
    fs::create_dir(s.outside("outdir")).unwrap();
    symlink(s.outside("secret"), s.path("link")).unwrap();
    symlink(s.outside("outdir"), s.path("dirlink")).unwrap();
    symlink("../secret", s.path("rellink")).unwrap();
    symlink(s.outside("not-yet"), s.path("dangling")).unwrap();
    for (tool, args) in [
        ("write_file", json!({"path": "link", "content": "pwned"})),
        ("write_file", json!({"path": "rellink", "content": "pwned"})),
        ("write_file", json!({"path": "dangling", "content": "pwned"})),
        (
            "write_file",
            json!({"path": "dirlink/new.txt", "content": "pwned"}),
        ),
        (
            "edit_file",
            json!({"path": "link", "old_string": "outside", "new_string": "pwned"}),
        ),
        ("delete_file", json!({"path": "link"})),
        ("move_file", json!({"from": "link", "to": "here"})),
        ("move_file", json!({"from": "x", "to": "dirlink/x"})),
        ("read_file", json!({"path": "link"})),
        ("list_dir", json!({"path": "dirlink"})),
    ] {
        let err = s.call(tool, args).unwrap_err();
        assert_outside(err);
    }
    assert_eq!(fs::read(s.outside("secret")).unwrap(), b"outside");
    assert!(!s.outside("not-yet").exists());
    assert_eq!(fs::read_dir(s.outside("outdir")).unwrap().count(), 0);
}

#[test]
fn symlink_component_inside_is_edited_with_a_gap() {
    let s = Scratch::new();
    s.write("real/a.txt", "one\n");
    symlink("real", s.path("alias")).unwrap();
    let args = json!({"path": "alias/a.txt", "old_string": "one", "new_string": "two"});
    let p = s.preview("edit_file", args.clone()).unwrap();
    assert_eq!(p.changes[0].path.to_str(), Some("alias/a.txt"));
    assert_eq!(p.gaps.len(), 1, "{:?}", p.gaps);
    let g = &p.gaps[0];
    assert_eq!(g.reason, GapReason::Symlink);
    assert_eq!(g.tool.as_deref(), Some("edit_file"));
    assert_eq!(g.path.as_deref(), Some("alias/a.txt"));
    assert!(
        g.detail.as_deref().unwrap().contains("`alias` is a symlink"),
        "{g:?}"
    );
    s.run("edit_file", args, &p).unwrap();
    assert_eq!(s.text("real/a.txt"), "two\n");
    assert!(fs::symlink_metadata(s.path("alias"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn a_symlinked_file_inside_keeps_its_link() {
    let s = Scratch::new();
    s.write("target.txt", "old");
    symlink("target.txt", s.path("l")).unwrap();
    let p = s
        .preview("write_file", json!({"path": "l", "content": "new"}))
        .unwrap();
    assert_eq!(p.gaps[0].reason, GapReason::Symlink);
    s.run("write_file", json!({"path": "l", "content": "new"}), &p)
        .unwrap();
    assert_eq!(s.text("target.txt"), "new");
    assert!(fs::symlink_metadata(s.path("l"))
        .unwrap()
        .file_type()
        .is_symlink());
    // Deleting the link deletes the link, not its target.
    s.call("delete_file", json!({"path": "l"})).unwrap();
    assert!(fs::symlink_metadata(s.path("l")).is_err());
    assert_eq!(s.text("target.txt"), "new");
}

#[test]
fn hard_linked_file_is_edited_with_a_gap() {
    let s = Scratch::new();
    s.write("a.txt", "shared\n");
    fs::hard_link(s.path("a.txt"), s.path("b.txt")).unwrap();
    let args = json!({"path": "a.txt", "old_string": "shared", "new_string": "mine"});
    let p = s.preview("edit_file", args.clone()).unwrap();
    assert_eq!(p.gaps.len(), 1);
    assert_eq!(p.gaps[0].reason, GapReason::Hardlink);
    assert_eq!(p.gaps[0].path.as_deref(), Some("a.txt"));
    assert!(p.gaps[0].detail.as_deref().unwrap().starts_with("2 hard links"));
    s.run("edit_file", args, &p).unwrap();
    assert_eq!(s.text("a.txt"), "mine\n");
}

#[test]
fn resolve_reports_rel_abs_and_gaps() {
    let s = Scratch::new();
    let r = s.ws.resolve("./a/../b.txt").unwrap();
    assert_eq!(r.rel.to_str(), Some("b.txt"));
    assert_eq!(r.abs, s.path("b.txt"));
    assert_eq!(r.real, s.path("b.txt"));
    assert!(r.gaps.is_empty());
    assert!(matches!(s.ws.resolve(""), Err(ToolError::BadPath(_))));
    assert!(matches!(s.ws.resolve("."), Err(ToolError::BadPath(_))));
    assert!(matches!(s.ws.resolve("a\0b"), Err(ToolError::BadPath(_))));
}
