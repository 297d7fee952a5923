//! The walk of the whole workspace that the git backend's snapshots take: the same ignore rules
//! and places off limits as `list_dir`, `glob` and `grep` (`walk.rs`), never `.git/`, never
//! following a symlink, and not entering a directory that holds a repository of its own.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::error::ToolError;
use crate::walk::walker_with;
use crate::workspace::Workspace;

/// What the walk found at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// Anything but a directory: a regular file, a symlink, a special file.
    File,
    /// A directory it enters.
    Dir,
    /// A directory it does not enter: it holds a git repository of its own.
    Nested,
}

/// Calls `visit` with every path of the workspace the walk keeps, relative to its root, and what
/// it is; an error reading a directory is left out of the walk (as the other walks do).
pub fn walk_workspace(ws: &Workspace, visit: &mut dyn FnMut(&Path, Found)) -> Result<(), ToolError> {
    let nested = Arc::new(Mutex::new(Vec::<PathBuf>::new()));
    let root = ws.root().to_path_buf();
    for entry in walker_with(ws, &root, None, Some(nested.clone()))?.flatten() {
        if entry.depth() == 0 {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(&root) else {
            continue;
        };
        let dir = entry.file_type().is_some_and(|t| t.is_dir());
        visit(rel, if dir { Found::Dir } else { Found::File });
    }
    let found = nested.lock().map(|n| n.clone()).unwrap_or_default();
    for p in found {
        if let Ok(rel) = p.strip_prefix(&root) {
            visit(rel, Found::Nested);
        }
    }
    Ok(())
}
