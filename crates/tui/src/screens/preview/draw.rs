//! How the preview looks: what the conversation goes back to, the plan's files (each with what a
//! commit does to it and its `+A −R`, the open ones with their diff), the conflicts and the
//! plan's choices about them, the shell commands whose effects stay.

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::Frame;
use retrace_protocol::{FileAction, PlanDiff, RewindPlan, RewindScope, PLAN_DIFF_CAP};

use super::{shortcut, Preview, DIFF_LINES, PROMPT_LINES};
use crate::escape::{self, human_bytes};
use crate::view::boxed::{boxed, Scroll};
use crate::view::diff;
use crate::view::wrap::wrap;
use crate::view::Theme;

/// The width the preview's lines are wrapped at, in a terminal `area_w` cells wide.
pub(super) fn body_width(area_w: u16) -> usize {
    usize::from(area_w.saturating_sub(8)).max(1)
}

/// Draws the preview of a plan. Returns how far its list can scroll (`None` when nothing was
/// drawn).
pub(crate) fn draw(frame: &mut Frame, area: Rect, p: &Preview, t: Theme) -> Option<usize> {
    let plan = &p.plan;
    let (body, _) = body(p, body_width(area.width), t);
    let footer = match (plan.files.is_empty(), plan.choices.is_empty()) {
        (true, true) => "Enter/y confirm · ↑↓ scroll · Esc back",
        (true, false) => "s/o/Tab choose · Enter/y commit · ↑↓ scroll · Esc back",
        (false, true) => "n/p file · d diff · Enter/y confirm · ↑↓ scroll · Esc back",
        (false, false) => "n/p file · d diff · s/o/Tab choose · Enter/y commit · ↑↓ scroll · Esc back",
    };
    let scope = match plan.scope {
        RewindScope::Both => "code and conversation",
        RewindScope::Code => "code",
        RewindScope::Conversation => "conversation",
    };
    let title = format!(" Restore {scope} to before turn {} ", plan.turn);
    boxed(frame, area, &title, body, Scroll::Offset(p.scroll), footer, t)
}

/// The preview's lines, wrapped at `width`, and the row of each file of the plan among them.
pub(super) fn body(p: &Preview, width: usize, t: Theme) -> (Vec<Line<'static>>, Vec<usize>) {
    let plan = &p.plan;
    let mut body: Vec<Line<'static>> = Vec::new();
    let mut rows = Vec::new();
    if let Some(reason) = p.unavailable() {
        body.push(Line::styled(
            format!("cannot commit: {}", escape::line(reason)),
            t.error(),
        ));
    }
    if plan.scope != RewindScope::Code {
        conversation(&mut body, plan, width, t);
    }
    if plan.scope != RewindScope::Conversation {
        rows = files(&mut body, p, width, t);
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
        body.extend(wrap(&vec![(escape::line(hint), t.error())], width, 2));
    }
    (body, rows)
}

/// What the conversation goes back to: the prompt it ends before (which comes back into the
/// input); for a conversation-only plan, that the files stay as they are.
fn conversation(body: &mut Vec<Line<'static>>, plan: &RewindPlan, width: usize, t: Theme) {
    body.extend(wrap(
        &vec![(
            "conversation: back to before this prompt (a new head; this one is kept):".to_string(),
            t.bold(),
        )],
        width,
        2,
    ));
    let prompt = escape::text(&plan.prompt);
    let lines: Vec<&str> = prompt.lines().collect();
    for (i, l) in lines.iter().take(PROMPT_LINES).enumerate() {
        let mark = if i == 0 { "›" } else { " " };
        body.extend(wrap(&vec![(format!("  {mark} {l}"), t.text())], width, 4));
    }
    if lines.len() > PROMPT_LINES {
        body.push(Line::styled(
            format!("    … {} more line(s)", lines.len() - PROMPT_LINES),
            t.dim(),
        ));
    }
    if plan.scope == RewindScope::Conversation {
        body.push(Line::styled("files: untouched", t.bold()));
    }
}

