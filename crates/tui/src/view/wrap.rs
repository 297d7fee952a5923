//! Cutting styled lines into terminal rows of a given width (by cell; wide characters count two).

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// A logical line: spans of already-escaped text with their styles.
pub type Spans = Vec<(String, Style)>;

/// Wraps `spans` into rows at most `width` cells wide; continuation rows start with `indent` spaces.
pub fn wrap(spans: &Spans, width: usize, indent: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    let indent = if indent >= width { 0 } else { indent };
    let mut rows = Vec::new();
    let mut row: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    for (text, style) in spans {
        let mut chunk = String::new();
        for c in text.chars() {
            let w = c.width().unwrap_or(0);
            if used + w > width && used > 0 {
                if !chunk.is_empty() {
                    row.push(Span::styled(std::mem::take(&mut chunk), *style));
                }
                rows.push(Line::from(std::mem::take(&mut row)));
                used = indent;
                if indent > 0 {
                    row.push(Span::raw(" ".repeat(indent)));
                }
            }
            if w > width {
                continue; // a character wider than the whole row cannot be shown
            }
            chunk.push(c);
            used += w;
        }
        if !chunk.is_empty() {
            row.push(Span::styled(chunk, *style));
        }
    }
    rows.push(Line::from(row));
    rows
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
}
