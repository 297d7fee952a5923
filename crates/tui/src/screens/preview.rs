//! The preview of a rewind plan before anything is written: the files it writes, deletes or
//! leaves, its conflicts (`s` skips them, `o` overwrites them) and the shell commands whose effects
//! stay. The plan decides what is possible; the preview only shows it and collects the choice. A
//! conversation-only plan is committed at once (it never touches a file).

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::Frame;
use retrace_protocol::{FileAction, OnConflict, PlanBlocker, RewindPlan, RewindScope};

use crate::app::{App, Awaiting};
use crate::effect::Effect;
use crate::escape::{self, human_bytes};
use crate::screens::menu::Menu;
use crate::screens::{ctrl, Mode};
use crate::view::boxed::{boxed, Scroll};
use crate::view::wrap::wrap;
use crate::view::Theme;

/// The preview of a code (or code and conversation) plan, before anything is written.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    /// The plan.
    pub plan: RewindPlan,
    /// The first line shown of the list.
    pub scroll: usize,
    /// A hint after a key that cannot commit (conflicts without a choice, a blocked plan).
    pub hint: Option<String>,
    /// The menu it came from, to go back to.
    pub menu: Option<Box<Menu>>,
}

impl Preview {
    /// Why no choice commits this plan, when one of its halves is unavailable.
    pub fn unavailable(&self) -> Option<&str> {
        self.plan.blockers.iter().find_map(|b| match b {
            PlanBlocker::Unavailable { reason } => Some(reason.as_str()),
            _ => None,
        })
    }

    /// How many files conflict (0: none block the commit).
    pub fn conflicts(&self) -> usize {
        self.plan
            .blockers
            .iter()
            .find_map(|b| match b {
                PlanBlocker::Conflicts { count } => Some(*count),
                _ => None,
            })
            .unwrap_or(0)
    }

    /// Whether committing needs the user's confirmation (untracked changes): the preview is it.
    pub fn needs_confirmation(&self) -> bool {
        self.plan.requires_confirmation
            || self
                .plan
                .blockers
                .iter()
                .any(|b| matches!(b, PlanBlocker::ConfirmationRequired))
    }
}

impl App {
    /// A prepared plan: a code restore is previewed; a conversation rewind commits at once (it
    /// never touches a file), unless the plan says it cannot.
    pub fn on_plan(&mut self, plan: RewindPlan) -> Vec<Effect> {
        let menu = match self.awaiting.take() {
            Some(Awaiting::Plan(menu)) => menu,
            _ => return Vec::new(),
        };
        let preview = Preview {
            plan,
            scroll: 0,
            hint: None,
            menu,
        };
        if preview.plan.scope == RewindScope::Conversation {
            if let Some(reason) = preview.unavailable() {
                self.message = Some(format!(
                    "cannot restore the conversation: {}",
                    escape::line(reason)
                ));
                self.mode = Mode::Chat;
                return Vec::new();
            }
            return self.commit(&preview, OnConflict::Refuse);
        }
        self.mode = Mode::Preview(Box::new(preview));
        Vec::new()
    }

    /// Asks to commit `preview`'s plan with this conflict choice.
    fn commit(&mut self, preview: &Preview, on_conflict: OnConflict) -> Vec<Effect> {
        self.awaiting = Some(Awaiting::Commit {
            turn: preview.plan.turn,
            scope: preview.plan.scope,
        });
        self.mode = Mode::Chat;
        vec![Effect::Commit(retrace_protocol::CommitRewind {
            plan_id: preview.plan.plan_id.clone(),
            confirm: preview.needs_confirmation(),
            on_conflict,
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
            KeyCode::Enter | KeyCode::Char('y') | KeyCode::Char('s') | KeyCode::Char('o') => {
                if let Some(reason) = preview.unavailable() {
                    preview.hint = Some(format!("cannot commit: {}", escape::line(reason)));
                    return Vec::new();
                }
                let conflicts = preview.conflicts();
                let choice = match key.code {
                    KeyCode::Char('s') if conflicts > 0 => OnConflict::Skip,
                    KeyCode::Char('o') if conflicts > 0 => OnConflict::Overwrite,
                    KeyCode::Char('s') | KeyCode::Char('o') => return Vec::new(),
                    _ if conflicts > 0 => {
                        preview.hint = Some(format!(
                            "{conflicts} conflicted: s skips them, o overwrites them (undoable)"
                        ));
                        return Vec::new();
                    }
                    _ => OnConflict::Refuse,
                };
                let preview = preview.clone();
                return self.commit(&preview, choice);
            }
            _ => {}
        }
        Vec::new()
    }
}

/// Draws the preview of a code restore. Returns how far its list can scroll (`None` when
/// nothing was drawn).
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
        RewindScope::Both => "code and conversation",
        RewindScope::Code => "code",
        RewindScope::Conversation => "conversation",
    };
    let title = format!(" Restore {scope} to before turn {} ", plan.turn);
    boxed(frame, area, &title, body, Scroll::Offset(p.scroll), footer, t)
}
