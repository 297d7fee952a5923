//! Unified diffs of two texts, computed once, in Rust, for every frontend: a tool call's changes,
//! a turn's results, what a restore will do to a file.
//!
//! Hunks only (`@@ -a,b +c,d @@` headers, then lines starting with ` `, `-` or `+`; no
//! `---`/`+++` file header), 3 lines of context, line endings kept as they are (a CRLF file's lines
//! end in `\r\n`). A last line without a newline is followed by `\ No newline at end of file`, as
//! `diff -u` and git write it, so a change of only the final newline still shows. Hunk headers
//! follow `diff -u`: a count of 1 is left out, an empty side starts at the line before it
//! (`@@ -0,0 +1,3 @@` for a new file).
//!
//! - `added`/`removed` count every changed line, even when the text of the diff was cut.
//! - A side that is not UTF-8 or holds a NUL byte is binary: no diff ([`diff_sides`] says `None`).
//! - A side larger than [`MAX_DIFF_INPUT`] is not diffed either and reads like a binary one.
//! - The text stops at the caller's cap, on a line boundary, with `truncated`.
//! - Diffing stops refining after [`DIFF_TIMEOUT`]; a pathological pair of texts then gets a
//!   correct but coarser diff (more lines marked changed than strictly needed).

use std::time::Duration;

use similar::udiff::UnifiedHunkHeader;
use similar::{Algorithm, ChangeTag, DiffTag, TextDiff};

/// The largest side diffed, in bytes (4 MiB); a larger file is reported like a binary one.
pub const MAX_DIFF_INPUT: usize = 4 * 1024 * 1024;
/// How long diffing may refine its result before it settles for a coarser one.
pub const DIFF_TIMEOUT: Duration = Duration::from_millis(500);
/// Lines of context around each change.
const CONTEXT: usize = 3;
/// What follows a last line that has no newline.
const NO_NEWLINE: &str = "\\ No newline at end of file\n";

/// One side of a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side<'a> {
    /// No file there (the old side of a creation, the new side of a deletion): no lines.
    Absent,
    /// The file's bytes.
    Bytes(&'a [u8]),
    /// A file too large to keep for a diff (over [`MAX_DIFF_INPUT`]).
    TooLarge,
}

impl<'a> Side<'a> {
    /// The side as text to diff, or `None` when it cannot be diffed (binary or too large).
    pub fn text(self) -> Option<&'a str> {
        match self {
            Side::Absent => Some(""),
            Side::Bytes(b) if b.len() > MAX_DIFF_INPUT || b.contains(&0) => None,
            Side::Bytes(b) => std::str::from_utf8(b).ok(),
            Side::TooLarge => None,
        }
    }
}

/// A unified diff of two texts and its line counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnifiedDiff {
    /// The hunks (empty when the texts are equal).
    pub text: String,
    /// Lines added.
    pub added: u64,
    /// Lines removed.
    pub removed: u64,
    /// True when `text` was cut at the cap.
    pub truncated: bool,
}

/// The diff of `old` → `new` with its text cut at `cap` bytes, or `None` when either side is
/// binary or too large.
pub fn diff_sides(old: Side<'_>, new: Side<'_>, cap: usize) -> Option<UnifiedDiff> {
    Some(unified(old.text()?, new.text()?, cap))
}

/// The lines of `text`, each with its `\n` (a last line may have none). Only a line feed ends a
/// line, as for `diff -u` and git: a carriage return alone is part of its line (a CR-only file is
/// one line), and `\r\n` keeps its `\r`.
fn lines_of(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// The unified diff of `old` → `new`, its text cut at `cap` bytes (on a line boundary).
pub fn unified(old: &str, new: &str, cap: usize) -> UnifiedDiff {
    let (old_lines, new_lines) = (lines_of(old), lines_of(new));
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(DIFF_TIMEOUT)
        .diff_slices(&old_lines, &new_lines);
    let mut out = UnifiedDiff::default();
    for op in diff.ops() {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => {}
            DiffTag::Delete => out.removed += old_range.len() as u64,
            DiffTag::Insert => out.added += new_range.len() as u64,
            DiffTag::Replace => {
                out.removed += old_range.len() as u64;
                out.added += new_range.len() as u64;
            }
        }
    }
    let mut line = String::new();
    'hunks: for group in diff.grouped_ops(CONTEXT) {
        line.clear();
        line.push_str(&UnifiedHunkHeader::new(&group).to_string());
        line.push('\n');
        if !push_capped(&mut out, &line, cap) {
            break;
        }
        for op in &group {
            for change in diff.iter_changes(op) {
                line.clear();
                line.push(match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                });
                let value = change.value();
                line.push_str(value);
                if !value.ends_with('\n') {
                    line.push('\n');
                    line.push_str(NO_NEWLINE);
                }
                if !push_capped(&mut out, &line, cap) {
                    break 'hunks;
                }
            }
        }
    }
    out
}

/// Appends `line` unless that would pass `cap`; then marks the diff truncated and says false.
fn push_capped(out: &mut UnifiedDiff, line: &str, cap: usize) -> bool {
    if out.text.len() + line.len() > cap {
        out.truncated = true;
        return false;
    }
    out.text.push_str(line);
    true
}

#[cfg(test)]
mod tests;
