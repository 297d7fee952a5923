//! The readline keys of the input: moving by words (Alt-B, Alt-F) and killing to the line's ends
//! (Ctrl-U, Ctrl-K), a word back (Ctrl-W: to the whitespace before it; Alt-Backspace: to the
//! word's start) or forward (Alt-D), and yanking the last kill back (Ctrl-Y). Kills in a row add
//! up, as in readline: Ctrl-U after Ctrl-K takes back the whole line at once.

use super::Input;

/// A character of a word for Alt-B, Alt-F, Alt-D and Alt-Backspace (readline's: letters, digits
/// and `_`).
fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl Input {
    /// Where the word before the cursor starts: back over what is not a word, then over the word.
    fn word_start(&self) -> usize {
        let before = &self.draft.text[..self.cursor];
        let mut at = self.cursor;
        let mut in_word = false;
        for (i, c) in before.char_indices().rev() {
            if word_char(c) {
                in_word = true;
            } else if in_word {
                break;
            }
            at = i;
        }
        at
    }

    /// Where the word after the cursor ends: over what is not a word, then over the word.
    fn word_end(&self) -> usize {
        let after = &self.draft.text[self.cursor..];
        let mut in_word = false;
        for (i, c) in after.char_indices() {
            if word_char(c) {
                in_word = true;
            } else if in_word {
                return self.cursor + i;
            }
        }
        self.draft.text.len()
    }

    /// Where Ctrl-W's kill starts: back over whitespace, then over everything that is not.
    fn spaced_word_start(&self) -> usize {
        let before = &self.draft.text[..self.cursor];
        let trimmed = before.trim_end_matches(char::is_whitespace);
        trimmed
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
            .map_or(0, |(i, c)| i + c.len_utf8())
    }

    /// Moves the cursor to the start of the word before it (Alt-B).
    pub fn word_left(&mut self) {
        self.cursor = self.word_start();
        self.killing = false;
    }

    /// Moves the cursor to the end of the word after it (Alt-F).
    pub fn word_right(&mut self) {
        self.cursor = self.word_end();
        self.killing = false;
    }

    /// Removes `start..end` of the text into the kill buffer (after what the last kill took when
    /// kills come in a row, before it when this one went backwards); the cursor ends at `start`.
    fn kill(&mut self, start: usize, end: usize, backwards: bool) {
        if start >= end {
            return;
        }
        let taken = self.draft.part(start, end);
        self.draft.text.replace_range(start..end, "");
        self.revision += 1;
        self.cursor = start;
        self.browsing = None;
        self.kill = match (self.killing, backwards) {
            (false, _) => taken,
            (true, false) => std::mem::take(&mut self.kill).joined("", &taken),
            (true, true) => taken.joined("", &self.kill),
        };
        self.killing = true;
    }

    /// Kills from the start of the cursor's line to the cursor (Ctrl-U); at the start of a line,
    /// the line break before it (so Ctrl-U again and again empties a multi-line input).
    pub fn kill_to_line_start(&mut self) {
        let start = match self.line_start() {
            s if s == self.cursor && s > 0 => s - 1,
            s => s,
        };
        self.kill(start, self.cursor, true);
    }

    /// Kills from the cursor to the end of its line (Ctrl-K); at the end of a line, the line
    /// break after it.
    pub fn kill_to_line_end(&mut self) {
        let end = match self.line_end() {
            e if e == self.cursor && e < self.draft.text.len() => e + 1,
            e => e,
        };
        self.kill(self.cursor, end, false);
    }

    /// Kills back to the whitespace before the word at the cursor (Ctrl-W).
    pub fn kill_spaced_word_left(&mut self) {
        self.kill(self.spaced_word_start(), self.cursor, true);
    }

    /// Kills back to the start of the word before the cursor (Alt-Backspace).
    pub fn kill_word_left(&mut self) {
        self.kill(self.word_start(), self.cursor, true);
    }

    /// Kills forward to the end of the word after the cursor (Alt-D).
    pub fn kill_word_right(&mut self) {
        self.kill(self.cursor, self.word_end(), false);
    }

    /// Puts the last kill back at the cursor (Ctrl-Y), folds as folds.
    pub fn yank(&mut self) {
        let kill = self.kill.clone();
        let text = self.draft.adopt(&kill);
        self.put(&text);
    }

    /// The last kill, whole.
    pub fn killed(&self) -> String {
        self.kill.whole().into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::super::Input;

    fn at(text: &str, cursor: usize) -> Input {
        let mut i = Input::default();
        i.set(text);
        i.cursor = cursor;
        i
    }

    /// The text with `|` at the cursor.
    fn shown(i: &Input) -> String {
        let mut s = i.shown().to_string();
        s.insert(i.cursor(), '|');
        s
    }

    #[test]
    fn words_move_over_punctuation_and_lines() {
        let mut i = at("hello, wörld_2 foo\nbar", 22);
        i.word_left();
        assert_eq!(shown(&i), "hello, wörld_2 foo\n|bar");
        i.word_left();
        assert_eq!(shown(&i), "hello, wörld_2 |foo\nbar");
        i.word_left();
        assert_eq!(shown(&i), "hello, |wörld_2 foo\nbar");
        i.word_left();
        i.word_left();
        assert_eq!(shown(&i), "|hello, wörld_2 foo\nbar");
        i.word_right();
        assert_eq!(shown(&i), "hello|, wörld_2 foo\nbar");
        i.word_right();
        assert_eq!(shown(&i), "hello, wörld_2| foo\nbar");
        i.word_right();
        i.word_right();
        assert_eq!(shown(&i), "hello, wörld_2 foo\nbar|");
        i.word_right();
        assert_eq!(shown(&i), "hello, wörld_2 foo\nbar|");
    }

    #[test]
    fn kills_to_the_line_ends_within_a_line_then_its_break() {
        let mut i = at("one\ntwo three\nfour", 8);
        i.kill_to_line_end();
        assert_eq!(shown(&i), "one\ntwo |\nfour");
        assert_eq!(i.killed(), "three");
        i.kill_to_line_end();
        assert_eq!(shown(&i), "one\ntwo |four");
        assert_eq!(i.killed(), "three\n", "kills in a row add up");
        i.home();
        i.end();
        i.kill_to_line_start();
        assert_eq!(shown(&i), "one\n|");
        assert_eq!(i.killed(), "two four");
        i.kill_to_line_start();
        assert_eq!(shown(&i), "one|");
        i.kill_to_line_start();
        assert_eq!(shown(&i), "|");
        assert_eq!(i.killed(), "one\ntwo four", "backward kills go before");
        i.kill_to_line_start();
        assert_eq!(shown(&i), "|");
    }

    #[test]
    fn ctrl_w_takes_to_whitespace_and_alt_backspace_to_the_word() {
        let mut i = at("git commit -m fix/typo  ", 24);
        i.kill_spaced_word_left();
        assert_eq!(shown(&i), "git commit -m |");
        assert_eq!(i.killed(), "fix/typo  ");
        i.set("git commit -m fix/typo");
        i.kill_word_left();
        assert_eq!(shown(&i), "git commit -m fix/|");
        i.kill_word_left();
        assert_eq!(shown(&i), "git commit -m |");
        assert_eq!(i.killed(), "fix/typo");
        i.home();
        i.kill_word_right();
        assert_eq!(shown(&i), "| commit -m ");
        assert_eq!(i.killed(), "git");
        i.kill_word_right();
        assert_eq!(shown(&i), "| -m ");
        assert_eq!(i.killed(), "git commit");
    }

    #[test]
    fn yank_puts_the_last_kill_back_anywhere() {
        let mut i = at("hello world", 11);
        i.kill_spaced_word_left();
        i.home();
        i.yank();
        assert_eq!(shown(&i), "world|hello ");
        i.yank();
        assert_eq!(shown(&i), "worldworld|hello ");
        // Anything but a kill ends the row: the next kill starts afresh.
        i.end();
        i.kill_to_line_start();
        assert_eq!(i.killed(), "worldworldhello ");
        i.insert('x');
        i.kill_to_line_start();
        assert_eq!(i.killed(), "x");
    }

    #[test]
    fn a_fold_moves_dies_and_comes_back_as_one() {
        let block: String = (1..=120).map(|n| format!("row {n}\n")).collect();
        let mut i = Input::default();
        i.insert_str("see ");
        i.insert_str(&block);
        i.insert_str(" ok");
        assert_eq!(i.shown().chars().count(), "see ".len() + 1 + " ok".len());
        assert_eq!(i.text(), format!("see {block} ok"));
        let marker = i.shown().chars().nth(4).unwrap();
        assert_eq!(i.fold_label(marker).as_deref(), Some("[pasted 120 lines]"));
        // Backspace on the fold removes the whole block.
        i.left();
        i.left();
        i.left();
        i.backspace();
        assert_eq!(i.text(), "see  ok");
        // Killed and yanked, it comes back whole.
        i.insert_str(&block);
        i.end();
        i.kill_to_line_start();
        assert_eq!(i.text(), "");
        i.yank();
        i.yank();
        assert_eq!(i.text(), format!("see {block} oksee {block} ok"));
        assert_eq!(
            i.shown().chars().filter(|c| i.fold_label(*c).is_some()).count(),
            2
        );
    }
}
