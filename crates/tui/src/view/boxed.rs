//! The box a screen draws over the chat: bordered, centred, with a title, a body scrolled as
//! asked and a footer, and the rows and values the screens put in it.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;
use unicode_width::UnicodeWidthChar;

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

/// How wide a box drawn in `area` asks to be.
fn box_width(area: Rect) -> u16 {
    area.width.saturating_sub(4).min(100)
}

/// The width inside the borders of a box drawn in `area` (what its rows may fill), as [`boxed`]
/// lays it out: rows made this wide, or wrapped to it, show whole.
pub(crate) fn inner_width(area: Rect) -> usize {
    let w = box_width(area)
        .min(area.width.saturating_sub(2))
        .max(1)
        .min(area.width);
    usize::from(w.saturating_sub(2))
}

/// `line` cut to `max` cells, ending in "…" when it was wider.
pub(crate) fn fit_line(line: Line<'static>, max: usize) -> Line<'static> {
    if line.width() <= max {
        return line;
    }
    let style = line.style;
    let alignment = line.alignment;
    let mut spans = Vec::new();
    let mut used = 0;
    for span in line.spans {
        let w = span.width();
        if used + w < max {
            used += w;
            spans.push(span);
            continue;
        }
        // The last span that shows: cut to leave one cell for the ellipsis.
        let mut text = String::new();
        let mut cells = used;
        for c in span.content.chars() {
            let cw = UnicodeWidthChar::width(c).unwrap_or(0);
            if cells + cw + 1 > max {
                break;
            }
            text.push(c);
            cells += cw;
        }
        if max > 0 {
            text.push('…');
        }
        spans.push(Span::styled(text, span.style));
        break;
    }
    let mut out = Line::from(spans).style(style);
    out.alignment = alignment;
    out
}

/// Which part of a long body a box shows.
#[derive(Clone, Copy)]
pub(crate) enum Scroll {
    /// Keep this row visible (a selection).
    Focus(usize),
    /// Start at this row (a scrolled list), never past the last screenful; how far it can go is
    /// returned for the keys (which then stop there).
    Offset(usize),
    /// As [`Scroll::Offset`], for a box whose footer says itself what is below (the bottom
    /// border then does not).
    Told(usize),
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
    let rect = centered(area, box_width(area), want_height(body.len()));
    // The whole rows it stands on are cleared, not only its own cells: nothing of the chat shows
    // beside it (a transcript line, the input box's corners).
    frame.render_widget(Clear, Rect::new(area.x, rect.y, area.width, rect.height));
    let inner_w = usize::from(rect.width.saturating_sub(2));
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.accent())
        .title(Line::styled(fit(title, inner_w), t.bold()));
    // The rows inside the borders, less the footer's.
    let list_h = usize::from(rect.height.saturating_sub(3));
    let (first, limit) = match scroll {
        Scroll::Focus(focus) => ((focus + 1).saturating_sub(list_h), None),
        Scroll::Offset(offset) | Scroll::Told(offset) => {
            let limit = body.len().saturating_sub(list_h);
            (offset.min(limit), Some(limit))
        }
    };
    // Rows cut off above or below are counted on the bottom border: nothing hides without a sign.
    let below = body.len().saturating_sub(first + list_h);
    let told = matches!(scroll, Scroll::Told(_));
    if let Some(more) = more_sign(first, if told { 0 } else { below }) {
        block = block.title_bottom(Line::styled(fit(&more, inner_w), t.dim()).right_aligned());
    }
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    if inner.height == 0 || inner.width == 0 {
        return None;
    }
    // A row too wide ends in "…": nothing is cut off without a sign.
    let mut shown: Vec<Line<'static>> = body
        .into_iter()
        .skip(first)
        .take(list_h)
        .map(|l| fit_line(l, inner_w))
        .collect();
    while shown.len() < list_h {
        shown.push(Line::raw(""));
    }
    shown.push(Line::styled(fit(footer, inner_w), t.dim()));
    frame.render_widget(Paragraph::new(shown), inner);
    limit
}

/// What a box's bottom border says of the rows cut off: `above` rows above the first shown,
/// `below` below the last; `None` when all show.
pub(crate) fn more_sign(above: usize, below: usize) -> Option<String> {
    match (above, below) {
        (0, 0) => None,
        (a, 0) => Some(format!(" ↑ {a} more above ")),
        (0, b) => Some(format!(" ↓ {b} more below ")),
        (a, b) => Some(format!(" ↑ {a} more above · ↓ {b} more below ")),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_too_wide_ends_in_an_ellipsis() {
        let line =
            |parts: &[&str]| Line::from(parts.iter().map(|p| Span::raw(p.to_string())).collect::<Vec<_>>());
        assert_eq!(fit_line(line(&["ab", "cd"]), 4).to_string(), "abcd");
        assert_eq!(fit_line(line(&["ab", "cde"]), 4).to_string(), "abc…");
        assert_eq!(fit_line(line(&["abcd", "e"]), 4).to_string(), "abc…");
        assert_eq!(fit_line(line(&["ab", "漢字"]), 4).to_string(), "ab…");
        assert_eq!(fit_line(line(&["abcdef"]), 1).to_string(), "…");
    }

    #[test]
    fn rows_cut_off_are_counted() {
        assert_eq!(more_sign(0, 0), None);
        assert_eq!(more_sign(0, 3).as_deref(), Some(" ↓ 3 more below "));
        assert_eq!(more_sign(2, 0).as_deref(), Some(" ↑ 2 more above "));
        assert_eq!(
            more_sign(2, 3).as_deref(),
            Some(" ↑ 2 more above · ↓ 3 more below ")
        );
    }
}
