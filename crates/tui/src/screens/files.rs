//! A list of files whose diffs open in place, as the rewind preview and `/diff` show them: a
//! cursor on one file (`n`/`p`), the files whose diff is open (`d` or Space), and how far the box
//! is scrolled (↑↓, PgUp PgDn). The diffs come from the controller; this only draws them
//! ([`crate::view::diff`]) and moves through them.

use std::collections::BTreeSet;

use ratatui::crossterm::event::KeyCode;
use ratatui::text::Line;

use crate::view::boxed::shown_rows;
use crate::view::diff;
use crate::view::wrap::wrap;
use crate::view::Theme;

/// At most this many lines of one file's diff are shown.
pub const DIFF_LINES: usize = 10_000;

/// The cursor, the open diffs and the scroll of a list of files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileCursor {
    /// The file under the cursor (an index into the list).
    pub cursor: usize,
    /// The files whose diff is shown.
    pub open: BTreeSet<usize>,
    /// The first line of the box shown.
    pub scroll: usize,
}

impl FileCursor {
    /// Shows or hides the diff of the file under the cursor, in a list of `n` files.
    pub fn toggle(&mut self, n: usize) {
        if self.cursor < n && !self.open.remove(&self.cursor) {
            self.open.insert(self.cursor);
        }
    }

    /// Moves the cursor by one (back: up) in a list of `n` files, stopping at either end.
    pub fn step(&mut self, back: bool, n: usize) {
        if n == 0 {
            return;
        }
        self.cursor = match back {
            true => self.cursor.saturating_sub(1),
            false => (self.cursor + 1).min(n - 1),
        };
    }

    /// Scrolls so that the cursor's row shows: `rows` is the row of each file among the box's
    /// `lines`, drawn in an area `height` rows high (`view::overlay_height`).
    pub(crate) fn follow(&mut self, rows: &[usize], lines: usize, height: u16) {
        let Some(&row) = rows.get(self.cursor) else {
            return;
        };
        let shown = shown_rows(height, lines).max(1);
        if row < self.scroll {
            self.scroll = row;
        } else if row >= self.scroll + shown {
            self.scroll = row + 1 - shown;
        }
    }

    /// A key that scrolls the box (↑↓ j k, PgUp PgDn), never past `limit`. Returns whether it
    /// was one.
    pub(crate) fn scroll_key(&mut self, code: KeyCode, limit: usize) -> bool {
        match code {
            KeyCode::Up | KeyCode::Char('k') => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.scroll = (self.scroll + 1).min(limit),
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::PageDown => self.scroll = (self.scroll + 10).min(limit),
            _ => return false,
        }
        true
    }
}

/// The width a file list's lines are wrapped at, in a terminal `area_w` cells wide.
pub(crate) fn body_width(area_w: u16) -> usize {
    // Two cells inside the box's borders on each side; the box is at most 100 cells wide (wider
    // rows were cut at its border, past a terminal 104 columns wide).
    let inner = crate::view::boxed::inner_width(ratatui::layout::Rect::new(0, 0, area_w, 1));
    inner.saturating_sub(2).max(1)
}

/// The cursor's mark before a file's row.
pub(crate) fn mark(selected: bool) -> &'static str {
    if selected {
        "›"
    } else {
        " "
    }
}

/// A note under an open file (why there is no diff, what is missing from it), dimmed.
pub(crate) fn note(text: String, width: usize, t: Theme) -> Vec<Line<'static>> {
    wrap(&vec![(text, t.dim())], width, 6)
}

/// An open file's diff: its lines numbered and coloured, or a note when it has none.
pub(crate) fn diff_rows(text: &str, width: usize, t: Theme) -> Vec<Line<'static>> {
    if text.is_empty() {
        return note("    no change to its text".into(), width, t);
    }
    diff::rows(text, width, DIFF_LINES, t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cursor_stops_at_either_end_and_toggles_its_file() {
        let mut c = FileCursor::default();
        c.step(true, 3);
        assert_eq!(c.cursor, 0);
        for _ in 0..5 {
            c.step(false, 3);
        }
        assert_eq!(c.cursor, 2);
        c.toggle(3);
        assert_eq!(c.open.iter().copied().collect::<Vec<_>>(), [2]);
        c.toggle(3);
        assert!(c.open.is_empty());
        c.cursor = 7;
        c.toggle(3);
        assert!(c.open.is_empty());
        c.step(false, 0);
        assert_eq!(c.cursor, 7);
    }

    #[test]
    fn follow_keeps_the_cursors_row_in_view() {
        let mut c = FileCursor {
            cursor: 2,
            ..FileCursor::default()
        };
        // 40 lines in a 20-row terminal: the box shows 15 of them.
        c.follow(&[0, 10, 30], 40, 20);
        assert_eq!(c.scroll, 16);
        c.cursor = 0;
        c.follow(&[0, 10, 30], 40, 20);
        assert_eq!(c.scroll, 0);
        assert!(c.scroll_key(KeyCode::PageDown, 12));
        assert_eq!(c.scroll, 10);
        assert!(c.scroll_key(KeyCode::PageDown, 12));
        assert_eq!(c.scroll, 12);
        assert!(!c.scroll_key(KeyCode::Enter, 12));
    }
}
