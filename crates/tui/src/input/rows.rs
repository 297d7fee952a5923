//! The input's lines soft-wrapped into the rows of the input box: each character as it shows
//! (escaped, a fold as its label) and the cells it takes (a wide character two), rows cut at the
//! cell so that what is typed shows whole, and where the cursor stands among them. The view draws
//! these rows and Up/Down move between them, so both agree on every row and column.

use unicode_width::UnicodeWidthStr;

use crate::escape;

/// What a fold's marker shows, `None` for any other character.
pub(crate) type Labels<'a> = &'a dyn Fn(char) -> Option<String>;

/// One character of the text as it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unit {
    /// Its byte offset in the text.
    pub(crate) at: usize,
    /// What shows for it: the character escaped, or a fold's label.
    pub(crate) shown: String,
    /// The cells it takes.
    pub(crate) width: usize,
    /// Whether it is a fold.
    pub(crate) fold: bool,
}

/// One row of the input box: the units on it, and the bytes of the text they stand for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    pub(crate) units: Vec<Unit>,
    /// The byte offset of its first unit (the line's end for an empty row).
    pub(crate) start: usize,
    /// The byte offset after its last unit.
    pub(crate) end: usize,
}

impl Row {
    /// The cell where the cursor at byte `cursor` (on this row) stands.
    pub(crate) fn column_of(&self, cursor: usize) -> usize {
        self.units
            .iter()
            .take_while(|u| u.at < cursor)
            .map(|u| u.width)
            .sum()
    }

    /// The byte offset at cell `column`: before the unit that column falls in, or the row's end
    /// when `last` (the line's last row), else before its last unit (the row's end is the next
    /// row's start).
    pub(crate) fn offset_at(&self, column: usize, last: bool) -> usize {
        let mut x = 0;
        for u in &self.units {
            if x + u.width > column {
                return u.at;
            }
            x += u.width;
        }
        match (last, self.units.last()) {
            (false, Some(u)) => u.at,
            _ => self.end,
        }
    }
}

/// The units of the line `text[start..end]` (no line break in it).
fn units(text: &str, start: usize, end: usize, labels: Labels) -> Vec<Unit> {
    let line = &text[start..end];
    let mut out = Vec::with_capacity(line.len());
    let mut buf = [0u8; 4];
    for (i, c) in line.char_indices() {
        let (shown, fold) = match labels(c) {
            Some(label) => (label, true),
            None => (escape::text(c.encode_utf8(&mut buf)), false),
        };
        let width = UnicodeWidthStr::width(shown.as_str());
        out.push(Unit {
            at: start + i,
            shown,
            width,
            fold,
        });
    }
    out
}

/// The rows of the line `text[start..end]` at `width` cells (at least 1): a unit goes on the row
/// while it fits; else the row ends after its last space, the word after it going on to the next
/// row with the unit (a word longer than a row is cut at the cell, a unit wider than a row has
/// one of its own). A line
/// whose last row is full ends with an empty row, where the cursor at its end stands. Always at
/// least one row.
pub(crate) fn line_rows(text: &str, start: usize, end: usize, width: usize, labels: Labels) -> Vec<Row> {
    let width = width.max(1);
    let mut rows = Vec::new();
    let mut row: Vec<Unit> = Vec::new();
    let mut used = 0;
    for u in units(text, start, end, labels) {
        while used + u.width > width && !row.is_empty() {
            // After the row's last space, so that words stay whole; a word longer than a row is
            // cut at the cell.
            let carried = match row.iter().rposition(|x| x.shown == " ") {
                Some(i) if i + 1 < row.len() => row.split_off(i + 1),
                _ => Vec::new(),
            };
            rows.push(make_row(std::mem::replace(&mut row, carried), end));
            used = row.iter().map(|x| x.width).sum();
        }
        used += u.width;
        row.push(u);
    }
    let full = used >= width;
    rows.push(make_row(row, end));
    if full {
        rows.push(make_row(Vec::new(), end));
    }
    rows
}

fn make_row(units: Vec<Unit>, line_end: usize) -> Row {
    let start = units.first().map_or(line_end, |u| u.at);
    Row {
        units,
        start,
        end: line_end,
    }
}

/// Where the line holding byte `at` starts and ends (its line break, or the text's end).
pub(crate) fn line_around(text: &str, at: usize) -> (usize, usize) {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    (start, end)
}

/// The rows of the line `text[start..end]`, each row's `end` set to where the next begins.
pub(crate) fn rows_of(text: &str, start: usize, end: usize, width: usize, labels: Labels) -> Vec<Row> {
    let mut rows = line_rows(text, start, end, width, labels);
    for i in 1..rows.len() {
        let next = rows[i].start;
        rows[i - 1].end = next;
    }
    rows
}

/// Which of `rows` (a line's) the cursor at byte `cursor` stands on, and its cell there.
pub(crate) fn cursor_in(rows: &[Row], cursor: usize) -> (usize, usize) {
    let last = rows.len().saturating_sub(1);
    for (i, r) in rows.iter().enumerate() {
        if cursor < r.end || i == last {
            return (i, r.column_of(cursor));
        }
    }
    (0, 0)
}

