//! Restore plans (SPEC §5.2): what a plan is, what the user sees of it, and the one decision of
//! whether a commit with the user's choices may go ahead. Planning itself (`restore_set.rs`, the
//! images in `images.rs`, the per-file check in `check.rs`) reads the workspace and the sidecar
//! and changes nothing.

use retrace_fsutil::RelPath;
use retrace_protocol::{CodePlan, Conflict, ConflictReason, FileAction, OnConflict};

use crate::error::{CheckpointError, Result};
use crate::images::TargetImage;
use crate::memo::HashMemo;
use crate::model::Image;

/// How to commit a plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommitOptions {
    /// The user confirmed a plan that requires confirmation.
    pub confirm: bool,
    /// What to do with conflicted files.
    pub on_conflict: OnConflict,
}

/// One file of a plan, with what commit needs.
#[derive(Debug, Clone)]
pub(crate) struct PlannedFile {
    pub(crate) rel: Option<RelPath>,
    /// For the destination of a legacy rename: the source, which the transaction must write for
    /// this file to be deleted (the bytes move back; never one without the other).
    pub(crate) deleted_with: Option<RelPath>,
    pub(crate) shown: String,
    pub(crate) target: TargetImage,
    pub(crate) current: Option<Image>,
    pub(crate) action: FileAction,
    pub(crate) conflict: Option<Conflict>,
}

/// What a plan restores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanKind {
    /// Every file touched since turn N started, to its state then.
    Turn(u64),
    /// One file, to its state before the session first touched it.
    File(RelPath),
    /// One file, to a version of its history (SPEC §5.8), counted from 1.
    Version(RelPath, u32),
}

/// A restore plan: the DTO the user sees plus what commit needs. Single-use.
#[derive(Debug, Clone)]
pub struct RestorePlan {
    /// What it restores.
    pub kind: PlanKind,
    /// What it will do, as the user sees it.
    pub plan: CodePlan,
    pub(crate) files: Vec<PlannedFile>,
    /// Directories the restored entries' tools created (recorded at capture): the commit removes
    /// those it leaves empty.
    pub(crate) created_dirs: Vec<RelPath>,
    /// What planning hashed, for the commit's re-plan.
    pub(crate) memo: HashMemo,
}

impl RestorePlan {
    /// Whether every file of the plan is an unsafe path: nothing can be written under any choice,
    /// and a commit is no success (SPEC §5.2).
    fn only_unsafe(&self) -> bool {
        !self.plan.files.is_empty()
            && self.plan.files.iter().all(|f| {
                f.conflict
                    .as_ref()
                    .is_some_and(|c| c.reason == ConflictReason::PathUnsafe)
            })
    }

    /// Conflicted files that block a commit under `refuse`. Unsafe paths never block (they are
    /// never written under any choice) unless they are all there is.
    pub fn blocking_conflicts(&self) -> usize {
        if self.only_unsafe() {
            return self.plan.conflicts.len();
        }
        self.plan
            .conflicts
            .iter()
            .filter(|c| c.reason != ConflictReason::PathUnsafe)
            .count()
    }

    /// Whether a commit with `opts` may go ahead, decided in one place for every caller: blocking
    /// conflicts under `refuse` (or only unsafe paths, under any choice) are
    /// [`CheckpointError::Refused`], then a plan that spans untracked changes without `confirm` is
    /// [`CheckpointError::ConfirmationRequired`].
    pub fn check_commit(&self, opts: CommitOptions) -> Result<()> {
        let refuse = opts.on_conflict == retrace_protocol::OnConflict::Refuse;
        if (self.blocking_conflicts() > 0 && refuse) || self.only_unsafe() {
            return Err(CheckpointError::Refused {
                conflicts: self.plan.conflicts.clone(),
            });
        }
        if self.plan.requires_confirmation && !opts.confirm {
            return Err(CheckpointError::ConfirmationRequired);
        }
        Ok(())
    }
}

/// Whether `overwrite` writes a file with this conflict: everything but an unsafe path, a missing
/// payload, something other than a file at the path, and a file that cannot be read (whose bytes
/// the transaction could not keep for undo), which are never written.
pub(crate) fn overwritable(reason: ConflictReason) -> bool {
    !matches!(
        reason,
        ConflictReason::PathUnsafe
            | ConflictReason::MissingPayload
            | ConflictReason::TypeChange
            | ConflictReason::Unreadable
    )
}
