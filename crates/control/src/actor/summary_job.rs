//! A summary as a job of the actor (SPEC §5.1 actions 5–6, §7 `compact`): refused at once when
//! the turn is not on the selected head or nothing would be folded, before any model is needed;
//! then the model (the session's, or one given for the summary) writes it on a task while the
//! actor keeps answering reads, and the summary head is made with the core locked. A compaction is
//! the same job up to the selected head's latest turn, announced by `compacted` too.

use std::sync::Mutex;

use retrace_agent::{history_tokens, Agent};
use retrace_model::{CancellationToken, ChatModel, ChatRequest, Delta};
use retrace_protocol::{
    ChatMessage, CompactRequest, ErrorCode, Event, HeadRef, JobKind, RunningJob, SummarizeDirection,
    SummarizeRequest,
};
use tokio::sync::oneshot;

use super::{sync_session_id, Actor};
use crate::bus::EventBus;
use crate::core::Core;
use crate::error::{coded, Result};
use crate::shared::{lock, Running};

/// Where a summary's answer goes: the request that asked for it.
type Reply = oneshot::Sender<std::result::Result<HeadRef, retrace_protocol::Error>>;

impl Actor {
    /// Starts a summary: refused at once when the turn is not on this head or nothing would be
    /// folded (before any model is needed); the model then writes it as a job, which answers
    /// `reply`.
    pub(crate) fn start_summary(&mut self, req: SummarizeRequest, reply: Reply) {
        self.start_summary_job(req, None, reply);
    }

    /// Starts a compaction: a summary up to the selected head's latest turn, announced by
    /// `compacted` once its head is made (SPEC §7 `compact`).
    pub(crate) fn start_compact(&mut self, req: CompactRequest, reply: Reply) {
        let found = self.idle().and_then(|()| {
            let core = self.core();
            let turn = core.latest_turn()?;
            let head = core.selected_head().clone();
            let before = history_tokens(&core.history(&head)?);
            Ok((turn, before))
        });
        let (turn, before) = match found {
            Ok(f) => f,
            Err(e) => {
                let _ = reply.send(Err(e.into()));
                return;
            }
        };
        let req = SummarizeRequest {
            turn,
            direction: SummarizeDirection::UpTo,
            model: req.model,
        };
        self.start_summary_job(req, Some(before), reply);
    }

    /// A summary as a job; with `compaction` (the size before), announced as a compaction too.
    fn start_summary_job(&mut self, req: SummarizeRequest, compaction: Option<u64>, reply: Reply) {
        let started = self.prepare_summary(&req, compaction.is_some());
        let (messages, model) = match started {
            Ok(s) => s,
            Err(e) => {
                let _ = reply.send(Err(e.into()));
                return;
            }
        };
        let cancel = CancellationToken::new();
        self.shared.set_running(Some(Running {
            job: RunningJob {
                kind: JobKind::Summary,
                turn: req.turn,
            },
            cancel: cancel.clone(),
        }));
        self.shared.bus.publish(Event::SummaryStarted {
            turn: req.turn,
            direction: req.direction,
        });
        let core = self.core.clone();
        let shared = self.shared.clone();
        self.job = Some(tokio::spawn(async move {
            let mut model = model;
            let turn = req.turn;
            let from_head = lock(&core).selected_head().clone();
            let out: std::result::Result<HeadRef, retrace_protocol::Error> = summarize(
                &core,
                &shared.bus,
                &mut model,
                req,
                messages,
                &cancel,
                compaction.is_some(),
            )
            .await
            .map_err(Into::into);
            if let (Some(before), Ok(made)) = (compaction, &out) {
                let mut core = lock(&core);
                let after = core
                    .history(&made.head_id)
                    .map(|h| history_tokens(&h))
                    .unwrap_or(0);
                shared.bus.publish(Event::Compacted {
                    head_id: made.head_id.clone(),
                    from_head,
                    turn,
                    automatic: false,
                    before_tokens: before,
                    after_tokens: after,
                });
                core.compacted(made.head_id.clone(), after);
            }
            sync_session_id(&core, &shared);
            shared.mark_finishing();
            shared.bus.publish(Event::SummaryFinished {
                turn,
                ok: out.is_ok(),
                head_id: out.as_ref().ok().map(|h| h.head_id.clone()),
                error: out.as_ref().err().map(|e| e.message.clone()),
            });
            let _ = reply.send(out);
            match model {
                Summarizer::Agent(a) => Some(a),
                Summarizer::Model(_) => None,
            }
        }));
    }

    fn prepare_summary(
        &mut self,
        req: &SummarizeRequest,
        compaction: bool,
    ) -> Result<(Vec<ChatMessage>, Summarizer)> {
        self.may_start_job()?;
        let messages = if compaction {
            // The request must fit the model that writes it (the session's window, as known).
            let max = self.agent.as_ref().map_or_else(
                || retrace_agent::ContextBudget::default().threshold(),
                |a| a.budget().threshold(),
            );
            self.core()
                .compaction_source(req.turn, max)
                .map_err(|e| {
                    let e = retrace_protocol::Error::from(e);
                    if e.code == ErrorCode::Refused {
                        coded(
                            ErrorCode::Refused,
                            "nothing to compact: only the latest turn is on this head (compaction summarizes the turns before it)",
                        )
                    } else {
                        e.into()
                    }
                })?
        } else {
            self.core().summary_source(req.turn, req.direction)?
        };
        let model = match &req.model {
            Some(spec) => Summarizer::Model((self.factory)(spec)?.into_model()),
            None => Summarizer::Agent(Box::new(self.agent.take().ok_or_else(Self::no_model)?)),
        };
        Ok((messages, model))
    }
}

/// The model that writes a summary: the session's (inside its agent) or one given for it.
enum Summarizer {
    Agent(Box<Agent>),
    Model(Box<dyn ChatModel>),
}

async fn summarize(
    core: &Mutex<Core>,
    bus: &EventBus,
    model: &mut Summarizer,
    req: SummarizeRequest,
    messages: Vec<ChatMessage>,
    cancel: &CancellationToken,
    compaction: bool,
) -> Result<HeadRef> {
    let request = ChatRequest {
        messages,
        tools: Vec::new(),
    };
    let model: &mut dyn ChatModel = match model {
        Summarizer::Agent(a) => a.model_mut(),
        Summarizer::Model(m) => m.as_mut(),
    };
    // The summary's text is not shown as it streams; a retry is, as for a turn.
    let mut on_delta = |d| {
        if let Delta::Retry { message, notice } = d {
            bus.publish(Event::Notice {
                message,
                retry: Some(notice),
            });
        }
    };
    let response = model
        .complete(&request, &mut on_delta, cancel)
        .await
        .map_err(|e| {
            if cancel.is_cancelled() {
                coded(ErrorCode::Cancelled, "the summary was cancelled; nothing changed")
            } else {
                coded(ErrorCode::Model, format!("the model could not summarize: {e}"))
            }
        })?;
    let content = response.content.trim().to_string();
    if content.is_empty() {
        return Err(coded(ErrorCode::Model, "the model returned an empty summary"));
    }
    lock(core).finish_summary(req.turn, req.direction, content, compaction, response.usage)
}
