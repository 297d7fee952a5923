//! The input box: multi-line text with a cursor, the history of what was sent, the readline
//! keys' word moves and kills (`kill`), and pasted blocks folded ([`Draft`]).

mod draft;
mod kill;
pub(crate) mod rows;

use std::borrow::Cow;

pub use draft::{fold_label, Draft, FOLD_LINES};

/// The text being typed, with a cursor (a byte offset on a char boundary of the text as shown:
/// a folded paste is one character there), the sent history and the last kill.
#[derive(Debug, Clone, Default)]
pub struct Input {
    draft: Draft,
    cursor: usize,
    history: Vec<Draft>,
    /// Where Up/Down is in the history: `Some(i)` while a recalled entry is shown unchanged.
    browsing: Option<usize>,
    /// What the last kill took (Ctrl-Y puts it back).
    kill: Draft,
    /// Whether the last edit was a kill: the next one adds to it (as readline does).
    killing: bool,
    /// Counts the changes of the text.
    revision: u64,
}

impl Input {
    /// The whole text, each folded paste as it was pasted.
    pub fn text(&self) -> Cow<'_, str> {
        self.draft.whole()
    }

    /// The text as shown: each folded paste is one marker character ([`Input::fold_label`]).
    pub fn shown(&self) -> &str {
        &self.draft.text
    }

    /// What a folded paste's marker shows ("[pasted 120 lines]"); `None` for any other character.
    pub fn fold_label(&self, c: char) -> Option<String> {
        self.draft.label(c)
    }

    /// The cursor, a byte offset into [`Input::shown`].
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// A number that changes whenever the text does.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Whether nothing is typed.
    pub fn is_empty(&self) -> bool {
        self.draft.is_empty()
    }

    /// The history, oldest first (each entry whole).
    pub fn history(&self) -> Vec<String> {
        self.history.iter().map(|d| d.whole().into_owned()).collect()
    }

    /// Replaces the text (a refilled prompt), the cursor at its end.
    pub fn set(&mut self, text: &str) {
        self.restore(Draft::plain(text));
    }

    /// Replaces the text with a draft (a queued prompt taken back), the cursor at its end.
    pub fn restore(&mut self, draft: Draft) {
        self.draft = draft;
        self.revision += 1;
        self.cursor = self.draft.text.len();
        self.browsing = None;
        self.killing = false;
    }

    /// Empties the input.
    pub fn clear(&mut self) {
        self.set("");
    }

    /// Takes the draft out, folds kept (a prompt queued), leaving the input empty; not remembered
    /// in the history until it is sent.
    pub fn take_draft(&mut self) -> Draft {
        let draft = std::mem::take(&mut self.draft);
        self.restore(Draft::default());
        draft
    }

    /// Remembers a draft in the history (it was sent), unless blank or the same as the last.
    pub fn remember(&mut self, draft: &Draft) {
        if !draft.whole().trim().is_empty() && self.history.last() != Some(draft) {
            self.history.push(draft.clone());
        }
    }

    /// Takes the text out (to send it), remembering it in the history.
    pub fn take(&mut self) -> String {
        let draft = self.take_draft();
        self.remember(&draft);
        draft.whole().into_owned()
    }

    /// Puts `text` (already the input's own) at the cursor.
    fn put(&mut self, text: &str) {
        self.draft.text.insert_str(self.cursor, text);
        self.revision += 1;
        self.cursor += text.len();
        self.browsing = None;
        self.killing = false;
    }

    /// Types a character at the cursor.
    pub fn insert(&mut self, c: char) {
        let mut buf = [0u8; 4];
        self.put(&draft::sanitize(c.encode_utf8(&mut buf)));
    }

    /// Types `text` at the cursor as one edit (a paste: line breaks kept, `\r\n` and `\r` made
    /// `\n`); a block of more than [`FOLD_LINES`] lines is folded.
    pub fn insert_str(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let text = draft::sanitize(text);
        let text = if text.contains('\r') {
            Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
        } else {
            text
        };
        let shown = self.draft.fold(&text);
        self.put(&shown);
    }

    /// Deletes the character (or folded paste) before the cursor.
    pub fn backspace(&mut self) {
        if let Some(c) = self.draft.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
            self.draft.text.remove(self.cursor);
            self.revision += 1;
            self.browsing = None;
        }
        self.killing = false;
    }

    /// Deletes the character (or folded paste) under the cursor.
    pub fn delete(&mut self) {
        if self.cursor < self.draft.text.len() {
            self.draft.text.remove(self.cursor);
            self.revision += 1;
            self.browsing = None;
        }
        self.killing = false;
    }

    /// Moves the cursor one character left.
    pub fn left(&mut self) {
        if let Some(c) = self.draft.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
        }
        self.killing = false;
    }

    /// Moves the cursor one character right.
    pub fn right(&mut self) {
        if let Some(c) = self.draft.text[self.cursor..].chars().next() {
            self.cursor += c.len_utf8();
        }
        self.killing = false;
    }

    /// Where the cursor's line starts.
    fn line_start(&self) -> usize {
        self.draft.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    /// Where the cursor's line ends (its line break, or the end of the text).
    fn line_end(&self) -> usize {
        self.draft.text[self.cursor..]
            .find('\n')
            .map_or(self.draft.text.len(), |i| self.cursor + i)
    }

    /// Moves the cursor to the start of its line (Home, Ctrl-A).
    pub fn home(&mut self) {
        self.cursor = self.line_start();
        self.killing = false;
    }

    /// Moves the cursor to the end of its line (End, Ctrl-E).
    pub fn end(&mut self) {
        self.cursor = self.line_end();
        self.killing = false;
    }

    /// Moves the cursor to the line above, at the same column (in characters) or its end; false
    /// on the first line.
    pub fn up(&mut self) -> bool {
        self.killing = false;
        let text = &self.draft.text;
        let start = self.line_start();
        if start == 0 {
            return false;
        }
        let column = text[start..self.cursor].chars().count();
        let above = text[..start - 1].rfind('\n').map_or(0, |i| i + 1);
        self.cursor = at_column(text, above, start - 1, column);
        true
    }

    /// Moves the cursor to the line below, at the same column (in characters) or its end; false
    /// on the last line.
    pub fn down(&mut self) -> bool {
        self.killing = false;
        let text = &self.draft.text;
        let Some(nl) = text[self.cursor..].find('\n').map(|i| self.cursor + i) else {
            return false;
        };
        let start = self.line_start();
        let column = text[start..self.cursor].chars().count();
        let below_end = text[nl + 1..].find('\n').map_or(text.len(), |i| nl + 1 + i);
        self.cursor = at_column(text, nl + 1, below_end, column);
        true
    }

    /// Moves the cursor to the row above as the input box wraps the text at `width` cells (the
    /// line above's last row from a line's first), at the same cell or the nearest before it;
    /// false on the first row.
    pub fn up_row(&mut self, width: usize) -> bool {
        self.vertical(width, true)
    }

    /// Moves the cursor to the row below as the input box wraps the text at `width` cells; false
    /// on the last row.
    pub fn down_row(&mut self, width: usize) -> bool {
        self.vertical(width, false)
    }

    fn vertical(&mut self, width: usize, up: bool) -> bool {
        self.killing = false;
        let draft = &self.draft;
        let labels = |c: char| draft.label(c);
        match rows::vertical(&draft.text, self.cursor, width, up, &labels) {
            Some(at) => {
                self.cursor = at;
                true
            }
            None => false,
        }
    }

    /// Whether Up/Down walk the history now: the input is empty, or shows a recalled entry as it was.
    pub fn browsing_history(&self) -> bool {
        self.draft.is_empty() || self.browsing.is_some()
    }

    /// Whether the input shows a recalled history entry as it was.
    pub fn recalled(&self) -> bool {
        self.browsing.is_some()
    }

    /// Recalls the previous (older) history entry; false when there is none.
    pub fn history_prev(&mut self) -> bool {
        let at = match self.browsing {
            Some(0) => return false,
            Some(i) => i - 1,
            None if self.history.is_empty() => return false,
            None => self.history.len() - 1,
        };
        self.show_history(at);
        true
    }

    /// Recalls the next (newer) history entry, or empties the input after the newest.
    pub fn history_next(&mut self) -> bool {
        match self.browsing {
            Some(i) if i + 1 < self.history.len() => {
                self.show_history(i + 1);
                true
            }
            Some(_) => {
                self.clear();
                true
            }
            None => false,
        }
    }

    fn show_history(&mut self, at: usize) {
        if let Some(entry) = self.history.get(at) {
            self.restore(entry.clone());
            self.browsing = Some(at);
        }
    }
}

