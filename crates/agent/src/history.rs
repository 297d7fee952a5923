//! The history a request carries, made well-formed for strict OpenAI-compatible servers, which
//! reject (HTTP 400, on every later turn) a `tool` message that answers no call of the assistant
//! message right before its block. An old flat log can hold one (found by attack); it is left out
//! of the request, never out of the log. Unanswered calls are repaired in the log itself before a
//! turn (`retrace-control`'s repair), since the model must learn that they did not complete.

use retrace_protocol::{ChatMessage, Role};

/// `messages` without the `tool` messages that answer no call of the assistant message before
/// their block (or answer one already answered).
pub fn well_formed(messages: Vec<ChatMessage>) -> Vec<ChatMessage> {
    let mut out: Vec<ChatMessage> = Vec::with_capacity(messages.len());
    // The calls the current block of tool messages may still answer.
    let mut open: Vec<String> = Vec::new();
    for m in messages {
        match m.role {
            Role::Tool => {
                let answers = m
                    .tool_call_id
                    .as_deref()
                    .and_then(|id| open.iter().position(|c| c == id));
                if let Some(i) = answers {
                    open.swap_remove(i);
                    out.push(m);
                }
            }
            Role::Assistant => {
                open = m.tool_calls.iter().map(|c| c.id.clone()).collect();
                out.push(m);
            }
            _ => {
                open.clear();
                out.push(m);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use retrace_protocol::ToolCall;

    fn tool(id: &str) -> ChatMessage {
        ChatMessage {
            role: Role::Tool,
            content: "ok".into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(id.into()),
        }
    }

    fn calling(ids: &[&str]) -> ChatMessage {
        ChatMessage {
            role: Role::Assistant,
            content: String::new(),
            tool_calls: ids
                .iter()
                .map(|id| ToolCall {
                    id: (*id).into(),
                    name: "read_file".into(),
                    arguments: "{}".into(),
                })
                .collect(),
            tool_call_id: None,
        }
    }

    #[test]
    fn orphan_and_repeated_tool_results_are_left_out() {
        let history = vec![
            tool("zz"),
            ChatMessage::user("hi"),
            calling(&["a", "b"]),
            tool("a"),
            tool("a"),
            tool("b"),
            ChatMessage::user("more"),
            tool("b"),
        ];
        let kept: Vec<(Role, Option<String>)> = well_formed(history)
            .into_iter()
            .map(|m| (m.role, m.tool_call_id))
            .collect();
        assert_eq!(
            kept,
            [
                (Role::User, None),
                (Role::Assistant, None),
                (Role::Tool, Some("a".into())),
                (Role::Tool, Some("b".into())),
                (Role::User, None),
            ]
        );
    }
}
