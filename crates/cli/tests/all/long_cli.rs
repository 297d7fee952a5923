//! Long sessions through the real binary (SPEC §7 `compact`, `set_plan_mode`; §10
//! `context_window`, `compact_at`; §11 `retrace compact`, `exec --plan`), with the script model.

use crate::support;

use std::path::PathBuf;
use std::process::Output;

use serde_json::{json, Value};
use tempfile::TempDir;

struct Env {
    tmp: TempDir,
    ws: PathBuf,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        for d in ["ws", "home", "xdg"] {
            std::fs::create_dir(tmp.path().join(d)).unwrap();
        }
        let ws = std::fs::canonicalize(tmp.path().join("ws")).unwrap();
        Env { tmp, ws }
    }

    fn run(&self, args: &[&str]) -> Output {
        support::isolated_retrace(self.tmp.path())
            .args(args)
            .output()
            .unwrap()
    }

    fn config(&self, text: &str) {
        std::fs::create_dir_all(self.tmp.path().join("xdg/retrace")).unwrap();
        std::fs::write(self.tmp.path().join("xdg/retrace/config.toml"), text).unwrap();
    }

    /// A script file (SPEC §11.2) as a `--model` value.
    fn script(&self, name: &str, responses: Value) -> String {
        let path = self.tmp.path().join(format!("{name}.json"));
        std::fs::write(&path, json!({ "responses": responses }).to_string()).unwrap();
        format!("script:{}", path.display())
    }

    /// `exec --json` on a new session (or `--session ID`); every stdout line parsed.
    fn exec(&self, session: Option<&str>, model: &str, extra: &[&str], prompt: &str) -> (i32, Vec<Value>) {
        let ws = self.ws.display().to_string();
        let mut args = vec!["exec", "--json", "--model", model];
        match session {
            Some(id) => args.extend(["--session", id]),
            None => args.extend(["--workspace", ws.as_str()]),
        }
        args.extend_from_slice(extra);
        args.push(prompt);
        let out = self.run(&args);
        let events = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (out.status.code().unwrap(), events)
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.run(&all);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

fn result(events: &[Value]) -> &Value {
    let last = events.last().unwrap();
    assert_eq!(last["type"], "result");
    last
}

fn write_call(path: &str, content: &str) -> Value {
    json!({"name": "write_file", "arguments": {"path": path, "content": content}})
}

#[test]
fn compact_makes_a_selected_summary_head_and_keeps_the_original() {
    let env = Env::new();
    let m = env.script(
        "turns",
        json!([
            {"content": "w", "tool_calls": [write_call("a.txt", "A0\n")]}, {"content": "zero"},
            {"content": "w", "tool_calls": [write_call("a.txt", "A1\n")]}, {"content": "one"},
        ]),
    );
    let (code, events) = env.exec(None, &m, &[], "first");
    assert_eq!(code, 0);
    let id = result(&events)["session_id"].as_str().unwrap().to_string();

    // One turn: nothing to summarize before it; refused (exit 3), nothing written.
    let out = env.run(&["compact", "--session", &id, "--model", "demo"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to compact"));

    assert_eq!(env.exec(Some(&id), &m, &[], "second").0, 0);
    let summary = env.script("summary", json!([{"content": "SUMMARY OF THE FIRST TURN"}]));
    let made = env.json(&["compact", "--session", &id, "--model", &summary]);
    assert_eq!(made.as_object().unwrap().len(), 2, "{made}");
    assert_eq!(made["session_id"], id.as_str());
    let head = made["head_id"].as_str().unwrap();

    let heads = env.json(&["heads", "--session", &id]);
    let heads = heads.as_array().unwrap();
    let h = heads.iter().find(|h| h["id"] == head).unwrap();
    assert_eq!(h["kind"], "summary");
    assert_eq!(h["selected"], true);
    assert_eq!(h["parent_head"], "main");
    let main = heads.iter().find(|h| h["id"] == "main").unwrap();
    assert_eq!(main["turns"], 2, "the original head keeps every turn");

    let t = env.json(&["transcript", "--session", &id]);
    let users: Vec<&str> = t
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(users, ["SUMMARY OF THE FIRST TURN", "second"]);

    // A code rewind to before turn 0, folded by the compaction, restores the files of then.
    let r = env.json(&[
        "rewind",
        "--session",
        &id,
        "--turn",
        "0",
        "--scope",
        "code",
        "--yes",
    ]);
    assert_eq!(r["ok"], true, "{r}");
    assert!(!env.ws.join("a.txt").exists());
}

#[test]
fn exec_plan_refuses_writes_and_says_so_in_the_result() {
    let env = Env::new();
    let m = env.script(
        "plan",
        json!([
            {"content": "let me try", "tool_calls": [write_call("p.txt", "no\n")]},
            {"content": "Plan: write p.txt"},
        ]),
    );
    let (code, events) = env.exec(None, &m, &["--plan"], "plan it");
    assert_eq!(code, 0);
    assert!(!env.ws.join("p.txt").exists(), "nothing written in plan mode");
    let r = result(&events);
    assert_eq!(r["plan_mode"], true);
    assert!(events.iter().any(|e| e["type"] == "plan_mode" && e["on"] == true));
    let refused = events.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(refused["ok"], false);
    assert!(refused["content"].as_str().unwrap().contains("plan mode is on"));

    // Without --plan the next turn may write again.
    let id = r["session_id"].as_str().unwrap();
    let m = env.script(
        "act",
        json!([
            {"content": "doing it", "tool_calls": [write_call("p.txt", "yes\n")]},
            {"content": "done"},
        ]),
    );
    let (code, events) = env.exec(Some(id), &m, &[], "now do it");
    assert_eq!(code, 0);
    assert_eq!(result(&events)["plan_mode"], false);
    assert_eq!(std::fs::read(env.ws.join("p.txt")).unwrap(), b"yes\n");
}

#[test]
fn a_small_context_window_compacts_a_long_session_automatically() {
    let env = Env::new();
    // 20,000 tokens, compacted past 80 %: the script model reports no usage, so the size is
    // estimated (about 7,500 tokens per prompt below).
    env.config("[model]\ncontext_window = 20000\ncompact_at = 0.8\n");
    let m = env.script(
        "long",
        json!([
            {"content": "zero"},
            {"content": "SUMMARY: the user sent a long text."},
            {"content": "one"},
        ]),
    );
    let long = "x".repeat(30_000);
    let (code, events) = env.exec(None, &m, &[], &format!("first {long}"));
    assert_eq!(code, 0);
    assert!(!events.iter().any(|e| e["type"] == "compacted"));
    let id = result(&events)["session_id"].as_str().unwrap().to_string();
    let (code, events) = env.exec(Some(&id), &m, &[], &format!("second {long}"));
    assert_eq!(code, 0, "{events:?}");
    let c = events
        .iter()
        .find(|e| e["type"] == "compacted")
        .expect("compacted");
    assert_eq!(c["automatic"], true);
    assert!(c["after_tokens"].as_u64().unwrap() < c["before_tokens"].as_u64().unwrap());
    let r = result(&events);
    assert_eq!(
        r["head_id"], c["head_id"],
        "the result names the head the turn ended on"
    );
    assert_ne!(r["head_id"], "main");
}

#[test]
fn a_new_process_sizes_the_conversation_from_the_count_the_server_last_reported() {
    let env = Env::new();
    env.config("[model]\ncontext_window = 20000\ncompact_at = 0.8\n");
    // Turn 0: about 2,000 tokens by estimate, but the server counted 17,000 (a tokenizer that
    // counts more, or files the estimate cannot see): past the 16,000 at which it compacts.
    let first = env.script(
        "first",
        json!([{"content": "zero", "usage": {"prompt_tokens": 17000, "completion_tokens": 5}}]),
    );
    let (code, events) = env.exec(None, &first, &[], &format!("first {}", "x".repeat(6_000)));
    assert_eq!(code, 0, "{events:?}");
    assert!(!events.iter().any(|e| e["type"] == "compacted"));
    let id = result(&events)["session_id"].as_str().unwrap().to_string();
    // Another process: the count is in the log, so the next request is known to be too big and
    // the earlier turn is compacted before it is sent.
    let second = env.script(
        "second",
        json!([{"content": "SUMMARY: the user sent a long text."}, {"content": "one"}]),
    );
    let (code, events) = env.exec(Some(&id), &second, &[], "second");
    assert_eq!(code, 0, "{events:?}");
    let c = events
        .iter()
        .find(|e| e["type"] == "compacted")
        .unwrap_or_else(|| panic!("no compaction: {events:?}"));
    assert_eq!(c["automatic"], true);
    assert!(c["before_tokens"].as_u64().unwrap() >= 17000, "{c}");
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "assistant_delta")
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert!(text.contains("one"), "{events:?}");
}

#[test]
fn earlier_turns_that_hold_the_bulk_are_compacted_even_when_the_window_cuts_what_is_summarized() {
    let env = Env::new();
    env.config("[model]\ncontext_window = 20000\ncompact_at = 0.8\n");
    // Turn 0's answer alone is past the window: what the model is asked to summarize is cut to
    // fit, but the turns it folds are the bulk of the conversation, so compacting helps.
    let first = env.script("first", json!([{"content": "word ".repeat(20_000)}]));
    let (code, events) = env.exec(None, &first, &[], "write a lot");
    assert_eq!(code, 0, "{events:?}");
    let id = result(&events)["session_id"].as_str().unwrap().to_string();
    let second = env.script(
        "second",
        json!([{"content": "SUMMARY: a long text was written."}, {"content": "fine"}]),
    );
    let (code, events) = env.exec(Some(&id), &second, &[], "and now?");
    assert_eq!(code, 0, "{events:?}");
    let c = events
        .iter()
        .find(|e| e["type"] == "compacted")
        .unwrap_or_else(|| panic!("no compaction: {events:?}"));
    assert!(c["after_tokens"].as_u64().unwrap() < 16_000, "{c}");
}

#[test]
fn a_summary_that_is_not_shorter_than_what_it_replaces_is_not_kept() {
    let env = Env::new();
    env.config("[model]\ncontext_window = 20000\ncompact_at = 0.8\n");
    let first = env.script(
        "first",
        json!([{"content": "zero", "usage": {"prompt_tokens": 17000, "completion_tokens": 5}}]),
    );
    let (code, events) = env.exec(None, &first, &[], &format!("first {}", "x".repeat(6_000)));
    assert_eq!(code, 0, "{events:?}");
    let id = result(&events)["session_id"].as_str().unwrap().to_string();
    let heads = env.json(&["heads", "--session", &id]);
    let second = env.script(
        "second",
        json!([{"content": "S".repeat(100_000)}, {"content": "fine"}]),
    );
    let (code, events) = env.exec(Some(&id), &second, &[], "second");
    assert_eq!(code, 0, "{events:?}");
    assert!(!events.iter().any(|e| e["type"] == "compacted"), "{events:?}");
    assert_eq!(result(&events)["head_id"], "main");
    assert_eq!(
        env.json(&["heads", "--session", &id]).as_array().unwrap().len(),
        heads.as_array().unwrap().len(),
        "no new head"
    );
}

#[test]
fn compact_refuses_a_summary_longer_than_what_it_replaces() {
    let env = Env::new();
    let m = env.script("turns", json!([{"content": "zero"}, {"content": "one"}]));
    let (code, events) = env.exec(None, &m, &[], "first");
    assert_eq!(code, 0, "{events:?}");
    let id = result(&events)["session_id"].as_str().unwrap().to_string();
    let m = env.script("turns2", json!([{"content": "one"}]));
    let (code, _) = env.exec(Some(&id), &m, &[], "second");
    assert_eq!(code, 0);
    let heads = env.json(&["heads", "--session", &id]);
    let long = env.script("long", json!([{"content": "LONG ".repeat(20_000)}]));
    let out = env.run(&["compact", "--session", &id, "--model", &long, "--json"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["error"]["code"], "refused", "{doc}");
    assert_eq!(env.json(&["heads", "--session", &id]), heads, "no head was made");
}

#[test]
fn bad_context_settings_are_usage_errors_naming_the_key() {
    let env = Env::new();
    for (text, key) in [
        ("[model]\ncontext_window = 10\n", "context_window"),
        ("[model]\ncompact_at = 1.5\n", "compact_at"),
        ("[model]\ncompact_at = 0\n", "compact_at"),
    ] {
        env.config(text);
        let out = env.run(&["config"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text}: {stderr}");
        assert!(stderr.contains(key), "{text}: {stderr}");
    }
    env.config("[model]\ncontext_window = 32000\ncompact_at = 0.5\n");
    let shown = env.json(&["config"]);
    assert_eq!(shown["context"]["context_window"], 32000);
    assert_eq!(shown["context"]["compact_at"], 0.5);
}
