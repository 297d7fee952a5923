//! Compaction as the UI shows it: `/compact` asks the controller to summarize everything before
//! the latest turn into a new selected head; the controller may also compact on its own inside a
//! turn. Either way a `compacted` event comes (the status line says how much smaller the context
//! got) and the new head is shown from a new snapshot, its summary as a compaction note.

use retrace_protocol::{Error, HeadRef};

use crate::app::App;
use crate::effect::Effect;
use crate::escape;

/// The line a compaction leaves on the status line.
pub fn compacted_line(automatic: bool, before_tokens: u64, after_tokens: u64) -> String {
    let how = if automatic {
        "compacted automatically"
    } else {
        "compacted"
    };
    format!(
        "{how}: about {before_tokens} → {after_tokens} tokens; the full conversation stays a version (/heads)"
    )
}

impl App {
    /// `/compact`: asks for a compaction, unless something runs.
    pub(crate) fn compact(&mut self) -> Vec<Effect> {
        if self.status.running {
            self.message =
                Some("a turn is running: wait for it, or Esc to cancel it, then /compact".to_string());
            return Vec::new();
        }
        if self.status.compacting {
            self.message = Some("a compaction runs already".to_string());
            return Vec::new();
        }
        self.status.compacting = true;
        self.message = Some("compacting: the model summarizes the turns before the last one…".to_string());
        vec![Effect::Compact]
    }

    /// The answer to [`Effect::Compact`]: the summary head is selected (its events bring it). The
    /// job's `summary_finished`, published before this answer but maybe not yet seen, ends
    /// `compacting`.
    pub fn on_compact_done(&mut self, r: &HeadRef) {
        self.status.head = r.head_id.to_string();
        self.status.session = r.session_id.to_string();
    }

    /// [`Effect::Compact`] was refused (nothing to summarize, a turn running) or failed.
    pub fn on_compact_failed(&mut self, err: &Error) {
        self.status.compacting = false;
        self.message = Some(format!("cannot compact: {}", escape::line(&err.message)));
    }

    /// A `compacted` event, the first time it is seen: the line (the head's new snapshot shows
    /// the summary).
    pub(crate) fn on_compacted_event(&mut self, automatic: bool, before_tokens: u64, after_tokens: u64) {
        self.message = Some(compacted_line(automatic, before_tokens, after_tokens));
    }

    /// A summary job began (`/compact` runs as one).
    pub(crate) fn on_summary_started(&mut self, turn: u64, first: bool) {
        self.status.running = true;
        if !first {
            return;
        }
        self.message = Some(if self.status.compacting {
            format!("compacting the turns before turn {turn}…")
        } else {
            format!("summarizing at turn {turn}…")
        });
    }

    /// A summary job ended (the head it made comes with its own event).
    pub(crate) fn on_summary_finished(
        &mut self,
        ok: bool,
        head_id: Option<&str>,
        error: Option<String>,
        first: bool,
    ) {
        self.status.running = false;
        let compacting = std::mem::take(&mut self.status.compacting);
        if ok {
            if let Some(h) = head_id {
                self.status.head = h.to_string();
            }
            if !compacting && first {
                self.message = Some("summary written: a new head is selected".to_string());
            }
            return;
        }
        if first {
            let what = if compacting { "compaction" } else { "summary" };
            self.message = Some(format!(
                "{what} failed: {}",
                escape::line(error.as_deref().unwrap_or("unknown"))
            ));
        }
    }
}
