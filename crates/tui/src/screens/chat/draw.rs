//! The chat transcript: each entry as styled logical lines, wrapped to the width, the newest at the
//! bottom, scrolled by whole rows. The wrapped rows are kept between frames (`layout`, in the
//! view's state).

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;
use unicode_width::UnicodeWidthStr;

use retrace_protocol::{
    ChangeAction, CheckpointItem, Coverage, FileChange, GapReason, ToolCallItem, ToolStatus,
};

use crate::app::App;
use crate::escape;
use crate::screens::chat::layout::ChatLayout;
use crate::screens::chat::{detail, welcome};
use crate::transcript::Entry;
use crate::view::markdown;
use crate::view::wrap::{wrap, wrap_value, Spans};
use crate::view::Theme;

/// The spinner's frames (the working row, a running tool call).
pub(crate) const SPINNER: [&str; 4] = ["⠋", "⠙", "⠹", "⠸"];

/// A tool call's title: a path it ends with keeps its end (the file's name) when cut, anything
/// else its start.
fn shown_title(call: &ToolCallItem) -> String {
    if let Some(target) = &call.target {
        let pathlike = target.contains('/') && !target.contains(char::is_whitespace);
        if let (true, Some(verb)) = (pathlike, call.title.strip_suffix(target.as_str())) {
            return format!("{}{}", escape::short(verb, 40), escape::short_path(target, 100));
        }
    }
    escape::short(&call.title, 140)
}

/// One changed file: `created a.txt +1 −0`, `moved a.txt → b.txt` (a move that changed no line
/// has no counts), `modified c.bin (binary)`.
fn change_line(c: &FileChange) -> String {
    let what = c.action.past_tense();
    let path = match (&c.from, c.action) {
        (Some(from), ChangeAction::Move) => format!(
            "{} → {}",
            escape::short_path(from, 60),
            escape::short_path(&c.path, 60)
        ),
        _ => escape::short_path(&c.path, 100),
    };
    if c.binary {
        format!("{what} {path} (binary)")
    } else if c.is_bare_move() {
        format!("{what} {path}")
    } else {
        format!("{what} {path} +{} −{}", c.added, c.removed)
    }
}

/// What a call's changes add and remove over their text files, `+A −R`, for its title row;
/// `None` when it changed no text file (or only moved files, changing no line).
fn counts(changes: &[FileChange]) -> Option<String> {
    let text: Vec<&FileChange> = changes
        .iter()
        .filter(|c| !c.binary && !c.is_bare_move())
        .collect();
    if text.is_empty() {
        return None;
    }
    let added: u64 = text.iter().map(|c| c.added).sum();
    let removed: u64 = text.iter().map(|c| c.removed).sum();
    Some(format!("+{added} −{removed}"))
}

/// The checkpoint row: the turn, the files captured, and what it cannot restore.
fn checkpoint_line(turn: u64, c: &CheckpointItem, t: Theme) -> (Spans, usize) {
    if !c.retained {
        let text = format!("  · checkpoint · turn {turn} · no longer kept (removed by retention)");
        return (vec![(text, t.dim())], 4);
    }
    let mut text = format!("  ✓ checkpoint saved · turn {turn}");
    if !c.files.is_empty() {
        text.push_str(&format!(
            " · {} recorded",
            retrace_protocol::words::count(c.files.len(), "file")
        ));
    }
    let mut spans = vec![(text, t.dim())];
    if !c.gaps.is_empty() || c.coverage == Coverage::Partial {
        let shell = c.gaps.iter().any(|g| g.reason == GapReason::BashSideEffect);
        let mcp = c.gaps.iter().any(|g| g.reason == GapReason::McpSideEffect);
        let other = c.gaps.iter().filter(|g| !g.reason.is_side_effect()).count();
        let mut parts = Vec::new();
        if shell {
            parts.push("shell not tracked".to_string());
        }
        if mcp {
            parts.push("MCP calls not tracked".to_string());
        }
        if other > 0 {
            parts.push(format!(
                "{} not restorable",
                retrace_protocol::words::count(other, "change")
            ));
        }
        if parts.is_empty() {
            parts.push("partly restorable".to_string());
        }
        spans.push((format!(" · ⚠ {}", parts.join(", ")), t.warn()));
    } else if c.coverage == Coverage::Legacy {
        spans.push((" · older format".to_string(), t.dim()));
    }
    (spans, 4)
}

