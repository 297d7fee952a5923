//! The screens drawn over the chat: rewind picker, action menu, preview, approval, help, heads.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;
use retrace_protocol::{ApprovalDecision, FileAction};

use crate::app::{App, Mode, ScrollLimit};
use crate::command::COMMANDS;
use crate::escape::{self, human_bytes};
use crate::rewind::{has_shell_gap, Action, Purpose};
use crate::view::theme::Theme;
use crate::view::wrap::{fit, wrap};

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
enum Scroll<'a> {
    /// Keep this row visible (a selection).
    Focus(usize),
    /// Start at this row (a scrolled list), never past the last screenful; how far it can go is
    /// recorded for the keys (which then stop there).
    Offset(usize, &'a ScrollLimit),
}

/// Draws a bordered box with a title, body lines (scrolled as asked) and a footer.
fn boxed(
    frame: &mut Frame,
    area: Rect,
    title: &str,
    body: Vec<Line<'static>>,
    scroll: Scroll<'_>,
    footer: &str,
    t: Theme,
) {
    let want_h = (body.len() as u16).saturating_add(3).max(6);
    let rect = centered(area, area.width.saturating_sub(4).min(100), want_h);
    frame.render_widget(Clear, rect);
    let inner_w = usize::from(rect.width.saturating_sub(2));
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.accent())
        .title(Line::styled(fit(title, inner_w), t.bold()));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let list_h = usize::from(inner.height.saturating_sub(1));
    let first = match scroll {
        Scroll::Focus(focus) => (focus + 1).saturating_sub(list_h),
        Scroll::Offset(offset, recorded) => {
            let limit = body.len().saturating_sub(list_h);
            recorded.set(limit);
            offset.min(limit)
        }
    };
    let mut shown: Vec<Line<'static>> = body.into_iter().skip(first).take(list_h).collect();
    while shown.len() < list_h {
        shown.push(Line::raw(""));
    }
    shown.push(Line::styled(fit(footer, inner_w), t.dim()));
    frame.render_widget(Paragraph::new(shown), inner);
}

fn clock(time: &str) -> String {
    // RFC 3339 `2026-05-01T10:42:07Z` → `05-01 10:42`; anything else as it is, escaped.
    match (time.get(5..10), time.get(11..16)) {
        (Some(d), Some(h)) if time.as_bytes().get(10) == Some(&b'T') => escape::line(&format!("{d} {h}")),
        _ => escape::first_line(time, 16),
    }
}

/// `1 turn`, `2 turns`.
fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn row(text: String, selected: bool, t: Theme, style: Style) -> Line<'static> {
    if selected {
        Line::from(Span::styled(format!("› {text}"), t.selected()))
    } else {
        Line::from(Span::styled(format!("  {text}"), style))
    }
}

/// The rewind picker.
pub fn picker(frame: &mut Frame, area: Rect, app: &App, t: Theme) {
    let Mode::Picker(p) = app.mode() else { return };
    let mut body = Vec::new();
    for (i, e) in p.rows.iter().enumerate() {
        let files = match e.file_count {
            0 => "no files".to_string(),
            n => {
                let names: Vec<String> = e
                    .paths
                    .iter()
                    .take(2)
                    .map(|p| escape::short_path(p, 24))
                    .collect();
                let more = if n > names.len() { ", …" } else { "" };
                format!(
                    "{n} file{}: {}{more}",
                    if n == 1 { "" } else { "s" },
                    names.join(", ")
                )
            }
        };
        let gap = if has_shell_gap(e) { "⚠ shell " } else { "" };
        let text = format!(
            "turn {:<3} {}  {gap}{}  ({files})",
            e.turn,
            clock(&e.time),
            escape::first_line(&e.prompt, 36)
        );
        let style = if has_shell_gap(e) { t.warn() } else { t.text() };
        body.push(row(text, p.selected == i, t, style));
    }
    body.push(row(
        "(current)".to_string(),
        p.selected == p.rows.len(),
        t,
        t.dim(),
    ));
    let title = match &p.purpose {
        Purpose::Rewind => " Rewind to before which turn? ".to_string(),
        Purpose::Fork(None) => " Fork: the new head ends before which turn? ".to_string(),
        Purpose::Fork(Some(name)) => format!(
            " Fork \"{}\": the new head ends before which turn? ",
            escape::first_line(name, 30)
        ),
    };
    boxed(
        frame,
        area,
        &title,
        body,
        Scroll::Focus(p.selected),
        "↑↓ move · Enter choose · Esc close",
        t,
    );
}

/// The action menu.
pub fn menu(frame: &mut Frame, area: Rect, app: &App, t: Theme) {
    let Mode::Menu(m) = app.mode() else { return };
    let mut body = Vec::new();
    for (i, a) in Action::ALL.iter().enumerate() {
        let selected = m.highlighted == i;
        match a.availability(&m.entry) {
            Ok(()) => body.push(row(format!("{}  {}", a.key(), a.label()), selected, t, t.text())),
            Err(reason) => body.push(row(
                format!(
                    "{}  {} — unavailable: {}",
                    a.key(),
                    a.label(),
                    escape::line(&reason)
                ),
                selected,
                t,
                t.dim(),
            )),
        }
    }
    let title = format!(
        " Turn {}: {} ",
        m.entry.turn,
        escape::first_line(&m.entry.prompt, 50)
    );
    boxed(
        frame,
        area,
        &title,
        body,
        Scroll::Focus(m.highlighted),
        "1-6 choose · Enter highlighted · Esc back",
        t,
    );
}

