//! `/help`: the keys and the slash commands ([`COMMANDS`]), in a box scrolled by rows.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::Frame;

use crate::app::App;
use crate::command::COMMANDS;
use crate::effect::Effect;
use crate::screens::{ctrl, Mode};
use crate::view::boxed::{boxed, inner_width, Scroll};
use crate::view::wrap::wrap;
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
/// (`None` when nothing was drawn). A description too long for the box wraps under itself.
pub(crate) fn draw(frame: &mut Frame, area: Rect, scroll: usize, t: Theme) -> Option<usize> {
    let width = inner_width(area);
    let entry = |name: &str, about: &str| {
        let spans = vec![
            (format!("  {name:<NAME_W$}"), t.accent()),
            (about.to_string(), t.text()),
        ];
        wrap(&spans, width, NAME_W + 2)
    };
    let mut body: Vec<Line<'static>> = HELP_KEYS.iter().flat_map(|(k, d)| entry(k, d)).collect();
    body.push(Line::raw(""));
    body.extend(COMMANDS.iter().flat_map(|(c, d)| entry(c, d)));
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

/// The width of the keys' and commands' column.
const NAME_W: usize = 22;

/// The keys `/help` lists.
pub const HELP_KEYS: [(&str, &str); 21] = [
    (
        "Enter",
        "send (while a turn runs: queue it, sent when the turn ends)",
    ),
    ("Alt+Enter, Ctrl+J", "new line"),
    ("/", "the commands, each with what it does"),
    ("Up (empty input)", "previous prompt (or the queued one, to edit)"),
    (
        "Up Down (lines)",
        "move between the input's rows (a long line wraps)",
    ),
    ("Tab", "complete a command"),
    ("Ctrl-A Ctrl-E", "start / end of the line (also Home End)"),
    ("Alt-B Alt-F", "a word back / forward"),
    ("Ctrl-U Ctrl-K", "delete to the start / end of the line"),
    ("Ctrl-W", "delete back to the whitespace before the cursor"),
    ("Alt-Backspace", "delete a word back (letters, digits, _)"),
    ("Alt-D", "delete the word after the cursor"),
    ("Ctrl-Y", "put back what was deleted last"),
    (
        "Esc",
        "clear the input / remove the queued prompt / cancel a running turn",
    ),
    ("Esc Esc", "rewind picker"),
    ("Ctrl-C", "cancel a turn / clear; twice to quit"),
    ("Ctrl-D (empty input)", "quit"),
    ("Ctrl-O", "show or hide diffs, outputs, reasoning"),
    ("Shift+Tab", "plan mode on or off (the model only reads)"),
    ("PgUp PgDn, wheel", "scroll the chat (Shift+drag selects)"),
    ("n/p · d · h", "preview, /diff: next/prev file · diff · history"),
];
