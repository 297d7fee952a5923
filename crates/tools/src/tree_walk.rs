//! The walk of the whole workspace that the git backend's snapshots take: the same ignore rules
//! and places off limits as `list_dir`, `glob` and `grep` (`walk.rs`), never `.git/`, never
//! following a symlink, and not entering a directory that holds a repository of its own; and the
//! same question asked of one path (does the walk keep it?) for a path change notification names.
//!
//! It walks by itself rather than through the tools' walker: each directory is read once and
//! each of its entries looked at through the open directory (`fstatat`, not a lookup of the whole
//! path from `/`), and the walk hands that look to its caller, which would otherwise `lstat` every
//! file again. What it keeps is what the tools' walker keeps, in the same order (a test compares
//! the two on hostile trees).

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::{self, Metadata};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::error::ToolError;
use crate::ignore_rules::{IgnoreRules, IGNORE_FILES};
use crate::walk::{blocking_global_file, git_global_files};
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

/// One step of [`TreeWalk::walk_stat`].
#[derive(Debug)]
pub enum Step<'a> {
    /// It is about to enter these directories (relative to the root), one after the other;
    /// nothing in them has been looked at yet.
    Entering(&'a [PathBuf]),
    /// A path it keeps (relative to the root), what it is, and for a file what `lstat` said of
    /// it (`None` when that failed: the file went since it was listed, or cannot be looked at).
    Found(&'a Path, Found, Option<&'a Metadata>),
}

/// The walk of one workspace, with the ignore rules it has read so far.
pub struct TreeWalk<'a> {
    ws: &'a Workspace,
    rules: IgnoreRules,
    /// Git's global configuration or excludes file when one is not a regular file: a walk then
    /// refuses to start (reading it could block forever).
    blocked: Option<PathBuf>,
    /// Git's global excludes file as its configuration names it (it may not exist).
    excludes: Option<PathBuf>,
    /// Its rules, anchored at the workspace root (as the tools' walker reads them).
    global: Gitignore,
    /// Directories `keeps` found kept, with every directory above them (absolute).
    kept_dirs: Mutex<HashSet<OsString>>,
}

