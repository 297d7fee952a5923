//! The entries of a session log: one JSON object per line, told apart by `type`.
//!
//! These types are the format (documented field by field in `docs/FORMATS.md`, section "Session
//! log"). Keys are snake_case; readers ignore keys they do not know; an optional key is left out when
//! it has no value, except `parent` and `from`, which are always written (`null` at the root).

use serde::{Deserialize, Serialize};

use crate::ids::{HeadId, MessageId, SessionId};
pub use retrace_protocol::{CheckpointBackend, HeadKind, Role, TokenUsage, ToolCall, ToolRecord};

/// The log format this version writes. Format 1 (flat `{role, content}` lines) is read only.
pub const FORMAT: u32 = 2;

/// One line of a format-2 log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Entry {
    /// The header: always the first line, and only there.
    Session(Header),
    /// A conversation message appended to a head.
    Message(MessageEntry),
    /// A turn started: its number and its user message (the line just before).
    Turn(TurnEntry),
    /// A new head whose path is a prefix of another head's path (or the empty `main`).
    Fork(ForkEntry),
    /// A head became the selected one (`/switch`).
    Select(HeadEvent),
    /// A head was retired: kept, readable, no longer offered.
    Retire(HeadEvent),
    /// A new head made of part of another head's path plus one summary message.
    Summary(SummaryEntry),
    /// A system note for the model on a head (projected as a `system` message, never a turn).
    Note(NoteEntry),
    /// Plan mode was turned on or off for the session (the last such line is in effect).
    PlanMode(PlanModeEntry),
    /// The model a turn ran with, when it differs from the last one recorded (the last such line
    /// is the model a resumed session keeps).
    Model(ModelEntry),
}

/// The header line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// The session id (the stem of the log's file name).
    pub id: SessionId,
    /// The workspace root, canonical, absolute.
    pub workspace: String,
    /// When the session was created (RFC 3339).
    pub created_at: String,
    /// Always [`FORMAT`] (2).
    pub format: u32,
    /// Set when this session was made from another one (a format-1 log being written to, a fork
    /// into a new workspace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<ForkedFrom>,
    /// Where the session keeps what its turns change, chosen when it was created (left out:
    /// `snapshot`, which every session before this field had).
    #[serde(default, skip_serializing_if = "CheckpointBackend::is_default")]
    pub backend: CheckpointBackend,
}

/// Where a session came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkedFrom {
    /// The source session's id.
    pub session_id: SessionId,
    /// The source log's format (1 for an old flat log being written to; 2 for a fork into a new
    /// workspace).
    pub format: u32,
    /// How many of the source's messages were copied (the first `messages` of its path).
    pub messages: usize,
    /// A fork into a new workspace: the turn it was made at (the copied path ends just before
    /// it; the files are the source workspace's as they stood when it started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u64>,
    /// A fork into a new workspace: the source head whose path was copied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<HeadId>,
    /// A fork into a new workspace: the directory made for it (canonical; the workspace itself,
    /// or the worktree the workspace is inside).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory: Option<String>,
    /// Whether `directory` is a `git worktree` of the source's repository (else a copy).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub git_worktree: bool,
    /// A fork into a new workspace: what identifies `directory` as the one the fork made, so
    /// that removing it never removes another directory that stands at that path since. Absent
    /// in sessions made before it was recorded (their directory is then never removed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub made: Option<MadeDir>,
}

/// What identifies the directory a fork into a new workspace made, recorded when it was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MadeDir {
    /// Its device number (`st_dev`).
    pub dev: u64,
    /// Its inode number (`st_ino`).
    pub ino: u64,
    /// When it was created, in nanoseconds since the Unix epoch, when the file system says
    /// (an inode number can be reused once the directory is gone; a creation time then differs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub born: Option<u64>,
    /// For a `git worktree`: its administrative directory in the source repository
    /// (`<repository>/.git/worktrees/<name>`, canonical), which the worktree's `.git` file names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_admin: Option<String>,
}

/// A `message` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageEntry {
    /// The message id.
    pub id: MessageId,
    /// The previous message on the head's path at the time of writing; `null` at the root.
    pub parent: Option<MessageId>,
    /// The head it was appended to.
    pub head: HeadId,
    /// Who wrote it.
    pub role: Role,
    /// The text.
    pub content: String,
    /// Tool calls of an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool result: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For an assistant message: the tokens of the model request that produced it, when the
    /// server counted them. Absent in logs written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<TokenUsage>,
    /// For an assistant message: the reasoning the model streamed before it (shown, never sent
    /// back to the model). Absent when there was none, and in older logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// For a tool result: how the call ended and what it changed. Absent in older logs (a reader
    /// then takes a result starting `error:` as failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<crate::record::StoredOutcome>,
    /// When it was written (RFC 3339).
    pub at: String,
}

/// A `turn` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnEntry {
    /// The turn number: unique in the session, increasing in the log.
    pub turn: u64,
    /// The head the turn ran on.
    pub head: HeadId,
    /// The turn's user message (written on `head`, before this line).
    pub message_id: MessageId,
    /// When the turn started (RFC 3339).
    pub at: String,
}