/// A tool call's row: its title and where it stands, then the files it changes.
fn tool_lines(call: &ToolCallItem, frame: usize, details: bool, t: Theme, out: &mut Vec<(Spans, usize)>) {
    let (mark, style) = match call.status {
        ToolStatus::Running => (SPINNER[frame % SPINNER.len()].to_string(), t.dim()),
        // A shell command that ran but exited with a code other than 0 failed, as a terminal says.
        ToolStatus::Ok if call.exit_code.is_some_and(|c| c != 0) => (
            format!("✗ exit {}", call.exit_code.unwrap_or_default()),
            t.error(),
        ),
        ToolStatus::Ok => ("✓".to_string(), t.ok()),
        ToolStatus::Failed => ("✗ failed".to_string(), t.error()),
        ToolStatus::Denied => ("⊘ denied".to_string(), t.warn()),
        ToolStatus::Cancelled => ("⊘ cancelled".to_string(), t.warn()),
    };
    let mut spans = vec![("  ⏺ ".to_string(), t.dim()), (shown_title(call), t.accent())];
    if let Some(counts) = counts(&call.changes) {
        spans.push((format!(" {counts}"), t.dim()));
    }
    spans.extend([(" ".to_string(), t.text()), (mark, style)]);
    let lines = call.output.lines().count();
    match call.status {
        // An edit's changes are its rows below: what it told the model is no output of its own
        // (the page shows none either).
        _ if details || call.output.is_empty() => {}
        ToolStatus::Ok | ToolStatus::Running if !call.changes.is_empty() => {}
        ToolStatus::Failed | ToolStatus::Denied | ToolStatus::Cancelled => {
            let said = retrace_protocol::words::tool_outcome(call.status, &call.output);
            if !said.is_empty() {
                spans.push((format!(": {}", escape::first_line(&said, 100)), t.dim()));
            }
        }
        ToolStatus::Ok | ToolStatus::Running => match lines {
            0 => {}
            1 => spans.push((" (1 line of output)".to_string(), t.dim())),
            n => spans.push((format!(" ({n} lines of output)"), t.dim())),
        },
    }
    out.push((spans, 6));
    for c in &call.changes {
        out.push((vec![(format!("      {}", change_line(c)), t.text())], 8));
        if details {
            out.extend(detail::change_detail(c, t));
        }
    }
    if details {
        out.extend(detail::output_detail(call, t));
    }
}

/// The logical lines of one entry (escaped, styled), and the indent of their continuation rows.
fn entry_lines(entry: &Entry, details: bool, t: Theme) -> Vec<(Spans, usize)> {
    let mut out = Vec::new();
    match entry {
        Entry::Prompt { text } => {
            out.push((Vec::new(), 0));
            for (i, l) in escape::text(text).split('\n').enumerate() {
                let lead = if i == 0 { "› " } else { "  " };
                out.push((vec![(format!("{lead}{l}"), t.bold())], 2));
            }
        }
        Entry::Checkpoint { turn, checkpoint } => out.push(checkpoint_line(*turn, checkpoint, t)),
        // Drawn as markdown by `entry_rows`.
        Entry::Text { .. } => {}
        Entry::Reasoning { text } if details => {
            for l in escape::text(text.trim()).split('\n') {
                out.push((vec![(format!("  ▾ {l}"), t.dim())], 4));
            }
        }
        Entry::Reasoning { text } => {
            let lines = text.lines().count().max(1);
            let first = escape::first_line(text.trim_start(), 60);
            out.push((
                vec![(format!("  ▸ reasoning ({lines} lines): {first}"), t.dim())],
                4,
            ));
        }
        Entry::Tool { call, frame } => tool_lines(call, *frame, details, t, &mut out),
        Entry::Note { text } | Entry::Notice { text } => {
            // Whole, each line wrapped under the first.
            for (i, l) in escape::text(text).split('\n').enumerate() {
                let lead = if i == 0 { "  ※ " } else { "    " };
                out.push((vec![(format!("{lead}{l}"), t.warn())], 4));
            }
        }
        // Laid out by `info_rows`, in columns.
        Entry::Info { .. } => {}
        Entry::Error { text } => {
            out.push((vec![(format!("  ✗ {}", escape::line(text)), t.error())], 4));
        }
        Entry::Restore { text } => {
            out.push((Vec::new(), 0));
            out.push((vec![(format!("  ⎌ {}", escape::line(text)), t.accent())], 4));
        }
    }
    out
}

