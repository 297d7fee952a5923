//! A turn as the actor runs it: the capture seam (before-images into the store), the sink
//! (messages into the log, events onto the bus) and the approver (approvals by `call_id` from any
//! frontend), each reaching the shared [`Core`] through its mutex for as long as one call takes.

use std::sync::{Arc, Mutex};

use retrace_agent::{
    Agent, ApprovalRequest, Approver, CaptureSeam, Captured, Compaction, SeamError, ToolResult, TurnSink,
};
use retrace_checkpoint::Change;
use retrace_model::{BoxFuture, CancellationToken};
use retrace_protocol::{
    ApprovalDecision, ChatMessage, Event, Gap, GapReason, HeadId, PendingApproval, Role, SummarizeDirection,
    TokenUsage,
};
use retrace_session::NewMessage;
use retrace_tools::Preview;

use crate::bus::EventBus;
use crate::core::Core;
use crate::items::build::stored_checkpoint;
use crate::items::live::record_of;
use crate::shared::{lock, Shared};

/// The seam: before-images into the store, durable before the tool runs.
pub(crate) struct StoreSeam {
    pub(crate) core: Arc<Mutex<Core>>,
}

impl CaptureSeam for StoreSeam {
    fn before(&mut self, tool: &str, preview: &Preview) -> Result<Captured, SeamError> {
        let changes: Vec<Change> = preview.changes.iter().map(change_of).collect();
        let mut core = lock(&self.core);
        let report = core.store.capture_before(&changes, Some(tool)).map_err(refuse)?;
        let mut gaps = report.gaps;
        for g in &preview.gaps {
            let mut g = g.clone();
            g.tool.get_or_insert_with(|| tool.to_string());
            core.store.record_gap(g.clone()).map_err(refuse)?;
            if !gaps.iter().any(|x| x.reason == g.reason && x.path == g.path) {
                gaps.push(g);
            }
        }
        Ok(Captured {
            paths: report.captured.iter().map(|p| p.to_lossy()).collect(),
            gaps,
        })
    }

    fn after(&mut self, _tool: &str, preview: &Preview, ok: bool) -> Result<(), SeamError> {
        // A tool that succeeded left its intents (its re-check and atomic write guarantee it):
        // they are the after-images, without reading the files back. Otherwise what is there is.
        // A tool that failed proves nothing: only a path holding exactly its intent (it wrote,
        // then failed) becomes Retrace's; the rest keep their proofs (`capture_after_failed`).
        let known: Vec<(std::path::PathBuf, Option<retrace_checkpoint::model::Image>)> = preview
            .changes
            .iter()
            .map(|c| (c.abs.clone(), change_of(c).intent))
            .collect();
        let mut core = lock(&self.core);
        match ok {
            true => core.store.capture_after_known(&known),
            false => core.store.capture_after_failed(&known),
        }
        .map_err(refuse)
    }

    fn shell(&mut self, command: &str) -> Result<(), SeamError> {
        lock(&self.core)
            .store
            .record_gap(Gap {
                reason: GapReason::BashSideEffect,
                tool: Some("bash".into()),
                path: None,
                detail: Some(command.to_string()),
            })
            .map_err(refuse)
    }
}

/// A previewed change as the store captures it, with what the tool will leave there (journaled
/// before the tool runs, so a crash right after the write still proves it Retrace's own).
pub(crate) fn change_of(c: &retrace_tools::PlannedChange) -> Change {
    let change = Change::new(c.abs.clone(), c.kind).with_temps_from(retrace_tools::next_temp_number());
    match &c.after {
        Some(a) => change.with_intent(retrace_checkpoint::model::Image {
            existed: a.exists,
            sha256: a.sha256.clone(),
            mode: a.mode,
        }),
        None => change,
    }
}

/// The sink: messages into the session log on the turn's head, events onto the bus.
pub(crate) struct LogSink {
    pub(crate) core: Arc<Mutex<Core>>,
    pub(crate) shared: Arc<Shared>,
    /// The head the turn writes to (a compaction moves it to the summary head).
    pub(crate) head: HeadId,
    pub(crate) turn: u64,
}

impl LogSink {
    fn append(&mut self, m: NewMessage) -> Result<(), SeamError> {
        lock(&self.core)
            .session
            .append(&self.head, m)
            .map(|_| ())
            .map_err(fatal)
    }
}

impl TurnSink for LogSink {
    fn event(&mut self, event: Event) {
        // Published with the core locked: a snapshot (taken under the same lock) sees each
        // event's effect exactly when it sees the event's number.
        let mut core = lock(&self.core);
        let core = &mut *core;
        let bus = self.shared.bus.clone();
        match event {
            Event::AssistantDelta { text, .. } => delta(core, &bus, false, text),
            Event::ReasoningDelta { text, .. } => delta(core, &bus, true, text),
            Event::ToolCall { ref id, .. } => {
                let item = core.live.as_ref().and_then(|l| l.tool(id, None));
                bus.publish(event.clone());
                if let Some(item) = item {
                    bus.publish(Event::ItemStarted { item });
                }
            }
            Event::CheckpointCaptured { turn, .. } => {
                bus.publish(event);
                bus.publish(Event::ItemUpdated {
                    item: stored_checkpoint(&core.store, turn),
                });
            }
            other => bus.publish(other),
        }
    }

    fn message(&mut self, m: &ChatMessage) -> Result<(), SeamError> {
        self.append(NewMessage::from(m))
    }

