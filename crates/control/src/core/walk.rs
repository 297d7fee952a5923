//! What undo and redo (SPEC §5.5) share: finding the transaction they walk to, reading its rewind
//! record and what it allows here, the note a restore of files leaves, and the result. Undo lives
//! in [`super::rewind`], redo in [`super::redo`].

use retrace_checkpoint::tx::{Manifest, RewindRecord};
use retrace_protocol::{CodeOutcome, ErrorCode, Missing, RewindResult, RewindScope};

use super::Core;
use crate::error::{coded, Result};

/// Which way along the line of restores.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Walk {
    Undo,
    Redo,
}

impl Walk {
    fn verb(self) -> &'static str {
        match self {
            Walk::Undo => "undone",
            Walk::Redo => "redone",
        }
    }
}

/// The rewind record of the transaction walked to, and what it allows here.
pub(super) struct Walked {
    pub(super) target: Manifest,
    pub(super) record: Option<RewindRecord>,
    /// It changed files only (no record, or a record of scope `code`).
    pub(super) code_only: bool,
    /// The session's log is an old flat one (format 1).
    pub(super) flat: bool,
}

impl Core {
    /// The transaction `walk` would take now, checked against the one asked for (`transaction`),
    /// with its record; refused when there is none, when another was asked for, or when its
    /// conversation half cannot be walked here (an old flat log, a damaged log).
    pub(super) fn walk_target(&self, walk: Walk, transaction: Option<&str>) -> Result<Walked> {
        if let Some(tx) = transaction {
            if !self.store.transactions().any(|m| m.id == tx) {
                return Err(retrace_protocol::Error::not_found(
                    Missing::Transaction,
                    tx,
                    format!("there is no transaction `{tx}` in this session"),
                )
                .into());
            }
        }
        let target = match walk {
            Walk::Undo => self.store.undo_target(),
            Walk::Redo => self.store.redo_target(),
        };
        let Some(target) = target.cloned() else {
            return Err(coded(
                ErrorCode::Refused,
                match walk {
                    Walk::Undo => {
                        "nothing to undo: undo is available right after a rewind, before any new turn or edit"
                    }
                    Walk::Redo => {
                        "nothing to redo: redo is available after an undo, until another rewind or revert"
                    }
                },
            ));
        };
        if let Some(tx) = transaction {
            if tx != target.id {
                let which = match walk {
                    Walk::Undo => "only the last rewind can be undone",
                    Walk::Redo => "only the last undone rewind can be redone",
                };
                return Err(coded(
                    ErrorCode::Refused,
                    format!("{which}; that is transaction {}", target.id),
                ));
            }
        }
        // A record that cannot be read is an error naming its manifest, never "code only".
        let record = self.store.rewind_record(&target)?;
        let code_only = record.as_ref().is_none_or(|r| r.scope == RewindScope::Code);
        // An old flat log: its restore's conversation lives in the new session it became, so only
        // the files are walked here, and nothing is written to a log (which would make yet another
        // session of it).
        let flat = self.session.format() == 1;
        if flat && !code_only {
            return Err(coded(
                ErrorCode::Refused,
                format!(
                    "this rewind of an old (format-1) log changed the conversation, which now lives in the new session it became; only a restore of files can be {} through the old log",
                    walk.verb()
                ),
            ));
        }
        // A damaged log takes no change: only a restore of files is walked, without its note.
        if !code_only {
            crate::view::sound(&self.session)?;
        }
        Ok(Walked {
            target,
            record,
            code_only,
            flat,
        })
    }

    /// After a restore of files only was walked: the note the earlier step left would now be
    /// false, so the selected head is told where the files are (not in an old flat log or a
    /// damaged one).
    pub(super) fn note_walk(&mut self, w: &Walked, walk: Walk, outcome: &CodeOutcome) -> Result<()> {
        if !w.code_only || outcome.transaction_id.is_none() || w.flat || self.session.damage().is_some() {
            return Ok(());
        }
        let mut files = outcome.files_written.clone();
        files.extend(outcome.files_deleted.iter().cloned());
        let said = match walk {
            Walk::Undo => "undid that restore; these files are back as they were before it",
            Walk::Redo => "redid that restore; these files are again as it left them",
        };
        let head = self.session.selected().clone();
        self.note(
            &head,
            format!("Note from Retrace: the user {said}: {}.", files.join(", ")),
        )
    }

    /// The result of an undo or a redo that wrote `outcome`.
    pub(super) fn walk_result(
        &self,
        w: &Walked,
        walk: Walk,
        outcome: CodeOutcome,
        conversation_forked: bool,
        redo_available: bool,
    ) -> RewindResult {
        RewindResult {
            ok: true,
            partial: false,
            conversation_forked,
            head_id: self.session.selected().clone(),
            session_id: self.session.id().clone(),
            files_written: outcome.files_written,
            files_deleted: outcome.files_deleted,
            transaction_id: outcome.transaction_id,
            // An undo is never undone; a redo is, as the rewind it applies again was.
            undo_available: walk == Walk::Redo && outcome.undo_available,
            redo_available,
            conflicts: Vec::new(),
            prompt: w.target.turn.map(|t| self.prompt_of(t)).unwrap_or_default(),
            error: None,
        }
    }
}
