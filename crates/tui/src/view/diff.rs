//! A unified diff the controller computed, drawn with line numbers: each line's number in the old
//! file and in the new one, counted from its hunk's header (`@@ -a,b +c,d @@`). Rendering only:
//! nothing here compares texts.

use ratatui::text::Line;

use crate::escape;
use crate::view::wrap::wrap;
use crate::view::Theme;

/// What a line of a unified diff is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A hunk's header.
    Hunk,
    /// A line both sides have.
    Context,
    /// A line only the old side has.
    Removed,
    /// A line only the new side has.
    Added,
    /// Anything else (`\ No newline at end of file`).
    Note,
}

/// One line of a diff with its line numbers (`None` where that side has no such line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Numbered<'a> {
    /// What it is.
    pub kind: Kind,
    /// Its number in the old file.
    pub old: Option<u64>,
    /// Its number in the new file.
    pub new: Option<u64>,
    /// Its text, without the leading ` `, `-` or `+` and without the line feed.
    pub text: &'a str,
}

/// The first lines of each side a hunk header names: `@@ -12,3 +14,4 @@` → (12, 14). A count of 0
/// names the line before (`-0,0`); no line of that side follows then.
fn starts(header: &str) -> Option<(u64, u64)> {
    let mut parts = header.strip_prefix("@@ ")?.split(' ');
    let side = |p: Option<&str>, sign: char| -> Option<u64> {
        p?.strip_prefix(sign)?.split(',').next()?.parse().ok()
    };
    Some((side(parts.next(), '-')?, side(parts.next(), '+')?))
}

/// The lines of `diff` with their numbers. Lines are split at line feeds only: a carriage return
/// before one is part of the line (and shows escaped).
pub fn numbered(diff: &str) -> Vec<Numbered<'_>> {
    let (mut old, mut new) = (0u64, 0u64);
    let mut lines: Vec<&str> = diff.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    lines
        .into_iter()
        .map(|l| {
            let (kind, o, n, text) = match l.as_bytes().first() {
                Some(b'@') if l.starts_with("@@") => {
                    if let Some((a, c)) = starts(l) {
                        (old, new) = (a, c);
                    }
                    (Kind::Hunk, None, None, l)
                }
                Some(b' ') => {
                    let at = (Some(old), Some(new));
                    (old, new) = (old + 1, new + 1);
                    (Kind::Context, at.0, at.1, &l[1..])
                }
                Some(b'-') => {
                    old += 1;
                    (Kind::Removed, Some(old - 1), None, &l[1..])
                }
                Some(b'+') => {
                    new += 1;
                    (Kind::Added, None, Some(new - 1), &l[1..])
                }
                _ => (Kind::Note, None, None, l),
            };
            Numbered {
                kind,
                old: o,
                new: n,
                text,
            }
        })
        .collect()
}

/// `diff` as rows `width` cells wide: `  old   new - text`, coloured by kind (the sign carries the
/// meaning without colour), at most `max` lines of it then how many more there are.
pub fn rows(diff: &str, width: usize, max: usize, t: Theme) -> Vec<Line<'static>> {
    let all = numbered(diff);
    let num = |n: Option<u64>| n.map_or(String::new(), |n| n.to_string());
    let mut out = Vec::new();
    for l in all.iter().take(max) {
        let text = escape::text(l.text).replace('\n', "\\n");
        let (sign, style) = match l.kind {
            Kind::Hunk => {
                out.extend(wrap(&vec![(format!("    {text}"), t.dim())], width, 6));
                continue;
            }
            Kind::Note => {
                out.extend(wrap(&vec![(format!("    {text}"), t.dim())], width, 6));
                continue;
            }
            Kind::Context => (' ', t.text()),
            Kind::Removed => ('-', t.error()),
            Kind::Added => ('+', t.ok()),
        };
        let gutter = format!("    {:>5} {:>5} {sign} ", num(l.old), num(l.new));
        out.extend(wrap(&vec![(gutter, t.dim()), (text, style)], width, 18));
    }
    if all.len() > max {
        out.push(Line::styled(
            format!("    … {} more lines", all.len() - max),
            t.dim(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nums(diff: &str) -> Vec<(Kind, Option<u64>, Option<u64>, &str)> {
        numbered(diff)
            .into_iter()
            .map(|l| (l.kind, l.old, l.new, l.text))
            .collect()
    }

    #[test]
    fn line_numbers_come_from_the_hunk_headers() {
        let d = "@@ -3,4 +3,4 @@\n a\n-b\n+B\n+C\n c\n@@ -20 +21,0 @@\n-z\n\\ No newline at end of file\n";
        assert_eq!(
            nums(d),
            vec![
                (Kind::Hunk, None, None, "@@ -3,4 +3,4 @@"),
                (Kind::Context, Some(3), Some(3), "a"),
                (Kind::Removed, Some(4), None, "b"),
                (Kind::Added, None, Some(4), "B"),
                (Kind::Added, None, Some(5), "C"),
                (Kind::Context, Some(5), Some(6), "c"),
                (Kind::Hunk, None, None, "@@ -20 +21,0 @@"),
                (Kind::Removed, Some(20), None, "z"),
                (Kind::Note, None, None, "\\ No newline at end of file"),
            ]
        );
    }

    #[test]
    fn a_new_file_counts_from_one_and_a_carriage_return_stays_in_its_line() {
        assert_eq!(
            nums("@@ -0,0 +1,2 @@\n+x\r\n+y\n"),
            vec![
                (Kind::Hunk, None, None, "@@ -0,0 +1,2 @@"),
                (Kind::Added, None, Some(1), "x\r"),
                (Kind::Added, None, Some(2), "y"),
            ]
        );
        assert_eq!(nums(""), vec![]);
        // A header that does not parse keeps the numbers counting on.
        assert_eq!(nums("@@ odd @@\n x\n")[1].1, Some(0));
    }

    #[test]
    fn rows_show_both_numbers_and_fold_after_the_most_asked() {
        let t = Theme::new(true);
        let text = |rows: Vec<Line<'static>>| -> Vec<String> {
            rows.iter()
                .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
                .collect()
        };
        let d = "@@ -1,2 +1,2 @@\n-a\r\n+b\r\n c\n";
        assert_eq!(
            text(rows(d, 80, 10, t)),
            vec![
                "    @@ -1,2 +1,2 @@",
                "        1       - a\\r",
                "              1 + b\\r",
                "        2     2   c",
            ]
        );
        assert_eq!(
            text(rows(d, 80, 2, t)),
            vec![
                "    @@ -1,2 +1,2 @@",
                "        1       - a\\r",
                "    … 2 more lines"
            ]
        );
    }
}
