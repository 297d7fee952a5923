//! Read tools: line numbers and windows, `.gitignore` with and without a git repository, `.git/`
//! never shown, and the registry the model sees.

use std::fs;

use serde_json::json;

use crate::Scratch;

/// A workspace with ignored and tracked files; `git` adds a `.git` directory.
fn project(git: bool) -> Scratch {
    let s = Scratch::new();
    if git {
        s.write(".git/HEAD", "ref: refs/heads/main\n");
        s.write(".git/config", "needle\n");
    }
    s.write(".gitignore", "target/\n*.log\n");
    s.write("src/main.rs", "fn main() {\n    let needle = 1;\n}\n");
    s.write("src/lib.rs", "pub fn f() {}\n");
    s.write("src/nested/.gitignore", "generated.rs\n");
    s.write("src/nested/generated.rs", "needle\n");
    s.write("src/nested/kept.rs", "needle\n");
    s.write("target/debug/out.rs", "needle\n");
    s.write("build.log", "needle\n");
    s.write("README.md", "needle in readme\n");
    s.write("data.bin", b"needle\x00\x01");
    s
}

#[test]
fn read_file_numbers_lines_and_windows() {
    let s = Scratch::new();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    s.write("ten.txt", &text);
    let out = s.call("read_file", json!({"path": "ten.txt"})).unwrap();
    assert!(
        out.content.starts_with("     1\tline 1\n     2\tline 2\n"),
        "{}",
        out.content
    );
    assert!(out.content.ends_with("    10\tline 10\n"), "{}", out.content);
    let out = s
        .call("read_file", json!({"path": "ten.txt", "offset": 4, "limit": 3}))
        .unwrap();
    assert_eq!(
        out.content,
        "     4\tline 4\n     5\tline 5\n     6\tline 6\n[lines 4-6 of 10 (limit reached); call read_file with offset=7 to read more]\n"
    );
    assert!(out.changed.is_empty());
    let err = s
        .call("read_file", json!({"path": "ten.txt", "offset": 11}))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("past the end of `ten.txt`, which has 10 lines"),
        "{err}"
    );
    let err = s
        .call("read_file", json!({"path": "ten.txt", "limit": 0}))
        .unwrap_err();
    assert!(err.to_string().contains("`limit` must be at least 1"), "{err}");
    let err = s.call("read_file", json!({"path": "src"})).unwrap_err();
    assert!(err.to_string().starts_with("file not found: `src`"), "{err}");
    fs::create_dir(s.path("src")).unwrap();
    let err = s.call("read_file", json!({"path": "src"})).unwrap_err();
    assert!(err.to_string().contains("use list_dir"), "{err}");
}

#[test]
fn list_dir_honours_gitignore_with_and_without_git() {
    for git in [false, true] {
        let s = project(git);
        let out = s.call("list_dir", json!({"path": "."})).unwrap();
        let lines: Vec<&str> = out.content.lines().collect();
        assert_eq!(
            lines,
            vec![
                ".gitignore",
                "README.md",
                "data.bin",
                "src/",
                "[2 entries ignored by .gitignore not shown]"
            ],
            "git={git}"
        );
        let out = s.call("list_dir", json!({"path": "src/nested"})).unwrap();
        assert_eq!(
            out.content,
            "src/nested/.gitignore\nsrc/nested/kept.rs\n[1 entries ignored by .gitignore not shown]",
            "git={git}"
        );
    }
}

#[test]
fn list_dir_errors() {
    let s = project(false);
    let err = s.call("list_dir", json!({"path": "README.md"})).unwrap_err();
    assert!(err.to_string().contains("is not a directory"), "{err}");
    let err = s.call("list_dir", json!({"path": "nope"})).unwrap_err();
    assert!(err.to_string().starts_with("file not found"), "{err}");
}

#[test]
fn glob_honours_gitignore_with_and_without_git() {
    for git in [false, true] {
        let s = project(git);
        let out = s.call("glob", json!({"pattern": "**/*.rs"})).unwrap();
        assert_eq!(
            out.content, "src/lib.rs\nsrc/main.rs\nsrc/nested/kept.rs",
            "git={git}"
        );
        let out = s.call("glob", json!({"pattern": "src/*.rs"})).unwrap();
        assert_eq!(out.content, "src/lib.rs\nsrc/main.rs");
        let out = s.call("glob", json!({"pattern": "**/*"})).unwrap();
        assert!(!out.content.contains(".git/"), "{}", out.content);
        let out = s.call("glob", json!({"pattern": "*.rs"})).unwrap();
        assert!(out.content.contains("use `**/*.rs`"), "{}", out.content);
    }
}

