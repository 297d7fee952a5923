//! The action menu of a turn chosen in the picker (SPEC §5.1, fixed keys `1`–`6`): restore code,
//! conversation or both (a plan is prepared first), fork, or summarize. The listing says which
//! actions a turn offers; an unavailable one shows why and is refused.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::Frame;
use retrace_protocol::{
    CheckpointEntry, ForkRequest, PrepareRewind, RewindScope, SummarizeDirection, SummarizeRequest,
};

use crate::app::{App, Awaiting};
use crate::effect::Effect;
use crate::escape;
use crate::screens::picker::Picker;
use crate::screens::{ctrl, Mode};
use crate::view::boxed::{boxed, row, Scroll};
use crate::view::Theme;

/// An action of the menu (SPEC §5.1), in key order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `1` restore code and conversation.
    Both,
    /// `2` restore conversation (the default: it never touches a file).
    Conversation,
    /// `3` restore code.
    Code,
    /// `4` fork from here.
    Fork,
    /// `5` summarize from here.
    SummarizeFrom,
    /// `6` summarize up to here.
    SummarizeUpTo,
}

impl Action {
    /// Every action, in key order.
    pub const ALL: [Action; 6] = [
        Action::Both,
        Action::Conversation,
        Action::Code,
        Action::Fork,
        Action::SummarizeFrom,
        Action::SummarizeUpTo,
    ];

    /// Its key.
    pub fn key(self) -> char {
        match self {
            Action::Both => '1',
            Action::Conversation => '2',
            Action::Code => '3',
            Action::Fork => '4',
            Action::SummarizeFrom => '5',
            Action::SummarizeUpTo => '6',
        }
    }

    /// The action of a key.
    pub fn from_key(c: char) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.key() == c)
    }

    /// Its label.
    pub fn label(self) -> &'static str {
        match self {
            Action::Both => "Restore code and conversation",
            Action::Conversation => "Restore conversation",
            Action::Code => "Restore code",
            Action::Fork => "Fork from here",
            Action::SummarizeFrom => "Summarize from here",
            Action::SummarizeUpTo => "Summarize up to here",
        }
    }

    /// The rewind scope, for the three restore actions.
    pub fn scope(self) -> Option<RewindScope> {
        match self {
            Action::Both => Some(RewindScope::Both),
            Action::Conversation => Some(RewindScope::Conversation),
            Action::Code => Some(RewindScope::Code),
            _ => None,
        }
    }

    /// Whether the listing offers it for `entry`; `Err(reason)` when not.
    pub fn availability(self, entry: &CheckpointEntry) -> Result<(), String> {
        let needs_code = matches!(self, Action::Both | Action::Code);
        let needs_conversation = !matches!(self, Action::Code);
        let reason = || {
            entry
                .disabled_reason
                .clone()
                .unwrap_or_else(|| "not available".to_string())
        };
        if needs_code && entry.can_restore_code == Some(false) {
            return Err(reason());
        }
        if needs_conversation && entry.can_restore_conversation == Some(false) {
            return Err(reason());
        }
        Ok(())
    }
}

/// The action menu for one chosen turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Menu {
    /// The turn chosen in the picker.
    pub entry: CheckpointEntry,
    /// The highlighted action (index into [`Action::ALL`]); `Conversation` on opening.
    pub highlighted: usize,
    /// The picker it came from, to go back to.
    pub picker: Picker,
}

impl Menu {
    /// The menu for the picker's chosen turn, "restore conversation" highlighted.
    pub fn new(entry: CheckpointEntry, picker: Picker) -> Menu {
        Menu {
            entry,
            highlighted: 1,
            picker,
        }
    }

    /// The highlighted action.
    pub fn current(&self) -> Action {
        Action::ALL[self.highlighted.min(Action::ALL.len() - 1)]
    }
}

impl App {
    pub(crate) fn menu_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Mode::Menu(menu) = &mut self.mode else {
            return Vec::new();
        };
        let action = match key.code {
            KeyCode::Up | KeyCode::Char('k') => {
                menu.highlighted = menu.highlighted.saturating_sub(1);
                return Vec::new();
            }
            KeyCode::Down | KeyCode::Char('j') => {
                menu.highlighted = (menu.highlighted + 1).min(Action::ALL.len() - 1);
                return Vec::new();
            }
            KeyCode::Esc => {
                self.mode = Mode::Picker(menu.picker.clone());
                return Vec::new();
            }
            _ if ctrl(&key, 'c') => {
                self.mode = Mode::Chat;
                return Vec::new();
            }
            KeyCode::Enter => menu.current(),
            KeyCode::Char(c) => match Action::from_key(c) {
                Some(a) => a,
                None => return Vec::new(),
            },
            _ => return Vec::new(),
        };
        let menu = menu.clone();
        self.choose(action, menu)
    }

    fn choose(&mut self, action: Action, menu: Box<Menu>) -> Vec<Effect> {
        if let Err(reason) = action.availability(&menu.entry) {
            self.message = Some(format!(
                "{}: unavailable ({})",
                action.label(),
                escape::line(&reason)
            ));
            return Vec::new();
        }
        let turn = menu.entry.turn;
        self.message = None;
        if self.waiting() {
            return Vec::new();
        }
        if let Some(scope) = action.scope() {
            self.awaiting = Some(Awaiting::Plan(Some(menu)));
            self.mode = Mode::Chat;
            return vec![Effect::PrepareRewind(PrepareRewind { turn, scope })];
        }
        self.mode = Mode::Chat;
        match action {
            Action::Fork => vec![Effect::Fork(ForkRequest {
                turn,
                name: None,
                select: true,
            })],
            Action::SummarizeFrom | Action::SummarizeUpTo => {
                let direction = if action == Action::SummarizeFrom {
                    SummarizeDirection::From
                } else {
                    SummarizeDirection::UpTo
                };
                vec![Effect::Summarize(SummarizeRequest {
                    turn,
                    direction,
                    model: None,
                })]
            }
            _ => Vec::new(),
        }
    }
}

/// Draws the action menu.
pub(crate) fn draw(frame: &mut Frame, area: Rect, m: &Menu, t: Theme) {
    let mut body = Vec::new();
    for (i, a) in Action::ALL.iter().enumerate() {
        let selected = m.highlighted == i;
        match a.availability(&m.entry) {
            Ok(()) => body.push(row(format!("{}  {}", a.key(), a.label()), selected, t, t.text())),
            Err(reason) => body.push(row(
                format!(
                    "{}  {} — unavailable: {}",
                    a.key(),
                    a.label(),
                    escape::line(&reason)
                ),
                selected,
                t,
                t.dim(),
            )),
        }
    }
    let title = format!(
        " Turn {}: {} ",
        m.entry.turn,
        escape::first_line(&m.entry.prompt, 50)
    );
    boxed(
        frame,
        area,
        &title,
        body,
        Scroll::Focus(m.highlighted),
        "1-6 choose · Enter highlighted · Esc back",
        t,
    );
}
