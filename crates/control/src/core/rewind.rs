//! Committing a rewind (SPEC §5.3): the conversation half first (a new head that ends just before
//! the turn), then the files as one transaction, recorded so that undo (§5.5) takes both back; and
//! undo itself. The plans are prepared in [`super::plans`].

use retrace_checkpoint::{CheckpointError, CommitOptions};
use retrace_protocol::{ErrorCode, Event, RewindResult, RewindScope};
use retrace_session::{ForkSpec, HeadKind};

use super::plans::{gate, PlanFor};
use super::walk::Walk;
use super::Core;
use crate::error::{coded, Result};
use retrace_checkpoint::tx::RewindRecord;

impl Core {
    /// as the UIs and the CLI want; otherwise the current head stays selected.
    pub(crate) fn commit_plan(
        &mut self,
        plan_id: &str,
        plan_for: PlanFor,
        choice: CommitOptions,
        in_place: bool,
    ) -> Result<RewindResult> {
        // A commit the gate refuses leaves the plan as it was: the user may choose again.
        gate(self.valid_plan(plan_id, plan_for)?, choice)?;
        let Some(p) = self.plans.remove(plan_id) else {
            return Err(coded(
                ErrorCode::StalePlan,
                format!("stale_plan: no plan `{plan_id}`"),
            ));
        };
        let session_before = self.session.id().clone();
        let scope = p.plan.scope;
        let turn = p.plan.turn;
        let wants_files = scope != RewindScope::Conversation;
        let wants_conv = scope != RewindScope::Code;
        let mut result = RewindResult {
            ok: true,
            partial: false,
            conversation_forked: false,
            head_id: p.head.clone(),
            session_id: self.session.id().clone(),
            files_written: Vec::new(),
            files_deleted: Vec::new(),
            transaction_id: None,
            undo_available: false,
            redo_available: false,
            conflicts: Vec::new(),
            prompt: p.plan.prompt.clone(),
            error: None,
        };
        // The conversation half first (SPEC §5.3): a new head that ends just before the turn.
        let mut record = RewindRecord {
            scope,
            turn,
            parent_head: p.head.clone(),
            new_head: None,
            base_messages: 0,
        };
        if wants_conv {
            let before = p.boundary.as_ref().and_then(|b| b.before.clone());
            let made = self.session.fork(
                &p.source,
                before.as_ref(),
                ForkSpec {
                    kind: HeadKind::Rewind,
                    name: None,
                    select: in_place,
                },
            )?;
            result.session_id = made.session_id.clone();
            record.base_messages = self
                .session
                .head(&made.head)
                .map(|h| h.message_count)
                .unwrap_or(0);
            result.head_id = made.head.clone();
            result.conversation_forked = true;
            record.new_head = Some(made.head);
        }
        let mut wrote_manifest = false;
        if let (true, Some(code)) = (wants_files, p.code.as_ref()) {
            match self.store.commit_tagged(code, choice, Some(record.to_stored())) {
                Ok(outcome) => {
                    wrote_manifest = outcome.transaction_id.is_some();
                    result.files_written = outcome.files_written;
                    result.files_deleted = outcome.files_deleted;
                    result.transaction_id = outcome.transaction_id;
                    result.conflicts = outcome.conflicts;
                }
                Err(e) if wants_conv => {
                    // The head is kept; the files failed in between (SPEC §5.3). The files that
                    // moved are in `conflicts`, typed, as a code-only commit reports them.
                    result.conflicts = moved_files(&e);
                    // What was asked for happened in part: the conversation was restored (the
                    // head is made and selected), the files were not. `ok` says the commit did
                    // something and left everything consistent; `partial` and `error` say what
                    // is missing (the reference reports this outcome the same way).
                    result.partial = true;
                    result.error = Some(e.to_string());
                }
                Err(e) => return Err(e.into()),
            }
            // A damaged log takes no note; the files are restored all the same.
            if scope == RewindScope::Code
                && result.transaction_id.is_some()
                && self.session.damage().is_none()
            {
                let mut files: Vec<String> = result.files_written.clone();
                files.extend(result.files_deleted.iter().cloned());
                let note = format!(
                    "Note from Retrace: the user restored these files to their state before turn {turn}: {}. \
                     Edits made to them since then are no longer on disk.",
                    files.join(", ")
                );
                self.note(&p.head, note)?;
            }
        }
        if !wrote_manifest && record.new_head.is_some() {
            let m = self.store.record_rewind(turn, record.to_stored())?;
            result.transaction_id = Some(m.id);
        }
        // Whether `undo` would take this restore back now. One that changed nothing (every file
        // already as it was, or every conflicted one skipped) recorded no transaction and offers
        // no undo: the undo target is still the restore before it, whose own result offered it.
        result.undo_available = match (&result.transaction_id, self.store.undo_target()) {
            (Some(id), Some(u)) => &u.id == id,
            _ => false,
        };
        // A rewind that wrote something ends redo; one that wrote nothing leaves it as it was.
        result.redo_available = self.redo_available();
        // The note above may have been the write that moved an old flat log to a new session.
        result.session_id = self.session.id().clone();
        if self.session.id() != &session_before {
            // A format-1 log was upgraded into a new session (SPEC §6): the files were restored
            // from the old session's checkpoints, and that is where the transaction stays. The new
            // session has its own sidecar, which every later turn uses (as a new process would).
            // A restore of files is undone through the old log's id (`undo` on it writes to no
            // log); a conversation rewind is not undone there, as its heads are the new session's.
            self.reopen_store()?;
            if scope != RewindScope::Code {
                result.undo_available = false;
            }
        }
        self.plans.clear();
        self.bus.publish(Event::Rewound {
            scope,
            turn,
            head_id: result.head_id.clone(),
            files_written: result.files_written.clone(),
            files_deleted: result.files_deleted.clone(),
            transaction_id: result.transaction_id.clone(),
            partial: result.partial,
        });
        if in_place && record.new_head.is_some() {
            self.bus.publish(Event::HeadChanged {
                head_id: result.head_id.clone(),
            });
        }
        Ok(result)
    }