#[test]
fn glob_refuses_patterns_outside() {
    let s = project(false);
    let err = s.call("glob", json!({"pattern": "../**"})).unwrap_err();
    assert!(err.to_string().contains("must not contain `..`"), "{err}");
    let err = s.call("glob", json!({"pattern": "/etc/*"})).unwrap_err();
    assert!(
        err.to_string().contains("relative to the workspace root"),
        "{err}"
    );
    let err = s.call("glob", json!({"pattern": "src/[a"})).unwrap_err();
    assert!(err.to_string().contains("not a valid glob"), "{err}");
}

#[test]
fn grep_honours_gitignore_and_skips_binaries() {
    for git in [false, true] {
        let s = project(git);
        let out = s.call("grep", json!({"pattern": "needle"})).unwrap();
        assert_eq!(
            out.content,
            "README.md:1:needle in readme\n\
             src/main.rs:2:    let needle = 1;\n\
             src/nested/kept.rs:1:needle\n\
             [3 matches in 3 files]\n\
             [1 binary or oversized files skipped]",
            "git={git}"
        );
        let out = s
            .call("grep", json!({"pattern": "(?i)NEEDLE", "path": "src"}))
            .unwrap();
        assert_eq!(
            out.content,
            "src/main.rs:2:    let needle = 1;\nsrc/nested/kept.rs:1:needle\n[2 matches in 2 files]"
        );
        let out = s.call("grep", json!({"pattern": "absent"})).unwrap();
        assert_eq!(
            out.content,
            "No matches for `absent` in `.`.\n[1 binary or oversized files skipped]"
        );
    }
}

#[test]
fn grep_errors_and_caps() {
    let s = project(false);
    let err = s.call("grep", json!({"pattern": "("})).unwrap_err();
    assert!(
        err.to_string().contains("not a valid regular expression"),
        "{err}"
    );
    let out = s
        .call("grep", json!({"pattern": "n", "path": "data.bin"}))
        .unwrap();
    assert!(out.content.contains("binary"), "{}", out.content);
    let many: String = (0..5000).map(|i| format!("hit {i}\n")).collect();
    s.write("many.txt", many);
    let out = s
        .call("grep", json!({"pattern": "hit", "path": "many.txt"}))
        .unwrap();
    assert!(out.content.len() < 31_000, "{}", out.content.len());
    assert!(
        out.content.contains("output capped at 30000 bytes"),
        "{}",
        &out.content[out.content.len() - 200..]
    );
}

#[test]
fn registry_offers_every_tool_with_a_schema() {
    let s = Scratch::new();
    let names: Vec<String> = s.reg.specs().into_iter().map(|t| t.name).collect();
    assert_eq!(
        names,
        [
            "read_file",
            "list_dir",
            "glob",
            "grep",
            "write_file",
            "edit_file",
            "multi_edit",
            "move_file",
            "delete_file",
            "bash"
        ]
    );
    for spec in s.reg.specs() {
        assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
        assert!(spec.parameters["required"].is_array(), "{}", spec.name);
        assert!(!spec.description.is_empty());
        let tool = s.reg.get(&spec.name).unwrap();
        let read_only = ["read_file", "list_dir", "glob", "grep"].contains(&spec.name.as_str());
        assert_eq!(tool.read_only(), read_only, "{}", spec.name);
        if read_only {
            let p = tool
                .preview(&s.ws, &json!({"path": ".", "pattern": "x"}))
                .unwrap();
            assert!(p.changes.is_empty() && p.gaps.is_empty() && p.shell_command.is_none());
        }
    }
    assert!(s.reg.get("nope").is_none());
    assert_eq!(s.reg.names().len(), 10);
    let json = serde_json::to_value(s.reg.specs()).unwrap();
    assert_eq!(json[0]["name"], "read_file");
}

/// A FIFO is refused at once by every tool that reads, never waited on (the test would hang).
#[test]
fn a_fifo_never_blocks_a_tool() {
    let s = project(false);
    let made = std::process::Command::new("mkfifo")
        .arg(s.path("pipe"))
        .status()
        .unwrap();
    assert!(made.success());
    let err = s.call("read_file", json!({"path": "pipe"})).unwrap_err();
    assert!(err.to_string().contains("pipe"), "{err}");
    let err = s
        .call(
            "edit_file",
            json!({"path": "pipe", "old_string": "a", "new_string": "b"}),
        )
        .unwrap_err();
    assert!(err.to_string().contains("pipe"), "{err}");
    let out = s.call("grep", json!({"pattern": "needle"})).unwrap();
    assert!(out.content.contains("src/main.rs"), "{}", out.content);
}

