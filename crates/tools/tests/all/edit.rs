//! The edit tools' previews and runs: kinds, content, CRLF, modes, error messages, all-or-nothing.

use retrace_fsutil::sha256_bytes;
use retrace_protocol::ChangeKind;
use retrace_tools::{FileState, ToolError};
use serde_json::json;

use crate::{mode_of, set_mode, Scratch};

#[test]
fn write_file_creates_with_parents_and_0644() {
    let s = Scratch::new();
    let args = json!({"path": "a/b/new.txt", "content": "hello\n"});
    let p = s.preview("write_file", args.clone()).unwrap();
    assert_eq!(p.changes.len(), 1);
    let c = &p.changes[0];
    assert_eq!(c.path.to_str(), Some("a/b/new.txt"));
    assert_eq!(c.abs, s.path("a/b/new.txt"));
    assert_eq!(c.kind, ChangeKind::Create);
    assert_eq!(c.seen, FileState::absent());
    assert!(p.gaps.is_empty() && p.shell_command.is_none());
    assert!(!s.path("a").exists(), "a preview writes nothing");
    let out = s.run("write_file", args, &p).unwrap();
    assert_eq!(s.text("a/b/new.txt"), "hello\n");
    assert_eq!(mode_of(&s.path("a/b/new.txt")), 0o644);
    assert_eq!(out.changed.len(), 1);
    assert!(
        out.content.starts_with("Created `a/b/new.txt`"),
        "{}",
        out.content
    );
}

#[test]
fn write_file_replaces_and_keeps_the_mode() {
    let s = Scratch::new();
    s.write("run.sh", "old");
    set_mode(&s.path("run.sh"), 0o750);
    let args = json!({"path": "run.sh", "content": "#!/bin/sh\necho new\n"});
    let p = s.preview("write_file", args.clone()).unwrap();
    let c = &p.changes[0];
    assert_eq!(c.kind, ChangeKind::Modify);
    assert!(c.seen.exists);
    assert_eq!(c.seen.sha256.as_deref(), Some(sha256_bytes(b"old").as_str()));
    assert_eq!(c.seen.mode, Some(0o750));
    s.run("write_file", args, &p).unwrap();
    assert_eq!(s.text("run.sh"), "#!/bin/sh\necho new\n");
    assert_eq!(mode_of(&s.path("run.sh")), 0o750);
}

#[test]
fn write_file_replaces_a_binary_file_with_text() {
    let s = Scratch::new();
    s.write("blob.bin", b"\x00\x01\x02");
    s.call("write_file", json!({"path": "blob.bin", "content": "text"}))
        .unwrap();
    assert_eq!(s.text("blob.bin"), "text");
}

#[test]
fn edit_file_previews_a_modify_and_edits_exactly_once() {
    let s = Scratch::new();
    s.write("lib.rs", "fn a() {}\nfn b() {}\n");
    set_mode(&s.path("lib.rs"), 0o600);
    let args = json!({"path": "lib.rs", "old_string": "fn b() {}", "new_string": "fn b() { a() }"});
    let p = s.preview("edit_file", args.clone()).unwrap();
    assert_eq!(p.changes.len(), 1);
    assert_eq!(p.changes[0].kind, ChangeKind::Modify);
    assert_eq!(p.changes[0].seen.mode, Some(0o600));
    assert_eq!(
        s.text("lib.rs"),
        "fn a() {}\nfn b() {}\n",
        "a preview writes nothing"
    );
    let out = s.run("edit_file", args, &p).unwrap();
    assert_eq!(s.text("lib.rs"), "fn a() {}\nfn b() { a() }\n");
    assert_eq!(mode_of(&s.path("lib.rs")), 0o600);
    assert!(out.content.contains("replaced 1 occurrence"), "{}", out.content);
    assert!(out.content.contains("     2\tfn b() { a() }"), "{}", out.content);
    assert_eq!(out.changed[0].to_str(), Some("lib.rs"));
}

#[test]
fn crlf_survives_byte_for_byte() {
    let s = Scratch::new();
    let before = b"line one\r\nline two\r\nline three\r\nno newline at end";
    s.write("dos.txt", before);
    // The model writes `\n`; the file's `\r\n` are kept, inside and outside the span.
    s.call(
        "edit_file",
        json!({"path": "dos.txt", "old_string": "line two\nline three", "new_string": "line 2\nline 3"}),
    )
    .unwrap();
    assert_eq!(
        s.read("dos.txt"),
        b"line one\r\nline 2\r\nline 3\r\nno newline at end"
    );
    s.call(
        "edit_file",
        json!({"path": "dos.txt", "old_string": "one", "new_string": "1"}),
    )
    .unwrap();
    assert_eq!(
        s.read("dos.txt"),
        b"line 1\r\nline 2\r\nline 3\r\nno newline at end"
    );
}

