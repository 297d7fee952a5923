//! The preview of a rewind plan before anything is committed, for every restore (code,
//! conversation or both): what the conversation goes back to, the files the plan writes, deletes
//! or leaves, its conflicts with the plan's choices about them (`PlanChoice`: refuse, skip,
//! overwrite, by their labels; `s` and `o` pick skip and overwrite, Tab goes through them) and the
//! shell commands whose effects stay. The plan decides what is possible and what each choice does
//! to each file; the preview only shows it, collects the choice and commits it with Enter.
//!
//! Each file shows what committing it does to its text (`+A −R`, from the plan's diff); `n`/`p`
//! move the cursor between files and `d` (or Space) shows or hides the file's diff, coloured,
//! with line numbers. A diff the plan cut or did not compute offers its whole one: `f` asks the
//! controller for it ([`Effect::LoadPlanDiff`]).

use std::collections::{BTreeMap, BTreeSet};

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::Frame;
use retrace_protocol::{
    Error, FileAction, OnConflict, PlanBlocker, PlanChoice, PlanDiff, PlanFile, PlanFileDiff, RewindPlan,
    RewindScope, PLAN_DIFF_CAP,
};

use crate::app::{App, Awaiting};
use crate::effect::Effect;
use crate::escape::{self, human_bytes};
use crate::screens::menu::Menu;
use crate::screens::{ctrl, Mode};
use crate::view::boxed::{boxed, shown_rows, Scroll};
use crate::view::diff;
use crate::view::wrap::wrap;
use crate::view::Theme;

/// At most this many lines of the prompt the conversation goes back to are shown.
const PROMPT_LINES: usize = 6;

/// At most this many lines of one file's diff are shown.
pub const DIFF_LINES: usize = 10_000;

/// The preview of a plan, before anything is committed.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    /// The plan.
    pub plan: RewindPlan,
    /// The first line shown of the list.
    pub scroll: usize,
    /// The conflict choice picked among the plan's `choices`; `None` before a pick (the plan's
    /// `refuse` then applies).
    pub picked: Option<OnConflict>,
    /// A hint after a key that cannot commit (conflicts without a choice, a blocked plan).
    pub hint: Option<String>,
    /// The menu it came from, to go back to.
    pub menu: Option<Box<Menu>>,
    /// The file under the cursor (an index into the plan's files).
    pub cursor: usize,
    /// The files whose diff is shown.
    pub open: BTreeSet<usize>,
    /// The whole diffs loaded for files whose plan diff was cut or not computed.
    pub whole: BTreeMap<usize, PlanDiff>,
    /// The files whose whole diff is being loaded.
    pub loading: BTreeSet<usize>,
}

/// The key that picks a conflict choice, for the two that have one.
pub fn shortcut(choice: OnConflict) -> Option<char> {
    match choice {
        OnConflict::Refuse => None,
        OnConflict::Skip => Some('s'),
        OnConflict::Overwrite => Some('o'),
    }
}

impl Preview {
    /// A preview of `plan`, nothing picked, coming from `menu`.
    pub fn new(plan: RewindPlan, menu: Option<Box<Menu>>) -> Preview {
        Preview {
            plan,
            scroll: 0,
            picked: None,
            hint: None,
            menu,
            cursor: 0,
            open: BTreeSet::new(),
            whole: BTreeMap::new(),
            loading: BTreeSet::new(),
        }
    }

    /// The diff shown for the plan's `index`th file: its whole one once loaded, else the plan's.
    pub fn diff_of(&self, index: usize) -> Option<&PlanDiff> {
        self.whole
            .get(&index)
            .or_else(|| self.plan.files.get(index).map(|f| &f.diff))
    }

    /// Shows or hides the diff of the file under the cursor.
    pub fn toggle_diff(&mut self) {
        if self.cursor < self.plan.files.len() && !self.open.remove(&self.cursor) {
            self.open.insert(self.cursor);
        }
    }

    /// The request for the whole diff of the file under the cursor, when the plan's was cut or
    /// not computed and it is not loaded or being loaded; its diff is shown meanwhile.
    pub fn load_whole(&mut self) -> Option<Effect> {
        let i = self.cursor;
        let f = self.plan.files.get(i)?;
        if !f.diff.partial() || self.whole.contains_key(&i) || self.loading.contains(&i) {
            return None;
        }
        self.loading.insert(i);
        self.open.insert(i);
        Some(Effect::LoadPlanDiff {
            plan_id: self.plan.plan_id.clone(),
            path: f.path.clone(),
        })
    }

