//! What a tool call shows when details are on (Ctrl+O): under each file it changed, the unified
//! diff the controller computed for it (coloured; `-`/`+` carry the meaning without colour), and
//! its output; each folded after [`FOLD_LINES`] lines. Nothing is diffed here: the item carries
//! its diffs, so a call shows the same live, after a reload and in another process.

use retrace_protocol::{FileChange, ToolCallItem, ITEM_DIFF_CAP, ITEM_OUTPUT_CAP};

use crate::escape;
use crate::view::wrap::Spans;
use crate::view::Theme;

/// Lines of a diff or an output shown before the rest is folded.
pub const FOLD_LINES: usize = 12;

/// What a change whose diff was not kept shows.
const LOST: &str = "diff not kept (lost when the machine stopped); the counts are whole";

/// A line of detail before styling.
enum Line {
    Note(String),
    Hunk(String),
    Context(String),
    Removed(String),
    Added(String),
    Output(String),
}

/// The detail lines of one changed file: its diff, or why there is none to show.
pub fn change_detail(c: &FileChange, t: Theme) -> Vec<(Spans, usize)> {
    if c.binary {
        return render(vec![Line::Note("binary: no diff".to_string())], 1, t);
    }
    if c.diff_lost {
        return render(vec![Line::Note(LOST.to_string())], 1, t);
    }
    // Split on line feeds only: a carriage return before one is part of the change
    // (`b` → `b\r` must not look like no change) and shows escaped.
    let mut lines: Vec<&str> = c.diff.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    let total = lines.len();
    let parsed: Vec<Line> = lines
        .into_iter()
        .take(FOLD_LINES + 1)
        .map(|l| match l.chars().next() {
            Some('+') => Line::Added(l[1..].to_string()),
            Some('-') => Line::Removed(l[1..].to_string()),
            Some(' ') => Line::Context(l[1..].to_string()),
            _ if l.starts_with("@@") => Line::Hunk(l.to_string()),
            _ => Line::Note(l.to_string()),
        })
        .collect();
    let mut shown = render(parsed, total, t);
    if c.diff_truncated {
        shown.push((
            vec![(
                format!(
                    "      (the diff was cut at {})",
                    escape::human_bytes(ITEM_DIFF_CAP as u64)
                ),
                t.dim(),
            )],
            8,
        ));
    }
    shown
}

/// The detail lines of a call's output (at most what the item carries).
pub fn output_detail(call: &ToolCallItem, t: Theme) -> Vec<(Spans, usize)> {
    let total = call.output.lines().count();
    let lines = call
        .output
        .lines()
        .take(FOLD_LINES + 1)
        .map(|l| Line::Output(l.to_string()))
        .collect();
    let mut shown = render(lines, total, t);
    if call.output_truncated {
        shown.push((
            vec![(
                format!(
                    "      (the output was cut at {})",
                    escape::human_bytes(ITEM_OUTPUT_CAP as u64)
                ),
                t.dim(),
            )],
            8,
        ));
    }
    shown
}

/// Styles the lines, folding after [`FOLD_LINES`] of `total`.
fn render(lines: Vec<Line>, total: usize, t: Theme) -> Vec<(Spans, usize)> {
    let mut out = Vec::new();
    for l in lines.into_iter().take(FOLD_LINES) {
        let clean = |s: &str| escape::text(s).replace('\n', "\\n");
        // An output's line ending is not shown.
        let output = |s: &str| clean(s.strip_suffix('\r').unwrap_or(s));
        let (text, style) = match l {
            Line::Note(s) => (format!("      {}", clean(&s)), t.dim()),
            Line::Hunk(s) => (format!("      {}", clean(&s)), t.dim()),
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
    use retrace_protocol::{ChangeAction, ToolStatus};

    use super::*;

    fn text(lines: Vec<(Spans, usize)>) -> Vec<String> {
        lines
            .into_iter()
            .map(|(spans, _)| spans.into_iter().map(|(s, _)| s).collect())
            .collect()
    }

    fn change(diff: &str) -> FileChange {
        FileChange {
            path: "a.rs".into(),
            action: ChangeAction::Modify,
            from: None,
            diff: diff.into(),
            added: 1,
            removed: 1,
            binary: false,
            diff_truncated: false,
            diff_lost: false,
        }
    }

    #[test]
    fn a_diff_is_shown_as_the_controller_made_it() {
        let lines = text(change_detail(
            &change("@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"),
            Theme::new(true),
        ));
        assert_eq!(
            lines,
            [
                "      @@ -1,3 +1,3 @@",
                "        a",
                "      - b",
                "      + B",
                "        c"
            ]
        );
    }

    #[test]
    fn a_carriage_return_added_shows_in_the_diff() {
        let lines = text(change_detail(
            &change("@@ -1,2 +1,2 @@\n a\n-b\n+b\r\n"),
            Theme::new(true),
        ));
        assert_eq!(
            lines,
            ["      @@ -1,2 +1,2 @@", "        a", "      - b", "      + b\\r"]
        );
    }

    #[test]
    fn a_long_diff_is_folded_and_a_cut_or_binary_one_says_so() {
        let long: String = (0..20).map(|i| format!("+line {i}\n")).collect();
        let mut c = change(&long);
        c.diff_truncated = true;
        let lines = text(change_detail(&c, Theme::new(true)));
        assert_eq!(lines.len(), FOLD_LINES + 2);
        assert_eq!(lines[FOLD_LINES], "      … 8 more lines");
        assert!(lines[FOLD_LINES + 1].contains("the diff was cut"));
        c.binary = true;
        assert_eq!(
            text(change_detail(&c, Theme::new(true))),
            ["      binary: no diff"]
        );
        c.binary = false;
        c.diff = String::new();
        c.diff_lost = true;
        assert_eq!(
            text(change_detail(&c, Theme::new(true))),
            [format!("      {LOST}")]
        );
    }

    #[test]
    fn output_is_folded_and_escaped() {
        let output: String = (0..20).map(|i| format!("line {i}\u{1b}[2J\r\n")).collect();
        let call = ToolCallItem {
            call_id: "c1".into(),
            tool: "bash".into(),
            title: "Run x".into(),
            target: Some("x".into()),
            arguments: serde_json::json!({"command": "x"}),
            status: ToolStatus::Ok,
            output,
            output_truncated: false,
            changes: Vec::new(),
            gaps: Vec::new(),
            exit_code: None,
        };
        let lines = text(output_detail(&call, Theme::new(true)));
        assert_eq!(lines.len(), FOLD_LINES + 1);
        assert_eq!(lines[0], "      │ line 0\\u{1b}[2J");
        assert_eq!(lines[FOLD_LINES], "      … 8 more lines");
    }
}
