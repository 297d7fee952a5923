//! The input box under the chat: the keys it takes in its title, the text scrolled so that the
//! cursor shows, and the cursor itself while the chat takes the keys.

use ratatui::layout::{Position, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;
use unicode_width::UnicodeWidthStr;

use crate::app::App;
use crate::escape;
use crate::screens::Screen;
use crate::view::wrap::fit;
use crate::view::Theme;

/// The input's lines. Escaping keeps every line break and adds none, so the escaped text has the
/// lines of the raw one, each escaped on its own: only the lines that show are escaped (a
/// megabyte pasted costs a count of its line breaks per frame, not a copy).
pub(crate) fn line_count(app: &App) -> usize {
    app.input().text().bytes().filter(|&b| b == b'\n').count() + 1
}

/// `line`, escaped, without its first `skip` characters (the paragraph clips what is too wide).
fn input_row(line: &str, skip: usize) -> String {
    let mut row = escape::text(line);
    match row.char_indices().nth(skip) {
        Some((at, _)) => row.split_off(at),
        None => String::new(),
    }
}

/// Draws the input box into `area`.
pub(crate) fn draw(frame: &mut Frame, area: Rect, app: &App, t: Theme) {
    let hint = if app.status().running {
        " Esc cancel · Ctrl-C cancel "
    } else {
        " Enter send · Alt+Enter newline · Esc Esc rewind · Ctrl-O details · /help "
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.dim())
        .title(Line::styled(
            fit(hint, usize::from(area.width.saturating_sub(2))),
            t.dim(),
        ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    let (shown, x, y) = input_view(
        app.input().text(),
        app.input().cursor(),
        usize::from(inner.width),
        usize::from(inner.height),
    );
    frame.render_widget(Paragraph::new(shown), inner);
    if app.screen() == Screen::Chat {
        frame.set_cursor_position(Position::new(inner.x + x as u16, inner.y + y as u16));
    }
}

/// What the input box shows in `width`×`height` cells (both at least 1): the rows of `text`,
/// scrolled so that the cursor (a byte offset) shows, and the cursor's cell.
fn input_view(text: &str, cursor: usize, width: usize, height: usize) -> (Vec<Line<'static>>, usize, usize) {
    // The cursor's line and column, in the escaped text.
    let before = text.get(..cursor).unwrap_or(text);
    let cursor_line = before.bytes().filter(|&b| b == b'\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let cursor_col = UnicodeWidthStr::width(escape::text(&before[line_start..]).as_str());
    let first = (cursor_line + 1).saturating_sub(height);
    let col_skip = (cursor_col + 1).saturating_sub(width);
    let shown = text
        .split('\n')
        .skip(first)
        .take(height)
        .map(|l| Line::raw(input_row(l, col_skip)))
        .collect();
    let x = (cursor_col - col_skip).min(width.saturating_sub(1));
    let y = (cursor_line - first).min(height.saturating_sub(1));
    (shown, x, y)
}

#[cfg(test)]
#[path = "input_tests.rs"]
mod input_tests;
