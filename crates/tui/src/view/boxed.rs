//! The box a screen draws over the chat: bordered, centred, with a title, a body scrolled as
//! asked and a footer, and the rows and values the screens put in it.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use crate::escape;
use crate::view::wrap::fit;
use crate::view::Theme;

/// A box centred in `area`: `w`×`h` cells at most, never larger than `area` less a margin.
fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width.saturating_sub(2)).max(1).min(area.width);
    let h = h.min(area.height.saturating_sub(2)).max(1).min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// Which part of a long body a box shows.
#[derive(Clone, Copy)]
pub(crate) enum Scroll {
    /// Keep this row visible (a selection).
    Focus(usize),
    /// Start at this row (a scrolled list), never past the last screenful; how far it can go is
    /// returned for the keys (which then stop there).
    Offset(usize),
}

/// The height a box of `body` rows asks for.
fn want_height(body: usize) -> u16 {
    u16::try_from(body).unwrap_or(u16::MAX).saturating_add(3).max(6)
}

/// How many body rows a box of `body` rows drawn in an area `area_h` rows high shows (as
/// [`boxed`] lays it out), for keys that keep a row in view.
pub(crate) fn shown_rows(area_h: u16, body: usize) -> usize {
    let h = want_height(body).min(area_h.saturating_sub(2)).max(1).min(area_h);
    usize::from(h.saturating_sub(3))
}

/// Draws a bordered box with a title, body lines (scrolled as asked) and a footer. Returns how
/// far an [`Scroll::Offset`] body could scroll (`None` for a focus, or when nothing was drawn).
pub(crate) fn boxed(
    frame: &mut Frame,
    area: Rect,
    title: &str,
    body: Vec<Line<'static>>,
    scroll: Scroll,
    footer: &str,
    t: Theme,
) -> Option<usize> {
    let rect = centered(
        area,
        area.width.saturating_sub(4).min(100),
        want_height(body.len()),
    );
    frame.render_widget(Clear, rect);
    let inner_w = usize::from(rect.width.saturating_sub(2));
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.accent())
        .title(Line::styled(fit(title, inner_w), t.bold()));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    if inner.height == 0 || inner.width == 0 {
        return None;
    }
    let list_h = usize::from(inner.height.saturating_sub(1));
    let (first, limit) = match scroll {
        Scroll::Focus(focus) => ((focus + 1).saturating_sub(list_h), None),
        Scroll::Offset(offset) => {
            let limit = body.len().saturating_sub(list_h);
            (offset.min(limit), Some(limit))
        }
    };
    let mut shown: Vec<Line<'static>> = body.into_iter().skip(first).take(list_h).collect();
    while shown.len() < list_h {
        shown.push(Line::raw(""));
    }
    shown.push(Line::styled(fit(footer, inner_w), t.dim()));
    frame.render_widget(Paragraph::new(shown), inner);
    limit
}

/// A time as the lists show it.
pub(crate) fn clock(time: &str) -> String {
    // RFC 3339 `2026-05-01T10:42:07Z` → `05-01 10:42`; anything else as it is, escaped.
    match (time.get(5..10), time.get(11..16)) {
        (Some(d), Some(h)) if time.as_bytes().get(10) == Some(&b'T') => escape::line(&format!("{d} {h}")),
        _ => escape::first_line(time, 16),
    }
}

/// `1 turn`, `2 turns` (the words every frontend uses).
pub(crate) fn count(n: usize, what: &str) -> String {
    retrace_protocol::words::count(n, what)
}

/// A row of a list: `› ` and reversed when selected, else indented in `style`.
pub(crate) fn row(text: String, selected: bool, t: Theme, style: Style) -> Line<'static> {
    if selected {
        Line::from(Span::styled(format!("› {text}"), t.selected()))
    } else {
        Line::from(Span::styled(format!("  {text}"), style))
    }
}
