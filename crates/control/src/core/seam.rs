//! What a running turn writes through the core, for the agent's seams (`crate::turn` holds them):
//! each tool's before-images and after-images into the store (durable before the tool runs), its
//! gaps, the turn's messages into the log on its head, and the events that show the turn live.
//! Each is one call under the core's lock, so a snapshot sees an event's effect exactly when it
//! sees the event's number.

use retrace_agent::{Captured, ToolResult};
use retrace_checkpoint::Change;
use retrace_protocol::{ChatMessage, Event, Gap, GapReason, HeadId, Role, TokenUsage};
use retrace_session::NewMessage;
use retrace_tools::Preview;

use super::Core;
use crate::error::Result;
use crate::items::build::stored_checkpoint;
use crate::items::live::record_of;

impl Core {
    /// Captures the before-image of every path `tool`'s preview changes, and records its gaps.
    pub(crate) fn capture_before(&mut self, tool: &str, preview: &Preview) -> Result<Captured> {
        let changes: Vec<Change> = preview.changes.iter().map(change_of).collect();
        let report = self.store.capture_before(&changes, Some(tool))?;
        let mut gaps = report.gaps;
        for g in &preview.gaps {
            let mut g = g.clone();
            g.tool.get_or_insert_with(|| tool.to_string());
            self.store.record_gap(g.clone())?;
            if !gaps.iter().any(|x| x.reason == g.reason && x.path == g.path) {
                gaps.push(g);
            }
        }
        Ok(Captured {
            paths: report.captured.iter().map(|p| p.to_lossy()).collect(),
            gaps,
        })
    }

    /// Records the after-images of a tool's previewed paths; `ok`: the tool succeeded.
    pub(crate) fn capture_after(&mut self, preview: &Preview, ok: bool) -> Result<()> {
        // A tool that succeeded left its intents (its re-check and atomic write guarantee it):
        // they are the after-images, without reading the files back. Otherwise what is there is.
        // A tool that failed proves nothing: only a path holding exactly its intent (it wrote,
        // then failed) becomes Retrace's; the rest keep their proofs (`capture_after_failed`).
        let known: Vec<(std::path::PathBuf, Option<retrace_checkpoint::model::Image>)> = preview
            .changes
            .iter()
            .map(|c| (c.abs.clone(), change_of(c).intent))
            .collect();
        match ok {
            true => self.store.capture_after_known(&known),
            false => self.store.capture_after_failed(&known),
        }?;
        Ok(())
    }

    /// Appends a message of the turn to the log on `head`.
    pub(crate) fn append(&mut self, head: &HeadId, m: NewMessage) -> Result<()> {
        self.session.append(head, m)?;
        Ok(())
    }

    /// Publishes an event of the running turn, with the item events it implies: a streamed delta
    /// extends (or starts) the answer's item, a tool call starts its item, a capture updates the
    /// turn's checkpoint item.
    pub(crate) fn turn_event(&mut self, event: Event) {
        let bus = self.bus.clone();
        match event {
            Event::AssistantDelta { text, .. } => self.delta(false, text),
            Event::ReasoningDelta { text, .. } => self.delta(true, text),
            Event::ToolCall { ref id, .. } => {
                let item = self.live.as_mut().and_then(|l| l.call_started(id));
                bus.publish(event.clone());
                if let Some(item) = item {
                    bus.publish(Event::ItemStarted { item });
                }
            }
            Event::CheckpointCaptured { turn, .. } => {
                bus.publish(event);
                bus.publish(Event::ItemUpdated {
                    item: stored_checkpoint(&self.store, turn),
                });
            }
            Event::StepFinished { usage: Some(_), .. } => {
                // The request's count is in the log (its answer was written first): the tally
                // moves.
                bus.publish(event);
                self.publish_usage();
            }
            Event::Compacted {
                ref head_id,
                after_tokens,
                ..
            } => {
                let head = head_id.clone();
                bus.publish(event);
                self.compacted(head, after_tokens);
            }
            other => bus.publish(other),
        }
    }

    /// A streamed delta, published with the id of the item it extends.
    fn delta(&mut self, reasoning: bool, text: String) {
        let session = &self.session;
        match self.live.as_mut() {
            Some(live) => live.delta(&self.bus, reasoning, text, || session.new_message_id()),
            None if reasoning => self.bus.publish(Event::ReasoningDelta { text, item_id: None }),
            None => self.bus.publish(Event::AssistantDelta { text, item_id: None }),
        }
    }

    /// Appends the step's answer on `head`, under the id its streamed item has, and completes
    /// that item.
    pub(crate) fn assistant(
        &mut self,
        head: &HeadId,
        m: &ChatMessage,
        usage: Option<TokenUsage>,
    ) -> Result<()> {
        let streamed = self.live.as_mut().and_then(|l| l.take_streaming());
        let reasoning = streamed
            .as_ref()
            .map(|s| s.reasoning.clone())
            .filter(|r| !r.is_empty());
        let appended = self.session.append(
            head,
            NewMessage {
                id: streamed.as_ref().map(|s| s.id.clone()),
                usage,
                reasoning: reasoning.clone(),
                ..NewMessage::from(m)
            },
        )?;
        if let Some(live) = self.live.as_mut() {
            live.assistant_written(
                &self.bus,
                appended.message_id.as_str(),
                &m.content,
                reasoning.as_deref(),
                &m.tool_calls,
                streamed.is_some(),
            );
        }
        Ok(())
    }

    /// Appends a tool call's result on `head`, with what it did, and completes its item.
    pub(crate) fn tool_result(&mut self, head: &HeadId, call_id: &str, result: &ToolResult) -> Result<()> {
        let record = record_of(result);
        self.session.append(
            head,
            NewMessage {
                tool_call_id: Some(call_id.to_string()),
                outcome: Some(record.clone()),
                ..NewMessage::new(Role::Tool, result.content.clone())
            },
        )?;
        if let Some(item) = self
            .live
            .as_mut()
            .and_then(|l| l.call_answered(call_id, (&result.content, &record)))
        {
            self.bus.publish(Event::ItemCompleted { item });
        }
        Ok(())
    }
}

/// A previewed change as the store captures it, with what the tool will leave there (journaled
/// before the tool runs, so a crash right after the write still proves it Retrace's own).
fn change_of(c: &retrace_tools::PlannedChange) -> Change {
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

/// The gap of a shell command whose changes are not captured.
pub(crate) fn shell_gap(command: &str) -> Gap {
    Gap {
        reason: GapReason::BashSideEffect,
        tool: Some("bash".into()),
        path: None,
        detail: Some(command.to_string()),
    }
}
