//! `/diff [turn]`: what one retained turn did (SPEC §5.7), as the controller's `turn_results`
//! says it: the turn, its prompt and coverage; each file it changed (`modified src/lib.rs +3 −1`,
//! a binary one with its sizes, one whose change cannot be shown with why), whose diff opens in
//! place with the preview's keys (`n`/`p`, `d` or Space; [`FileCursor`]); its shell commands
//! with their exit codes and durations; what it could not capture. `h` opens the history of the
//! file under the cursor. Without a turn, the latest turn of the chat whose checkpoint is kept.
//! Nothing is diffed here.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use retrace_protocol::TurnResults;

use crate::app::{App, Awaiting};
use crate::effect::Effect;
use crate::screens::files::{body_width, FileCursor};
use crate::screens::{ctrl, Mode};
use crate::transcript::Entry;
use crate::view::Theme;
use draw::body;
pub(crate) use draw::draw;

mod draw;

/// A turn's results and the cursor over its files.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnDiff {
    /// The results, as the controller gave them.
    pub results: TurnResults,
    /// The file under the cursor, the open diffs and the scroll.
    pub list: FileCursor,
}

impl TurnDiff {
    /// The results, the cursor on the first file, every diff closed.
    pub fn new(results: TurnResults) -> TurnDiff {
        TurnDiff {
            results,
            list: FileCursor::default(),
        }
    }
}

impl App {
    /// `/diff [turn]`: asks for the turn's results; without a turn, the latest one in the chat
    /// whose checkpoint is kept.
    pub(crate) fn open_diff(&mut self, turn: Option<u64>) -> Vec<Effect> {
        let Some(turn) = turn.or_else(|| self.latest_kept_turn()) else {
            self.message = Some("no turn with a checkpoint yet: nothing to show".to_string());
            return Vec::new();
        };
        if self.waiting() {
            return Vec::new();
        }
        self.awaiting = Some(Awaiting::TurnResults);
        vec![Effect::LoadTurnResults(turn)]
    }

    /// The newest turn of the chat whose checkpoint is kept.
    fn latest_kept_turn(&self) -> Option<u64> {
        self.transcript
            .entries()
            .iter()
            .rev()
            .find_map(|s| match &s.entry {
                Entry::Checkpoint { turn, checkpoint } if checkpoint.retained => Some(*turn),
                _ => None,
            })
    }

    /// The results asked for by [`Effect::LoadTurnResults`]: shown.
    pub fn on_turn_results(&mut self, results: TurnResults) {
        if self.awaiting != Some(Awaiting::TurnResults) {
            return;
        }
        self.awaiting = None;
        if self.mode == Mode::Chat {
            self.mode = Mode::Diff(Box::new(TurnDiff::new(results)));
        }
    }

    /// Moves the file cursor by one (back: up), keeping its row in view.
    fn move_diff_cursor(&mut self, back: bool) {
        let (w, h) = (self.viewport.0, crate::view::overlay_height(self, self.viewport));
        let Mode::Diff(d) = &mut self.mode else {
            return;
        };
        d.list.step(back, d.results.files.len());
        let (lines, rows) = body(d, body_width(w), Theme::new(true));
        d.list.follow(&rows, lines.len(), h);
    }

    pub(crate) fn diff_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let limit = self.overlay_limit;
        let Mode::Diff(d) = &mut self.mode else {
            return Vec::new();
        };
        if d.list.scroll_key(key.code, limit) {
            return Vec::new();
        }
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => self.mode = Mode::Chat,
            _ if ctrl(&key, 'c') => self.mode = Mode::Chat,
            KeyCode::Char('n') => self.move_diff_cursor(false),
            KeyCode::Char('p') => self.move_diff_cursor(true),
            KeyCode::Char('d') | KeyCode::Char(' ') | KeyCode::Enter => d.list.toggle(d.results.files.len()),
            KeyCode::Char('h') => {
                let Some(path) = d.results.files.get(d.list.cursor).map(|f| f.path.clone()) else {
                    return Vec::new();
                };
                let back = Box::new(self.mode.clone());
                return self.open_history(path, Some(back));
            }
            _ => {}
        }
        Vec::new()
    }
}
