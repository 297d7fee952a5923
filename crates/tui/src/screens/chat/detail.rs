//! What a tool call shows when details are on (Ctrl+O): the change it made as a unified diff
//! (coloured; `-`/`+` carry the meaning without colour), or its output, folded after
//! [`FOLD_LINES`] lines. Built from the call's arguments and its result only, so it is the same
//! live and from a stored transcript.

use similar::{ChangeTag, TextDiff};

use crate::escape;
use crate::view::wrap::Spans;
use crate::view::Theme;

/// Lines of a diff or an output shown before the rest is folded.
pub const FOLD_LINES: usize = 12;
/// Text larger than this is not diffed (the diff would cost more than it shows).
const DIFF_LIMIT: usize = 256 * 1024;
/// Rows of context around each change.
const CONTEXT: usize = 2;

/// The detail lines of a tool call (each with its continuation indent); empty when it has none.
pub fn tool_detail(
    name: &str,
    arguments: &str,
    output: &str,
    output_lines: usize,
    t: Theme,
) -> Vec<(Spans, usize)> {
    let args: serde_json::Value = serde_json::from_str(arguments).unwrap_or(serde_json::Value::Null);
    let s = |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
    let mut lines = Vec::new();
    match name {
        "edit_file" => {
            if let (Some(old), Some(new)) = (s(&args, "old_string"), s(&args, "new_string")) {
                diff(&old, &new, t, &mut lines);
            }
        }
        "multi_edit" => {
            let edits = args
                .get("edits")
                .and_then(|e| e.as_array())
                .cloned()
                .unwrap_or_default();
            let n = edits.len();
            for (i, e) in edits.iter().enumerate() {
                if let (Some(old), Some(new)) = (s(e, "old_string"), s(e, "new_string")) {
                    if n > 1 {
                        lines.push(Line::Note(format!("edit {} of {n}", i + 1)));
                    }
                    diff(&old, &new, t, &mut lines);
                }
            }
        }
        "write_file" => {
            if let Some(content) = s(&args, "content") {
                let count = content.lines().count();
                lines.push(Line::Note(format!("the file's new content, {count} lines")));
                for l in content.lines() {
                    lines.push(Line::Added(l.to_string()));
                }
            }
        }
        _ => {}
    }
    if lines.is_empty() {
        // Only what shows is taken; the rest is counted (the transcript counted it already).
        lines.extend(
            output
                .lines()
                .take(FOLD_LINES + 1)
                .map(|l| Line::Output(l.to_string())),
        );
        let total = output_lines.max(lines.len());
        return render(lines, total, t);
    }
    let total = lines.len();
    render(lines, total, t)
}

/// A line of detail before styling.
enum Line {
    Note(String),
    Context(String),
    Removed(String),
    Added(String),
    Output(String),
}

/// A unified diff of `old` → `new`, hunks separated by `…`.
fn diff(old: &str, new: &str, _t: Theme, out: &mut Vec<Line>) {
    if old.len() > DIFF_LIMIT || new.len() > DIFF_LIMIT {
        out.push(Line::Note(format!(
            "too large to diff here: {} lines replaced by {}",
            old.lines().count(),
            new.lines().count()
        )));
        return;
    }
    let d = TextDiff::from_lines(old, new);
    for (i, group) in d.grouped_ops(CONTEXT).iter().enumerate() {
        if i > 0 {
            out.push(Line::Note("…".to_string()));
        }
        for op in group {
            for change in d.iter_changes(op) {
                let text = change.value().trim_end_matches('\n').to_string();
                out.push(match change.tag() {
                    ChangeTag::Equal => Line::Context(text),
                    ChangeTag::Delete => Line::Removed(text),
                    ChangeTag::Insert => Line::Added(text),
                });
            }
        }
    }
}

/// Styles the lines, folding after [`FOLD_LINES`] of `total`.
fn render(lines: Vec<Line>, total: usize, t: Theme) -> Vec<(Spans, usize)> {
    let mut out = Vec::new();
    for l in lines.into_iter().take(FOLD_LINES) {
        // An output's line ending is not shown; in a diff a carriage return is part of the
        // change (`b` → `b\r` must not look like no change) and shows escaped.
        let clean = |s: &str| escape::text(s).replace('\n', "\\n");
        let output = |s: &str| clean(s.strip_suffix('\r').unwrap_or(s));
        let (text, style) = match l {
            Line::Note(s) => (format!("      {}", clean(&s)), t.dim()),
            Line::Context(s) => (format!("        {}", clean(&s)), t.text()),
            Line::Removed(s) => (format!("      - {}", clean(&s)), t.error()),
            Line::Added(s) => (format!("      + {}", clean(&s)), t.ok()),
            Line::Output(s) => (format!("      │ {}", output(&s)), t.dim()),
        };
        out.push((vec![(text, style)], 8));
    }
    if total > FOLD_LINES {
        out.push((
            vec![(format!("      … {} more lines", total - FOLD_LINES), t.dim())],
            8,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(name: &str, args: serde_json::Value, output: &str) -> Vec<String> {
        tool_detail(
            name,
            &args.to_string(),
            output,
            output.lines().count(),
            Theme::new(true),
        )
        .into_iter()
        .map(|(spans, _)| spans.into_iter().map(|(s, _)| s).collect())
        .collect()
    }

    #[test]
    fn an_edit_is_a_diff() {
        let lines = shown(
            "edit_file",
            serde_json::json!({"path": "a.rs", "old_string": "a\nb\nc\n", "new_string": "a\nB\nc\n"}),
            "Edited",
        );
        assert_eq!(lines, ["        a", "      - b", "      + B", "        c"]);
    }

    #[test]
    fn a_carriage_return_added_shows_in_the_diff() {
        let lines = shown(
            "edit_file",
            serde_json::json!({"path": "a", "old_string": "a\nb\n", "new_string": "a\nb\r\n"}),
            "",
        );
        assert_eq!(lines, ["        a", "      - b", "      + b\\r"]);
    }

    #[test]
    fn output_is_folded_and_escaped() {
        let out: String = (0..20).map(|i| format!("line {i}\u{1b}[2J\r\n")).collect();
        let lines = shown("bash", serde_json::json!({"command": "x"}), &out);
        assert_eq!(lines.len(), FOLD_LINES + 1);
        assert_eq!(lines[0], "      │ line 0\\u{1b}[2J");
        assert_eq!(lines[FOLD_LINES], "      … 8 more lines");
    }

    #[test]
    fn a_written_file_shows_its_content_and_bad_arguments_show_the_output() {
        let lines = shown(
            "write_file",
            serde_json::json!({"path": "n", "content": "x\ny\n"}),
            "ok",
        );
        assert_eq!(
            lines,
            ["      the file's new content, 2 lines", "      + x", "      + y"]
        );
        let lines = shown(
            "edit_file",
            serde_json::json!("not an object"),
            "error: bad arguments",
        );
        assert_eq!(lines, ["      │ error: bad arguments"]);
    }
}