/// The plan's files, each with what a commit with the applying choice does to it and, when open,
/// its diff, then the conflicts and the plan's choices about them. Returns the row of each file.
fn files(body: &mut Vec<Line<'static>>, p: &Preview, width: usize, t: Theme) -> Vec<usize> {
    let plan = &p.plan;
    let mut rows = Vec::with_capacity(plan.files.len());
    body.push(Line::styled(format!("files ({}):", plan.files.len()), t.bold()));
    for (i, f) in plan.files.iter().enumerate() {
        rows.push(body.len());
        let size = f.size.map(human_bytes).unwrap_or_default();
        let action = p.action_of(i, f);
        let d = p.diff_of(i).unwrap_or(&f.diff);
        let counts = counts(action, d);
        let style = match action {
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
        let mark = if i == p.cursor { "›" } else { " " };
        // Wrapped, never clipped: two long paths that differ at the end must both show whole.
        let counts = match size.is_empty() || counts.is_empty() {
            true => counts,
            false => format!("  {counts}"),
        };
        body.extend(wrap(
            &vec![
                (format!("{mark} {:<10}", action.as_str()), style),
                (format!("{}  {size}", escape::line(&f.path)), t.text()),
                (counts, t.dim()),
                (reason, t.text()),
            ],
            width,
            12,
        ));
        if p.open.contains(&i) {
            body.extend(diff_rows(p, i, d, width, t));
        }
    }
    if !plan.conflicts.is_empty() {
        body.push(Line::styled(
            format!(
                "conflicts ({}): changed since Retrace wrote them",
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
    if !plan.choices.is_empty() {
        body.extend(wrap(
            &vec![(
                "what to do with them (/undo takes an overwrite back):".to_string(),
                t.bold(),
            )],
            width,
            2,
        ));
        for c in &plan.choices {
            let picked = c.on_conflict == p.on_conflict();
            let mark = if picked { "(•)" } else { "( )" };
            let key = shortcut(c.on_conflict).unwrap_or(' ');
            let style = if picked { t.bold() } else { t.text() };
            body.extend(wrap(
                &vec![(format!("  {mark} {key}  {}", escape::line(&c.label)), style)],
                width,
                9,
            ));
        }
    }
    rows
}

/// What a file's diff changes, for a file the commit writes or deletes: `+A −R`, `binary`, or
/// `+? −?` for a diff the plan did not compute.
fn counts(action: FileAction, d: &PlanDiff) -> String {
    match action {
        FileAction::Write | FileAction::Delete => {}
        FileAction::Unchanged | FileAction::Skip => return String::new(),
    }
    if d.binary {
        "binary".into()
    } else if d.deferred {
        "+? −?".into()
    } else {
        format!("+{} −{}", d.added, d.removed)
    }
}

/// The rows of file `i`'s open diff `d`, and what is missing from it.
fn diff_rows(p: &Preview, i: usize, d: &PlanDiff, width: usize, t: Theme) -> Vec<Line<'static>> {
    let note = |s: String| wrap(&vec![(s, t.dim())], width, 6);
    let loading = p.loading.contains(&i);
    if d.binary {
        return note("    binary: no diff".into());
    }
    if d.deferred {
        return note(match loading {
            true => "    loading the whole diff…".into(),
            false => "    diff not computed (the plan's budget for diffs ran out) — f loads it".into(),
        });
    }
    if d.text.is_empty() {
        return note("    no change to its text".into());
    }
    let mut out = diff::rows(&d.text, width, DIFF_LINES, t);
    if d.truncated {
        out.extend(note(match loading {
            true => "    loading the whole diff…".into(),
            false => format!(
                "    … the diff was cut at {} — f loads the whole diff",
                human_bytes(PLAN_DIFF_CAP as u64)
            ),
        }));
    }
    out
}
