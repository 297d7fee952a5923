//! The input box under the chat: the keys it takes in its title, the text soft-wrapped into its
//! width (`input::rows`: the readline keys still act on the logical line, Up/Down move between
//! these rows), the box growing up to [`MAX_ROWS`] rows and then scrolled so that the cursor's
//! row shows, and the cursor itself while the chat takes the keys.

use ratatui::layout::{Position, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

use crate::app::App;
use crate::input::rows::{self, Labels, Row};
use crate::screens::Screen;
use crate::view::wrap::fit;
use crate::view::Theme;

/// The most rows the input box grows to; a longer text scrolls in it.
pub(crate) const MAX_ROWS: usize = 6;

/// The rows the input box takes in a terminal `width` cells wide (its borders left out): its text
/// wrapped, at least 1 and at most [`MAX_ROWS`]. Only the rows up to that many are laid out (a
/// megabyte typed costs no more than what shows; a paste of many lines is one fold).
pub(crate) fn row_count(app: &App, width: u16) -> usize {
    let labels = |c: char| app.input().fold_label(c);
    let inner = usize::from(width.saturating_sub(2)).max(1);
    rows::count_rows(app.input().shown(), inner, MAX_ROWS, &labels).max(1)
}

/// Row `row` of `text` as drawn: its text escaped, each fold as its label in `fold`'s style.
fn input_row(text: &str, row: Row, labels: Labels, fold: Style) -> Line<'static> {
    let spans: Vec<Span<'static>> = rows::row_pieces(text, row, labels)
        .into_iter()
        .map(|(piece, is_fold)| match is_fold {
            true => Span::styled(piece, fold),
            false => Span::raw(piece),
        })
        .collect();
    Line::from(spans)
}

/// Draws the input box into `area`.
pub(crate) fn draw(frame: &mut Frame, area: Rect, app: &App, t: Theme) {
    let hint = match (
        app.status().running,
        app.input().is_empty(),
        app.queued().is_some(),
    ) {
        (false, _, _) => " Enter send · Alt+Enter newline · Esc Esc rewind · Ctrl-O details · /help ",
        (true, false, _) => " Enter queue it · Esc clear · Ctrl-C cancel the turn ",
        (true, true, true) => " ↑ edit the queued prompt · Esc remove it · Ctrl-C cancel the turn ",
        (true, true, false) => " Esc cancel · Ctrl-C cancel · Enter queues a prompt ",
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
    let labels = |c: char| app.input().fold_label(c);
    let (shown, x, y) = input_view(
        app.input().shown(),
        app.input().cursor(),
        usize::from(inner.width),
        usize::from(inner.height),
        &labels,
        t.accent(),
    );
    frame.render_widget(Paragraph::new(shown), inner);
    if app.screen() == Screen::Chat {
        frame.set_cursor_position(Position::new(inner.x + x as u16, inner.y + y as u16));
    }
}

/// What the input box shows in `width`×`height` cells (both at least 1): the rows of `text`
/// wrapped at `width` (each fold's marker shown as its label, in `fold`'s style), from its first
/// row while the cursor's row is among the first `height`, else ending at the cursor's row; and
/// the cursor's cell. Only the lines around the cursor are laid out.
fn input_view(
    text: &str,
    cursor: usize,
    width: usize,
    height: usize,
    labels: Labels,
    fold: Style,
) -> (Vec<Line<'static>>, usize, usize) {
    let width = width.max(1);
    let height = height.max(1);
    let cursor = if text.is_char_boundary(cursor.min(text.len())) {
        cursor.min(text.len())
    } else {
        text.len()
    };
    let (start, end) = rows::line_around(text, cursor);
    let here = rows::rows_of(text, start, end, width, labels);
    let (r, x) = rows::cursor_in(text, &here, cursor, labels);
    // The rows before the cursor's, nearest first, as many as could show above it.
    let mut above: Vec<Row> = here[..r].iter().rev().copied().collect();
    let mut line_start = start;
    while above.len() < height - 1 && line_start > 0 {
        let (s, e) = rows::line_around(text, line_start - 1);
        above.extend(rows::rows_of(text, s, e, width, labels).into_iter().rev());
        line_start = s;
    }
    above.truncate(height - 1);
    above.reverse();
    let y = above.len();
    let mut shown: Vec<Row> = above;
    shown.extend(here[r..].iter().copied());
    // From the text's first row: the rows after the cursor's fill the box.
    let mut line_end = end;
    while shown.len() < height && line_end < text.len() {
        let (s, e) = rows::line_around(text, line_end + 1);
        shown.extend(rows::rows_of(text, s, e, width, labels));
        line_end = e;
    }
    shown.truncate(height);
    let lines = shown
        .iter()
        .map(|&row| input_row(text, row, labels, fold))
        .collect();
    (lines, x.min(width.saturating_sub(1)), y)
}

#[cfg(test)]
#[path = "input_tests.rs"]
mod input_tests;
