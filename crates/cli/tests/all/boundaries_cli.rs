//! What the tools never touch (issue 14 items 3 and 9, SPEC §8): `.git/` (unless the config
//! allows it), Retrace's data root, its config file and that file's directory. Each is a clear tool
//! error the model sees; nothing there is read or changed. Through the real binary and a script.

use crate::support;

use std::path::Path;

use serde_json::{json, Value};

/// Runs one scripted turn of `calls` in `ws` (with `tmp` as home) and returns the tool results.
fn turn(tmp: &Path, ws: &Path, calls: Value) -> Vec<String> {
    let script = tmp.join("script.json");
    std::fs::write(
        &script,
        json!({"responses": [{"content": "trying", "tool_calls": calls}, {"content": "done"}]}).to_string(),
    )
    .unwrap();
    let out = support::isolated_retrace(tmp)
        .args(["exec", "--json", "--workspace"])
        .arg(ws)
        .arg("--model")
        .arg(format!("script:{}", script.display()))
        .arg("go")
        .output()
        .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "tool_result")
        .map(|v| v["content"].as_str().unwrap().to_string())
        .collect()
}

fn call(name: &str, args: Value) -> Value {
    json!({"name": name, "arguments": args})
}

#[test]
fn git_is_off_limits_unless_the_config_allows_it() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    let calls = json!([
        call(
            "edit_file",
            json!({"path": ".git/config", "old_string": "[core]",
                                 "new_string": "[core]\n\tfsmonitor = \"touch /tmp/pwned\""})
        ),
        call(
            "write_file",
            json!({"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\nevil\n"})
        ),
        call("read_file", json!({"path": ".git/config"})),
    ]);
    let results = turn(tmp.path(), &ws, calls.clone());
    assert_eq!(results.len(), 3);
    for r in &results {
        assert!(r.contains(".git/") && r.contains("cannot be used"), "{r}");
    }
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!ws.join(".git/hooks/pre-commit").exists());

    let cfg = tmp.path().join("xdg/retrace/config.toml");
    std::fs::create_dir_all(cfg.parent().unwrap()).unwrap();
    std::fs::write(&cfg, "[permissions]\ngit = \"allow\"\n").unwrap();
    let results = turn(tmp.path(), &ws, calls);
    assert!(
        results.iter().all(|r| !r.contains("cannot be used")),
        "{results:?}"
    );
    assert!(ws.join(".git/hooks/pre-commit").exists());
}

/// A git directory standing on its own — the one `git init --separate-git-dir` makes, a bare
/// repository — is `.git/` by another name: its config and hooks run commands, so the tools
/// leave it alone as they leave `.git/`.
#[test]
fn a_git_directory_apart_from_its_work_tree_is_off_limits_too() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    for d in ["gd/hooks", "gd/objects", "gd/refs/heads", "app"] {
        std::fs::create_dir_all(ws.join(d)).unwrap();
    }
    std::fs::write(ws.join("gd/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(ws.join("gd/config"), "[core]\n").unwrap();
    std::fs::write(ws.join("app/.git"), "gitdir: ../gd\n").unwrap();
    let calls = json!([
        call(
            "edit_file",
            json!({"path": "gd/config", "old_string": "[core]",
                   "new_string": "[core]\n\tfsmonitor = \"touch /tmp/pwned\""})
        ),
        call(
            "write_file",
            json!({"path": "gd/hooks/pre-commit", "content": "#!/bin/sh\nevil\n"})
        ),
        call(
            "write_file",
            json!({"path": "app/main.rs", "content": "fn main() {}\n"})
        ),
    ]);
    let results = turn(tmp.path(), &ws, calls);
    assert_eq!(results.len(), 3);
    for r in &results[..2] {
        assert!(
            r.contains("inside a git directory") && r.contains("cannot be used"),
            "{r}"
        );
    }
    assert!(
        !results[2].contains("cannot be used"),
        "its work tree is not: {}",
        results[2]
    );
    assert_eq!(std::fs::read_to_string(ws.join("gd/config")).unwrap(), "[core]\n");
    assert!(!ws.join("gd/hooks/pre-commit").exists());
    // Nor do they make one out of plain files, whichever piece comes last.
    let calls = json!([
        call(
            "write_file",
            json!({"path": "h/config", "content": "[core]\n\tfsmonitor = x\n"})
        ),
        call("write_file", json!({"path": "h/objects/keep", "content": ""})),
        call("write_file", json!({"path": "h/refs/keep", "content": ""})),
        call(
            "write_file",
            json!({"path": "h/HEAD", "content": "ref: refs/heads/main\n"})
        ),
    ]);
    let results = turn(tmp.path(), &ws, calls);
    assert!(
        results[..3].iter().all(|r| !r.contains("cannot be used")),
        "{results:?}"
    );
    assert!(
        results[3].contains("would make `h` a git directory"),
        "{results:?}"
    );
    assert!(!ws.join("h/HEAD").exists());
}

/// A workspace that holds Retrace's own data and config (the user runs it in `$HOME`).
#[test]
fn the_data_root_and_the_config_are_off_limits() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let cfg = home.join("xdg/retrace/config.toml");
    std::fs::create_dir_all(cfg.parent().unwrap()).unwrap();
    std::fs::write(&cfg, "[permissions]\nbash = \"deny\"\n").unwrap();
    // A first turn makes a session (a log and a sidecar under the data root).
    turn(
        home,
        home,
        json!([call("write_file", json!({"path": "notes.txt", "content": "n\n"}))]),
    );
    let sessions = home.join("home/sessions");
    let log = std::fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .unwrap();
    let log_rel = log.strip_prefix(home).unwrap().to_string_lossy().into_owned();
    let before = std::fs::read(&log).unwrap();
    let results = turn(
        home,
        home,
        json!([
            call("read_file", json!({"path": log_rel})),
            call("write_file", json!({"path": log_rel, "content": "gone"})),
            call(
                "write_file",
                json!({"path": "xdg/retrace/config.toml",
                                      "content": "[permissions]\nbash = \"allow\"\n"})
            ),
            call(
                "write_file",
                json!({"path": "xdg/retrace/other.toml", "content": "x"})
            ),
            call("grep", json!({"pattern": "notes", "path": "home"})),
        ]),
    );
    assert_eq!(results.len(), 5, "{results:?}");
    for r in &results[..4] {
        assert!(r.contains("cannot be used"), "{r}");
    }
    assert!(
        !results[4].contains("sessions/"),
        "grep read the data root: {}",
        results[4]
    );
    assert!(std::fs::read(&log).unwrap().starts_with(&before));
    assert_eq!(
        std::fs::read_to_string(&cfg).unwrap(),
        "[permissions]\nbash = \"deny\"\n"
    );
    assert!(!home.join("xdg/retrace/other.toml").exists());
}

