//! What readers of a session see: projected messages, heads, turns and boundaries.

use serde::Serialize;

use retrace_protocol::ChatMessage;

use crate::entry::{HeadKind, Role, TokenUsage, ToolCall};
use crate::ids::{HeadId, MessageId};

/// Where a message on a path came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageKind {
    /// A `message` line: part of the conversation.
    Message,
    /// A `note` line: a system note for the model, never a turn.
    Note,
    /// The message of a `summary` line.
    Summary,
}

/// One message of a head's conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Message {
    /// The message id.
    pub id: MessageId,
    /// Which kind of line it came from.
    pub kind: MessageKind,
    /// Who wrote it (`system` for notes, `user` for summaries).
    pub role: Role,
    /// The text.
    pub content: String,
    /// Tool calls of an assistant message.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool result: the call it answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// When it was written (RFC 3339). Format-1 logs record no times: their messages carry the
    /// log file's modification time.
    pub at: String,
    /// The head it was appended to (it may be on the paths of many heads).
    pub head: HeadId,
    /// The turn it opened, when it is a turn's user message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<u64>,
    /// For an assistant message: the tokens of the request that produced it, when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<TokenUsage>,
    /// For an assistant message: the reasoning streamed before it, when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// For a tool result: how the call ended and what it changed, when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<crate::record::StoredOutcome>,
}

impl Message {
    /// The message as a model sees it (role, text, tool calls, the call it answers).
    pub fn to_chat(&self) -> ChatMessage {
        ChatMessage {
            role: self.role,
            content: self.content.clone(),
            tool_calls: self.tool_calls.clone(),
            tool_call_id: self.tool_call_id.clone(),
        }
    }
}

/// One head, as `retrace heads` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeadInfo {
    /// The head id.
    pub id: HeadId,
    /// What it is.
    pub kind: HeadKind,
    /// The name the user gave it.
    pub name: Option<String>,
    /// The head it was forked or summarized from; `None` for `main`.
    pub parent_head: Option<HeadId>,
    /// The message it was forked from (the last message it shares with `parent_head`); `None` for
    /// `main`, a fork from the empty path, and an "up to" summary head.
    pub fork_from: Option<MessageId>,
    /// Whether it is the selected head.
    pub selected: bool,
    /// Whether it was retired.
    pub retired: bool,
    /// A summary head made by a compaction.
    pub compaction: bool,
    /// Messages on its path (notes and the summary message included).
    pub message_count: usize,
    /// Turns visible on it (whose user message is on its path).
    pub turns: usize,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// The newest of: its creation, the last message appended to it, its last selection.
    pub last_activity: String,
}

/// One turn of the session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TurnInfo {
    /// The turn number.
    pub turn: u64,
    /// The head it ran on.
    pub head: HeadId,
    /// Its user message.
    pub message_id: MessageId,
    /// When it started (RFC 3339).
    pub at: String,
}

/// Where a turn starts on a head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Boundary {
    /// Messages on the head before the turn's user message (the checkpoint's `msgIndex`).
    pub index: usize,
    /// The message just before the turn's user message, `None` when it opens the path: a rewind
    /// that "ends just before this turn" forks from here.
    pub before: Option<MessageId>,
}

/// A turn seen from one head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TurnOnHead {
    /// The turn.
    #[serde(flatten)]
    pub info: TurnInfo,
    /// Its boundary on this head; `None` when the turn is not visible here.
    pub boundary: Option<Boundary>,
}

impl TurnOnHead {
    /// Whether the turn's user message is on the head's path.
    pub fn visible(&self) -> bool {
        self.boundary.is_some()
    }
}
