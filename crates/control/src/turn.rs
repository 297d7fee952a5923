//! A turn as the actor runs it: the capture seam (before-images into the store), the sink
//! (messages into the log, events onto the bus) and the approver (approvals by `call_id` from any
//! frontend). The seam and the sink lock the shared [`Core`] for as long as one call takes; what
//! they write is the core's (`core/seam.rs`).

use std::sync::{Arc, Mutex};

use retrace_agent::{
    Agent, ApprovalRequest, Approver, CaptureSeam, Captured, Compaction, SeamError, ShellChanges,
    ShellCoverage, ToolResult, TurnSink,
};
use retrace_model::{BoxFuture, CancellationToken};
use retrace_protocol::{
    ApprovalAnswer, ApprovalDecision, ChatMessage, Event, HeadId, PendingApproval, SummarizeDirection,
    TokenUsage,
};
use retrace_session::NewMessage;
use retrace_tools::Preview;

use crate::core::Core;
use crate::shared::{lock, Shared};

/// The seam: before-images into the store, durable before the tool runs.
pub(crate) struct StoreSeam {
    pub(crate) core: Arc<Mutex<Core>>,
}

impl CaptureSeam for StoreSeam {
    fn before(&mut self, tool: &str, preview: &Preview) -> Result<Captured, SeamError> {
        lock(&self.core).capture_before(tool, preview).map_err(refuse)
    }

    fn after(&mut self, _tool: &str, preview: &Preview, ok: bool) -> Result<(), SeamError> {
        lock(&self.core).capture_after(preview, ok).map_err(refuse)
    }

    fn shell(&mut self, command: &str) -> Result<ShellCoverage, SeamError> {
        lock(&self.core).shell_before(command).map_err(refuse)
    }

    fn side_effect(&mut self, gap: retrace_protocol::Gap) -> Result<ShellCoverage, SeamError> {
        lock(&self.core).side_effect_before(gap).map_err(refuse)
    }

    fn watch(&mut self, gap: retrace_protocol::Gap) -> Result<bool, SeamError> {
        lock(&self.core).watch_before(gap).map_err(refuse)
    }

    fn shell_done(&mut self, command: &str) -> Result<ShellChanges, SeamError> {
        lock(&self.core).shell_after(command).map_err(refuse)
    }

    fn shell_gap(&mut self, gap: retrace_protocol::Gap) -> Result<(), SeamError> {
        lock(&self.core).record_gap(gap).map_err(refuse)
    }
}

/// The sink: messages into the session log on the turn's head, events onto the bus.
pub(crate) struct LogSink {
    pub(crate) core: Arc<Mutex<Core>>,
    /// The head the turn writes to (a compaction moves it to the summary head).
    pub(crate) head: HeadId,
    pub(crate) turn: u64,
}

impl TurnSink for LogSink {
    fn event(&mut self, event: Event) {
        // Published with the core locked: a snapshot (taken under the same lock) sees each
        // event's effect exactly when it sees the event's number.
        lock(&self.core).turn_event(event);
    }

    fn message(&mut self, m: &ChatMessage) -> Result<(), SeamError> {
        lock(&self.core)
            .append(&self.head, NewMessage::from(m))
            .map_err(fatal)
    }

    fn assistant(&mut self, m: &ChatMessage, usage: Option<TokenUsage>) -> Result<(), SeamError> {
        lock(&self.core).assistant(&self.head, m, usage).map_err(fatal)
    }

    fn tool_result(&mut self, call_id: &str, result: &ToolResult) -> Result<(), SeamError> {
        lock(&self.core)
            .tool_result(&self.head, call_id, result)
            .map_err(fatal)
    }

    fn compaction_source(&mut self, max_tokens: u64) -> Option<Result<Vec<ChatMessage>, SeamError>> {
        Some(
            lock(&self.core)
                .compaction_source(self.turn, max_tokens)
                .map_err(refuse),
        )
    }

    fn compacted(&mut self, summary: String, usage: Option<TokenUsage>) -> Result<Compaction, SeamError> {
        let mut core = lock(&self.core);
        let made = core
            .finish_summary(self.turn, SummarizeDirection::UpTo, summary, true, usage)
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
            // An MCP tool allowed for the session is allowed whatever its arguments.
            let mcp = req.tool.starts_with(retrace_agent::MCP_TOOL_PREFIX);
            let key = match mcp {
                true => format!("{}\n", req.tool),
                false => req.command.clone(),
            };
            if self.shared.is_allowed(&key) {
                return ApprovalDecision::Session;
            }
            let note = approval_note(&req.tool);
            let prefixes = match req.tool.as_str() {
                "bash" => crate::allow::prefixes(&req.command),
                _ => Vec::new(),
            };
            let answer = self.shared.await_approval(PendingApproval {
                call_id: req.call_id.clone(),
                tool: req.tool.clone(),
                command: req.command.clone(),
                note: note.clone(),
                prefixes: prefixes.clone(),
            });
            self.shared.bus.publish(Event::ApprovalRequested {
                call_id: req.call_id.clone(),
                tool: req.tool.clone(),
                command: req.command.clone(),
                note,
                prefixes,
            });
            let answer = tokio::select! {
                a = answer => a.unwrap_or(ApprovalAnswer::new(ApprovalDecision::Deny)),
                _ = cancel.cancelled() => ApprovalAnswer::new(ApprovalDecision::Deny),
            };
            let decision = answer.decision;
            self.shared.drop_approval(&req.call_id);
            if decision == ApprovalDecision::Session {
                match mcp {
                    true => self.shared.allow(&key, None),
                    false => self.shared.allow(&req.command, answer.prefix.as_deref()),
                }
            }
            self.shared.bus.publish(Event::ApprovalResolved {
                call_id: req.call_id,
                decision,
            });
            decision
        })
    }
}

/// What running a call of `tool` means for taking changes back, said where it is approved
/// (what answering `session` allows is said by each frontend beside its buttons).
fn approval_note(tool: &str) -> Option<String> {
    if tool.starts_with(retrace_agent::MCP_TOOL_PREFIX) {
        return Some("Retrace cannot take back what an MCP tool does outside the workspace. In the workspace, the git backend snapshots the files around the call; the snapshot backend does not checkpoint them, and a restore lists the call as a gap unless the config vouches for the tool as read-only (`read_only_tools`).".to_string());
    }
    if tool == retrace_agent::LIST_RESOURCES || tool == retrace_agent::READ_RESOURCE {
        return Some("Resources are asked for by a request to the MCP server, which may do anything on it; Retrace cannot take back what the server does.".to_string());
    }
    (tool == "bash").then(|| {
        "Retrace cannot take back what a shell command changes: its changes to files are not checkpointed, and a restore will list this command as a gap.".to_string()
    })
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
