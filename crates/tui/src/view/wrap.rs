//! Cutting styled lines into terminal rows of a given width (by cell; wide characters count two).
//! Rows break after a space when the row has one, so words stay whole; a word longer than a row
//! is cut at the cell.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// A logical line: spans of already-escaped text with their styles.
pub type Spans = Vec<(String, Style)>;

/// One character, the span it came from and its width.
#[derive(Clone, Copy)]
struct Cell {
    c: char,
    span: u32,
    width: u8,
}

/// Wraps `spans` into rows at most `width` cells wide; continuation rows start with `indent` spaces.
pub fn wrap(spans: &Spans, width: usize, indent: usize) -> Vec<Line<'static>> {
    wrap_breaking(spans, width, indent, false)
}

/// Wraps a value such as a path or a command into rows at most `width` cells wide: a row may also
/// end after a `/`, so that a long path breaks between its names rather than inside one.
pub fn wrap_value(spans: &Spans, width: usize) -> Vec<Line<'static>> {
    wrap_breaking(spans, width, 0, true)
}

/// [`wrap`], a row also ending after a `/` when `slash`.
fn wrap_breaking(spans: &Spans, width: usize, indent: usize, slash: bool) -> Vec<Line<'static>> {
    let width = width.max(1);
    // Most lines fit: one row, the spans as they are (only characters wider than a row, which
    // cannot show, would need the slow path).
    let mut total = 0;
    let mut fits = true;
    'measure: for (text, _) in spans {
        for c in text.chars() {
            let w = c.width().unwrap_or(0);
            total += w;
            if total > width || w > width {
                fits = false;
                break 'measure;
            }
        }
    }
    if fits {
        return vec![Line::from(
            spans
                .iter()
                .filter(|(text, _)| !text.is_empty())
                .map(|(text, style)| Span::styled(text.clone(), *style))
                .collect::<Vec<_>>(),
        )];
    }
    let indent = if indent * 2 > width { 0 } else { indent };
    let mut cells: Vec<Cell> = Vec::with_capacity(spans.iter().map(|(t, _)| t.len()).sum());
    for (i, (text, _)) in spans.iter().enumerate() {
        for c in text.chars() {
            let w = c.width().unwrap_or(0);
            // A character wider than the whole row cannot be shown.
            if w <= width {
                cells.push(Cell {
                    c,
                    span: i as u32,
                    width: w as u8,
                });
            }
        }
    }
    let mut rows = Vec::new();
    let mut start = 0; // the current row's first cell
    let mut used = 0; // cells used on the current row, its indent included
    let mut lead = 0; // the current row's indent
                      // Where the current row may end last (before a space, or after a `/` when `slash`).
    let mut space: Option<usize> = None;
    let mut i = 0;
    while i < cells.len() {
        let cell = cells[i];
        if used + usize::from(cell.width) > width && i > start {
            // Break after the last space when there is one (not the row's first cell), else here.
            let cut = match space {
                Some(s) if s > start && cell.c != ' ' => s,
                _ => i,
            };
            let mut end = cut;
            while end > start + 1 && cells[end - 1].c == ' ' {
                end -= 1;
            }
            rows.push(row(spans, lead, &cells[start..end]));
            start = cut;
            // A space where the row breaks is not carried to the next row.
            while start < cells.len() && cells[start].c == ' ' {
                start += 1;
            }
            lead = indent;
            used = lead
                + cells[start..i.max(start)]
                    .iter()
                    .map(|c| usize::from(c.width))
                    .sum::<usize>();
            space = None;
            i = i.max(start);
            continue;
        }
        if cell.c == ' ' {
            space = Some(i);
        } else if slash && cell.c == '/' {
            space = Some(i + 1);
        }
        used += usize::from(cell.width);
        i += 1;
    }
    rows.push(row(spans, lead, &cells[start..]));
    rows
}

