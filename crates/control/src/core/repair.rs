//! A conversation a stopped turn left with tool calls that nothing answers (a SIGKILL, a power cut
//! while a tool ran). An OpenAI-compatible server refuses such a history with HTTP 400, so every
//! later turn on the head would fail. Before a head's next turn, each unanswered call of its last
//! assistant message gets a logged result saying it was interrupted; a gap anywhere else in the
//! history (a head forked from it) is answered the same way in what the model is sent.

use retrace_protocol::{ChatMessage, Event, HeadId, Role};
use retrace_session::{Message, NewMessage};

use super::Core;
use crate::error::Result;

/// The result an unanswered tool call gets.
pub(crate) const INTERRUPTED: &str = "error: interrupted: this tool call did not complete (the turn was stopped while it ran or before it ran); what it did, if anything, is unknown";

/// The calls of the head's last assistant message that no result answers, when nothing but tool
/// results follows that message.
fn unanswered_at_tip(msgs: &[&Message]) -> Vec<String> {
    let tail = msgs.iter().rev().take_while(|m| m.role == Role::Tool).count();
    let Some(asked) = msgs.len().checked_sub(tail + 1).map(|i| msgs[i]) else {
        return Vec::new();
    };
    if asked.role != Role::Assistant {
        return Vec::new();
    }
    // Counted, not a set: a model may repeat an id, and each call needs its own answer.
    let mut answered: Vec<&str> = msgs[msgs.len() - tail..]
        .iter()
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    let mut missing = Vec::new();
    for c in &asked.tool_calls {
        match answered.iter().position(|a| *a == c.id) {
            Some(i) => {
                answered.remove(i);
            }
            None => missing.push(c.id.clone()),
        }
    }
    missing
}

/// `history` with a result after every assistant message's block of results for each call it
/// lacks, so that no model request ever carries an unanswered call.
pub(super) fn answer_every_call(history: Vec<ChatMessage>) -> Vec<ChatMessage> {
    let mut out = Vec::with_capacity(history.len());
    let mut open: Vec<String> = Vec::new();
    let close = |open: &mut Vec<String>, out: &mut Vec<ChatMessage>| {
        for id in open.drain(..) {
            out.push(ChatMessage::tool(id, INTERRUPTED));
        }
    };
    for m in history {
        if m.role == Role::Tool {
            if let Some(id) = &m.tool_call_id {
                // One answer closes one call (a model may repeat an id).
                if let Some(i) = open.iter().position(|o| o == id) {
                    open.remove(i);
                }
            }
        } else {
            close(&mut open, &mut out);
        }
        if m.role == Role::Assistant {
            open = m.tool_calls.iter().map(|c| c.id.clone()).collect();
        }
        out.push(m);
    }
    close(&mut open, &mut out);
    out
}

impl Core {
    /// Answers, in the log, every call of `head`'s last assistant message that a stopped turn left
    /// unanswered, and says so.
    pub(super) fn repair_head(&mut self, head: &HeadId) -> Result<()> {
        let missing = unanswered_at_tip(&self.session.project(head)?);
        if missing.is_empty() {
            return Ok(());
        }
        for id in &missing {
            self.session.append(
                head,
                NewMessage {
                    tool_call_id: Some(id.clone()),
                    outcome: Some(retrace_protocol::ToolRecord {
                        status: retrace_protocol::ToolStatus::Cancelled,
                        changes: Vec::new(),
                        gaps: Vec::new(),
                        exit_code: None,
                        duration_ms: None,
                    }),
                    ..NewMessage::new(Role::Tool, INTERRUPTED)
                },
            )?;
        }
        self.session.end_turn()?;
        // The repaired calls' items are final now: show them so (the last assistant message's
        // calls, as a snapshot reads them).
        if head == self.session.selected() {
            let items = self.items_of(head, None)?;
            let from = items
                .iter()
                .rposition(|i| {
                    matches!(
                        i.body,
                        retrace_protocol::ItemBody::AssistantText { .. }
                            | retrace_protocol::ItemBody::UserPrompt { .. }
                    )
                })
                .unwrap_or(0);
            for item in items.into_iter().skip(from) {
                if let retrace_protocol::ItemBody::ToolCall(call) = &item.body {
                    if missing.contains(&call.call_id) {
                        self.bus.publish(Event::ItemCompleted { item });
                    }
                }
            }
        }
        self.bus.publish(Event::Notice {
            message: format!(
                "the previous turn on this head was stopped with {} unanswered; each now says it was interrupted",
                retrace_protocol::words::count(missing.len(), "tool call")
            ),
            retry: None,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use retrace_protocol::ToolCall;

    fn asks(ids: &[&str]) -> ChatMessage {
        let calls = ids
            .iter()
            .map(|id| ToolCall {
                id: id.to_string(),
                name: "bash".into(),
                arguments: "{}".into(),
            })
            .collect();
        ChatMessage::assistant(String::new(), calls)
    }

    #[test]
    fn a_repeated_id_needs_an_answer_per_call() {
        let got: Vec<Option<String>> =
            answer_every_call(vec![asks(&["x", "x"]), ChatMessage::tool("x", "ok")])
                .into_iter()
                .map(|m| m.tool_call_id)
                .collect();
        assert_eq!(got, [None, Some("x".into()), Some("x".into())]);
    }

    #[test]
    fn every_call_gets_an_answer_right_after_its_block() {
        let history = vec![
            ChatMessage::user("go"),
            asks(&["a", "b"]),
            ChatMessage::tool("a", "ok"),
            ChatMessage::user("again"),
            asks(&["c"]),
        ];
        let got: Vec<(Role, Option<String>)> = answer_every_call(history)
            .into_iter()
            .map(|m| (m.role, m.tool_call_id))
            .collect();
        assert_eq!(
            got,
            [
                (Role::User, None),
                (Role::Assistant, None),
                (Role::Tool, Some("a".into())),
                (Role::Tool, Some("b".into())),
                (Role::User, None),
                (Role::Assistant, None),
                (Role::Tool, Some("c".into())),
            ]
        );
    }
}
