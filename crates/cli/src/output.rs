//! Human-readable output helpers. Single-line values are escaped by the terminal UI's rules (one
//! rule for every frontend): `shown_path` and `first_line` are `retrace_tui::escape`'s.

use retrace_tui::escape::invisible;
pub use retrace_tui::escape::{first_line, human_bytes, line as shown_path};

/// A line on standard error; an error writing it (a closed terminal) is not one more failure.
pub fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Token counts in a short human form: `tokens: in 1200, out 85`.
pub fn tokens(u: &retrace_protocol::TokenUsage) -> String {
    format!("tokens: in {}, out {}", u.prompt_tokens, u.completion_tokens)
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
