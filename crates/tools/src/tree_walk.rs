//! The walk of the whole workspace that the git backend's snapshots take: the same ignore rules
//! and places off limits as `list_dir`, `glob` and `grep` (`walk.rs`), never `.git/`, never
//! following a symlink, and not entering a directory that holds a repository of its own; and the
//! same question asked of one path (does the walk keep it?) for a path change notification names.

use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::error::ToolError;
use crate::ignore_rules::IgnoreRules;
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
    /// A directory it could not enter: it cannot be read (its permissions).
    Unreadable,
}

/// The path an error of the walk is about, if it names one.
fn error_path(e: &ignore::Error) -> Option<&Path> {
    match e {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => error_path(err),
        _ => None,
    }
}

/// The walk of one workspace, with the ignore rules it has read so far.
pub struct TreeWalk<'a> {
    ws: &'a Workspace,
    rules: IgnoreRules,
}

impl<'a> TreeWalk<'a> {
    /// The walk of `ws`.
    pub fn new(ws: &'a Workspace) -> TreeWalk<'a> {
        TreeWalk {
            ws,
            rules: IgnoreRules::new(ws.root()),
        }
    }

    /// Calls `visit` with every path under `dir` (relative to the root; `""` for all of it) that
    /// the walk keeps, relative to the root, and what it is; a directory that cannot be read is
    /// named as such (what is in it is not known).
    pub fn walk(&self, dir: &Path, visit: &mut dyn FnMut(&Path, Found)) -> Result<(), ToolError> {
        let nested = Arc::new(Mutex::new(Vec::<PathBuf>::new()));
        let root = self.ws.root().to_path_buf();
        for entry in walker_with(self.ws, &root.join(dir), None, Some(nested.clone()))? {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    let unreadable_dir = error_path(&e)
                        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
                        .and_then(|p| p.strip_prefix(&root).ok())
                        .filter(|rel| !rel.as_os_str().is_empty());
                    if let Some(rel) = unreadable_dir {
                        visit(rel, Found::Unreadable);
                    }
                    continue;
                }
            };
            if entry.depth() == 0 {
                continue;
            }
            let Ok(rel) = entry.path().strip_prefix(&root) else {
                continue;
            };
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            visit(rel, if is_dir { Found::Dir } else { Found::File });
        }
        let found = nested.lock().map(|n| n.clone()).unwrap_or_default();
        for p in found {
            if let Ok(rel) = p.strip_prefix(&root) {
                visit(rel, Found::Nested);
            }
        }
        Ok(())
    }

    /// Whether the walk keeps `rel` (relative to the root): no part of it is `.git`, no directory
    /// above it is ignored, off limits or a repository of its own, and it is not ignored itself.
    pub fn keeps(&self, rel: &Path) -> bool {
        let root = self.ws.root();
        let parts: Vec<Component<'_>> = rel.components().collect();
        let mut at = root.to_path_buf();
        for (i, c) in parts.iter().enumerate() {
            if !matches!(c, Component::Normal(_)) || c.as_os_str() == ".git" {
                return false;
            }
            at.push(c);
            let last = i + 1 == parts.len();
            let is_dir = !last || std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_dir());
            if self.ws.walk_skips(&at) || self.rules.ignored(&at, is_dir) {
                return false;
            }
            if !last && at.join(".git").exists() {
                return false;
            }
        }
        true
    }
}
