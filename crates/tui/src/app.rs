//! The UI's state machine: everything the screen shows and every decision a key makes, with no
//! I/O. The runtime feeds it keys (with the time they arrived), events and answers, performs the
//! [`Effect`]s it returns and draws it with [`crate::view::draw`]. Tests drive it the same way.

use std::time::{Duration, Instant};

use retrace_protocol::{
    CheckpointListing, Error, Event, HeadEntry, HeadRef, RewindPlan, RewindResult, RewindScope, SessionEntry,
    SessionStatus, TokenUsage, TranscriptEntry,
};

use crate::effect::Effect;
use crate::escape;
use crate::heads::HeadTree;
use crate::input::Input;
use crate::rewind::{Menu, Picker, Preview, Purpose};
use crate::sessions::SessionList;
use crate::transcript::{tool_target, Item, Transcript};
use crate::view::ChatLayoutCache;

/// Esc twice within this opens the rewind picker.
pub const DOUBLE_ESC: Duration = Duration::from_millis(600);
/// An approval takes no answer until its box has been on the screen this long, and not until
/// this long after the last key it held back: keys typed ahead for the input never answer it.
pub const APPROVAL_GUARD: Duration = Duration::from_millis(500);
/// Ctrl-C twice within this (on an empty, idle input) quits.
pub const DOUBLE_CTRL_C: Duration = Duration::from_millis(2000);

/// What the status line shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatusInfo {
    /// The model (`deepseek:deepseek-chat`, `demo`), if one is set up.
    pub model: Option<String>,
    /// The workspace root.
    pub workspace: String,
    /// The session id.
    pub session: String,
    /// The selected head.
    pub head: String,
    /// The newest turn seen.
    pub turn: Option<u64>,
    /// Tokens counted over the turns of this UI.
    pub usage: TokenUsage,
    /// Whether a turn (or a summary) runs.
    pub running: bool,
    /// The spinner's frame, advanced by [`App::on_tick`].
    pub spinner: usize,
    /// Whether plan mode is on (the model only reads; the status line says `PLAN`).
    pub plan_mode: bool,
    /// Whether a compaction asked for with `/compact` runs.
    pub compacting: bool,
}

impl StatusInfo {
    /// The status of a freshly opened session.
    pub fn from_status(s: &SessionStatus) -> StatusInfo {
        StatusInfo {
            model: s.model.clone(),
            workspace: s.workspace.clone(),
            session: s.session_id.to_string(),
            head: s.head_id.to_string(),
            turn: s.running.map(|r| r.turn),
            usage: TokenUsage::default(),
            running: s.running.is_some(),
            spinner: 0,
            plan_mode: s.plan_mode,
            compacting: false,
        }
    }
}

/// A shell command waiting for an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    /// The tool call.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The command line.
    pub command: String,
}

/// What is on top of the chat.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    /// The chat and the input box.
    Chat,
    /// The rewind picker.
    Picker(Picker),
    /// The action menu of a chosen turn.
    Menu(Box<Menu>),
    /// The preview of a code restore.
    Preview(Box<Preview>),
    /// Keys and commands, scrolled by this many rows.
    Help(usize),
    /// The heads of the session, as a tree.
    Heads(HeadTree),
    /// The sessions of the workspace.
    Sessions(SessionList),
}

/// Which screen takes the keys (an approval outranks every mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    /// [`Mode::Chat`].
    Chat,
    /// [`Mode::Picker`].
    Picker,
    /// [`Mode::Menu`].
    Menu,
    /// [`Mode::Preview`].
    Preview,
    /// An approval modal.
    Approval,
    /// [`Mode::Help`].
    Help,
    /// [`Mode::Heads`].
    Heads,
    /// [`Mode::Sessions`].
    Sessions,
}

/// A number the view writes while it draws an `&App` (so shared, and `Sync` like the rest).
#[derive(Debug, Default)]
pub(crate) struct ScrollLimit(std::sync::atomic::AtomicUsize);

