//! The preview of a rewind plan before anything is committed, for every restore (code,
//! conversation or both): what the conversation goes back to, the files the plan writes, deletes
//! or leaves, its conflicts with the plan's choices about them (`PlanChoice`: refuse, skip,
//! overwrite, by their labels; `s` and `o` pick skip and overwrite, Tab goes through them) and the
//! shell commands whose effects stay. The plan decides what is possible and what each choice does
//! to each file; the preview only shows it, collects the choice and commits it with Enter.
//!
//! Each file shows what committing it does to its text (`+A −R`, from the plan's diff); `n`/`p`
//! move the cursor between files and `d` (or Space) shows or hides the file's diff, coloured,
//! with line numbers ([`FileCursor`], shared with `/diff`). A diff the plan cut or did not
//! compute offers its whole one: `f` asks the controller for it ([`Effect::LoadPlanDiff`]). `h`
//! opens the history of the file under the cursor, where any of its versions can be restored
//! alone.
//!
//! The same preview shows a single-file revert (a version chosen in a file's history): its plan
//! is one file, and Enter commits it with `commit_revert`, whose only choice about a conflict is
//! whether to overwrite it, so the plan's `skip` (which for one file restores nothing) is not
//! offered there.

use std::collections::{BTreeMap, BTreeSet};

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use retrace_protocol::{
    words, CommitRevert, Error, FileAction, OnConflict, PlanBlocker, PlanChoice, PlanDiff, PlanFile,
    PlanFileDiff, RewindPlan,
};

use crate::app::{App, Awaiting};
use crate::effect::Effect;
use crate::escape;
use crate::screens::files::{body_width, FileCursor};
use crate::screens::{ctrl, Mode};
use crate::view::Theme;
use draw::body;
pub(crate) use draw::draw;

mod draw;

/// At most this many lines of the prompt the conversation goes back to are shown.
const PROMPT_LINES: usize = 6;

/// What a single-file revert restores: the file, and the version of its history (`None`: its
/// state before the session first touched it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revert {
    /// The file, relative to the workspace.
    pub path: String,
    /// The version.
    pub version: Option<u32>,
}

