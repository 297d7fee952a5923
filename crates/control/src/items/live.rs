//! The running turn's items as they happen. The turn's sink calls these with the core locked, so
//! that what a snapshot reads (the log, the store, the text streamed so far) and the events it
//! numbers change together: a snapshot never misses an event's effect nor counts a delta twice.

use retrace_agent::ToolResult;
use retrace_protocol::{Event, Item, ItemBody, MessageId, ToolCall, ToolRecord};

use super::build::{tool_item, Running, Started, ToolParts};
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
    /// The first of its calls not answered yet (calls are answered one at a time, in order).
    cursor: usize,
    /// The call started and not answered yet, if any.
    started: Option<usize>,
}

impl LiveTurn {
    /// A turn that just started.
    pub(crate) fn new(turn: u64) -> LiveTurn {
        LiveTurn {
            turn,
            streaming: None,
            last_assistant: None,
            cursor: 0,
            started: None,
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
        self.cursor = 0;
        self.started = None;
    }

    /// The turn and its started call, for a snapshot.
    pub(crate) fn running(&self) -> Running {
        Running {
            turn: self.turn,
            started: match (self.started, self.last_assistant.as_ref()) {
                (Some(i), Some((id, _))) => Started::Call(id.clone(), i),
                _ => Started::None,
            },
        }
    }

    /// Where call `call_id` is among the last message's calls: the first not answered yet with
    /// that id (a model may repeat an id; calls run in order).
    fn position(&self, call_id: &str) -> Option<usize> {
        let (_, calls) = self.last_assistant.as_ref()?;
        (self.cursor..calls.len()).find(|&i| calls[i].id == call_id)
    }

    /// Call `call_id` started: its item, running.
    pub(crate) fn call_started(&mut self, call_id: &str) -> Option<Item> {
        let index = self.position(call_id)?;
        self.started = Some(index);
        self.item_at(index, None)
    }

    /// Call `call_id` was answered: its item, final.
    pub(crate) fn call_answered(&mut self, call_id: &str, result: (&str, &ToolRecord)) -> Option<Item> {
        let index = self.position(call_id)?;
        self.cursor = index + 1;
        self.started = None;
        self.item_at(index, Some(result))
    }

    /// The item of the call at `index`, given its result when it has one.
    fn item_at(&self, index: usize, result: Option<(&str, &ToolRecord)>) -> Option<Item> {
        let (message_id, calls) = self.last_assistant.as_ref()?;
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
        exit_code: result.exit_code,
        duration_ms: result.duration_ms,
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
