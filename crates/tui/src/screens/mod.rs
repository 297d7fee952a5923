//! The screens, one module each: its state, what its keys do and how it looks. The chat is always
//! there; one [`Mode`] (a screen with its state) may be on top of it, and an approval box outranks
//! every mode. This module routes keys, the wheel, pastes and drawing to the screen that takes
//! them ([`App::screen`]).

pub mod approval;
pub mod chat;
pub mod diff;
pub mod files;
pub mod heads;
pub mod help;
pub mod history;
pub mod menu;
pub mod picker;
pub mod preview;
pub mod sessions;

use std::time::Instant;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};
use ratatui::layout::Rect;
use ratatui::Frame;

use crate::app::App;
use crate::effect::Effect;
use crate::view::Theme;
use diff::TurnDiff;
use heads::HeadTree;
use history::History;
use menu::Menu;
use picker::Picker;
use preview::Preview;
use sessions::SessionList;

/// What is on top of the chat.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    /// The chat and the input box.
    Chat,
    /// The rewind picker.
    Picker(Picker),
    /// The action menu of a chosen turn.
    Menu(Box<Menu>),
    /// The preview of a rewind plan (every restore).
    Preview(Box<Preview>),
    /// Keys and commands, scrolled by this many rows.
    Help(usize),
    /// The heads of the session, as a tree.
    Heads(HeadTree),
    /// The sessions of the workspace.
    Sessions(SessionList),
    /// What a turn changed (`/diff`).
    Diff(Box<TurnDiff>),
    /// A file's versions (`/history`).
    History(Box<History>),
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
    /// [`Mode::Diff`].
    Diff,
    /// [`Mode::History`].
    History,
}

/// Whether `key` is Ctrl and `c`.
pub(crate) fn ctrl(key: &KeyEvent, c: char) -> bool {
    key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char(c)
}

impl App {
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
            Mode::Diff(_) => Screen::Diff,
            Mode::History(_) => Screen::History,
        }
    }

    /// The mode under any approval.
    pub fn mode(&self) -> &Mode {
        &self.mode
    }

    /// A key pressed at `now`. Returns the requests it makes.
    pub fn on_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Effect> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        let effects = match self.screen() {
            Screen::Chat => self.chat_key(key, now),
            Screen::Approval => self.approval_key(key, now),
            _ => self.overlay_key(key),
        };
        self.drop_stale_hint();
        effects
    }

    /// A key on a screen above the chat (none of them depends on when it came).
    fn overlay_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let choosing = matches!(
            self.screen(),
            Screen::Picker | Screen::Menu | Screen::Preview | Screen::History
        );
        if choosing && self.too_small() && key.code != KeyCode::Esc {
            // Nothing is chosen on a screen too small to show the choice.
            return Vec::new();
        }
        match self.screen() {
            Screen::Chat => Vec::new(),
            Screen::Approval => {
                self.approval_scroll_key(key.code);
                Vec::new()
            }
            Screen::Picker => self.picker_key(key),
            Screen::Menu => self.menu_key(key),
            Screen::Preview => self.preview_key(key),
            Screen::Heads => self.heads_key(key),
            Screen::Sessions => self.sessions_key(key),
            Screen::Help => self.help_key(key),
            Screen::Diff => self.diff_key(key),
            Screen::History => self.history_key(key),
        }
    }

    /// A mouse report: the wheel scrolls the transcript, or moves through a list like Up/Down;
    /// nothing else of the mouse does anything (a click chooses nothing).
    pub fn on_mouse(&mut self, kind: MouseEventKind) -> Vec<Effect> {
        let up = match kind {
            MouseEventKind::ScrollUp => true,
            MouseEventKind::ScrollDown => false,
            _ => return Vec::new(),
        };
        match self.screen() {
            Screen::Chat => {
                self.chat_wheel(up);
                Vec::new()
            }
            Screen::Approval
            | Screen::Picker
            | Screen::Menu
            | Screen::Preview
            | Screen::Heads
            | Screen::Sessions
            | Screen::Help
            | Screen::Diff
            | Screen::History => {
                let code = if up { KeyCode::Up } else { KeyCode::Down };
                self.overlay_key(KeyEvent::new(code, KeyModifiers::NONE))
            }
        }
    }

    /// Pasted text (bracketed paste): typed into the input as one edit, line breaks kept, so a
    /// pasted newline never sends a half prompt; a block of more than a few lines shows folded
    /// ("[pasted 120 lines]") and is sent whole. Pasted under an approval box, it goes to the
    /// input too (it never answers the box).
    pub fn on_paste(&mut self, text: &str) {
        if !matches!(self.screen(), Screen::Chat | Screen::Approval) {
            return;
        }
        self.input.insert_str(text);
        self.drop_stale_hint();
    }
}

/// Draws the screen on top of the chat (nothing on the chat itself) in `area`, the rows the view
/// gives boxes (`view::overlay_height`: above the input box). Returns how far its box
/// could scroll, for a box the keys scroll by offset (the preview, `/diff`, the help) when it
/// was drawn.
pub(crate) fn draw_on_top(frame: &mut Frame, area: Rect, app: &App, t: Theme) -> Option<usize> {
    match (app.screen(), app.mode()) {
        (Screen::Chat, _) => None,
        (Screen::Approval, _) => {
            approval::draw(frame, area, &app.approvals, t);
            None
        }
        (Screen::Picker, Mode::Picker(p)) => {
            picker::draw(frame, area, p, t);
            None
        }
        (Screen::Menu, Mode::Menu(m)) => {
            menu::draw(frame, area, m, t);
            None
        }
        (Screen::Preview, Mode::Preview(p)) => preview::draw(frame, area, p, t),
        (Screen::Help, Mode::Help(scroll)) => help::draw(frame, area, *scroll, t),
        (Screen::Heads, Mode::Heads(tree)) => {
            heads::draw(frame, area, tree, t);
            None
        }
        (Screen::Sessions, Mode::Sessions(list)) => {
            sessions::draw(frame, area, list, t);
            None
        }
        (Screen::Diff, Mode::Diff(d)) => diff::draw(frame, area, d, t),
        (Screen::History, Mode::History(h)) => {
            history::draw(frame, area, h, t);
            None
        }
        _ => None,
    }
}
