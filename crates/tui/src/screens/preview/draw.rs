//! How the preview looks: what the conversation goes back to, the plan's files (each with what a
//! commit does to it and its `+A −R`, the open ones with their diff), the conflicts and the
//! plan's choices about them, the shell commands whose effects stay. A single-file revert shows
//! the same, titled by the file and the version it restores.

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::Frame;
use retrace_protocol::{words, FileAction, PlanDiff, RewindPlan, RewindScope, PLAN_DIFF_CAP};

use super::{shortcut, Preview, PROMPT_LINES};
use crate::escape::{self, human_bytes};
use crate::screens::files::{self, body_width, mark, note};
use crate::view::boxed::{boxed, Scroll};
use crate::view::wrap::wrap;
use crate::view::Theme;

/// Draws the preview of a plan. Returns how far its list can scroll (`None` when nothing was
/// drawn).
pub(crate) fn draw(frame: &mut Frame, area: Rect, p: &Preview, t: Theme) -> Option<usize> {
    let plan = &p.plan;
    let (body, _) = body(p, body_width(area.width), t);
    let keys: String = plan
        .choices
        .iter()
        .filter_map(|c| shortcut(c.on_conflict))
        .map(|k| format!("{k}/"))
        .collect();
    // A revert's one file needs no cursor, and its history is where it came from; a rewind's
    // footer drops the scroll keys to make room for the file keys. When nothing would change,
    // Enter closes.
    let enter = if p.changes_nothing() {
        "Enter close"
    } else {
        "Enter commit"
    };
    let footer = match (plan.files.is_empty(), p.revert.is_some(), plan.choices.is_empty()) {
        (true, _, true) => "Enter/y confirm · ↑↓ scroll · Esc back".to_string(),
        (true, _, false) => format!("{keys}Tab choose · {enter} · ↑↓ scroll · Esc back"),
        (false, true, true) if p.changes_nothing() => {
            "d diff · Enter close · ↑↓ scroll · Esc back".to_string()
        }
        (false, true, true) => "d diff · Enter/y confirm · ↑↓ scroll · Esc back".to_string(),
        (false, true, false) => format!("d diff · {keys}Tab choose · {enter} · ↑↓ scroll · Esc back"),
        (false, false, true) if p.changes_nothing() => {
            "n/p file · d diff · h history · Enter close · ↑↓ scroll · Esc back".to_string()
        }
        (false, false, true) => {
            "n/p file · d diff · h history · Enter/y confirm · ↑↓ scroll · Esc back".to_string()
        }
        (false, false, false) => {
            format!("n/p file · d diff · h history · {keys}Tab choose · {enter} · Esc back")
        }
    };
    let title = match (&p.revert, plan.scope) {
        (Some(r), _) => {
            let version = r
                .version
                .map_or_else(|| "before the session".to_string(), |v| format!("v{v}"));
            format!(" Restore {} to {version} ", escape::short_path(&r.path, 60))
        }
        (None, RewindScope::Both) => format!(" Restore code and conversation to before turn {} ", plan.turn),
        (None, RewindScope::Code) => format!(" Restore code to before turn {} ", plan.turn),
        (None, RewindScope::Conversation) => format!(" Restore conversation to before turn {} ", plan.turn),
    };
    boxed(
        frame,
        area,
        &title,
        body,
        Scroll::Offset(p.list.scroll),
        &footer,
        t,
    )
}

/// The preview's lines, wrapped at `width`, and the row of each file of the plan among them.
pub(super) fn body(p: &Preview, width: usize, t: Theme) -> (Vec<Line<'static>>, Vec<usize>) {
    let plan = &p.plan;
    let mut body: Vec<Line<'static>> = Vec::new();
    let mut rows = Vec::new();
    // Why it cannot commit, then why the last key did nothing (when that says more): on top,
    // where the box scrolls back to.
    let cannot = p
        .unavailable()
        .map(|reason| format!("cannot commit: {}", escape::line(reason)));
    let hint = p.hint.as_deref().map(escape::line);
    for line in [cannot.clone(), hint.filter(|h| Some(h) != cannot.as_ref())]
        .into_iter()
        .flatten()
    {
        body.extend(wrap(&vec![(line, t.error())], width, 2));
    }
    // A plan that would change nothing says so before anything else, and what Enter does then.
    if p.changes_nothing() {
        let said = format!(
            "Nothing would change: {} — Enter closes this preview, restoring nothing",
            p.unchanged_files()
        );
        body.extend(wrap(&vec![(said, t.bold())], width, 2));
    }
    if plan.scope != RewindScope::Code {
        conversation(&mut body, plan, width, t);
    }
    if plan.scope != RewindScope::Conversation {
        rows = files(&mut body, p, width, t);
    }
    for g in &plan.gaps {
        // a shell command's gap by its command, any other by its path (as every frontend says it)
        let what = words::gap_subject(&g.reason, g.path.as_deref(), g.detail.as_deref())
            .map(|d| format!(": {}", escape::first_line(d, 60)))
            .unwrap_or_default();
        let text = format!(
            "⚠ turn {}{what} — {}; its effects stay",
            g.turn,
            words::gap(&g.reason)
        );
        body.extend(wrap(&vec![(text, t.warn())], width, 4));
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
            format!("    … {} more", words::count(lines.len() - PROMPT_LINES, "line")),
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
        // Why: a skipped file always (its conflict, or that others conflict), a conflicting one too.
        let reason = match (action, &f.conflict) {
            (FileAction::Skip, c) => Some(words::skipped(c.as_ref(), p.on_conflict())),
            (_, Some(c)) => Some(words::conflict(c)),
            (_, None) => None,
        }
        .map(|why| format!("  ({why})"))
        .unwrap_or_default();
        let mark = mark(i == p.list.cursor);
        // Wrapped, never clipped: two long paths that differ at the end must both show whole.
        let counts = match size.is_empty() || counts.is_empty() {
            true => counts,
            false => format!("  {counts}"),
        };
        body.extend(wrap(
            &vec![
                (format!("{mark} {:<10}", words::file_action(action)), style),
                (format!("{}  {size}", escape::line(&f.path)), t.text()),
                (counts, t.dim()),
                (reason, t.text()),
            ],
            width,
            12,
        ));
        if p.list.open.contains(&i) {
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
                    format!("  ! {}  {}", escape::line(&c.path), words::conflict(c)),
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
    let note = |s: String| note(s, width, t);
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
    let mut out = files::diff_rows(&d.text, width, t);
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
