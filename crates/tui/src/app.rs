//! The UI's state machine: everything the screen shows and every decision a key makes, with no
//! I/O and nothing derived for drawing. The runtime feeds it keys (with the time they arrived),
//! events, answers and what each frame found ([`App::set_viewport`],
//! [`App::set_scroll_limits`], [`App::on_drawn`]), performs the [`Effect`]s it returns and draws
//! it with [`crate::view::draw`]. Tests drive it the same way.
//!
//! The state of each screen and what its keys do live in its module under [`crate::screens`];
//! session events come in through `events`, answers to requests through `answers` and the
//! screens that asked for them.
//!
//! [`Effect`]: crate::Effect

use std::collections::HashMap;

use retrace_protocol::RewindScope;

use crate::input::Input;
use crate::screens::approval::Approvals;
use crate::screens::chat::Chat;
use crate::screens::picker::Purpose;
use crate::screens::preview::Revert;
use crate::screens::Mode;
use crate::status::{ModelProblem, StatusInfo};
use crate::transcript::Transcript;
use crate::view::ScrollLimits;

/// A request the UI waits for, to know what its answer means.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Awaiting {
    /// Checkpoints, to open the picker for this purpose.
    Picker(Purpose),
    /// A plan: a rewind's, or a single-file revert's when `revert` says what it restores.
    Plan {
        /// The screen to go back to from its preview (the action menu, a file's history).
        back: Option<Box<Mode>>,
        /// What a revert restores.
        revert: Option<Revert>,
    },
    /// The result of committing a rewind to this turn.
    Commit { turn: u64, scope: RewindScope },
    /// The result of committing a single-file revert.
    Revert(Revert),
    /// A turn's results, for `/diff`.
    TurnResults,
    /// A file's history (the screen to go back to from it).
    History(Option<Box<Mode>>),
    /// The result of an undo.
    Undo,
    /// The result of a redo.
    Redo,
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
    /// The input box (under every screen; an approval box sends typing ahead to it).
    pub(crate) input: Input,
    /// The chat's own state: scroll, details, the double-key timers.
    pub(crate) chat: Chat,
    /// The screen on top of the chat, with its state.
    pub(crate) mode: Mode,
    /// The approvals waiting and their box (on top of every mode).
    pub(crate) approvals: Approvals,
    /// The terminal's size at the last draw (the keys need it: a command must have been seen
    /// whole before it can be allowed, and nothing is chosen on a screen too small to show it).
    pub(crate) viewport: (u16, u16),
    /// How far the scrolled box on top (the preview, the help) could scroll at the last frame
    /// that drew one (scrolling stops there).
    pub(crate) overlay_limit: usize,
    pub(crate) message: Option<String>,
    /// A message about what the input holds, and the input's revision it was said of: it goes
    /// once the input changes ([`App::drop_stale_hint`]).
    pub(crate) input_hint: Option<(u64, String)>,
    /// The names users gave heads, by head id (for the status line).
    pub(crate) head_names: HashMap<String, String>,
    pub(crate) no_color: bool,
    pub(crate) quit: bool,
    pub(crate) awaiting: Option<Awaiting>,
    /// The newest event whose effect the transcript and the status show: a snapshot's
    /// `last_event_seq`, then each event applied after it. Events numbered up to it are dropped.
    pub(crate) shown_seq: u64,
    /// The newest event ever applied: an event delivered again after a new snapshot (numbered
    /// after the snapshot but seen before it came) changes the items and the status again, but
    /// does not count its tokens nor say its lines twice.
    pub(crate) seen_seq: u64,
    /// A new snapshot was asked for and has not come.
    pub(crate) reloading: bool,
    /// Why the model asked for cannot answer, until one can (the welcome panel explains it).
    pub(crate) model_problem: Option<ModelProblem>,
    /// A prompt Enter could not send because no model could answer: put back into an empty
    /// input once one can (the input may have been cleared to type `/model demo`).
    pub(crate) held_prompt: Option<String>,
    /// What the last restore made here was ("the code restore to before turn 2"), for the line of
    /// the undo (or redo) that takes it back: the undo's line names it, not the line above it.
    pub(crate) last_restore: Option<String>,
}

