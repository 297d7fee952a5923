//! What items say, decided once: tool call titles, note wording, output caps.

use retrace_protocol::{ChangeAction, FileChange, NoteKind, ToolStatus, ITEM_DIFF_CAP, ITEM_OUTPUT_CAP};

/// What the log's restore notes begin with (they are written for the model).
const NOTE_PREFIX: &str = "Note from Retrace: ";

/// What a restore note says, after "the user ", for each kind of restore (they are written for
/// the model), and how a restore note of an older log named the turn ("at the start of turn N").
const RESTORED: &str = "restored these files to their state before turn ";
const OLD_RESTORED: &str = "restored these files to their state at the start of turn ";
const UNDID: &str = "undid that restore; these files are back as they were before it: ";
const REDID: &str = "redid that restore; these files are again as it left them: ";
/// What a restore note adds after its files.
const NO_LONGER: &str = ". Edits made to them since then are no longer on disk.";

/// A note's kind and the text every frontend shows, from the text the model was given. A
/// restore note is worded for the user: "Restored a.txt, b.txt to before turn 2", "Undid the
/// restore of a.txt", "Redid the restore of a.txt" (an older log's "… at the start of turn 2 …"
/// reads the same).
pub(crate) fn note(content: &str) -> (NoteKind, String) {
    let text = content.strip_prefix(NOTE_PREFIX).unwrap_or(content);
    let restore = content.starts_with(NOTE_PREFIX)
        && (text.starts_with("the user restored")
            || text.starts_with("the user undid")
            || text.starts_with("the user redid"));
    if restore {
        let said = text.strip_prefix("the user ").unwrap_or(text);
        return (
            NoteKind::Restore,
            restore_words(said).unwrap_or_else(|| upper_first(text)),
        );
    }
    (NoteKind::Other, upper_first(text))
}

/// A restore note's words after "the user " as the user reads them; `None` when it is not worded
/// as Retrace words them.
fn restore_words(said: &str) -> Option<String> {
    let files = |rest: &str| {
        let rest = rest.strip_suffix(NO_LONGER).unwrap_or(rest);
        let rest = rest.strip_suffix('.').unwrap_or(rest);
        (!rest.is_empty()).then(|| rest.to_string())
    };
    if let Some(rest) = said
        .strip_prefix(RESTORED)
        .or_else(|| said.strip_prefix(OLD_RESTORED))
    {
        let (turn, rest) = rest.split_once(": ")?;
        turn.parse::<u64>().ok()?;
        return Some(format!("Restored {} to before turn {turn}", files(rest)?));
    }
    if let Some(rest) = said.strip_prefix(UNDID) {
        return Some(format!("Undid the restore of {}", files(rest)?));
    }
    if let Some(rest) = said.strip_prefix(REDID) {
        return Some(format!("Redid the restore of {}", files(rest)?));
    }
    None
}

/// `text` with its first letter in upper case.
fn upper_first(text: &str) -> String {
    let mut shown = text.to_string();
    if let Some(first) = shown.get(..1) {
        let upper = first.to_uppercase();
        shown.replace_range(..1, &upper);
    }
    shown
}

/// A tool's output cut to [`ITEM_OUTPUT_CAP`] bytes at a character boundary, and whether it was.
pub(crate) fn capped_output(content: &str) -> (String, bool) {
    if content.len() <= ITEM_OUTPUT_CAP {
        return (content.to_string(), false);
    }
    let mut end = ITEM_OUTPUT_CAP;
    while !content.is_char_boundary(end) {
        end -= 1;
    }
    (content[..end].to_string(), true)
}

/// A model switch, before the first turn that ran with the new model.
pub(crate) fn model_switch(spec: &str) -> String {
    format!("Switched the model to {spec}")
}

/// A call's arguments as an item carries them: every string longer than [`ITEM_OUTPUT_CAP`]
/// bytes is cut at a character boundary and says how long it was (a `write_file`'s content can be
/// megabytes; the file's change carries its diff).
pub(crate) fn capped_arguments(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::String(s) if s.len() > ITEM_OUTPUT_CAP => {
            let (cut, _) = capped_output(&s);
            Value::String(format!("{cut}… ({} bytes in all)", s.len()))
        }
        Value::Array(a) => Value::Array(a.into_iter().map(capped_arguments).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, capped_arguments(v))).collect()),
        other => other,
    }
}

