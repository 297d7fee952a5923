//! Format-1 logs: one `{role, content, …}` message per line, no header, no ids, no heads.
//!
//! They are read as a single head `main` whose turn N is the N-th user message (from 0). Messages
//! are named `f1-<line>`. Both tool-call shapes are accepted: the flat `{id, name, arguments}` this
//! crate writes and the OpenAI `{id, type, function: {name, arguments}}`; arguments that are not a
//! string are kept as their JSON text. `content` may be a string, `null` or missing (read as empty),
//! or any other JSON value (kept as its JSON text). Nothing here ever writes to a format-1 file.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::entry::{Entry, ForkEntry, HeadKind, MessageEntry, Role, ToolCall, TurnEntry};
use crate::error::{Result, SessionError};
use crate::ids::{HeadId, MessageId};
use crate::index::Index;

#[derive(Deserialize)]
struct V1Message {
    role: Role,
    #[serde(default)]
    content: Value,
    #[serde(default)]
    tool_calls: Option<Vec<V1ToolCall>>,
    #[serde(default)]
    tool_call_id: Option<String>,
}

#[derive(Deserialize)]
struct V1ToolCall {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default)]
    function: Option<V1Function>,
}

#[derive(Deserialize)]
struct V1Function {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
}

fn text(v: Option<Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s,
        Some(other) => other.to_string(),
    }
}

fn tool_call(c: V1ToolCall) -> ToolCall {
    let (name, arguments) = match c.function {
        Some(f) => (f.name.or(c.name), f.arguments.or(c.arguments)),
        None => (c.name, c.arguments),
    };
    ToolCall {
        id: c.id.unwrap_or_default(),
        name: name.unwrap_or_default(),
        arguments: text(arguments),
    }
}

/// Builds the index of a format-1 log from its complete lines.
pub(crate) fn load<'a>(
    path: &Path,
    lines: impl Iterator<Item = (usize, &'a [u8])>,
    at: &str,
) -> Result<Index> {
    let corrupt = |line: usize, detail: String| SessionError::Corrupt {
        path: path.to_path_buf(),
        line,
        detail,
    };
    let mut index = Index::default();
    index
        .apply(Entry::Fork(ForkEntry {
            head: HeadId::main(),
            kind: HeadKind::Main,
            from: None,
            parent_head: None,
            name: None,
            at: at.to_string(),
        }))
        .map_err(|d| corrupt(1, d))?;
    let mut parent: Option<MessageId> = None;
    let mut turn = 0u64;
    for (n, line) in lines {
        if line.is_empty() {
            return Err(corrupt(n, "empty line".to_string()));
        }
        let m: V1Message =
            serde_json::from_slice(line).map_err(|e| corrupt(n, format!("not a format-1 message: {e}")))?;
        let id = crate::ids::format1_message(n);
        let role = m.role;
        let entry = MessageEntry {
            id: id.clone(),
            parent: parent.replace(id.clone()),
            head: HeadId::main(),
            role,
            content: text(Some(m.content)),
            tool_calls: m
                .tool_calls
                .unwrap_or_default()
                .into_iter()
                .map(tool_call)
                .collect(),
            tool_call_id: m.tool_call_id,
            usage: None,
            at: at.to_string(),
        };
        index.apply(Entry::Message(entry)).map_err(|d| corrupt(n, d))?;
        if role == Role::User {
            let t = TurnEntry {
                turn,
                head: HeadId::main(),
                message_id: id,
                at: at.to_string(),
            };
            index.apply(Entry::Turn(t)).map_err(|d| corrupt(n, d))?;
            turn += 1;
        }
    }
    Ok(index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_tool_call_shapes_and_null_content() {
        let lines: Vec<(usize, &[u8])> = vec![
            (1, br#"{"role":"user","content":"hi"}"#),
            (
                2,
                br#"{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}]}"#,
            ),
            (3, br#"{"role":"tool","content":"A","tool_call_id":"c1"}"#),
            (4, br#"{"role":"assistant","tool_calls":[{"id":"c2","name":"bash","arguments":{"command":"ls"}}]}"#),
            (5, br#"{"role":"user","content":"again"}"#),
        ];
        let ix = load(Path::new("old.jsonl"), lines.into_iter(), "t").unwrap();
        let msgs: Vec<_> = ix.path(0).map(|m| &ix.nodes[m].msg).collect();
        assert_eq!(msgs.len(), 5);
        assert_eq!(msgs[1].content, "");
        assert_eq!(msgs[1].tool_calls[0].name, "read_file");
        assert_eq!(msgs[1].tool_calls[0].arguments, r#"{"path":"a"}"#);
        assert_eq!(msgs[3].tool_calls[0].arguments, r#"{"command":"ls"}"#);
        assert_eq!(msgs[2].tool_call_id.as_deref(), Some("c1"));
        assert_eq!((msgs[0].turn, msgs[4].turn), (Some(0), Some(1)));
        assert_eq!(msgs[4].id.as_str(), "f1-5");
    }

    #[test]
    fn a_bad_line_is_named() {
        let lines: Vec<(usize, &[u8])> = vec![
            (1, br#"{"role":"user","content":"hi"}"#),
            (2, br#"{"role":"wizard","content":"?"}"#),
        ];
        let err = load(Path::new("old.jsonl"), lines.into_iter(), "t").unwrap_err();
        assert!(err.to_string().contains("old.jsonl` line 2"), "{err}");
    }
}
