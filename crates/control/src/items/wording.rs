//! What items say, decided once: tool call titles, note wording, output caps.

use retrace_protocol::{NoteKind, ITEM_OUTPUT_CAP};

/// What the log's restore notes begin with (they are written for the model).
const NOTE_PREFIX: &str = "Note from Retrace: ";

/// A note's kind and the text every frontend shows, from the text the model was given.
pub(crate) fn note(content: &str) -> (NoteKind, String) {
    let text = content.strip_prefix(NOTE_PREFIX).unwrap_or(content);
    let kind = if content.starts_with(NOTE_PREFIX)
        && (text.starts_with("the user restored") || text.starts_with("the user undid"))
    {
        NoteKind::Restore
    } else {
        NoteKind::Other
    };
    let mut shown = text.to_string();
    if let Some(first) = shown.get(..1) {
        let upper = first.to_uppercase();
        shown.replace_range(..1, &upper);
    }
    (kind, shown)
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

/// A summary head's first message, shown as a compaction note.
pub(crate) fn summary(content: &str) -> String {
    format!("Earlier conversation summarized:\n{content}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restore_notes_are_told_apart_and_lose_the_model_prefix() {
        let (kind, text) = note(
            "Note from Retrace: the user restored these files to their state at the start of turn 2: a.txt.",
        );
        assert_eq!(kind, NoteKind::Restore);
        assert!(text.starts_with("The user restored these files"));
        assert_eq!(note("something else").0, NoteKind::Other);
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
