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

/// `prompt` without the injected blocks and plan marker it starts with, trimmed; unchanged (but
/// for surrounding whitespace) when it starts with none.
pub fn user_text(prompt: &str) -> String {
    let mut rest = prompt.trim_start();
    let mut stripped = false;
    while let Some(after) = strip_block(rest) {
        rest = after.trim_start();
        stripped = true;
    }
    if let Some(after) = strip_plan_marker(rest) {
        rest = after;
        stripped = true;
    }
    if stripped {
        rest.trim().to_string()
    } else {
        prompt.to_string()
    }
}

/// The text after one leading `<tag …>…</tag>` block of a known tag, if `s` starts with one.
fn strip_block(s: &str) -> Option<&str> {
    let open = s.strip_prefix('<')?;
    let tag = INJECTED_TAGS.iter().find(|t| {
        open.strip_prefix(**t)
            .is_some_and(|r| r.starts_with('>') || r.starts_with(char::is_whitespace))
    })?;
    let close = format!("</{tag}>");
    let end = s.find(&close)?;
    s.get(end + close.len()..)
}

/// The text after a leading `[Plan mode …]` marker (brackets may nest), if `s` starts with one.
fn strip_plan_marker(s: &str) -> Option<&str> {
    if !s.starts_with(PLAN_MARKER) {
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
        ] {
            assert_eq!(user_text(input), input, "{input:?}");
        }
    }
}