    /// Undoes the last rewind (code, conversation or both), if nothing happened since.
    pub(crate) fn undo(&mut self, transaction: Option<&str>) -> Result<RewindResult> {
        let w = self.walk_target(Walk::Undo, transaction)?;
        let outcome = self.store.undo(&w.target.id)?;
        self.note_walk(&w, Walk::Undo, &outcome)?;
        if let Some(RewindRecord {
            parent_head,
            new_head: Some(new_head),
            base_messages,
            ..
        }) = &w.record
        {
            if self.session.selected() == new_head {
                self.session.select(parent_head)?;
                self.bus.publish(Event::HeadChanged {
                    head_id: parent_head.clone(),
                });
            }
            let untouched = self
                .session
                .head(new_head)
                .map(|h| h.message_count <= *base_messages)
                .unwrap_or(false);
            if untouched && self.session.selected() != new_head {
                self.session.retire(new_head)?;
            }
        }
        self.plans.clear();
        self.bus.publish(Event::Undone {
            transaction_id: w.target.id.clone(),
            head_id: self.session.selected().clone(),
        });
        let redo_available = self.redo_available();
        Ok(self.walk_result(&w, Walk::Undo, outcome, false, redo_available))
    }
}

/// The files a failed file commit names, each a typed conflict (docs/FORMATS.md: the files that
/// moved are in `conflicts`): those a check found, or the one a change caught while writing
/// (`external_change`, by its workspace path).
pub(crate) fn moved_files(e: &CheckpointError) -> Vec<retrace_protocol::Conflict> {
    match e {
        CheckpointError::Changed { conflicts }
        | CheckpointError::Refused { conflicts }
        | CheckpointError::RedoRefused { conflicts } => conflicts.clone(),
        CheckpointError::ExternalChange { path } => vec![retrace_protocol::Conflict {
            path: path.clone(),
            reason: retrace_protocol::ConflictReason::ExternalChange,
            checkpoint_sha256: None,
            last_owned_sha256: None,
            current_sha256: None,
            checkpoint_mode: None,
            current_mode: None,
        }],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod moved_tests {
    use super::*;

    #[test]
    fn a_change_caught_while_writing_is_a_typed_conflict() {
        let e = CheckpointError::ExternalChange { path: "d/f".into() };
        let moved = moved_files(&e);
        assert_eq!(moved.len(), 1);
        assert_eq!(moved[0].path, "d/f");
        assert_eq!(moved[0].reason, retrace_protocol::ConflictReason::ExternalChange);
    }
}
