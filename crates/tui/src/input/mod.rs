//! The input box: multi-line text with a cursor, and the history of what was sent.

/// The text being typed, with a cursor (a byte offset on a char boundary) and the sent history.
#[derive(Debug, Clone, Default)]
pub struct Input {
    text: String,
    cursor: usize,
    history: Vec<String>,
    /// Where Up/Down is in the history: `Some(i)` while a recalled entry is shown unchanged.
    browsing: Option<usize>,
}

impl Input {
    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The cursor, a byte offset into [`Input::text`].
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Whether nothing is typed.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The history, oldest first.
    pub fn history(&self) -> &[String] {
        &self.history
    }

    /// Replaces the text (a refilled prompt), the cursor at its end.
    pub fn set(&mut self, text: &str) {
        self.text = text.to_string();
        self.cursor = self.text.len();
        self.browsing = None;
    }

    /// Empties the input.
    pub fn clear(&mut self) {
        self.set("");
    }

    /// Takes the text out (to send it), remembering it in the history.
    pub fn take(&mut self) -> String {
        let text = std::mem::take(&mut self.text);
        self.cursor = 0;
        self.browsing = None;
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
        }
        text
    }

    /// Types a character at the cursor.
    pub fn insert(&mut self, c: char) {
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
        self.browsing = None;
    }

    /// Types `text` at the cursor (a paste: one copy of the text after the cursor, however long).
    pub fn insert_str(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.text.insert_str(self.cursor, text);
        self.cursor += text.len();
        self.browsing = None;
    }

    /// Deletes the character before the cursor.
    pub fn backspace(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
            self.text.remove(self.cursor);
            self.browsing = None;
        }
    }

    /// Deletes the character under the cursor.
    pub fn delete(&mut self) {
        if self.cursor < self.text.len() {
            self.text.remove(self.cursor);
            self.browsing = None;
        }
    }

    /// Moves the cursor one character left.
    pub fn left(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
        }
    }

    /// Moves the cursor one character right.
    pub fn right(&mut self) {
        if let Some(c) = self.text[self.cursor..].chars().next() {
            self.cursor += c.len_utf8();
        }
    }

    /// Moves the cursor to the start of its line.
    pub fn home(&mut self) {
        self.cursor = self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1);
    }

    /// Moves the cursor to the end of its line.
    pub fn end(&mut self) {
        self.cursor = self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |i| self.cursor + i);
    }

    /// Moves the cursor to the line above, at the same column (in characters) or its end; false
    /// on the first line.
    pub fn up(&mut self) -> bool {
        let start = self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1);
        if start == 0 {
            return false;
        }
        let column = self.text[start..self.cursor].chars().count();
        let above = self.text[..start - 1].rfind('\n').map_or(0, |i| i + 1);
        self.cursor = at_column(&self.text, above, start - 1, column);
        true
    }

    /// Moves the cursor to the line below, at the same column (in characters) or its end; false
    /// on the last line.
    pub fn down(&mut self) -> bool {
        let Some(nl) = self.text[self.cursor..].find('\n').map(|i| self.cursor + i) else {
            return false;
        };
        let start = self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1);
        let column = self.text[start..self.cursor].chars().count();
        let below_end = self.text[nl + 1..]
            .find('\n')
            .map_or(self.text.len(), |i| nl + 1 + i);
        self.cursor = at_column(&self.text, nl + 1, below_end, column);
        true
    }

    /// Whether Up/Down walk the history now: the input is empty, or shows a recalled entry as it was.
    pub fn browsing_history(&self) -> bool {
        self.text.is_empty() || self.browsing.is_some()
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
            self.text = entry.clone();
            self.cursor = self.text.len();
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
