//! Items as `retrace exec` and `retrace transcript --items` print them for a person: one line per
//! tool call with its status, one per changed file with its line counts.

use std::fmt::Write as _;

use retrace_protocol::{ChangeAction, FileChange, Item, ItemBody, ToolCallItem, ToolStatus};

use crate::output::{first_line, shown_path, shown_text};

/// The line a tool call gets when it starts.
pub fn started(call: &ToolCallItem) -> String {
    format!("→ {}\n", shown_path(&first_line(&call.title, 100)))
}

/// The lines a tool call gets when it ends: its status and first line of output, then its files.
pub fn finished(call: &ToolCallItem) -> String {
    let mark = match call.status {
        ToolStatus::Ok => "✓",
        ToolStatus::Failed => "✗",
        ToolStatus::Denied => "⊘ denied:",
        ToolStatus::Cancelled => "⊘ cancelled:",
        ToolStatus::Running => "…",
    };
    let said = match call.status {
        ToolStatus::Ok | ToolStatus::Running => first_line(&call.output, 100),
        s => first_line(&retrace_protocol::words::tool_outcome(s, &call.output), 100),
    };
    let mut out = match said.is_empty() {
        true => format!("  {}\n", mark.trim_end_matches(':')),
        false => format!("  {mark} {}\n", shown_text(&said)),
    };
    for c in &call.changes {
        let _ = writeln!(out, "    {}", change(c));
    }
    out
}

/// One changed file: what happened to it and its line counts.
pub fn change(c: &FileChange) -> String {
    let what = c.action.past_tense();
    let path = match (&c.from, c.action) {
        (Some(from), ChangeAction::Move) => format!("{} → {}", shown_path(from), shown_path(&c.path)),
        _ => shown_path(&c.path),
    };
    if c.binary {
        format!("{what} {path} (binary)")
    } else if c.is_bare_move() {
        format!("{what} {path}")
    } else {
        format!("{what} {path} (+{} −{})", c.added, c.removed)
    }
}

/// A whole item, for a transcript: several lines, ending in a newline.
pub fn item(i: &Item) -> String {
    match &i.body {
        ItemBody::UserPrompt { text } => format!("user: {}\n", shown_text(text)),
        ItemBody::AssistantText { text, reasoning } => {
            let thought = reasoning
                .as_deref()
                .map(|r| format!("  (reasoning) {}\n", shown_text(&first_line(r, 100))))
                .unwrap_or_default();
            format!("{thought}assistant: {}\n", shown_text(text))
        }
        ItemBody::ToolCall(call) => format!("{}{}", started(call), finished(call)),
        ItemBody::Checkpoint(c) => {
            let shown: Vec<String> = c.files.iter().map(|p| shown_path(p)).collect();
            format!(
                "  ⎌ checkpoint · turn {} · {} recorded{}\n",
                i.turn.unwrap_or_default(),
                retrace_protocol::words::count(c.files.len(), "file"),
                if shown.is_empty() {
                    String::new()
                } else {
                    format!(": {}", shown.join(", "))
                }
            )
        }
        ItemBody::Note(n) => format!("  ⓘ {}\n", shown_text(&n.text)),
    }
}
