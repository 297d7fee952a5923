//! Making text from the model, the workspace or a server safe to put on the screen.
//!
//! The same rule as the CLI's `output.rs` (the TUI cannot depend on the CLI): control characters
//! and invisible format characters (bidi overrides, zero-width characters, the Unicode line and
//! paragraph separators) are shown escaped, so an agent-made name can neither move the cursor nor
//! pass for another name. Every string the view draws that did not come from this crate goes
//! through [`line`] or [`text`].

/// Invisible characters that reorder or hide text: bidi controls, zero-width characters, the
/// line and paragraph separators, the soft hyphen, the combining grapheme joiner, the Hangul
/// fillers and the tag characters (which can smuggle text no one sees).
pub fn invisible(c: char) -> bool {
    matches!(c,
        '\u{00ad}' | '\u{034f}' | '\u{061c}' | '\u{115f}' | '\u{1160}' | '\u{180e}'
        | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{206f}'
        | '\u{3164}' | '\u{feff}' | '\u{ffa0}' | '\u{fff9}'..='\u{fffb}'
        | '\u{e0000}'..='\u{e007f}')
}

/// Variation selectors: they change how the character before them looks (an emoji's colour) and
/// are otherwise invisible, so they are escaped in names and paths but kept in text.
fn variation_selector(c: char) -> bool {
    matches!(c, '\u{fe00}'..='\u{fe0f}' | '\u{e0100}'..='\u{e01ef}')
}

/// A single-line value (a path, a name, a command, an error message): every control character,
/// line breaks included, and every invisible format character escaped.
pub fn line(s: &str) -> String {
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() || invisible(c) || variation_selector(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Text (an answer, a tool's output): line breaks kept, tabs shown as four spaces (a terminal
/// cell grid has no tab stops), every other control and invisible character escaped.
pub fn text(s: &str) -> String {
    // Most text is printable ASCII: nothing to change.
    if s.bytes().all(|b| b == b'\n' || (0x20..0x7f).contains(&b)) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut prev = '\0';
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => out.push('\n'),
            '\t' => out.push_str("    "),
            // The joiner inside an emoji sequence (a family, a flag) draws one emoji: kept.
            '\u{200d}' if pictographic(prev) && chars.peek().is_some_and(|n| pictographic(*n)) => out.push(c),
            c if c.is_control() || invisible(c) => out.extend(c.escape_default()),
            c => out.push(c),
        }
        prev = c;
    }
    out
}

/// Part of an emoji: a pictograph, a skin tone, or the selector that makes the one before it one.
fn pictographic(c: char) -> bool {
    matches!(c,
        '\u{1f000}'..='\u{1faff}' | '\u{2300}'..='\u{23ff}' | '\u{2600}'..='\u{27bf}'
        | '\u{2b00}'..='\u{2bff}' | '\u{fe0f}')
}

/// The first line of `s`, cut to `max` characters with an ellipsis, escaped as [`line`] does.
pub fn first_line(s: &str, max: usize) -> String {
    let first = s.split(['\n', '\r']).next().unwrap_or("");
    if first.chars().count() <= max {
        line(first)
    } else {
        let cut: String = first.chars().take(max.saturating_sub(1)).collect();
        format!("{}…", line(&cut))
    }
}

/// All of `s` on one line, escaped as [`line`] does, cut to `max` characters with an ellipsis: for
/// a name or a command where a line break must show (a path `a\nb` is not the path `a`).
pub fn short(s: &str, max: usize) -> String {
    let all = line(s);
    if all.chars().count() <= max {
        all
    } else {
        let cut: String = all.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// A path escaped as [`line`] does, cut to `max` characters by keeping its end (the file's
/// name, which tells two long paths apart), with an ellipsis first when cut.
pub fn short_path(s: &str, max: usize) -> String {
    let all = line(s);
    let n = all.chars().count();
    if n <= max {
        all
    } else {
        let tail: String = all.chars().skip(n - max.saturating_sub(1)).collect();
        format!("…{tail}")
    }
}

/// Bytes in a short human form (`1.5 KiB`).
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by a long trial: a family or a rainbow flag showed as `\u{200d}` escapes.
    #[test]
    fn the_joiner_inside_an_emoji_is_kept_in_text_and_escaped_elsewhere() {
        let family = "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}";
        let flag = "\u{1f3f3}\u{fe0f}\u{200d}\u{1f308}";
        assert_eq!(text(family), family);
        assert_eq!(text(flag), flag);
        assert_eq!(text("a\u{200d}b"), "a\\u{200d}b");
        assert_eq!(text("\u{1f468}\u{200d}"), "\u{1f468}\\u{200d}");
        assert_eq!(line(family), "\u{1f468}\\u{200d}\u{1f469}\\u{200d}\u{1f467}");
    }

    #[test]
    fn escapes_what_could_fool_the_terminal() {
        assert_eq!(line("invoice\u{202e}txt.exe"), "invoice\\u{202e}txt.exe");
        assert_eq!(line("a\nb"), "a\\nb");
        assert_eq!(text("x\n\x1b]0;t\x07"), "x\n\\u{1b}]0;t\\u{7}");
        assert_eq!(text("a\tb"), "a    b");
        assert_eq!(first_line("abc\ndef", 10), "abc");
        assert_eq!(first_line("abcdef", 4), "abc…");
        assert_eq!(first_line("a\x1b[2Jb\rc", 10), "a\\u{1b}[2Jb");
        assert_eq!(human_bytes(1536), "1.5 KiB");
    }
}
