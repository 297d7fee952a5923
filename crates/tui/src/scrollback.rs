//! What stays in the terminal after the UI quits: the conversation as the transcript drew it, at
//! the terminal's width, printed to the normal screen once the alternate screen is left, so that
//! it can be scrolled back to and copied, as after any command. Colours and styles are written as
//! SGR escape sequences (colours left out with `NO_COLOR`); everything in the rows was escaped
//! when they were made.

use std::io::Write;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

use crate::app::App;
use crate::screens::chat::draw::entry_rows;
use crate::view::Theme;

/// The transcript's rows at `width`, as on the screen.
pub fn conversation_rows(app: &App, width: usize) -> Vec<Line<'static>> {
    let t = Theme::new(app.no_color());
    let mut rows = Vec::new();
    for shown in app.transcript().entries() {
        rows.extend(entry_rows(&shown.entry, app.details(), t, width));
    }
    // The first entry is a prompt's blank row: not needed at the top.
    while rows.first().is_some_and(|l| l.width() == 0) {
        rows.remove(0);
    }
    rows
}

/// The SGR parameters of a colour as foreground (`None`: the terminal's own).
fn fg(c: Color) -> Option<String> {
    let named = |n: u8| Some(n.to_string());
    match c {
        Color::Reset => None,
        Color::Black => named(30),
        Color::Red => named(31),
        Color::Green => named(32),
        Color::Yellow => named(33),
        Color::Blue => named(34),
        Color::Magenta => named(35),
        Color::Cyan => named(36),
        Color::Gray => named(37),
        Color::DarkGray => named(90),
        Color::LightRed => named(91),
        Color::LightGreen => named(92),
        Color::LightYellow => named(93),
        Color::LightBlue => named(94),
        Color::LightMagenta => named(95),
        Color::LightCyan => named(96),
        Color::White => named(97),
        Color::Indexed(i) => Some(format!("38;5;{i}")),
        Color::Rgb(r, g, b) => Some(format!("38;2;{r};{g};{b}")),
    }
}

/// The escape sequence that turns `style` on (empty for the plain style).
fn sgr(style: Style) -> String {
    let mut params: Vec<String> = Vec::new();
    let m = style.add_modifier;
    for (flag, code) in [
        (Modifier::BOLD, "1"),
        (Modifier::DIM, "2"),
        (Modifier::ITALIC, "3"),
        (Modifier::UNDERLINED, "4"),
        (Modifier::REVERSED, "7"),
        (Modifier::CROSSED_OUT, "9"),
    ] {
        if m.contains(flag) {
            params.push(code.to_string());
        }
    }
    params.extend(style.fg.and_then(fg));
    if params.is_empty() {
        String::new()
    } else {
        format!("\x1b[{}m", params.join(";"))
    }
}

/// A row as text with escape sequences for its styles, its trailing spaces dropped.
pub fn ansi(line: &Line) -> String {
    let mut out = String::new();
    for span in &line.spans {
        let on = sgr(span.style.patch(line.style));
        if on.is_empty() {
            out.push_str(&span.content);
        } else {
            out.push_str(&on);
            out.push_str(&span.content);
            out.push_str("\x1b[0m");
        }
    }
    let trimmed = out.trim_end_matches(' ').len();
    out.truncate(trimmed);
    out
}

/// Prints the conversation to `out` at `width` (nothing when there is none), then a blank line.
pub fn print(app: &App, width: usize, out: &mut impl Write) -> std::io::Result<()> {
    let rows = conversation_rows(app, width.max(20));
    if rows.is_empty() {
        return Ok(());
    }
    for row in &rows {
        writeln!(out, "{}", ansi(row))?;
    }
    writeln!(out)?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::text::Span;

    #[test]
    fn styles_become_escape_sequences() {
        let line = Line::from(vec![
            Span::raw("  plain "),
            Span::styled("bold", Style::default().add_modifier(Modifier::BOLD)),
            Span::styled(" x", Style::default().fg(Color::Indexed(66))),
            Span::raw("   "),
        ]);
        assert_eq!(ansi(&line), "  plain \x1b[1mbold\x1b[0m\x1b[38;5;66m x\x1b[0m");
    }
}