/// A tool call's title, as every frontend shows it: while it runs, and when it did not run
/// (failed, denied, cancelled), what it does (`title`, from `retrace_tools::describe`: "Write
/// a.txt", "Run cargo test"); once it ran, what it did, its verb in the past from the change it
/// made ("Created a.txt", "Edited a.txt" for a file that was there, "Deleted …", "Moved a → b";
/// "Wrote a.txt" for a file written again as it was) or from its tool ("Ran cargo test"). The
/// tools that only read keep their title ("Read a.txt", "Search `x` in src").
pub(crate) fn tool_title(tool: &str, title: &str, status: ToolStatus, changes: &[FileChange]) -> String {
    if status != ToolStatus::Ok {
        return title.to_string();
    }
    let verb = match (tool, changes.first().map(|c| c.action)) {
        ("write_file" | "edit_file" | "multi_edit" | "delete_file" | "move_file", Some(a)) => match a {
            ChangeAction::Create => "Created",
            ChangeAction::Modify => "Edited",
            ChangeAction::Delete => "Deleted",
            ChangeAction::Move => "Moved",
        },
        ("write_file", None) => "Wrote",
        ("edit_file" | "multi_edit", None) => "Edited",
        ("delete_file", None) => "Deleted",
        ("move_file", None) => "Moved",
        ("bash", _) => "Ran",
        _ => return title.to_string(),
    };
    match title.split_once(' ') {
        Some((_, rest)) => format!("{verb} {rest}"),
        None => title.to_string(),
    }
}

/// A title on one line: line breaks and tabs shown as `\n`, `\r`, `\t` (a path may hold them).
pub(crate) fn one_line(title: &str) -> String {
    title
        .replace('\n', "\\n")
        .replace('\r', "\\r")
        .replace('\t', "\\t")
}

/// A change as an item carries it: a diff longer than [`ITEM_DIFF_CAP`] (a hand-edited log) is
/// cut at a line boundary and says so.
pub(crate) fn capped_change(mut c: FileChange) -> FileChange {
    if c.diff.len() > ITEM_DIFF_CAP {
        let mut end = ITEM_DIFF_CAP;
        while !c.diff.is_char_boundary(end) {
            end -= 1;
        }
        let cut = c.diff[..end].rfind('\n').map_or(0, |i| i + 1);
        c.diff.truncate(cut);
        c.diff_truncated = true;
    }
    c
}