impl ScrollLimit {
    pub(crate) fn get(&self) -> usize {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub(crate) fn set(&self, v: usize) {
        self.0.store(v, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Clone for ScrollLimit {
    fn clone(&self) -> ScrollLimit {
        ScrollLimit(std::sync::atomic::AtomicUsize::new(self.get()))
    }
}

/// A request the UI waits for, to know what its answer means.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Awaiting {
    /// Checkpoints, to open the picker for this purpose.
    Picker(Purpose),
    /// A plan for this turn and scope (the menu to go back to).
    Plan(Option<Box<Menu>>),
    /// The result of committing a rewind to this turn.
    Commit { turn: u64, scope: RewindScope },
    /// The result of an undo.
    Undo,
}

/// Options of the UI.
#[derive(Debug, Clone, Default)]
pub struct AppOptions {
    /// No colours (`NO_COLOR` set): only bold, dim and reverse.
    pub no_color: bool,
}

/// The terminal UI's state.
#[derive(Debug, Clone)]
pub struct App {
    pub(crate) status: StatusInfo,
    pub(crate) transcript: Transcript,
    pub(crate) input: Input,
    pub(crate) mode: Mode,
    pub(crate) approvals: Vec<Approval>,
    /// How far the first approval's command is scrolled.
    pub(crate) approval_scroll: usize,
    /// Why a key in the approval box did nothing (shown in the box, gone with the approval).
    pub(crate) approval_hint: Option<String>,
    /// The first approval's call and when its box was first drawn (see [`App::on_drawn`]).
    pub(crate) approval_shown: Option<(String, Instant)>,
    /// When the approval box last held back a key (typing ahead goes to the input).
    pub(crate) approval_typed: Option<Instant>,
    /// The highlighted choice of the approval box (an index into [`APPROVAL_CHOICES`]), if any.
    pub(crate) approval_choice: Option<usize>,
    /// The terminal's size at the last draw (the keys need it: a command must have been seen
    /// whole before it can be allowed, and nothing is chosen on a screen too small to show it).
    pub(crate) viewport: (u16, u16),
    pub(crate) message: Option<String>,
    /// Transcript rows scrolled up from the bottom.
    pub(crate) scroll: usize,
    /// How far the transcript could scroll at the last draw (the view records it; scrolling
    /// stops there instead of counting on past the top).
    pub(crate) scroll_limit: ScrollLimit,
    /// The same for the scrolled box on top (the preview, the help).
    pub(crate) overlay_limit: ScrollLimit,
    /// Whether tool calls show their diff or output, and reasoning its text (Ctrl-O).
    pub(crate) details: bool,
    /// The names users gave heads, by head id (for the status line).
    pub(crate) head_names: std::collections::HashMap<String, String>,
    pub(crate) no_color: bool,
    pub(crate) quit: bool,
    pub(crate) last_esc: Option<Instant>,
    pub(crate) last_ctrl_c: Option<Instant>,
    pub(crate) awaiting: Option<Awaiting>,
    /// Bumped whenever something other than the transcript changes how its items are drawn (see
    /// [`App::view_generation`]).
    pub(crate) view_generation: u64,
    /// The transcript's rows as last drawn (derived data: a cache the view fills).
    pub(crate) layout: ChatLayoutCache,
    /// The turn that runs now, shown from its events: a reload of the transcript keeps its items
    /// (see [`App::on_transcript`]).
    pub(crate) live_turn: Option<u64>,
    /// The head the last compaction made and its line, shown again after that head's transcript
    /// reloads (until the next turn starts).
    pub(crate) compaction_note: Option<(String, String)>,
    /// A reload was asked for while the live turn ran and has not been answered: if the turn
    /// ends first, its answer is older than the turn's end, so another reload is asked for.
    pub(crate) reload_in_turn: bool,
}

impl App {
    /// A UI on a session with this status.
    pub fn new(status: StatusInfo, opts: AppOptions) -> App {
        App {
            status,
            transcript: Transcript::default(),
            input: Input::default(),
            mode: Mode::Chat,
            approvals: Vec::new(),
            approval_scroll: 0,
            approval_hint: None,
            approval_shown: None,
            approval_typed: None,
            approval_choice: None,
            viewport: (80, 24),
            message: None,
            scroll: 0,
            scroll_limit: ScrollLimit::default(),
            overlay_limit: ScrollLimit::default(),
            details: false,
            head_names: std::collections::HashMap::new(),
            no_color: opts.no_color,
            quit: false,
            last_esc: None,
            last_ctrl_c: None,
            awaiting: None,
            view_generation: 0,
            layout: ChatLayoutCache::default(),
            live_turn: None,
            compaction_note: None,
            reload_in_turn: false,
        }
    }

    /// The screen that takes the keys.
    pub fn screen(&self) -> Screen {
        if !self.approvals.is_empty() {
            return Screen::Approval;
        }
        match self.mode {
            Mode::Chat => Screen::Chat,
            Mode::Picker(_) => Screen::Picker,
            Mode::Menu(_) => Screen::Menu,
            Mode::Preview(_) => Screen::Preview,
            Mode::Help(_) => Screen::Help,
            Mode::Heads(_) => Screen::Heads,
            Mode::Sessions(_) => Screen::Sessions,
        }
    }

    /// The mode under any approval.
    pub fn mode(&self) -> &Mode {
        &self.mode
    }

    /// The status line's data.
    pub fn status(&self) -> &StatusInfo {
        &self.status
    }

    /// The transcript.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// The input box.
    pub fn input(&self) -> &Input {
        &self.input
    }

    /// The status message (the outcome of the last action), if any.
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    /// The approvals waiting, oldest first.
    pub fn approvals(&self) -> &[Approval] {
        &self.approvals
    }

    /// How far the first approval's command is scrolled.
    pub fn approval_scroll(&self) -> usize {
        self.approval_scroll
    }

    /// Why the last key in the approval box did nothing, if it did nothing.
    pub fn approval_hint(&self) -> Option<&str> {
        self.approval_hint.as_deref()
    }

    /// The highlighted choice of the approval box, if one is.
    pub fn approval_choice(&self) -> Option<usize> {
        self.approval_choice
    }

    /// Whether the approval box takes an answer from a key pressed at `now`: its box has been
    /// drawn for [`APPROVAL_GUARD`], and no key was held back within it.
    pub fn approval_ready(&self, now: Instant) -> bool {
        let first = self.approvals.first().map(|a| a.call_id.as_str());
        let shown = matches!(&self.approval_shown, Some((id, at))
            if Some(id.as_str()) == first && now.saturating_duration_since(*at) >= APPROVAL_GUARD);
        shown
            && self
                .approval_typed
                .is_none_or(|t| now.saturating_duration_since(t) >= APPROVAL_GUARD)
    }

    /// A frame was drawn at `now`: the approval box on it (if any, and readable) starts its guard
    /// time. The runtime calls this after each draw; tests call it to say what was seen when.
    pub fn on_drawn(&mut self, now: Instant) {
        let Some(first) = self.approvals.first() else {
            self.approval_shown = None;
            return;
        };
        if self.screen() != Screen::Approval || self.too_small() {
            return;
        }
        if self
            .approval_shown
            .as_ref()
            .is_none_or(|(id, _)| *id != first.call_id)
        {
            self.approval_shown = Some((first.call_id.clone(), now));
            self.approval_choice = None;
        }
    }

    /// The terminal's size, before each draw.
    pub fn set_viewport(&mut self, width: u16, height: u16) {
        self.viewport = (width, height);
    }

    /// Whether the terminal is too small to show the UI (keys that choose are then ignored).
    pub fn too_small(&self) -> bool {
        self.viewport.0 < crate::view::MIN_WIDTH || self.viewport.1 < crate::view::MIN_HEIGHT
    }

    /// Whether the UI asked to quit.
    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// Whether colours are off.
    pub fn no_color(&self) -> bool {
        self.no_color
    }

    /// Whether tool calls show their diff or output, and reasoning its text (Ctrl-O).
    pub fn details(&self) -> bool {
        self.details
    }

    /// Transcript rows scrolled up from the bottom.
    pub fn scroll(&self) -> usize {
        self.scroll
    }

    /// Scrolls the transcript up (`up`) or down by `rows`, never past its top as last drawn.
    pub(crate) fn scroll_by(&mut self, rows: usize, up: bool) {
        self.scroll = if up {
            self.scroll.saturating_add(rows).min(self.scroll_limit.get())
        } else {
            self.scroll.saturating_sub(rows)
        };
    }

    /// What the transcript's items look like beyond their own content: the view keeps each
    /// item's wrapped rows until its revision, the width, the colours or this number changes.
    /// Whatever changes how items render without changing the transcript must bump it: Ctrl-O
    /// (details shown or hidden) does.
    pub fn view_generation(&self) -> u64 {
        self.view_generation
    }

    /// Advances the spinner (call a few times a second while a turn runs). Returns whether the
    /// screen changed, i.e. whether a frame is due; when idle it did not.
    pub fn on_tick(&mut self) -> bool {
        if self.status.running {
            self.status.spinner = self.status.spinner.wrapping_add(1);
        }
        self.status.running
    }

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
        self.scroll = 0;
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
                self.scroll = 0;
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
            } => {
                if self.approvals.is_empty() {
                    // A new box, though its call id may repeat one answered before (some servers
                    // number calls per response): its guard starts when it is drawn.
                    self.approval_shown = None;
                    self.approval_choice = None;
                }
                self.approvals.push(Approval {
                    call_id,
                    tool,
                    command,
                });
            }
            Event::ApprovalResolved { call_id, .. } => self.approvals.retain(|a| a.call_id != call_id),
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

    /// The checkpoint listing asked for by [`Effect::LoadCheckpoints`]: opens the picker.
    pub fn on_checkpoints(&mut self, listing: &CheckpointListing) {
        if !matches!(self.awaiting, Some(Awaiting::Picker(_))) {
            return;
        }
        if let Some(Awaiting::Picker(purpose)) = self.awaiting.take() {
            if self.mode == Mode::Chat && self.approvals.is_empty() {
                self.mode = Mode::Picker(Picker::new(listing, purpose));
            }
        }
    }

    /// A prepared plan: a code restore is previewed; a conversation rewind commits at once (it
    /// never touches a file), unless the plan says it cannot.
    pub fn on_plan(&mut self, plan: RewindPlan) -> Vec<Effect> {
        let menu = match self.awaiting.take() {
            Some(Awaiting::Plan(menu)) => menu,
            _ => return Vec::new(),
        };
        let preview = Preview {
            plan,
            scroll: 0,
            hint: None,
            menu,
        };
        if preview.plan.scope == RewindScope::Conversation {
            if let Some(reason) = preview.unavailable() {
                self.message = Some(format!(
                    "cannot restore the conversation: {}",
                    escape::line(reason)
                ));
                self.mode = Mode::Chat;
                return Vec::new();
            }
            return self.commit(&preview, retrace_protocol::OnConflict::Refuse);
        }
        self.mode = Mode::Preview(Box::new(preview));
        Vec::new()
    }

    /// Asks to commit `preview`'s plan with this conflict choice.
    pub(crate) fn commit(
        &mut self,
        preview: &Preview,
        on_conflict: retrace_protocol::OnConflict,
    ) -> Vec<Effect> {
        self.awaiting = Some(Awaiting::Commit {
            turn: preview.plan.turn,
            scope: preview.plan.scope,
        });
        self.mode = Mode::Chat;
        vec![Effect::Commit(retrace_protocol::CommitRewind {
            plan_id: preview.plan.plan_id.clone(),
            confirm: preview.needs_confirmation(),
            on_conflict,
            in_place: true,
        })]
    }

    /// The result of a commit or an undo.
    pub fn on_result(&mut self, result: &RewindResult) -> Vec<Effect> {
        let undo = if result.undo_available {
            " — /undo to take it back"
        } else {
            ""
        };
        match self.awaiting.take() {
            Some(Awaiting::Commit { turn, scope }) => {
                if result.ok && result.partial {
                    // The conversation was restored; the files were refused after it (they
                    // changed between the preview and the commit).
                    self.message = Some(format!(
                        "rewound the conversation to turn {turn}, but no file was restored: {}{undo}",
                        escape::line(
                            result
                                .error
                                .as_deref()
                                .unwrap_or("the files changed since the preview")
                        )
                    ));
                    self.input.set(&result.prompt);
                } else if result.ok {
                    let what = match scope {
                        RewindScope::Conversation => "the conversation only".to_string(),
                        RewindScope::Code => crate::rewind::files_said(result),
                        RewindScope::Both
                            if result.files_written.is_empty() && result.files_deleted.is_empty() =>
                        {
                            format!("the conversation; {}", crate::rewind::files_said(result))
                        }
                        RewindScope::Both => crate::rewind::files_said(result),
                    };
                    self.message = Some(format!("rewound to turn {turn}: {what}{undo}"));
                    if matches!(scope, RewindScope::Conversation | RewindScope::Both) {
                        self.input.set(&result.prompt);
                    }
                } else {
                    self.message = Some(format!(
                        "rewind to turn {turn} failed: {}",
                        escape::line(result.error.as_deref().unwrap_or("nothing was written"))
                    ));
                }
            }
            Some(Awaiting::Undo) => {
                self.message = Some(if !result.ok {
                    format!(
                        "undo failed: {}",
                        escape::line(result.error.as_deref().unwrap_or("nothing was undone"))
                    )
                } else if result.files_written.is_empty() && result.files_deleted.is_empty() {
                    "undone".to_string()
                } else {
                    format!("undone: {}", crate::rewind::files_said(result))
                });
            }
            _ => return Vec::new(),
        }
        let changed = self.status.head != result.head_id.as_str();
        self.status.head = result.head_id.to_string();
        self.status.session = result.session_id.to_string();
        if changed {
            vec![Effect::LoadTranscript]
        } else {
            Vec::new()
        }
    }

    /// The session's heads, for their names (the status line shows the selected head's).
    pub fn set_head_names(&mut self, heads: &[HeadEntry]) {
        self.head_names = heads
            .iter()
            .filter_map(|h| Some((h.id.to_string(), h.name.clone()?)))
            .collect();
    }

    /// The selected head's name, if it has one.
    pub fn head_name(&self) -> Option<&str> {
        self.head_names.get(&self.status.head).map(String::as_str)
    }

    /// The heads asked for by [`Effect::LoadHeads`].
    pub fn on_heads(&mut self, heads: Vec<HeadEntry>) {
        self.set_head_names(&heads);
        if self.mode == Mode::Chat {
            self.mode = Mode::Heads(HeadTree::new(heads));
        }
    }

    /// The sessions asked for by [`Effect::LoadSessions`].
    pub fn on_sessions(&mut self, sessions: Vec<SessionEntry>) {
        if self.mode == Mode::Chat {
            self.mode = Mode::Sessions(SessionList::new(sessions, &self.status.session));
        }
    }

    /// Another session was opened in place of this one ([`Effect::OpenSession`]): everything
    /// shown is that session's now.
    pub fn on_session_opened(&mut self, status: &SessionStatus, transcript: &[TranscriptEntry]) {
        let model = self.status.model.clone();
        self.status = StatusInfo::from_status(status);
        if self.status.model.is_none() {
            self.status.model = model;
        }
        self.approvals.clear();
        self.approval_scroll = 0;
        self.awaiting = None;
        self.mode = Mode::Chat;
        self.live_turn = None;
        self.reload_in_turn = false;
        self.compaction_note = None;
        self.on_transcript(transcript);
        self.message = Some(format!(
            "on session {} (the other stays on disk: /sessions to go back)",
            escape::line(status.session_id.as_ref())
        ));
    }

    /// A fork, summary or switch was done: the head is selected.
    pub fn on_head_ref(&mut self, r: &HeadRef) -> Vec<Effect> {
        self.status.head = r.head_id.to_string();
        self.status.session = r.session_id.to_string();
        self.message = Some(format!("on head {}", escape::line(r.head_id.as_str())));
        vec![Effect::LoadTranscript]
    }

    /// A request failed: say so, and drop what waited for it.
    /// Shows `message` (escaped) in the status area until the next one.
    pub fn say(&mut self, message: &str) {
        self.message = Some(escape::line(message));
    }

    /// An error answered to a request: said in the status area.
    pub fn on_error(&mut self, err: &Error) {
        if let Some(Awaiting::Plan(Some(menu))) = self.awaiting.take() {
            self.mode = Mode::Menu(menu);
        }
        self.message = Some(format!("error: {}", escape::line(&err.message)));
    }
}
