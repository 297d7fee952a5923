//! The action menu of a turn chosen in the picker (SPEC §5.1, keys `1`–`7` by position): the
//! actions the listing's entry offers (`CheckpointEntry::actions`), with its labels, in its order,
//! each available or not with its reason. The menu decides nothing: an unavailable action says the
//! entry's reason and is refused; a restore prepares a plan that the preview shows before anything
//! is committed; a fork or a summary is asked for at once; a fork into a new workspace puts
//! `/fork --turn N --worktree ` into the input, for the directory to be typed.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::Frame;
use retrace_protocol::{
    ActionKind, CheckpointAction, CheckpointEntry, ForkRequest, PrepareRewind, SummarizeDirection,
    SummarizeRequest,
};

use crate::app::{App, Awaiting};
use crate::effect::Effect;
use crate::escape;
use crate::screens::picker::Picker;
use crate::screens::{ctrl, Mode};
use crate::view::boxed::{boxed, row, Scroll};
use crate::view::wrap::wrap;
use crate::view::Theme;

/// The key of the action at `index` (`1` for the first), for the first nine.
pub fn key_of(index: usize) -> Option<char> {
    let n = u32::try_from(index).ok()?.checked_add(1)?;
    char::from_digit(n, 10)
}

/// The index of the action a key chooses (`1` → 0).
fn index_of(c: char) -> Option<usize> {
    match c.to_digit(10)? {
        0 => None,
        n => usize::try_from(n - 1).ok(),
    }
}

/// Why `action` cannot be taken, as the entry says, for a message.
pub fn unavailable_reason(action: &CheckpointAction) -> String {
    escape::line(action.reason.as_deref().unwrap_or("not offered"))
}

/// The action menu for one chosen turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Menu {
    /// The turn chosen in the picker; its `actions` are the menu.
    pub entry: CheckpointEntry,
    /// The highlighted action (index into `entry.actions`); restore conversation on opening.
    pub highlighted: usize,
    /// The picker it came from, to go back to.
    pub picker: Picker,
}

impl Menu {
    /// The menu for the picker's chosen turn, "restore conversation" highlighted (the first
    /// action when the entry does not offer it).
    pub fn new(entry: CheckpointEntry, picker: Picker) -> Menu {
        let highlighted = entry
            .actions
            .iter()
            .position(|a| a.action == ActionKind::RestoreConversation)
            .unwrap_or(0);
        Menu {
            entry,
            highlighted,
            picker,
        }
    }

    /// The actions, in the entry's order.
    pub fn actions(&self) -> &[CheckpointAction] {
        &self.entry.actions
    }

    /// The highlighted action (`None` when the entry offers none).
    pub fn current(&self) -> Option<&CheckpointAction> {
        self.entry.actions.get(self.highlighted)
    }
}

impl App {
    pub(crate) fn menu_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Mode::Menu(menu) = &mut self.mode else {
            return Vec::new();
        };
        let last = menu.actions().len().saturating_sub(1);
        let index = match key.code {
            KeyCode::Up | KeyCode::Char('k') => {
                menu.highlighted = menu.highlighted.saturating_sub(1);
                return Vec::new();
            }
            KeyCode::Down | KeyCode::Char('j') => {
                menu.highlighted = (menu.highlighted + 1).min(last);
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
            KeyCode::Enter => menu.highlighted,
            KeyCode::Char(c) => match index_of(c) {
                Some(i) => i,
                None => return Vec::new(),
            },
            _ => return Vec::new(),
        };
        let Some(action) = menu.actions().get(index).cloned() else {
            return Vec::new();
        };
        let menu = menu.clone();
        self.choose(&action, menu)
    }

    fn choose(&mut self, action: &CheckpointAction, menu: Box<Menu>) -> Vec<Effect> {
        if !action.available {
            self.message = Some(format!(
                "{}: unavailable ({})",
                escape::line(&action.label),
                unavailable_reason(action)
            ));
            return Vec::new();
        }
        let turn = menu.entry.turn;
        self.message = None;
        if self.waiting() {
            return Vec::new();
        }
        if let Some(scope) = action.action.scope() {
            // A restore: its plan is prepared, then shown by the preview before anything is
            // committed (the entry marks every restore `preview`).
            self.awaiting = Some(Awaiting::Plan {
                back: Some(Box::new(Mode::Menu(menu))),
                revert: None,
            });
            self.mode = Mode::Chat;
            return vec![Effect::PrepareRewind(PrepareRewind { turn, scope })];
        }
        self.mode = Mode::Chat;
        let summarize = |direction| {
            vec![Effect::Summarize(SummarizeRequest {
                turn,
                direction,
                model: None,
            })]
        };
        match action.action {
            ActionKind::Fork => vec![Effect::Fork(ForkRequest {
                turn,
                name: None,
                select: true,
            })],
            ActionKind::SummarizeFrom => summarize(SummarizeDirection::From),
            ActionKind::SummarizeUpTo => summarize(SummarizeDirection::UpTo),
            ActionKind::ForkWorkspace => {
                self.input.set(&format!("/fork --turn {turn} --worktree "));
                self.message =
                    Some("type the new workspace's directory (new or empty), then Enter".to_string());
                Vec::new()
            }
            ActionKind::RestoreBoth | ActionKind::RestoreConversation | ActionKind::RestoreCode => Vec::new(),
        }
    }
}

/// Draws the action menu.
pub(crate) fn draw(frame: &mut Frame, area: Rect, m: &Menu, t: Theme) {
    let mut body = Vec::new();
    for (i, a) in m.actions().iter().enumerate() {
        let selected = m.highlighted == i;
        let key = key_of(i).unwrap_or(' ');
        let label = escape::line(&a.label);
        if a.available {
            body.push(row(format!("{key}  {label}"), selected, t, t.text()));
        } else {
            body.push(row(
                format!("{key}  {label} — unavailable: {}", unavailable_reason(a)),
                selected,
                t,
                t.dim(),
            ));
        }
    }
    // What the highlighted action does, in the controller's words.
    if let Some(a) = m.actions().get(m.highlighted).filter(|a| !a.detail.is_empty()) {
        body.push(Line::default());
        let width = usize::from(area.width.saturating_sub(10)).clamp(20, 96);
        body.extend(wrap(
            &vec![(format!("  {}", escape::line(&a.detail)), t.dim())],
            width,
            2,
        ));
    }
    if body.is_empty() {
        body.push(row(
            "nothing is offered for this turn".to_string(),
            false,
            t,
            t.dim(),
        ));
    }
    let title = format!(
        " Turn {}: {} ",
        m.entry.turn,
        escape::first_line(&m.entry.prompt, 50)
    );
    let keys = match m.actions().len().min(9) {
        0 => "Esc back".to_string(),
        1 => "1 choose · Enter highlighted · Esc back".to_string(),
        n => format!("1-{n} choose · Enter highlighted · Esc back"),
    };
    boxed(frame, area, &title, body, Scroll::Focus(m.highlighted), &keys, t);
}
