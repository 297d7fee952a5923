//! Committing a plan (SPEC §5.2–§5.4): the plan made again and held to what the user previewed,
//! the files the user's choices let it write, then one file transaction (`transaction.rs`); files
//! already in their target state become Retrace's own.

use std::collections::HashSet;

use retrace_fsutil::RelPath;
use retrace_protocol::{CodeOutcome, Conflict, ConflictReason, FileAction, OnConflict};

use crate::error::{CheckpointError, Result};
use crate::layout::TX_DIR;
use crate::model::Image;
use crate::plan::{overwritable, CommitOptions, PlanKind, PlannedFile, RestorePlan};
use crate::rewind::RewindRecord;
use crate::state::Owned;
use crate::store::CheckpointStore;
use crate::transaction::{Link, TxInput};
use crate::tx::{Manifest, TargetAction, TxKind};

impl CheckpointStore {
    /// Commits a plan as one durable file transaction. Re-runs the checks first: a plan made before
    /// the workspace generation moved is `StalePlan`; conflicts with `refuse` write nothing.
    pub fn commit(&mut self, plan: &RestorePlan, opts: CommitOptions) -> Result<CodeOutcome> {
        self.commit_tagged(plan, opts, None)
    }

    /// [`CheckpointStore::commit`], keeping `extra` in the manifest: the rewind record (the
    /// controller's record of the conversation half of a rewind, so undo can find it; see
    /// [`crate::tx::RewindRecord`]), stored with its version. One that cannot be read is refused
    /// before anything is written.
    pub fn commit_tagged(
        &mut self,
        plan: &RestorePlan,
        opts: CommitOptions,
        extra: Option<serde_json::Value>,
    ) -> Result<CodeOutcome> {
        let extra = extra.map(|e| self.rewind_to_keep(&e)).transpose()?;
        if plan.plan.generation != self.sidecar.state.mutation_seq {
            return Err(CheckpointError::StalePlan {
                planned: plan.plan.generation,
                now: self.sidecar.state.mutation_seq,
            });
        }
        // The one decision of what blocks a commit (the controller asks the same question first).
        plan.check_commit(opts)?;
        // Plan again, and hold the result to what the user previewed: a file that moved since is
        // an `external_change`, whatever the choice (never silently re-classified, then skipped or
        // overwritten).
        let fresh = match &plan.kind {
            PlanKind::Turn(n) => self.sidecar.plan_restore_with(*n, plan.memo.clone(), None)?,
            PlanKind::File(p) => self
                .sidecar
                .plan_file_revert_with(p.as_path(), plan.memo.clone(), None)?,
            PlanKind::Version(p, v) => {
                self.sidecar
                    .plan_file_version_with(p.as_path(), *v, plan.memo.clone(), None)?
            }
        };
        let moved = moved_since_preview(plan, &fresh);
        if !moved.is_empty() {
            return Err(CheckpointError::Changed { conflicts: moved });
        }
        let mut inputs = Vec::new();
        let mut conflicts: Vec<Conflict> = Vec::new();
        for f in &fresh.files {
            let (Some(rel), Some(current)) = (f.rel.clone(), f.current.clone()) else {
                conflicts.extend(f.conflict.clone());
                continue;
            };
            match (&f.conflict, f.action) {
                (None, FileAction::Write | FileAction::Delete) => {
                    inputs.push(TxInput {
                        rel,
                        restore: f.target.clone(),
                        forward: current,
                        owned_after: None,
                    });
                }
                (None, _) => {}
                (Some(c), _) => {
                    conflicts.push(c.clone());
                    if opts.on_conflict == OnConflict::Overwrite && overwritable(c.reason) {
                        inputs.push(TxInput {
                            rel,
                            restore: f.target.clone(),
                            forward: current,
                            owned_after: None,
                        });
                    }
                }
            }
        }
        // A legacy rename's destination goes only with its source written: the bytes move back,
        // never one without the other.
        let writes: HashSet<RelPath> = inputs
            .iter()
            .filter(|i| i.restore.image.existed)
            .map(|i| i.rel.clone())
            .collect();
        let kept: HashSet<RelPath> = fresh
            .files
            .iter()
            .filter(|f| f.deleted_with.as_ref().is_some_and(|src| !writes.contains(src)))
            .filter_map(|f| f.rel.clone())
            .collect();
        inputs.retain(|i| !kept.contains(&i.rel));
        // Files already in their target state become Retrace's: the disk equals an image Retrace
        // recorded (and keeps), so a later restore may replace it without losing a byte.
        let claims: Vec<(RelPath, Image)> = fresh
            .files
            .iter()
            .filter(|f| f.action == FileAction::Unchanged && f.conflict.is_none())
            .filter_map(|f| Some((f.rel.clone()?, f.current.clone()?)))
            .collect();
        if inputs.is_empty() {
            // Nothing to write: no transaction, and the undo target stays as it was (the claims
            // take the current sequence, which moves on only with a write).
            let seq = self.sidecar.state.mutation_seq;
            self.claim(claims, seq);
            return Ok(CodeOutcome {
                transaction_id: None,
                files_written: Vec::new(),
                files_deleted: Vec::new(),
                conflicts,
                undo_available: self.undo_target().is_some(),
            });
        }
        let (kind, turn) = match &plan.kind {
            PlanKind::Turn(n) => (TxKind::Restore, Some(*n)),
            PlanKind::File(_) | PlanKind::Version(..) => (TxKind::Revert, Some(fresh.plan.turn)),
        };
        let m = self.run_transaction(kind, turn, Link::None, inputs, extra, &fresh.created_dirs)?;
        self.claim(claims, m.seq);
        Ok(self.outcome_of(&m, conflicts))
    }

