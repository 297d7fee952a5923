//! What a head name may be: at most [`MAX_HEAD_NAME`] characters of printable text, without
//! surrounding spaces. Names are shown in terminals, lists and the web page and typed back as
//! `switch` arguments, so a control character, a line break or an invisible formatting
//! character in one would either disturb the display or make the name impossible to type.

/// The longest head name, in characters.
pub const MAX_HEAD_NAME: usize = 64;

/// Why `name` cannot be a head name, or `None` when it can (emptiness is checked apart).
pub(crate) fn name_problem(name: &str) -> Option<&'static str> {
    if name.chars().count() > MAX_HEAD_NAME {
        return Some("it is longer than 64 characters");
    }
    if name.trim() != name {
        return Some("it starts or ends with a space");
    }
    if name.chars().any(invisible) {
        return Some("it contains a control or invisible formatting character");
    }
    None
}

/// Control characters, line and paragraph separators, and the format characters that change
/// how text around them is shown (bidirectional overrides, zero-width joiners, tags).
fn invisible(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{180E}'
            | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}' | '\u{2060}'..='\u{206F}'
            | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}'
            | '\u{FFF9}'..='\u{FFFB}' | '\u{E0000}'..='\u{E007F}')
}

/// `name` for an error message: escaped, and cut after 40 characters.
pub(crate) fn shown(name: &str) -> String {
    let mut out: String = name.chars().take(40).flat_map(char::escape_debug).collect();
    if name.chars().count() > 40 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_short_printable_text() {
        for ok in ["try-2", "Versuch Ä", "试一试", &"x".repeat(64), "a b"] {
            assert_eq!(name_problem(ok), None, "{ok}");
        }
        for bad in [
            "x".repeat(65),
            " lead".into(),
            "trail ".into(),
            "a\nb".into(),
            "a\u{1b}[31mb".into(),
            "evil\u{202E}txt".into(),
            "zero\u{200B}width".into(),
            "tag\u{E0041}".into(),
        ] {
            assert!(name_problem(&bad).is_some(), "{bad:?}");
        }
        assert_eq!(shown("a\nb"), "a\\nb");
        assert!(shown(&"y".repeat(100)).ends_with('…'));
    }
}