/// A row: `lead` spaces, then `cells` as spans, one per run of cells from one span.
fn row(spans: &Spans, lead: usize, cells: &[Cell]) -> Line<'static> {
    let mut out: Vec<Span<'static>> = Vec::new();
    if lead > 0 {
        out.push(Span::raw(" ".repeat(lead)));
    }
    let style = |i: u32| spans.get(i as usize).map(|(_, s)| *s).unwrap_or_default();
    let mut text = String::new();
    let mut from = cells.first().map_or(0, |c| c.span);
    for cell in cells {
        if cell.span != from && !text.is_empty() {
            out.push(Span::styled(std::mem::take(&mut text), style(from)));
        }
        from = cell.span;
        text.push(cell.c);
    }
    if !text.is_empty() {
        out.push(Span::styled(text, style(from)));
    }
    Line::from(out)
}

/// Cuts an escaped single-line string to at most `max` cells, with an ellipsis when cut.
pub fn fit(s: &str, max: usize) -> String {
    let total: usize = s.chars().map(|c| c.width().unwrap_or(0)).sum();
    if total <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > max {
            break;
        }
        out.push(c);
        used += w;
    }
    if max > 0 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_by_cell() {
        let rows = wrap(&vec![("abcdef".to_string(), Style::default())], 4, 2);
        let text: Vec<String> = rows.iter().map(|l| l.to_string()).collect();
        assert_eq!(text, ["abcd", "  ef"]);
        let rows = wrap(&vec![("漢字漢".to_string(), Style::default())], 3, 0);
        assert_eq!(rows.len(), 3);
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
    }

    fn texts(s: &str, width: usize, indent: usize) -> Vec<String> {
        wrap(&vec![(s.to_string(), Style::default())], width, indent)
            .iter()
            .map(|l| l.to_string())
            .collect()
    }

    #[test]
    fn keeps_words_whole() {
        assert_eq!(texts("the quick brown fox", 10, 0), ["the quick", "brown fox"]);
        assert_eq!(
            texts("the quick brown fox", 10, 2),
            ["the quick", "  brown", "  fox"]
        );
        // A word longer than a row is cut at the cell.
        assert_eq!(texts("a abcdefghij", 5, 0), ["a", "abcde", "fghij"]);
        // Spaces at a break are dropped, not carried.
        assert_eq!(texts("abcd    efgh", 4, 0), ["abcd", "efgh"]);
        assert_eq!(texts("", 4, 0), [""]);
        // Styles survive the cut.
        let rows = wrap(
            &vec![
                ("ab ".to_string(), Style::default()),
                (
                    "cd".to_string(),
                    Style::default().add_modifier(ratatui::style::Modifier::BOLD),
                ),
            ],
            4,
            0,
        );
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[1].spans[0].style,
            Style::default().add_modifier(ratatui::style::Modifier::BOLD)
        );
    }

    #[test]
    fn a_value_breaks_after_a_slash() {
        let rows = |s: &str, width| -> Vec<String> {
            wrap_value(&vec![(s.to_string(), Style::default())], width)
                .iter()
                .map(|l| l.to_string())
                .collect()
        };
        assert_eq!(
            rows("/work/home/sessions/01a24e3b.jsonl", 24),
            ["/work/home/sessions/", "01a24e3b.jsonl"]
        );
        // A space is still a place to break; a name longer than the row is cut at the cell.
        assert_eq!(rows("a b/cd", 3), ["a", "b/", "cd"]);
        assert_eq!(rows("abcdefgh", 4), ["abcd", "efgh"]);
        assert_eq!(rows("abc/", 3), ["abc", "/"]);
    }

    #[test]
    fn never_wider_than_the_row() {
        let samples = ["漢字 漢字 abc", "  lead  spaces  ", "x y z w v u", "ab cd ef 漢"];
        for s in samples {
            for width in 1..12 {
                for indent in [0, 2, 4] {
                    for row in wrap(&vec![(s.to_string(), Style::default())], width, indent) {
                        let w: usize = row.spans.iter().map(|sp| sp.width()).sum();
                        assert!(w <= width, "{s:?} at {width}/{indent}: {row:?}");
                    }
                }
            }
        }
    }
}
