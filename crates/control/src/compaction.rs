//! Compaction and plan mode on the session (SPEC §7 `compact`, `set_plan_mode`).
//!
//! Compacting summarizes the selected head up to its latest turn into a new `summary` head (the
//! "summarize up to here" of SPEC §5.1) and selects it. Nothing is truncated: the original head
//! stays a version, and checkpoints key on turn numbers, which run on, so a code rewind to a turn
//! before the compaction restores the same files as before it, and a conversation rewind to such a
//! turn forks from the original head. A compaction therefore takes no snapshot of its own.

use retrace_protocol::{ChatMessage, ErrorCode, Event, HeadId, Role, SummarizeDirection};
use retrace_session::{Boundary, HeadKind};

use crate::core::Core;
use crate::error::{coded, Result};

/// A tool output longer than this is cut in the text given to the model to summarize: the
/// summary request must itself fit in the window it is meant to free.
const MAX_TOOL_OUTPUT_SUMMARIZED: usize = 8 * 1024;

impl Core {
    /// The latest turn visible on the selected head (what a compaction keeps verbatim).
    pub(crate) fn latest_turn(&self) -> Result<u64> {
        let head = self.session.selected().clone();
        self.session
            .turns_on(&head)?
            .into_iter()
            .filter_map(|t| t.boundary.map(|b| (b.index, t.info.turn)))
            .max()
            .map(|(_, turn)| turn)
            .ok_or_else(|| {
                coded(
                    ErrorCode::Refused,
                    "nothing to compact: this head has no turn yet",
                )
            })
    }

    /// What the model is asked to summarize to compact the selected head before `turn`: the
    /// messages before it (long tool outputs cut), then the instruction.
    pub(crate) fn compaction_source(&self, turn: u64) -> Result<Vec<ChatMessage>> {
        let mut messages = self.summary_source(turn, SummarizeDirection::UpTo)?;
        for m in &mut messages {
            if m.role == Role::Tool && m.content.len() > MAX_TOOL_OUTPUT_SUMMARIZED {
                let mut cut = MAX_TOOL_OUTPUT_SUMMARIZED;
                while !m.content.is_char_boundary(cut) {
                    cut -= 1;
                }
                let left = m.content.len() - cut;
                m.content.truncate(cut);
                m.content
                    .push_str(&format!("\n[… {left} more bytes of this output not shown]"));
            }
        }
        Ok(messages)
    }

    /// Where a conversation rewind to `turn` forks from: the selected head when the turn is on
    /// it; else, back through compaction heads, the head that still holds the turn verbatim.
    pub(crate) fn conversation_source(&self, turn: u64) -> Option<(HeadId, Boundary)> {
        let mut head = self.session.selected().clone();
        // Each step goes to an older head, so this ends; the bound only guards a corrupt index.
        for _ in 0..=self.session.heads().len() {
            if let Ok(b) = self.session.boundary(&head, turn) {
                return Some((head, b));
            }
            let info = self.session.head(&head).ok()?;
            if !(info.kind == HeadKind::Summary && info.compaction) {
                return None;
            }
            head = info.parent_head?;
        }
        None
    }

    /// Turns plan mode on or off; tells the frontends when it changed.
    pub(crate) fn set_plan_mode(&mut self, on: bool) -> Result<()> {
        if self.session.plan_mode() == on {
            return Ok(());
        }
        self.upgrade_if_flat()?;
        self.session.set_plan_mode(on)?;
        self.bus.publish(Event::PlanMode { on });
        Ok(())
    }
}
