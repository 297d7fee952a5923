//! Heads: fork from a turn, switch, retire, and the two summarize actions (SPEC §5.1 actions 4–6).

use retrace_model::{CancellationToken, ChatMessage, ChatRequest, SUMMARY_PROMPT};
use retrace_protocol::Event;
use retrace_session::{ForkSpec, HeadKind, SessionError, SummaryMode, SummarySpec};

use crate::controller::Controller;
use crate::error::{ControlError, Result};
use crate::seam::chat_of;

/// Which part of the head a summary replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummarizeWhich {
    /// This turn and everything after it (§5.1 action 5).
    From,
    /// Everything before this turn (§5.1 action 6).
    UpTo,
}

fn not_on_head(e: SessionError) -> ControlError {
    match e {
        SessionError::TurnNotVisible { .. } | SessionError::NotOnHead { .. } => {
            ControlError::Refused(format!("{e}: not on this head"))
        }
        SessionError::NothingToSummarize => ControlError::Refused("nothing to summarize".into()),
        other => other.into(),
    }
}

impl Controller {
    /// A new head that ends just before `turn`; code untouched. With `select`, it becomes selected.
    pub fn fork(
        &mut self,
        turn: u64,
        name: Option<String>,
        select: bool,
        out: &mut dyn FnMut(Event),
    ) -> Result<String> {
        if self.running {
            return Err(ControlError::Refused(
                "cannot fork while a turn is running".into(),
            ));
        }
        let head = self.session.selected().clone();
        let boundary = self.session.boundary(&head, turn).map_err(not_on_head)?;
        let made = self
            .session
            .fork(
                &head,
                boundary.before.as_ref(),
                ForkSpec {
                    kind: HeadKind::Fork,
                    name,
                    select,
                },
            )
            .map_err(|e| match e {
                SessionError::NameTaken(_) | SessionError::EmptyName => ControlError::Usage(e.to_string()),
                other => other.into(),
            })?;
        self.plans.clear();
        if select {
            out(Event::HeadChanged {
                head_id: made.head.as_str().to_string(),
            });
        }
        Ok(made.head.as_str().to_string())
    }

    /// Selects a head (id or name).
    pub fn switch_head(&mut self, id_or_name: &str, out: &mut dyn FnMut(Event)) -> Result<String> {
        if self.running {
            return Err(ControlError::Refused(
                "cannot switch heads while a turn is running".into(),
            ));
        }
        let head = self
            .session
            .resolve_head(id_or_name)
            .map_err(|e| ControlError::Usage(e.to_string()))?;
        self.session.select(&head).map_err(|e| match e {
            SessionError::HeadRetired(_) => ControlError::Refused(e.to_string()),
            other => other.into(),
        })?;
        self.plans.clear();
        out(Event::HeadChanged {
            head_id: head.as_str().to_string(),
        });
        Ok(head.as_str().to_string())
    }

    /// Retires a head (refused for the selected one).
    pub fn retire_head(&mut self, id_or_name: &str) -> Result<()> {
        let head = self
            .session
            .resolve_head(id_or_name)
            .map_err(|e| ControlError::Usage(e.to_string()))?;
        self.session
            .retire(&head)
            .map_err(|e| ControlError::Refused(e.to_string()))?;
        self.plans.clear();
        Ok(())
    }

    /// Summarizes from or up to `turn` through the session's model and selects the new head.
    pub async fn summarize(
        &mut self,
        turn: u64,
        which: SummarizeWhich,
        out: &mut (dyn FnMut(Event) + Send),
    ) -> Result<String> {
        if self.running {
            return Err(ControlError::Refused(
                "cannot summarize while a turn is running".into(),
            ));
        }
        let head = self.session.selected().clone();
        let mode = match which {
            SummarizeWhich::From => SummaryMode::From,
            SummarizeWhich::UpTo => SummaryMode::UpTo,
        };
        let source: Vec<ChatMessage> = self
            .session
            .summary_source(&head, turn, mode)
            .map_err(not_on_head)?
            .into_iter()
            .map(chat_of)
            .collect();
        let Some(agent) = self.agent.as_mut() else {
            return Err(ControlError::Model(
                "summaries need a model: pass --model or set [model] name".into(),
            ));
        };
        let mut messages = source;
        messages.push(ChatMessage::user(SUMMARY_PROMPT));
        let req = ChatRequest {
            messages,
            tools: Vec::new(),
        };
        let mut ignore = |_| {};
        let response = agent
            .model_mut()
            .complete(&req, &mut ignore, &CancellationToken::new())
            .await
            .map_err(|e| ControlError::Model(format!("the model could not summarize: {e}")))?;
        let content = response.content.trim().to_string();
        if content.is_empty() {
            return Err(ControlError::Model("the model returned an empty summary".into()));
        }
        let made = self
            .session
            .summarize(SummarySpec {
                head,
                turn,
                mode,
                content,
                name: None,
                select: true,
            })
            .map_err(not_on_head)?;
        self.plans.clear();
        out(Event::HeadChanged {
            head_id: made.head.as_str().to_string(),
        });
        Ok(made.head.as_str().to_string())
    }
}
