//! How the approval box looks: the command (wrapped, scrolled), what allowing it means, and the
//! three choices; and how much of it shows at a size, which the keys need too.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::Frame;
use unicode_width::UnicodeWidthStr;

use super::{Approval, Approvals, Asks, Choice};
use crate::escape;
use crate::view::boxed::{boxed, Scroll};
use crate::view::wrap::{fit, wrap};
use crate::view::Theme;

/// Draws the approval modal of the oldest waiting shell command.
pub(crate) fn draw(frame: &mut Frame, area: Rect, approvals: &Approvals, t: Theme) {
    let Some(a) = approvals.waiting.first() else {
        return;
    };
    let (body, shown) = approval_layout(a, approvals.choice, area.width, area.height, t);
    let more = approvals.waiting.len() - 1;
    let waiting = if more > 0 {
        format!(" · {more} more waiting")
    } else {
        String::new()
    };
    let below = body.len().saturating_sub(approvals.scroll + shown);
    // The keys line is the footer, so it always shows; y and a wait until the whole command has.
    let footer = match (below, approvals.hint.as_deref()) {
        (0, Some(hint)) => format!("{hint}{waiting}"),
        (0, None) => {
            let p = if a.prefixes.is_empty() { "" } else { " · p prefix" };
            let this = match a.asks() {
                Asks::McpTool => "this tool",
                Asks::McpResources => "this request",
                Asks::Shell => "this command",
            };
            format!("← → choose, Enter · y once · a {this}{p} · n or Esc deny{waiting}")
        }
        (_, Some(hint)) => format!(
            "{hint}: ↓ PgDn, {} more · n or Esc deny",
            retrace_protocol::words::count(below, "line")
        ),
        (_, None) => {
            format!(
                "↓ PgDn: {} more — y/a once you have seen them all · n or Esc deny{waiting}",
                retrace_protocol::words::count(below, "line")
            )
        }
    };
    let title = match a.asks() {
        Asks::McpTool => " Run this MCP tool call? ",
        Asks::McpResources => " Ask this MCP server for its resources? ",
        Asks::Shell => " Run this shell command? ",
    };
    boxed(
        frame,
        area,
        title,
        body,
        Scroll::Told(approvals.scroll), // its keys use approval_layout, not the limit
        &footer,
        t,
    );
}

/// The approval box's lines for `a` (with `choice` highlighted) in an area of `w`×`h` (the
/// rows `view::overlay_height` gives it), and how many of them show at once (the same arithmetic
/// as [`boxed`]), so the keys know whether the whole command has been seen.
pub(crate) fn approval_layout(
    a: &Approval,
    choice: Option<usize>,
    w: u16,
    h: u16,
    t: Theme,
) -> (Vec<Line<'static>>, usize) {
    let box_w = w
        .saturating_sub(4)
        .min(100)
        .min(w.saturating_sub(2))
        .max(1)
        .min(w);
    let width = usize::from(box_w.saturating_sub(4)).max(1);
    let mut body = vec![Line::styled(
        format!("The agent wants to run ({}):", escape::line(&a.tool)),
        t.bold(),
    )];
    for l in escape::text(&a.command).split('\n') {
        body.extend(wrap(&vec![(format!("  {l}"), t.accent())], width, 2));
    }
    if let Some(note) = &a.note {
        body.extend(wrap(
            &vec![(format!("⚠ {}", escape::line(note)), t.warn())],
            width,
            2,
        ));
    }
    let session = match (a.asks(), a.prefixes.first()) {
        (Asks::McpTool, _) => format!(
            "\"For the session\" allows every call of {}, with any input, while this session is open; no other tool.",
            whole_code(&escape::line(&a.tool), width)
        ),
        (Asks::McpResources, _) => {
            "\"For the session\" allows this exact request again, no other.".to_string()
        }
        (Asks::Shell, Some(p)) => format!(
            "\"For the session\": the exact command again, or (p) any simple command starting with {} (never one that chains, pipes or redirects).",
            whole_code(&escape::line(p), width)
        ),
        (Asks::Shell, None) => {
            "\"For the session\" allows this exact command again, no other.".to_string()
        }
    };
    body.extend(wrap(&vec![(session, t.text())], width, 0));
    body.extend(button_rows(&a.choices(), choice, width, t));
    let want_h = (body.len() as u16).saturating_add(3).max(6);
    let box_h = want_h.min(h.saturating_sub(2)).max(1).min(h);
    let shown = usize::from(box_h.saturating_sub(2)).saturating_sub(1);
    (body, shown)
}

/// `words` as a code span (`` `npm test` ``) that rows break around, not inside, when it fits on
/// one row of `width` cells: its spaces are no-break spaces (they show as spaces). A longer one
/// keeps its spaces, to break where it must.
fn whole_code(words: &str, width: usize) -> String {
    let span = format!("`{words}`");
    if UnicodeWidthStr::width(span.as_str()) <= width {
        span.replace(' ', "\u{a0}")
    } else {
        span
    }
}

/// The gap between two buttons on a row.
const GAP: &str = "  ";

/// The choices as buttons `[ label ]`, as many whole buttons on a row as fit in `width` cells,
/// the highlighted one (`choice`) marked: a button is never split across rows, and one wider than
/// a row has its label shortened with "…" (a prefix's command, so that what it allows still says
/// "for the session").
fn button_rows(choices: &[Choice], choice: Option<usize>, width: usize, t: Theme) -> Vec<Line<'static>> {
    let mut rows: Vec<Line<'static>> = Vec::new();
    let mut row: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    for (i, c) in choices.iter().enumerate() {
        let button = format!("[ {} ]", button_label(c, width.saturating_sub(4)));
        let w = button.width();
        if !row.is_empty() && used + GAP.len() + w > width {
            rows.push(Line::from(std::mem::take(&mut row)));
            used = 0;
        }
        if !row.is_empty() {
            row.push(Span::styled(GAP, t.text()));
            used += GAP.len();
        }
        let style = if choice == Some(i) { t.selected() } else { t.text() };
        row.push(Span::styled(button, style));
        used += w;
    }
    if !row.is_empty() {
        rows.push(Line::from(row));
    }
    rows
}

/// A button's label in at most `max` cells: whole when it fits; a prefix's command shortened
/// with "…" (the rest of the label kept) when that is enough; else cut at its end with "…".
fn button_label(c: &Choice, max: usize) -> String {
    if c.label.width() <= max {
        return c.label.clone();
    }
    if let Some(prefix) = &c.prefix {
        // The command and the " …" after it are cut together: the label still ends in "…".
        let words = format!("{} …", escape::line(prefix));
        let rest = super::prefix_label("").width();
        if let Some(room) = max.checked_sub(rest).filter(|r| *r >= 4) {
            return super::prefix_label(&fit(&words, room));
        }
    }
    fit(&c.label, max)
}
