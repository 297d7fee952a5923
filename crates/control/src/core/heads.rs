//! Heads: fork from a turn, switch, retire, and the two summarize actions (SPEC §5.1 actions 4–6).
//! A summary needs the model, so the actor runs it as a job (`actor/summary_job.rs`):
//! [`Core::summary_source`] first (which refuses "nothing to summarize" before any model is
//! asked), then the model, then [`Core::finish_summary`].

use retrace_model::SUMMARY_PROMPT;
use retrace_protocol::{ChatMessage, Event, HeadId, HeadRef, SessionId, SummarizeDirection};
use retrace_session::{ForkSpec, HeadKind, SessionError, SummaryMode, SummarySpec};

use super::Core;
use crate::error::{ControlError, Result};

fn mode(d: SummarizeDirection) -> SummaryMode {
    match d {
        SummarizeDirection::From => SummaryMode::From,
        SummarizeDirection::UpTo => SummaryMode::UpTo,
    }
}

/// "Not on this head" in the words the checkpoint list uses for the same condition.
pub(super) fn not_on_head(e: SessionError) -> ControlError {
    match e {
        SessionError::TurnNotVisible { .. } | SessionError::NotOnHead { .. } => {
            ControlError::Coded(retrace_protocol::Error::new(
                retrace_protocol::ErrorCode::Refused,
                format!("{e}: not on this head"),
            ))
        }
        other => other.into(),
    }
}

impl Core {
    fn head_ref(&self) -> HeadRef {
        self.titled(self.session.selected().clone(), self.session.id().clone())
    }

    /// `head` of `session_id` with what frontends call it.
    fn titled(&self, head_id: HeadId, session_id: SessionId) -> HeadRef {
        let title = crate::view::heads_of(&self.session)
            .into_iter()
            .find(|h| h.id == head_id)
            .map(|h| h.title)
            .unwrap_or_default();
        HeadRef {
            head_id,
            session_id,
            title,
        }
    }

    /// A new head that ends just before `turn`; code untouched. With `select`, it becomes selected.
    /// A turn a compaction folded forks from the head it was folded from.
    pub(crate) fn fork(&mut self, turn: u64, name: Option<String>, select: bool) -> Result<HeadRef> {
        crate::view::sound(&self.session)?;
        let (head, boundary) = match self.conversation_source(turn) {
            Some(found) => found,
            None => {
                let head = self.session.selected().clone();
                (
                    head.clone(),
                    self.session.boundary(&head, turn).map_err(not_on_head)?,
                )
            }
        };
        let made = self.session.fork(
            &head,
            boundary.before.as_ref(),
            ForkSpec {
                kind: HeadKind::Fork,
                name,
                select,
            },
        )?;
        self.plans.clear();
        if select {
            self.bus.publish(Event::HeadChanged {
                head_id: made.head.clone(),
            });
        }
        Ok(self.titled(made.head, made.session_id))
    }

    /// Selects a head (id or name).
    pub(crate) fn switch_head(&mut self, id_or_name: &str) -> Result<HeadRef> {
        crate::view::sound(&self.session)?;
        let head = self.session.resolve_head(id_or_name)?;
        self.session.select(&head)?;
        self.plans.clear();
        self.bus.publish(Event::HeadChanged {
            head_id: head.clone(),
        });
        Ok(self.head_ref())
    }

    /// Retires a head (refused for the selected one).
    pub(crate) fn retire_head(&mut self, id_or_name: &str) -> Result<()> {
        crate::view::sound(&self.session)?;
        let head = self.session.resolve_head(id_or_name)?;
        self.session.retire(&head)?;
        self.plans.clear();
        Ok(())
    }

    /// What a summary from or up to `turn` folds, followed by the instruction, as the model's
    /// request; refused when the turn is not on this head or nothing would be folded.
    pub(crate) fn summary_source(
        &self,
        turn: u64,
        direction: SummarizeDirection,
    ) -> Result<Vec<ChatMessage>> {
        // Before the model is asked: a damaged log takes no summary.
        crate::view::sound(&self.session)?;
        let head = self.session.selected();
        let mut messages: Vec<ChatMessage> = self
            .session
            .summary_source(head, turn, mode(direction))
            .map_err(not_on_head)?
            .into_iter()
            .map(|m| m.to_chat())
            .collect();
        messages.push(ChatMessage::user(SUMMARY_PROMPT));
        Ok(messages)
    }

    /// Makes the summary head from the model's `content` and selects it; `compaction` marks it
    /// as made by a compaction; `usage`: what the server counted for the request that wrote it
    /// (recorded with it, counted in the session's tally).
    pub(crate) fn finish_summary(
        &mut self,
        turn: u64,
        direction: SummarizeDirection,
        content: String,
        compaction: bool,
        usage: Option<retrace_protocol::TokenUsage>,
    ) -> Result<HeadRef> {
        let head = self.session.selected().clone();
        if compaction {
            // A compaction is there to make the conversation smaller: a summary that is not
            // shorter than what it replaces makes no head (both estimated alike).
            let folded: Vec<ChatMessage> = self
                .session
                .summary_source(&head, turn, mode(direction))
                .map_err(not_on_head)?
                .into_iter()
                .map(|m| m.to_chat())
                .collect();
            let folded = retrace_agent::history_tokens(&folded);
            let summary = retrace_agent::history_tokens(&[ChatMessage::user(content.clone())]);
            if summary >= folded {
                return Err(crate::error::coded(
                    retrace_protocol::ErrorCode::Refused,
                    format!(
                        "the summary (about {summary} tokens) is not shorter than the turns it would replace (about {folded} tokens): nothing was compacted"
                    ),
                ));
            }
        }
        let made = self
            .session
            .summarize(SummarySpec {
                compaction,
                head,
                turn,
                mode: mode(direction),
                content,
                name: None,
                select: true,
                usage,
            })
            .map_err(not_on_head)?;
        self.plans.clear();
        self.bus.publish(Event::HeadChanged {
            head_id: made.head.clone(),
        });
        Ok(self.titled(made.head, made.session_id))
    }
}
