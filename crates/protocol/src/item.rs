//! The typed items of a session's view: what every frontend renders, decided once by the controller.
//!
//! A session is shown as a list of [`Item`]s in order: each turn's prompt, its checkpoint, the
//! model's text and tool calls, and notes (restores, compactions, model switches). Every item has a
//! stable id: the same id names the same item in the live event stream, in a snapshot taken at any
//! time, and after the session is reopened. Live events create an item (`item_started`), extend its
//! text (`assistant_delta`, `reasoning_delta` with `item_id`) and replace it whole by id
//! (`item_updated`, `item_completed`).

use serde::{Deserialize, Serialize};

use crate::checkpoint::{Coverage, Gap};
use crate::ids::HeadId;
use crate::session::{HeadEntry, SessionStatus};

/// The most bytes of a tool's output an item carries (the model saw up to the tool's own cap).
pub const ITEM_OUTPUT_CAP: usize = 16 * 1024;
/// The most bytes of one file's diff an item carries; a longer diff is cut at a line boundary and
/// says so (`diff_truncated`).
pub const ITEM_DIFF_CAP: usize = 64 * 1024;

/// One item of a session's view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// Stable id (see the module documentation for how ids are made).
    pub id: String,
    /// The turn it belongs to; `None` for notes outside a turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u64>,
    /// What it is.
    #[serde(flatten)]
    pub body: ItemBody,
}

/// What an item is, tagged `kind` in snake_case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ItemBody {
    /// The user's prompt that opened a turn.
    UserPrompt {
        /// The prompt.
        text: String,
    },
    /// What the model wrote in one step, and its reasoning when the model streamed any.
    AssistantText {
        /// The answer text.
        text: String,
        /// The reasoning (DeepSeek's `reasoning_content`), shown apart from the answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning: Option<String>,
    },
    /// A tool call and, once it ran, its result.
    ToolCall(Box<ToolCallItem>),
    /// The turn's checkpoint: what it captured so far and how completely it can be restored.
    Checkpoint(CheckpointItem),
    /// Something Retrace tells the user (and, for restores, the model) in the conversation.
    Note(NoteItem),
}

/// Where a tool call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    /// Called, not answered yet.
    Running,
    /// It succeeded.
    Ok,
    /// It failed (the model got the error as its result).
    Failed,
    /// It was not run: the user declined it, or plan mode refused it.
    Denied,
    /// It was not run, or stopped, because the turn was cancelled (or ended without answering it).
    Cancelled,
}

impl ToolStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolStatus::Running => "running",
            ToolStatus::Ok => "ok",
            ToolStatus::Failed => "failed",
            ToolStatus::Denied => "denied",
            ToolStatus::Cancelled => "cancelled",
        }
    }
}

/// A tool call as every frontend shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallItem {
    /// The model's call id.
    pub call_id: String,
    /// The tool's name (`edit_file`).
    pub tool: String,
    /// One line saying what the call does ("Edit src/main.rs", "Run cargo test"); once it ran
    /// (`ok`), what it did ("Edited src/main.rs", "Created a.txt", "Ran cargo test"). Every frontend
    /// shows it as it is.
    pub title: String,
    /// The path or command it acts on, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The arguments as a JSON object (the model's text when it was not valid JSON, as a string);
    /// a string longer than [`ITEM_OUTPUT_CAP`] bytes is cut and ends `… (N bytes in all)`.
    pub arguments: serde_json::Value,
    /// Where it stands.
    pub status: ToolStatus,
    /// The text given back to the model, cut to [`ITEM_OUTPUT_CAP`] bytes.
    #[serde(default)]
    pub output: String,
    /// True when `output` was cut.
    #[serde(default, skip_serializing_if = "is_false")]
    pub output_truncated: bool,
    /// The files it changed (or, while running, will change), each with its diff.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<FileChange>,
    /// What it did that cannot be restored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<Gap>,
    /// A shell command's exit code, when it exited (a call with status `ok` whose code is not 0
    /// failed, and every frontend says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
}

/// What a tool call does to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeAction {
    /// The file is new.
    Create,
    /// The file's bytes (or mode) changed.
    Modify,
    /// The file is gone.
    Delete,
    /// The file was renamed (`from` is its old path).
    Move,
}

