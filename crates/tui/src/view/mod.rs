//! Rendering: [`draw`] puts an [`App`] on a ratatui frame. It decides nothing, escapes every
//! string it did not write itself, and never panics at any size.

mod chat;
pub(crate) mod detail;
mod layout;
pub(crate) mod overlay;
mod theme;
mod wrap;

use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;
use unicode_width::UnicodeWidthStr;

use crate::app::{App, Screen};
use crate::escape;
pub(crate) use layout::ChatLayoutCache;
pub use theme::Theme;
use wrap::fit;

/// The smallest terminal the UI lays out; below it a single line says so.
pub const MIN_WIDTH: u16 = 40;
/// See [`MIN_WIDTH`].
pub const MIN_HEIGHT: u16 = 10;

/// Draws the whole screen.
pub fn draw(frame: &mut Frame, app: &App) {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let msg = format!("terminal too small ({}×{}; need 40×10)", area.width, area.height);
        frame.render_widget(Paragraph::new(fit(&msg, usize::from(area.width))), area);
        return;
    }
    let t = Theme::new(app.no_color());
    let input_rows = input_line_count(app).clamp(1, 6) as u16;
    let has_message = app.message().is_some();
    let [body, message, input, status] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(u16::from(has_message)),
        Constraint::Length(input_rows + 2),
        Constraint::Length(1),
    ])
    .areas(area);
    chat::draw(frame, body, app);
    if let Some(m) = app.message() {
        let text = fit(&escape::line(m), usize::from(message.width));
        frame.render_widget(Paragraph::new(Line::styled(text, t.warn())), message);
    }
    draw_input(frame, input, app, t);
    draw_status(frame, status, app, t);
    match app.screen() {
        Screen::Chat => {}
        Screen::Approval => overlay::approval(frame, area, app, t),
        Screen::Picker => overlay::picker(frame, area, app, t),
        Screen::Menu => overlay::menu(frame, area, app, t),
        Screen::Preview => overlay::preview(frame, area, app, t),
        Screen::Help => overlay::help(frame, area, app, t),
        Screen::Heads => overlay::heads(frame, area, app, t),
        Screen::Sessions => overlay::sessions(frame, area, app, t),
    }
}

/// The input's lines. Escaping keeps every line break and adds none, so the escaped text has the
/// lines of the raw one, each escaped on its own: only the lines that show are escaped (a
/// megabyte pasted costs a count of its line breaks per frame, not a copy).
fn input_line_count(app: &App) -> usize {
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

fn draw_input(frame: &mut Frame, area: Rect, app: &App, t: Theme) {
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

fn draw_status(frame: &mut Frame, area: Rect, app: &App, t: Theme) {
    let s = app.status();
    let mut parts = Vec::new();
    if s.running {
        const FRAMES: [&str; 4] = ["⠋", "⠙", "⠹", "⠸"];
        parts.push(FRAMES[s.spinner % FRAMES.len()].to_string());
    }
    if s.compacting {
        parts.push("compacting".to_string());
    }
    parts.push(escape::line(s.model.as_deref().unwrap_or("no model")));
    match app.head_name() {
        Some(name) => parts.push(format!(
            "head {} ({})",
            escape::first_line(name, 24),
            escape::line(&s.head)
        )),
        None => parts.push(format!("head {}", escape::line(&s.head))),
    }
    if let Some(turn) = s.turn {
        parts.push(format!("turn {turn}"));
    }
    if s.usage.total_tokens > 0 || s.usage.prompt_tokens > 0 {
        parts.push(format!(
            "tokens in {} out {}",
            s.usage.prompt_tokens, s.usage.completion_tokens
        ));
    }
    // The whole id: it is what `retrace --session ID` takes (the first characters of ids made the
    // same day are the same).
    parts.push(format!("session {}", escape::line(&s.session)));
    parts.push(escape::line(&s.workspace));
    let width = usize::from(area.width);
    // Plan mode comes first and stands out (reversed, so it shows without colours too).
    const PLAN: &str = " PLAN ";
    let mut spans = Vec::new();
    let mut rest = width;
    if s.plan_mode && width >= PLAN.len() {
        spans.push(Span::styled(PLAN, t.plan()));
        spans.push(Span::raw(" "));
        rest = width.saturating_sub(PLAN.len() + 1);
    }
    spans.push(Span::styled(fit(&parts.join(" · "), rest), t.dim()));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

#[cfg(test)]
#[path = "input_tests.rs"]
mod input_tests;
