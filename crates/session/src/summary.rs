//! Summary heads: "summarize from here" and "summarize up to here" (SPEC §5.1 actions 5 and 6).
//!
//! A summary head is made of part of the source head's path plus one summary message (role `user`,
//! written by the model): for `from`, the prefix before the turn's user message then the summary;
//! for `up_to`, the summary then the suffix from the turn's user message to the source's tip. Both
//! reuse the source's messages (no copy; the turns kept stay visible, with their ids) and leave the
//! source head untouched. The caller first asks [`Session::summary_source`] for the messages to fold,
//! has the model write the summary, then calls [`Session::summarize`].
//!
//! "Nothing to summarize" (refused): `from` when no conversation message (not a note, not an earlier
//! summary) follows the turn's user message; `up_to` when no conversation message precedes it.

use crate::entry::{Entry, HeadEvent, PathRange, Role, SummaryEntry, SummaryMode};
use crate::error::{Result, SessionError};
use crate::ids::{HeadId, MessageId};
use crate::session::Session;
use crate::view::{Message, MessageKind};
use crate::write::NewHead;

/// What a summary head needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummarySpec {
    /// The head summarized (left untouched).
    pub head: HeadId,
    /// The turn the user chose (visible on `head`).
    pub turn: u64,
    /// `from` or `up_to`.
    pub mode: SummaryMode,
    /// The summary text.
    pub content: String,
    /// A name for the new head.
    pub name: Option<String>,
    /// Select the new head in the same append.
    pub select: bool,
    /// Made by a compaction (see [`crate::SummaryEntry::compaction`]).
    pub compaction: bool,
    /// What the server counted for the request that wrote the summary.
    pub usage: Option<retrace_protocol::TokenUsage>,
}

/// Positions on the source path.
struct SummaryPlan {
    path: Vec<usize>,
    replaces: (usize, usize),
    kept: Option<(usize, usize)>,
}

impl Session {
    fn plan_summary(&self, head: &HeadId, turn: u64, mode: SummaryMode) -> Result<SummaryPlan> {
        let h = self.head_ix(head)?;
        let m = self.turn_message(turn)?;
        let p = self
            .index
            .position(h, m)
            .ok_or_else(|| SessionError::TurnNotVisible {
                turn,
                head: head.clone(),
            })?;
        let path: Vec<usize> = self.index.path(h).collect();
        let worth = |range: &[usize]| {
            range
                .iter()
                .any(|&m| self.index.nodes[m].msg.kind == MessageKind::Message)
        };
        let last = path.len() - 1; // the path holds the turn's user message
        let (replaces, kept) = match mode {
            SummaryMode::From => {
                if !worth(&path[p + 1..]) {
                    return Err(SessionError::NothingToSummarize);
                }
                ((p, last), p.checked_sub(1).map(|q| (0, q)))
            }
            SummaryMode::UpTo => {
                if p == 0 || !worth(&path[..p]) {
                    return Err(SessionError::NothingToSummarize);
                }
                ((0, p - 1), Some((p, last)))
            }
        };
        Ok(SummaryPlan { path, replaces, kept })
    }

    /// Which side of its turn the summary that made head `head` replaced: `None` for a head that
    /// is no summary's (or unknown).
    pub fn summary_mode(&self, head: &HeadId) -> Option<SummaryMode> {
        let h = self.index.head_ix(head.as_str())?;
        self.index.heads[h].summary
    }

    /// The messages a summary of `head` at `turn` would replace, for the model to summarize.
    pub fn summary_source(&self, head: &HeadId, turn: u64, mode: SummaryMode) -> Result<Vec<&Message>> {
        let plan = self.plan_summary(head, turn, mode)?;
        let (a, b) = plan.replaces;
        Ok(plan.path[a..=b]
            .iter()
            .map(|&m| &self.index.nodes[m].msg)
            .collect())
    }

    /// Whether a summary of `head` from or up to `turn` can be made: `Err` says why not (the turn
    /// is not on the head, or nothing would be folded).
    pub fn can_summarize(&self, head: &HeadId, turn: u64, mode: SummaryMode) -> Result<()> {
        self.plan_summary(head, turn, mode).map(|_| ())
    }

    /// Creates a summary head (one `summary` line, plus `select` if asked), and fsyncs. On a
    /// format-1 log, first makes the new session ([`Session::upgrade`]) and summarizes there.
    pub fn summarize(&mut self, spec: SummarySpec) -> Result<NewHead> {
        self.check_writable()?;
        self.check_name(spec.name.as_deref())?;
        self.plan_summary(&spec.head, spec.turn, spec.mode)?;
        let migrated_from = self.upgrade()?;
        let plan = self.plan_summary(&spec.head, spec.turn, spec.mode)?;
        let id_of = |pos: usize| -> MessageId { self.index.nodes[plan.path[pos]].msg.id.clone() };
        let range = |(a, b): (usize, usize)| PathRange {
            first: id_of(a),
            last: id_of(b),
        };
        let kept = plan.kept.map(range);
        let parent = match spec.mode {
            SummaryMode::From => kept.as_ref().map(|k| k.last.clone()),
            SummaryMode::UpTo => None,
        };
        let head = self.new_head_id();
        let at = self.opts.now()?;
        let mut entries = vec![Entry::Summary(SummaryEntry {
            head: head.clone(),
            parent_head: spec.head,
            mode: spec.mode,
            turn: spec.turn,
            replaces: range(plan.replaces),
            kept,
            id: self.new_message_id(),
            parent,
            role: Role::User,
            content: spec.content,
            name: spec.name,
            compaction: spec.compaction,
            usage: spec.usage,
            at: at.clone(),
        })];
        if spec.select {
            entries.push(Entry::Select(HeadEvent {
                head: head.clone(),
                at,
            }));
        }
        self.commit(entries, true)?;
        Ok(NewHead {
            head,
            session_id: self.id.clone(),
            migrated_from,
        })
    }
}
