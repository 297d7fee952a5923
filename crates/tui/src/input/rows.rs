//! The input's lines soft-wrapped into the rows of the input box: each character as it shows
//! (escaped, a fold as its label) and the cells it takes (a wide character two), rows broken
//! after a space so that words stay whole (a word longer than a row is cut at the cell), and
//! where the cursor stands among them. The view draws these rows and Up/Down move between them,
//! so both agree on every row and column. A row is a range of the text's bytes: laying out a
//! long line allocates nothing per character, and only the rows that show are drawn.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::escape;

/// What a fold's marker shows, `None` for any other character.
pub(crate) type Labels<'a> = &'a dyn Fn(char) -> Option<String>;

/// One row of the input box: the bytes of the text it shows, `start..end` (`end` is where the
/// next row starts, or the line's end; an empty row stands at the line's end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Row {
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// The cells `c` takes as it shows: a fold's label, an escaped character, or the character.
fn cells(c: char, labels: Labels) -> usize {
    if c.is_ascii_graphic() || c == ' ' {
        return 1;
    }
    if let Some(label) = labels(c) {
        return UnicodeWidthStr::width(label.as_str());
    }
    if c.is_control() || escape::invisible(c) {
        let mut buf = [0u8; 4];
        return UnicodeWidthStr::width(escape::text(c.encode_utf8(&mut buf)).as_str());
    }
    c.width().unwrap_or(0)
}

/// What `row` of `text` shows: runs of escaped text (`false`) and folds' labels (`true`).
pub(crate) fn row_pieces(text: &str, row: Row, labels: Labels) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut plain = String::new();
    let mut buf = [0u8; 4];
    for c in text[row.start..row.end].chars() {
        match labels(c) {
            Some(label) => {
                if !plain.is_empty() {
                    out.push((std::mem::take(&mut plain), false));
                }
                out.push((label, true));
            }
            None => plain.push_str(&escape::text(c.encode_utf8(&mut buf))),
        }
    }
    if !plain.is_empty() {
        out.push((plain, false));
    }
    out
}

/// The rows of the line `text[start..end]` at `width` cells (at least 1), at most `limit` of
/// them: a character goes on the row while it fits; else the row ends after its last space, the
/// word after it going on to the next row (a word longer than a row is cut at the cell, a
/// character wider than a row has one of its own). A line whose last row is full ends with an
/// empty row, where the cursor at its end stands. Always at least one row.
fn line_rows(text: &str, start: usize, end: usize, width: usize, labels: Labels, limit: usize) -> Vec<Row> {
    let width = width.max(1);
    let mut rows = Vec::new();
    let mut row_start = start;
    let mut used = 0;
    // Where the row could end after its last space, and the cells up to there.
    let mut after_space: Option<(usize, usize)> = None;
    for (i, c) in text[start..end].char_indices() {
        let at = start + i;
        let w = cells(c, labels);
        while used + w > width && row_start < at {
            let cut = match after_space {
                Some((cut, before)) if cut < at => {
                    used -= before;
                    cut
                }
                _ => {
                    used = 0;
                    at
                }
            };
            rows.push(Row {
                start: row_start,
                end: cut,
            });
            row_start = cut;
            after_space = None;
            if rows.len() >= limit {
                return rows;
            }
        }
        used += w;
        if c == ' ' {
            after_space = Some((at + 1, used));
        }
    }
    rows.push(Row {
        start: row_start,
        end,
    });
    if used >= width && rows.len() < limit {
        rows.push(Row { start: end, end });
    }
    rows
}

/// Where the line holding byte `at` starts and ends (its line break, or the text's end).
pub(crate) fn line_around(text: &str, at: usize) -> (usize, usize) {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    (start, end)
}

/// The rows of the line `text[start..end]` at `width` cells.
pub(crate) fn rows_of(text: &str, start: usize, end: usize, width: usize, labels: Labels) -> Vec<Row> {
    line_rows(text, start, end, width, labels, usize::MAX)
}

/// The cell where the cursor at byte `cursor` stands on `row`.
fn column_of(text: &str, row: Row, cursor: usize, labels: Labels) -> usize {
    text[row.start..cursor.clamp(row.start, row.end)]
        .chars()
        .map(|c| cells(c, labels))
        .sum()
}

