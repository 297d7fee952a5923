//! The input box escapes only the lines that show: it must show what escaping the whole text
//! showed (the algorithm before, kept here as the reference).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};
use unicode_width::UnicodeWidthStr;

use super::input_view;
use crate::escape;

/// The input box as it was drawn before: the whole text escaped and split at every frame.
fn reference(text: &str, cursor: usize, width: usize, height: usize) -> (Vec<Line<'static>>, usize, usize) {
    let lines: Vec<String> = escape::text(text).split('\n').map(str::to_string).collect();
    let before = escape::text(&text[..cursor]);
    let cursor_line = before.matches('\n').count();
    let cursor_col = before.rsplit('\n').next().map_or(0, UnicodeWidthStr::width);
    let first = (cursor_line + 1).saturating_sub(height);
    let col_skip = (cursor_col + 1).saturating_sub(width);
    let shown = lines
        .iter()
        .skip(first)
        .take(height)
        .map(|l| Line::raw(l.chars().skip(col_skip).collect::<String>()))
        .collect();
    let x = (cursor_col - col_skip).min(width.saturating_sub(1));
    let y = (cursor_line - first).min(height.saturating_sub(1));
    (shown, x, y)
}

fn paint(lines: Vec<Line<'static>>, width: usize, height: usize) -> Buffer {
    let area = Rect::new(0, 0, width as u16, height as u16);
    let mut buf = Buffer::empty(area);
    Paragraph::new(lines).render(area, &mut buf);
    buf
}

#[test]
fn shows_what_escaping_everything_showed() {
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
