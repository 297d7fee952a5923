//! How `/diff` looks: the turn's prompt and coverage, its files (each with what happened to it
//! and its `+A −R`, the open ones with their diff), its commands and its gaps.

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::Frame;
use retrace_protocol::{ChangeAction, FileVersion, TurnCommand, TurnFile, RESULTS_DIFF_CAP};

use super::TurnDiff;
use crate::escape::{self, human_bytes};
use crate::screens::files::{self, body_width, mark, note};
use crate::view::boxed::{boxed, Scroll};
use crate::view::wrap::wrap;
use crate::view::Theme;

/// At most this many lines of the turn's prompt are shown.
const PROMPT_LINES: usize = 4;

/// Draws a turn's results. Returns how far they can scroll (`None` when nothing was drawn).
pub(crate) fn draw(frame: &mut Frame, area: Rect, d: &TurnDiff, t: Theme) -> Option<usize> {
    let (body, _) = body(d, body_width(area.width), t);
    let footer = match d.results.files.is_empty() {
        true => "↑↓ scroll · Esc close",
        false => "n/p file · d diff · h history · ↑↓ scroll · Esc close",
    };
    let title = format!(" What turn {} changed ", d.results.turn);
    boxed(
        frame,
        area,
        &title,
        body,
        Scroll::Offset(d.list.scroll),
        footer,
        t,
    )
}

/// The results' lines, wrapped at `width`, and the row of each file among them.
pub(super) fn body(d: &TurnDiff, width: usize, t: Theme) -> (Vec<Line<'static>>, Vec<usize>) {
    let r = &d.results;
    let mut body: Vec<Line<'static>> = Vec::new();
    let prompt = escape::text(&r.prompt);
    let lines: Vec<&str> = prompt.lines().collect();
    for (i, l) in lines.iter().take(PROMPT_LINES).enumerate() {
        let lead = if i == 0 { "›" } else { " " };
        body.extend(wrap(&vec![(format!("{lead} {l}"), t.bold())], width, 2));
    }
    if lines.len() > PROMPT_LINES {
        body.push(Line::styled(
            format!(
                "  … {} more",
                retrace_protocol::words::count(lines.len() - PROMPT_LINES, "line")
            ),
            t.dim(),
        ));
    }
    body.push(Line::styled(
        format!("coverage: {}", r.coverage.as_str()),
        t.dim(),
    ));
    let mut rows = Vec::with_capacity(r.files.len());
    if r.files.is_empty() {
        body.push(Line::styled("no file changed", t.bold()));
    } else {
        body.push(Line::styled(format!("files ({}):", r.files.len()), t.bold()));
    }
    for (i, f) in r.files.iter().enumerate() {
        rows.push(body.len());
        let (what, style) = what(f, t);
        body.extend(wrap(
            &vec![
                (format!("{} {}", mark(i == d.list.cursor), file_line(f)), t.text()),
                (what, style),
            ],
            width,
            4,
        ));
        if d.list.open.contains(&i) {
            body.extend(diff_rows(f, width, t));
        }
    }
    if !r.commands.is_empty() {
        body.push(Line::styled(
            format!("commands ({}):", r.commands.len()),
            t.bold(),
        ));
        for c in &r.commands {
            body.extend(command_line(c, width, t));
        }
    }
    if !r.gaps.is_empty() {
        body.push(Line::styled(
            format!("not captured ({}):", r.gaps.len()),
            t.warn(),
        ));
        for g in &r.gaps {
            let what = g
                .path
                .as_deref()
                .map(escape::line)
                .or_else(|| g.detail.as_deref().map(|d| escape::first_line(d, 100)))
                .map(|w| format!(": {w}"))
                .unwrap_or_default();
            let text = format!("  ⚠ {}{what}", escape::line(g.reason.as_str()));
            body.extend(wrap(&vec![(text, t.warn())], width, 4));
        }
    }
    (body, rows)
}

/// `modified src/lib.rs`, `moved a.txt → b.txt`.
fn file_line(f: &TurnFile) -> String {
    let verb = f.action.past_tense();
    match (&f.from, f.action) {
        (Some(from), ChangeAction::Move) => {
            format!("{verb} {} → {}", escape::line(from), escape::line(&f.path))
        }
        _ => format!("{verb} {}", escape::line(&f.path)),
    }
}

/// What the file's change amounts to, after its name: `+A −R`, the sizes of a binary file, or
/// why the change cannot be shown.
fn what(f: &TurnFile, t: Theme) -> (String, ratatui::style::Style) {
    if let Some(why) = &f.unknown {
        return (format!("  (no diff: {})", escape::line(why)), t.warn());
    }
    if f.binary {
        let size = |v: &Option<FileVersion>| {
            v.as_ref()
                .and_then(|v| v.size)
                .map_or_else(|| "absent".to_string(), human_bytes)
        };
        return (
            format!("  binary, {} → {}", size(&f.before), size(&f.after)),
            t.dim(),
        );
    }
    if f.is_bare_move() {
        return (String::new(), t.dim());
    }
    (format!(" +{} −{}", f.added, f.removed), t.dim())
}

/// The rows of an open file: its diff, or why it has none, and what is missing from it.
fn diff_rows(f: &TurnFile, width: usize, t: Theme) -> Vec<Line<'static>> {
    if let Some(why) = &f.unknown {
        return note(format!("    no diff: {}", escape::line(why)), width, t);
    }
    if f.binary {
        return note("    binary: no diff".into(), width, t);
    }
    let mut out = files::diff_rows(&f.diff, width, t);
    if f.diff_truncated {
        out.extend(note(
            format!(
                "    … the diff was cut at {}; the counts are whole",
                human_bytes(RESULTS_DIFF_CAP as u64)
            ),
            width,
            t,
        ));
    }
    out
}

/// `$ cargo test → exit 0 · 1.2 s`; a command that did not exit says how it ended.
fn command_line(c: &TurnCommand, width: usize, t: Theme) -> Vec<Line<'static>> {
    let (how, style) = match c.exit_code {
        Some(0) => ("exit 0".to_string(), t.ok()),
        Some(code) => (format!("exit {code}"), t.error()),
        None => (c.status.as_str().to_string(), t.warn()),
    };
    let took = c
        .duration_ms
        .map(|ms| format!(" · {}", duration(ms)))
        .unwrap_or_default();
    wrap(
        &vec![
            (format!("  $ {} → ", escape::line(&c.command)), t.text()),
            (how, style),
            (took, t.dim()),
        ],
        width,
        4,
    )
}

/// `850 ms`, `1.2 s`.
pub fn duration(ms: u64) -> String {
    match ms {
        0..=999 => format!("{ms} ms"),
        _ => format!("{:.1} s", ms as f64 / 1000.0),
    }
}
