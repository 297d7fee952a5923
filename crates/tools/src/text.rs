//! Text handling shared by the text tools: binary detection, exact-match edits that keep every
//! byte outside the replaced span, and the "closest lines" shown when an edit does not match.
//!
//! A file is text when its first 8 KiB hold no NUL byte and the whole file is valid UTF-8. Text
//! tools refuse anything else instead of guessing an encoding: an edit that re-encoded a file would
//! change bytes the model never saw.

use crate::error::{Result, ToolError};

/// How many leading bytes are searched for a NUL byte.
pub(crate) const SNIFF_BYTES: usize = 8192;

/// The longest line shown in an error message or listing, in characters.
const SHOWN_LINE_CHARS: usize = 200;

/// Why `bytes` are not text, or `None` when they are.
pub(crate) fn binary_reason(bytes: &[u8]) -> Option<String> {
    let head = &bytes[..bytes.len().min(SNIFF_BYTES)];
    if let Some(at) = head.iter().position(|b| *b == 0) {
        return Some(format!("a NUL byte at offset {at}"));
    }
    match std::str::from_utf8(bytes) {
        Ok(_) => None,
        Err(e) => Some(format!("invalid UTF-8 at byte {}", e.valid_up_to())),
    }
}

/// `bytes` as text, or [`ToolError::Binary`] naming `shown`.
pub(crate) fn as_text<'a>(bytes: &'a [u8], shown: &str) -> Result<&'a str> {
    if let Some(why) = binary_reason(bytes) {
        return Err(ToolError::Binary {
            path: shown.to_string(),
            why,
        });
    }
    std::str::from_utf8(bytes).map_err(|e| ToolError::Binary {
        path: shown.to_string(),
        why: format!("invalid UTF-8 at byte {}", e.valid_up_to()),
    })
}

/// `line` cut to [`SHOWN_LINE_CHARS`] characters, without its line ending.
pub(crate) fn shown_line(line: &str) -> String {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let mut chars = line.char_indices();
    match chars.nth(SHOWN_LINE_CHARS) {
        Some((cut, _)) => format!("{}… ({} chars)", &line[..cut], line.chars().count()),
        None => line.to_string(),
    }
}

/// One replacement of an edit tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Edit {
    /// The exact text to find.
    pub old: String,
    /// Its replacement.
    pub new: String,
    /// Replace every occurrence instead of requiring exactly one.
    pub replace_all: bool,
}

/// What [`apply`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Applied {
    /// The new text.
    pub text: String,
    /// How many occurrences were replaced.
    pub count: usize,
    /// The 1-based line of the first replacement (the same in the old and the new text).
    pub first_line: usize,
}

/// Applies `edit` to `text`. `which` (` (edit 2 of 3)` or empty) goes into error messages.
///
/// The match is exact. One accommodation: when the file uses CRLF line endings and `old` has bare
/// `\n` but no `\r\n`, both strings are retried with `\r\n`, so a model that never sees carriage
/// returns can still edit such a file without turning its line endings into LF.
pub(crate) fn apply(text: &str, edit: &Edit, path: &str, which: &str) -> Result<Applied> {
    let mut count = text.matches(edit.old.as_str()).count();
    let (mut old, mut new) = (edit.old.clone(), edit.new.clone());
    if count == 0 && text.contains("\r\n") && old.contains('\n') && !old.contains("\r\n") {
        let crlf_old = old.replace('\n', "\r\n");
        let crlf_count = text.matches(crlf_old.as_str()).count();
        if crlf_count > 0 {
            old = crlf_old;
            if !new.contains("\r\n") {
                new = new.replace('\n', "\r\n");
            }
            count = crlf_count;
        }
    }
    if count == 0 {
        return Err(ToolError::NoMatch {
            path: path.to_string(),
            which: which.to_string(),
            nearest: nearest(text, &edit.old),
        });
    }
    if count > 1 && !edit.replace_all {
        return Err(ToolError::MultipleMatches {
            path: path.to_string(),
            which: which.to_string(),
            count,
            lines: match_lines(text, &old),
        });
    }
    let first_line = match_lines(text, &old).first().copied().unwrap_or(1);
    let (text, count) = if edit.replace_all {
        (text.replace(old.as_str(), &new), count)
    } else {
        (text.replacen(old.as_str(), &new, 1), 1)
    };
    Ok(Applied {
        text,
        count,
        first_line,
    })
}

/// The 1-based line where each non-overlapping match of `needle` starts.
fn match_lines(text: &str, needle: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let (mut line, mut pos) = (1, 0);
    for (at, _) in text.match_indices(needle) {
        line += text.as_bytes()[pos..at].iter().filter(|b| **b == b'\n').count();
        pos = at;
        out.push(line);
    }
    out
}

