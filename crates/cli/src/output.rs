//! Human-readable output helpers.

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

/// Token counts in a short human form: `tokens: in 1200, out 85`.
pub fn tokens(u: &retrace_protocol::TokenUsage) -> String {
    format!("tokens: in {}, out {}", u.prompt_tokens, u.completion_tokens)
}

/// The first line of `s`, cut to `max` characters with an ellipsis, safe to print (control
/// characters escaped, as [`shown_path`] does).
pub fn first_line(s: &str, max: usize) -> String {
    let line = s.split(['\n', '\r']).next().unwrap_or("");
    if line.chars().count() <= max {
        shown_path(line)
    } else {
        let cut: String = line.chars().take(max.saturating_sub(1)).collect();
        format!("{}…", shown_path(&cut))
    }
}

/// Invisible characters that reorder or hide text (bidirectional overrides and isolates, zero-width
/// and other format characters, the Unicode line and paragraph separators): shown escaped like
/// control characters, so `invoice\u{202e}txt.exe` cannot pass for another name.
fn invisible(c: char) -> bool {
    matches!(c,
        '\u{061c}' | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{206f}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}')
}

/// A single-line value (a workspace path, a name, a URL, an error message) as it is safe to print
/// on a terminal: control characters (a newline that would start a fake line, an escape sequence
/// an agent-made name could carry) and invisible format characters are shown escaped, the rest
/// as it is.
pub fn shown_path(p: &str) -> String {
    p.chars()
        .map(|c| {
            if c.is_control() || invisible(c) {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Text from the model or the repository as it is safe to print on a terminal: line breaks and
/// tabs stay, every other control character (an ESC sequence that would move the cursor, recolour
/// or retitle the terminal, a carriage return that overwrites a line) and every invisible format
/// character is shown escaped.
pub fn shown_text(s: &str) -> String {
    s.chars()
        .map(|c| {
            if (c.is_control() && c != '\n' && c != '\t') || invisible(c) {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(human_bytes(12), "12 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(first_line("abc\ndef", 10), "abc");
        assert_eq!(first_line("abcdef", 4), "abc…");
        assert_eq!(first_line("a\x1b[2Jb\rc", 10), "a\\u{1b}[2Jb");
        assert_eq!(shown_path("invoice\u{202e}txt.exe"), "invoice\\u{202e}txt.exe");
        assert_eq!(shown_text("a\u{2028}b\nc"), "a\\u{2028}b\nc");
        assert_eq!(shown_path("a\nb"), "a\\nb");
        assert_eq!(shown_text("x\n\x1b]0;t\x07"), "x\n\\u{1b}]0;t\\u{7}");
    }
}
