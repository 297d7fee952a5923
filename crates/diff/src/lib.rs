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
//! - A line found on one side only can be in no common subsequence, so such lines are set aside
//!   before Myers runs (as GNU diff and git's xdiff do): the diff stays minimal, and a rewrite that
//!   shares no line with what it replaced costs one pass over the lines instead of Myers' quadratic
//!   worst case.
//! - Diffing stops refining after [`DIFF_TIMEOUT`]; a pathological pair of texts then gets a
//!   correct but coarser diff (more lines marked changed than strictly needed).

use std::collections::HashSet;
use std::ops::Range;
use std::time::{Duration, Instant};

use similar::udiff::UnifiedHunkHeader;
use similar::{capture_diff_slices_deadline, group_diff_ops, Algorithm, ChangeTag, DiffOp, DiffTag};

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

/// The operations turning the lines `old` into `new`, minimal (within [`DIFF_TIMEOUT`]). Lines
/// that occur on one side only are left out of the Myers run and come back as deleted or added.
fn ops_of(old: &[&str], new: &[&str]) -> Vec<DiffOp> {
    let deadline = Some(Instant::now() + DIFF_TIMEOUT);
    let in_new: HashSet<&str> = new.iter().copied().collect();
    let in_old: HashSet<&str> = old.iter().copied().collect();
    let kept_old: Vec<usize> = (0..old.len()).filter(|&i| in_new.contains(old[i])).collect();
    let kept_new: Vec<usize> = (0..new.len()).filter(|&j| in_old.contains(new[j])).collect();
    if kept_old.len() == old.len() && kept_new.len() == new.len() {
        return capture_diff_slices_deadline(Algorithm::Myers, old, new, deadline);
    }
    let a: Vec<&str> = kept_old.iter().map(|&i| old[i]).collect();
    let b: Vec<&str> = kept_new.iter().map(|&j| new[j]).collect();
    // The lines both sides keep, as pairs of indices into `old` and `new`, in order.
    let mut pairs = Vec::new();
    for op in capture_diff_slices_deadline(Algorithm::Myers, &a, &b, deadline) {
        if let DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        {
            pairs.extend((0..len).map(|k| (kept_old[old_index + k], kept_new[new_index + k])));
        }
    }
    let mut ops = Vec::new();
    let (mut o, mut n, mut k) = (0, 0, 0);
    while let Some(&(po, pn)) = pairs.get(k) {
        push_changed(&mut ops, o..po, n..pn);
        let mut len = 1;
        while pairs.get(k + len) == Some(&(po + len, pn + len)) {
            len += 1;
        }
        ops.push(DiffOp::Equal {
            old_index: po,
            new_index: pn,
            len,
        });
        (o, n, k) = (po + len, pn + len, k + len);
    }
    push_changed(&mut ops, o..old.len(), n..new.len());
    ops
}

/// The lines `old` of the old side deleted and `new` of the new side added, between two runs of
/// kept lines.
fn push_changed(ops: &mut Vec<DiffOp>, old: Range<usize>, new: Range<usize>) {
    match (old.is_empty(), new.is_empty()) {
        (true, true) => {}
        (false, true) => ops.push(DiffOp::Delete {
            old_index: old.start,
            old_len: old.len(),
            new_index: new.start,
        }),
        (true, false) => ops.push(DiffOp::Insert {
            old_index: old.start,
            new_index: new.start,
            new_len: new.len(),
        }),
        (false, false) => ops.push(DiffOp::Replace {
            old_index: old.start,
            old_len: old.len(),
            new_index: new.start,
            new_len: new.len(),
        }),
    }
}

/// The unified diff of `old` → `new`, its text cut at `cap` bytes (on a line boundary).
pub fn unified(old: &str, new: &str, cap: usize) -> UnifiedDiff {
    let (old_lines, new_lines) = (lines_of(old), lines_of(new));
    let ops = ops_of(&old_lines, &new_lines);
    let mut out = UnifiedDiff::default();
    for op in &ops {
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
    'hunks: for group in group_diff_ops(ops, CONTEXT) {
        line.clear();
        line.push_str(&UnifiedHunkHeader::new(&group).to_string());
        line.push('\n');
        if !push_capped(&mut out, &line, cap) {
            break;
        }
        for op in &group {
            for change in op.iter_changes(&old_lines[..], &new_lines[..]) {
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