    /// Why no choice commits this plan, when one of its halves is unavailable.
    pub fn unavailable(&self) -> Option<&str> {
        self.plan.blockers.iter().find_map(|b| match b {
            PlanBlocker::Unavailable { reason } => Some(reason.as_str()),
            _ => None,
        })
    }

    /// Whether committing needs the user's confirmation (untracked changes): the preview is it.
    pub fn needs_confirmation(&self) -> bool {
        self.plan
            .blockers
            .iter()
            .any(|b| matches!(b, PlanBlocker::ConfirmationRequired))
    }

    /// The `on_conflict` a commit sends: the picked choice, `refuse` before a pick.
    pub fn on_conflict(&self) -> OnConflict {
        self.picked.unwrap_or(OnConflict::Refuse)
    }

    /// The plan's choice that applies now (`None` when nothing conflicts: the plan has none).
    pub fn choice(&self) -> Option<&PlanChoice> {
        let on_conflict = self.on_conflict();
        self.plan.choices.iter().find(|c| c.on_conflict == on_conflict)
    }

    /// What a commit now does to the plan's `index`th file: as the applying choice says, else
    /// as the plan says.
    pub fn action_of(&self, index: usize, file: &PlanFile) -> FileAction {
        let Some(choice) = self.choice() else {
            return file.action;
        };
        choice
            .files
            .get(index)
            .filter(|c| c.path == file.path)
            .or_else(|| choice.files.iter().find(|c| c.path == file.path))
            .map_or(file.action, |c| c.action)
    }

    /// Picks the plan's choice `on_conflict`, when it offers it.
    pub fn pick(&mut self, on_conflict: OnConflict) {
        if self.plan.choices.iter().any(|c| c.on_conflict == on_conflict) {
            self.picked = Some(on_conflict);
            self.hint = None;
        }
    }

    /// Picks the plan's next choice (the previous one when `back`), round.
    pub fn cycle(&mut self, back: bool) {
        let n = self.plan.choices.len();
        if n == 0 {
            return;
        }
        let at = self
            .plan
            .choices
            .iter()
            .position(|c| c.on_conflict == self.on_conflict())
            .unwrap_or(0);
        let next = if back { (at + n - 1) % n } else { (at + 1) % n };
        let on_conflict = self.plan.choices[next].on_conflict;
        self.pick(on_conflict);
    }

    /// Why Enter does not commit now, if it does not: a half is unavailable, or the applying
    /// choice commits nothing (files conflict and none of the others was picked).
    fn refusal(&self) -> Option<String> {
        if let Some(reason) = self.unavailable() {
            return Some(format!("cannot commit: {}", escape::line(reason)));
        }
        let choice = self.choice().filter(|c| !c.commits)?;
        let others: Vec<String> = self
            .plan
            .choices
            .iter()
            .filter(|c| c.commits)
            .map(|c| shortcut(c.on_conflict).map_or_else(|| escape::line(&c.label), String::from))
            .collect();
        let label = escape::line(&choice.label);
        Some(if others.is_empty() {
            format!("{label}: no choice commits this plan")
        } else {
            format!("{label}: pick {} (or Tab), then Enter", others.join(" or "))
        })
    }
}

impl App {
    /// The whole diff of a file of the previewed plan `plan_id`, asked for with `f`.
    pub fn on_plan_diff(&mut self, plan_id: &str, d: PlanFileDiff) {
        let Mode::Preview(p) = &mut self.mode else {
            return;
        };
        if p.plan.plan_id != plan_id {
            return;
        }
        let files = &p.plan.files;
        let at: Vec<usize> = p
            .loading
            .iter()
            .copied()
            .filter(|&i| files.get(i).is_some_and(|f| f.path == d.path))
            .collect();
        for i in at {
            p.loading.remove(&i);
            p.whole.insert(i, d.diff.clone());
        }
    }

