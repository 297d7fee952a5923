//! The demo model (`--model demo`, `retrace demo`): a deterministic model that answers any prompt with a
//! small, varied set of file edits, so the rewind flow can be tried with no key and no network.
//!
//! It keeps no state: everything is read from the request, so a rewound conversation gets the answer
//! that fits it. Its answer number is the count of user messages on the conversation it is sent (a
//! demo summary counts for the requests it folded) — not the session's turn number, which no model
//! sees — and picks one of five variants, cycling:
//!
//! 1. create `demo/notes.md` and `demo/todo.txt` (`write_file` ×2);
//! 2. `read_file` the notes, then `edit_file` them (`status: draft` → `status: reviewed`);
//! 3. `move_file` `demo/todo.txt` → `demo/done/todo.txt`;
//! 4. a multi-file change: `multi_edit` of the notes plus `write_file` `demo/summary.md`;
//! 5. `list_dir` `demo`, then `delete_file` `demo/summary.md`.
//!
//! The first step of a turn makes the variant's calls. If any of them failed — after a rewind of the
//! code alone the files may not be where this conversation left them — the second step recreates what
//! the failed edit would have produced with `write_file` (a failed delete needs nothing). Then it ends
//! the turn with a short text quoting the prompt that says what happened as the tool results tell it
//! (which calls worked, which failed and why, what was recreated), naming no frontend's keys. A tool result counts as failed when it starts with
//! `error` or `failed`, or says `not found`, `no such file`, `does not exist` or `changed since`.
//!
//! A summarization request ([`crate::SUMMARY_PROMPT`]) gets a fixed-form summary listing the requests.

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::error::ModelError;
use crate::script::replay;
use crate::summary::is_summary_request;
use crate::types::{ChatMessage, ChatRequest, ChatResponse, Delta, Role, ToolCall};
use crate::{BoxFuture, ChatModel};

const NOTES: &str = "demo/notes.md";
const TODO: &str = "demo/todo.txt";
const DONE_TODO: &str = "demo/done/todo.txt";
const SUMMARY_FILE: &str = "demo/summary.md";
const TODO_TEXT: &str =
    "- [ ] ask for a change\n- [ ] rewind it (Esc Esc or /rewind)\n- [ ] undo the rewind\n";
const SUMMARY_TEXT: &str = "# Summary\n\n- the notes are final\n- the todo list moved to demo/done/\n";
/// How a demo summary starts; the number after it is how many requests it folded.
const SUMMARY_HEAD: &str = "Summary of ";
/// How many variants there are before they repeat.
const VARIANTS: usize = 5;

/// The built-in deterministic demo model.
#[derive(Debug, Default, Clone, Copy)]
pub struct DemoModel;

impl DemoModel {
    /// The demo model.
    pub fn new() -> DemoModel {
        DemoModel
    }

    /// The answer to `req` (what [`ChatModel::complete`] returns).
    pub fn respond(req: &ChatRequest) -> ChatResponse {
        if is_summary_request(req) {
            return text_response(summarize(&req.messages[..req.messages.len() - 1]));
        }
        let Some(u) = req.messages.iter().rposition(|m| m.role == Role::User) else {
            return text_response(
                "Ask me anything: the demo answers every prompt with a few file edits.".into(),
            );
        };
        let prompt = first_line(&req.messages[u].content);
        let turn = count_requests(&req.messages[..=u]);
        let variant = (turn - 1) % VARIANTS;
        let after = &req.messages[u + 1..];
        let steps = after
            .iter()
            .filter(|m| m.role == Role::Assistant && !m.tool_calls.is_empty())
            .count();
        if steps == 0 {
            let (text, calls) = plan(variant, &prompt);
            if !req.tools.is_empty() && !req.tools.iter().any(|t| t.name == "write_file") {
                // Plan mode (only the read tools are offered): say what would be done, do nothing.
                return text_response(format!(
                    "Plan for \"{prompt}\" (plan mode is on, so nothing is changed): {} Turn plan mode off to have it done.",
                    text.trim_end_matches('.').to_string() + "."
                ));
            }
            return calls_response(text, calls, turn, 0);
        }
        let failed = failed_calls(after);
        if steps == 1 {
            let calls: Vec<(&str, Value)> = failed.iter().filter_map(|c| recreate(c, &prompt)).collect();
            if !calls.is_empty() {
                let text = "Some files were not where this conversation left them; recreating them.";
                return calls_response(text.into(), calls, turn, 1);
            }
        }
        text_response(closing(turn, variant, &prompt, after))
    }
}

