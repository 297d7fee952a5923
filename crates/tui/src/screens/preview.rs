//! The preview of a rewind plan before anything is committed, for every restore (code,
//! conversation or both): what the conversation goes back to, the files the plan writes, deletes
//! or leaves, its conflicts with the plan's choices about them (`PlanChoice`: refuse, skip,
//! overwrite, by their labels; `s` and `o` pick skip and overwrite, Tab goes through them) and the
//! shell commands whose effects stay. The plan decides what is possible and what each choice does
//! to each file; the preview only shows it, collects the choice and commits it with Enter.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::Frame;
use retrace_protocol::{FileAction, OnConflict, PlanBlocker, PlanChoice, PlanFile, RewindPlan, RewindScope};

use crate::app::{App, Awaiting};
use crate::effect::Effect;
use crate::escape::{self, human_bytes};
use crate::screens::menu::Menu;
use crate::screens::{ctrl, Mode};
use crate::view::boxed::{boxed, Scroll};
use crate::view::wrap::wrap;
use crate::view::Theme;

/// At most this many lines of the prompt the conversation goes back to are shown.
const PROMPT_LINES: usize = 6;

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
        }
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

/// Draws the preview of a plan. Returns how far its list can scroll (`None` when nothing was
/// drawn).
pub(crate) fn draw(frame: &mut Frame, area: Rect, p: &Preview, t: Theme) -> Option<usize> {
    let plan = &p.plan;
    let width = usize::from(area.width.saturating_sub(8)).max(1);
    let mut body: Vec<Line<'static>> = Vec::new();
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
        files(&mut body, p, width, t);
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
    let footer = if plan.choices.is_empty() {
        "Enter/y confirm · ↑↓ scroll · Esc back"
    } else {
        "s/o/Tab choose · Enter/y commit · ↑↓ scroll · Esc back"
    };
    let scope = match plan.scope {
        RewindScope::Both => "code and conversation",
        RewindScope::Code => "code",
        RewindScope::Conversation => "conversation",
    };
    let title = format!(" Restore {scope} to before turn {} ", plan.turn);
    boxed(frame, area, &title, body, Scroll::Offset(p.scroll), footer, t)
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

/// The plan's files, each with what a commit with the applying choice does to it, then the
/// conflicts and the plan's choices about them.
fn files(body: &mut Vec<Line<'static>>, p: &Preview, width: usize, t: Theme) {
    let plan = &p.plan;
    body.push(Line::styled(format!("files ({}):", plan.files.len()), t.bold()));
    for (i, f) in plan.files.iter().enumerate() {
        let size = f.size.map(human_bytes).unwrap_or_default();
        let action = p.action_of(i, f);
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
        // Wrapped, never clipped: two long paths that differ at the end must both show whole.
        body.extend(wrap(
            &vec![
                (format!("  {:<10}", action.as_str()), style),
                (format!("{}  {size}{reason}", escape::line(&f.path)), t.text()),
            ],
            width,
            12,
        ));
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
}
