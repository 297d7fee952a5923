//! Items from what is stored: a head's messages in the session log, each turn's checkpoint in the
//! store. Used for snapshots, `retrace transcript --items` and every reopened session.

use std::collections::{BTreeMap, HashMap};

use retrace_checkpoint::CheckpointStore;
use retrace_protocol::{
    CheckpointEntry, CheckpointItem, Coverage, HeadId, Item, ItemBody, NoteItem, NoteKind, Role, ToolCall,
    ToolCallItem, ToolRecord, ToolStatus,
};
use retrace_session::{Message, MessageKind, Session, StoredDiffs};

use super::wording;
use super::{checkpoint_item_id, tool_item_id};
use crate::error::Result;

/// The turn running now, and the tool call it has started and not answered (calls run one at a
/// time, in order: the calls after it have not started and are not shown yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Running {
    pub(crate) turn: u64,
    /// The started call.
    pub(crate) started: Started,
}

/// Which call of a running turn has started and is not answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Started {
    /// None (the model is answering, or the turn is between calls).
    None,
    /// This one: its assistant message's id and its place among that message's calls.
    Call(String, usize),
    /// The first call not answered (a reader in another process, which cannot know more: calls
    /// run in order, so the first unanswered one is the one running or about to).
    FirstUnanswered,
}

/// What a tool call's item is made from.
pub(crate) struct ToolParts<'a> {
    /// The assistant message that made the call.
    pub(crate) message_id: &'a str,
    /// Its place among that message's calls.
    pub(crate) index: usize,
    /// The call.
    pub(crate) call: &'a ToolCall,
    /// The text the model got, when the call was answered.
    pub(crate) result: Option<&'a str>,
    /// What the log recorded of its end (absent in older logs).
    pub(crate) record: Option<&'a ToolRecord>,
    /// Whether its turn is running now (an unanswered call is then running, else cancelled).
    pub(crate) running: bool,
    /// The turn.
    pub(crate) turn: Option<u64>,
}

/// A tool call's item.
pub(crate) fn tool_item(p: ToolParts<'_>) -> Item {
    let described = retrace_tools::describe(&p.call.name, &p.call.arguments);
    let status = match (p.record, p.result) {
        // A finished call is never running, whatever a hand-edited log says.
        (Some(r), _) if r.status == ToolStatus::Running => ToolStatus::Cancelled,
        (Some(r), _) => r.status,
        (None, Some(text)) => legacy_status(text),
        (None, None) if p.running => ToolStatus::Running,
        (None, None) => ToolStatus::Cancelled,
    };
    let (output, output_truncated) = wording::capped_output(p.result.unwrap_or(""));
    let changes: Vec<_> = p
        .record
        .map(|r| r.changes.iter().cloned().map(wording::capped_change).collect())
        .unwrap_or_default();
    let title = wording::tool_title(&p.call.name, &described.title, status, &changes);
    Item {
        id: tool_item_id(p.message_id, p.index),
        turn: p.turn,
        body: ItemBody::ToolCall(Box::new(ToolCallItem {
            call_id: p.call.id.clone(),
            tool: p.call.name.clone(),
            title: wording::one_line(&title),
            target: described.target,
            arguments: wording::capped_arguments(described.arguments),
            status,
            output,
            output_truncated,
            changes,
            gaps: p.record.map(|r| r.gaps.clone()).unwrap_or_default(),
            exit_code: p.record.and_then(|r| r.exit_code),
        })),
    }
}

/// How a result logged before statuses were recorded ended, from its text (the agent has always
/// begun a failed result with `error:`).
pub(crate) fn legacy_status(text: &str) -> ToolStatus {
    match text.strip_prefix("error:").map(str::trim_start) {
        None => ToolStatus::Ok,
        Some(e) if e.starts_with("cancelled") || e.starts_with("interrupted") => ToolStatus::Cancelled,
        Some(e) if e.starts_with("the user declined") || e.starts_with("plan mode is on") => {
            ToolStatus::Denied
        }
        Some(_) => ToolStatus::Failed,
    }
}