/// Found by attack: a FIFO `.gitignore` (or `.ignore`, or a nested repository's
/// `.git/info/exclude`) hung list_dir, glob and grep, which read ignore files with a plain open; a
/// `.gitignore` symlinked to `/proc/self/pagemap` made them read without end. An ignore file that
/// is not a regular file, or is a symlink, is not read (as git does not follow one); nothing waits.
#[test]
fn an_ignore_file_that_is_no_regular_file_is_not_read() {
    let fifo = |p: std::path::PathBuf| {
        let made = std::process::Command::new("mkfifo").arg(p).status().unwrap();
        assert!(made.success());
    };
    let s = project(false);
    fifo(s.path("src/nested/.ignore"));
    let out = s.call("grep", json!({"pattern": "needle"})).unwrap();
    assert!(out.content.contains("src/main.rs"), "{}", out.content);
    // The directory is entered, its regular `.gitignore` still applies.
    assert!(out.content.contains("src/nested/kept.rs"), "{}", out.content);
    assert!(!out.content.contains("generated.rs"), "{}", out.content);
    // A nested repository whose exclude file is a FIFO.
    s.write("vendor/lib/.git/HEAD", "ref: refs/heads/main\n");
    fs::create_dir_all(s.path("vendor/lib/.git/info")).unwrap();
    fifo(s.path("vendor/lib/.git/info/exclude"));
    s.write("vendor/lib/code.rs", "needle\n");
    let out = s.call("glob", json!({"pattern": "**/*.rs"})).unwrap();
    assert!(out.content.contains("vendor/lib/code.rs"), "{}", out.content);
    // The root's own: a FIFO, then a symlink to an endless file.
    fs::remove_file(s.path(".gitignore")).unwrap();
    fifo(s.path(".gitignore"));
    let out = s.call("list_dir", json!({"path": "."})).unwrap();
    assert!(out.content.contains("build.log"), "{}", out.content);
    fs::remove_file(s.path(".gitignore")).unwrap();
    std::os::unix::fs::symlink("/proc/self/pagemap", s.path(".gitignore")).unwrap();
    for (tool, args) in [
        ("list_dir", json!({"path": "."})),
        ("glob", json!({"pattern": "**/*.rs"})),
        ("grep", json!({"pattern": "needle"})),
    ] {
        let out = s.call(tool, args).unwrap();
        assert!(!out.content.is_empty(), "{tool}");
    }
    // A symlink to a real ignore file is not followed either.
    fs::write(s.outside("rules"), "*.rs\n").unwrap();
    fs::remove_file(s.path(".gitignore")).unwrap();
    std::os::unix::fs::symlink(s.outside("rules"), s.path(".gitignore")).unwrap();
    let out = s.call("glob", json!({"pattern": "**/*.rs"})).unwrap();
    assert!(out.content.contains("src/main.rs"), "{}", out.content);
}

/// Found by attack: `*.log` above the walked directory overrode `!keep.log` below it. The deepest
/// directory with a say decides, from whichever directory the walk starts.
#[test]
fn a_deeper_negation_wins_whatever_the_walk_starts_from() {
    let s = Scratch::new();
    s.write(".gitignore", "*.log\n");
    s.write("a/.gitignore", "!keep.log\n");
    s.write("a/keep.log", "needle\n");
    s.write("a/drop.log", "needle\n");
    let out = s.call("list_dir", json!({"path": "a"})).unwrap().content;
    assert!(out.contains("a/keep.log") && !out.contains("drop.log"), "{out}");
    let out = s
        .call("grep", json!({"pattern": "needle", "path": "a"}))
        .unwrap()
        .content;
    assert!(out.contains("a/keep.log") && !out.contains("drop.log"), "{out}");
    let out = s.call("glob", json!({"pattern": "**/*.log"})).unwrap().content;
    assert!(out.contains("a/keep.log") && !out.contains("drop.log"), "{out}");
}

