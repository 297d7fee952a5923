//! `/sessions`: the workspace's sessions, newest first, with a cursor; Enter opens the one under
//! it in place of the current one (which stays on disk, resumable).

use retrace_protocol::SessionEntry;

/// The sessions list and its cursor.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionList {
    /// The sessions of this workspace, newest first.
    pub entries: Vec<SessionEntry>,
    /// The row under the cursor.
    pub cursor: usize,
    /// The session the UI shows now.
    pub current: String,
}

impl SessionList {
    /// The sessions of `entries` that belong to a workspace (old flat logs record none, so they
    /// are opened with `retrace --session ID`); the cursor on `current`.
    pub fn new(entries: Vec<SessionEntry>, current: &str) -> SessionList {
        let entries: Vec<SessionEntry> = entries.into_iter().filter(|e| e.workspace.is_some()).collect();
        let cursor = entries.iter().position(|e| e.id.as_str() == current).unwrap_or(0);
        SessionList {
            entries,
            cursor,
            current: current.to_string(),
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