/// The byte offset at cell `column` of `row`: before the character that column falls in, or the
/// row's end when `last` (the line's last row), else before its last character (the row's end
/// is the next row's start).
fn offset_at(text: &str, row: Row, column: usize, last: bool, labels: Labels) -> usize {
    let mut x = 0;
    let mut before_last = None;
    for (i, c) in text[row.start..row.end].char_indices() {
        let w = cells(c, labels);
        if x + w > column {
            return row.start + i;
        }
        x += w;
        before_last = Some(row.start + i);
    }
    match (last, before_last) {
        (false, Some(at)) => at,
        _ => row.end,
    }
}

/// Which of `rows` (a line's) the cursor at byte `cursor` stands on, and its cell there.
pub(crate) fn cursor_in(text: &str, rows: &[Row], cursor: usize, labels: Labels) -> (usize, usize) {
    let last = rows.len().saturating_sub(1);
    for (i, &r) in rows.iter().enumerate() {
        if cursor < r.end || i == last {
            return (i, column_of(text, r, cursor, labels));
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
        n += line_rows(text, start, end, width, labels, max.saturating_sub(n).max(1)).len();
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
    let (r, x) = cursor_in(text, &rows, cursor, labels);
    let last = rows.len() - 1;
    if up && r > 0 {
        return Some(offset_at(text, rows[r - 1], x, false, labels));
    }
    if !up && r < last {
        return Some(offset_at(text, rows[r + 1], x, r + 1 == last, labels));
    }
    if up {
        let above_end = start.checked_sub(1)?;
        let (s, e) = line_around(text, above_end);
        let rows = rows_of(text, s, e, width, labels);
        rows.last().map(|&row| offset_at(text, row, x, true, labels))
    } else {
        if end == text.len() {
            return None;
        }
        let (s, e) = line_around(text, end + 1);
        let rows = rows_of(text, s, e, width, labels);
        rows.first()
            .map(|&row| offset_at(text, row, x, rows.len() == 1, labels))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: char) -> Option<String> {
        None
    }

    fn shown(text: &str, rows: &[Row]) -> Vec<String> {
        rows.iter()
            .map(|&r| row_pieces(text, r, &none).into_iter().map(|(p, _)| p).collect())
            .collect()
    }

    #[test]
    fn a_line_wraps_at_the_cell_and_wide_characters_move_whole() {
        let text = "abcdefgh";
        assert_eq!(shown(text, &rows_of(text, 0, 8, 3, &none)), ["abc", "def", "gh"]);
        // A full last row leaves a row for the cursor at the end.
        assert_eq!(
            shown("abcdef", &rows_of("abcdef", 0, 6, 3, &none)),
            ["abc", "def", ""]
        );
        // 3 cells: a wide character does not fit after one, and goes to the next row.
        let cjk = "a漢字b";
        let rows = rows_of(cjk, 0, cjk.len(), 3, &none);
        assert_eq!(shown(cjk, &rows), ["a漢", "字b", ""]);
        assert_eq!(cursor_in(cjk, &rows, cjk.find('字').unwrap(), &none), (1, 0));
        assert_eq!(cursor_in(cjk, &rows, cjk.find('b').unwrap(), &none), (1, 2));
        assert_eq!(cursor_in(cjk, &rows, cjk.len(), &none), (2, 0));
        let rows = rows_of("漢字漢", 0, 9, 3, &none);
        assert_eq!(shown("漢字漢", &rows), ["漢", "字", "漢"]);
        assert_eq!(cursor_in("漢字漢", &rows, 9, &none), (2, 2));
    }

    #[test]
    fn words_stay_whole() {
        let text = "ab cd efgh ijklmn";
        let rows = rows_of(text, 0, text.len(), 6, &none);
        assert_eq!(shown(text, &rows), ["ab cd ", "efgh ", "ijklmn", ""]);
        assert_eq!(cursor_in(text, &rows, text.find('e').unwrap(), &none), (1, 0));
        assert_eq!(cursor_in(text, &rows, text.find('d').unwrap(), &none), (0, 4));
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
