//! What changed between two snapshots: each path whose kept bytes, mode or existence differ, or
//! that was skipped on either side and whose stat moved.

use retrace_fsutil::RelPath;

use crate::snapshot::{Entry, Skip, Snapshot};

/// One path as a snapshot has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Side {
    /// Not there.
    Absent,
    /// A kept file.
    File(Entry),
    /// There, without its bytes.
    Skipped(Skip),
}

/// One changed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The path.
    pub path: RelPath,
    /// As the earlier snapshot has it.
    pub before: Side,
    /// As the later one has it.
    pub after: Side,
}

fn side(s: &Snapshot, p: &RelPath) -> Side {
    if let Some(e) = s.files.get(p) {
        return Side::File(*e);
    }
    match s.skipped.get(p) {
        Some(k) => Side::Skipped(k.clone()),
        None => Side::Absent,
    }
}

fn same(a: &Side, b: &Side) -> bool {
    match (a, b) {
        (Side::Absent, Side::Absent) => true,
        (Side::File(x), Side::File(y)) => x == y,
        // without bytes, the stat says whether it moved (no stat: assume it did not)
        (Side::Skipped(x), Side::Skipped(y)) => x.reason == y.reason && x.stamp == y.stamp,
        _ => false,
    }
}

/// The paths that differ from `a` to `b`, in path order.
pub fn changes(a: &Snapshot, b: &Snapshot) -> Vec<FileChange> {
    let mut paths: Vec<&RelPath> = a
        .files
        .keys()
        .chain(a.skipped.keys())
        .chain(b.files.keys())
        .chain(b.skipped.keys())
        .collect();
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter_map(|p| {
            let (before, after) = (side(a, p), side(b, p));
            (!same(&before, &after)).then(|| FileChange {
                path: p.clone(),
                before,
                after,
            })
        })
        .collect()
}
