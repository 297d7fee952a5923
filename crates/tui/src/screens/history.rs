//! `/history <path>` (or `h` on a file of a rewind's preview or of `/diff`): every version of one
//! file the session knows (SPEC §5.8), oldest first — its state at each turn's start and end,
//! before and after each restore, revert, undo or redo, and now — with a cursor. Enter on a
//! version that can be restored prepares its single-file revert (`prepare_revert {path,
//! version}`), which the preview shows (its diff included) before anything is committed; the
//! preview commits it with `commit_revert`, and `/undo` takes it back. Whether a version can be
//! restored, and why not, is the controller's answer.

use std::path::PathBuf;

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::Frame;
use retrace_protocol::{FileHistory, HistoryVersion, PrepareRevert, VersionOrigin};

use crate::app::{App, Awaiting};
use crate::effect::Effect;
use crate::escape::{self, human_bytes};
use crate::screens::files::body_width;
use crate::screens::preview::Revert;
use crate::screens::{ctrl, Mode};
use crate::view::boxed::{boxed, row, Scroll};
use crate::view::wrap::wrap;
use crate::view::Theme;

/// A file's versions and the cursor.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    /// The versions, as the controller listed them.
    pub history: FileHistory,
    /// The version under the cursor (an index into `history.versions`).
    pub cursor: usize,
    /// The screen it came from (a preview, `/diff`), to go back to.
    pub back: Option<Box<Mode>>,
}

impl History {
    /// The versions of `history`, the cursor on the newest (the file now).
    pub fn new(history: FileHistory, back: Option<Box<Mode>>) -> History {
        let cursor = history.versions.len().saturating_sub(1);
        History {
            history,
            cursor,
            back,
        }
    }

    /// The version under the cursor.
    pub fn current(&self) -> Option<&HistoryVersion> {
        self.history.versions.get(self.cursor)
    }

    /// Moves the cursor by `n` versions (back: towards the oldest), stopping at either end.
    pub fn step(&mut self, back: bool, n: usize) {
        let last = self.history.versions.len().saturating_sub(1);
        self.cursor = match back {
            true => self.cursor.saturating_sub(n),
            false => self.cursor.saturating_add(n).min(last),
        };
    }
}

impl App {
    /// Asks for the history of `path`, to show it over `back` (the screen it is opened from;
    /// `None`: the chat).
    pub(crate) fn open_history(&mut self, path: String, back: Option<Box<Mode>>) -> Vec<Effect> {
        if self.waiting() {
            return Vec::new();
        }
        self.awaiting = Some(Awaiting::History(back));
        self.mode = Mode::Chat;
        vec![Effect::LoadHistory(path)]
    }

    /// The history asked for by [`Effect::LoadHistory`]: shown.
    pub fn on_file_history(&mut self, history: FileHistory) {
        if !matches!(self.awaiting, Some(Awaiting::History(_))) {
            return;
        }
        if let Some(Awaiting::History(back)) = self.awaiting.take() {
            if self.mode == Mode::Chat {
                self.mode = Mode::History(Box::new(History::new(history, back)));
            }
        }
    }

    pub(crate) fn history_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Mode::History(h) = &mut self.mode else {
            return Vec::new();
        };
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => h.step(true, 1),
            KeyCode::Down | KeyCode::Char('j') => h.step(false, 1),
            KeyCode::PageUp => h.step(true, 10),
            KeyCode::PageDown => h.step(false, 10),
            KeyCode::Home => h.step(true, usize::MAX),
            KeyCode::End => h.step(false, usize::MAX),
            KeyCode::Esc | KeyCode::Char('q') => {
                self.mode = h.back.take().map_or(Mode::Chat, |back| *back);
            }
            _ if ctrl(&key, 'c') => self.mode = Mode::Chat,
            KeyCode::Enter => {
                let Some(v) = h.current().cloned() else {
                    return Vec::new();
                };
                let path = h.history.path.clone();
                return self.restore_version(path, &v);
            }
            _ => {}
        }
        Vec::new()
    }

    /// Enter on version `v` of `path`: its revert is prepared, to be previewed, when the
    /// controller says it can be restored; else why not is said.
    fn restore_version(&mut self, path: String, v: &HistoryVersion) -> Vec<Effect> {
        if !v.restorable {
            let why = escape::line(v.reason.as_deref().unwrap_or("its bytes are not kept"));
            self.message = Some(format!("v{} cannot be restored: {why}", v.version));
            return Vec::new();
        }
        if self.waiting() {
            return Vec::new();
        }
        self.message = None;
        let back = Box::new(self.mode.clone());
        self.awaiting = Some(Awaiting::Plan {
            back: Some(back),
            revert: Some(Revert {
                path: path.clone(),
                version: Some(v.version),
            }),
        });
        self.mode = Mode::Chat;
        vec![Effect::PrepareRevert(PrepareRevert {
            path: PathBuf::from(path),
            version: Some(v.version),
        })]
    }
}

