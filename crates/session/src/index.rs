//! The in-memory index of a session: every message once, every head as a list of segments.
//!
//! A head's path is a short list of [`Segment`]s, each a range of some head's *own* messages (the
//! ones appended to that head, which always form a line). A fork copies the source head's segments
//! up to the fork point: its cost grows with the number of forks in its ancestry, never with the
//! number of messages. Projection walks the segments: O(path length). "Summarize up to here" puts the
//! summary message first and the source's suffix after it, which a parent pointer alone could not
//! express without copying messages.
//!
//! [`Index::apply`] replays one entry. It checks everything before it changes anything, so a refused
//! entry leaves the index as it was; the checks are structural (references exist, ids are unique,
//! a message's `parent` is its head's tip), while the user-facing rules (retired heads, the selected
//! head) are the writer's, so an old log never becomes unreadable when a rule changes.

use std::collections::HashMap;

use crate::entry::{HeadKind, SummaryMode};
use crate::ids::{HeadId, MessageId};
use crate::view::{Boundary, HeadInfo, Message, TurnInfo};

/// A range `start..end` of the own messages of head `head`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Segment {
    pub(crate) head: usize,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

impl Segment {
    fn len(&self) -> usize {
        self.end - self.start
    }
}

/// A message and where it lives.
#[derive(Debug)]
pub(crate) struct Node {
    pub(crate) msg: Message,
    /// The head it was appended to (index into `heads`).
    pub(crate) head: usize,
    /// Its position among that head's own messages.
    pub(crate) pos: usize,
}

/// A head.
#[derive(Debug)]
pub(crate) struct HeadNode {
    pub(crate) id: HeadId,
    pub(crate) kind: HeadKind,
    pub(crate) name: Option<String>,
    pub(crate) parent_head: Option<usize>,
    pub(crate) fork_from: Option<usize>,
    pub(crate) created_at: String,
    pub(crate) last_activity: String,
    pub(crate) retired: bool,
    /// A summary head made by a compaction.
    pub(crate) compaction: bool,
    /// For a summary head: which side of its turn the summary replaced.
    pub(crate) summary: Option<SummaryMode>,
    /// Messages appended to this head, in order.
    pub(crate) own: Vec<usize>,
    /// The path, as ranges of own messages of this and other heads.
    pub(crate) segments: Vec<Segment>,
    /// Messages on the path.
    pub(crate) len: usize,
}

/// A turn.
#[derive(Debug)]
pub(crate) struct TurnRec {
    pub(crate) turn: u64,
    pub(crate) head: usize,
    pub(crate) message: usize,
    pub(crate) at: String,
}

/// The whole session in memory.
#[derive(Debug, Default)]
pub(crate) struct Index {
    pub(crate) nodes: Vec<Node>,
    by_id: HashMap<MessageId, usize>,
    pub(crate) heads: Vec<HeadNode>,
    head_by_id: HashMap<HeadId, usize>,
    names: HashMap<String, usize>,
    pub(crate) turns: Vec<TurnRec>,
    pub(crate) selected: Option<usize>,
    /// Whether plan mode is on (the last `plan_mode` line).
    pub(crate) plan_mode: bool,
    /// The model of the last `model` line.
    pub(crate) model: Option<crate::entry::ModelEntry>,
    /// The model each turn ran with (the last `model` line before its `turn` line), when the log
    /// records one.
    pub(crate) turn_models: std::collections::BTreeMap<u64, crate::entry::ModelEntry>,
    /// Every assistant message whose request the server counted, in log order: its node, the
    /// model the log recorded last before it (the model of its turn) and the count.
    pub(crate) counted: Vec<Counted>,
    /// Entries applied (the header not counted).
    pub(crate) entries: u64,
}

/// A model request the server counted (an assistant message's `usage`).
#[derive(Debug)]
pub(crate) struct Counted {
    /// The message's node.
    pub(crate) node: usize,
    /// The spec of the model the log recorded last before it, if any.
    pub(crate) model: Option<String>,
    /// What the server counted.
    pub(crate) usage: retrace_protocol::TokenUsage,
}

type Check<T> = std::result::Result<T, String>;

impl Index {
    // ----- lookups -------------------------------------------------------------------------

    pub(crate) fn head_ix(&self, id: &str) -> Option<usize> {
        self.head_by_id.get(id).copied()
    }

    pub(crate) fn head_by_name(&self, name: &str) -> Option<usize> {
        self.names.get(name).copied()
    }

