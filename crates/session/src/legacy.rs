//! Format-1 logs: one `{role, content, …}` message per line, no header, no ids, no heads.
//!
//! They are read as a single head `main` whose turn N is the N-th user message (from 0). Messages
//! are named `f1-<line>`. The checkpoint sidecar of such a log may know better: where it records
//! `msgIndex` for turn N, turn N is the user message at that position (SPEC §6; the controller
//! passes the sidecar's positions to [`Session::anchor_format1_turns`], see [`turn_positions`]). Both tool-call shapes are accepted: the flat `{id, name, arguments}` this
//! crate writes and the OpenAI `{id, type, function: {name, arguments}}`; arguments that are not a
//! string are kept as their JSON text. `content` may be a string, `null` or missing (read as empty),
//! or any other JSON value (kept as its JSON text). Nothing here ever writes to a format-1 file.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::entry::{Entry, ForkEntry, HeadKind, MessageEntry, Role, ToolCall, TurnEntry};
use crate::error::{Result, SessionError};
use crate::ids::{HeadId, MessageId};
use crate::index::Index;
use crate::session::Session;

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

/// Builds the index of a format-1 log from its complete lines; turn N is the N-th user message.
pub(crate) fn load<'a>(
    path: &Path,
    lines: impl Iterator<Item = (usize, &'a [u8])>,
    at: &str,
) -> Result<Index> {
    let mut messages = Vec::new();
    let mut parent: Option<MessageId> = None;
    for (n, line) in lines {
        if line.is_empty() {
            return Err(corrupt(path, n, "empty line".to_string()));
        }
        let m: V1Message = serde_json::from_slice(line)
            .map_err(|e| corrupt(path, n, format!("not a format-1 message: {e}")))?;
        let id = crate::ids::format1_message(n);
        messages.push((
            n,
            MessageEntry {
                id: id.clone(),
                parent: parent.replace(id),
                head: HeadId::main(),
                role: m.role,
                content: text(Some(m.content)),
                tool_calls: m
                    .tool_calls
                    .unwrap_or_default()
                    .into_iter()
                    .map(tool_call)
                    .collect(),
                tool_call_id: m.tool_call_id,
                usage: None,
                reasoning: None,
                outcome: None,
                at: at.to_string(),
            },
        ));
    }
    build(path, messages, at, &BTreeMap::new())
}

fn corrupt(path: &Path, line: usize, detail: String) -> SessionError {
    SessionError::Corrupt {
        path: path.to_path_buf(),
        line,
        detail,
    }
}

/// The index of a format-1 log: `main`, the messages (each with its line number), and a turn at
/// each of [`turn_positions`].
fn build(
    path: &Path,
    messages: Vec<(usize, MessageEntry)>,
    at: &str,
    starts: &BTreeMap<u64, u64>,
) -> Result<Index> {
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
        .map_err(|d| corrupt(path, 1, d))?;
    let roles: Vec<Role> = messages.iter().map(|(_, m)| m.role).collect();
    let turns = turn_positions(&roles, starts);
    let mut opened = vec![None; messages.len()];
    for (turn, pos) in turns {
        opened[pos] = Some(turn);
    }
    for ((n, m), turn) in messages.into_iter().zip(opened) {
        let id = m.id.clone();
        index.apply(Entry::Message(m)).map_err(|d| corrupt(path, n, d))?;
        if let Some(turn) = turn {
            let t = TurnEntry {
                turn,
                head: HeadId::main(),
                message_id: id,
                at: at.to_string(),
            };
            index.apply(Entry::Turn(t)).map_err(|d| corrupt(path, n, d))?;
        }
    }
    Ok(index)
}

