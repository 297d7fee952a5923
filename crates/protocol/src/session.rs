//! Sessions, heads and transcripts as the CLI (`--json`) and the HTTP API show them (SPEC §11).

use serde::{Deserialize, Serialize};

/// One session of a workspace (`retrace sessions`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionEntry {
    /// The session id.
    pub id: String,
    /// The workspace its header records (null for old flat logs).
    pub workspace: Option<String>,
    /// When it was created.
    pub created_at: Option<String>,
    /// Its log file.
    pub log_path: String,
    /// Its checkpoint sidecar directory.
    pub checkpoint_dir: String,
    /// How many heads it has.
    pub heads: usize,
    /// How many turns it has.
    pub turns: usize,
}

/// A tool call in a transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TranscriptToolCall {
    /// The call id.
    pub id: String,
    /// The tool.
    pub name: String,
    /// The arguments (JSON text as the model gave them).
    pub arguments: String,
}

/// One message of a head (`retrace transcript`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TranscriptEntry {
    /// The message id.
    pub id: String,
    /// `user`, `assistant`, `system` or `tool`.
    pub role: String,
    /// The text.
    pub content: String,
    /// Tool calls of an assistant message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<TranscriptToolCall>>,
    /// For a tool result: the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The turn this message opened, when it is a turn's user message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u64>,
}

/// One head (`retrace heads`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeadEntry {
    /// The head id.
    pub id: String,
    /// `main`, `fork`, `rewind` or `summary`.
    pub kind: String,
    /// Its name, if the user gave one.
    pub name: Option<String>,
    /// The head it came from.
    pub parent_head: Option<String>,
    /// The message it was forked from.
    pub fork_from: Option<String>,
    /// Whether it is selected.
    pub selected: bool,
    /// Whether it was retired.
    pub retired: bool,
    /// Messages on its path.
    pub message_count: usize,
    /// Turns visible on it.
    pub turns: usize,
    /// Its latest activity (RFC 3339).
    pub last_activity: Option<String>,
}