/// Renders the lines of `text` closest to `needle`'s first non-blank line: the best candidate as a
/// block as long as `needle` (at most 8 lines), and the line numbers of up to three others.
fn nearest(text: &str, needle: &str) -> String {
    let needle_lines: Vec<&str> = needle.lines().collect();
    let Some((offset, probe)) = needle_lines
        .iter()
        .enumerate()
        .find(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i, l.trim()))
    else {
        return String::new();
    };
    let lines: Vec<&str> = text.lines().collect();
    let probe_grams = bigrams(probe);
    let mut scored: Vec<(f64, usize)> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| (similarity(probe, &probe_grams, l.trim()), i))
        .filter(|(s, _)| *s >= 0.4)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let Some(&(_, best)) = scored.first() else {
        return "\nNo line of the file resembles its first line; read the file again.".into();
    };
    let start = best.saturating_sub(offset);
    let len = needle_lines.len().clamp(1, 8);
    let end = (start + len).min(lines.len());
    let mut out = if end - start > 1 {
        format!("\nThe closest match, lines {}-{}:\n", start + 1, end)
    } else {
        format!("\nThe closest match, line {}:\n", start + 1)
    };
    for (i, l) in lines[start..end].iter().enumerate() {
        out.push_str(&format!("{:>6}\t{}\n", start + i + 1, shown_line(l)));
    }
    let same_but_space = end - start == needle_lines.len()
        && lines[start..end]
            .iter()
            .zip(&needle_lines)
            .all(|(a, b)| a.split_whitespace().eq(b.split_whitespace()));
    if same_but_space {
        out.push_str(
            "These lines differ from old_string only in whitespace or indentation; copy them exactly.\n",
        );
    }
    let others: Vec<String> = scored
        .iter()
        .skip(1)
        .take(3)
        .map(|(_, i)| (i + 1).to_string())
        .collect();
    if !others.is_empty() {
        out.push_str(&format!("Other similar lines: {}.\n", others.join(", ")));
    }
    out.truncate(out.trim_end_matches('\n').len());
    out
}

/// Character bigrams of `s`.
fn bigrams(s: &str) -> Vec<(char, char)> {
    let chars: Vec<char> = s.chars().collect();
    let mut out: Vec<(char, char)> = chars.windows(2).map(|w| (w[0], w[1])).collect();
    out.sort_unstable();
    out
}

/// Dice coefficient over character bigrams (1.0 for equal strings, 0.0 for nothing shared).
fn similarity(probe: &str, probe_grams: &[(char, char)], line: &str) -> f64 {
    if probe == line {
        return 1.0;
    }
    let grams = bigrams(line);
    if probe_grams.is_empty() || grams.is_empty() {
        return 0.0;
    }
    // Both sorted: count the multiset intersection by merging.
    let (mut i, mut j, mut shared) = (0, 0, 0usize);
    while i < probe_grams.len() && j < grams.len() {
        match probe_grams[i].cmp(&grams[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    2.0 * shared as f64 / (probe_grams.len() + grams.len()) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(old: &str, new: &str, all: bool) -> Edit {
        Edit {
            old: old.into(),
            new: new.into(),
            replace_all: all,
        }
    }

    #[test]
    fn binary_detection() {
        assert_eq!(binary_reason(b"plain\n"), None);
        assert_eq!(binary_reason(b""), None);
        assert!(binary_reason(b"a\0b").unwrap().contains("NUL byte at offset 1"));
        assert!(binary_reason(b"caf\xe9")
            .unwrap()
            .contains("invalid UTF-8 at byte 3"));
    }

    #[test]
    fn crlf_kept_outside_the_span() {
        let text = "one\r\ntwo\r\nthree\r\n";
        let out = apply(text, &edit("two\nthree", "2\n3", false), "f", "")
            .unwrap()
            .text;
        assert_eq!(out, "one\r\n2\r\n3\r\n");
        let out = apply(text, &edit("two", "zwei", false), "f", "").unwrap().text;
        assert_eq!(out, "one\r\nzwei\r\nthree\r\n");
    }

    #[test]
    fn several_matches_name_their_lines() {
        let e = apply("x\nfoo\ny\nfoo\n", &edit("foo", "bar", false), "f", "").unwrap_err();
        match e {
            ToolError::MultipleMatches { count, lines, .. } => {
                assert_eq!(count, 2);
                assert_eq!(lines, vec![2, 4]);
            }
            other => panic!("{other}"),
        }
        let out = apply("x\nfoo\ny\nfoo\n", &edit("foo", "bar", true), "f", "").unwrap();
        assert_eq!(out.text, "x\nbar\ny\nbar\n");
        assert_eq!((out.count, out.first_line), (2, 2));
    }

    #[test]
    fn nearest_shows_a_block_and_a_whitespace_hint() {
        let text = "fn a() {}\nfn main() {\n\tprintln!(\"hi\");\n}\n";
        let msg = apply(
            text,
            &edit("fn main() {\n    println!(\"hi\");", "", false),
            "f",
            "",
        )
        .unwrap_err()
        .to_string();
        assert!(msg.contains("The closest match, lines 2-3:"), "{msg}");
        assert!(msg.contains("     2\tfn main() {"), "{msg}");
        assert!(msg.contains("only in whitespace"), "{msg}");
    }
}
