//! Redo of the newest undone rewind (SPEC §5.5): the undo taken back. A new transaction of the
//! undone one's kind, naming it in `redoes`, that writes again what it wrote — the undo's forward
//! images — over what the undo left. Every file must still hold what the undo left (existence,
//! SHA-256, mode): a file changed since, by a later turn or by hand, is a conflict, and the redo
//! writes nothing. Its own forward images make it undoable like any restore.

use retrace_fsutil::RelPath;
use retrace_protocol::{CodeOutcome, Conflict, ConflictReason};

use crate::error::{CheckpointError, Result};
use crate::fsio::{image_of, standing, Standing};
use crate::images::TargetImage;
use crate::memo::HashMemo;
use crate::model::{same_image, Image};
use crate::store::CheckpointStore;
use crate::transaction::{Link, TxInput};
use crate::tx::{Manifest, TxState};

impl CheckpointStore {
    /// Redoes transaction `id`, which must be the redo target ([`CheckpointStore::redo_target`]),
    /// keeping its rewind record as it is.
    pub fn redo(&mut self, id: &str) -> Result<CodeOutcome> {
        let extra = self.sidecar.transactions.get(id).and_then(|m| m.extra.clone());
        self.redo_tagged(id, extra)
    }

    /// [`CheckpointStore::redo`], keeping `extra` as the redo's rewind record (the controller's:
    /// which head the redo selected, and the one it came from, so that undoing the redo takes them
    /// back). One that cannot be read is refused before anything is written.
    pub fn redo_tagged(&mut self, id: &str, extra: Option<serde_json::Value>) -> Result<CodeOutcome> {
        let extra = extra.map(|e| self.rewind_to_keep(&e)).transpose()?;
        let (orig, inputs) = self.redo_inputs(id)?;
        if orig.targets.is_empty() {
            // A conversation-only rewind: nothing on disk, a manifest so that undo finds the redo.
            let extra =
                extra
                    .or_else(|| orig.extra.clone())
                    .ok_or_else(|| CheckpointError::RedoUnavailable {
                        why: format!("transaction `{id}` keeps no rewind record"),
                    })?;
            let m = self.record_targetless(orig.turn.unwrap_or_default(), Some(orig.id.clone()), extra)?;
            return Ok(self.outcome_of(&m, Vec::new()));
        }
        // The directories the undone transaction removed, and its undo made again, go again if
        // the redo leaves them empty.
        let dirs: Vec<RelPath> = orig
            .removed_dirs
            .iter()
            .filter_map(|d| RelPath::from_stored(d.as_bytes()).ok())
            .collect();
        let m = self.run_transaction(
            orig.kind,
            orig.turn,
            Link::Redoes(orig.id.clone()),
            inputs,
            extra,
            &dirs,
        )?;
        Ok(self.outcome_of(&m, Vec::new()))
    }

    /// Whether transaction `id` can be redone now, files included: the error `redo` would return
    /// before writing anything (nothing to redo, a rewind record that cannot be read, files that
    /// changed since the undo, bytes that cannot be had). Writes nothing.
    pub fn check_redo(&self, id: &str) -> Result<()> {
        self.redo_inputs(id).map(|_| ())
    }

