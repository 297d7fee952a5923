//! Where a snapshot's paths come from: the workspace's walk, with its ignore rules.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// What a walk found at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// Anything but a directory: a regular file, a symlink, a special file.
    File,
    /// A directory it enters.
    Dir,
    /// A directory it does not enter: it holds a git repository of its own.
    Nested,
    /// A directory it could not enter: it cannot be read.
    Unreadable,
}

/// One step of [`Walk::walk_stat`].
#[derive(Debug)]
pub enum Step<'a> {
    /// The walk is about to enter these directories (relative to the root); nothing in them has
    /// been looked at yet.
    Entering(&'a [PathBuf]),
    /// A path the walk keeps (relative to the root), what it is, and for a file what `lstat` said
    /// of it when the walk looked.
    Found(&'a Path, Found, Option<&'a fs::Metadata>),
}

/// Where the files of a snapshot come from: the workspace's walk, which applies its ignore rules.
pub trait Walk {
    /// Calls `visit` with every path under the workspace root the walk keeps (relative to the
    /// root) and what it is.
    fn walk(&self, visit: &mut dyn FnMut(&Path, Found)) -> io::Result<()>;
    /// [`Walk::walk`] step by step: a walk that can also says which directories it is about to
    /// enter (before it looks at anything in them) and what `lstat` said of each file, where it
    /// looked already (else the snapshot looks itself).
    fn walk_stat(&self, visit: &mut dyn FnMut(Step<'_>)) -> io::Result<()> {
        self.walk(&mut |p, f| visit(Step::Found(p, f, None)))
    }
    /// The same under the directory `dir` (relative to the root; itself not visited).
    fn walk_under(&self, dir: &Path, visit: &mut dyn FnMut(&Path, Found)) -> io::Result<()>;
    /// Whether the walk keeps `rel` (relative to the root): neither it nor a directory above it is
    /// ignored, off limits, `.git` or a repository of its own.
    fn keeps(&self, rel: &Path) -> bool;
}

/// A walk of everything under a root but `.git` directories, skipping nested repositories: no
/// ignore rules (the product passes the workspace's own walk).
#[derive(Debug, Clone)]
pub struct PlainWalk {
    /// The workspace root.
    pub root: PathBuf,
}

impl Walk for PlainWalk {
    fn walk(&self, visit: &mut dyn FnMut(&Path, Found)) -> io::Result<()> {
        self.walk_under(Path::new(""), visit)
    }

    fn keeps(&self, rel: &Path) -> bool {
        let mut at = self.root.clone();
        let n = rel.components().count();
        for (i, c) in rel.components().enumerate() {
            if c.as_os_str() == ".git" {
                return false;
            }
            at.push(c);
            if i + 1 < n && retrace_fsutil::holds_repository(&at) {
                return false;
            }
        }
        true
    }

    fn walk_under(&self, dir: &Path, visit: &mut dyn FnMut(&Path, Found)) -> io::Result<()> {
        fn go(root: &Path, rel: &Path, visit: &mut dyn FnMut(&Path, Found)) -> io::Result<()> {
            let mut names: Vec<_> = fs::read_dir(root.join(rel))?.collect::<io::Result<Vec<_>>>()?;
            names.sort_by_key(|e| e.file_name());
            for e in names {
                if e.file_name() == ".git" {
                    continue;
                }
                let p = rel.join(e.file_name());
                if e.file_type()?.is_dir() {
                    if retrace_fsutil::holds_repository(&root.join(&p)) {
                        visit(&p, Found::Nested);
                    } else {
                        visit(&p, Found::Dir);
                        go(root, &p, visit)?;
                    }
                } else {
                    visit(&p, Found::File);
                }
            }
            Ok(())
        }
        go(&self.root, dir, visit)
    }
}