/// A turn's checkpoint item from its listing entry.
pub(crate) fn checkpoint_item(turn: u64, entry: Option<&CheckpointEntry>) -> Item {
    let body = match entry {
        Some(e) => CheckpointItem {
            files: e.paths.clone(),
            gaps: e.gaps.clone(),
            coverage: e.coverage,
            retained: true,
        },
        None => CheckpointItem {
            files: Vec::new(),
            gaps: Vec::new(),
            coverage: Coverage::None,
            retained: false,
        },
    };
    Item {
        id: checkpoint_item_id(turn),
        turn: Some(turn),
        body: ItemBody::Checkpoint(body),
    }
}

/// The note shown before `turn`'s prompt when the turn ran with another model than `previous`,
/// the turn before it on the same head.
pub(crate) fn model_note(session: &Session, previous: Option<u64>, turn: u64) -> Option<Item> {
    let m = session.turn_model(turn)?;
    let before = session.turn_model(previous?)?;
    if before.spec == m.spec {
        return None;
    }
    Some(Item {
        id: format!("model-{turn}"),
        turn: Some(turn),
        body: ItemBody::Note(NoteItem {
            note: NoteKind::ModelSwitch,
            text: wording::model_switch(&m.spec),
        }),
    })
}

/// The last turn on `head`'s path before `turn`, if any.
pub(crate) fn turn_before(session: &Session, head: &HeadId, turn: u64) -> Option<u64> {
    session
        .project(head)
        .ok()?
        .iter()
        .rev()
        .filter_map(|m| m.turn)
        .find(|t| *t < turn)
}

/// A turn's checkpoint item as the store holds it now.
pub(crate) fn stored_checkpoint(store: &CheckpointStore, turn: u64) -> Item {
    let body = match store.turn(turn) {
        Some(t) => CheckpointItem {
            files: t.files.iter().map(|f| f.path.display()).collect(),
            gaps: t.gaps.clone(),
            coverage: t.coverage(),
            retained: true,
        },
        None => return checkpoint_item(turn, None),
    };
    Item {
        id: checkpoint_item_id(turn),
        turn: Some(turn),
        body: ItemBody::Checkpoint(body),
    }
}

/// The items of `head`: its messages in path order, each turn's checkpoint after its prompt.
/// `running` is the turn running now, if any; `checkpoints` the listing's entries.
pub(crate) fn items_of(
    session: &Session,
    head: &HeadId,
    running: Option<&Running>,
    checkpoints: &[CheckpointEntry],
) -> Result<Vec<Item>> {
    let by_turn: BTreeMap<u64, &CheckpointEntry> = checkpoints.iter().map(|e| (e.turn, e)).collect();
    let path = session.project(head)?;
    let diffs = session.stored_diffs();
    // A session forked into a new workspace at turn T holds the turns before T as copies: their
    // checkpoints stay in the source session, so none is shown here.
    let copied_before = session
        .forked_from()
        .filter(|f| f.directory.is_some())
        .and_then(|f| f.turn);
    let mut items = Vec::with_capacity(path.len() + 8);
    let mut turn = None;
    for (i, m) in path.iter().enumerate() {
        if let (Some(t), MessageKind::Message, Role::User) = (m.turn, m.kind, m.role) {
            items.extend(model_note(session, turn, t));
        }
        if let Some(t) = m.turn {
            turn = Some(t);
        }
        if m.kind == MessageKind::Summary {
            // A summary of what came before its turn (summarize up to a turn, a compaction)
            // stands for the earlier conversation; one from its turn on, for the turns that stood
            // there (from turn 0 too, where it opens the path). A log that does not say which is
            // read by where it stands.
            let earlier = match session.summary_mode(&m.head) {
                Some(mode) => mode == retrace_session::SummaryMode::UpTo,
                None => i == 0,
            };
            items.push(Item {
                id: m.id.as_str().to_string(),
                turn: None,
                body: ItemBody::Note(NoteItem {
                    note: NoteKind::Compaction,
                    text: wording::summary(&m.content, earlier),
                }),
            });
            continue;
        }
        let results = answers(&path[i + 1..]);
        push_message(
            &mut items,
            m,
            turn,
            running,
            &results,
            (&by_turn, &diffs, copied_before),
        );
    }
    Ok(items)
}

