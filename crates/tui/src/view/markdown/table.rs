//! Tables as aligned text: columns as wide as their widest cell, ` │ ` between them, a rule under
//! the header. A table wider than the room is narrowed: the widest columns give up cells first
//! and their cells wrap inside them, so nothing is cut. Too narrow even for that (fewer than
//! three cells a column), each row is one line of cells joined by ` │ `, wrapped.

use pulldown_cmark::Alignment;
use ratatui::text::Line;
use unicode_width::UnicodeWidthStr;

use crate::view::wrap::{wrap, Spans};
use crate::view::Theme;

/// Between two columns.
const SEP: &str = " │ ";

/// A table being read: its rows of cells (each cell its styled spans), the header's first.
#[derive(Debug, Default)]
pub(super) struct Table {
    aligns: Vec<Alignment>,
    rows: Vec<Vec<Spans>>,
    /// Rows of the header (0 or 1).
    head: usize,
}

fn width_of(spans: &Spans) -> usize {
    spans.iter().map(|(s, _)| s.width()).sum()
}

fn spans_of(line: Line<'static>) -> Spans {
    line.spans
        .into_iter()
        .map(|s| (s.content.into_owned(), s.style))
        .collect()
}

impl Table {
    pub(super) fn new(aligns: Vec<Alignment>) -> Table {
        Table {
            aligns,
            ..Table::default()
        }
    }

    /// A row starts (`head`: the header's).
    pub(super) fn row(&mut self, head: bool) {
        self.rows.push(Vec::new());
        if head {
            self.head = self.rows.len();
        }
    }

    /// A cell of the current row ends with these spans.
    pub(super) fn cell(&mut self, spans: Spans) {
        if self.rows.is_empty() {
            self.rows.push(Vec::new());
        }
        if let Some(row) = self.rows.last_mut() {
            row.push(spans);
        }
    }

    /// The table's lines, each at most `room` cells wide when `room` allows the columns three
    /// cells each (else lines to wrap).
    pub(super) fn lines(mut self, room: usize, t: Theme) -> Vec<Spans> {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        if columns == 0 {
            return Vec::new();
        }
        for row in &mut self.rows {
            row.resize(columns, Vec::new());
        }
        let seps = SEP.width() * (columns - 1);
        if room < seps + 3 * columns {
            return self.joined(t);
        }
        let natural: Vec<usize> = (0..columns)
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| width_of(&r[c]))
                    .max()
                    .unwrap_or(0)
                    .max(1)
            })
            .collect();
        let widths = fit_columns(&natural, room - seps);
        let mut out = Vec::new();
        for (i, row) in self.rows.iter().enumerate() {
            let cells: Vec<Vec<Spans>> = row
                .iter()
                .zip(&widths)
                .map(|(cell, &w)| wrap(cell, w, 0).into_iter().map(spans_of).collect())
                .collect();
            let height = cells.iter().map(Vec::len).max().unwrap_or(1);
            for k in 0..height {
                let mut line: Spans = Vec::new();
                for (c, cell) in cells.iter().enumerate() {
                    if c > 0 {
                        line.push((SEP.to_string(), t.dim()));
                    }
                    let part = cell.get(k).cloned().unwrap_or_default();
                    let pad = widths[c].saturating_sub(width_of(&part));
                    let (before, after) = match self.aligns.get(c) {
                        Some(Alignment::Right) => (pad, 0),
                        Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                        _ => (0, pad),
                    };
                    line.push((" ".repeat(before), t.text()));
                    line.extend(part);
                    // The last column needs no padding after it.
                    if c + 1 < columns {
                        line.push((" ".repeat(after), t.text()));
                    }
                }
                out.push(line);
            }
            if i + 1 == self.head {
                let rule: Vec<String> = widths.iter().map(|&w| "─".repeat(w)).collect();
                out.push(vec![(rule.join("─┼─"), t.dim())]);
            }
        }
        out
    }

    /// Each row as one line, its cells joined (for a room too narrow for columns).
    fn joined(self, t: Theme) -> Vec<Spans> {
        self.rows
            .into_iter()
            .map(|row| {
                let mut line: Spans = Vec::new();
                for (c, cell) in row.into_iter().enumerate() {
                    if c > 0 {
                        line.push((SEP.to_string(), t.dim()));
                    }
                    line.extend(cell);
                }
                line
            })
            .collect()
    }
}

/// Column widths summing to at most `room` (each at least 3 when `room` allows it): the natural
/// widths when they fit, else the narrow columns keep theirs and the others share the rest.
fn fit_columns(natural: &[usize], room: usize) -> Vec<usize> {
    if natural.iter().sum::<usize>() <= room {
        return natural.to_vec();
    }
    let mut widths = vec![0; natural.len()];
    let mut order: Vec<usize> = (0..natural.len()).collect();
    order.sort_by_key(|&c| natural[c]);
    let mut left = room;
    for (k, &c) in order.iter().enumerate() {
        let share = left / (natural.len() - k);
        widths[c] = natural[c].min(share).max(3.min(left));
        left = left.saturating_sub(widths[c]);
    }
    widths
}

#[cfg(test)]
mod tests {
    use super::fit_columns;

    #[test]
    fn columns_share_the_room() {
        assert_eq!(fit_columns(&[3, 4], 20), [3, 4]);
        assert_eq!(fit_columns(&[3, 40, 30], 33), [3, 15, 15]);
        assert_eq!(fit_columns(&[10, 10], 12), [6, 6]);
    }
}