    /// Loading the whole diff of `path` of the previewed plan `plan_id` failed: the preview says
    /// why (a plan gone stale says to preview again).
    pub fn on_plan_diff_failed(&mut self, plan_id: &str, path: &str, err: &Error) {
        let Mode::Preview(p) = &mut self.mode else {
            return;
        };
        if p.plan.plan_id != plan_id {
            return;
        }
        let files = &p.plan.files;
        p.loading.retain(|&i| files.get(i).is_none_or(|f| f.path != path));
        p.hint = Some(format!(
            "the whole diff of {} cannot be had: {}",
            escape::line(path),
            escape::line(&err.message)
        ));
    }

    /// Moves the preview's file cursor by one (back: up), keeping its row in view.
    fn move_cursor(&mut self, back: bool) {
        let (w, h) = self.viewport;
        let Mode::Preview(p) = &mut self.mode else {
            return;
        };
        let n = p.plan.files.len();
        if n == 0 {
            return;
        }
        p.cursor = match back {
            true => p.cursor.saturating_sub(1),
            false => (p.cursor + 1).min(n - 1),
        };
        let (lines, rows) = body(p, body_width(w), Theme::new(true));
        let Some(&row) = rows.get(p.cursor) else {
            return;
        };
        let shown = shown_rows(h, lines.len()).max(1);
        if row < p.scroll {
            p.scroll = row;
        } else if row >= p.scroll + shown {
            p.scroll = row + 1 - shown;
        }
    }

    /// A prepared plan: previewed, whatever its scope; nothing is committed before Enter.
    pub fn on_plan(&mut self, plan: RewindPlan) -> Vec<Effect> {
        let menu = match self.awaiting.take() {
            Some(Awaiting::Plan(menu)) => menu,
            _ => return Vec::new(),
        };
        self.mode = Mode::Preview(Box::new(Preview::new(plan, menu)));
        Vec::new()
    }

    /// Asks to commit `preview`'s plan with its picked choice.
    fn commit(&mut self, preview: &Preview) -> Vec<Effect> {
        self.awaiting = Some(Awaiting::Commit {
            turn: preview.plan.turn,
            scope: preview.plan.scope,
        });
        self.mode = Mode::Chat;
        vec![Effect::Commit(retrace_protocol::CommitRewind {
            plan_id: preview.plan.plan_id.clone(),
            confirm: preview.needs_confirmation(),
            on_conflict: preview.on_conflict(),
            in_place: true,
        })]
    }

    pub(crate) fn preview_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let limit = self.overlay_limit;
        let Mode::Preview(preview) = &mut self.mode else {
            return Vec::new();
        };
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => preview.scroll = preview.scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => preview.scroll = (preview.scroll + 1).min(limit),
            KeyCode::PageUp => preview.scroll = preview.scroll.saturating_sub(10),
            KeyCode::PageDown => preview.scroll = (preview.scroll + 10).min(limit),
            KeyCode::Esc => {
                self.mode = match preview.menu.take() {
                    Some(menu) => Mode::Menu(menu),
                    None => Mode::Chat,
                };
            }
            _ if ctrl(&key, 'c') => self.mode = Mode::Chat,
            KeyCode::Char('n') => self.move_cursor(false),
            KeyCode::Char('p') => self.move_cursor(true),
            KeyCode::Char('d') | KeyCode::Char(' ') => preview.toggle_diff(),
            KeyCode::Char('f') => return preview.load_whole().into_iter().collect(),
            KeyCode::Char('s') => preview.pick(OnConflict::Skip),
            KeyCode::Char('o') => preview.pick(OnConflict::Overwrite),
            KeyCode::Tab => preview.cycle(false),
            KeyCode::BackTab => preview.cycle(true),
            KeyCode::Enter | KeyCode::Char('y') => {
                if let Some(hint) = preview.refusal() {
                    preview.hint = Some(hint);
                    return Vec::new();
                }
                let preview = preview.clone();
                return self.commit(&preview);
            }
            _ => {}
        }
        Vec::new()
    }
}

/// The width the preview's lines are wrapped at, in a terminal `area_w` cells wide.
fn body_width(area_w: u16) -> usize {
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
fn body(p: &Preview, width: usize, t: Theme) -> (Vec<Line<'static>>, Vec<usize>) {
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
