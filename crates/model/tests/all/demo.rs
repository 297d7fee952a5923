//! The demo model driven through whole turns against a small in-memory workspace that applies the
//! SPEC §8 edit tools strictly (exact-once matching, all-or-nothing multi_edit, no silent overwrites).

use std::collections::{BTreeMap, BTreeSet};

use retrace_model::{ChatMessage, ChatModel, ChatRequest, Delta, DemoModel, ToolCall, SUMMARY_PROMPT};
use serde_json::Value;

use crate::run;

#[derive(Default, Clone, Debug, PartialEq)]
struct Ws {
    files: BTreeMap<String, String>,
}

impl Ws {
    fn apply(&mut self, call: &ToolCall) -> Result<String, String> {
        let a: Value = serde_json::from_str(&call.arguments).map_err(|e| e.to_string())?;
        let s = |k: &str| a[k].as_str().map(str::to_string).ok_or(format!("missing {k}"));
        match call.name.as_str() {
            "read_file" => self.files.get(&s("path")?).cloned().ok_or("not found".into()),
            "list_dir" => {
                let dir = format!("{}/", s("path")?);
                let names: BTreeSet<String> = self
                    .files
                    .keys()
                    .filter_map(|k| k.strip_prefix(&dir))
                    .map(|rest| rest.split('/').next().unwrap_or(rest).to_string())
                    .collect();
                Ok(names.into_iter().collect::<Vec<_>>().join("\n"))
            }
            "write_file" => {
                self.files.insert(s("path")?, s("content")?);
                Ok("written".into())
            }
            "edit_file" => {
                let path = s("path")?;
                let text = self.files.get(&path).ok_or("not found")?;
                let new = edit(text, &s("old_string")?, &s("new_string")?)?;
                self.files.insert(path, new);
                Ok("edited".into())
            }
            "multi_edit" => {
                let path = s("path")?;
                let mut text = self.files.get(&path).ok_or("not found")?.clone();
                for e in a["edits"].as_array().ok_or("missing edits")? {
                    let old = e["old_string"].as_str().ok_or("missing old_string")?;
                    text = edit(&text, old, e["new_string"].as_str().ok_or("missing new_string")?)?;
                }
                self.files.insert(path, text);
                Ok("edited".into())
            }
            "move_file" => {
                let (from, to) = (s("from")?, s("to")?);
                if self.files.contains_key(&to) {
                    return Err("destination exists".into());
                }
                let text = self.files.remove(&from).ok_or("not found")?;
                self.files.insert(to, text);
                Ok("moved".into())
            }
            "delete_file" => self
                .files
                .remove(&s("path")?)
                .map(|_| "deleted".into())
                .ok_or("not found".into()),
            other => Err(format!("unknown tool {other}")),
        }
    }
}

fn edit(text: &str, old: &str, new: &str) -> Result<String, String> {
    match text.matches(old).count() {
        1 => Ok(text.replacen(old, new, 1)),
        0 => Err(format!("old_string {old:?} not found")),
        n => Err(format!("old_string matches {n} times")),
    }
}

/// One turn: the model and the tools take turns until the model answers with text.
struct Turn {
    calls: Vec<ToolCall>,
    failures: usize,
    text: String,
}

fn turn(ws: &mut Ws, convo: &mut Vec<ChatMessage>, prompt: &str) -> Turn {
    convo.push(ChatMessage::user(prompt));
    let mut out = Turn {
        calls: Vec::new(),
        failures: 0,
        text: String::new(),
    };
    for _ in 0..5 {
        let req = ChatRequest {
            messages: convo.clone(),
            tools: Vec::new(),
        };
        let response = DemoModel::respond(&req);
        convo.push(ChatMessage::assistant(
            response.content.clone(),
            response.tool_calls.clone(),
        ));
        if response.tool_calls.is_empty() {
            out.text = response.content;
            return out;
        }
        for call in response.tool_calls {
            let result = match ws.apply(&call) {
                Ok(text) => text,
                Err(e) => {
                    out.failures += 1;
                    format!("error: {e}")
                }
            };
            convo.push(ChatMessage::tool(call.id.clone(), result));
            out.calls.push(call);
        }
    }
    panic!("the demo model did not end the turn");
}

