//! What the session tells the UI: a snapshot (on opening, and whenever the items shown must be
//! taken again), then its events numbered after it. Item events change the transcript through
//! the controller's `ItemList`; the others move the status, the approvals and the UI's own lines.
//! An event that changes which items there are (another head, a rewind, an undo, a compaction),
//! or a lag of the event stream, asks for a new snapshot ([`Effect::LoadSnapshot`]).

use retrace_control::Applied;
use retrace_protocol::{Event, SessionSnapshot, SessionStatus};

use crate::app::App;
use crate::effect::Effect;
use crate::screens::approval::Approval;
use crate::transcript::Entry;

impl App {
    /// Takes the session's model, workspace and head from a status asked for earlier (after a
    /// model change). Whether a turn runs is left to snapshots and events: an answer can arrive
    /// after the turn it saw running has finished.
    pub fn on_status(&mut self, s: &SessionStatus) {
        self.status.model = s.model.clone();
        self.status.model_spec = s.model_spec.clone();
        self.status.workspace = s.workspace.clone();
        self.status.session = s.session_id.to_string();
        self.status.head = s.head_id.to_string();
        self.status.plan_mode = s.plan_mode;
        if self.status.model.is_some() && self.input.is_empty() {
            if let Some(prompt) = self.held_prompt.take() {
                self.input.set(&prompt);
                self.hint_about_input(
                    "a model can answer now: your prompt is back in the input (Enter sends it)".to_string(),
                );
            }
        }
    }

    /// A snapshot of the session: its items replace those shown, its status, heads and pending
    /// approvals are the truth as of its `last_event_seq`; the events numbered after it come next
    /// (the driver subscribes from there).
    pub fn on_snapshot(&mut self, snap: SessionSnapshot) {
        self.reloading = false;
        self.shown_seq = snap.last_event_seq;
        self.seen_seq = self.seen_seq.max(snap.last_event_seq);
        self.on_status(&snap.status);
        self.status.running = snap.status.running.is_some();
        // A `/compact` that ended before this snapshot was taken: its `compacted` event (and the
        // line it brings) is among those the snapshot covers, so the line is said from here.
        let compacted_here = self.status.compacting
            && !self.status.running
            && snap.items.first().is_some_and(|i| {
                matches!(&i.body, retrace_protocol::ItemBody::Note(n) if n.note == retrace_protocol::NoteKind::Compaction)
            });
        if compacted_here
            && !self
                .message
                .as_deref()
                .is_some_and(|m| m.starts_with("compacted"))
        {
            self.message =
                Some("compacted: the turns before the last are a summary now; the full conversation stays a version (/heads)".to_string());
        }
        self.status.compacting &= self.status.running;
        // The conversation's newest turn, as its items say: none after a rewind to before its
        // first, whatever turn was shown before.
        let newest = snap.items.iter().filter_map(|i| i.turn).max();
        self.status.turn = newest.max(snap.status.running.map(|r| r.turn));
        // The session's tally as the controller counts it (the `usage` events after it move it).
        self.status.usage = snap.usage;
        self.set_head_names(&snap.heads);
        self.approvals.sync(
            snap.pending_approvals
                .into_iter()
                .map(|p| Approval {
                    call_id: p.call_id,
                    tool: p.tool,
                    command: p.command,
                    note: p.note,
                    prefixes: p.prefixes,
                })
                .collect(),
        );
        self.transcript
            .reset_on(snap.items, Some(snap.status.head_id.as_str()));
        self.chat.scroll = 0;
    }

    /// A snapshot could not be taken: say so (the next event that needs one asks again).
    pub fn on_snapshot_failed(&mut self, err: &retrace_protocol::Error) {
        self.reloading = false;
        self.on_error(err);
    }

    /// The event stream lost events: the items shown are taken again.
    pub fn on_lagged(&mut self) -> Vec<Effect> {
        self.reload()
    }

