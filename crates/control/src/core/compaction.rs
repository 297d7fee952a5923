//! Compaction and plan mode on the session (SPEC §7 `compact`, `set_plan_mode`).
//!
//! Compacting summarizes the selected head up to its latest turn into a new `summary` head (the
//! "summarize up to here" of SPEC §5.1) and selects it. Nothing is truncated: the original head
//! stays a version, and checkpoints key on turn numbers, which run on, so a code rewind to a turn
//! before the compaction restores the same files as before it, and a conversation rewind to such a
//! turn forks from the original head. A compaction therefore takes no snapshot of its own.

use retrace_agent::{history_tokens, message_tokens};
use retrace_protocol::{ChatMessage, ErrorCode, Event, HeadId, Role, SummarizeDirection};
use retrace_session::{Boundary, HeadKind, MessageKind, Session};

use super::Core;
use crate::error::{coded, Result};

/// A message longer than this is cut in the text given to the model to summarize.
const MAX_MESSAGE_SUMMARIZED: usize = 8 * 1024;

/// The smallest a message is cut to when the whole request still does not fit.
const MIN_MESSAGE_SUMMARIZED: usize = 256;

/// Shortens a summary request (the messages to fold, then the instruction) to fit `max_tokens`,
/// since it must itself fit in the window it is meant to free: every message is cut to 8 KiB;
/// then the oldest turns are left out (whole turns, so every tool call keeps its result), with a
/// note saying so; then, if one turn alone is still too long, every message is cut evenly.
fn fit(mut messages: Vec<ChatMessage>, max_tokens: u64) -> Vec<ChatMessage> {
    let Some(instruction) = messages.pop() else {
        return messages;
    };
    let budget = max_tokens.saturating_sub(message_tokens(&instruction) + 64);
    for m in &mut messages {
        cut(&mut m.content, MAX_MESSAGE_SUMMARIZED);
    }
    let mut dropped = 0;
    while history_tokens(&messages) > budget {
        // The next turn starts at the next user message after the first.
        let next = messages
            .iter()
            .enumerate()
            .skip(1)
            .find(|(_, m)| m.role == Role::User)
            .map(|(i, _)| i);
        match next {
            Some(i) => {
                dropped += i;
                messages.drain(..i);
            }
            None => break,
        }
    }
    if history_tokens(&messages) > budget && !messages.is_empty() {
        let each = (budget.saturating_mul(4) / messages.len() as u64) as usize;
        let each = each.max(MIN_MESSAGE_SUMMARIZED);
        for m in &mut messages {
            cut(&mut m.content, each);
        }
    }
    if dropped > 0 {
        messages.insert(
            0,
            ChatMessage::user(format!(
                "[{dropped} earlier messages are left out here: the conversation was too long to summarize at once]"
            )),
        );
    }
    messages.push(instruction);
    messages
}

/// Cuts `text` to at most `max` bytes (on a character boundary), saying how much was left out.
fn cut(text: &mut String, max: usize) {
    if text.len() <= max {
        return;
    }
    let mut at = max;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let left = text.len() - at;
    text.truncate(at);
    text.push_str(&format!("\n[… {left} more bytes not shown]"));
}

impl Core {
    /// The latest turn visible on the selected head (what a compaction keeps verbatim).
    pub(crate) fn latest_turn(&self) -> Result<u64> {
        crate::view::sound(&self.session)?;
        let head = self.session.selected().clone();
        self.session
            .turns_on(&head)?
            .into_iter()
            .filter_map(|t| t.boundary.map(|b| (b.index, t.info.turn)))
            .max()
            .map(|(_, turn)| turn)
            .ok_or_else(|| {
                coded(
                    ErrorCode::Refused,
                    "nothing to compact: this head has no turn yet",
                )
            })
    }

    /// What the model is asked to summarize to compact the selected head before `turn`: the
    /// messages before it, then the instruction, shortened to fit `max_tokens` (see [`fit`]).
    pub(crate) fn compaction_source(&self, turn: u64, max_tokens: u64) -> Result<Vec<ChatMessage>> {
        let messages = self.summary_source(turn, SummarizeDirection::UpTo)?;
        Ok(fit(messages, max_tokens))
    }

