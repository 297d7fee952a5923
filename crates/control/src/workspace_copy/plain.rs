//! A copy of a workspace that is not a git repository: what the workspace's walk keeps (its
//! ignore rules, its places off limits; never `.git/`, never into a repository of its own,
//! never through a symlink), each path as it is. What the walk does not keep is listed, by the
//! outermost name left out (an ignored directory once, not each file in it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use retrace_protocol::{ErrorCode, ForkSkipReason, ForkSkipped};
use retrace_tools::tree_walk::{Found, TreeWalk};
use retrace_tools::Workspace;

use super::entry::{copy_entry, set_dir_modes, skip, Copied};
use crate::error::{coded, Result};

/// Copies what the walk of `ws` keeps into `to` (an empty directory); returns what it left out.
pub(super) fn copy_workspace(ws: &Workspace, to: &Path) -> Result<Vec<ForkSkipped>> {
    let from = ws.root();
    let mut kept: BTreeMap<PathBuf, Found> = BTreeMap::new();
    TreeWalk::new(ws)
        .walk(Path::new(""), &mut |rel, found| {
            kept.insert(rel.to_path_buf(), found);
        })
        .map_err(|e| coded(ErrorCode::Io, format!("cannot walk `{}`: {e}", from.display())))?;
    let mut skipped = Vec::new();
    let mut dirs: Vec<(PathBuf, u32)> = Vec::new();
    // What the walk left out: the names in each directory it entered that it did not keep.
    let entered = std::iter::once(PathBuf::new()).chain(
        kept.iter()
            .filter(|(_, f)| **f == Found::Dir)
            .map(|(p, _)| p.clone()),
    );
    for dir in entered.collect::<Vec<_>>() {
        let Ok(names) = std::fs::read_dir(from.join(&dir)) else {
            continue;
        };
        for name in names.flatten() {
            let rel = dir.join(name.file_name());
            if kept.contains_key(&rel) || (dir.as_os_str().is_empty() && name.file_name() == ".git") {
                continue;
            }
            let is_dir = name.file_type().is_ok_and(|t| t.is_dir());
            let mut shown = rel.to_string_lossy().into_owned();
            if is_dir {
                shown.push('/');
            }
            skipped.push(skip(
                shown,
                ForkSkipReason::Ignored,
                "ignored by the workspace's ignore rules, or off limits: not copied",
            ));
        }
    }
    for (rel, found) in &kept {
        let shown = rel.to_string_lossy().into_owned();
        match found {
            Found::Nested => skipped.push(skip(
                format!("{shown}/"),
                ForkSkipReason::Repository,
                "a repository of its own: not copied",
            )),
            Found::Unreadable => skipped.push(skip(
                format!("{shown}/"),
                ForkSkipReason::Unreadable,
                "a directory that cannot be read: not copied",
            )),
            Found::File | Found::Dir => match copy_entry(from, to, rel)? {
                Copied::File => {}
                Copied::Dir(mode) => dirs.push((rel.clone(), mode)),
                Copied::Skipped(s) => skipped.push(s),
            },
        }
    }
    set_dir_modes(to, dirs)?;
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(skipped)
}