#[test]
fn not_found_lists_the_nearest_lines() {
    let s = Scratch::new();
    s.write(
        "main.py",
        "import os\n\ndef main():\n    print('hello world')\n    return 0\n",
    );
    let err = s
        .preview(
            "edit_file",
            json!({"path": "main.py", "old_string": "def main():\n    print('hello, world')", "new_string": "x"}),
        )
        .unwrap_err();
    assert!(matches!(err, ToolError::NoMatch { .. }));
    let msg = err.to_string();
    assert!(msg.starts_with("old_string was not found in `main.py`."), "{msg}");
    assert!(msg.contains("The closest match, lines 3-4:"), "{msg}");
    assert!(msg.contains("     3\tdef main():"), "{msg}");
    assert!(msg.contains("     4\t    print('hello world')"), "{msg}");
    assert!(err.touched_nothing());
}

#[test]
fn found_n_times_lists_line_numbers_and_replace_all_works() {
    let s = Scratch::new();
    s.write("c.txt", "x = 1\ny = 2\nx = 1\n\nx = 1\n");
    let args = json!({"path": "c.txt", "old_string": "x = 1", "new_string": "x = 9"});
    let msg = s.preview("edit_file", args).unwrap_err().to_string();
    assert_eq!(
        msg,
        "old_string was found 3 times in `c.txt`, at lines 1, 3, 5; add surrounding lines to old_string \
         so it matches exactly once, or set replace_all to true"
    );
    let out = s
        .call(
            "edit_file",
            json!({"path": "c.txt", "old_string": "x = 1", "new_string": "x = 9", "replace_all": true}),
        )
        .unwrap();
    assert!(out.content.contains("replaced 3 occurrences"), "{}", out.content);
    assert_eq!(s.text("c.txt"), "x = 9\ny = 2\nx = 9\n\nx = 9\n");
}

#[test]
fn edit_file_errors_the_model_can_act_on() {
    let s = Scratch::new();
    s.write("a.txt", "abc");
    let msg = |args| s.preview("edit_file", args).unwrap_err().to_string();
    assert_eq!(
        msg(json!({"path": "a.txt", "new_string": "x"})),
        "invalid arguments for edit_file: `old_string` is required (a string)"
    );
    assert!(
        msg(json!({"path": "a.txt", "old_string": "", "new_string": "x"})).contains("`old_string` is empty")
    );
    assert!(msg(json!({"path": "a.txt", "old_string": "a", "new_string": "a"})).contains("identical"));
    assert!(
        msg(json!({"path": "nope.txt", "old_string": "a", "new_string": "b"}))
            .starts_with("file not found: `nope.txt`")
    );
    std::fs::create_dir(s.path("d")).unwrap();
    assert!(msg(json!({"path": "d", "old_string": "a", "new_string": "b"})).contains("is a directory"));
}

#[test]
fn multi_edit_applies_in_order() {
    let s = Scratch::new();
    s.write("m.txt", "alpha beta gamma\n");
    let out = s
        .call(
            "multi_edit",
            json!({"path": "m.txt", "edits": [
                {"old_string": "alpha", "new_string": "ALPHA"},
                {"old_string": "ALPHA beta", "new_string": "A B"},
                {"old_string": "a", "new_string": "4", "replace_all": true}
            ]}),
        )
        .unwrap();
    assert_eq!(s.text("m.txt"), "A B g4mm4\n");
    assert!(
        out.content.starts_with("Applied 3 edits to `m.txt`"),
        "{}",
        out.content
    );
}

#[test]
fn multi_edit_is_all_or_nothing() {
    let s = Scratch::new();
    let before = b"one\r\ntwo\r\nthree\r\n";
    s.write("f.txt", before);
    let args = json!({"path": "f.txt", "edits": [
        {"old_string": "one", "new_string": "1"},
        {"old_string": "two", "new_string": "2"},
        {"old_string": "four", "new_string": "4"}
    ]});
    let err = s.preview("multi_edit", args.clone()).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("(edit 3 of 3)"), "{msg}");
    assert!(
        msg.ends_with("\nNo edit was applied; the file is unchanged."),
        "{msg}"
    );
    assert_eq!(s.read("f.txt"), before);
    // Even when run is reached with a preview taken from a good call, a failing edit writes nothing.
    let good = json!({"path": "f.txt", "edits": [{"old_string": "one", "new_string": "1"}]});
    let p = s.preview("multi_edit", good).unwrap();
    assert!(s.run("multi_edit", args, &p).is_err());
    assert_eq!(s.read("f.txt"), before);
}

