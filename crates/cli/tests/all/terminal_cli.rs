//! Terminal output is not a channel for the model or the repository (issue 14 item 10): names and
//! text printed by the human (non-JSON) forms of every command escape control characters, so an
//! agent-made file name cannot fake a plan line and a prompt or a reply cannot move the cursor,
//! recolour or retitle the terminal. Through the real binary and a script.

use crate::support;

use std::process::Output;

use serde_json::{json, Value};

const ESC_TITLE: &str = "\u{1b}]0;pwned\u{7}";
const ESC_CLEAR: &str = "\u{1b}[2J";
const FAKE_NAME: &str = "evil\n  unchanged x";

fn run(tmp: &std::path::Path, args: &[&str]) -> Output {
    support::isolated_retrace(tmp)
        .current_dir(tmp.join("ws"))
        .args(args)
        .output()
        .unwrap()
}

fn assert_clean(what: &str, out: &Output) {
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\r'),
            "{what} {stream} carries a control character: {text:?}"
        );
        assert!(
            !text.lines().any(|l| l.starts_with("  unchanged x")),
            "{what} {stream} printed a faked line: {text}"
        );
    }
}

#[test]
fn human_output_escapes_control_characters_everywhere() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("ws")).unwrap();
    let script = tmp.path().join("script.json");
    std::fs::write(
        &script,
        json!({"responses": [
            {"content": format!("done {ESC_CLEAR} really"), "tool_calls": [
                {"name": "write_file", "arguments": {"path": FAKE_NAME, "content": format!("{ESC_TITLE}\n")}},
                {"name": format!("tool{ESC_CLEAR}"), "arguments": {}},
                {"name": "bash", "arguments": {"command": format!("echo {ESC_TITLE}")}}
            ]},
            {"content": format!("finished{ESC_TITLE}")}
        ]})
        .to_string(),
    )
    .unwrap();
    let model = format!("script:{}", script.display());
    let prompt = format!("hello {ESC_TITLE}\rworld");
    let out = run(tmp.path(), &["exec", "--model", &model, &prompt]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_clean("exec", &out);
    assert!(tmp.path().join("ws").join(FAKE_NAME).exists());

    let list = run(tmp.path(), &["sessions", "--json"]);
    let sessions: Value = serde_json::from_slice(&list.stdout).unwrap();
    let id = sessions[0]["id"].as_str().unwrap().to_string();
    let commands: Vec<Vec<&str>> = vec![
        vec!["sessions"],
        vec!["checkpoints", "--session", &id],
        vec!["transcript", "--session", &id],
        vec!["heads", "--session", &id],
        vec!["fsck", "--session", &id],
        vec![
            "rewind",
            "--session",
            &id,
            "--turn",
            "0",
            "--scope",
            "code",
            "--dry-run",
        ],
        vec![
            "rewind",
            "--session",
            &id,
            "--turn",
            "0",
            "--scope",
            "both",
            "--yes",
        ],
        vec!["undo", "--session", &id],
        vec!["redo", "--session", &id],
    ];
    for args in &commands {
        let out = run(tmp.path(), args);
        assert!(
            out.status.code().is_some_and(|c| c <= 4),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_clean(&args.join(" "), &out);
    }
    // The names are still shown, escaped, so the user can tell what they are.
    let out = run(
        tmp.path(),
        &[
            "rewind",
            "--session",
            &id,
            "--turn",
            "0",
            "--scope",
            "code",
            "--dry-run",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("evil\\n  unchanged x"), "{text}");
    // An error naming a hostile argument is escaped too.
    let out = run(
        tmp.path(),
        &["switch", "--session", &id, &format!("head{ESC_CLEAR}")],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_clean("switch", &out);
}

/// Found by attack: a newline inside a single-line value (a file name in an error, a directory
/// name, a head name) started a line of its own, and bidirectional overrides passed as they are.
#[test]
fn single_line_values_cannot_start_a_line_or_reorder_text() {
    let tmp = tempfile::tempdir().unwrap();
    let odd = "ws\u{1b}]0;t\u{7}\nretrace: fake";
    std::fs::create_dir(tmp.path().join(odd)).unwrap();
    let out = support::isolated_retrace(tmp.path())
        .current_dir(tmp.path().join(odd))
        .arg("sessions")
        .output()
        .unwrap();
    assert_clean("sessions", &out);
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);

    std::fs::create_dir(tmp.path().join("ws")).unwrap();
    let name = "a\nretrace: undo complete, all files restored \u{202e}txt.exe";
    let script = tmp.path().join("script.json");
    std::fs::write(
        &script,
        json!({"responses": [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": name, "content": "1\n"}}]},
            {"content": "done"}
        ]})
        .to_string(),
    )
    .unwrap();
    let out = run(
        tmp.path(),
        &["exec", "--model", &format!("script:{}", script.display()), "go"],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_clean("exec", &out);
    std::fs::write(tmp.path().join("ws").join(name), "changed by hand\n").unwrap();
    let list = run(tmp.path(), &["sessions", "--json"]);
    let id = serde_json::from_slice::<Value>(&list.stdout).unwrap()[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    for args in [
        vec![
            "rewind",
            "--session",
            id.as_str(),
            "--turn",
            "0",
            "--scope",
            "code",
        ],
        vec!["revert", "--session", id.as_str(), name],
        vec!["switch", "--session", id.as_str(), name],
        vec!["fork", "--session", id.as_str(), "--turn", "0", "--name", name],
        vec!["heads", "--session", id.as_str()],
        vec!["config", "--model", name],
    ] {
        let out = run(tmp.path(), &args);
        assert_clean(&args[0..2].join(" "), &out);
        for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            let text = String::from_utf8_lossy(bytes);
            assert!(
                !text.lines().any(|l| l.starts_with("retrace: undo complete")) && !text.contains('\u{202e}'),
                "{args:?} {stream}: {text}"
            );
        }
    }
}

/// What an MCP server says (its stderr quoted in an error, the names and descriptions of its
/// tools) is printed escaped by `retrace mcp list` and `retrace config`.
#[test]
fn mcp_list_escapes_what_a_server_says() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("ws")).unwrap();
    let dir = tmp.path().join("xdg/retrace");
    std::fs::create_dir_all(&dir).unwrap();
    let script = format!(
        "printf '{}evil\\n  same   x\\n' >&2; exit 1",
        "\\033[2J\\033]0;pwned\\007"
    );
    std::fs::write(
        dir.join("config.toml"),
        format!(
            "[mcp_servers.liar]\ncommand = \"sh\"\nargs = [\"-c\", {}]\n",
            toml_string(&script)
        ),
    )
    .unwrap();
    let out = run(tmp.path(), &["mcp", "list"]);
    // Its only server failed: listed, and an error.
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("liar  failed"), "{text}");
    assert!(text.contains("evil"), "the stderr is quoted: {text}");
    assert_clean("mcp list", &out);
    assert_clean("config", &run(tmp.path(), &["config"]));
}

/// `s` as a TOML basic string.
fn toml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}
