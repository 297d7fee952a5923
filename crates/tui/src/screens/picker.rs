//! The rewind picker: the turns visible on this head, oldest first, each with its time, prompt,
//! `+A −R` (when the listing counts them) and files, then "(current)". Esc Esc or
//! `/rewind` opens it for a rewind (a turn opens the action menu), `/fork [name]` for a fork (a
//! turn forks a new head that ends just before it), `/fork --worktree DIR` for a fork into a new
//! workspace.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::Frame;
use retrace_protocol::{ActionKind, CheckpointEntry, CheckpointListing, ForkRequest, GapReason};

use crate::app::{App, Awaiting};
use crate::effect::Effect;
use crate::escape;
use crate::screens::menu::{unavailable_reason, Menu};
use crate::screens::{ctrl, Mode};
use crate::view::boxed::{boxed, clock, row, Scroll};
use crate::view::Theme;

/// The rewind picker: the turns visible on this head, oldest first, then "(current)".
#[derive(Debug, Clone, PartialEq)]
pub struct Picker {
    /// The turns shown.
    pub rows: Vec<CheckpointEntry>,
    /// The selected row; `rows.len()` is "(current)".
    pub selected: usize,
    /// What choosing a turn does.
    pub purpose: Purpose,
}

/// What the picker was opened for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Purpose {
    /// Esc Esc or `/rewind`: a turn opens the action menu.
    Rewind,
    /// `/fork [name]`: a turn forks a new head that ends just before it, with this name.
    Fork(Option<String>),
    /// `/fork --worktree DIR`: a turn forks into a new workspace in this directory.
    ForkWorkspace(String),
}

impl Picker {
    /// A picker over the visible turns of `listing`, with "(current)" selected.
    pub fn new(listing: &CheckpointListing, purpose: Purpose) -> Picker {
        let rows: Vec<CheckpointEntry> = listing
            .entries
            .iter()
            .filter(|e| e.visible != Some(false))
            .cloned()
            .collect();
        let selected = rows.len();
        Picker {
            rows,
            selected,
            purpose,
        }
    }

    /// Moves the selection up (towards older turns).
    pub fn up(&mut self) {
        self.selected = self.selected.saturating_sub(1);
    }

    /// Moves the selection down (towards "(current)").
    pub fn down(&mut self) {
        self.selected = (self.selected + 1).min(self.rows.len());
    }

    /// The selected turn; `None` on "(current)".
    pub fn chosen(&self) -> Option<&CheckpointEntry> {
        self.rows.get(self.selected)
    }
}

impl App {
    /// The checkpoint listing asked for by [`Effect::LoadCheckpoints`]: opens the picker.
    pub fn on_checkpoints(&mut self, listing: &CheckpointListing) {
        if !matches!(self.awaiting, Some(Awaiting::Picker(_))) {
            return;
        }
        if let Some(Awaiting::Picker(purpose)) = self.awaiting.take() {
            if self.mode == Mode::Chat && self.approvals.is_empty() {
                self.mode = Mode::Picker(Picker::new(listing, purpose));
            }
        }
    }

    pub(crate) fn picker_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Mode::Picker(picker) = &mut self.mode else {
            return Vec::new();
        };
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => picker.up(),
            KeyCode::Down | KeyCode::Char('j') => picker.down(),
            KeyCode::Esc => self.mode = Mode::Chat,
            KeyCode::Enter => match (picker.chosen(), &picker.purpose) {
                (Some(entry), Purpose::Rewind) => {
                    let menu = Menu::new(entry.clone(), picker.clone());
                    self.mode = Mode::Menu(Box::new(menu));
                }
                (Some(entry), Purpose::Fork(name)) => {
                    // The entry says whether a fork is offered here, and why not.
                    let fork = entry.actions.iter().find(|a| a.action == ActionKind::Fork);
                    if !fork.is_some_and(|a| a.available) {
                        let why = fork.map_or_else(|| "not offered".to_string(), unavailable_reason);
                        self.message = Some(format!("cannot fork here: {why}"));
                        return Vec::new();
                    }
                    let req = ForkRequest {
                        turn: entry.turn,
                        name: name.clone(),
                        select: true,
                    };
                    self.mode = Mode::Chat;
                    return vec![Effect::Fork(req)];
                }
                (Some(entry), Purpose::ForkWorkspace(dir)) => {
                    let fork = entry
                        .actions
                        .iter()
                        .find(|a| a.action == ActionKind::ForkWorkspace);
                    if !fork.is_some_and(|a| a.available) {
                        let why = fork.map_or_else(|| "not offered".to_string(), unavailable_reason);
                        self.message = Some(format!("cannot fork into a new workspace here: {why}"));
                        return Vec::new();
                    }
                    let (turn, dir) = (entry.turn, dir.clone());
                    self.mode = Mode::Chat;
                    return self.fork_workspace(turn, dir);
                }
                // The files as they are now are the workspace itself: there is no turn's start
                // to fork at, so the picker stays and says so.
                (None, Purpose::ForkWorkspace(_)) => {
                    self.message = Some(
                        "choose a turn: a fork into a new workspace takes the files as they stood when it started"
                            .into(),
                    );
                }
                (None, _) => self.mode = Mode::Chat,
            },
            _ if ctrl(&key, 'c') => self.mode = Mode::Chat,
            _ => {}
        }
        Vec::new()
    }
}

impl App {
    /// `/fork --worktree DIR` at `turn`: asked for when the turn's entry offers it (the picker's
    /// listing, or the one loaded now), else refused with the entry's reason.
    pub(crate) fn fork_workspace(&mut self, turn: u64, dir: String) -> Vec<Effect> {
        if self.status.running {
            self.message = Some("cannot fork while a turn is running".to_string());
            return Vec::new();
        }
        if self.waiting() {
            return Vec::new();
        }
        self.message = Some(format!("forking turn {turn} into {}…", escape::line(&dir)));
        vec![Effect::ForkWorkspace(retrace_protocol::WorkspaceForkRequest {
            turn,
            worktree: dir,
            name: None,
        })]
    }
}

/// Whether a turn ran a shell command whose effects Retrace could not track.
pub fn has_shell_gap(entry: &CheckpointEntry) -> bool {
    entry.gaps.iter().any(|g| g.reason == GapReason::BashSideEffect)
}

/// Draws the rewind picker.
pub(crate) fn draw(frame: &mut Frame, area: Rect, p: &Picker, t: Theme) {
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
        // After the prompt, its own piece: it is no word of the prompt's.
        let gap = if has_shell_gap(e) { "  · ⚠ shell" } else { "" };
        // The turn's +/− over the text files it changed, when the listing has them and they
        // say something (a turn that only moved files or wrote them unchanged has none).
        let counts = match (e.added, e.removed) {
            (Some(0), Some(0)) => String::new(),
            (Some(a), Some(r)) => format!("  +{a} −{r}"),
            _ => String::new(),
        };
        let text = format!(
            "turn {:<3} {}  {}{counts}{gap}  ({files})",
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
        Purpose::ForkWorkspace(dir) => format!(
            " Fork into {}: the files as they were when which turn started? ",
            escape::first_line(dir, 30)
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