/// Where the turns of a format-1 log start: `(turn, position of its user message)`, in order.
///
/// `starts` holds what the checkpoint sidecar records: turn N's `msgIndex`, the number of messages
/// before its user message, which is that message's position. A recorded position is used when a
/// user message is there and it comes after the previous turn's; any other turn is the first user
/// message after the previous turn's (and before the next recorded one), so with nothing recorded
/// turn N is the N-th user message. A turn with no such message (its messages were never logged)
/// has none: it stays in the sidecar, not in the conversation. User messages between two recorded
/// turns that no turn takes (an old version's follow-ups that opened no checkpoint) are plain
/// messages.
pub(crate) fn turn_positions(roles: &[Role], starts: &BTreeMap<u64, u64>) -> Vec<(u64, usize)> {
    let is_user = |p: usize| roles.get(p) == Some(&Role::User);
    let recorded = |t: u64, after: Option<usize>| {
        starts
            .get(&t)
            .and_then(|&p| usize::try_from(p).ok())
            .filter(|&p| is_user(p) && after.is_none_or(|a| p > a))
    };
    let mut out = Vec::new();
    let mut last: Option<usize> = None;
    let mut turn = 0u64;
    loop {
        if let Some(p) = recorded(turn, last) {
            out.push((turn, p));
            last = Some(p);
            match turn.checked_add(1) {
                Some(t) => turn = t,
                None => return out,
            }
            continue;
        }
        // The next recorded turn that can be placed bounds where this one may be.
        let next = starts
            .range(turn.saturating_add(1)..)
            .find_map(|(&t, _)| recorded(t, last).map(|p| (t, p)));
        let from = last.map_or(0, |l| l + 1);
        let to = next.map_or(roles.len(), |(_, p)| p);
        match (from..to).find(|&p| is_user(p)) {
            Some(p) => {
                out.push((turn, p));
                last = Some(p);
                match turn.checked_add(1) {
                    Some(t) => turn = t,
                    None => return out,
                }
            }
            None => match next {
                Some((t, _)) => turn = t,
                None => return out,
            },
        }
    }
}

impl Session {
    /// Places the turns of a format-1 log where its checkpoint sidecar says they start: `starts`
    /// maps a turn number to its recorded `msgIndex` ([`turn_positions`] has the rule). Turns
    /// nobody recorded are counted as user messages. Does nothing to a format-2 session, whose
    /// log records its turns. Call it right after opening, before any plan is made: it renumbers
    /// the turns of the conversation.
    pub fn anchor_format1_turns(&mut self, starts: &BTreeMap<u64, u64>) -> Result<()> {
        if self.header.is_some() {
            return Ok(());
        }
        let main = self.head_ix(&HeadId::main())?;
        let at = self.index.heads[main].created_at.clone();
        let mut parent: Option<MessageId> = None;
        let messages: Vec<(usize, MessageEntry)> = self
            .index
            .path(main)
            .enumerate()
            .map(|(i, m)| {
                let msg = &self.index.nodes[m].msg;
                let entry = MessageEntry {
                    id: msg.id.clone(),
                    parent: parent.replace(msg.id.clone()),
                    head: HeadId::main(),
                    role: msg.role,
                    content: msg.content.clone(),
                    tool_calls: msg.tool_calls.clone(),
                    tool_call_id: msg.tool_call_id.clone(),
                    usage: msg.usage,
                    reasoning: msg.reasoning.clone(),
                    outcome: msg.outcome.clone(),
                    at: msg.at.clone(),
                };
                // One message per line, from line 1: the line a problem would be reported at.
                (i + 1, entry)
            })
            .collect();
        self.index = build(&self.path, messages, &at, starts)?;
        Ok(())
    }
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

    fn positions(roles: &str, starts: &[(u64, u64)]) -> Vec<(u64, usize)> {
        let roles: Vec<Role> = roles
            .chars()
            .map(|c| if c == 'u' { Role::User } else { Role::Assistant })
            .collect();
        turn_positions(&roles, &starts.iter().copied().collect())
    }

    #[test]
    fn turns_are_user_messages_unless_the_sidecar_recorded_where_they_start() {
        // Nothing recorded: turn N is the N-th user message.
        assert_eq!(positions("uauaua", &[]), [(0, 0), (1, 2), (2, 4)]);
        // Turn 1 recorded at 4: the follow-up at 2 opened no turn; turn 2 counts on from turn 1.
        assert_eq!(positions("uauauaua", &[(1, 4)]), [(0, 0), (1, 4), (2, 6)]);
        // An unrecorded turn is looked for before the next recorded one only.
        assert_eq!(positions("uauaua", &[(0, 0), (2, 4)]), [(0, 0), (1, 2), (2, 4)]);
        assert_eq!(positions("uaaaua", &[(0, 0), (2, 4)]), [(0, 0), (2, 4)]);
        // A turn recorded far ahead is reached without walking every number before it.
        assert_eq!(positions("uaua", &[(1_000_000, 2)]), [(0, 0), (1_000_000, 2)]);
        // Unusable records are ignored: past the end, not a user message, or out of order.
        assert_eq!(positions("uaua", &[(1, 9)]), [(0, 0), (1, 2)]);
        assert_eq!(positions("uaua", &[(1, 1)]), [(0, 0), (1, 2)]);
        assert_eq!(positions("uaua", &[(0, 2), (1, 0)]), [(0, 2)]);
        assert_eq!(positions("", &[(0, 0)]), []);
        assert_eq!(positions("uaua", &[(u64::MAX, 2)]), [(0, 0), (u64::MAX, 2)]);
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