/// The preview of a code restore.
pub fn preview(frame: &mut Frame, area: Rect, app: &App, t: Theme) {
    let Mode::Preview(p) = app.mode() else { return };
    let plan = &p.plan;
    let width = usize::from(area.width.saturating_sub(8)).max(1);
    let mut body: Vec<Line<'static>> = Vec::new();
    if let Some(reason) = p.unavailable() {
        body.push(Line::styled(
            format!("cannot commit: {}", escape::line(reason)),
            t.error(),
        ));
    }
    body.push(Line::styled(format!("files ({}):", plan.files.len()), t.bold()));
    for f in &plan.files {
        let size = f.size.map(human_bytes).unwrap_or_default();
        let style = match f.action {
            FileAction::Write => t.ok(),
            FileAction::Delete => t.error(),
            FileAction::Unchanged => t.dim(),
            FileAction::Skip => t.warn(),
        };
        let reason = f
            .conflict
            .as_ref()
            .map(|c| format!("  ({})", c.reason.as_str()))
            .unwrap_or_default();
        // Wrapped, never clipped: two long paths that differ at the end must both show whole.
        body.extend(wrap(
            &vec![
                (format!("  {:<10}", f.action.as_str()), style),
                (format!("{}  {size}{reason}", escape::line(&f.path)), t.text()),
            ],
            width,
            12,
        ));
    }
    if !plan.conflicts.is_empty() {
        body.push(Line::styled(
            format!(
                "conflicts ({}): s skips them · o overwrites them (undo brings them back)",
                plan.conflicts.len()
            ),
            t.warn(),
        ));
        for c in &plan.conflicts {
            body.extend(wrap(
                &vec![(
                    format!("  ! {}  {}", escape::line(&c.path), c.reason.as_str()),
                    t.warn(),
                )],
                width,
                4,
            ));
        }
    }
    for g in &plan.gaps {
        let what = g
            .detail
            .as_deref()
            .or(g.path.as_deref())
            .map(|d| format!(": {}", escape::first_line(d, 60)))
            .unwrap_or_default();
        let text = format!("⚠ turn {} {}{what} — its effects stay", g.turn, g.reason.as_str());
        body.extend(wrap(&vec![(text, t.warn())], width, 4));
    }
    if let Some(hint) = &p.hint {
        body.push(Line::styled(escape::line(hint), t.error()));
    }
    let footer = if p.conflicts() > 0 {
        "s skip conflicts · o overwrite · ↑↓ scroll · Esc back"
    } else {
        "Enter/y confirm · ↑↓ scroll · Esc back"
    };
    let scope = match plan.scope {
        retrace_protocol::RewindScope::Both => "code and conversation",
        retrace_protocol::RewindScope::Code => "code",
        retrace_protocol::RewindScope::Conversation => "conversation",
    };
    let title = format!(" Restore {scope} to before turn {} ", plan.turn);
    boxed(
        frame,
        area,
        &title,
        body,
        Scroll::Offset(p.scroll, &app.overlay_limit),
        footer,
        t,
    );
}

/// The choices of the approval box, in their order on the screen (←/→ move between them).
pub const APPROVAL_CHOICES: [(ApprovalDecision, &str); 3] = [
    (ApprovalDecision::Once, "Allow once"),
    (ApprovalDecision::Session, "Allow this command for the session"),
    (ApprovalDecision::Deny, "Deny"),
];

/// The approval modal of the oldest waiting shell command.
pub fn approval(frame: &mut Frame, area: Rect, app: &App, t: Theme) {
    let Some(a) = app.approvals().first() else { return };
    let (body, shown) = approval_layout(a, app.approval_choice(), area.width, area.height, t);
    let more = app.approvals().len() - 1;
    let waiting = if more > 0 {
        format!(" · {more} more waiting")
    } else {
        String::new()
    };
    let below = body.len().saturating_sub(app.approval_scroll() + shown);
    // The keys line is the footer, so it always shows; y and a wait until the whole command has.
    let footer = match (below, app.approval_hint()) {
        (0, Some(hint)) => format!("{hint}{waiting}"),
        (0, None) => format!("← → choose, Enter · y once · a session · n or Esc deny{waiting}"),
        (_, Some(hint)) => format!("{hint}: ↓ PgDn, {below} more line(s) · n or Esc deny"),
        (_, None) => {
            format!("↓ PgDn: {below} more line(s) — y/a once you have seen them all · n or Esc deny{waiting}")
        }
    };
    boxed(
        frame,
        area,
        " Run this shell command? ",
        body,
        Scroll::Offset(app.approval_scroll(), &ScrollLimit::default()), // its keys use approval_layout
        &footer,
        t,
    );
}

