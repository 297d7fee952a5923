//! The checkpoint listing (`SPEC.md` §7 `checkpoints()`).

use serde::{Deserialize, Serialize};

/// How completely a turn's checkpoint can restore the code it touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Coverage {
    /// Written by the oldest format (v1): content kept, but no after-image to prove ownership.
    Legacy,
    /// Some change of the turn is not restorable (a gap) or a payload expired.
    Partial,
    /// Every touched file has a before-image and nothing escaped tracking.
    Complete,
    /// The turn touched no file and recorded no gap.
    None,
}

impl Coverage {
    /// The wire name (`legacy`, `partial`, `complete`, `none`).
    pub fn as_str(self) -> &'static str {
        match self {
            Coverage::Legacy => "legacy",
            Coverage::Partial => "partial",
            Coverage::Complete => "complete",
            Coverage::None => "none",
        }
    }
}

/// Why part of a turn's effect cannot be restored. Unknown reasons written by other versions are
/// kept verbatim in [`GapReason::Other`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GapReason {
    /// A shell command ran; its effects are not tracked. `detail` holds the command line.
    BashSideEffect,
    /// An MCP tool that the server does not mark read-only ran; its effects are not tracked.
    /// `tool` is `mcp__SERVER__TOOL`, `detail` holds `SERVER/TOOL` (one line per tool).
    McpSideEffect,
    /// The path was reached through a symlink inside the workspace.
    Symlink,
    /// The file has several hard links; restoring one name would not restore the others.
    Hardlink,
    /// The file was larger than `max_file_bytes`: hashed, but its bytes were not kept.
    Oversized,
    /// The file (or a record) could not be read.
    Unreadable,
    /// A path outside the workspace was involved.
    OutsideWorkspace,
    /// Another writer changed the workspace while the turn ran.
    ExternalWriter,
    /// Outside what was tracked before a shell command (ignored, inside a repository of its own,
    /// in a directory that could not be read) and in sight after it, or the reverse: its state on
    /// the other side is not known, so it is left as it is.
    Untracked,
    /// A v1 record: its content cannot be proven to be what Retrace last wrote.
    LegacyUnverified,
    /// The payload of a legacy record was expired by retention.
    ExpiredPayload,
    /// A reason this version does not know, kept verbatim.
    Other(String),
}

impl GapReason {
    /// The wire name of the reason; older names are mapped on parse, see [`GapReason::parse`].
    pub fn as_str(&self) -> &str {
        match self {
            GapReason::BashSideEffect => "bash_side_effect",
            GapReason::McpSideEffect => "mcp_side_effect",
            GapReason::Symlink => "symlink",
            GapReason::Hardlink => "hardlink",
            GapReason::Oversized => "oversized",
            GapReason::Unreadable => "unreadable",
            GapReason::OutsideWorkspace => "outside_workspace",
            GapReason::ExternalWriter => "external_writer",
            GapReason::Untracked => "untracked",
            GapReason::LegacyUnverified => "legacy_unverified",
            GapReason::ExpiredPayload => "expired_payload",
            GapReason::Other(s) => s,
        }
    }

    /// A call whose effects are not tracked (a shell command, an MCP tool): a gap without a
    /// path, whose `detail` collects one line per call, that may have changed any file.
    pub fn is_side_effect(&self) -> bool {
        matches!(self, GapReason::BashSideEffect | GapReason::McpSideEffect)
    }

    /// Parses a stored reason, mapping names older versions wrote (`expired_file_payload`).
    pub fn parse(s: &str) -> GapReason {
        match s {
            "bash_side_effect" => GapReason::BashSideEffect,
            "mcp_side_effect" => GapReason::McpSideEffect,
            "symlink" => GapReason::Symlink,
            "hardlink" => GapReason::Hardlink,
            "oversized" => GapReason::Oversized,
            "unreadable" => GapReason::Unreadable,
            "outside_workspace" => GapReason::OutsideWorkspace,
            "external_writer" => GapReason::ExternalWriter,
            "untracked" => GapReason::Untracked,
            "legacy_unverified" => GapReason::LegacyUnverified,
            "expired_payload" | "expired_file_payload" => GapReason::ExpiredPayload,
            other => GapReason::Other(other.to_string()),
        }
    }
}

impl Serialize for GapReason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for GapReason {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(GapReason::parse(&s))
    }
}

/// One coverage gap of a turn: at most one per reason and path. Sent with `says`, the gap in
/// words (`said.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Gap {
    /// Why this part is not restorable.
    pub reason: GapReason,
    /// The tool that caused it, when known (`bash`, `edit_file`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The workspace path concerned, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Free text: the command line of a shell gap, the error of an unreadable file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Gap {
    /// A gap with only a reason.
    pub fn new(reason: GapReason) -> Gap {
        Gap {
            reason,
            tool: None,
            path: None,
            detail: None,
        }
    }
}