#[test]
fn five_turns_make_varied_edits_then_cycle() {
    let mut ws = Ws::default();
    let mut convo = Vec::new();
    let mut tools = BTreeSet::new();
    let mut states = Vec::new();
    for i in 1..=6 {
        let t = turn(&mut ws, &mut convo, &format!("prompt number {i}"));
        assert_eq!(t.failures, 0, "turn {i}: {:?}", t.calls);
        assert!(t.text.contains(&format!("\"prompt number {i}\"")), "{}", t.text);
        // The same words in every frontend: no keys of one of them.
        assert!(
            !t.text.contains("Esc") && !t.text.contains("/rewind"),
            "{}",
            t.text
        );
        tools.extend(t.calls.iter().map(|c| c.name.clone()));
        states.push(ws.clone());
    }
    let expected: BTreeSet<String> = [
        "write_file",
        "edit_file",
        "multi_edit",
        "move_file",
        "delete_file",
        "read_file",
        "list_dir",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(tools, expected);

    let keys = |w: &Ws| w.files.keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&states[0]), ["demo/notes.md", "demo/todo.txt"]);
    assert!(states[0].files["demo/notes.md"].contains("status: draft"));
    assert!(states[0].files["demo/notes.md"].contains("Requested: prompt number 1"));
    assert!(states[1].files["demo/notes.md"].contains("status: reviewed"));
    assert_eq!(keys(&states[2]), ["demo/done/todo.txt", "demo/notes.md"]);
    assert!(states[3].files["demo/notes.md"].starts_with("# Demo notes (final)\n\nstatus: final"));
    assert_eq!(
        keys(&states[3]),
        ["demo/done/todo.txt", "demo/notes.md", "demo/summary.md"]
    );
    assert_eq!(keys(&states[4]), ["demo/done/todo.txt", "demo/notes.md"]);
    // Turn 6 starts the cycle again: fresh notes and a new todo list beside the done one.
    assert_eq!(
        keys(&states[5]),
        ["demo/done/todo.txt", "demo/notes.md", "demo/todo.txt"]
    );
    assert!(states[5].files["demo/notes.md"].contains("status: draft"));
}

#[test]
fn the_same_conversation_gets_the_same_answers() {
    let play = || {
        let (mut ws, mut convo) = (Ws::default(), Vec::new());
        for i in 0..4 {
            turn(&mut ws, &mut convo, &format!("p{i}"));
        }
        (ws, convo)
    };
    assert_eq!(play(), play());
}

#[test]
fn after_a_code_only_rewind_failed_edits_are_recreated() {
    let mut ws = Ws::default();
    let mut convo = Vec::new();
    turn(&mut ws, &mut convo, "one");
    // The code is rewound to before turn 1; the conversation still has it.
    ws.files.clear();
    let t = turn(&mut ws, &mut convo, "two");
    assert_eq!(t.failures, 2, "read_file and edit_file fail on the missing notes");
    assert_eq!(t.calls.last().unwrap().name, "write_file");
    assert!(ws.files["demo/notes.md"].contains("status: reviewed"));
    assert!(
        t.text.contains("edit_file demo/notes.md failed")
            && t.text.contains("write_file demo/notes.md (recreating it) worked"),
        "{}",
        t.text
    );

    ws.files.clear();
    let t = turn(&mut ws, &mut convo, "three");
    assert_eq!(t.failures, 1, "move_file fails: the todo list is gone");
    assert_eq!(ws.files.keys().collect::<Vec<_>>(), ["demo/done/todo.txt"]);

    // A failed delete needs nothing recreated: the turn just ends.
    let mut convo: Vec<ChatMessage> = (0..4)
        .map(|i| ChatMessage::user(format!("earlier {i}")))
        .collect();
    let t = turn(&mut Ws::default(), &mut convo, "five");
    assert_eq!((t.failures, t.calls.len()), (1, 2), "{:?}", t.calls);
}

