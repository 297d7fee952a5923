//! Styles, with colours dropped when `NO_COLOR` is set (bold, dim and reverse stay).

use ratatui::style::{Color, Modifier, Style};

/// The styles the view uses.
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    no_color: bool,
}

impl Theme {
    /// The theme of an app.
    pub fn new(no_color: bool) -> Theme {
        Theme { no_color }
    }

    fn fg(self, c: Color) -> Style {
        if self.no_color {
            Style::default()
        } else {
            Style::default().fg(c)
        }
    }

    /// Plain text.
    pub fn text(self) -> Style {
        Style::default()
    }

    /// Secondary text (reasoning, hints, checkpoint marks).
    pub fn dim(self) -> Style {
        self.fg(Color::DarkGray).add_modifier(Modifier::DIM)
    }

    /// The user's prompts and titles.
    pub fn bold(self) -> Style {
        Style::default().add_modifier(Modifier::BOLD)
    }

    /// Accents: tool names, keys.
    pub fn accent(self) -> Style {
        self.fg(Color::Cyan)
    }

    /// Success marks.
    pub fn ok(self) -> Style {
        self.fg(Color::Green)
    }

    /// Warnings: shell gaps, conflicts.
    pub fn warn(self) -> Style {
        self.fg(Color::Yellow)
    }

    /// Errors.
    pub fn error(self) -> Style {
        self.fg(Color::Red)
    }

    /// The plan-mode mark on the status line.
    pub fn plan(self) -> Style {
        self.fg(Color::Yellow)
            .add_modifier(Modifier::REVERSED)
            .add_modifier(Modifier::BOLD)
    }

    /// The selected row.
    pub fn selected(self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }
}
