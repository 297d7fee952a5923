//! The chat transcript: each item as styled logical lines, wrapped to the width, the newest at the
//! bottom, scrolled by whole rows. The wrapped rows are kept between frames (`layout`, in the
//! view's state).

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::app::App;
use crate::escape;
use crate::screens::chat::detail;
use crate::screens::chat::layout::ChatLayout;
use crate::transcript::Item;
use crate::view::wrap::{wrap, Spans};
use crate::view::Theme;

/// A tool's target cut to 100 characters: a path keeps its end (the file's name), a command
/// its start.
fn shown_target(target: &str) -> String {
    if target.contains('/') && !target.contains(char::is_whitespace) {
        escape::short_path(target, 100)
    } else {
        escape::short(target, 100)
    }
}

/// The logical lines of one item (escaped, styled), and the indent of their continuation rows.
fn item_lines(item: &Item, details: bool, t: Theme) -> Vec<(Spans, usize)> {
    let mut out = Vec::new();
    match item {
        Item::User { turn, text, captured } => {
            out.push((Vec::new(), 0));
            for (i, l) in escape::text(text).split('\n').enumerate() {
                let lead = if i == 0 { "› " } else { "  " };
                out.push((vec![(format!("{lead}{l}"), t.bold())], 2));
            }
            let mark = match turn {
                Some(n) if *captured > 0 => {
                    format!("  ✓ checkpoint saved · turn {n} · {captured} file(s) captured")
                }
                Some(n) => format!("  ✓ checkpoint saved · turn {n}"),
                None => "  (summary of earlier messages)".to_string(),
            };
            out.push((vec![(mark, t.dim())], 4));
        }
        Item::Assistant { text } => {
            // One line break at the end draws nothing: a streamed answer cut into pieces after
            // a line break draws as the whole would.
            let text = text.strip_suffix('\n').unwrap_or(text);
            for l in escape::text(text).split('\n') {
                out.push((vec![(format!("  {l}"), t.text())], 2));
            }
        }
        Item::Reasoning { text } if details => {
            for l in escape::text(text.trim()).split('\n') {
                out.push((vec![(format!("  ▾ {l}"), t.dim())], 4));
            }
        }
        Item::Reasoning { text } => {
            let lines = text.lines().count().max(1);
            let first = escape::first_line(text.trim_start(), 60);
            out.push((
                vec![(format!("  ▸ reasoning ({lines} lines): {first}"), t.dim())],
                4,
            ));
        }
        Item::Tool {
            name,
            target,
            ok,
            output_lines,
            arguments,
            output,
            ..
        } => {
            let (mark, style) = match ok {
                None => ("…", t.dim()),
                Some(true) => ("✓", t.ok()),
                Some(false) => ("✗", t.error()),
            };
            let mut spans = vec![
                ("  ⏺ ".to_string(), t.dim()),
                (escape::line(name), t.accent()),
                (format!(" {} ", shown_target(target)), t.text()),
                (mark.to_string(), style),
            ];
            match output_lines {
                _ if details => {}
                0 => {}
                1 => spans.push((" (1 line of output)".to_string(), t.dim())),
                n => spans.push((format!(" ({n} lines of output)"), t.dim())),
            }
            out.push((spans, 6));
            if details {
                out.extend(detail::tool_detail(name, arguments, output, *output_lines, t));
            }
        }
        Item::System { text } => {
            for l in escape::text(text).split('\n') {
                out.push((vec![(format!("  ※ {l}"), t.warn())], 4));
            }
        }
        Item::Error { text } => {
            out.push((vec![(format!("  ✗ {}", escape::line(text)), t.error())], 4));
        }
    }
    out
}

/// The rows of one item at this width: its logical lines, wrapped.
pub(crate) fn item_rows(item: &Item, details: bool, t: Theme, width: usize) -> Vec<Line<'static>> {
    let mut rows = Vec::new();
    for (spans, indent) in item_lines(item, details, t) {
        rows.extend(wrap(&spans, width, indent));
    }
    rows
}

/// The row under the transcript while a turn runs.
fn spinner_row(app: &App, t: Theme) -> Option<Line<'static>> {
    if !app.status().running {
        return None;
    }
    const FRAMES: [&str; 4] = ["⠋", "⠙", "⠹", "⠸"];
    let frame = FRAMES[app.status().spinner % FRAMES.len()];
    Some(Line::styled(
        format!("  {frame} working… (Esc to cancel)"),
        t.dim(),
    ))
}

/// Every row of the transcript at this width, laid out from nothing (what the kept layout must
/// always equal).
#[cfg(test)]
pub(crate) fn rows(app: &App, width: usize) -> Vec<Line<'static>> {
    let t = Theme::new(app.no_color());
    let mut rows = Vec::new();
    for item in app.transcript().items() {
        rows.extend(item_rows(item, app.details(), t, width));
    }
    rows.extend(spinner_row(app, t));
    rows
}

/// The rows `start..end` that show in `height` rows of `total`, scrolled up by `scroll` (clamped).
fn window(total: usize, height: usize, scroll: usize) -> (usize, usize) {
    let scroll = scroll.min(total.saturating_sub(height));
    let end = total - scroll;
    (end.saturating_sub(height), end)
}

/// The rows that show in `height` rows, from the kept `layout` brought up to date (only what
/// changed is wrapped again, only what shows is cloned), and how far the transcript can scroll.
fn visible(app: &App, layout: &mut ChatLayout, width: usize, height: usize) -> (Vec<Line<'static>>, usize) {
    let t = Theme::new(app.no_color());
    layout.update(app, width);
    let spinner = spinner_row(app, t);
    let body = layout.len();
    let total = body + usize::from(spinner.is_some());
    let limit = total.saturating_sub(height);
    let (start, end) = window(total, height, app.scroll());
    let mut shown = layout.rows(start, end);
    if end > body {
        shown.extend(spinner);
    }
    (shown, limit)
}

/// Draws the transcript into `area`, bottom-aligned, scrolled up by the app's scroll. Returns how
/// far the transcript can scroll (`None` when nothing was drawn).
pub(crate) fn draw(frame: &mut Frame, area: Rect, app: &App, layout: &mut ChatLayout) -> Option<usize> {
    if area.width == 0 || area.height == 0 {
        return None;
    }
    let (shown, limit) = visible(app, layout, usize::from(area.width), usize::from(area.height));
    frame.render_widget(Paragraph::new(shown), area);
    Some(limit)
}