#[test]
fn a_summary_request_gets_a_summary_and_the_summary_counts_its_requests() {
    let mut ws = Ws::default();
    let mut convo = Vec::new();
    turn(&mut ws, &mut convo, "make notes\nwith detail");
    turn(&mut ws, &mut convo, "review them");
    convo.push(ChatMessage::user(SUMMARY_PROMPT));
    let req = ChatRequest {
        messages: convo,
        tools: Vec::new(),
    };
    let summary = DemoModel::respond(&req);
    assert!(summary.tool_calls.is_empty());
    assert!(
        summary.content.starts_with("Summary of 2 earlier requests"),
        "{}",
        summary.content
    );
    assert!(
        summary.content.contains("1. \"make notes\""),
        "{}",
        summary.content
    );
    assert!(
        summary.content.contains("2. \"review them\""),
        "{}",
        summary.content
    );

    // A head that starts with the summary continues with turn 3: the move.
    let mut convo = vec![ChatMessage::user(summary.content)];
    let t = turn(&mut ws, &mut convo, "next");
    assert_eq!(t.calls[0].name, "move_file");
}

#[tokio::test]
async fn through_the_trait_the_demo_streams_its_answer_as_deltas() {
    let mut model = DemoModel::new();
    let req = ChatRequest {
        messages: vec![ChatMessage::user("hello")],
        tools: Vec::new(),
    };
    let (result, deltas) = run(&mut model, &req).await;
    let response = result.unwrap();
    assert_eq!(response.tool_calls.len(), 2);
    assert_eq!(deltas[0], Delta::Content(response.content.clone()));
    assert!(matches!(&deltas[1], Delta::ToolCallStart { name, .. } if name == "write_file"));
}

#[tokio::test]
async fn in_plan_mode_the_demo_proposes_and_changes_nothing() {
    let mut m = DemoModel::new();
    let req = ChatRequest {
        messages: vec![ChatMessage::user("tidy the notes")],
        tools: vec![retrace_model::ToolSpec {
            name: "read_file".into(),
            description: "read".into(),
            parameters: serde_json::json!({"type": "object"}),
        }],
    };
    let mut sink = |_d: Delta| {};
    let r = m
        .complete(&req, &mut sink, &retrace_model::CancellationToken::new())
        .await
        .unwrap();
    assert!(r.tool_calls.is_empty(), "{r:?}");
    assert!(r.content.contains("plan mode is on"), "{}", r.content);
}

/// Found by a new user's trial: after two failed tools (✗ ✗) the demo said "deleted
/// demo/summary.md … I wrote them afresh", and "press Esc twice" in the browser. Its closing words
/// follow the tool results it got.
#[test]
fn the_closing_text_says_what_the_tool_results_say() {
    let req = |messages: Vec<ChatMessage>| ChatRequest {
        messages,
        tools: Vec::new(),
    };
    // Turn 5 lists demo/ and deletes the summary; here demo/ is gone, so both fail.
    let mut convo: Vec<ChatMessage> = (0..4)
        .map(|i| ChatMessage::user(format!("earlier {i}")))
        .collect();
    convo.push(ChatMessage::user("tidy up"));
    let first = DemoModel::respond(&req(convo.clone()));
    assert_eq!(first.tool_calls.len(), 2, "{:?}", first.tool_calls);
    convo.push(ChatMessage::assistant(first.content, first.tool_calls.clone()));
    for c in &first.tool_calls {
        convo.push(ChatMessage::tool(
            c.id.clone(),
            "error: no such file or directory: demo",
        ));
    }
    let last = DemoModel::respond(&req(convo));
    assert!(last.tool_calls.is_empty(), "{:?}", last.tool_calls);
    let text = last.content;
    assert!(
        !text.contains("deleted demo/summary.md") && !text.contains("afresh") && !text.contains("Esc"),
        "{text}"
    );
    assert!(
        text.contains("list_dir demo failed")
            && text.contains("delete_file demo/summary.md failed (error: no such file or directory: demo)")
            && text.contains("No file was changed"),
        "{text}"
    );
}
