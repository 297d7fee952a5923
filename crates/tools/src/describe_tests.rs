use serde_json::json;

use super::*;

fn title(tool: &str, args: Value) -> (String, Option<String>) {
    let d = describe(tool, &args.to_string());
    assert_eq!(d.arguments, args);
    (d.title, d.target)
}

fn some(title: &str, target: &str) -> (String, Option<String>) {
    (title.to_string(), Some(target.to_string()))
}

fn none(title: &str) -> (String, Option<String>) {
    (title.to_string(), None)
}

#[test]
fn every_tool_has_a_title_and_target() {
    let edit = json!({"path": "src/main.rs", "old_string": "a", "new_string": "b"});
    assert_eq!(title("edit_file", edit), some("Edit src/main.rs", "src/main.rs"));
    let multi = json!({"path": "src/main.rs", "edits": [{}, {}]});
    assert_eq!(
        title("multi_edit", multi),
        some("Edit src/main.rs (2 edits)", "src/main.rs")
    );
    let multi = json!({"path": "src/main.rs", "edits": [{}]});
    assert_eq!(
        title("multi_edit", multi),
        some("Edit src/main.rs", "src/main.rs")
    );
    let write = json!({"path": "src/x.rs", "content": ""});
    assert_eq!(title("write_file", write), some("Write src/x.rs", "src/x.rs"));
    assert_eq!(
        title("delete_file", json!({"path": "a.txt"})),
        some("Delete a.txt", "a.txt")
    );
    let mv = json!({"from": "a.txt", "to": "b/a.txt"});
    assert_eq!(title("move_file", mv), some("Move a.txt → b/a.txt", "b/a.txt"));
    let run = json!({"command": "cargo test", "timeout_ms": 5});
    assert_eq!(title("bash", run), some("Run cargo test", "cargo test"));
    assert_eq!(
        title("read_file", json!({"path": "src/x.rs"})),
        some("Read src/x.rs", "src/x.rs")
    );
    assert_eq!(title("list_dir", json!({"path": "src"})), some("List src", "src"));
    assert_eq!(title("list_dir", json!({})), some("List .", "."));
    assert_eq!(
        title("grep", json!({"pattern": "fn main"})),
        none("Search `fn main`")
    );
    let grep = json!({"pattern": "x", "path": "src"});
    assert_eq!(title("grep", grep), some("Search `x` in src", "src"));
    assert_eq!(title("glob", json!({"pattern": "*.rs"})), none("Find `*.rs`"));
}

#[test]
fn missing_or_mistyped_fields_give_a_plain_title() {
    assert_eq!(title("edit_file", json!({"path": 3})), none("Edit a file"));
    assert_eq!(title("write_file", json!({})), none("Write a file"));
    assert_eq!(title("delete_file", json!({"path": ""})), none("Delete a file"));
    assert_eq!(
        title("move_file", json!({"to": "b"})),
        some("Move a file to b", "b")
    );
    assert_eq!(title("move_file", json!({"from": "a"})), none("Move a"));
    assert_eq!(title("bash", json!({"command": "  "})), none("Run a command"));
    assert_eq!(title("read_file", json!(null)), none("Read a file"));
    assert_eq!(title("grep", json!({})), none("Search files"));
    assert_eq!(title("glob", json!({})), none("Find files"));
}

#[test]
fn unknown_tools_and_bad_json_get_the_tool_name() {
    assert_eq!(title("frobnicate", json!({"path": "a"})), none("frobnicate"));
    let d = describe("edit_file", "{\"path\": \"a");
    assert_eq!(d.title, "edit_file");
    assert_eq!(d.target, None);
    assert_eq!(d.arguments, json!("{\"path\": \"a"));
    assert_eq!(describe("read_file", "[1]").title, "read_file");
}

#[test]
fn arguments_as_the_tools_read_them() {
    let d = describe("read_file", "  ");
    assert_eq!(d.arguments, json!({}));
    assert_eq!(d.title, "Read a file");
    let twice = serde_json::to_string(&json!({"path": "a"}).to_string()).unwrap();
    let d = describe("read_file", &twice);
    assert_eq!(d.arguments, json!({"path": "a"}));
    assert_eq!(d.title, "Read a");
}

#[test]
fn commands_are_one_short_line() {
    let d = describe("bash", &json!({"command": "cd x\ncargo test"}).to_string());
    assert_eq!(d.title, "Run cd x …");
    assert_eq!(d.target.as_deref(), Some("cd x …"));
    let long = format!("echo {}", "y".repeat(200));
    let d = describe("bash", &json!({ "command": long }).to_string());
    assert_eq!(
        d.target.as_deref().map(|t| t.chars().count()),
        Some(SHOWN_CHARS + 1)
    );
    assert!(d.title.ends_with('…'), "{}", d.title);
    assert_eq!(one_line("\n  \n  ls -l  \n", 80), "ls -l");
    assert_eq!(one_line("", 80), "");
    assert_eq!(one_line("abcdef", 3), "abc…");
}
