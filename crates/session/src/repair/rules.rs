//! The rules of a log repair that keep the conversation after a lost line: placeholder notes for
//! missing messages, tool results whose call is lost, turn numbers out of order, the `main` fork
//! line written again.

use std::collections::{HashMap, HashSet};

use crate::entry::{Entry, ForkEntry, HeadKind, NoteEntry, Role};
use crate::ids::{HeadId, MessageId};
use crate::index::Index;
use crate::view::MessageKind;

/// What a lost message leaves in the conversation: a note the model sees as a system message.
pub const PLACEHOLDER_TEXT: &str = "Note from Retrace: a message of this conversation is missing from the session log (it could not be read there; a repair keeps any line it could not read in a file beside the log).";

/// The note to write before `entry` when `entry` is a message or note whose parent is a message
/// that no line which reads defines (it was in a line that cannot be read, or the parent is
/// damaged) on a head that exists: it takes the missing message's id and place, so `entry`
/// replays as written. `None` otherwise. (A tool result after such a note answers no call: it is
/// moved aside in turn, see [`orphan_result`].)
pub(super) fn placeholder(index: &Index, defined: &HashSet<MessageId>, entry: &Entry) -> Option<Entry> {
    let (parent, head, at) = match entry {
        Entry::Message(m) => (m.parent.as_ref()?, &m.head, &m.at),
        Entry::Note(n) => (n.parent.as_ref()?, &n.head, &n.at),
        _ => return None,
    };
    if defined.contains(parent) || index.msg_ix(parent.as_str()).is_some() {
        return None;
    }
    let h = index.head_ix(head.as_str())?;
    Some(Entry::Note(NoteEntry {
        id: parent.clone(),
        parent: index.tip(h).map(|m| index.nodes[m].msg.id.clone()),
        head: head.clone(),
        content: PLACEHOLDER_TEXT.to_string(),
        at: at.clone(),
    }))
}

/// What a tool result moved aside leaves when a later message names it as its parent.
pub const TOOL_PLACEHOLDER_TEXT: &str = "Note from Retrace: the result of a tool call whose request could not be read from the session log was moved into a file beside the log, so it is missing here.";

/// The id a line defines, for a message, note or summary.
pub(super) fn entry_id(e: &Entry) -> Option<MessageId> {
    match e {
        Entry::Message(m) => Some(m.id.clone()),
        Entry::Note(n) => Some(n.id.clone()),
        Entry::Summary(s) => Some(s.id.clone()),
        _ => None,
    }
}

/// The parent a message or note line names.
pub(super) fn entry_parent(e: &Entry) -> Option<MessageId> {
    match e {
        Entry::Message(m) => m.parent.clone(),
        Entry::Note(n) => n.parent.clone(),
        _ => None,
    }
}

/// The `turn` lines (by their index among the lines after the header) whose number is out of
/// order: the longest run of increasing numbers in the log stays (of two runs as long, the one
/// ending lower), and a line outside it moves — a damaged number is the line that moves, not
/// the valid lines after it. A line whose number is also in the run (a turn number used twice, as
/// a second writer's) is left to the replay, which keeps the first; so is 2^64−1, which the
/// replay refuses.
pub(super) fn misordered_turns(parsed: &[Option<Entry>]) -> HashMap<usize, String> {
    let turns: Vec<(usize, u64)> = parsed
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match e {
            Some(Entry::Turn(t)) if t.turn != u64::MAX => Some((i, t.turn)),
            _ => None,
        })
        .collect();
    // Patience sorting: `tails[k]` ends the lowest-ending increasing run of length k + 1.
    let mut tails: Vec<usize> = Vec::new();
    let mut prev: Vec<Option<usize>> = Vec::with_capacity(turns.len());
    for (k, &(_, t)) in turns.iter().enumerate() {
        let pos = tails.partition_point(|&j| turns[j].1 < t);
        prev.push(pos.checked_sub(1).map(|p| tails[p]));
        if pos == tails.len() {
            tails.push(k);
        } else {
            tails[pos] = k;
        }
    }
    let mut kept = HashSet::new();
    let mut at = tails.last().copied();
    while let Some(k) = at {
        kept.insert(k);
        at = prev[k];
    }
    let numbers: HashSet<u64> = kept.iter().map(|&k| turns[k].1).collect();
    turns
        .iter()
        .enumerate()
        .filter(|(k, (_, t))| !kept.contains(k) && !numbers.contains(t))
        .map(|(_, &(i, t))| {
            (
                i,
                format!("turn {t} is out of order with the `turn` lines around it"),
            )
        })
        .collect()
}

pub(super) fn is_main_fork(e: &Entry) -> bool {
    matches!(e, Entry::Fork(f) if f.kind == HeadKind::Main)
}

/// The `main` fork line every log has second, written again when it was lost.
pub(super) fn main_fork(at: &str) -> Entry {
    Entry::Fork(ForkEntry {
        head: HeadId::main(),
        kind: HeadKind::Main,
        from: None,
        parent_head: None,
        name: None,
        at: at.to_string(),
    })
}

/// The calls of head `h`'s last assistant message that no result answers yet, when nothing but
/// tool results follows it; empty otherwise.
fn open_calls(index: &Index, h: usize) -> HashSet<String> {
    let path: Vec<usize> = index.path(h).collect();
    let mut answered = HashSet::new();
    for &m in path.iter().rev() {
        let msg = &index.nodes[m].msg;
        if msg.kind != MessageKind::Message {
            break;
        }
        match msg.role {
            Role::Tool => {
                answered.extend(msg.tool_call_id.clone());
            }
            Role::Assistant => {
                return msg
                    .tool_calls
                    .iter()
                    .map(|c| c.id.clone())
                    .filter(|c| !answered.contains(c))
                    .collect();
            }
            _ => break,
        }
    }
    HashSet::new()
}

/// Why `entry` is a tool result that would replay but answers no open call of its head (its
/// call was in a line that cannot be read): a model rejects such a history.
pub(super) fn orphan_result(index: &Index, entry: &Entry) -> Option<String> {
    let Entry::Message(m) = entry else { return None };
    if m.role != Role::Tool {
        return None;
    }
    let h = index.head_ix(m.head.as_str())?;
    let tip = index.tip(h).map(|t| &index.nodes[t].msg.id);
    if tip != m.parent.as_ref() {
        return None;
    }
    let call = m.tool_call_id.as_deref().unwrap_or("");
    if open_calls(index, h).contains(call) {
        return None;
    }
    Some(format!(
        "a tool result for call `{call}`, which no message before it on head `{}` makes (its call could not be read)",
        m.head
    ))
}

/// A note that takes the id and place of `entry`, a message that moves aside, when a later line
/// names it as its parent (so that line and the rest of its head stay).
pub(super) fn stand_in(
    index: &Index,
    named: &HashSet<MessageId>,
    entry: &Entry,
    text: &str,
) -> Option<Entry> {
    let Entry::Message(m) = entry else { return None };
    if !named.contains(&m.id) || index.msg_ix(m.id.as_str()).is_some() {
        return None;
    }
    let h = index.head_ix(m.head.as_str())?;
    Some(Entry::Note(NoteEntry {
        id: m.id.clone(),
        parent: index.tip(h).map(|t| index.nodes[t].msg.id.clone()),
        head: m.head.clone(),
        content: text.to_string(),
        at: m.at.clone(),
    }))
}
