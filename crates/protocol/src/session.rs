//! Sessions, heads and transcripts as the CLI (`--json`) and the HTTP API show them (SPEC §11).

use serde::{Deserialize, Serialize};

use crate::ids::{HeadId, MessageId, SessionId};
use crate::message::{Role, ToolCall};
use crate::usage::TokenUsage;

/// One session of a workspace (`retrace sessions`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionEntry {
    /// The session id.
    pub id: SessionId,
    /// The log's format: 2, or 1 for an old flat log (no header, workspace unknown: SPEC §6).
    pub format: u32,
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
    /// The first line of its first prompt (at most 200 characters), what tells sessions apart;
    /// null before its first turn.
    #[serde(default)]
    pub first_prompt: Option<String>,
    /// When its log was last written (RFC 3339, UTC): its last use.
    #[serde(default)]
    pub last_used_at: Option<String>,
    /// Where it came from, when it was made from another session (a fork into a new workspace,
    /// an old flat log's first write).
    #[serde(default)]
    pub forked_from: Option<crate::fork::SessionOrigin>,
    /// The sessions forked from it into new workspaces (their `forked_from` names it), oldest
    /// first.
    #[serde(default)]
    pub forks: Vec<SessionId>,
}

/// Another process that holds a session's writer lease (another `retrace serve`, a terminal UI):
/// this process can read the session, not change it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionHolder {
    /// Its process id (0 when it cannot be told).
    pub pid: u32,
    /// The host it runs on.
    pub host: String,
    /// When it took the lease (RFC 3339), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// What every frontend says about it, in words ([`crate::words::held_elsewhere`]).
    #[serde(default)]
    pub says: String,
}

impl SessionHolder {
    /// The holder `pid` on `host` (`same_host`: this one) since `since`, with its words.
    pub fn new(pid: u32, host: String, same_host: bool, since: Option<String>) -> SessionHolder {
        let says = crate::words::held_elsewhere(pid, (!same_host).then_some(host.as_str()), since.as_deref());
        SessionHolder {
            pid,
            host,
            since,
            says,
        }
    }
}

/// One message of a head (`retrace transcript`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TranscriptEntry {
    /// The message id.
    pub id: MessageId,
    /// Who wrote it.
    pub role: Role,
    /// The text.
    pub content: String,
    /// Tool calls of an assistant message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// For a tool result: the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The turn this message opened, when it is a turn's user message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u64>,
    /// For an assistant message: the tokens of the model request that produced it, when the
    /// server counted them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<TokenUsage>,
}

/// What a head is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HeadKind {
    /// The session's first head.
    Main,
    /// "Fork from here".
    Fork,
    /// A conversation rewind.
    Rewind,
    /// A summary head.
    Summary,
}

impl HeadKind {
    /// The wire name (`main`, `fork`, `rewind`, `summary`).
    pub fn as_str(self) -> &'static str {
        match self {
            HeadKind::Main => "main",
            HeadKind::Fork => "fork",
            HeadKind::Rewind => "rewind",
            HeadKind::Summary => "summary",
        }
    }
}

/// One head (`retrace heads`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeadEntry {
    /// The head id.
    pub id: HeadId,
    /// What it is.
    pub kind: HeadKind,
    /// Its name, if the user gave one.
    pub name: Option<String>,
    /// The head it came from.
    pub parent_head: Option<HeadId>,
    /// The message it was forked from.
    pub fork_from: Option<MessageId>,
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
    /// What every frontend calls it: its name when it has one, else what it is and the prompt of
    /// the turn it was made at (`fork before “fix the parser”`, `rewind before “fix the parser”`,
    /// `summary from “fix the parser”` or `summary up to “fix the parser”`, by the side of the turn
    /// the summary replaced), else `main` or its kind.
    #[serde(default)]
    pub title: String,
}

/// Where a head-changing action (fork, summarize, switch) left the session:
/// `{head_id, session_id}` (the session changes when an old flat log is upgraded by the write).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeadRef {
    /// The head now selected (or made).
    pub head_id: HeadId,
    /// The session it is in.
    pub session_id: SessionId,
    /// What frontends call it (`HeadEntry::title`). Not serialized: the CLI's and the HTTP API's
    /// answer is `{head_id, session_id}` (SPEC §11); their clients read titles from the heads.
    #[serde(skip)]
    pub title: String,
}

/// What a session handle reports about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionStatus {
    /// The session.
    pub session_id: SessionId,
    /// Its workspace root.
    pub workspace: String,
    /// The selected head.
    pub head_id: HeadId,
    /// What runs now (a turn, or a summary being written), if anything.
    pub running: Option<RunningJob>,
    /// The model in use as every frontend labels it (`deepseek:deepseek-chat`, `demo`,
    /// `openai:gpt-4o at http://127.0.0.1:8080` with an endpoint of its own), if one is set up.
    pub model: Option<String>,
    /// The same model as `--model` and a model switch take it and the offered models list it
    /// (`openai:gpt-4o`, `demo`): without its endpoint. Absent when no model is set up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_spec: Option<String>,
    /// Whether plan mode is on (read tools only; SPEC §7 `set_plan_mode`).
    #[serde(default)]
    pub plan_mode: bool,
    /// The checkpoint backend the session was created with (and keeps).
    #[serde(default)]
    pub backend: crate::CheckpointBackend,
    /// The sequence number of the newest event published so far (before the first: the number the
    /// stream starts after). Subscribing with it misses nothing that follows.
    pub last_event_seq: u64,
}

/// What a session is busy with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// A turn: the agent at work.
    Turn,
    /// A summary the model is writing (summarize from / up to a turn).
    Summary,
}

/// The job a session runs: while it runs, requests that write get `turn_running`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunningJob {
    /// A turn or a summary.
    pub kind: JobKind,
    /// The turn running, or the turn a summary starts from / runs up to.
    pub turn: u64,
}

/// A session removed by `sessions delete` or `sessions prune` (or that a dry run would remove).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemovedSession {
    /// The session id.
    pub id: SessionId,
    /// The workspace its header records (null for old flat logs).
    pub workspace: Option<String>,
    /// Its log file (gone now).
    pub log_path: String,
    /// Its checkpoint sidecar directory (gone now).
    pub checkpoint_dir: String,
    /// The bytes its log and sidecar took.
    pub bytes: u64,
    /// When its log was last written (RFC 3339), when known.
    pub last_used: Option<String>,
    /// The directory a fork into a new workspace made for it (a `git worktree` or a copy), when
    /// it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
    /// Whether that directory was removed too (asked for: never by default).
    #[serde(default)]
    pub worktree_removed: bool,
}

/// What `sessions prune` removed, and what it left because a process writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PruneReport {
    /// Removed (or, in a dry run, to be removed), oldest first.
    pub removed: Vec<RemovedSession>,
    /// Old enough but held by a writer (a running `retrace`): left alone.
    pub held: Vec<SessionId>,
    /// Nothing was removed: this is what would be.
    pub dry_run: bool,
}
