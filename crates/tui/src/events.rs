//! What the session tells the UI: its events as a turn runs (the transcript grows, approvals
//! come and go, the head changes), a head's stored transcript, its status, and a fresh snapshot
//! after the event stream lagged.

use retrace_protocol::{Event, SessionStatus, TranscriptEntry};

use crate::app::App;
use crate::effect::Effect;
use crate::screens::approval::Approval;
use crate::transcript::{tool_target, Item};

impl App {
    /// Takes the session's model, workspace and head from a status asked for earlier (after a
    /// model change). Whether a turn runs is left to the events: an answer can arrive after the
    /// turn it saw running has finished (see [`App::on_resync`]).
    pub fn on_status(&mut self, s: &SessionStatus) {
        self.status.model = s.model.clone();
        self.status.workspace = s.workspace.clone();
        self.status.session = s.session_id.to_string();
        self.status.head = s.head_id.to_string();
        self.status.plan_mode = s.plan_mode;
    }

    /// A fresh snapshot after the event stream lagged: the transcript, then the status taken
    /// after it; the events that follow the status's sequence number come next, so both are
    /// the truth now, running included.
    pub fn on_resync(&mut self, transcript: &[TranscriptEntry], s: &SessionStatus) {
        // The stored transcript is the truth: the live items missed the lost events.
        self.live_turn = None;
        self.on_transcript(transcript);
        self.live_turn = s
            .running
            .filter(|r| r.kind == retrace_protocol::JobKind::Turn)
            .map(|r| r.turn);
        self.on_status(s);
        self.status.running = s.running.is_some();
        if !self.status.running {
            self.approvals.clear();
        }
    }

    /// Shows a head's stored transcript (on opening, and after the head changed). While a turn
    /// runs, its items as the events built them are kept in place of its stored messages (which
    /// lack the text still streaming); the last compaction's line follows.
    pub fn on_transcript(&mut self, entries: &[TranscriptEntry]) {
        self.transcript = crate::compaction::reloaded(
            &self.transcript,
            entries,
            self.live_turn,
            self.compaction_note
                .as_ref()
                .filter(|(head, _)| *head == self.status.head)
                .map(|(_, line)| line.as_str()),
        );
        self.reload_in_turn = false;
        if !self.status.running {
            // The turn kept past its end for this answer is over (see `reload_in_turn`).
            self.live_turn = None;
        }
        if let Some(t) = entries.iter().filter_map(|e| e.turn).max() {
            self.status.turn = Some(t);
        }
        self.chat.scroll = 0;
    }

    /// An event of the session. Returns what to reload when the head changed.
    pub fn on_event(&mut self, event: Event) -> Vec<Effect> {
        let finished = matches!(event, Event::TurnFinished { .. });
        let mut effects = self.apply_event(event);
        if self.live_turn.is_some() && effects.contains(&Effect::LoadTranscript) {
            self.reload_in_turn = true;
        }
        if finished && std::mem::take(&mut self.reload_in_turn) {
            // The reload in flight saw the turn unfinished: its items stay spliced in (the turn
            // is kept live for it), and a fresh one follows.
            effects.push(Effect::LoadTranscript);
        }
        effects
    }

    fn apply_event(&mut self, event: Event) -> Vec<Effect> {
        match event {
            Event::TurnStarted {
                session_id,
                head_id,
                turn,
                prompt,
            } => {
                self.status.session = session_id.to_string();
                self.status.head = head_id.to_string();
                self.status.turn = Some(turn);
                self.status.running = true;
                self.live_turn = Some(turn);
                self.compaction_note = None;
                self.transcript.push(Item::User {
                    turn: Some(turn),
                    text: prompt,
                    captured: 0,
                });
                self.chat.scroll = 0;
            }
            Event::AssistantDelta { text, .. } => self.transcript.assistant_delta(&text),
            Event::ReasoningDelta { text, .. } => self.transcript.reasoning_delta(&text),
            Event::ToolCall { id, name, arguments } => self.transcript.push(Item::Tool {
                id,
                name,
                target: tool_target(&arguments),
                ok: None,
                output_lines: 0,
                arguments,
                output: String::new(),
            }),
            Event::ToolResult { id, ok, content, .. } => self.transcript.tool_result(&id, Some(ok), &content),
            Event::CheckpointCaptured { turn, paths, .. } => self.transcript.captured(turn, paths.len()),
            Event::StepFinished { .. } => {}
            Event::TurnFinished { ok, error, usage, .. } => {
                self.status.running = false;
                if !self.reload_in_turn {
                    self.live_turn = None;
                }
                self.approvals.clear();
                if let Some(u) = usage {
                    self.status.usage = self.status.usage.plus(u);
                }
                if !ok {
                    let why = error.unwrap_or_else(|| "the turn failed".to_string());
                    self.transcript.push(Item::Error { text: why });
                }
            }
            Event::Rewound { head_id, .. }
            | Event::Undone { head_id, .. }
            | Event::HeadChanged { head_id } => {
                let changed = self.status.head != head_id.as_str();
                self.status.head = head_id.to_string();
                if changed {
                    return vec![Effect::LoadTranscript];
                }
            }
            Event::Notice { message, .. } => self.transcript.push(Item::System { text: message }),
            Event::Error { message } => self.transcript.push(Item::Error { text: message }),
            Event::ApprovalRequested {
                call_id,
                tool,
                command,
            } => self.approvals.request(Approval {
                call_id,
                tool,
                command,
            }),
            Event::ApprovalResolved { call_id, .. } => self.approvals.resolved(&call_id),
            Event::Compacted {
                head_id,
                automatic,
                before_tokens,
                after_tokens,
                ..
            } => return self.on_compacted_event(head_id.as_str(), automatic, before_tokens, after_tokens),
            Event::PlanMode { on } => self.show_plan_mode(on),
            Event::SummaryStarted { turn, .. } => self.on_summary_started(turn),
            Event::SummaryFinished {
                ok, head_id, error, ..
            } => return self.on_summary_finished(ok, head_id.as_ref().map(|h| h.as_str()), error),
            Event::ItemStarted { .. }
            | Event::ItemUpdated { .. }
            | Event::ItemCompleted { .. }
            | Event::ItemRemoved { .. } => {}
        }
        Vec::new()
    }
}
