//! Redo (SPEC §5.5): the newest undone rewind applied again — its files as one transaction, checked
//! against what the undo left before anything changes; its conversation half by selecting its
//! head again — recorded so that undo takes both back, as it takes back a rewind.

use retrace_checkpoint::tx::RewindRecord;
use retrace_protocol::{Event, HeadId, RewindResult, RewindScope};
use retrace_session::{ForkSpec, HeadKind};

use super::walk::Walk;
use super::Core;
use crate::error::Result;

impl Core {
    /// Applies the newest undone rewind (code, conversation or both) again.
    pub(crate) fn redo(&mut self, transaction: Option<&str>) -> Result<RewindResult> {
        let w = self.walk_target(Walk::Redo, transaction)?;
        // The files are checked before the conversation changes: a file changed since the undo
        // refuses the redo, and nothing is written anywhere.
        self.store.check_redo(&w.target.id)?;
        let (record, made) = match w.record.clone() {
            Some(r) if r.new_head.is_some() => {
                let (r, made) = self.head_for_redo(r)?;
                (Some(r), made)
            }
            other => (other, None),
        };
        let outcome = match self
            .store
            .redo_tagged(&w.target.id, record.as_ref().map(RewindRecord::to_stored))
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
        self.note_walk(&w, Walk::Redo, &outcome)?;
        if let Some(head) = record.as_ref().and_then(|r| r.new_head.clone()) {
            if self.session.selected() != &head {
                self.session.select(&head)?;
                self.bus.publish(Event::HeadChanged { head_id: head });
            }
        }
        self.plans.clear();
        self.bus.publish(Event::Redone {
            transaction_id: w.target.id.clone(),
            redo_id: outcome.transaction_id.clone().unwrap_or_default(),
            head_id: self.session.selected().clone(),
        });
        Ok(self.walk_result(&w, Walk::Redo, outcome, made.is_some(), false))
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
