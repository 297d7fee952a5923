//! The data a model client takes and gives back: messages, tool calls and specs, streamed deltas and
//! the assembled response. Plain data, no behaviour beyond constructors.

use serde::{Deserialize, Serialize};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Instructions for the model (and Retrace's notes after a code-only restore).
    System,
    /// The user's prompt (or a summary standing in for earlier messages).
    User,
    /// The model's answer, possibly with tool calls.
    Assistant,
    /// The result of one tool call, answering `tool_call_id`.
    Tool,
}

/// One message of the conversation sent to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who wrote it.
    pub role: Role,
    /// Its text (may be empty for an assistant message that only calls tools).
    pub content: String,
    /// The tool calls of an assistant message; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a `tool` message: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl ChatMessage {
    /// A system message.
    pub fn system(content: impl Into<String>) -> ChatMessage {
        ChatMessage::plain(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> ChatMessage {
        ChatMessage::plain(Role::User, content)
    }

    /// An assistant message with its tool calls (possibly none).
    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> ChatMessage {
        ChatMessage {
            role: Role::Assistant,
            content: content.into(),
            tool_calls,
            tool_call_id: None,
        }
    }

    /// The result of the tool call `tool_call_id`.
    pub fn tool(tool_call_id: impl Into<String>, content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role: Role::Tool,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(tool_call_id.into()),
        }
    }

    fn plain(role: Role, content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id, echoed by the tool result (`tool_call_id`).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as JSON text, exactly as the model produced them (an empty string is given as
    /// `{}`); parsing them is the tool's business, so a malformed argument is a tool error the model
    /// sees, not a client failure.
    pub arguments: String,
}

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

/// A piece of a response, reported while it streams (for display; the [`ChatResponse`] is the record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delta {
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

/// Token counts, when the server reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens in the request.
    pub prompt_tokens: u64,
    /// Tokens generated.
    pub completion_tokens: u64,
    /// Their sum, as the server counted it.
    pub total_tokens: u64,
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