#[test]
fn multi_edit_names_the_bad_item() {
    let s = Scratch::new();
    s.write("f.txt", "x");
    let msg = s
        .preview(
            "multi_edit",
            json!({"path": "f.txt", "edits": [{"old_string": "x", "new_string": "y"}, {"old_string": "x"}]}),
        )
        .unwrap_err()
        .to_string();
    assert_eq!(
        msg,
        "invalid arguments for multi_edit: edits[1]: `new_string` is required (a string)"
    );
    let msg = s
        .preview("multi_edit", json!({"path": "f.txt", "edits": []}))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("`edits` is empty"), "{msg}");
}

#[test]
fn move_file_previews_source_and_destination_and_creates_parents() {
    let s = Scratch::new();
    s.write("src.txt", "payload");
    set_mode(&s.path("src.txt"), 0o640);
    let args = json!({"from": "src.txt", "to": "deep/er/dst.txt"});
    let p = s.preview("move_file", args.clone()).unwrap();
    let kinds: Vec<_> = p
        .changes
        .iter()
        .map(|c| (c.path.to_lossy(), c.kind, c.seen.exists))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("src.txt".to_string(), ChangeKind::Delete, true),
            ("deep/er/dst.txt".to_string(), ChangeKind::Create, false),
        ]
    );
    let out = s.run("move_file", args, &p).unwrap();
    assert!(!s.path("src.txt").exists());
    assert_eq!(s.text("deep/er/dst.txt"), "payload");
    assert_eq!(mode_of(&s.path("deep/er/dst.txt")), 0o640);
    assert_eq!(out.changed.len(), 2);
}

#[test]
fn move_file_refuses_an_existing_destination() {
    let s = Scratch::new();
    s.write("a.txt", "A");
    s.write("b.txt", "B");
    let err = s
        .preview("move_file", json!({"from": "a.txt", "to": "b.txt"}))
        .unwrap_err();
    assert!(matches!(err, ToolError::DestinationExists { .. }), "{err}");
    assert!(err.to_string().contains("never replaces"), "{err}");
    // A destination that appears between preview and run is refused too.
    let args = json!({"from": "a.txt", "to": "c.txt"});
    let p = s.preview("move_file", args.clone()).unwrap();
    s.write("c.txt", "C");
    assert!(matches!(
        s.run("move_file", args, &p),
        Err(ToolError::DestinationExists { .. })
    ));
    assert_eq!(
        (s.text("a.txt"), s.text("b.txt"), s.text("c.txt")),
        ("A".into(), "B".into(), "C".into())
    );
    // A directory as destination gets a hint.
    std::fs::create_dir(s.path("dir")).unwrap();
    let msg = s
        .preview("move_file", json!({"from": "a.txt", "to": "dir"}))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("like `dir/<name>`"), "{msg}");
}

#[test]
fn delete_file_previews_and_deletes() {
    let s = Scratch::new();
    s.write("gone.txt", "bye");
    let args = json!({"path": "gone.txt"});
    let p = s.preview("delete_file", args.clone()).unwrap();
    assert_eq!(p.changes[0].kind, ChangeKind::Delete);
    assert_eq!(
        p.changes[0].seen.sha256.as_deref(),
        Some(sha256_bytes(b"bye").as_str())
    );
    s.run("delete_file", args, &p).unwrap();
    assert!(!s.path("gone.txt").exists());
    let err = s.preview("delete_file", json!({"path": "gone.txt"})).unwrap_err();
    assert!(matches!(err, ToolError::NotFound { .. }));
    std::fs::create_dir(s.path("d")).unwrap();
    let msg = s
        .preview("delete_file", json!({"path": "d"}))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("delete_file removes files only"), "{msg}");
}

#[test]
fn text_tools_refuse_binary_files() {
    let s = Scratch::new();
    s.write("nul.bin", b"abc\x00def");
    s.write("latin1.txt", b"caf\xe9\n");
    for path in ["nul.bin", "latin1.txt"] {
        let err = s
            .preview(
                "edit_file",
                json!({"path": path, "old_string": "a", "new_string": "b"}),
            )
            .unwrap_err();
        assert!(matches!(err, ToolError::Binary { .. }), "{err}");
        assert!(err.to_string().contains("is a binary file"), "{err}");
        let err = s
            .preview(
                "multi_edit",
                json!({"path": path, "edits": [{"old_string": "a", "new_string": "b"}]}),
            )
            .unwrap_err();
        assert!(err.to_string().contains("is a binary file"), "{err}");
        let err = s.call("read_file", json!({"path": path})).unwrap_err();
        assert!(matches!(err, ToolError::Binary { .. }), "{err}");
    }
    assert_eq!(s.read("nul.bin"), b"abc\x00def");
}

#[test]
fn empty_files_round_trip() {
    let s = Scratch::new();
    s.call("write_file", json!({"path": "e.txt", "content": ""}))
        .unwrap();
    assert_eq!(s.read("e.txt"), b"");
    let out = s.call("read_file", json!({"path": "e.txt"})).unwrap();
    assert_eq!(out.content, "`e.txt` is empty.");
}