/// What a version is: `turn 3 start`, `restored to before turn 2`, `undo`, `now`…
pub fn origin(v: &HistoryVersion) -> String {
    match (v.origin, v.turn) {
        (VersionOrigin::TurnStart, Some(t)) => format!("turn {t} start"),
        (VersionOrigin::TurnEnd, Some(t)) => format!("turn {t} end"),
        (VersionOrigin::TurnStart | VersionOrigin::TurnEnd, None) => "a turn".to_string(),
        (VersionOrigin::BeforeRestore, _) => "before a restore".to_string(),
        (VersionOrigin::Restore, Some(t)) => format!("restored to before turn {t}"),
        (VersionOrigin::Restore, None) => "restored".to_string(),
        (VersionOrigin::Revert, _) => "reverted".to_string(),
        (VersionOrigin::Undo, _) => "undo".to_string(),
        (VersionOrigin::Redo, _) => "redo".to_string(),
        (VersionOrigin::Now, _) => "now".to_string(),
    }
}

/// One version's row: `v3    turn 1 end                12-01 10:41:07  0123456789ab 1.5 KiB`.
fn version_line(v: &HistoryVersion) -> String {
    // `2026-12-06T19:40:45.66Z` → `12-06 19:40:45` (times are UTC).
    let time = v
        .time
        .as_deref()
        .map(|t| match t.get(5..19) {
            Some(s) if t.as_bytes().get(10) == Some(&b'T') => escape::line(&s.replacen('T', " ", 1)),
            _ => escape::first_line(t, 14),
        })
        .unwrap_or_default();
    let state = match (v.existed, &v.sha256) {
        (false, _) => "absent".to_string(),
        (true, Some(sha)) => {
            let short: String = sha.chars().take(12).collect();
            let size = v.size.map(human_bytes).unwrap_or_default();
            format!("{} {size}", escape::line(&short)).trim_end().to_string()
        }
        (true, None) => "present (hash not recorded)".to_string(),
    };
    format!("v{:<4} {:<25} {time:<14}  {state}", v.version, origin(v))
}

/// The versions' lines, wrapped at `width` (a version that cannot be restored says why under
/// it), and the last line of each version.
fn body(h: &History, width: usize, t: Theme) -> (Vec<Line<'static>>, Vec<usize>) {
    let mut body = Vec::new();
    let mut ends = Vec::with_capacity(h.history.versions.len());
    for (i, v) in h.history.versions.iter().enumerate() {
        let style = if v.restorable { t.text() } else { t.dim() };
        body.push(row(version_line(v), h.cursor == i, t, style));
        if !v.restorable {
            let why = escape::line(v.reason.as_deref().unwrap_or("its bytes are not kept"));
            body.extend(wrap(
                &vec![(format!("        cannot be restored: {why}"), t.warn())],
                width,
                10,
            ));
        }
        ends.push(body.len() - 1);
    }
    if body.is_empty() {
        body.push(row("no version is known".to_string(), false, t, t.dim()));
    }
    (body, ends)
}

/// Draws a file's versions.
pub(crate) fn draw(frame: &mut Frame, area: Rect, h: &History, t: Theme) {
    let (body, ends) = body(h, body_width(area.width), t);
    let focus = ends.get(h.cursor).copied().unwrap_or(0);
    let title = format!(" History of {} ", escape::short_path(&h.history.path, 70));
    boxed(
        frame,
        area,
        &title,
        body,
        Scroll::Focus(focus),
        "↑↓ move · Enter restore this version (previewed first) · Esc back",
        t,
    );
}