    fn assistant(&mut self, m: &ChatMessage, usage: Option<TokenUsage>) -> Result<(), SeamError> {
        let mut core = lock(&self.core);
        let core = &mut *core;
        let streamed = core.live.as_mut().and_then(|l| l.take_streaming());
        let reasoning = streamed
            .as_ref()
            .map(|s| s.reasoning.clone())
            .filter(|r| !r.is_empty());
        let appended = core
            .session
            .append(
                &self.head,
                NewMessage {
                    id: streamed.as_ref().map(|s| s.id.clone()),
                    usage,
                    reasoning: reasoning.clone(),
                    ..NewMessage::from(m)
                },
            )
            .map_err(fatal)?;
        if let Some(live) = core.live.as_mut() {
            live.assistant_written(
                &self.shared.bus,
                appended.message_id.as_str(),
                &m.content,
                reasoning.as_deref(),
                &m.tool_calls,
                streamed.is_some(),
            );
        }
        Ok(())
    }

    fn tool_result(&mut self, call_id: &str, result: &ToolResult) -> Result<(), SeamError> {
        let mut core = lock(&self.core);
        let core = &mut *core;
        let record = record_of(result);
        core.session
            .append(
                &self.head,
                NewMessage {
                    tool_call_id: Some(call_id.to_string()),
                    outcome: Some(record.clone()),
                    ..NewMessage::new(Role::Tool, result.content.clone())
                },
            )
            .map_err(fatal)?;
        if let Some(item) = core
            .live
            .as_ref()
            .and_then(|l| l.tool(call_id, Some((&result.content, &record))))
        {
            self.shared.bus.publish(Event::ItemCompleted { item });
        }
        Ok(())
    }

    fn compaction_source(&mut self, max_tokens: u64) -> Option<Result<Vec<ChatMessage>, SeamError>> {
        Some(
            lock(&self.core)
                .compaction_source(self.turn, max_tokens)
                .map_err(refuse),
        )
    }

    fn compacted(&mut self, summary: String) -> Result<Compaction, SeamError> {
        let mut core = lock(&self.core);
        let made = core
            .finish_summary(self.turn, SummarizeDirection::UpTo, summary, true)
            .map_err(refuse)?;
        let history = core.history(&made.head_id).map_err(refuse)?;
        let from_head = std::mem::replace(&mut self.head, made.head_id.clone());
        Ok(Compaction {
            history,
            head_id: made.head_id,
            from_head,
        })
    }
}

/// A store error as the seam reports it: the call is refused, nothing was written.
fn refuse(e: impl std::fmt::Display) -> SeamError {
    SeamError::Refuse(e.to_string())
}

/// A log error as the sink reports it: the turn cannot go on, the log must not miss what the
/// model was told.
fn fatal(e: impl std::fmt::Display) -> SeamError {
    SeamError::Fatal(format!("cannot write the conversation log: {e}"))
}

/// A streamed delta, published with the id of the item it extends.
fn delta(core: &mut Core, bus: &EventBus, reasoning: bool, text: String) {
    let session = &core.session;
    match core.live.as_mut() {
        Some(live) => live.delta(bus, reasoning, text, || session.new_message_id()),
        None if reasoning => bus.publish(Event::ReasoningDelta { text, item_id: None }),
        None => bus.publish(Event::AssistantDelta { text, item_id: None }),
    }
}

/// Approvals: `approval_requested` on the bus, then the first answer by `call_id` from any handle
/// (or a deny when the turn is cancelled). "Allow for this session" remembers the command line.
pub(crate) struct SharedApprover {
    pub(crate) shared: Arc<Shared>,
}

impl Approver for SharedApprover {
    fn approve<'a>(
        &'a self,
        req: ApprovalRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            if self.shared.is_allowed(&req.command) {
                return ApprovalDecision::Session;
            }
            let answer = self.shared.await_approval(PendingApproval {
                call_id: req.call_id.clone(),
                tool: req.tool.clone(),
                command: req.command.clone(),
            });
            self.shared.bus.publish(Event::ApprovalRequested {
                call_id: req.call_id.clone(),
                tool: req.tool.clone(),
                command: req.command.clone(),
            });
            let decision = tokio::select! {
                d = answer => d.unwrap_or(ApprovalDecision::Deny),
                _ = cancel.cancelled() => ApprovalDecision::Deny,
            };
            self.shared.drop_approval(&req.call_id);
            if decision == ApprovalDecision::Session {
                self.shared.allow(&req.command);
            }
            self.shared.bus.publish(Event::ApprovalResolved {
                call_id: req.call_id,
                decision,
            });
            decision
        })
    }
}

/// Runs the agent part of a turn whose checkpoint and user message exist, then ends it. Gives the
/// agent back.
pub(crate) async fn run_turn(
    core: Arc<Mutex<Core>>,
    shared: Arc<Shared>,
    mut agent: Agent,
    turn: u64,
    head: HeadId,
    history: Vec<ChatMessage>,
    cancel: CancellationToken,
) -> Agent {
    let mut seam = StoreSeam { core: core.clone() };
    let mut sink = LogSink {
        core: core.clone(),
        shared: shared.clone(),
        head,
        turn,
    };
    let approver = SharedApprover {
        shared: shared.clone(),
    };
    let report = agent
        .run_turn(turn, history, &mut seam, &mut sink, &approver, &cancel)
        .await;
    shared.mark_finishing();
    lock(&core).finish_turn(turn, report);
    agent
}