impl App {
    /// A UI on a session with this status.
    pub fn new(status: StatusInfo, opts: AppOptions) -> App {
        App {
            status,
            transcript: Transcript::default(),
            input: Input::default(),
            chat: Chat::default(),
            mode: Mode::Chat,
            approvals: Approvals::default(),
            viewport: (80, 24),
            overlay_limit: 0,
            message: None,
            input_hint: None,
            head_names: HashMap::new(),
            no_color: opts.no_color,
            quit: false,
            awaiting: None,
            shown_seq: 0,
            seen_seq: 0,
            reloading: false,
            model_problem: None,
            held_prompt: None,
            last_restore: None,
        }
    }

    /// The model asked for cannot answer, and why: the welcome panel says it and what to do,
    /// and a prompt is kept in the input until a model can answer.
    pub fn set_model_problem(&mut self, problem: Option<ModelProblem>) {
        self.model_problem = problem;
    }

    /// Why the model asked for cannot answer, while no model is set up.
    pub fn model_problem(&self) -> Option<&ModelProblem> {
        self.model_problem
            .as_ref()
            .filter(|_| self.status.model.is_none())
    }

    /// The status line's data.
    pub fn status(&self) -> &StatusInfo {
        &self.status
    }

    /// The transcript.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// The newest event the transcript and the status show (a snapshot's `last_event_seq`, then
    /// each event applied after it).
    pub fn last_event_seq(&self) -> u64 {
        self.shown_seq
    }

    /// The input box.
    pub fn input(&self) -> &Input {
        &self.input
    }

    /// The status message (the outcome of the last action), if any.
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    /// Says `text` of what the input holds now: the message goes when the input changes.
    pub(crate) fn hint_about_input(&mut self, text: String) {
        self.input_hint = Some((self.input.revision(), text.clone()));
        self.message = Some(text);
    }

    /// Drops a message about the input once the input changed (it would speak of other text).
    pub(crate) fn drop_stale_hint(&mut self) {
        if let Some((revision, text)) = &self.input_hint {
            if *revision != self.input.revision() {
                if self.message.as_ref() == Some(text) {
                    self.message = None;
                }
                self.input_hint = None;
            }
        }
    }

    /// The terminal's size, before each draw.
    pub fn set_viewport(&mut self, width: u16, height: u16) {
        self.viewport = (width, height);
    }

    /// How far the last frame could scroll what it drew ([`crate::view::ViewState::scroll_limits`]),
    /// after each draw: scrolling stops there instead of counting on past the top. What the frame
    /// did not draw keeps the limit of the last frame that did.
    pub fn set_scroll_limits(&mut self, limits: ScrollLimits) {
        if let Some(chat) = limits.chat {
            self.chat.scroll_limit = chat;
        }
        if let Some(overlay) = limits.overlay {
            self.overlay_limit = overlay;
        }
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
        self.chat.details
    }

    /// Transcript rows scrolled up from the bottom.
    pub fn scroll(&self) -> usize {
        self.chat.scroll
    }

    /// What the transcript's entries look like beyond their own content, the colours and the
    /// details switch: the view keeps each entry's wrapped rows until its revision, the width,
    /// the colours, the details switch or this number changes. Whatever else changes how entries
    /// render without changing the transcript must bump it; Ctrl-O (details shown or hidden)
    /// bumps it too.
    pub fn view_generation(&self) -> u64 {
        self.chat.view_generation
    }

    /// Advances the spinner (call a few times a second while a turn runs). Returns whether the
    /// screen changed, i.e. whether a frame is due; when idle it did not.
    pub fn on_tick(&mut self) -> bool {
        if self.status.running {
            self.status.spinner = self.status.spinner.wrapping_add(1);
            self.transcript.tick(self.status.spinner);
        }
        self.status.running
    }
}