/// The approval box's lines for `a` (with `choice` highlighted) in a frame of `w`×`h`, and how
/// many of them show at once (the same arithmetic as [`boxed`]), so the keys know whether the
/// whole command has been seen.
pub(crate) fn approval_layout(
    a: &crate::app::Approval,
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
    body.extend(wrap(
        &vec![(
            "⚠ What a command changes in files cannot be rewound.".to_string(),
            t.warn(),
        )],
        width,
        2,
    ));
    body.extend(wrap(
        &vec![(
            "\"For the session\" allows this exact command again, no other.".to_string(),
            t.text(),
        )],
        width,
        0,
    ));
    let mut spans = Vec::new();
    for (i, (_, label)) in APPROVAL_CHOICES.iter().enumerate() {
        let style = if choice == Some(i) { t.selected() } else { t.text() };
        spans.push((format!("[ {label} ]"), style));
        spans.push(("  ".to_string(), t.text()));
    }
    spans.pop();
    body.extend(wrap(&spans, width, 0));
    let want_h = (body.len() as u16).saturating_add(3).max(6);
    let box_h = want_h.min(h.saturating_sub(2)).max(1).min(h);
    let shown = usize::from(box_h.saturating_sub(2)).saturating_sub(1);
    (body, shown)
}

/// Keys and commands.
pub fn help(frame: &mut Frame, area: Rect, app: &App, t: Theme) {
    let Mode::Help(scroll) = app.mode() else { return };
    let mut body: Vec<Line<'static>> = HELP_KEYS
        .iter()
        .map(|(k, d)| {
            Line::from(vec![
                Span::styled(format!("  {k:<22}"), t.accent()),
                Span::raw(*d),
            ])
        })
        .collect();
    body.push(Line::raw(""));
    body.extend(COMMANDS.iter().map(|(c, d)| {
        Line::from(vec![
            Span::styled(format!("  {c:<22}"), t.accent()),
            Span::raw(*d),
        ])
    }));
    boxed(
        frame,
        area,
        " Keys and commands ",
        body,
        Scroll::Offset(*scroll, &app.overlay_limit),
        "↑/↓ scroll · Esc close",
        t,
    );
}

/// The keys `/help` lists.
pub const HELP_KEYS: [(&str, &str); 12] = [
    ("Enter", "send"),
    ("Alt+Enter, Ctrl+J", "new line"),
    ("Up (empty input)", "previous prompt"),
    ("Up Down (lines)", "move between the input's lines"),
    ("Tab", "complete a command"),
    ("Esc", "clear the input / cancel a running turn"),
    ("Esc Esc", "rewind picker"),
    ("Ctrl-C", "cancel a turn / clear; twice to quit"),
    ("Ctrl-D (empty input)", "quit"),
    ("Ctrl-O", "show or hide diffs, outputs, reasoning"),
    ("Shift+Tab", "plan mode on or off (the model only reads)"),
    ("PgUp PgDn, wheel", "scroll the chat (Shift+drag selects)"),
];

/// The heads of the session.
pub fn heads(frame: &mut Frame, area: Rect, app: &App, t: Theme) {
    let Mode::Heads(tree) = app.mode() else { return };
    let body: Vec<Line<'static>> = tree
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let h = &r.head;
            let name = h
                .name
                .as_deref()
                .map(|n| format!(" \"{}\"", escape::line(n)))
                .unwrap_or_default();
            let mut marks = Vec::new();
            if h.selected {
                marks.push("selected");
            }
            if h.retired {
                marks.push("retired");
            }
            let marks = if marks.is_empty() {
                String::new()
            } else {
                format!(" · {}", marks.join(", "))
            };
            let text = format!(
                "{}{}{name} ({}) · {}, {}{marks}",
                r.prefix,
                escape::line(h.id.as_str()),
                h.kind.as_str(),
                count(h.turns, "turn"),
                count(h.message_count, "message"),
            );
            row(
                text,
                tree.cursor == i,
                t,
                if h.retired { t.dim() } else { t.text() },
            )
        })
        .collect();
    boxed(
        frame,
        area,
        " Heads ",
        body,
        Scroll::Focus(tree.cursor),
        "↑/↓ move · Enter switch to it · Esc close",
        t,
    );
}

/// The workspace's sessions.
pub fn sessions(frame: &mut Frame, area: Rect, app: &App, t: Theme) {
    let Mode::Sessions(list) = app.mode() else { return };
    let mut body: Vec<Line<'static>> = list
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let id = e.id.to_string();
            let created = e.created_at.as_deref().map(clock).unwrap_or_default();
            let here = if id == list.current { " · this one" } else { "" };
            let text = format!(
                "{}  {created}  {}, {}{here}",
                escape::line(&id),
                count(e.turns, "turn"),
                count(e.heads, "head")
            );
            row(text, list.cursor == i, t, t.text())
        })
        .collect();
    if body.is_empty() {
        body.push(Line::styled("  no sessions of this workspace", t.dim()));
    }
    boxed(
        frame,
        area,
        " Sessions of this workspace ",
        body,
        Scroll::Focus(list.cursor),
        "↑/↓ move · Enter open it · Esc close",
        t,
    );
}
