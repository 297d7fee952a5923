//! The running turn's items as they happen. The turn's sink calls these with the core locked, so
//! that what a snapshot reads (the log, the store, the text streamed so far) and the events it
//! numbers change together: a snapshot never misses an event's effect nor counts a delta twice.

use retrace_agent::ToolResult;
use retrace_protocol::{Event, Item, ItemBody, MessageId, ToolCall, ToolRecord};

use super::build::{tool_item, ToolParts};
use crate::bus::EventBus;

/// The answer being streamed: not in the log until the step ends.
#[derive(Debug, Clone)]
pub(crate) struct Streaming {
    /// The id its message will have (its item's id).
    pub(crate) id: MessageId,
    pub(crate) text: String,
    pub(crate) reasoning: String,
}

/// What a running turn has shown that the log and the store do not say on their own.
#[derive(Debug, Clone)]
pub(crate) struct LiveTurn {
    pub(crate) turn: u64,
    /// The answer being streamed, if any.
    pub(crate) streaming: Option<Streaming>,
    /// The last assistant message written, with its tool calls (their items are named after it).
    last_assistant: Option<(String, Vec<ToolCall>)>,
}

impl LiveTurn {
    /// A turn that just started.
    pub(crate) fn new(turn: u64) -> LiveTurn {
        LiveTurn {
            turn,
            streaming: None,
            last_assistant: None,
        }
    }

    /// The streamed answer's item, as far as it has come.
    pub(crate) fn streaming_item(&self) -> Option<Item> {
        self.streaming
            .as_ref()
            .map(|s| assistant_item(self.turn, s.id.as_str(), &s.text, &s.reasoning))
    }

    /// A delta of the answer (`reasoning` or text): starts its item on the first one, then
    /// publishes the delta with the item's id. `fresh` draws the message id the answer will have.
    pub(crate) fn delta(
        &mut self,
        bus: &EventBus,
        reasoning: bool,
        text: String,
        fresh: impl FnOnce() -> MessageId,
    ) {
        if self.streaming.is_none() {
            let s = Streaming {
                id: fresh(),
                text: String::new(),
                reasoning: String::new(),
            };
            self.streaming = Some(s);
            if let Some(item) = self.streaming_item() {
                bus.publish(Event::ItemStarted { item });
            }
        }
        let Some(s) = self.streaming.as_mut() else { return };
        let item_id = Some(s.id.as_str().to_string());
        if reasoning {
            s.reasoning.push_str(&text);
            bus.publish(Event::ReasoningDelta { text, item_id });
        } else {
            s.text.push_str(&text);
            bus.publish(Event::AssistantDelta { text, item_id });
        }
    }

    /// The id the step's assistant message gets, and its reasoning, taking the streamed answer.
    pub(crate) fn take_streaming(&mut self) -> Option<Streaming> {
        self.streaming.take()
    }

    /// The step's assistant message was written as `id`: completes its item (or removes a started
    /// one that turned out empty) and names its tool calls.
    pub(crate) fn assistant_written(
        &mut self,
        bus: &EventBus,
        id: &str,
        content: &str,
        reasoning: Option<&str>,
        calls: &[ToolCall],
        started: bool,
    ) {
        let reasoning = reasoning.unwrap_or("");
        if !content.is_empty() || !reasoning.is_empty() {
            bus.publish(Event::ItemCompleted {
                item: assistant_item(self.turn, id, content, reasoning),
            });
        } else if started {
            bus.publish(Event::ItemRemoved {
                item_id: id.to_string(),
            });
        }
        self.last_assistant = Some((id.to_string(), calls.to_vec()));
    }

    /// The item of tool call `call_id`, given its result when it has one.
    pub(crate) fn tool(&self, call_id: &str, result: Option<(&str, &ToolRecord)>) -> Option<Item> {
        let (message_id, calls) = self.last_assistant.as_ref()?;
        let index = calls.iter().position(|c| c.id == call_id)?;
        Some(tool_item(ToolParts {
            message_id,
            index,
            call: &calls[index],
            result: result.map(|r| r.0),
            record: result.map(|r| r.1),
            running: true,
            turn: Some(self.turn),
        }))
    }
}

/// What the log records of a tool call's end.
pub(crate) fn record_of(result: &ToolResult) -> ToolRecord {
    ToolRecord {
        status: result.status,
        changes: result.changes.clone(),
        gaps: result.gaps.clone(),
    }
}

fn assistant_item(turn: u64, id: &str, text: &str, reasoning: &str) -> Item {
    Item {
        id: id.to_string(),
        turn: Some(turn),
        body: ItemBody::AssistantText {
            text: text.to_string(),
            reasoning: (!reasoning.is_empty()).then(|| reasoning.to_string()),
        },
    }
}