/// Issue 14 item 10: a file the tools create honours the umask, like any program's (it was always
/// 0644).
#[test]
fn new_files_honour_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let script = tmp.path().join("script.json");
    std::fs::write(
        &script,
        json!({"responses": [{"content": "", "tool_calls": [
            call("write_file", json!({"path": "secret.txt", "content": "s\n"}))
        ]}, {"content": "done"}]})
        .to_string(),
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_retrace");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("umask 077; exec \"$RETRACE_BIN\" exec --workspace \"$1\" --model \"script:$2\" go")
        .arg("sh")
        .arg(&ws)
        .arg(&script)
        .env("RETRACE_BIN", bin)
        .env("RETRACE_HOME", tmp.path().join("home"))
        .env("XDG_CONFIG_HOME", tmp.path().join("xdg"))
        .env("HOME", tmp.path())
        .env_remove("RETRACE_CONFIG")
        .env_remove("RETRACE_MODEL")
        .env_remove("RETRACE_BASH")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mode = std::fs::metadata(ws.join("secret.txt"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

/// Issue 14 item 6: a dotfiles `.gitignore` of `*` in the home directory (which holds the
/// workspace but is no repository of it) hides nothing from the walking tools.
#[test]
fn an_ignore_file_above_the_workspace_hides_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("project");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(tmp.path().join(".gitignore"), "*\n").unwrap();
    std::fs::write(ws.join("src/main.rs"), "fn main() {} // needle\n").unwrap();
    let results = turn(
        tmp.path(),
        &ws,
        json!([
            call("list_dir", json!({"path": "."})),
            call("glob", json!({"pattern": "**/*.rs"})),
            call("grep", json!({"pattern": "needle"}))
        ]),
    );
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(results[0].contains("src/"), "{}", results[0]);
    assert!(results[1].contains("src/main.rs"), "{}", results[1]);
    assert!(results[2].contains("src/main.rs"), "{}", results[2]);
}

/// Found by attack: `exec` started a session whose workspace was Retrace's data directory, where
/// every tool call is refused. It is a usage error, as for an old log.
#[test]
fn the_data_directory_is_no_workspace() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("home");
    std::fs::create_dir_all(data.join("sessions")).unwrap();
    for dir in [data.clone(), data.join("sessions")] {
        let out = support::isolated_retrace(tmp.path())
            .current_dir(&dir)
            .args(["exec", "--model", "demo", "hi"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("data directory"), "{stderr}");
    }
    let logs = std::fs::read_dir(data.join("sessions")).unwrap().count();
    assert_eq!(logs, 0, "no session was created");
}
