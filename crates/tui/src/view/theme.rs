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

    /// Whether colours are shown (`NO_COLOR` not set).
    pub fn colours(self) -> bool {
        !self.no_color
    }

    /// Emphasis in an answer (`*text*`).
    pub fn italic(self) -> Style {
        Style::default().add_modifier(Modifier::ITALIC)
    }

    /// Struck-through text in an answer (`~~text~~`).
    pub fn struck(self) -> Style {
        Style::default().add_modifier(Modifier::CROSSED_OUT)
    }

    /// A heading of an answer: level 1 underlined, levels 1 and 2 in the accent colour, all bold.
    pub fn heading(self, level: u8) -> Style {
        let style = match level {
            1 => self.accent().add_modifier(Modifier::UNDERLINED),
            2 => self.accent(),
            _ => Style::default(),
        };
        style.add_modifier(Modifier::BOLD)
    }

    /// A code span in an answer (`` `code` ``; without colours its backticks stay).
    pub fn code_span(self) -> Style {
        self.fg(Color::LightMagenta)
    }

    /// A link's text in an answer.
    pub fn link(self) -> Style {
        self.fg(Color::Blue).add_modifier(Modifier::UNDERLINED)
    }

    /// A colour of highlighted code, given as 24-bit RGB, shown as the nearest of the 256
    /// colours every terminal in use draws (not all of them draw 24-bit colour).
    pub fn code_rgb(self, r: u8, g: u8, b: u8) -> Style {
        self.fg(Color::Indexed(nearest_256(r, g, b)))
    }

    /// The selected row.
    pub fn selected(self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }
}

/// The index of the colour of xterm's 256 (the 6×6×6 cube, 16–231, or the grey ramp, 232–255)
/// nearest to `r g b`.
pub(crate) fn nearest_256(r: u8, g: u8, b: u8) -> u8 {
    // The cube's levels: 0, 95, 135, 175, 215, 255.
    let level = |v: u8| -> (u8, i32) {
        let i = if v < 48 {
            0
        } else if v < 115 {
            1
        } else {
            (v - 35) / 40
        };
        let value = if i == 0 { 0 } else { 55 + 40 * i32::from(i) };
        (i, value)
    };
    let ((ri, rv), (gi, gv), (bi, bv)) = (level(r), level(g), level(b));
    let dist = |x: i32, y: i32, z: i32| {
        (x - i32::from(r)).pow(2) + (y - i32::from(g)).pow(2) + (z - i32::from(b)).pow(2)
    };
    let cube = 16 + 36 * ri + 6 * gi + bi;
    // The grey ramp: 8, 18, …, 238.
    let mean = (u32::from(r) + u32::from(g) + u32::from(b)) / 3;
    let gi = if mean > 238 {
        23
    } else {
        (mean.saturating_sub(3) / 10).min(23)
    } as u8;
    let grey = 8 + 10 * i32::from(gi);
    if dist(grey, grey, grey) < dist(rv, gv, bv) {
        232 + gi
    } else {
        cube
    }
}

#[cfg(test)]
mod tests {
    use super::nearest_256;

    #[test]
    fn rgb_goes_to_the_nearest_of_256() {
        assert_eq!(nearest_256(0, 0, 0), 16);
        assert_eq!(nearest_256(255, 255, 255), 231);
        assert_eq!(nearest_256(255, 0, 0), 196);
        assert_eq!(nearest_256(128, 128, 128), 244);
        assert_eq!(nearest_256(0x65, 0x73, 0x7e), 243);
    }
}
