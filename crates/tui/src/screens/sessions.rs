//! `/sessions`: the workspace's sessions, newest first, with a cursor; Enter opens the one under
//! it in place of the current one (which stays on disk, resumable).

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::Frame;
use retrace_protocol::SessionEntry;

use crate::app::App;
use crate::effect::Effect;
use crate::escape;
use crate::screens::{ctrl, Mode};
use crate::view::boxed::{boxed, clock, count, row, Scroll};
use crate::view::Theme;

/// The sessions list and its cursor.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionList {
    /// The sessions of this workspace, newest first.
    pub entries: Vec<SessionEntry>,
    /// The row under the cursor.
    pub cursor: usize,
    /// The session the UI shows now.
    pub current: String,
    /// How long ago each entry was last used ("5 minutes ago"), as of when the list was made.
    pub ages: Vec<Option<String>>,
}

impl SessionList {
    /// The sessions of `entries` that belong to a workspace (old flat logs record none, so they
    /// are opened with `retrace --session ID`); the cursor on `current`.
    pub fn new(entries: Vec<SessionEntry>, current: &str) -> SessionList {
        let entries: Vec<SessionEntry> = entries.into_iter().filter(|e| e.workspace.is_some()).collect();
        let cursor = entries.iter().position(|e| e.id.as_str() == current).unwrap_or(0);
        let now = time::OffsetDateTime::now_utc();
        let ages = entries
            .iter()
            .map(|e| {
                let at = e.last_used_at.as_deref()?;
                let at =
                    time::OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339).ok()?;
                Some(retrace_protocol::words::ago((now - at).whole_seconds()))
            })
            .collect();
        SessionList {
            entries,
            cursor,
            current: current.to_string(),
            ages,
        }
    }

    /// Moves the cursor up.
    pub fn up(&mut self) {
        self.cursor = self.cursor.saturating_sub(1);
    }

    /// Moves the cursor down.
    pub fn down(&mut self) {
        if self.cursor + 1 < self.entries.len() {
            self.cursor += 1;
        }
    }

    /// The session under the cursor, unless it is the current one.
    pub fn chosen(&self) -> Option<&SessionEntry> {
        self.entries
            .get(self.cursor)
            .filter(|e| e.id.as_str() != self.current)
    }
}

impl App {
    /// The sessions asked for by [`Effect::LoadSessions`].
    pub fn on_sessions(&mut self, sessions: Vec<SessionEntry>) {
        if self.mode == Mode::Chat {
            self.mode = Mode::Sessions(SessionList::new(sessions, &self.status.session));
        }
    }

    pub(crate) fn sessions_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Mode::Sessions(list) = &mut self.mode else {
            return Vec::new();
        };
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => list.up(),
            KeyCode::Down | KeyCode::Char('j') => list.down(),
            KeyCode::Esc | KeyCode::Char('q') => self.mode = Mode::Chat,
            _ if ctrl(&key, 'c') => self.mode = Mode::Chat,
            KeyCode::Enter => {
                let chosen = list.chosen().map(|e| e.id.to_string());
                self.mode = Mode::Chat;
                if let Some(id) = chosen {
                    if self.status.running {
                        self.message =
                            Some("a turn is running: wait for it, or Esc to cancel it".to_string());
                        return Vec::new();
                    }
                    self.message = Some(format!("opening session {}…", escape::line(&id)));
                    return vec![Effect::OpenSession(id)];
                }
            }
            _ => {}
        }
        Vec::new()
    }
}

/// Draws the workspace's sessions.
pub(crate) fn draw(frame: &mut Frame, area: Rect, list: &SessionList, t: Theme) {
    let mut body: Vec<Line<'static>> = list
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let id = e.id.to_string();
            let used = match list.ages.get(i).cloned().flatten() {
                Some(ago) => ago,
                None => e.created_at.as_deref().map(clock).unwrap_or_default(),
            };
            let here = if id == list.current { " · this one" } else { "" };
            let prompt = match &e.first_prompt {
                Some(p) => format!("“{}”", escape::first_line(p, 36)),
                None => "(no prompt yet)".into(),
            };
            let heads = match e.heads {
                0 | 1 => String::new(),
                n => format!(", {}", count(n, "head")),
            };
            // The prompt first, what tells sessions apart; a short id last (ids made the same day
            // share their first characters, so the end of the id is shown).
            let short = escape::line(id.rsplit('-').next().unwrap_or(&id));
            let text = format!(
                "{prompt}  {used} · {}{heads}{here} · …{short}",
                count(e.turns, "turn")
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
