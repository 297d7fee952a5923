//! The data a model client takes and gives back: messages, tool calls and specs, streamed deltas and
//! the assembled response. Plain data, no behaviour beyond constructors.

use serde::{Deserialize, Serialize};

pub use retrace_protocol::{ChatMessage, RetryNotice, Role, ToolCall};

/// Token counts, when the server reports them (the protocol's [`retrace_protocol::TokenUsage`]).
pub use retrace_protocol::TokenUsage as Usage;

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of its arguments object.
    pub parameters: serde_json::Value,
}

/// One request to a model: the conversation so far and the tools it may call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatRequest {
    /// The conversation, oldest first.
    pub messages: Vec<ChatMessage>,
    /// The tools offered; empty means none.
    pub tools: Vec<ToolSpec>,
}

/// A piece of a response, reported while it streams (for display; the [`ChatResponse`] is the record),
/// or news about the request itself ([`Delta::Retry`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delta {
    /// The request failed in a way a second try may fix, and is about to be tried again after a
    /// wait. Nothing of the failed attempt was shown (a failure after that is never retried).
    Retry {
        /// A line for the user, e.g. `model: HTTP 429 (rate limit reached), retrying in 2.0 s
        /// (attempt 2 of 4)`.
        message: String,
        /// The same, as data.
        notice: RetryNotice,
    },
    /// Answer text.
    Content(String),
    /// Reasoning text (DeepSeek's `reasoning_content`), shown apart from the answer and never sent back.
    Reasoning(String),
    /// A tool call began.
    ToolCallStart {
        /// Its position in the response's tool calls (the wire `index`).
        index: usize,
        /// Its id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// More of a tool call's JSON arguments.
    ToolCallArgs {
        /// The call's position, as in [`Delta::ToolCallStart`].
        index: usize,
        /// The next piece of the arguments text.
        fragment: String,
    },
}

/// A complete model response.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChatResponse {
    /// The answer text (may be empty when the model only calls tools).
    pub content: String,
    /// Reasoning text, when the model streamed any.
    pub reasoning: Option<String>,
    /// The tool calls, in index order; empty ends the turn.
    pub tool_calls: Vec<ToolCall>,
    /// Why the model stopped (`stop`, `tool_calls`, `length`, …), when the server said.
    pub finish_reason: Option<String>,
    /// Token counts, when the server reported them.
    pub usage: Option<Usage>,
}