/// One turn as the checkpoint list shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointEntry {
    /// The turn number (monotonic per session, never reused).
    pub turn: u64,
    /// When the turn started, RFC 3339 as recorded.
    pub time: String,
    /// The user's prompt, verbatim.
    pub prompt: String,
    /// The head the turn ran on (null for records that predate heads).
    pub head: Option<String>,
    /// The id of the turn's user message (null for records that predate it).
    pub message_id: Option<String>,
    /// Messages on the head before this turn's user message.
    pub msg_index: Option<u64>,
    /// Workspace paths the turn touched, in first-touch order.
    pub paths: Vec<String>,
    /// Number of distinct files touched.
    pub file_count: usize,
    /// Bytes of before-image payload kept for the turn.
    pub bytes: u64,
    /// How completely the turn can be restored.
    pub coverage: Coverage,
    /// What the turn could not track.
    pub gaps: Vec<Gap>,
    /// Whether a code restore to this turn is offered (null for a bare sidecar listing).
    pub can_restore_code: Option<bool>,
    /// Whether a conversation restore to this turn is offered (null without a session).
    pub can_restore_conversation: Option<bool>,
    /// Why an action is unavailable, when one is.
    pub disabled_reason: Option<String>,
    /// Whether the turn's user message is on the current head (null without a session).
    pub visible: Option<bool>,
    /// Lines the turn added, over the text files it changed (its results' +); absent for a turn
    /// recorded before turn results, or still running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added: Option<u64>,
    /// Lines it removed, likewise (its results' −).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed: Option<u64>,
    /// What the user can do from this turn, in the order every frontend offers them (restore
    /// code and conversation, conversation, code, fork, summarize from, summarize up to, fork into
    /// a new workspace), each
    /// with whether it is available and why not. Empty for a bare sidecar listing.
    #[serde(default)]
    pub actions: Vec<CheckpointAction>,
}

/// An action on a checkpoint, as every frontend names and offers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    /// Restore the files and the conversation to the turn's start.
    RestoreBoth,
    /// Restore the conversation (a new head ending just before the turn); files untouched.
    RestoreConversation,
    /// Restore the files the turn and later ones changed; the conversation untouched.
    RestoreCode,
    /// A new head ending just before the turn, the current one kept.
    Fork,
    /// Summarize the conversation from this turn on into a new head.
    SummarizeFrom,
    /// Summarize the conversation before this turn into a new head.
    SummarizeUpTo,
    /// A new session in a new workspace: the conversation up to just before the turn, the files
    /// as they stood when it started; this session and its files untouched.
    ForkWorkspace,
}

impl ActionKind {
    /// Every action, in the order frontends offer them (the terminal UI's keys `1`–`7`).
    pub const ALL: [ActionKind; 7] = [
        ActionKind::RestoreBoth,
        ActionKind::RestoreConversation,
        ActionKind::RestoreCode,
        ActionKind::Fork,
        ActionKind::SummarizeFrom,
        ActionKind::SummarizeUpTo,
        ActionKind::ForkWorkspace,
    ];

    /// The name every frontend shows.
    pub fn label(self) -> &'static str {
        match self {
            ActionKind::RestoreBoth => "Restore code and conversation",
            ActionKind::RestoreConversation => "Restore conversation",
            ActionKind::RestoreCode => "Restore code",
            ActionKind::Fork => "Fork from here",
            ActionKind::SummarizeFrom => "Summarize from here",
            ActionKind::SummarizeUpTo => "Summarize up to here",
            ActionKind::ForkWorkspace => "Fork into a new workspace",
        }
    }

    /// What it does, in one line every frontend shows beside the label (how a restore of the
    /// conversation differs from a fork, which actions change files).
    pub fn detail(self) -> &'static str {
        match self {
            ActionKind::RestoreBoth => {
                "Files and conversation go back to just before this turn; its prompt comes back to edit."
            }
            ActionKind::RestoreConversation => {
                "The conversation goes back to just before this turn (a new head; the old one is kept) and its prompt comes back to edit; files stay as they are."
            }
            ActionKind::RestoreCode => {
                "Files the agent changed go back to how they were before this turn; the conversation stays."
            }
            ActionKind::Fork => {
                "A new head that ends just before this turn, selected; the prompt is not put back and no file changes."
            }
            ActionKind::SummarizeFrom => {
                "A new head where this turn and every later one become one summary; earlier messages stay."
            }
            ActionKind::SummarizeUpTo => {
                "A new head where everything before this turn becomes one summary; this turn and later stay."
            }
            ActionKind::ForkWorkspace => {
                "A new session in a new directory: the conversation up to just before this turn, the files as they were when it started; this session and its files stay as they are."
            }
        }
    }

    /// The rewind scope of a restore action.
    pub fn scope(self) -> Option<crate::event::RewindScope> {
        use crate::event::RewindScope;
        match self {
            ActionKind::RestoreBoth => Some(RewindScope::Both),
            ActionKind::RestoreConversation => Some(RewindScope::Conversation),
            ActionKind::RestoreCode => Some(RewindScope::Code),
            _ => None,
        }
    }
}

/// One action of a checkpoint entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointAction {
    /// Which action.
    pub action: ActionKind,
    /// Its name, as every frontend shows it.
    pub label: String,
    /// What it does, in one line (`ActionKind::detail`).
    #[serde(default)]
    pub detail: String,
    /// Whether it can be taken now.
    pub available: bool,
    /// Why not, when it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// True for the restores: a plan is prepared and shown (`prepare_rewind`) before anything is
    /// committed, in every frontend.
    pub preview: bool,
}

/// What an edit tool's preview says it will do to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// The path does not exist yet and will be created.
    Create,
    /// The file exists and will be changed.
    Modify,
    /// The file exists and will be deleted.
    Delete,
}

/// A session's or sidecar's checkpoint list with what a listing shows around it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointListing {
    /// The turns, oldest first.
    pub entries: Vec<CheckpointEntry>,
    /// The sidecar directory.
    pub sidecar: String,
    /// Bytes the sidecar takes on disk (records, payloads, transactions).
    pub total_bytes: u64,
    /// The number the next turn will get.
    pub next_turn: u64,
    /// Records that could not be read (each names its file); the other turns are still listed.
    pub problems: Vec<crate::fsck::FsckProblem>,
}
