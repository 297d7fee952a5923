//! Undo of the last rewind (SPEC §5.5): itself a transaction, refused when anything moved.

use retrace_protocol::CodeOutcome;

use crate::error::{CheckpointError, Result};
use crate::fsio::{image_of, unsafe_to_write};
use crate::memo::HashMemo;
use crate::model::{same_image, Image};
use crate::store::CheckpointStore;
use crate::transaction::{Link, TxInput};
use crate::tx::{Manifest, TxKind, TxState};

impl CheckpointStore {
    /// Records a rewind that wrote no file (conversation only, or `both` whose files failed), so
    /// that undo can find it: a committed manifest of kind `rewind` with no targets, taking the next
    /// mutation sequence (it becomes the undo target). `extra` is the rewind record (see
    /// [`CheckpointStore::commit_tagged`]).
    pub fn record_rewind(&mut self, turn: u64, extra: serde_json::Value) -> Result<Manifest> {
        let extra = self.rewind_to_keep(&extra)?;
        self.record_targetless(turn, None, extra)
    }

    /// Writes a committed manifest of kind `rewind` with no targets at the next mutation sequence:
    /// a rewind that wrote no file, or (`redoes`) the redo of one. `extra` is already in the form
    /// kept.
    pub(crate) fn record_targetless(
        &mut self,
        turn: u64,
        redoes: Option<String>,
        extra: serde_json::Value,
    ) -> Result<Manifest> {
        let seq = self.sidecar.state.mutation_seq + 1;
        let time = (self.opts.clock)()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        let m = Manifest {
            id: format!("{seq:08}-rewind-{turn}"),
            kind: TxKind::Rewind,
            state: TxState::Committed,
            time,
            seq,
            turn: Some(turn),
            undoes: None,
            undone_by: None,
            redoes,
            extra: Some(extra),
            forward_pack: None,
            removed_dirs: Vec::new(),
            dirs_removed: false,
            owned_recorded: true,
            targets: Vec::new(),
        };
        self.opts
            .fs
            .create_dir_all(&self.sidecar.dir)
            .map_err(|source| CheckpointError::Io {
                op: "create the sidecar",
                path: self.sidecar.dir.clone(),
                source,
            })?;
        self.save_manifest(&m)?;
        self.sidecar.apply_committed(&m);
        self.write_state()?;
        Ok(m)
    }

    /// Undoes transaction `id`, which must be the last committed restore, revert or rewind (or a
    /// redo of one) with nothing written since. Every target must still hold exactly what the restore wrote (existence,
    /// SHA-256, mode); otherwise nothing is written.
    pub fn undo(&mut self, id: &str) -> Result<CodeOutcome> {
        let root = self.sidecar.root.clone().ok_or(CheckpointError::NoTurn)?;
        let Some(orig) = self.sidecar.transactions.get(id).cloned() else {
            return Err(CheckpointError::UndoUnavailable {
                why: format!("no transaction `{id}`"),
            });
        };
        if self.undo_target().map(|m| m.id.as_str()) != Some(id) {
            let why = match orig.state {
                TxState::Undone => "it was already undone".to_string(),
                TxState::Aborted => "it was rolled back".to_string(),
                _ if orig.kind == TxKind::Undo => "an undo is not undone: redo takes it back".to_string(),
                _ => "a turn or another write happened since".to_string(),
            };
            return Err(CheckpointError::UndoUnavailable { why });
        }
        // What the rewind did to the conversation must be known before anything is put back: a
        // record this build cannot read is an error, never taken for a restore of files only.
        self.sidecar.rewind_record(&orig)?;
        if orig.targets.is_empty() {
            // A conversation-only rewind: nothing on disk to put back.
            let mut orig = orig;
            orig.state = TxState::Undone;
            self.save_manifest(&orig)?;
            return Ok(CodeOutcome {
                transaction_id: None,
                files_written: Vec::new(),
                files_deleted: Vec::new(),
                conflicts: Vec::new(),
                undo_available: false,
            });
        }
        let mut moved = Vec::new();
        let mut inputs = Vec::new();
        let mut git_dirs = retrace_fsutil::GitDirs::default();
        for (i, t) in orig.targets.iter().enumerate() {
            let rel = t.rel()?;
            let abs = rel.under(&root);
            // Checked before anything is written: only a plain file (or nothing) reached through
            // real directories may be put back; a symlinked parent swapped in since the rewind
            // would lead the undo outside the workspace; nor inside a git directory made there
            // since (its config and hooks run commands).
            let now = match unsafe_to_write(&root, &rel) || git_dirs.above(&root, rel.as_path()) {
                true => None,
                false => image_of(&abs).ok(),
            };
            let restore = Image::from(&t.restore);
            // `same_image` takes a missing mode (a restore from a legacy record) as any mode.
            let Some(now) = now.filter(|now| same_image(&restore, now)) else {
                moved.push(rel.to_lossy());
                continue;
            };
            // And Retrace's last write there (`state.json`'s entry) must still be the
            // transaction's: bytes that only look the same (the file was changed and claimed
            // since, then another writer put the transaction's bytes back) are not the
            // transaction's to take back.
            let owned = self.sidecar.state.owned.get(&rel);
            if !owned.is_some_and(|o| same_image(&restore, &o.image)) {
                moved.push(rel.to_lossy());
                continue;
            }
            inputs.push(TxInput {
                rel,
                restore: self.sidecar.forward_image(&orig, i, &mut HashMemo::default()),
                forward: now,
                // The proof goes back with the bytes: what it was before the restore, nothing when
                // there was none (or the restore's manifest is too old to say).
                owned_after: t.owned_before.as_ref().map(crate::state::Owned::from),
            });
        }
        if !moved.is_empty() {
            return Err(CheckpointError::UndoRefused { paths: moved });
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
        let m = self.run_transaction(
            TxKind::Undo,
            orig.turn,
            Link::Undoes(orig.id.clone()),
            inputs,
            None,
            &[],
        )?;
        self.recreate_dirs(&orig);
        let mut orig = orig;
        orig.state = TxState::Undone;
        orig.undone_by = Some(m.id.clone());
        self.save_manifest(&orig)?;
        Ok(self.outcome_of(&m, Vec::new()))
    }
}