/// How many rows `text` takes at `width`, counted up to `max` (a long text costs no more than
/// the rows that show).
pub(crate) fn count_rows(text: &str, width: usize, max: usize, labels: Labels) -> usize {
    let mut n = 0;
    let mut start = 0;
    loop {
        let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        n += line_rows(text, start, end, width, labels).len();
        if n >= max || end == text.len() {
            return n.min(max);
        }
        start = end + 1;
    }
}

/// Where the cursor goes with Up (`up`) or Down from byte `cursor`: the row above or below, at
/// the same cell or the nearest before it; `None` on the first (last) row of the text.
pub(crate) fn vertical(text: &str, cursor: usize, width: usize, up: bool, labels: Labels) -> Option<usize> {
    let (start, end) = line_around(text, cursor);
    let rows = rows_of(text, start, end, width, labels);
    let (r, x) = cursor_in(&rows, cursor);
    let last = rows.len() - 1;
    if up && r > 0 {
        return Some(rows[r - 1].offset_at(x, false));
    }
    if !up && r < last {
        return Some(rows[r + 1].offset_at(x, r + 1 == last));
    }
    if up {
        let above_end = start.checked_sub(1)?;
        let (s, e) = line_around(text, above_end);
        let rows = rows_of(text, s, e, width, labels);
        rows.last().map(|row| row.offset_at(x, true))
    } else {
        if end == text.len() {
            return None;
        }
        let (s, e) = line_around(text, end + 1);
        let rows = rows_of(text, s, e, width, labels);
        rows.first().map(|row| row.offset_at(x, rows.len() == 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: char) -> Option<String> {
        None
    }

    fn shown(rows: &[Row]) -> Vec<String> {
        rows.iter()
            .map(|r| r.units.iter().map(|u| u.shown.as_str()).collect())
            .collect()
    }

    #[test]
    fn a_line_wraps_at_the_cell_and_wide_characters_move_whole() {
        let text = "abcdefgh";
        assert_eq!(shown(&rows_of(text, 0, 8, 3, &none)), ["abc", "def", "gh"]);
        // A full last row leaves a row for the cursor at the end.
        assert_eq!(shown(&rows_of("abcdef", 0, 6, 3, &none)), ["abc", "def", ""]);
        // 3 cells: a wide character does not fit after one, and goes to the next row.
        let cjk = "a漢字b";
        let rows = rows_of(cjk, 0, cjk.len(), 3, &none);
        assert_eq!(shown(&rows), ["a漢", "字b", ""]);
        assert_eq!(cursor_in(&rows, cjk.find('字').unwrap()), (1, 0));
        assert_eq!(cursor_in(&rows, cjk.find('b').unwrap()), (1, 2));
        assert_eq!(cursor_in(&rows, cjk.len()), (2, 0));
        let rows = rows_of("漢字漢", 0, 9, 3, &none);
        assert_eq!(shown(&rows), ["漢", "字", "漢"]);
        assert_eq!(cursor_in(&rows, 9), (2, 2));
    }

    #[test]
    fn words_stay_whole() {
        let text = "ab cd efgh ijklmn";
        let rows = rows_of(text, 0, text.len(), 6, &none);
        assert_eq!(shown(&rows), ["ab cd ", "efgh ", "ijklmn", ""]);
        assert_eq!(cursor_in(&rows, text.find('e').unwrap()), (1, 0));
        assert_eq!(cursor_in(&rows, text.find('d').unwrap()), (0, 4));
    }

    #[test]
    fn up_and_down_move_between_rows_then_lines() {
        let text = "abcdefgh\nxy";
        // The cursor at the end of "gh" (row 2, cell 2).
        let at = text.find('\n').unwrap();
        assert_eq!(vertical(text, at, 3, true, &none), Some(5)); // before "f"
        assert_eq!(vertical(text, 5, 3, true, &none), Some(2)); // before "c"
        assert_eq!(vertical(text, 2, 3, true, &none), None);
        // Down from "gh" to the next line, at its end (shorter).
        assert_eq!(vertical(text, at, 3, false, &none), Some(text.len()));
        assert_eq!(vertical(text, text.len(), 3, false, &none), None);
        // Up from the second line lands on the first line's last row.
        assert_eq!(vertical(text, at + 2, 3, true, &none), Some(7)); // before "h"
                                                                     // Wide characters: a column inside one lands before it.
        let cjk = "漢字漢\nabcd";
        let second = cjk.find('\n').unwrap() + 1;
        assert_eq!(vertical(cjk, second + 1, 4, true, &none), Some(6));
    }

    #[test]
    fn rows_are_counted_up_to_what_shows() {
        assert_eq!(count_rows("", 10, 6, &none), 1);
        assert_eq!(count_rows(&"x".repeat(25), 10, 6, &none), 3);
        assert_eq!(count_rows(&"x".repeat(1000), 10, 6, &none), 6);
        assert_eq!(count_rows("a\nb\nc", 10, 6, &none), 3);
    }
}