    /// The stored form, with this build's version, of the rewind record `extra` a transaction is
    /// to keep; `Corrupt` when it is no rewind record this build can read (nothing is written).
    pub(crate) fn rewind_to_keep(&self, extra: &serde_json::Value) -> Result<serde_json::Value> {
        RewindRecord::from_stored(extra)
            .map(|r| r.to_stored())
            .map_err(|why| CheckpointError::Corrupt {
                path: self.sidecar.dir.join(TX_DIR),
                detail: format!(
                    "the rewind record to keep with a transaction cannot be read: {why}; nothing was written"
                ),
            })
    }

    /// Records each file found already in its target state as Retrace's own write at `seq` (one
    /// whose ownership proof is another image), then `state.json`. Best effort like every proof after a
    /// commit: a claim lost to a failed write only makes a later restore report a conflict.
    fn claim(&mut self, claims: Vec<(RelPath, Image)>, seq: u64) {
        let mut changed = false;
        for (rel, image) in claims {
            if self.sidecar.proof(&rel).as_ref() == Some(&image) {
                continue;
            }
            self.sidecar.state.owned.insert(rel, Owned { image, seq });
            changed = true;
        }
        if changed && self.write_state().is_err() {
            self.state_must_write
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    pub(crate) fn outcome_of(&self, m: &Manifest, conflicts: Vec<Conflict>) -> CodeOutcome {
        let mut written = Vec::new();
        let mut deleted = Vec::new();
        for t in &m.targets {
            match t.action {
                TargetAction::Write => written.push(t.path.clone()),
                TargetAction::Delete => deleted.push(t.path.clone()),
            }
        }
        CodeOutcome {
            transaction_id: Some(m.id.clone()),
            files_written: written,
            files_deleted: deleted,
            conflicts,
            undo_available: self.undo_target().is_some_and(|u| u.id == m.id),
        }
    }
}

/// The files whose state differs between the previewed plan and a fresh one (other action, other
/// conflict, other bytes, mode or existence on disk): a file that moved on disk is an
/// `external_change`; one whose plan changed for another reason (its payload went bad, say)
/// carries the fresh plan's conflict.
fn moved_since_preview(shown: &RestorePlan, fresh: &RestorePlan) -> Vec<Conflict> {
    // Keyed by the raw name: two names can share a lossy spelling.
    let key = |f: &PlannedFile| (f.rel.clone(), f.shown.clone());
    let before: std::collections::HashMap<_, &PlannedFile> =
        shown.files.iter().map(|f| (key(f), f)).collect();
    let mut moved = Vec::new();
    for f in &fresh.files {
        let was = before.get(&key(f));
        let same = was.is_some_and(|b| {
            b.action == f.action
                && b.current == f.current
                && b.conflict.as_ref().map(|c| c.reason) == f.conflict.as_ref().map(|c| c.reason)
        });
        if same {
            continue;
        }
        let on_disk_moved = was.is_none_or(|b| b.current != f.current);
        moved.push(match (&f.conflict, on_disk_moved) {
            (Some(c), false) => c.clone(),
            _ => Conflict {
                path: f.shown.clone(),
                reason: ConflictReason::ExternalChange,
                checkpoint_sha256: f.target.image.sha256.clone(),
                last_owned_sha256: was
                    .and_then(|b| b.current.as_ref())
                    .and_then(|c| c.sha256.clone()),
                current_sha256: f.current.as_ref().and_then(|c| c.sha256.clone()),
                checkpoint_mode: f.target.image.mode,
                current_mode: f.current.as_ref().and_then(|c| c.mode),
            },
        });
    }
    moved
}