/// The turn's closing text, from the tool results it got: what worked, what failed, and what was
/// written again; never a claim the results do not bear out, and no frontend's keys.
fn closing(turn: usize, variant: usize, prompt: &str, after: &[ChatMessage]) -> String {
    let steps: Vec<Vec<(ToolCall, Option<String>)>> = after
        .iter()
        .filter(|m| m.role == Role::Assistant && !m.tool_calls.is_empty())
        .map(|m| {
            m.tool_calls
                .iter()
                .map(|c| (c.clone(), failure(c, after)))
                .collect()
        })
        .collect();
    if steps.iter().flatten().all(|(_, failed)| failed.is_none()) {
        return format!(
            "Demo answer {turn}: {} for \"{prompt}\". Try a rewind to before this turn: it takes all of this back.",
            DONE[variant]
        );
    }
    let mut said = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        for (call, failed) in step {
            let what = described(call);
            said.push(match (i, failed) {
                (0, None) => format!("{what} worked"),
                (0, Some(why)) => format!("{what} failed ({why})"),
                (_, None) => format!("{what} (recreating it) worked"),
                (_, Some(why)) => format!("{what} (recreating it) failed too ({why})"),
            });
        }
    }
    let changed = steps
        .iter()
        .flatten()
        .any(|(call, failed)| failed.is_none() && !matches!(call.name.as_str(), "read_file" | "list_dir"));
    let end = if changed {
        "Try a rewind to before this turn: it takes back what changed."
    } else {
        "No file was changed."
    };
    format!("Demo answer {turn} for \"{prompt}\": {}. {end}", said.join("; "))
}

/// A call as a few words: the tool and the file(s) it names.
fn described(call: &ToolCall) -> String {
    let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
    let s = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_string);
    match (s("path"), s("from"), s("to")) {
        (Some(p), _, _) => format!("{} {p}", call.name),
        (None, Some(f), Some(t)) => format!("{} {f} → {t}", call.name),
        _ => call.name.clone(),
    }
}

/// Why `call` failed, as its result's first line, or `None` if it worked. A call with no result
/// did not work either.
fn failure(call: &ToolCall, after: &[ChatMessage]) -> Option<String> {
    match after
        .iter()
        .find(|r| r.role == Role::Tool && r.tool_call_id.as_deref() == Some(&call.id))
    {
        Some(r) if looks_failed(&r.content) => Some(first_line(&r.content)),
        Some(_) => None,
        None => Some("no result".to_string()),
    }
}

/// What each variant did, for the closing text.
const DONE: [&str; VARIANTS] = [
    "created demo/notes.md and demo/todo.txt",
    "marked demo/notes.md as reviewed",
    "moved demo/todo.txt to demo/done/todo.txt",
    "finalised demo/notes.md and wrote demo/summary.md",
    "deleted demo/summary.md",
];

/// The notes file as it stands after turn 1 (`draft`), 2 (`reviewed`) or 4 (`final`).
fn notes(stage: usize, prompt: &str) -> String {
    let (heading, status) = match stage {
        0 => ("# Demo notes", "draft"),
        1 => ("# Demo notes", "reviewed"),
        _ => ("# Demo notes (final)", "final"),
    };
    format!("{heading}\n\nstatus: {status}\n\nRequested: {prompt}\n")
}

