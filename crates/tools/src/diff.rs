//! A tool call's change of one file, as its preview carries it ([`FileChange`]): the unified diff
//! of `retrace-diff`, cut at [`ITEM_DIFF_CAP`].

use retrace_protocol::{ChangeAction, FileChange, ITEM_DIFF_CAP};

pub use retrace_diff::{Side, UnifiedDiff, MAX_DIFF_INPUT};

/// The change of `path` from `old` to `new` (a move is [`moved`], not this).
pub fn file_change(path: String, action: ChangeAction, old: Side<'_>, new: Side<'_>) -> FileChange {
    let (diff, binary) = match retrace_diff::diff_sides(old, new, ITEM_DIFF_CAP) {
        Some(d) => (d, false),
        None => (UnifiedDiff::default(), true),
    };
    FileChange {
        path,
        action,
        from: None,
        diff: diff.text,
        added: diff.added,
        removed: diff.removed,
        binary,
        diff_truncated: diff.truncated,
        diff_lost: false,
    }
}

/// The change of a file moved from `from` to `to`: no diff, no counts (its bytes do not change).
pub fn moved(from: String, to: String) -> FileChange {
    FileChange {
        path: to,
        action: ChangeAction::Move,
        from: Some(from),
        diff: String::new(),
        added: 0,
        removed: 0,
        binary: false,
        diff_truncated: false,
        diff_lost: false,
    }
}

/// The unified diff of `old` → `new`, its text cut at [`ITEM_DIFF_CAP`] bytes.
pub fn unified(old: &str, new: &str) -> UnifiedDiff {
    retrace_diff::unified(old, new, ITEM_DIFF_CAP)
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;