/// The tool results that follow an assistant message, up to the next assistant or user message,
/// by call id, in order: the calls are answered one at a time in their order, so the `k`th call
/// with an id (a model may repeat one) has the `k`th answer with it.
fn answers<'a>(after: &[&'a Message]) -> HashMap<&'a str, Vec<&'a Message>> {
    let mut found: HashMap<&str, Vec<&Message>> = HashMap::new();
    for m in after
        .iter()
        .take_while(|m| m.role == Role::Tool || m.kind != MessageKind::Message)
    {
        if let (Role::Tool, Some(id)) = (m.role, m.tool_call_id.as_deref()) {
            found.entry(id).or_default().push(*m);
        }
    }
    found
}

fn push_message(
    items: &mut Vec<Item>,
    m: &Message,
    turn: Option<u64>,
    running: Option<&Running>,
    results: &HashMap<&str, Vec<&Message>>,
    (by_turn, diffs, copied_before): (&BTreeMap<u64, &CheckpointEntry>, &StoredDiffs, Option<u64>),
) {
    let id = m.id.as_str().to_string();
    match (m.kind, m.role) {
        (MessageKind::Note, _) => {
            let (note, text) = wording::note(&m.content);
            items.push(Item {
                id,
                turn: None,
                body: ItemBody::Note(NoteItem { note, text }),
            });
        }
        (MessageKind::Summary, _) => {}
        (MessageKind::Message, Role::User) => {
            items.push(Item {
                id,
                turn: m.turn,
                body: ItemBody::UserPrompt {
                    text: m.content.clone(),
                },
            });
            if let Some(t) = m.turn {
                let entry = by_turn.get(&t).copied();
                if entry.is_some() || copied_before.is_none_or(|f| t >= f) {
                    items.push(checkpoint_item(t, entry));
                }
            }
        }
        (MessageKind::Message, Role::Assistant) => {
            if !m.content.is_empty() || m.reasoning.as_deref().is_some_and(|r| !r.is_empty()) {
                items.push(Item {
                    id: id.clone(),
                    turn,
                    body: ItemBody::AssistantText {
                        text: m.content.clone(),
                        reasoning: m.reasoning.clone(),
                    },
                });
            }
            let running_turn = running.filter(|r| turn == Some(r.turn));
            let mut first_unanswered = true;
            for (index, call) in m.tool_calls.iter().enumerate() {
                let nth = m.tool_calls[..index].iter().filter(|c| c.id == call.id).count();
                let answer = results.get(call.id.as_str()).and_then(|r| r.get(nth));
                let started = answer.is_none()
                    && running_turn.is_some_and(|r| match &r.started {
                        Started::None => false,
                        Started::Call(msg, i) => msg == &id && *i == index,
                        Started::FirstUnanswered => first_unanswered,
                    });
                if answer.is_none() {
                    first_unanswered = false;
                }
                if answer.is_none() && running_turn.is_some() && !started {
                    // Not started yet: the live stream has not shown it either.
                    continue;
                }
                items.push(tool_item(ToolParts {
                    message_id: &id,
                    index,
                    call,
                    result: answer.map(|r| r.content.as_str()),
                    record: answer
                        .and_then(|r| r.outcome.as_ref()?.record(r.id.as_str(), diffs))
                        .as_ref(),
                    running: started,
                    turn,
                }));
            }
        }
        // Tool results are shown in their call's item; system messages are not shown.
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn older_results_take_their_status_from_their_text() {
        assert_eq!(legacy_status("Edited `a`"), ToolStatus::Ok);
        assert_eq!(legacy_status("error: no such file"), ToolStatus::Failed);
        assert_eq!(
            legacy_status("error: cancelled by the user before it ran"),
            ToolStatus::Cancelled
        );
        assert_eq!(legacy_status(crate::core::INTERRUPTED), ToolStatus::Cancelled);
        assert_eq!(legacy_status("error:"), ToolStatus::Failed);
        assert_eq!(legacy_status("error:\tboom"), ToolStatus::Failed);
        assert_eq!(
            legacy_status("error: the user declined to run this command: ls"),
            ToolStatus::Denied
        );
    }
}