/// The byte offset of `column` characters into the line `text[start..end]`, or its end.
fn at_column(text: &str, start: usize, end: usize, column: usize) -> usize {
    text[start..end]
        .char_indices()
        .nth(column)
        .map_or(end, |(i, _)| start + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_and_history() {
        let mut i = Input::default();
        for c in "héllo".chars() {
            i.insert(c);
        }
        i.left();
        i.backspace();
        assert_eq!(i.text(), "hélo");
        i.home();
        i.delete();
        assert_eq!(i.text(), "élo");
        assert_eq!(i.take(), "élo");
        i.set("second");
        i.take();
        assert!(i.history_prev());
        assert_eq!(i.text(), "second");
        assert!(i.history_prev());
        assert_eq!(i.text(), "élo");
        assert!(!i.history_prev());
        assert!(i.history_next());
        assert!(i.history_next());
        assert_eq!(i.text(), "");
    }

    #[test]
    fn moves_between_lines() {
        let mut i = Input::default();
        i.set("héllo\nab\nwörld");
        assert!(i.up());
        assert_eq!(&i.text()[i.cursor()..], "\nwörld"); // the end of the shorter line
        assert!(i.up());
        assert_eq!(&i.text()[i.cursor()..], "llo\nab\nwörld");
        assert!(!i.up());
        assert!(i.down());
        assert!(i.down());
        assert_eq!(&i.text()[i.cursor()..], "rld");
        assert!(!i.down());
    }
}