/// The preview of a plan, before anything is committed.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    /// The plan.
    pub plan: RewindPlan,
    /// For a single-file revert, what it restores (its commit is `commit_revert`); `None` for a
    /// rewind.
    pub revert: Option<Revert>,
    /// The file under the cursor, the open diffs and the scroll.
    pub list: FileCursor,
    /// The conflict choice picked among the plan's `choices`: the plan's preselected one until
    /// the user picks another; `None` when nothing conflicts (`refuse` then applies).
    pub picked: Option<OnConflict>,
    /// A hint after a key that did nothing (Enter on conflicts without a choice or on a blocked
    /// plan, a whole diff that could not be had), shown at the top of the box.
    pub hint: Option<String>,
    /// The screen it came from (the action menu, a file's history), to go back to.
    pub back: Option<Box<Mode>>,
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
    /// A preview of `plan` opened on the choice the controller preselects (keep the conflicted
    /// files when that commits, as every frontend does), coming from `back`; for a single-file
    /// revert when `revert` says what it restores (then its file's diff open).
    pub fn new(plan: RewindPlan, revert: Option<Revert>, back: Option<Box<Mode>>) -> Preview {
        let picked = plan.preselected();
        let mut list = FileCursor::default();
        if revert.is_some() {
            // A revert is one file: its diff is what the preview is for.
            list.open.insert(0);
        }
        Preview {
            plan,
            revert,
            list,
            picked,
            hint: None,
            back,
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
        self.list.toggle(self.plan.files.len());
    }

    /// The request for the whole diff of the file under the cursor, when the plan's was cut or
    /// not computed and it is not loaded or being loaded; its diff is shown meanwhile.
    pub fn load_whole(&mut self) -> Option<Effect> {
        let i = self.list.cursor;
        let f = self.plan.files.get(i)?;
        if !f.diff.partial() || self.whole.contains_key(&i) || self.loading.contains(&i) {
            return None;
        }
        self.loading.insert(i);
        self.list.open.insert(i);
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

    /// Whether committing with the applying choice would change nothing (a code restore whose
    /// every file in the workspace is already as it was, or kept): the preview says so at once, and Enter closes
    /// it, committing nothing (the plan decides it: [`RewindPlan::changes_nothing`]).
    pub fn changes_nothing(&self) -> bool {
        self.unavailable().is_none() && self.plan.changes_nothing(self.on_conflict())
    }

    /// Why nothing would change, when [`Preview::changes_nothing`]: every file already as it
    /// was, or kept.
    pub fn unchanged_files(&self) -> &'static str {
        let actions = self.plan.file_actions(self.on_conflict());
        words::unchanged_files(actions.contains(&FileAction::Skip), !self.plan.gaps.is_empty())
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
        p.list.scroll = 0;
    }

    /// Moves the preview's file cursor by one (back: up), keeping its row in view.
    fn move_cursor(&mut self, back: bool) {
        let (w, h) = (self.viewport.0, crate::view::overlay_height(self, self.viewport));
        let Mode::Preview(p) = &mut self.mode else {
            return;
        };
        p.list.step(back, p.plan.files.len());
        let (lines, rows) = body(p, body_width(w), Theme::new(true));
        p.list.follow(&rows, lines.len(), h);
    }

    /// A prepared plan (a rewind's or a single-file revert's): previewed, whatever its scope;
    /// nothing is committed before Enter.
    pub fn on_plan(&mut self, plan: RewindPlan) -> Vec<Effect> {
        let (back, revert) = match self.awaiting.take() {
            Some(Awaiting::Plan { back, revert }) => (back, revert),
            _ => return Vec::new(),
        };
        self.mode = Mode::Preview(Box::new(Preview::new(plan, revert, back)));
        Vec::new()
    }

    /// Asks to commit `preview`'s plan with its picked choice: a rewind with `commit_rewind`, a
    /// single-file revert with `commit_revert` (overwriting only when that was picked).
    fn commit(&mut self, preview: &Preview) -> Vec<Effect> {
        self.mode = Mode::Chat;
        if let Some(revert) = &preview.revert {
            self.awaiting = Some(Awaiting::Revert(revert.clone()));
            return vec![Effect::CommitRevert(CommitRevert {
                plan_id: preview.plan.plan_id.clone(),
                overwrite: preview.on_conflict() == OnConflict::Overwrite,
                confirm: preview.needs_confirmation(),
            })];
        }
        self.awaiting = Some(Awaiting::Commit {
            turn: preview.plan.turn,
            scope: preview.plan.scope,
        });
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
        if preview.list.scroll_key(key.code, limit) {
            return Vec::new();
        }
        match key.code {
            KeyCode::Esc => {
                self.mode = preview.back.take().map_or(Mode::Chat, |back| *back);
            }
            _ if ctrl(&key, 'c') => self.mode = Mode::Chat,
            KeyCode::Char('n') => self.move_cursor(false),
            KeyCode::Char('p') => self.move_cursor(true),
            KeyCode::Char('d') | KeyCode::Char(' ') => preview.toggle_diff(),
            KeyCode::Char('f') => return preview.load_whole().into_iter().collect(),
            KeyCode::Char('h') if preview.revert.is_none() => {
                let Some(path) = preview
                    .plan
                    .files
                    .get(preview.list.cursor)
                    .map(|f| f.path.clone())
                else {
                    return Vec::new();
                };
                let back = Box::new(self.mode.clone());
                return self.open_history(path, Some(back));
            }
            KeyCode::Char('s') => preview.pick(OnConflict::Skip),
            KeyCode::Char('o') => preview.pick(OnConflict::Overwrite),
            KeyCode::Tab => preview.cycle(false),
            KeyCode::BackTab => preview.cycle(true),
            KeyCode::Enter | KeyCode::Char('y') => {
                if preview.changes_nothing() {
                    self.message = Some(format!("nothing was restored: {}", preview.unchanged_files()));
                    self.mode = Mode::Chat;
                    return Vec::new();
                }
                if let Some(hint) = preview.refusal() {
                    preview.hint = Some(hint);
                    preview.list.scroll = 0;
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
