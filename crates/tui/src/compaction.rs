//! Compaction as the UI shows it: `/compact` asks the controller to summarize everything before
//! the latest turn into a new selected head; the controller may also compact on its own inside a
//! turn. Either way a `compacted` event comes, the head changes and the transcript reloads from
//! the new head, with a line saying how much smaller the context got.
//!
//! A reload while a turn runs must not lose what the turn showed so far: the stored messages of
//! that turn lack the answer still streaming, so the turn's items as its events built them take
//! the place of its stored messages ([`reloaded`]).

use retrace_protocol::{Error, HeadRef, TranscriptEntry};

use crate::app::App;
use crate::effect::Effect;
use crate::escape;
use crate::transcript::{Item, Transcript};

/// The line a compaction leaves in the chat.
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

/// The transcript after a reload: `entries` (a head's stored messages), except that while turn
/// `live` runs its items in `shown` (from its prompt on) replace its stored messages; then `note`.
pub fn reloaded(
    shown: &Transcript,
    entries: &[TranscriptEntry],
    live: Option<u64>,
    note: Option<&str>,
) -> Transcript {
    let tail = live.and_then(|turn| {
        let at = shown
            .items()
            .iter()
            .rposition(|i| matches!(i, Item::User { turn: Some(t), .. } if *t == turn))?;
        Some((turn, &shown.items()[at..]))
    });
    let mut t = match tail {
        Some((turn, items)) => {
            let cut = entries
                .iter()
                .position(|e| e.turn == Some(turn))
                .unwrap_or(entries.len());
            let mut t = Transcript::from_entries(&entries[..cut]);
            for item in items {
                t.push(item.clone());
            }
            t
        }
        None => Transcript::from_entries(entries),
    };
    if let Some(note) = note {
        // A live turn's items already hold the line (it came during the turn).
        let shown_already = tail.is_some_and(|(_, items)| {
            items
                .iter()
                .any(|i| matches!(i, Item::System { text } if text == note))
        });
        if !shown_already {
            t.push(Item::System {
                text: note.to_string(),
            });
        }
    }
    t
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

    /// The answer to [`Effect::Compact`]: the summary head is selected.
    pub fn on_compact_done(&mut self, r: &HeadRef) -> Vec<Effect> {
        self.status.compacting = false;
        self.status.head = r.head_id.to_string();
        self.status.session = r.session_id.to_string();
        vec![Effect::LoadTranscript]
    }

    /// [`Effect::Compact`] was refused (nothing to summarize, a turn running) or failed.
    pub fn on_compact_failed(&mut self, err: &Error) {
        self.status.compacting = false;
        self.message = Some(format!("cannot compact: {}", escape::line(&err.message)));
    }

    /// A `compacted` event: the line, and the new head's transcript.
    pub(crate) fn on_compacted_event(
        &mut self,
        head_id: &str,
        automatic: bool,
        before_tokens: u64,
        after_tokens: u64,
    ) -> Vec<Effect> {
        let line = compacted_line(automatic, before_tokens, after_tokens);
        self.transcript.push(Item::System { text: line.clone() });
        self.message = Some(line.clone());
        self.compaction_note = Some((head_id.to_string(), line));
        let changed = self.status.head != head_id;
        self.status.head = head_id.to_string();
        if changed {
            vec![Effect::LoadTranscript]
        } else {
            Vec::new()
        }
    }

    /// A summary job began (`/compact` runs as one).
    pub(crate) fn on_summary_started(&mut self, turn: u64) {
        self.status.running = true;
        let text = if self.status.compacting {
            format!("compacting the turns before turn {turn}…")
        } else {
            format!("summarizing at turn {turn}…")
        };
        self.transcript.push(Item::System { text });
    }

    /// A summary job ended.
    pub(crate) fn on_summary_finished(
        &mut self,
        ok: bool,
        head_id: Option<&str>,
        error: Option<String>,
    ) -> Vec<Effect> {
        self.status.running = false;
        let compacting = std::mem::take(&mut self.status.compacting);
        if ok {
            if let Some(h) = head_id {
                self.status.head = h.to_string();
            }
            if !compacting {
                self.message = Some("summary written: a new head is selected".to_string());
            }
            return vec![Effect::LoadTranscript];
        }
        let what = if compacting { "compaction" } else { "summary" };
        self.message = Some(format!(
            "{what} failed: {}",
            escape::line(error.as_deref().unwrap_or("unknown"))
        ));
        Vec::new()
    }
}
