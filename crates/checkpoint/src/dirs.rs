//! Directories the restored turns' tools created (recorded at capture as `createdDirs`, SPEC
//! §5.2): a restore removes those it leaves empty, and the undo of that restore makes them again.
//! Every one is reached from the root one component at a time, never through a symlink.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use retrace_fsutil::RelPath;

use crate::fsio::parent_of;
use crate::store::CheckpointStore;
use crate::tx::Manifest;

/// How many directories lie above `d`.
fn depth(d: &RelPath) -> usize {
    d.as_bytes().iter().filter(|b| **b == b'/').count()
}

/// Of `candidates`, the directories that are empty but for other candidates and `parked` files (a
/// transaction's `.bak`s, unlinked once it is committed), deepest first: what
/// a restore removes once its files are published. Each is reached without following a symlink;
/// one that cannot be listed is not a candidate.
pub(crate) fn removable_dirs(
    root: &Path,
    candidates: &[RelPath],
    parked: &BTreeSet<PathBuf>,
) -> Vec<RelPath> {
    let mut by_depth: Vec<&RelPath> = candidates.iter().collect();
    by_depth.sort_by_cached_key(|d| std::cmp::Reverse(depth(d)));
    let mut out: Vec<RelPath> = Vec::new();
    // What `out` holds, to look a name up in at once (a deep tree has as many candidates as
    // levels, each with a name to look up).
    let mut removed: HashSet<PathBuf> = HashSet::new();
    for d in by_depth {
        let Ok(names) = retrace_fsutil::list_dir_nofollow(root, d.as_path()) else {
            continue;
        };
        let all_removed = names.iter().all(|n| {
            let child = d.as_path().join(n);
            parked.contains(&root.join(&child)) || removed.contains(&child)
        });
        if all_removed {
            removed.insert(d.as_path().to_path_buf());
            out.push(d.clone());
        }
    }
    out
}

impl CheckpointStore {
    /// Removes `empty` (deepest first, `rmdir` only: one that someone filled meanwhile stays) and
    /// fsyncs their parents. They were recorded in the committed manifest before they go, so undo
    /// brings back exactly these; a crash before they go leaves them (empty).
    pub(crate) fn remove_dirs(&self, root: &Path, empty: &[RelPath]) {
        let mut parents = BTreeSet::new();
        for d in empty.iter().filter(|d| d.to_str().is_some()) {
            if retrace_fsutil::remove_empty_dir_nofollow(root, d.as_path()).is_ok() {
                parents.insert(parent_of(&d.under(root)));
            }
        }
        for p in parents {
            let _ = self.opts.fs.sync_dir(&p);
        }
    }

    /// Puts back the directories transaction `orig` removed (outermost first, never through a
    /// symlink), once its undo committed. One that cannot be made (a file or a symlink there now)
    /// is left alone: it was empty.
    pub(crate) fn recreate_dirs(&self, orig: &Manifest) {
        let Some(root) = self.sidecar.root.as_deref() else {
            return;
        };
        let mut dirs: Vec<RelPath> = orig
            .removed_dirs
            .iter()
            .filter_map(|d| RelPath::from_stored(d.as_bytes()).ok())
            .collect();
        dirs.sort_by_cached_key(depth);
        for d in dirs {
            if let Ok(made) = retrace_fsutil::create_dirs_nofollow(root, d.as_path(), 0o777) {
                for m in made {
                    let _ = self.opts.fs.sync_dir(&parent_of(&m));
                }
            }
        }
    }
}