    /// Asks for a new snapshot, unless one is on its way (the events after it that need another
    /// are delivered again after it, and ask then).
    fn reload(&mut self) -> Vec<Effect> {
        if std::mem::replace(&mut self.reloading, true) {
            return Vec::new();
        }
        vec![Effect::LoadSnapshot]
    }

    /// Event number `seq` of the session. Events up to the snapshot's number are already shown
    /// and are dropped. Returns what to ask next (a new snapshot).
    pub fn on_event(&mut self, seq: u64, event: Event) -> Vec<Effect> {
        if seq <= self.shown_seq {
            return Vec::new();
        }
        self.shown_seq = seq;
        let first = seq > self.seen_seq;
        self.seen_seq = self.seen_seq.max(seq);
        let mut effects = Vec::new();
        if self.transcript.apply(&event) == Applied::Reload {
            effects.extend(self.reload());
        }
        let ended = match &event {
            Event::TurnFinished { ok, .. } | Event::SummaryFinished { ok, .. } => Some(*ok),
            _ => None,
        };
        self.apply_event(event, first);
        if let (Some(ok), true) = (ended, first) {
            // A prompt queued while it ran goes now.
            effects.extend(self.after_job(ok));
        }
        effects
    }

    /// Adds one of the UI's own lines, the first time its event is seen.
    fn say_in_chat(&mut self, first: bool, entry: Entry) {
        if first {
            self.transcript.push_local(entry);
        }
    }

    /// What an event does besides the items: `first` is false when it was applied before a new
    /// snapshot and comes again after it.
    fn apply_event(&mut self, event: Event, first: bool) {
        match event {
            Event::TurnStarted {
                session_id,
                head_id,
                turn,
                ..
            } => {
                self.status.session = session_id.to_string();
                self.status.head = head_id.to_string();
                self.status.turn = Some(turn);
                self.status.running = true;
                self.chat.scroll = 0;
            }
            Event::TurnFinished { ok, error, .. } => {
                self.status.running = false;
                self.approvals.clear();
                if !ok {
                    let text = error.unwrap_or_else(|| "the turn failed".to_string());
                    self.say_in_chat(first, Entry::Error { text });
                }
            }
            Event::Rewound { head_id, .. }
            | Event::Undone { head_id, .. }
            | Event::Redone { head_id, .. }
            | Event::HeadChanged { head_id } => self.status.head = head_id.to_string(),
            Event::Notice { message, .. } => self.say_in_chat(first, Entry::Notice { text: message }),
            Event::Error { message } => self.say_in_chat(first, Entry::Error { text: message }),
            Event::ApprovalRequested {
                call_id,
                tool,
                command,
                note,
                prefixes,
            } => self.approvals.request(Approval {
                call_id,
                tool,
                command,
                note,
                prefixes,
            }),
            Event::ApprovalResolved { call_id, .. } => self.approvals.resolved(&call_id),
            Event::Compacted {
                head_id,
                automatic,
                before_tokens,
                after_tokens,
                ..
            } => {
                self.status.head = head_id.to_string();
                if first {
                    self.on_compacted_event(automatic, before_tokens, after_tokens);
                }
            }
            Event::PlanMode { on } => {
                self.status.plan_mode = on;
                if first {
                    self.show_plan_mode(on);
                }
            }
            Event::SummaryStarted { turn, .. } => self.on_summary_started(turn, first),
            Event::SummaryFinished {
                ok, head_id, error, ..
            } => self.on_summary_finished(ok, head_id.as_ref().map(|h| h.as_str()), error, first),
            Event::Usage { usage } => self.status.usage = usage,
            // Shown through the items (a request's count, through the tally's `usage` event).
            Event::AssistantDelta { .. }
            | Event::ReasoningDelta { .. }
            | Event::ToolCall { .. }
            | Event::ToolResult { .. }
            | Event::CheckpointCaptured { .. }
            | Event::StepFinished { .. }
            | Event::ItemStarted { .. }
            | Event::ItemUpdated { .. }
            | Event::ItemCompleted { .. }
            | Event::ItemRemoved { .. } => {}
        }
    }
}
