//! The start and the end of a turn in the core (ARCHITECTURE.md "How data flows"): the prompt's
//! limits, the checkpoint opened before anything else, the user message, the conversation the
//! model is sent, and the checkpoint record and log completed when the agent is done.

use retrace_agent::{TurnEnd, TurnReport};
use retrace_checkpoint::BeginTurn;
use retrace_protocol::{ChatMessage, ErrorCode, Event, Item, ItemBody, TurnAccepted, TurnOutcome};
use retrace_session::TurnStart;

use super::repair::answer_every_call;
use super::Core;
use crate::error::Result;
use crate::items::build::stored_checkpoint;
use crate::items::LiveTurn;
use crate::view::sound;

/// The longest prompt a turn takes. A turn's checkpoint record holds its prompt twice (the record
/// and its compatibility marker), and records over 16 MiB are never read back.
pub const MAX_PROMPT_BYTES: usize = 4 << 20;

/// The length the prompt limit counts: the bytes without one final line end (`\n` or `\r\n`,
/// which a file or a pipe usually ends with), so a file of exactly the limit and a newline fits.
pub fn counted_prompt_len(prompt: &[u8]) -> usize {
    let mut n = prompt.len();
    if prompt.ends_with(b"\n") {
        n -= 1;
        if prompt[..n].ends_with(b"\r") {
            n -= 1;
        }
    }
    n
}

/// Refuses a prompt with nothing in it, or too long for its checkpoint. Frontends may ask before
/// they create a session.
pub fn check_prompt(prompt: &str) -> Result<(), retrace_protocol::Error> {
    if prompt.trim().is_empty() {
        return Err(retrace_protocol::Error::new(
            ErrorCode::Usage,
            "the prompt is empty; say what the agent should do",
        ));
    }
    if counted_prompt_len(prompt.as_bytes()) > MAX_PROMPT_BYTES {
        return Err(retrace_protocol::Error::new(
            ErrorCode::Usage,
            format!(
                "the prompt is {} bytes; the limit is {} MiB: put the material in a file of the workspace and ask the agent to read it",
                counted_prompt_len(prompt.as_bytes()),
                MAX_PROMPT_BYTES >> 20
            ),
        ));
    }
    Ok(())
}

impl Core {
    /// Starts a turn: the checkpoint first (number, prompt, boundary, head), then the user message,
    /// then `turn_started`. Returns the turn and the head's conversation for the model.
    pub(crate) fn begin_turn(&mut self, prompt: &str) -> Result<(TurnAccepted, Vec<ChatMessage>)> {
        check_prompt(prompt)?;
        sound(&self.session)?;
        self.upgrade_if_flat()?;
        let head = self.session.selected().clone();
        // A turn stopped by a signal or a crash may have left tool calls unanswered.
        self.repair_head(&head)?;
        let msg_index = self.session.project(&head)?.len() as u64;
        let message_id = self.session.new_message_id();
        let log_next = self.session.next_turn();
        let turn = self.store.begin_turn(BeginTurn {
            prompt: prompt.to_string(),
            msg_index,
            head: Some(head.as_str().to_string()),
            message_id: Some(message_id.as_str().to_string()),
            log_max_turn: log_next.checked_sub(1),
        })?;
        let started = self.session.start_turn(TurnStart {
            turn,
            head: head.clone(),
            message_id: Some(message_id.clone()),
            content: prompt.to_string(),
        })?;
        self.live = Some(LiveTurn::new(turn));
        // A new turn moves the generation on: prepared plans are stale.
        self.plans.clear();
        let accepted = TurnAccepted {
            session_id: started.session_id.clone(),
            head_id: head.clone(),
            turn,
        };
        self.bus.publish(Event::TurnStarted {
            session_id: accepted.session_id.clone(),
            head_id: head.clone(),
            turn,
            prompt: prompt.to_string(),
        });
        let previous = crate::items::build::turn_before(&self.session, &head, turn);
        if let Some(item) = crate::items::build::model_note(&self.session, previous, turn) {
            self.bus.publish(Event::ItemStarted { item });
        }
        self.bus.publish(Event::ItemStarted {
            item: Item {
                id: message_id.as_str().to_string(),
                turn: Some(turn),
                body: ItemBody::UserPrompt {
                    text: prompt.to_string(),
                },
            },
        });
        self.bus.publish(Event::ItemStarted {
            item: stored_checkpoint(&self.store, turn),
        });
        let history = self.history(&head)?;
        Ok((accepted, history))
    }

    /// A head's messages as the model sees them (notes are system messages, summaries user ones).
    pub(crate) fn history(&self, head: &retrace_protocol::HeadId) -> Result<Vec<ChatMessage>> {
        Ok(answer_every_call(
            self.session
                .project(head)?
                .into_iter()
                .map(|m| m.to_chat())
                .collect(),
        ))
    }

    /// What the log says a server counted last on the head's conversation (the messages before
    /// the answer, the request's tokens), when the history the model gets begins with those
    /// messages unchanged.
    pub(crate) fn logged_count(&self, head: &retrace_protocol::HeadId) -> Option<(usize, u64)> {
        let (messages, tokens) = self.session.last_counted(head).ok()??;
        let projected: Vec<ChatMessage> = self
            .session
            .project(head)
            .ok()?
            .into_iter()
            .take(messages)
            .map(|m| m.to_chat())
            .collect();
        // The repair of unanswered calls adds messages; a prefix it changed was not what the
        // server counted.
        let repaired = answer_every_call(projected.clone());
        (repaired == projected).then_some((messages, tokens))
    }

    /// Ends a turn: completes its checkpoint record, syncs the log, publishes `turn_finished`.
    pub(crate) fn finish_turn(&mut self, turn: u64, report: TurnReport) -> TurnOutcome {
        let TurnReport { end, usage } = report;
        self.plans.clear();
        if let Err(e) = self.store.finish_turn() {
            self.bus.publish(Event::Notice {
                message: format!("the turn's checkpoint record could not be completed: {e}"),
                retry: None,
            });
        }
        if let Some(streaming) = self.live.take().and_then(|mut l| l.take_streaming()) {
            // An answer cut off (a cancel, a failed request) is not in the conversation.
            self.bus.publish(Event::ItemRemoved {
                item_id: streaming.id.as_str().to_string(),
            });
        }
        self.bus.publish(Event::ItemCompleted {
            item: stored_checkpoint(&self.store, turn),
        });
        let ended = self.session.end_turn();
        let error = match (end, ended) {
            (TurnEnd::Failed(e), _) => Some(e),
            (TurnEnd::Cancelled, _) => Some("cancelled by the user".to_string()),
            (TurnEnd::Finished, Err(e)) => Some(format!("the conversation log could not be synced: {e}")),
            (TurnEnd::Finished, Ok(())) => None,
        };
        let outcome = TurnOutcome {
            turn,
            ok: error.is_none(),
            error,
            usage,
        };
        self.bus.publish(Event::TurnFinished {
            turn,
            ok: outcome.ok,
            error: outcome.error.clone(),
            usage,
        });
        outcome
    }
}