    /// The redo target `id` and the files its redo writes, each checked against what the undo
    /// left.
    fn redo_inputs(&self, id: &str) -> Result<(Manifest, Vec<TxInput>)> {
        let Some(orig) = self.sidecar.transactions.get(id).cloned() else {
            return Err(CheckpointError::RedoUnavailable {
                why: format!("no transaction `{id}`"),
            });
        };
        if self.redo_target().map(|m| m.id.as_str()) != Some(id) {
            let why = match orig.state {
                TxState::Undone => "another rewind, undo or redo happened since it was undone",
                TxState::Aborted => "it was rolled back",
                _ => "it is not undone",
            };
            return Err(CheckpointError::RedoUnavailable { why: why.to_string() });
        }
        // What the rewind did to the conversation must be known, as for its undo.
        self.sidecar.rewind_record(&orig)?;
        if orig.targets.is_empty() {
            return Ok((orig, Vec::new()));
        }
        let root = self.require_root()?;
        // The undo's targets: its `restore` is what it left, its forward image what the undone
        // transaction wrote (the undo replaced exactly that).
        let undo = orig
            .undone_by
            .as_ref()
            .and_then(|u| self.sidecar.transactions.get(u))
            .cloned()
            .ok_or_else(|| CheckpointError::RedoUnavailable {
                why: format!("the undo of transaction `{id}` is gone"),
            })?;
        let mut memo = HashMemo::default();
        let mut conflicts = Vec::new();
        let mut inputs = Vec::new();
        let mut git_dirs = retrace_fsutil::GitDirs::default();
        for (i, t) in undo.targets.iter().enumerate() {
            let rel = t.rel()?;
            let left = Image::from(&t.restore);
            let restore = self.sidecar.forward_image(&undo, i, &mut memo);
            // Bytes alone do not say the file is what the undo left: a later write of Retrace's
            // there of other bytes (then the undo's put back by someone else) moved its proof
            // since. A later write of the very bytes the undo left changed nothing.
            let proof_now = self.sidecar.state.owned.get(&rel).cloned();
            let proof_moved = undo.owned_recorded
                && t.owned_after.as_ref().map(crate::state::Owned::from) != proof_now
                && proof_now.as_ref().map(|o| &o.image) != Some(&left);
            // Never inside a git directory made there since (its config and hooks run commands).
            let now = match git_dirs.above(&root, rel.as_path()) {
                true => Err((ConflictReason::PathUnsafe, None)),
                false => now_if_left(&root, &rel, &left),
            };
            match now {
                Ok(now) if proof_moved => conflicts.push(conflict(
                    &rel,
                    ConflictReason::ManualEdit,
                    &left,
                    Some(&now),
                    &restore,
                )),
                Ok(now) => inputs.push(TxInput {
                    rel,
                    restore,
                    forward: now,
                    owned_after: None,
                }),
                Err((reason, now)) => conflicts.push(conflict(&rel, reason, &left, now.as_ref(), &restore)),
            }
        }
        if !conflicts.is_empty() {
            return Err(CheckpointError::RedoRefused { conflicts });
        }
        if let Some(bad) = inputs
            .iter()
            .find(|i| i.restore.image.existed && i.restore.unusable.is_some())
        {
            return Err(CheckpointError::MissingPayload {
                turn: orig.turn.unwrap_or(0),
                path: bad.rel.to_lossy(),
                why: bad.restore.unusable.clone().unwrap_or_default(),
            });
        }
        Ok((orig, inputs))
    }
}

/// What stands at `rel` now, when it is what the undo left (`left`); otherwise why not, with what
/// stands there when it could be read. Types are looked at before contents, and nothing is opened
/// in a way that can block.
fn now_if_left(
    root: &std::path::Path,
    rel: &RelPath,
    left: &Image,
) -> std::result::Result<Image, (ConflictReason, Option<Image>)> {
    match standing(root, rel) {
        Standing::Unsafe => return Err((ConflictReason::PathUnsafe, None)),
        Standing::FileAbove | Standing::Special(_) => return Err((ConflictReason::TypeChange, None)),
        Standing::Plain => {}
    }
    let now = image_of(&rel.under(root)).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidInput => (ConflictReason::TypeChange, None),
        _ => (ConflictReason::Unreadable, None),
    })?;
    // `same_image` takes a missing mode (an image from a legacy record) as any mode.
    if same_image(left, &now) {
        return Ok(now);
    }
    let reason = match (left.existed, now.existed) {
        (false, _) => ConflictReason::DeletedAndRecreated,
        (true, false) => ConflictReason::ExternalChange,
        (true, true) if left.mode.is_some() && left.mode != now.mode => ConflictReason::ModeChange,
        (true, true) => ConflictReason::ManualEdit,
    };
    Err((reason, Some(now)))
}

/// A file the redo would overwrite, as a conflict: what the redo would write, what the undo left
/// (Retrace's last write there) and what stands there now.
fn conflict(
    rel: &RelPath,
    reason: ConflictReason,
    left: &Image,
    now: Option<&Image>,
    restore: &TargetImage,
) -> Conflict {
    Conflict {
        path: rel.to_lossy(),
        reason,
        checkpoint_sha256: restore.image.sha256.clone(),
        last_owned_sha256: left.sha256.clone(),
        current_sha256: now.and_then(|n| n.sha256.clone()),
        checkpoint_mode: restore.image.mode,
        current_mode: now.and_then(|n| n.mode),
    }
}
