//! Code restore plans and results (SPEC §5.2–§5.6), as the store reports them. The controller wraps
//! them into the rewind plan and result of §5.3.

use serde::{Deserialize, Serialize};

use crate::checkpoint::{Coverage, GapReason};
use crate::item::ITEM_DIFF_CAP;

/// The most bytes of one file's diff a plan carries (as an item's, [`ITEM_DIFF_CAP`]); a longer
/// diff is cut at a line boundary (`diff_truncated`) and the whole one is had on request.
pub const PLAN_DIFF_CAP: usize = ITEM_DIFF_CAP;

/// What a restore will do to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileAction {
    /// Write the target bytes and mode (creating missing parent directories).
    Write,
    /// Delete the file: it did not exist when the turn started.
    Delete,
    /// The disk already equals the target.
    Unchanged,
    /// Not written: see the conflict.
    Skip,
}

impl FileAction {
    /// The wire name (`write`, `delete`, `unchanged`, `skip`).
    pub fn as_str(self) -> &'static str {
        match self {
            FileAction::Write => "write",
            FileAction::Delete => "delete",
            FileAction::Unchanged => "unchanged",
            FileAction::Skip => "skip",
        }
    }
}

/// Why a file cannot be restored without the user's say-so (SPEC §5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConflictReason {
    /// The path escapes the workspace, has a symlink component, or was recorded as unsafe. Never written.
    PathUnsafe,
    /// The before-image's bytes are not available (oversized, expired, corrupt).
    MissingPayload,
    /// Retrace has no proof it wrote what is on disk now.
    Unverified,
    /// A legacy (v1) record: no after-image to prove ownership.
    LegacyUnverified,
    /// Retrace left the path absent, but a file is there now.
    DeletedAndRecreated,
    /// The file moved since Retrace wrote it (missing now, or changed between plan and commit).
    ExternalChange,
    /// The mode differs from what Retrace wrote.
    ModeChange,
    /// The bytes differ from what Retrace wrote: someone edited the file.
    ManualEdit,
    /// Something else stands where the file was: a directory, a FIFO, a socket or a device at the
    /// path, or a file where one of its parent directories was. Never written over.
    TypeChange,
    /// The file there cannot be read (permissions), so Retrace cannot tell what it holds. Never
    /// written over.
    Unreadable,
}

impl ConflictReason {
    /// The wire name (`manual_edit`, `path_unsafe`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ConflictReason::PathUnsafe => "path_unsafe",
            ConflictReason::MissingPayload => "missing_payload",
            ConflictReason::Unverified => "unverified",
            ConflictReason::LegacyUnverified => "legacy_unverified",
            ConflictReason::DeletedAndRecreated => "deleted_and_recreated",
            ConflictReason::ExternalChange => "external_change",
            ConflictReason::ModeChange => "mode_change",
            ConflictReason::ManualEdit => "manual_edit",
            ConflictReason::TypeChange => "type_change",
            ConflictReason::Unreadable => "unreadable",
        }
    }
}

/// A conflicted file, with the digests that explain it. Sent with `says`, why in words
/// (`said.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Conflict {
    /// The workspace path.
    pub path: String,
    /// Why.
    pub reason: ConflictReason,
    /// SHA-256 of the state being restored (null: the file did not exist).
    pub checkpoint_sha256: Option<String>,
    /// SHA-256 Retrace last wrote there (null: absent or unknown).
    pub last_owned_sha256: Option<String>,
    /// SHA-256 on disk now (null: missing).
    pub current_sha256: Option<String>,
    /// Mode of the state being restored.
    pub checkpoint_mode: Option<u32>,
    /// Mode on disk now.
    pub current_mode: Option<u32>,
}

/// One file of a plan. Sent with `says`, its action in a word for a person
/// ([`crate::words::file_action`], `said.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PlanFile {
    /// The workspace path.
    pub path: String,
    /// What the restore does to it.
    pub action: FileAction,
    /// Bytes to write, for `write`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Set when the file is conflicted (action `skip`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict: Option<Conflict>,
    /// For a conflicted file: what a commit with `overwrite` does to it (`write` or `delete`, or
    /// `skip` for a file that is never written: an unsafe path or a missing payload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_overwrite: Option<FileAction>,
    /// What committing it does to its text (for a conflicted file: what `overwrite` does): the
    /// fields `diff`, `added`, `removed`, `binary`, `diff_truncated`, `diff_deferred`.
    #[serde(flatten)]
    pub diff: PlanDiff,
}