impl<'a> TreeWalk<'a> {
    /// The walk of `ws`.
    pub fn new(ws: &'a Workspace) -> TreeWalk<'a> {
        let blocked = blocking_global_file();
        let excludes = match blocked {
            Some(_) => None,
            None => ignore::gitignore::gitconfig_excludes_path(),
        };
        let global = match &excludes {
            // as `GitignoreBuilder::build_global` reads it: a bad line is skipped
            Some(file) if file.is_file() => {
                let mut b = GitignoreBuilder::new(ws.root());
                let _ = b.add(file);
                b.build().unwrap_or_else(|_| Gitignore::empty())
            }
            _ => Gitignore::empty(),
        };
        TreeWalk {
            ws,
            rules: IgnoreRules::new(ws.root()),
            blocked,
            excludes,
            global,
            kept_dirs: Mutex::new(HashSet::new()),
        }
    }

    /// Calls `visit` with every path under `dir` (relative to the root; `""` for all of it) that
    /// the walk keeps, relative to the root, and what it is; a directory that cannot be read is
    /// named as such (what is in it is not known).
    pub fn walk(&self, dir: &Path, visit: &mut dyn FnMut(&Path, Found)) -> Result<(), ToolError> {
        self.walk_stat(dir, &mut |step| {
            if let Step::Found(p, f, _) = step {
                visit(p, f)
            }
        })
    }

    /// [`TreeWalk::walk`], step by step: each path it keeps with what `lstat` said of it (looked at
    /// through its open directory), and before it enters the directories below one directory,
    /// all of them at once (so a caller can watch them before anything in them is looked at).
    pub fn walk_stat(&self, dir: &Path, visit: &mut dyn FnMut(Step<'_>)) -> Result<(), ToolError> {
        if let Some(p) = &self.blocked {
            return Err(ToolError::IgnoreFileNotRegular {
                path: p.to_string_lossy().into_owned(),
            });
        }
        let root = self.ws.root();
        let mut go = Go {
            walk: self,
            nested: Vec::new(),
            visit,
        };
        let mut abs = if dir.as_os_str().is_empty() {
            root.to_path_buf()
        } else {
            root.join(dir)
        };
        go.dir(&mut abs, root.as_os_str().len());
        for p in std::mem::take(&mut go.nested) {
            (go.visit)(Step::Found(&p, Found::Nested, None));
        }
        Ok(())
    }

    /// Files outside the workspace's tree whose change changes what the walk keeps, which a
    /// change notification of the tree does not see: the repository's `.git/info/exclude`, git's
    /// global configuration files (they name the global excludes file) and that file.
    pub fn rule_files_outside(&self) -> Vec<PathBuf> {
        let mut files = vec![self.rules.boundary().join(".git/info/exclude")];
        files.extend(git_global_files());
        files.extend(self.excludes.clone());
        files
    }

    /// Whether the walk keeps `rel` (relative to the root): no part of it is `.git`, no directory
    /// above it is ignored (by the workspace's rules or git's global excludes), off limits or a
    /// repository of its own, and it is not ignored itself.
    pub fn keeps(&self, rel: &Path) -> bool {
        if rel
            .components()
            .any(|c| !matches!(c, Component::Normal(_)) || c.as_os_str() == ".git")
        {
            return false;
        }
        let root = self.ws.root();
        let abs = root.join(rel);
        if abs == root {
            return true;
        }
        // The directories above it, from the deepest this walk already kept up to it, each
        // looked at once for the walk's life: a look asks of every path a notification names,
        // and they mostly share their directories (asking again of every directory above every
        // path made a deep tree cubic in its depth).
        let mut unknown: Vec<&Path> = Vec::new();
        let mut up = abs.parent();
        while let Some(dir) = up {
            if dir == root || self.kept_dirs().contains(dir.as_os_str()) {
                break;
            }
            unknown.push(dir);
            up = dir.parent();
        }
        for dir in unknown.into_iter().rev() {
            if self.excluded(dir, true) || retrace_fsutil::holds_repository(dir) {
                return false;
            }
            self.kept_dirs().insert(dir.as_os_str().to_owned());
        }
        let is_dir = std::fs::symlink_metadata(&abs).is_ok_and(|m| m.is_dir());
        !self.excluded(&abs, is_dir)
    }

    /// Whether `abs` is off limits, or ignored by the workspace's rules or git's global excludes.
    fn excluded(&self, abs: &Path, is_dir: bool) -> bool {
        self.ws.walk_skips(abs)
            || self.global.matched(abs, is_dir).is_ignore()
            || self.rules.ignored(abs, is_dir)
    }

    /// The directories [`TreeWalk::keeps`] found kept, with every directory above them.
    fn kept_dirs(&self) -> std::sync::MutexGuard<'_, HashSet<OsString>> {
        self.kept_dirs.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// What the walk keeps of a directory's entry.
enum Kept {
    /// Anything but a directory, with what `lstat` said of it.
    File(Option<Metadata>),
    /// A directory it enters.
    Dir,
    /// A directory holding a repository of its own.
    Nested,
}

/// One walk in progress.
struct Go<'w, 'v> {
    walk: &'w TreeWalk<'w>,
    /// Directories holding a repository of their own, named after everything else.
    nested: Vec<PathBuf>,
    visit: &'v mut dyn FnMut(Step<'_>),
}

impl Go<'_, '_> {
    /// Walks the directory `abs` (`root_len` bytes of it are the root): its entries in the
    /// order of their names' bytes, each directory followed by what is in it. Its files are
    /// looked at while it is open, before any directory below it is entered (so the walk holds
    /// one directory open at a time, however deep the tree).
    fn dir(&mut self, abs: &mut PathBuf, root_len: usize) {
        let mut kept: Vec<(OsString, Kept)> = Vec::new();
        let mut unreadable = false;
        match fs::read_dir(&*abs) {
            Ok(rd) => {
                let listed: Vec<fs::DirEntry> = rd
                    .filter_map(|e| {
                        unreadable |= e.is_err();
                        e.ok()
                    })
                    .collect();
                let rules_here = |e: &fs::DirEntry| {
                    let n = e.file_name();
                    n == ".git" || IGNORE_FILES.iter().any(|i| n == *i)
                };
                if !listed.iter().any(rules_here) {
                    self.walk.rules.listed_plain(abs);
                }
                let chain = self.walk.rules.chain(abs);
                let skips = self.walk.ws.walk_skips_under(abs);
                for e in listed {
                    // A file that went between the listing and the look at its type is left out.
                    let Ok(ty) = e.file_type() else { continue };
                    let name = e.file_name();
                    abs.push(&name);
                    let is_dir = ty.is_dir();
                    // Never `.git`; not ignored by git's global excludes, not off limits, not
                    // ignored by the workspace's rules.
                    let dropped = name == ".git"
                        || self.walk.global.matched(&*abs, is_dir).is_ignore()
                        || (skips && self.walk.ws.walk_skips(abs))
                        || chain.ignored(abs, is_dir);
                    let what = match (!dropped, is_dir) {
                        (false, _) => None,
                        (true, false) => Some(Kept::File(e.metadata().ok())),
                        (true, true) if retrace_fsutil::holds_repository(abs) => Some(Kept::Nested),
                        (true, true) => Some(Kept::Dir),
                    };
                    abs.pop();
                    kept.extend(what.map(|w| (name, w)));
                }
            }
            Err(_) => unreadable = true,
        }
        if unreadable {
            let rel = rel_of(abs, root_len);
            let still_a_dir = match fs::symlink_metadata(&*abs) {
                Ok(m) => m.is_dir(),
                // gone meanwhile: nothing to say of it
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
                // not even to be looked at (a path longer than the system allows): unreadable
                Err(_) => true,
            };
            if !rel.as_os_str().is_empty() && still_a_dir {
                (self.visit)(Step::Found(rel, Found::Unreadable, None));
            }
        }
        kept.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let below: Vec<PathBuf> = kept
            .iter()
            .filter(|(_, w)| matches!(w, Kept::Dir))
            .map(|(name, _)| rel_of(abs, root_len).join(name))
            .collect();
        if !below.is_empty() {
            (self.visit)(Step::Entering(&below));
        }
        for (name, what) in kept {
            abs.push(&name);
            let rel = rel_of(abs, root_len);
            match what {
                Kept::File(meta) => (self.visit)(Step::Found(rel, Found::File, meta.as_ref())),
                Kept::Nested => self.nested.push(rel.to_path_buf()),
                Kept::Dir => {
                    (self.visit)(Step::Found(rel, Found::Dir, None));
                    self.dir(abs, root_len);
                }
            }
            abs.pop();
        }
    }
}

/// `abs` relative to the root (whose path with its `/` is `root_len` bytes).
fn rel_of(abs: &Path, root_len: usize) -> &Path {
    let b = abs.as_os_str().as_bytes();
    let rest = b.get(root_len..).unwrap_or_default();
    Path::new(std::ffi::OsStr::from_bytes(
        rest.strip_prefix(b"/").unwrap_or(rest),
    ))
}

#[cfg(test)]
#[path = "tree_walk_tests.rs"]
mod tests;