/// A summary as the transcript shows it: of the conversation before its turn (`earlier`:
/// summarize up to a turn, a compaction), else of the turns from its turn on (summarize from a
/// turn).
pub(crate) fn summary(content: &str, earlier: bool) -> String {
    match earlier {
        true => format!("Earlier conversation summarized:\n{content}"),
        false => format!("The turns from here on, summarized:\n{content}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restore_notes_are_told_apart_and_read_as_the_users_own() {
        let (kind, text) = note(
            "Note from Retrace: the user restored these files to their state before turn 2: a.txt, b/c.md. \
             Edits made to them since then are no longer on disk.",
        );
        assert_eq!(kind, NoteKind::Restore);
        assert_eq!(text, "Restored a.txt, b/c.md to before turn 2");
        assert_eq!(
            note("Note from Retrace: the user restored these files to their state before turn 0: a.txt."),
            (NoteKind::Restore, "Restored a.txt to before turn 0".to_string())
        );
        assert_eq!(
            note("Note from Retrace: the user undid that restore; these files are back as they were before it: a.txt."),
            (NoteKind::Restore, "Undid the restore of a.txt".to_string())
        );
        assert_eq!(
            note("Note from Retrace: the user redid that restore; these files are again as it left them: a.txt."),
            (NoteKind::Restore, "Redid the restore of a.txt".to_string())
        );
        assert_eq!(note("something else").0, NoteKind::Other);
        // Another note saying those words is left as it is.
        let other = "their state at the start of turn 1";
        assert_eq!(note(other), (NoteKind::Other, format!("T{}", &other[1..])));
        // A restore note worded otherwise (edited by hand) is shown as it is, without the prefix.
        assert_eq!(
            note("Note from Retrace: the user restored something"),
            (NoteKind::Restore, "The user restored something".to_string())
        );
    }

    #[test]
    fn an_older_logs_restore_note_reads_as_a_new_one() {
        let (kind, text) = note(
            "Note from Retrace: the user restored these files to their state at the start of turn 2: a.txt. \
             Edits made to them since then are no longer on disk.",
        );
        assert_eq!(kind, NoteKind::Restore);
        assert_eq!(text, "Restored a.txt to before turn 2");
    }

    #[test]
    fn long_argument_strings_are_cut_and_say_their_length() {
        let v = serde_json::json!({"path": "a", "content": "x".repeat(ITEM_OUTPUT_CAP + 5), "n": 3});
        let c = capped_arguments(v);
        assert_eq!(c["path"], "a");
        assert_eq!(c["n"], 3);
        let content = c["content"].as_str().unwrap();
        assert!(content.ends_with(&format!("… ({} bytes in all)", ITEM_OUTPUT_CAP + 5)));
        assert!(content.len() < ITEM_OUTPUT_CAP + 40);
    }

    #[test]
    fn a_call_that_ran_is_titled_by_what_it_did() {
        let change = |action| FileChange {
            path: "a.txt".into(),
            action,
            from: None,
            diff: String::new(),
            added: 0,
            removed: 0,
            binary: false,
            diff_truncated: false,
            diff_lost: false,
        };
        let ok = ToolStatus::Ok;
        let t = |tool, title, status, changes: &[FileChange]| tool_title(tool, title, status, changes);
        assert_eq!(
            t("write_file", "Write a.txt", ok, &[change(ChangeAction::Create)]),
            "Created a.txt"
        );
        assert_eq!(
            t("write_file", "Write a.txt", ok, &[change(ChangeAction::Modify)]),
            "Edited a.txt"
        );
        assert_eq!(t("write_file", "Write a.txt", ok, &[]), "Wrote a.txt");
        assert_eq!(
            t(
                "multi_edit",
                "Edit a.txt (2 edits)",
                ok,
                &[change(ChangeAction::Modify)]
            ),
            "Edited a.txt (2 edits)"
        );
        assert_eq!(
            t("delete_file", "Delete a.txt", ok, &[change(ChangeAction::Delete)]),
            "Deleted a.txt"
        );
        assert_eq!(
            t(
                "move_file",
                "Move a.txt → b.txt",
                ok,
                &[change(ChangeAction::Move)]
            ),
            "Moved a.txt → b.txt"
        );
        assert_eq!(t("bash", "Run cargo test", ok, &[]), "Ran cargo test");
        // what only reads, and what did not run or runs now, keeps its title
        assert_eq!(t("read_file", "Read a.txt", ok, &[]), "Read a.txt");
        assert_eq!(
            t("write_file", "Write a.txt", ToolStatus::Failed, &[]),
            "Write a.txt"
        );
        assert_eq!(
            t("write_file", "Write a.txt", ToolStatus::Denied, &[]),
            "Write a.txt"
        );
        assert_eq!(t("bash", "Run x", ToolStatus::Running, &[]), "Run x");
        assert_eq!(t("bash", "bash", ok, &[]), "bash");
    }

    #[test]
    fn a_title_is_one_line() {
        assert_eq!(one_line("Write new\nline.txt"), "Write new\\nline.txt");
    }

    #[test]
    fn output_is_cut_at_a_character_boundary() {
        let long = "é".repeat(ITEM_OUTPUT_CAP);
        let (cut, truncated) = capped_output(&long);
        assert!(truncated);
        assert!(cut.len() <= ITEM_OUTPUT_CAP);
        assert_eq!(capped_output("short"), ("short".to_string(), false));
    }
}
