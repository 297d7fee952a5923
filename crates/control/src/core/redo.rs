//! Redo (SPEC §5.5): the newest undone rewind applied again — its files as one transaction, checked
//! against what the undo left before anything changes; its conversation half by selecting its
//! head again — recorded so that undo takes both back, as it takes back a rewind.

use retrace_checkpoint::tx::RewindRecord;
use retrace_protocol::{ErrorCode, Event, HeadId, Missing, RewindResult, RewindScope};
use retrace_session::{ForkSpec, HeadKind};

use super::Core;
use crate::error::{coded, Result};

impl Core {
    /// Applies the newest undone rewind (code, conversation or both) again.
    pub(crate) fn redo(&mut self, transaction: Option<&str>) -> Result<RewindResult> {
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
        let Some(target) = self.store.redo_target().cloned() else {
            return Err(coded(
                ErrorCode::Refused,
                "nothing to redo: redo is available after an undo, until another rewind or revert",
            ));
        };
        if let Some(tx) = transaction {
            if tx != target.id {
                return Err(coded(
                    ErrorCode::Refused,
                    format!(
                        "only the last undone rewind can be redone; that is transaction {}",
                        target.id
                    ),
                ));
            }
        }
        // A record that cannot be read is an error naming its manifest, never "code only".
        let record = self.store.rewind_record(&target)?;
        let code_only = record.as_ref().is_none_or(|r| r.scope == RewindScope::Code);
        // As for undo: an old flat log's conversation lives in the session it became, and a
        // damaged log takes no change; only a restore of files is redone there.
        let flat = self.session.format() == 1;
        if flat && !code_only {
            return Err(coded(
                ErrorCode::Refused,
                "this rewind of an old (format-1) log changed the conversation, which now lives in the new session it became; only a restore of files can be redone through the old log",
            ));
        }
        if !code_only {
            crate::view::sound(&self.session)?;
        }
        // The files are checked before the conversation changes: a file changed since the undo
        // refuses the redo, and nothing is written anywhere.
        self.store.check_redo(&target.id)?;
        let (record, made) = match record {
            Some(r) if r.new_head.is_some() => {
                let (r, made) = self.head_for_redo(r)?;
                (Some(r), made)
            }
            other => (other, None),
        };
        let outcome = match self
            .store
            .redo_tagged(&target.id, record.as_ref().map(RewindRecord::to_stored))
        {
            Ok(o) => o,
            Err(e) => {
                // Something moved between the check and the writes: the head made for the redo
                // is not left as a version nobody chose.
                if let Some(h) = &made {
                    let _ = self.session.retire(h);
                }
                return Err(e.into());
            }
        };
        if code_only && outcome.transaction_id.is_some() && !flat && self.session.damage().is_none() {
            // The note the undo left would now be false: say the files are restored again.
            let mut files = outcome.files_written.clone();
            files.extend(outcome.files_deleted.iter().cloned());
            let head = self.session.selected().clone();
            self.note(
                &head,
                format!(
                    "Note from Retrace: the user redid that restore; these files are again as it left them: {}.",
                    files.join(", ")
                ),
            )?;
        }
        if let Some(head) = record.as_ref().and_then(|r| r.new_head.clone()) {
            if self.session.selected() != &head {
                self.session.select(&head)?;
                self.bus.publish(Event::HeadChanged { head_id: head });
            }
        }
        self.plans.clear();
        self.bus.publish(Event::Redone {
            transaction_id: target.id.clone(),
            redo_id: outcome.transaction_id.clone().unwrap_or_default(),
            head_id: self.session.selected().clone(),
        });
        Ok(RewindResult {
            ok: true,
            partial: false,
            conversation_forked: made.is_some(),
            head_id: self.session.selected().clone(),
            session_id: self.session.id().clone(),
            files_written: outcome.files_written,
            files_deleted: outcome.files_deleted,
            transaction_id: outcome.transaction_id,
            undo_available: outcome.undo_available,
            redo_available: false,
            conflicts: Vec::new(),
            prompt: target.turn.map(|t| self.prompt_of(t)).unwrap_or_default(),
            error: None,
        })
    }

    /// The redo's rewind record, from the redone one's (which made a head): the head to select
    /// again and the head selected now, which undoing the redo goes back to. A head the undo
    /// retired cannot be selected again, so a new one is made with the same conversation (forked
    /// from its parent at the same message when it has no messages of its own, else from its
    /// tip); it is returned too.
    fn head_for_redo(&mut self, r: RewindRecord) -> Result<(RewindRecord, Option<HeadId>)> {
        let Some(head) = r.new_head.clone() else {
            return Ok((r, None));
        };
        let parent_head = self.session.selected().clone();
        let info = self.session.head(&head)?;
        if !info.retired {
            return Ok((RewindRecord { parent_head, ..r }, None));
        }
        let (source, from) = match &info.parent_head {
            Some(p) if info.message_count <= r.base_messages => (p.clone(), info.fork_from.clone()),
            _ => (
                head.clone(),
                self.session.project(&head)?.last().map(|m| m.id.clone()),
            ),
        };
        let made = self.session.fork(
            &source,
            from.as_ref(),
            ForkSpec {
                kind: HeadKind::Rewind,
                name: None,
                select: false,
            },
        )?;
        let base_messages = self.session.head(&made.head)?.message_count;
        let record = RewindRecord {
            parent_head,
            new_head: Some(made.head.clone()),
            base_messages,
            ..r
        };
        Ok((record, Some(made.head)))
    }

    /// Whether `redo` would apply an undone rewind again now, as results say it
    /// (`redo_available`): there is one, and what it did to the conversation can be done here.
    /// Its files are checked when it runs.
    pub(crate) fn redo_available(&self) -> bool {
        let Some(target) = self.store.redo_target() else {
            return false;
        };
        match self.store.rewind_record(target) {
            Err(_) => false,
            Ok(None) => true,
            Ok(Some(r)) if r.scope == RewindScope::Code => true,
            Ok(Some(_)) => self.session.format() != 1 && self.session.damage().is_none(),
        }
    }
}