/// The rows of one entry at this width: its logical lines, wrapped.
pub(crate) fn entry_rows(entry: &Entry, details: bool, t: Theme, width: usize) -> Vec<Line<'static>> {
    match entry {
        Entry::Text { text } => return markdown::render(text, t, width, 2),
        Entry::Info { rows } => return info_rows(rows, t, width),
        _ => {}
    }
    let mut rows = Vec::new();
    for (spans, indent) in entry_lines(entry, details, t) {
        rows.extend(wrap(&spans, width, indent));
    }
    rows
}

/// Labelled values (`/status`) in two columns: each value wrapped in its own column, a path
/// between its names, words between words, so that every piece of it stays readable; on a screen
/// too narrow for two columns the value goes under its label.
fn info_rows(rows: &[(String, String)], t: Theme, width: usize) -> Vec<Line<'static>> {
    let label = rows
        .iter()
        .map(|(l, _)| escape::line(l).width())
        .max()
        .unwrap_or(0);
    let lead = label + 4;
    let column = width.saturating_sub(lead);
    let mut out = vec![Line::default()];
    for (l, v) in rows {
        let name = escape::line(l);
        let value = vec![(escape::line(v), t.text())];
        if column < 20 {
            out.push(Line::styled(format!("  {name}"), t.dim()));
            for row in wrap_value(&value, width.saturating_sub(4)) {
                out.push(indented(4, row));
            }
            continue;
        }
        for (i, row) in wrap_value(&value, column).into_iter().enumerate() {
            let mut spans = vec![if i == 0 {
                let pad = " ".repeat(label.saturating_sub(name.width()) + 2);
                Span::styled(format!("  {name}{pad}"), t.dim())
            } else {
                Span::raw(" ".repeat(lead))
            }];
            spans.extend(row.spans);
            out.push(Line::from(spans));
        }
    }
    out
}

/// `row` with `n` spaces before it.
fn indented(n: usize, row: Line<'static>) -> Line<'static> {
    let mut spans = vec![Span::raw(" ".repeat(n))];
    spans.extend(row.spans);
    Line::from(spans)
}

/// The row under the transcript while a turn runs.
fn spinner_row(app: &App, t: Theme) -> Option<Line<'static>> {
    if !app.status().running {
        return None;
    }
    let frame = SPINNER[app.status().spinner % SPINNER.len()];
    // What Esc does now: the chat's Esc clears a draft first, then removes a queued prompt, and
    // only then cancels the turn.
    let esc = if !app.input().is_empty() {
        "Esc clears the input"
    } else if app.queued().is_some() {
        "Esc removes the queued prompt"
    } else {
        "Esc to cancel"
    };
    Some(Line::styled(format!("  {frame} working… ({esc})"), t.dim()))
}

/// Every row of the transcript at this width, laid out from nothing (what the kept layout must
/// always equal).
#[cfg(test)]
pub(crate) fn rows(app: &App, width: usize) -> Vec<Line<'static>> {
    let t = Theme::new(app.no_color());
    let mut rows = Vec::new();
    for shown in app.transcript().entries() {
        rows.extend(entry_rows(&shown.entry, app.details(), t, width));
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
    // An empty session shows what Retrace is and how to start (not under another screen, whose
    // box would sit on the panel's).
    if app.transcript().entries().is_empty()
        && !app.status().running
        && *app.mode() == crate::screens::Mode::Chat
    {
        welcome::draw(frame, area, app, Theme::new(app.no_color()));
        return Some(0);
    }
    let (shown, limit) = visible(app, layout, usize::from(area.width), usize::from(area.height));
    frame.render_widget(Paragraph::new(shown), area);
    Some(limit)
}
