//! The user's own words in a prompt that an older version stored as it composed it.
//!
//! The reference implementation stores a checkpoint's prompt as the text it sent the model: blocks
//! it injected before the user's input (`<memory-update>…</memory-update>`,
//! `<reasoning-language>…</reasoning-language>` and their kind) and a plan-mode marker
//! (`[Plan mode …]`), then the input. Its rewind picker lists the input alone; so does Retrace,
//! for records it did not write itself. Only a prefix is removed: a block inside the text stays.

/// Blocks the reference injects at the start of a user turn.
const INJECTED_TAGS: [&str; 8] = [
    "memory-update",
    "reasoning-language",
    "response-language",
    "memory-recall",
    "background-jobs",
    "active-goal",
    "hook-context",
    "memory-index",
];

/// The start of the reference's plan-mode marker.
const PLAN_MARKER: &str = "[Plan mode";

/// `prompt` without the injected blocks and plan marker it starts with (in any order), trimmed;
/// unchanged (but for surrounding whitespace) when it starts with none. The user's words are never
/// lost to it: a prompt that would be left empty, or start with a stray closing tag, is kept whole.
pub fn user_text(prompt: &str) -> String {
    let mut rest = prompt.trim_start();
    let mut stripped = false;
    while let Some(after) = strip_block(rest).or_else(|| strip_plan_marker(rest)) {
        rest = after.trim_start();
        stripped = true;
    }
    let rest = rest.trim();
    if !stripped || rest.is_empty() || starts_with_closing_tag(rest) {
        return prompt.to_string();
    }
    rest.to_string()
}

/// Whether `s` starts with `</tag>` of an injected tag (what a badly matched block would leave).
fn starts_with_closing_tag(s: &str) -> bool {
    INJECTED_TAGS.iter().any(|t| {
        s.strip_prefix("</")
            .and_then(|r| r.strip_prefix(*t))
            .is_some_and(|r| r.starts_with('>'))
    })
}

/// Whether `s` starts with the opening tag `<tag>` or `<tag …>`.
fn opens(s: &str, tag: &str) -> bool {
    s.strip_prefix('<')
        .and_then(|r| r.strip_prefix(tag))
        .is_some_and(|r| r.starts_with('>') || r.starts_with(char::is_whitespace))
}

/// The text after one leading `<tag …>…</tag>` block of a known tag, if `s` starts with one;
/// blocks of the same tag inside it nest.
fn strip_block(s: &str) -> Option<&str> {
    let tag = INJECTED_TAGS.iter().find(|t| opens(s, t))?;
    let close = format!("</{tag}>");
    let mut depth = 0usize;
    let mut i = 0;
    while i < s.len() {
        let here = s.get(i..)?;
        if opens(here, tag) {
            depth += 1;
            i += 1;
        } else if here.starts_with(&close) {
            depth = depth.saturating_sub(1);
            i += close.len();
            if depth == 0 {
                return s.get(i..);
            }
        } else {
            i += here.chars().next().map_or(1, char::len_utf8);
        }
    }
    None
}

/// The text after a leading `[Plan mode …]` marker (brackets may nest), if `s` starts with one:
/// `[Plan mode` followed by `]`, a space, `:`, a dash or a line end (so `[Plan modes …]` is
/// the user's).
fn strip_plan_marker(s: &str) -> Option<&str> {
    let after = s.strip_prefix(PLAN_MARKER)?;
    if !after.is_empty() && !after.starts_with([']', ' ', '\t', ':', '—', '-', '\n', '\r']) {
        return None;
    }
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return s.get(i + 1..);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::user_text;

    #[test]
    fn composed_prefixes_are_removed() {
        let cases = [
            ("", ""),
            ("hello world", "hello world"),
            ("multi\nline input", "multi\nline input"),
            ("<memory-update>\ncontext\n</memory-update>\nreal content", "real content"),
            ("<memory-update id=\"42\">\nctx\n</memory-update>\nreal content", "real content"),
            ("<memory-update>x</memory-update>\nreal", "real"),
            ("<reasoning-language>zh</reasoning-language>\n\nfix the bug", "fix the bug"),
            (
                "<memory-update>\nA new fact\n</memory-update>\n\n<reasoning-language>\n必须使用简体中文\n</reasoning-language>\n\n[Plan mode — read-only. Explore (read_file, ls) [x]; stop.]\n\n真实的用户输入",
                "真实的用户输入",
            ),
            ("[Plan mode] real content", "real content"),
            ("[Plan mode: active] plan notes", "plan notes"),
            ("<memory-update>\nctx\n</memory-update>\n[Plan mode] real content", "real content"),
            ("[Plan mode]\n\n  leftover here  ", "leftover here"),
            ("[Plan mode — read-only] go", "go"),
            ("[Plan mode- x] go", "go"),
            ("[Plan mode\nread-only] go", "go"),
            // Blocks after the marker too, in any order.
            ("[Plan mode]\n<memory-update>m</memory-update>\nboth kinds", "both kinds"),
            // Blocks of the same tag nest.
            (
                "<memory-update>a <memory-update>b</memory-update> c</memory-update>after",
                "after",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(user_text(input), want, "{input:?}");
        }
    }

    #[test]
    fn text_that_only_looks_composed_is_kept() {
        for input in [
            "intro <memory-update>x</memory-update>\nreal",
            "<memory-updates>x</memory-updates> keep",
            "<memory-update> never closed",
            "<b>bold</b> text",
            "[Plan] not the marker",
            "  spaced  ",
            // The marker needs a word boundary.
            "[Plan modes are great] keep me",
            "[Plan mode2] keep",
            // A prompt that is only a block or a marker is the user's text.
            "<memory-update>only this</memory-update>",
            "[Plan mode]",
            // A stray closing tag left would mean a mismatched block: keep it all.
            "<memory-update>a</memory-update></memory-update> x",
        ] {
            assert_eq!(user_text(input), input, "{input:?}");
        }
    }
}