/// Found by attack: an empty `.git` directory (or one of another user) above the workspace made
/// its parent's `*` hide everything. Only a real repository of the workspace's owner counts.
#[test]
fn only_a_real_repository_above_the_workspace_sets_the_boundary() {
    let s = Scratch::new();
    fs::write(s.outside(".gitignore"), "*\n").unwrap();
    fs::create_dir(s.outside(".git")).unwrap();
    s.write("src/main.rs", "needle\n");
    let out = s.call("glob", json!({"pattern": "**/*.rs"})).unwrap().content;
    assert!(out.contains("src/main.rs"), "{out}");
    fs::write(s.outside(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let out = s.call("glob", json!({"pattern": "**/*.rs"})).unwrap().content;
    assert!(
        !out.contains("src/main.rs"),
        "a real repository's rules apply: {out}"
    );
}

/// What the three walking tools show of the workspace: `list_dir .`, `glob **/*` and the files
/// `grep` finds "needle" in.
fn seen(s: &Scratch) -> (String, String, String) {
    let list = s.call("list_dir", json!({"path": "."})).unwrap().content;
    let glob = s.call("glob", json!({"pattern": "**/*"})).unwrap().content;
    let grep = s.call("grep", json!({"pattern": "needle"})).unwrap().content;
    (list, glob, grep)
}

/// Found by a daily user: a dotfiles `.gitignore` of `*` in the home directory hid the whole
/// project from `list_dir`, `glob` and `grep`. Ignore files above the workspace apply only when
/// the workspace lies inside the same git repository, and then only from its top down.
#[test]
fn ignore_files_above_the_workspace_apply_only_within_its_git_repository() {
    // Not a repository anywhere: the parent's `*` (and `.ignore`) do not apply.
    let s = Scratch::new();
    fs::write(s.outside(".gitignore"), "*\n").unwrap();
    fs::write(s.outside(".ignore"), "*.rs\n").unwrap();
    s.write("src/main.rs", "needle\n");
    s.write("notes.log", "needle\n");
    let (list, glob, grep) = seen(&s);
    assert!(list.contains("src/") && list.contains("notes.log"), "{list}");
    assert!(glob.contains("src/main.rs"), "{glob}");
    assert!(
        grep.contains("src/main.rs") && grep.contains("notes.log"),
        "{grep}"
    );

    // The parent is a repository and the workspace its own: the parent's rules do not apply.
    fs::create_dir(s.outside(".git")).unwrap();
    fs::write(s.outside(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    s.write(".git/HEAD", "ref: refs/heads/main\n");
    let (list, _, grep) = seen(&s);
    assert!(list.contains("src/"), "{list}");
    assert!(grep.contains("src/main.rs"), "{grep}");

    // The workspace is a directory inside the parent's repository: its rules apply, from its top
    // (anchored patterns there are relative to the top), and so does its `.git/info/exclude`.
    fs::remove_dir_all(s.path(".git")).unwrap();
    fs::write(s.outside(".gitignore"), "*.log\n/ws/src/gen/\n").unwrap();
    fs::remove_file(s.outside(".ignore")).unwrap();
    fs::create_dir_all(s.outside(".git/info")).unwrap();
    fs::write(s.outside(".git/info/exclude"), "secret.txt\n").unwrap();
    s.write("src/gen/out.rs", "needle\n");
    s.write("secret.txt", "needle\n");
    let (list, glob, grep) = seen(&s);
    assert!(list.contains("src/") && !list.contains("notes.log"), "{list}");
    assert!(!list.contains("secret.txt"), "{list}");
    assert!(glob.contains("src/main.rs") && !glob.contains("gen"), "{glob}");
    assert!(
        !grep.contains("notes.log") && !grep.contains("gen/out.rs"),
        "{grep}"
    );
    // A walk that starts in a subdirectory sees the same rules.
    let out = s.call("list_dir", json!({"path": "src"})).unwrap().content;
    assert_eq!(out, "src/main.rs\n[1 entries ignored by .gitignore not shown]");
}

/// The workspace's own ignore files apply to a walk that starts below them, anchored at their
/// directory.
#[test]
fn the_workspace_ignore_files_apply_to_a_walk_of_a_subdirectory() {
    let s = Scratch::new();
    s.write(".gitignore", "/src/gen/\n*.tmp\n");
    s.write("src/gen/out.rs", "needle\n");
    s.write("src/a.tmp", "needle\n");
    s.write("src/lib.rs", "needle\n");
    let out = s.call("list_dir", json!({"path": "src"})).unwrap().content;
    assert_eq!(out, "src/lib.rs\n[2 entries ignored by .gitignore not shown]");
    let out = s
        .call("grep", json!({"pattern": "needle", "path": "src"}))
        .unwrap()
        .content;
    assert!(
        out.contains("src/lib.rs") && !out.contains("gen") && !out.contains("a.tmp"),
        "{out}"
    );
}
