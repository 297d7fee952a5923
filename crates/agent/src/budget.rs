//! The context budget (SPEC §7 `compact`, §10 `context_window`, `compact_at`): how big the next
//! request is, and whether it passes the share of the model's window at which the conversation is
//! compacted first.
//!
//! The size is the last `prompt_tokens` a server reported plus an estimate of what was added since
//! (when the request it counted is a prefix of this one), else an estimate of the whole request.
//! Estimates are cautious ([`retrace_model::estimate_tokens`]), so compaction comes early rather
//! than late.

use retrace_model::{estimate_tokens, ChatMessage, ToolSpec};

/// What is said to the model while plan mode is on (added to the system prompt).
pub const PLAN_MODE_INSTRUCTION: &str = "Plan mode is on: you may read the workspace (read_file, \
list_dir, glob, grep) but not change anything, and no shell commands run. Study what is needed, then \
propose a plan: the files you would change and how, step by step. Do not claim to have changed \
anything. The user will turn plan mode off when they want the plan carried out.";

/// A model's context window and the share of it that triggers compaction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContextBudget {
    /// The window, in tokens.
    pub window: u64,
    /// The share (0 < compact_at ≤ 1) a request may reach before the conversation is compacted.
    pub compact_at: f64,
}

impl Default for ContextBudget {
    fn default() -> Self {
        ContextBudget {
            window: retrace_model::FALLBACK_CONTEXT_WINDOW,
            compact_at: retrace_model::DEFAULT_COMPACT_AT,
        }
    }
}

impl ContextBudget {
    /// The size, in tokens, above which a request is compacted first.
    pub fn threshold(&self) -> u64 {
        let share = if self.compact_at.is_finite() {
            self.compact_at.clamp(0.0, 1.0)
        } else {
            1.0
        };
        (self.window as f64 * share) as u64
    }
}

/// The estimated tokens of one message (its text, its tool calls and a few for the framing).
pub fn message_tokens(m: &ChatMessage) -> u64 {
    4 + estimate_tokens(&m.content)
        + m.tool_calls
            .iter()
            .map(|c| estimate_tokens(&c.name) + estimate_tokens(&c.arguments) + 4)
            .sum::<u64>()
}

/// The estimated tokens of a conversation's messages (without the system prompt and tools).
pub fn history_tokens(history: &[ChatMessage]) -> u64 {
    history.iter().map(message_tokens).sum()
}

/// The estimated tokens of the system prompt and the tool specs.
pub(crate) fn fixed_tokens(system: &str, tools: &[ToolSpec]) -> u64 {
    4 + estimate_tokens(system)
        + tools
            .iter()
            .map(|t| {
                estimate_tokens(&t.name)
                    + estimate_tokens(&t.description)
                    + estimate_tokens(&t.parameters.to_string())
            })
            .sum::<u64>()
}

/// The last request a server counted: its reported size, and the history it was built from (how
/// many messages, and their fingerprint, to recognise it as the prefix of a later one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counted {
    pub(crate) prompt_tokens: u64,
    pub(crate) messages: usize,
    pub(crate) fingerprint: u64,
}

/// A hash of the messages' roles, texts and tool calls (the same messages give the same value
/// within a process).
pub(crate) fn fingerprint(history: &[ChatMessage]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for m in history {
        m.role.hash(&mut h);
        m.content.hash(&mut h);
        m.tool_call_id.hash(&mut h);
        for c in &m.tool_calls {
            c.id.hash(&mut h);
            c.name.hash(&mut h);
            c.arguments.hash(&mut h);
        }
    }
    h.finish()
}

/// The size of a request made of `fixed` (system prompt and tools) and `history`, from the last
/// count when it still applies.
pub(crate) fn request_tokens(fixed: u64, history: &[ChatMessage], last: Option<Counted>) -> u64 {
    if let Some(c) = last {
        if c.messages <= history.len() {
            let (prefix, added) = history.split_at(c.messages);
            if fingerprint(prefix) == c.fingerprint {
                // A server may report any number: saturate rather than overflow.
                return c
                    .prompt_tokens
                    .saturating_add(added.iter().map(message_tokens).sum::<u64>());
            }
        }
    }
    fixed.saturating_add(history.iter().map(message_tokens).sum::<u64>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threshold_is_the_share_of_the_window() {
        let b = ContextBudget {
            window: 1000,
            compact_at: 0.8,
        };
        assert_eq!(b.threshold(), 800);
        let b = ContextBudget {
            window: 1000,
            compact_at: f64::NAN,
        };
        assert_eq!(b.threshold(), 1000);
    }

    #[test]
    fn a_count_applies_while_its_history_is_a_prefix() {
        let h = vec![
            ChatMessage::user("a".repeat(400)),
            ChatMessage::assistant("b".repeat(40), vec![]),
        ];
        let last = Counted {
            prompt_tokens: 5000,
            messages: 1,
            fingerprint: fingerprint(&h[..1]),
        };
        assert_eq!(request_tokens(10, &h, Some(last)), 5000 + message_tokens(&h[1]));
        // Another history (a rewind, a compaction): estimated whole.
        let other = vec![ChatMessage::user("c".repeat(400))];
        assert_eq!(
            request_tokens(10, &other, Some(last)),
            10 + message_tokens(&other[0])
        );
        assert_eq!(request_tokens(10, &[], Some(last)), 10);
    }

    #[test]
    fn a_reported_count_of_any_size_saturates() {
        let h = vec![ChatMessage::user("a"), ChatMessage::assistant("b", vec![])];
        let last = Counted {
            prompt_tokens: u64::MAX,
            messages: 1,
            fingerprint: fingerprint(&h[..1]),
        };
        assert_eq!(request_tokens(10, &h, Some(last)), u64::MAX);
    }
}