fn plan(variant: usize, prompt: &str) -> (String, Vec<(&'static str, Value)>) {
    let (text, calls) = match variant {
        0 => (
            "Creating demo/notes.md and demo/todo.txt.",
            vec![
                ("write_file", json!({"path": NOTES, "content": notes(0, prompt)})),
                ("write_file", json!({"path": TODO, "content": TODO_TEXT})),
            ],
        ),
        1 => (
            "Reading the notes, then marking them reviewed.",
            vec![
                ("read_file", json!({"path": NOTES})),
                (
                    "edit_file",
                    json!({"path": NOTES, "old_string": "status: draft", "new_string": "status: reviewed"}),
                ),
            ],
        ),
        2 => (
            "Moving the todo list to demo/done/.",
            vec![("move_file", json!({"from": TODO, "to": DONE_TODO}))],
        ),
        3 => (
            "Finalising the notes and writing a summary: a change to two files.",
            vec![
                (
                    "multi_edit",
                    json!({"path": NOTES, "edits": [
                        {"old_string": "status: reviewed", "new_string": "status: final"},
                        {"old_string": "# Demo notes", "new_string": "# Demo notes (final)"}
                    ]}),
                ),
                (
                    "write_file",
                    json!({"path": SUMMARY_FILE, "content": SUMMARY_TEXT}),
                ),
            ],
        ),
        _ => (
            "Listing demo/, then deleting the summary.",
            vec![
                ("list_dir", json!({"path": "demo"})),
                ("delete_file", json!({"path": SUMMARY_FILE})),
            ],
        ),
    };
    (text.to_string(), calls)
}

/// The `write_file` that produces what a failed call would have, if anything.
fn recreate(call: &ToolCall, prompt: &str) -> Option<(&'static str, Value)> {
    let args: Value = serde_json::from_str(&call.arguments).ok()?;
    let (path, content) = match call.name.as_str() {
        "edit_file" => (NOTES.to_string(), notes(1, prompt)),
        "multi_edit" => (NOTES.to_string(), notes(2, prompt)),
        "move_file" => (args.get("to")?.as_str()?.to_string(), TODO_TEXT.to_string()),
        "write_file" => (
            args.get("path")?.as_str()?.to_string(),
            args.get("content")?.as_str()?.to_string(),
        ),
        _ => return None,
    };
    Some(("write_file", json!({"path": path, "content": content})))
}

/// The calls of the last tool-calling assistant message whose results look like failures.
fn failed_calls(after: &[ChatMessage]) -> Vec<ToolCall> {
    let Some(a) = after
        .iter()
        .rposition(|m| m.role == Role::Assistant && !m.tool_calls.is_empty())
    else {
        return Vec::new();
    };
    let results = &after[a + 1..];
    after[a]
        .tool_calls
        .iter()
        .filter(|call| {
            results.iter().any(|r| {
                r.role == Role::Tool
                    && r.tool_call_id.as_deref() == Some(&call.id)
                    && looks_failed(&r.content)
            })
        })
        .cloned()
        .collect()
}

fn looks_failed(result: &str) -> bool {
    let lower = result.trim_start().to_lowercase();
    lower.starts_with("error")
        || lower.starts_with("failed")
        || ["not found", "no such file", "does not exist", "changed since"]
            .iter()
            .any(|s| lower.contains(s))
}

/// User messages up to here, a demo summary counting for the requests it folded.
fn count_requests(messages: &[ChatMessage]) -> usize {
    messages
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| folded_count(&m.content).unwrap_or(1))
        .sum::<usize>()
        .max(1)
}

/// `Some(n)` for a demo summary of `n` requests.
fn folded_count(text: &str) -> Option<usize> {
    let rest = text.strip_prefix(SUMMARY_HEAD)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

fn summarize(messages: &[ChatMessage]) -> String {
    let requests: Vec<String> = messages
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| match folded_count(&m.content) {
            Some(n) => format!("(an earlier summary of {n} requests)"),
            None => format!("\"{}\"", first_line(&m.content)),
        })
        .collect();
    let n = if requests.is_empty() {
        0
    } else {
        count_requests(messages)
    };
    let plural = if n == 1 { "" } else { "s" };
    let mut text = format!("{SUMMARY_HEAD}{n} earlier request{plural} (demo model).\n");
    for (i, r) in requests.iter().enumerate() {
        text.push_str(&format!("{}. {r}\n", i + 1));
    }
    text.push_str(
        "The demo's edits are in demo/notes.md, demo/todo.txt (or demo/done/todo.txt) and demo/summary.md.",
    );
    text
}

/// The first line of `text`, at most 80 characters.
fn first_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    match line.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

fn text_response(content: String) -> ChatResponse {
    ChatResponse {
        content,
        finish_reason: Some("stop".to_string()),
        ..ChatResponse::default()
    }
}

fn calls_response(content: String, calls: Vec<(&str, Value)>, turn: usize, step: usize) -> ChatResponse {
    let tool_calls = calls
        .into_iter()
        .enumerate()
        .map(|(i, (name, args))| ToolCall {
            id: format!("demo_{turn}_{step}_{i}"),
            name: name.to_string(),
            arguments: args.to_string(),
        })
        .collect();
    ChatResponse {
        content,
        tool_calls,
        finish_reason: Some("tool_calls".to_string()),
        ..ChatResponse::default()
    }
}

impl ChatModel for DemoModel {
    fn describe(&self) -> String {
        "demo".to_string()
    }

    fn complete<'a>(
        &'a mut self,
        req: &'a ChatRequest,
        on_delta: &'a mut (dyn FnMut(Delta) + Send),
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            if cancel.is_cancelled() {
                return Err(ModelError::Cancelled);
            }
            let response = DemoModel::respond(req);
            replay(&response, on_delta);
            Ok(response)
        })
    }
}