    pub(crate) fn msg_ix(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    fn need_head(&self, id: &HeadId) -> Check<usize> {
        self.head_ix(id.as_str())
            .ok_or_else(|| format!("unknown head `{id}`"))
    }

    fn need_msg(&self, id: &MessageId) -> Check<usize> {
        self.msg_ix(id.as_str())
            .ok_or_else(|| format!("unknown message `{id}`"))
    }

    /// Whether `name` is used by a head, as a name or as an id.
    pub(crate) fn name_taken(&self, name: &str) -> bool {
        self.names.contains_key(name) || self.head_by_id.contains_key(name)
    }

    /// The last message on the head's path.
    pub(crate) fn tip(&self, h: usize) -> Option<usize> {
        let s = self.heads[h].segments.last()?;
        self.heads[s.head].own.get(s.end.checked_sub(1)?).copied()
    }

    /// The message ids on the head's path, in order.
    pub(crate) fn path(&self, h: usize) -> impl Iterator<Item = usize> + '_ {
        self.heads[h]
            .segments
            .iter()
            .flat_map(move |s| self.heads[s.head].own[s.start..s.end].iter().copied())
    }

    /// The segment holding message `m` on head `h`'s path, and the message's position on the path.
    fn locate(&self, h: usize, m: usize) -> Option<(usize, usize)> {
        let node = &self.nodes[m];
        let mut before = 0;
        for (i, s) in self.heads[h].segments.iter().enumerate() {
            if s.head == node.head && s.start <= node.pos && node.pos < s.end {
                return Some((i, before + node.pos - s.start));
            }
            before += s.len();
        }
        None
    }

    /// The position of message `m` on head `h`'s path.
    pub(crate) fn position(&self, h: usize, m: usize) -> Option<usize> {
        self.locate(h, m).map(|(_, p)| p)
    }

    /// The boundary of the turn whose user message is `m`, on head `h`.
    pub(crate) fn boundary(&self, h: usize, m: usize) -> Option<Boundary> {
        let (seg, index) = self.locate(h, m)?;
        let node = &self.nodes[m];
        let s = self.heads[h].segments[seg];
        let before = if node.pos > s.start {
            Some(self.heads[s.head].own[node.pos - 1])
        } else if seg > 0 {
            let p = self.heads[h].segments[seg - 1];
            Some(self.heads[p.head].own[p.end - 1])
        } else {
            None
        };
        Some(Boundary {
            index,
            before: before.map(|b| self.nodes[b].msg.id.clone()),
        })
    }

    /// The path of head `h` up to and including `upto` (empty for `None`), as segments.
    fn prefix(&self, h: usize, upto: Option<usize>) -> Option<Vec<Segment>> {
        let Some(m) = upto else {
            return Some(Vec::new());
        };
        let (i, _) = self.locate(h, m)?;
        let mut segs = self.heads[h].segments[..=i].to_vec();
        if let Some(last) = segs.last_mut() {
            last.end = self.nodes[m].pos + 1;
        }
        Some(segs)
    }

    /// The part of head `h`'s path from `first` to `last` (inclusive), as segments.
    fn slice(&self, h: usize, first: usize, last: usize) -> Option<Vec<Segment>> {
        let (i, p) = self.locate(h, first)?;
        let (j, q) = self.locate(h, last)?;
        if p > q {
            return None;
        }
        let mut segs = self.heads[h].segments[i..=j].to_vec();
        if let Some(s) = segs.first_mut() {
            s.start = self.nodes[first].pos;
        }
        if let Some(s) = segs.last_mut() {
            s.end = self.nodes[last].pos + 1;
        }
        Some(segs)
    }

    /// Turns whose user message is on head `h`'s path.
    pub(crate) fn visible_turns(&self, h: usize) -> usize {
        self.turns
            .iter()
            .filter(|t| self.position(h, t.message).is_some())
            .count()
    }

    /// The listing entry of head `h`.
    pub(crate) fn head_info(&self, h: usize) -> HeadInfo {
        let head = &self.heads[h];
        HeadInfo {
            id: head.id.clone(),
            kind: head.kind,
            name: head.name.clone(),
            parent_head: head.parent_head.map(|p| self.heads[p].id.clone()),
            fork_from: head.fork_from.map(|m| self.nodes[m].msg.id.clone()),
            selected: self.selected == Some(h),
            retired: head.retired,
            compaction: head.compaction,
            message_count: head.len,
            turns: self.visible_turns(h),
            created_at: head.created_at.clone(),
            last_activity: head.last_activity.clone(),
        }
    }

    /// The listing entry of a turn.
    pub(crate) fn turn_info(&self, t: &TurnRec) -> TurnInfo {
        TurnInfo {
            turn: t.turn,
            head: self.heads[t.head].id.clone(),
            message_id: self.nodes[t.message].msg.id.clone(),
            at: t.at.clone(),
        }
    }

    /// 1 + the largest turn number, or 0.
    pub(crate) fn next_turn(&self) -> u64 {
        self.turns.last().map_or(0, |t| t.turn.saturating_add(1))
    }
}

mod replay;

#[cfg(test)]
mod tests;