/// A `fork` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkEntry {
    /// The new head's id.
    pub head: HeadId,
    /// Its kind.
    pub kind: HeadKind,
    /// The last message of the new head's path (it is the path of `parent_head` up to and including
    /// this message); `null` for an empty path.
    pub from: Option<MessageId>,
    /// The head it was forked from; `null` only for `main`.
    pub parent_head: Option<HeadId>,
    /// A name the user gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// When (RFC 3339).
    pub at: String,
}

/// A `select` or `retire` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeadEvent {
    /// The head.
    pub head: HeadId,
    /// When (RFC 3339).
    pub at: String,
}

/// A `plan_mode` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanModeEntry {
    /// Whether plan mode is on from here.
    pub on: bool,
    /// When (RFC 3339).
    pub at: String,
}

/// A `model` line: the model choice, never a secret (nor where a key is read from: the frontend
/// that reopens the session takes that from its own configuration).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelEntry {
    /// The model as `--model` takes it: `demo`, `script:/path/to/file`, `openai:gpt-4o`.
    pub spec: String,
    /// The API root it was given, if another than the provider's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// When (RFC 3339).
    pub at: String,
}

/// Which side of a turn a summary replaces (SPEC §5.1 actions 5 and 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SummaryMode {
    /// "Summarize from here": the turn and everything after it become the summary.
    From,
    /// "Summarize up to here": everything before the turn becomes the summary.
    UpTo,
}

/// An inclusive range of a head's path, by its first and last message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathRange {
    /// The first message of the range.
    pub first: MessageId,
    /// The last message of the range.
    pub last: MessageId,
}

/// A `summary` line: creates a head and its summary message at once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryEntry {
    /// The new head's id (its kind is `summary`).
    pub head: HeadId,
    /// The head summarized (left untouched).
    pub parent_head: HeadId,
    /// `from` or `up_to`.
    pub mode: SummaryMode,
    /// The turn the user chose.
    pub turn: u64,
    /// The part of `parent_head`'s path the summary replaces.
    pub replaces: PathRange,
    /// The part of `parent_head`'s path kept verbatim: the prefix before the turn (`from`; `null`
    /// when the turn opened the path) or the suffix from the turn's user message (`up_to`).
    pub kept: Option<PathRange>,
    /// The summary message's id.
    pub id: MessageId,
    /// The message before the summary on the new path: `kept.last` for `from`, `null` for `up_to`.
    pub parent: Option<MessageId>,
    /// The summary message's role (always `user`).
    pub role: Role,
    /// The summary text, written by the model.
    pub content: String,
    /// A name the user gave the head.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Made by a compaction (`compact`, or automatically when the context filled up): a
    /// conversation rewind to a turn it folded forks from `parent_head`. Written only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub compaction: bool,
    /// What the server counted for the request that wrote the summary, when it reported it
    /// (counted in the session's tally like a turn's requests; absent in older logs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<TokenUsage>,
    /// When (RFC 3339).
    pub at: String,
}

/// A `note` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteEntry {
    /// The note's message id.
    pub id: MessageId,
    /// The previous message on the head's path; `null` at the root.
    pub parent: Option<MessageId>,
    /// The head it was appended to.
    pub head: HeadId,
    /// The text shown to the model as a `system` message.
    pub content: String,
    /// When (RFC 3339).
    pub at: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_serialise_with_a_type_tag_and_snake_case() {
        let e = Entry::Fork(ForkEntry {
            head: HeadId::new("h-1"),
            kind: HeadKind::Rewind,
            from: None,
            parent_head: Some(HeadId::main()),
            name: None,
            at: "2026-01-01T00:00:00Z".into(),
        });
        let text = serde_json::to_string(&e).unwrap();
        assert_eq!(
            text,
            r#"{"type":"fork","head":"h-1","kind":"rewind","from":null,"parent_head":"main","at":"2026-01-01T00:00:00Z"}"#
        );
        assert_eq!(serde_json::from_str::<Entry>(&text).unwrap(), e);
        let mode = serde_json::to_string(&SummaryMode::UpTo).unwrap();
        assert_eq!(mode, r#""up_to""#);
    }

    #[test]
    fn unknown_keys_are_ignored_and_optional_ones_default() {
        let line = r#"{"type":"message","id":"m","parent":null,"head":"main","role":"tool","content":"ok","tool_call_id":"c1","at":"t","extra":1}"#;
        let Entry::Message(m) = serde_json::from_str::<Entry>(line).unwrap() else {
            panic!("not a message");
        };
        assert!(m.tool_calls.is_empty());
        assert_eq!(m.tool_call_id.as_deref(), Some("c1"));
        assert_eq!(m.usage, None, "logs from before usage was recorded read as none");
    }

    #[test]
    fn an_assistant_message_keeps_its_usage() {
        let line = r#"{"type":"message","id":"m","parent":null,"head":"main","role":"assistant","content":"hi","usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15},"at":"t"}"#;
        let e = serde_json::from_str::<Entry>(line).unwrap();
        let Entry::Message(m) = &e else {
            panic!("not a message");
        };
        assert_eq!(
            m.usage,
            Some(TokenUsage {
                prompt_tokens: 12,
                completion_tokens: 3,
                total_tokens: 15,
                cached_tokens: 0
            })
        );
        assert_eq!(serde_json::to_string(&e).unwrap(), line);
    }
}
