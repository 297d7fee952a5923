//! `/help`: the keys and the slash commands ([`COMMANDS`]), in a box scrolled by rows.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::Frame;

use crate::app::App;
use crate::command::COMMANDS;
use crate::effect::Effect;
use crate::screens::{ctrl, Mode};
use crate::view::boxed::{boxed, Scroll};
use crate::view::Theme;

impl App {
    pub(crate) fn help_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let help_rows = self.overlay_limit;
        let Mode::Help(scroll) = &mut self.mode else {
            return Vec::new();
        };
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => *scroll = scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => *scroll = (*scroll + 1).min(help_rows),
            KeyCode::PageUp => *scroll = scroll.saturating_sub(10),
            KeyCode::PageDown | KeyCode::Char(' ') => *scroll = (*scroll + 10).min(help_rows),
            _ => {
                if matches!(key.code, KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q')) || ctrl(&key, 'c') {
                    self.mode = Mode::Chat;
                }
            }
        }
        Vec::new()
    }
}

/// Draws the keys and commands, scrolled by `scroll` rows. Returns how far they can scroll
/// (`None` when nothing was drawn).
pub(crate) fn draw(frame: &mut Frame, area: Rect, scroll: usize, t: Theme) -> Option<usize> {
    let mut body: Vec<Line<'static>> = HELP_KEYS
        .iter()
        .map(|(k, d)| {
            Line::from(vec![
                Span::styled(format!("  {k:<22}"), t.accent()),
                Span::raw(*d),
            ])
        })
        .collect();
    body.push(Line::raw(""));
    body.extend(COMMANDS.iter().map(|(c, d)| {
        Line::from(vec![
            Span::styled(format!("  {c:<22}"), t.accent()),
            Span::raw(*d),
        ])
    }));
    boxed(
        frame,
        area,
        " Keys and commands ",
        body,
        Scroll::Offset(scroll),
        "↑/↓ scroll · Esc close",
        t,
    )
}

/// The keys `/help` lists.
pub const HELP_KEYS: [(&str, &str); 13] = [
    ("Enter", "send"),
    ("Alt+Enter, Ctrl+J", "new line"),
    ("Up (empty input)", "previous prompt"),
    ("Up Down (lines)", "move between the input's lines"),
    ("Tab", "complete a command"),
    ("Esc", "clear the input / cancel a running turn"),
    ("Esc Esc", "rewind picker"),
    ("Ctrl-C", "cancel a turn / clear; twice to quit"),
    ("Ctrl-D (empty input)", "quit"),
    ("Ctrl-O", "show or hide diffs, outputs, reasoning"),
    ("Shift+Tab", "plan mode on or off (the model only reads)"),
    ("PgUp PgDn, wheel", "scroll the chat (Shift+drag selects)"),
    ("n/p · d · h", "preview, /diff: next/prev file · diff · history"),
];