/// One file's change, with a unified diff computed once, in Rust.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// The workspace-relative path (for a move, the destination).
    pub path: String,
    /// What happened to it.
    pub action: ChangeAction,
    /// For a move: where it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The unified diff (`@@` hunks, 3 lines of context, no `---`/`+++` header); empty when the
    /// file is binary or the text did not change.
    #[serde(default)]
    pub diff: String,
    /// Lines added.
    pub added: u64,
    /// Lines removed.
    pub removed: u64,
    /// True when either side is not UTF-8 text: no diff, sizes instead.
    #[serde(default, skip_serializing_if = "is_false")]
    pub binary: bool,
    /// True when `diff` was cut at [`ITEM_DIFF_CAP`] bytes (the counts are still whole).
    #[serde(default, skip_serializing_if = "is_false")]
    pub diff_truncated: bool,
    /// True when the diff was computed but is no longer there to show (the session keeps diffs
    /// apart from its log, without an fsync: a power loss can lose the last ones; the counts are
    /// whole). See `docs/FORMATS.md`, "Diffs of tool results".
    #[serde(default, skip_serializing_if = "is_false")]
    pub diff_lost: bool,
}

impl ChangeAction {
    /// What happened to the file, as every frontend says it (`created`, `modified`, `deleted`,
    /// `moved`).
    pub fn past_tense(self) -> &'static str {
        match self {
            ChangeAction::Create => "created",
            ChangeAction::Modify => "modified",
            ChangeAction::Delete => "deleted",
            ChangeAction::Move => "moved",
        }
    }
}

impl FileChange {
    /// A modification that changed no line (a file rewritten with the text it had).
    pub fn is_noop(&self) -> bool {
        self.action == ChangeAction::Modify
            && self.diff.is_empty()
            && self.added == 0
            && self.removed == 0
            && !self.binary
    }

    /// A move that changed no line: its counts would say nothing, so no frontend shows them
    /// (not "+0 −0").
    pub fn is_bare_move(&self) -> bool {
        bare_move(self.action, self.added, self.removed, self.binary)
    }
}

/// Whether a change of `action` with these counts is a move that changed no line of text.
pub fn bare_move(action: ChangeAction, added: u64, removed: u64, binary: bool) -> bool {
    action == ChangeAction::Move && added == 0 && removed == 0 && !binary
}

/// A turn's checkpoint as the view shows it (its turn is the item's `turn`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointItem {
    /// The files whose before-images it holds.
    pub files: Vec<String>,
    /// What it could not capture.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<Gap>,
    /// How completely it can restore what the turn touched.
    pub coverage: Coverage,
    /// False once retention removed it (the turn can no longer be restored).
    pub retained: bool,
}

/// What a note is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoteKind {
    /// Files were restored (a rewind, a revert, an undo, a redo): the model is told too.
    Restore,
    /// The conversation before this point was summarized.
    Compaction,
    /// The model changed.
    ModelSwitch,
    /// Anything else Retrace wrote into the conversation.
    Other,
}

/// A note, with its wording decided once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteItem {
    /// What it is about.
    pub note: NoteKind,
    /// The whole text, as every frontend shows it.
    pub text: String,
}

/// A tool call waiting for the user's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingApproval {
    /// The call.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The command line.
    pub command: String,
    /// What running it means for taking changes back, in words, when it matters (a shell
    /// command's changes to files cannot be rewound in snapshot mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Word prefixes the user may allow for the rest of the session instead of this exact command
    /// line (`npm test` for `npm test -- --watch`); empty when none is offered (a compound command).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prefixes: Vec<String>,
}

/// Everything a frontend needs to show a session, taken at one instant: render it, then apply the
/// events numbered after `last_event_seq`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionSnapshot {
    /// The session's status.
    pub status: SessionStatus,
    /// The selected head's items, in order.
    pub items: Vec<Item>,
    /// The heads.
    pub heads: Vec<HeadEntry>,
    /// The head these items are of.
    pub head_id: HeadId,
    /// Approvals waiting for an answer.
    pub pending_approvals: Vec<PendingApproval>,
    /// How many tokens the selected head's conversation took at its last model request the log
    /// recorded a count for (that request's prompt and answer, as the server counted them): the
    /// context a frontend shows on opening, before any `step_finished`. `None` when the log has
    /// no count for it (an empty conversation, a model that reports none, a summary newer than
    /// every count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<u64>,
    /// What the session's requests took and cost and how full the model's context is, as every
    /// frontend's status shows it (the `usage` events after it bring it up to date).
    #[serde(default)]
    pub usage: crate::tally::SessionUsage,
    /// The newest event the snapshot includes.
    pub last_event_seq: u64,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// What the log records of a tool call's end, beside the text the model got (the `outcome` of a
/// tool message line): its status and the changes and gaps its item shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolRecord {
    /// How it ended.
    pub status: ToolStatus,
    /// The files it changed, with their diffs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<FileChange>,
    /// What it did that cannot be restored (stored without their words).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        serialize_with = "crate::said::stored_gaps"
    )]
    pub gaps: Vec<Gap>,
    /// A shell command's exit code, when it exited (absent in older logs: read from the
    /// `[exit code N]` line its output ends with).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// How long the tool ran, in milliseconds (absent in older logs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}