    /// Where a conversation rewind (or a fork) to `turn` forks from (see [`conversation_source`]).
    pub(crate) fn conversation_source(&self, turn: u64) -> Option<(HeadId, Boundary)> {
        conversation_source(&self.session, turn)
    }

    /// Turns plan mode on or off; tells the frontends when it changed.
    pub(crate) fn set_plan_mode(&mut self, on: bool) -> Result<()> {
        if self.session.plan_mode() == on {
            return Ok(());
        }
        self.upgrade_if_flat()?;
        self.session.set_plan_mode(on)?;
        self.bus.publish(Event::PlanMode { on });
        Ok(())
    }
}

/// Where a conversation rewind (or a fork) to `turn` forks from: the selected head when the turn
/// is on it; else, for a turn a compaction on the head's path folded, the head it was folded from
/// (following older compactions back). `None`: not on this head.
pub(crate) fn conversation_source(session: &Session, turn: u64) -> Option<(HeadId, Boundary)> {
    let mut head = session.selected().clone();
    // Each step goes to the source of an older compaction: it ends; the bound only guards a
    // corrupt index.
    for _ in 0..=session.heads().len() {
        if let Ok(b) = session.boundary(&head, turn) {
            return Some((head, b));
        }
        head = folded_by(session, &head, turn)?;
    }
    None
}

/// The head a compaction on `head`'s path folded `turn` from: the compaction's summary message is
/// on the path, and `turn` came before the turn it kept.
fn folded_by(session: &Session, head: &HeadId, turn: u64) -> Option<HeadId> {
    let path = session.project(head).ok()?;
    path.iter().rev().find_map(|m| {
        if m.kind != MessageKind::Summary {
            return None;
        }
        let info = session.head(&m.head).ok()?;
        if info.kind != HeadKind::Summary || !info.compaction {
            return None;
        }
        // On the compaction's own head, the summary is followed by the turn it kept.
        let kept = session.project(&m.head).ok()?.get(1).and_then(|n| n.turn)?;
        if turn < kept {
            info.parent_head
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use retrace_protocol::ToolCall;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: "{}".into(),
        }
    }

    fn turn(n: usize, size: usize) -> Vec<ChatMessage> {
        vec![
            ChatMessage::user(format!("prompt {n} {}", "p".repeat(size))),
            ChatMessage::assistant("", vec![call(&format!("c{n}"))]),
            ChatMessage::tool(format!("c{n}"), "t".repeat(size)),
            ChatMessage::assistant(format!("answer {n}"), vec![]),
        ]
    }

    fn request(turns: usize, size: usize) -> Vec<ChatMessage> {
        let mut m: Vec<ChatMessage> = (0..turns).flat_map(|n| turn(n, size)).collect();
        m.push(ChatMessage::user("SUMMARIZE"));
        m
    }

    #[test]
    fn a_request_that_fits_is_left_alone() {
        let m = request(3, 100);
        assert_eq!(fit(m.clone(), 100_000), m);
    }

    #[test]
    fn long_messages_are_cut_and_the_oldest_turns_left_out_whole() {
        let m = fit(request(10, 20_000), 12_000);
        assert!(history_tokens(&m) <= 12_000, "{}", history_tokens(&m));
        assert_eq!(m.last().unwrap().content, "SUMMARIZE");
        assert!(
            m[0].content.contains("earlier messages are left out"),
            "{}",
            m[0].content
        );
        assert!(m.iter().all(|x| x.content.len() <= MAX_MESSAGE_SUMMARIZED + 64));
        // Every tool call kept keeps its result: whole turns were left out.
        let calls: Vec<&str> = m
            .iter()
            .flat_map(|x| &x.tool_calls)
            .map(|c| c.id.as_str())
            .collect();
        let results: Vec<&str> = m.iter().filter_map(|x| x.tool_call_id.as_deref()).collect();
        assert_eq!(calls, results);
        assert!(
            m.iter().any(|x| x.content.starts_with("prompt 9")),
            "the newest turn stays"
        );
    }

    #[test]
    fn one_turn_too_long_alone_is_cut_evenly() {
        let m = fit(request(1, 200_000), 2_000);
        assert!(history_tokens(&m) <= 2_500, "{}", history_tokens(&m));
        assert!(m[0].content.starts_with("prompt 0"));
        assert_eq!(m.last().unwrap().content, "SUMMARIZE");
    }
}