/// What a restore does to one file's text: the unified diff from the file on disk now to the
/// bytes the commit writes (a deletion: to nothing; a file made again: from nothing), computed
/// once by the store. Empty for a file the restore leaves as it is (`unchanged`, or a conflict
/// that no choice writes).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanDiff {
    /// The unified diff (`@@` hunks, 3 lines of context, no `---`/`+++` header, line endings as
    /// the file has them); empty when the file is binary or its text does not change.
    #[serde(default, rename = "diff")]
    pub text: String,
    /// Lines added.
    #[serde(default)]
    pub added: u64,
    /// Lines removed.
    #[serde(default)]
    pub removed: u64,
    /// True when either side is not text (not UTF-8, holds a NUL byte, or is over 4 MiB): no
    /// diff, no counts.
    #[serde(default)]
    pub binary: bool,
    /// True when `diff` was cut (at [`PLAN_DIFF_CAP`], or where the plan's budget for diff text
    /// ran out); the counts are whole. The whole diff is had on request.
    #[serde(default, rename = "diff_truncated", skip_serializing_if = "is_false")]
    pub truncated: bool,
    /// True when the diff was not computed (the plan's budget for diffing ran out): no diff and
    /// counts of 0 that say nothing. The whole diff is had on request.
    #[serde(default, rename = "diff_deferred", skip_serializing_if = "is_false")]
    pub deferred: bool,
}

impl PlanDiff {
    /// Whether the diff shown is not the whole of it (cut or not computed), so a frontend offers
    /// to load the whole one.
    pub fn partial(&self) -> bool {
        self.truncated || self.deferred
    }
}

/// The whole diff of one file of a plan, as asked for when the plan's was cut or deferred.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanFileDiff {
    /// The workspace path.
    pub path: String,
    /// Its diff, never cut (`diff_truncated` and `diff_deferred` are false).
    #[serde(flatten)]
    pub diff: PlanDiff,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A gap of a turn the restore spans. Sent with `says`, the gap in words (`said.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PlanGap {
    /// The turn that recorded it.
    pub turn: u64,
    /// Why part of that turn is not restorable.
    pub reason: GapReason,
    /// The tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The workspace path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Detail (the shell command).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// What to do with conflicted files at commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnConflict {
    /// Refuse the whole restore (the default): nothing is written.
    #[default]
    Refuse,
    /// Restore the clean files only; list the conflicted ones.
    Skip,
    /// Restore everything restorable; the current bytes go into the transaction so undo brings them back.
    Overwrite,
}

/// A code restore plan as the store computes it. Changes nothing on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodePlan {
    /// The turn restored to (for a single-file revert: the turn of the earliest image).
    pub turn: u64,
    /// The workspace generation the plan was made at; a commit at another generation is stale.
    pub generation: u64,
    /// Coverage of the turns spanned: the weakest of them.
    pub coverage: Coverage,
    /// True when any spanned turn is legacy, expired or has a gap.
    pub requires_confirmation: bool,
    /// Gaps of the spanned turns.
    pub gaps: Vec<PlanGap>,
    /// Every file of the restore set.
    pub files: Vec<PlanFile>,
    /// The conflicted files (also in `files`, with action `skip`).
    pub conflicts: Vec<Conflict>,
}

/// The outcome of committing a code plan or an undo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeOutcome {
    /// The transaction written, or null when nothing needed writing.
    pub transaction_id: Option<String>,
    /// Paths written.
    pub files_written: Vec<String>,
    /// Paths deleted.
    pub files_deleted: Vec<String>,
    /// Conflicted files left alone (`skip`) or overwritten (`overwrite`).
    pub conflicts: Vec<Conflict>,
    /// Whether this transaction can be undone now.
    pub undo_available: bool,
}
