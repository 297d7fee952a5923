//! The input box wraps its text into its width and lays out only the lines around the cursor: it
//! must show what laying out the whole text shows (the reference here), the window on it from its
//! first row while the cursor's row is among the first ones, else ending at the cursor's row.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};

use super::{input_row, input_view};
use crate::escape;
use crate::input::rows;

/// The whole text laid out, then the window taken on it.
fn reference(text: &str, cursor: usize, width: usize, height: usize) -> (Vec<Line<'static>>, usize, usize) {
    let none = |_: char| None;
    let mut all = Vec::new();
    let mut at = None;
    let mut start = 0;
    loop {
        let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let line = rows::rows_of(text, start, end, width, &none);
        if (start..=end).contains(&cursor) && at.is_none() {
            let (r, x) = rows::cursor_in(text, &line, cursor, &none);
            at = Some((all.len() + r, x));
        }
        all.extend(line);
        if end == text.len() {
            break;
        }
        start = end + 1;
    }
    let (g, x) = at.unwrap();
    let first = (g + 1).saturating_sub(height);
    let shown = all
        .iter()
        .skip(first)
        .take(height)
        .map(|&r| input_row(text, r, &none, Style::default()))
        .collect();
    (shown, x.min(width - 1), g - first)
}

fn paint(lines: Vec<Line<'static>>, width: usize, height: usize) -> Buffer {
    let area = Rect::new(0, 0, width as u16, height as u16);
    let mut buf = Buffer::empty(area);
    Paragraph::new(lines).render(area, &mut buf);
    buf
}

/// The rows of a painted buffer, as text.
fn painted(buf: &Buffer) -> Vec<String> {
    let area = buf.area;
    (0..area.height)
        .map(|y| {
            (0..area.width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
        })
        .collect()
}

#[test]
fn shows_what_laying_out_everything_shows() {
    let long = "abcdefghij".repeat(30);
    let texts = [
        String::new(),
        "abc".to_string(),
        "a\nb\n".to_string(),
        "漢字漢字漢字漢字\n漢a字".to_string(),
        "\tx\ty\n\t\t".to_string(),
        "pasted \u{1b}[2J\u{1b}]0;title\u{7} and \u{202e}rtl\r\nnext".to_string(),
        "e\u{301}e\u{301}e\u{301}\u{200b}z".to_string(),
        format!("{long}\n{long}漢\n\n{long}"),
        "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight".to_string(),
    ];
    for text in &texts {
        let cursors: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
        for &cursor in &cursors {
            for width in [1, 2, 3, 7, 40, 118] {
                for height in [1, 2, 6] {
                    let (lines, x, y) = input_view(text, cursor, width, height, &|_| None, Style::default());
                    let (want, wx, wy) = reference(text, cursor, width, height);
                    assert_eq!((x, y), (wx, wy), "{text:?} cursor {cursor} {width}×{height}");
                    assert_eq!(
                        paint(lines, width, height),
                        paint(want, width, height),
                        "{text:?} cursor {cursor} {width}×{height}"
                    );
                }
            }
        }
    }
}

/// Text that fits shows as escaping it shows it, line for line.
#[test]
fn text_that_fits_shows_escaped() {
    let text = "pasted \u{1b}[2J and \u{202e}rtl\n\tx 漢字";
    let (lines, _, _) = input_view(text, 0, 60, 6, &|_| None, Style::default());
    let want: Vec<String> = escape::text(text).split('\n').map(str::to_string).collect();
    let got: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    assert_eq!(got, want);
}

/// A prompt longer than the box wraps: its start stays in sight (it used to scroll sideways).
#[test]
fn a_long_prompt_wraps_and_its_start_shows() {
    let text: String = (0..=20).map(|i| format!("word{i:02} ")).collect::<String>();
    let text = text.trim_end();
    let (lines, x, y) = input_view(text, text.len(), 40, 6, &|_| None, Style::default());
    let rows = painted(&paint(lines, 40, 6));
    assert!(rows[0].starts_with("word00 word01"), "{rows:#?}");
    assert!(rows.iter().any(|r| r.contains("word20")), "{rows:#?}");
    // The cursor after "word20", on the last row of text.
    let last = rows.iter().rposition(|r| !r.trim().is_empty()).unwrap();
    assert_eq!((x, y), (rows[last].trim_end().chars().count(), last));
}

/// Wide characters take two cells: the cursor stands on the cell after them, and one that does
/// not fit at a row's end starts the next row.
#[test]
fn the_cursor_counts_wide_characters_as_two_cells() {
    let text = "漢字漢字漢";
    // 5 cells: two wide characters a row, the fifth cell left empty.
    let (lines, x, y) = input_view(text, text.len(), 5, 6, &|_| None, Style::default());
    let rows: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    assert_eq!(rows, ["漢字", "漢字", "漢"]);
    assert_eq!((x, y), (2, 2));
    let before_third = text.char_indices().nth(2).unwrap().0;
    let (_, x, y) = input_view(text, before_third, 5, 6, &|_| None, Style::default());
    assert_eq!((x, y), (0, 1));
}
