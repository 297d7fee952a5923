//! The capture seam and the turn sink, implemented with the checkpoint store and the session log.

use retrace_agent::{CaptureSeam, Captured, TurnSink};
use retrace_checkpoint::{Change, CheckpointStore};
use retrace_model::{ChatMessage, Role as ModelRole};
use retrace_protocol::{Event, Gap, GapReason};
use retrace_session::{HeadId, NewMessage, Role, Session, ToolCall};
use retrace_tools::Preview;

/// The seam: before-images into the store, durable before the tool runs.
pub(crate) struct StoreSeam<'a> {
    pub(crate) store: &'a mut CheckpointStore,
}

impl CaptureSeam for StoreSeam<'_> {
    fn before(&mut self, tool: &str, preview: &Preview) -> Result<Captured, String> {
        let changes: Vec<Change> = preview
            .changes
            .iter()
            .map(|c| Change::new(c.abs.clone(), c.kind))
            .collect();
        let report = self
            .store
            .capture_before(&changes, Some(tool))
            .map_err(|e| e.to_string())?;
        let mut gaps = report.gaps;
        for g in &preview.gaps {
            let mut g = g.clone();
            g.tool.get_or_insert_with(|| tool.to_string());
            self.store.record_gap(g.clone()).map_err(|e| e.to_string())?;
            if !gaps.iter().any(|x| x.reason == g.reason && x.path == g.path) {
                gaps.push(g);
            }
        }
        Ok(Captured {
            paths: report.captured.iter().map(|p| p.to_lossy()).collect(),
            gaps,
        })
    }

    fn after(&mut self, _tool: &str, preview: &Preview) -> Result<(), String> {
        let paths: Vec<std::path::PathBuf> = preview.changes.iter().map(|c| c.abs.clone()).collect();
        self.store.capture_after(&paths).map_err(|e| e.to_string())
    }

    fn shell(&mut self, command: &str) -> Result<(), String> {
        self.store
            .record_gap(Gap {
                reason: GapReason::BashSideEffect,
                tool: Some("bash".into()),
                path: None,
                detail: Some(command.to_string()),
            })
            .map_err(|e| e.to_string())
    }
}

/// The sink: messages into the session log on the turn's head, events to the frontend.
pub(crate) struct LogSink<'a> {
    pub(crate) session: &'a mut Session,
    pub(crate) head: HeadId,
    pub(crate) out: &'a mut (dyn FnMut(Event) + Send),
}

impl TurnSink for LogSink<'_> {
    fn event(&mut self, event: Event) {
        (self.out)(event);
    }

    fn message(&mut self, m: &ChatMessage) -> Result<(), String> {
        let role = match m.role {
            ModelRole::System => Role::System,
            ModelRole::User => Role::User,
            ModelRole::Assistant => Role::Assistant,
            ModelRole::Tool => Role::Tool,
        };
        let msg = NewMessage {
            id: None,
            role,
            content: m.content.clone(),
            tool_calls: m
                .tool_calls
                .iter()
                .map(|c| ToolCall {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                })
                .collect(),
            tool_call_id: m.tool_call_id.clone(),
        };
        self.session
            .append(&self.head, msg)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

/// A head's messages as the model sees them (notes are system messages; summaries user messages).
pub(crate) fn history_of(session: &Session, head: &HeadId) -> retrace_session::Result<Vec<ChatMessage>> {
    Ok(session.project(head)?.into_iter().map(chat_of).collect())
}

/// One logged message as a model message.
pub(crate) fn chat_of(m: &retrace_session::Message) -> ChatMessage {
    ChatMessage {
        role: match m.role {
            Role::System => ModelRole::System,
            Role::User => ModelRole::User,
            Role::Assistant => ModelRole::Assistant,
            Role::Tool => ModelRole::Tool,
        },
        content: m.content.clone(),
        tool_calls: m
            .tool_calls
            .iter()
            .map(|c| retrace_model::ToolCall {
                id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
            })
            .collect(),
        tool_call_id: m.tool_call_id.clone(),
    }
}
