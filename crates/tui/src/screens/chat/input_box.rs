//! The input box under the chat: the keys it takes in its title, the text scrolled so that the
//! cursor shows, and the cursor itself while the chat takes the keys.

use ratatui::layout::{Position, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
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
/// megabyte typed costs a count of its line breaks per frame, not a copy; a paste of many lines
/// is one fold, one character of the text shown).
pub(crate) fn line_count(app: &App) -> usize {
    app.input().shown().bytes().filter(|&b| b == b'\n').count() + 1
}

/// What a fold's marker shows, `None` for any other character.
type Labels<'a> = &'a dyn Fn(char) -> Option<String>;

/// The pieces of `line` as shown: its text escaped, each fold as its label (`true`).
fn pieces(line: &str, labels: Labels) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut plain = String::new();
    for c in line.chars() {
        match labels(c) {
            Some(label) => {
                if !plain.is_empty() {
                    out.push((escape::text(&std::mem::take(&mut plain)), false));
                }
                out.push((label, true));
            }
            None => plain.push(c),
        }
    }
    if !plain.is_empty() || out.is_empty() {
        out.push((escape::text(&plain), false));
    }
    out
}

/// `line` as shown, without its first `skip` characters (the paragraph clips what is too wide);
/// folds in `fold`'s style.
fn input_row(line: &str, skip: usize, labels: Labels, fold: Style) -> Line<'static> {
    let mut skip = skip;
    let mut spans = Vec::new();
    for (mut text, is_fold) in pieces(line, labels) {
        let n = text.chars().count();
        if skip >= n {
            skip -= n;
            continue;
        }
        if skip > 0 {
            if let Some((at, _)) = text.char_indices().nth(skip) {
                text = text.split_off(at);
            }
            skip = 0;
        }
        spans.push(if is_fold {
            Span::styled(text, fold)
        } else {
            Span::raw(text)
        });
    }
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
/// (each fold's marker shown as its label, in `fold`'s style), scrolled so that the cursor (a
/// byte offset) shows, and the cursor's cell.
fn input_view(
    text: &str,
    cursor: usize,
    width: usize,
    height: usize,
    labels: Labels,
    fold: Style,
) -> (Vec<Line<'static>>, usize, usize) {
    // The cursor's line and column, in the text as shown.
    let before = text.get(..cursor).unwrap_or(text);
    let cursor_line = before.bytes().filter(|&b| b == b'\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let cursor_col: usize = pieces(&before[line_start..], labels)
        .iter()
        .map(|(p, _)| UnicodeWidthStr::width(p.as_str()))
        .sum();
    let first = (cursor_line + 1).saturating_sub(height);
    let col_skip = (cursor_col + 1).saturating_sub(width);
    let shown = text
        .split('\n')
        .skip(first)
        .take(height)
        .map(|l| input_row(l, col_skip, labels, fold))
        .collect();
    let x = (cursor_col - col_skip).min(width.saturating_sub(1));
    let y = (cursor_line - first).min(height.saturating_sub(1));
    (shown, x, y)
}

#[cfg(test)]
#[path = "input_tests.rs"]
mod input_tests;
