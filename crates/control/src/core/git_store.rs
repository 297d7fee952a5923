//! A git-backend session's object store (`<sidecar>/git/`) and the snapshot of the workspace it
//! keeps current: the workspace's walk as the store takes it, each look brought up to date (a full
//! walk when a rule file outside the tree changed), the stat cache written when it matters, and
//! the store pruned as it grows and when the session closes.

use std::path::{Path, PathBuf};

use retrace_gitstore::{Found, Limits, Snapshot, Snapshotter, Step, Walk};
use retrace_tools::Workspace;

use super::git_sight::Before;
use crate::error::Result;

/// The workspace's own walk (its ignore rules, its places off limits) as the object store takes it.
struct WorkspaceWalk<'a>(retrace_tools::tree_walk::TreeWalk<'a>);

fn found(f: retrace_tools::tree_walk::Found) -> Found {
    match f {
        retrace_tools::tree_walk::Found::File => Found::File,
        retrace_tools::tree_walk::Found::Dir => Found::Dir,
        retrace_tools::tree_walk::Found::Nested => Found::Nested,
        retrace_tools::tree_walk::Found::Unreadable => Found::Unreadable,
    }
}

impl Walk for WorkspaceWalk<'_> {
    fn walk(&self, visit: &mut dyn FnMut(&Path, Found)) -> std::io::Result<()> {
        self.walk_under(Path::new(""), visit)
    }

    fn walk_stat(&self, visit: &mut dyn FnMut(Step<'_>)) -> std::io::Result<()> {
        use retrace_tools::tree_walk::Step as S;
        self.0
            .walk_stat(Path::new(""), &mut |step| match step {
                S::Entering(dirs) => visit(Step::Entering(dirs)),
                S::Found(p, f, m) => visit(Step::Found(p, found(f), m)),
            })
            .map_err(std::io::Error::other)
    }

    fn walk_under(&self, dir: &Path, visit: &mut dyn FnMut(&Path, Found)) -> std::io::Result<()> {
        self.0
            .walk(dir, &mut |p, f| visit(p, found(f)))
            .map_err(std::io::Error::other)
    }

    fn keeps(&self, rel: &Path) -> bool {
        self.0.keeps(rel)
    }
}

/// How many files a full walk reads before the stat cache is written at once rather than when the
/// session closes: fewer are cheaper to read again after a kill than the whole cache is to write
/// (a resumed `exec` process's first look reads only what changed since the last one).
const SAVE_AFTER_READING: u64 = 256;

/// A session's object store and the snapshot the running shell command will be compared with.
pub(crate) struct GitBackend {
    pub(super) snap: Snapshotter,
    pub(super) ws: Workspace,
    /// The workspace as the last look saw it (`None` before the first).
    pub(super) current: Option<Snapshot>,
    /// What the look before the running command knew.
    pub(super) before: Option<Before>,
    /// The shell gap recorded before the running command, taken back once its changes are
    /// captured (kept if the process dies first: what it did is then not known).
    pub(super) pending: Option<retrace_protocol::Gap>,
    /// What the last look saw of the rule files outside the workspace's tree
    /// (`TreeWalk::rule_files_outside`): a change means a full walk.
    rules_outside: Option<Vec<(PathBuf, Option<RuleStamp>)>>,
}

/// What a rule file's `lstat` says, as far as a change goes.
type RuleStamp = (u64, i64, i64, i64, i64, u64);

fn rule_stamps(files: Vec<PathBuf>) -> Vec<(PathBuf, Option<RuleStamp>)> {
    use std::os::unix::fs::MetadataExt;
    files
        .into_iter()
        .map(|f| {
            let m = std::fs::symlink_metadata(&f).ok();
            let stamp = m.map(|m| {
                (
                    m.len(),
                    m.mtime(),
                    m.mtime_nsec(),
                    m.ctime(),
                    m.ctime_nsec(),
                    m.ino(),
                )
            });
            (f, stamp)
        })
        .collect()
}

impl GitBackend {
    /// Opens (or creates) the object store of the session whose sidecar is `sidecar`; `ws` is the
    /// tools' view of the workspace (its places off limits, the data root among them, are never
    /// walked).
    pub(crate) fn open(sidecar: &Path, ws: Workspace, max_file_bytes: u64) -> Result<GitBackend> {
        let limits = Limits {
            max_file_bytes,
            ..Limits::default()
        };
        let snap = Snapshotter::open(&sidecar.join("git"), ws.root(), limits)?;
        Ok(GitBackend {
            snap,
            ws,
            current: None,
            before: None,
            pending: None,
            rules_outside: None,
        })
    }

    /// Brings the snapshot up to date; returns what changed since the last look. The stat cache
    /// is written after a full walk that read more than [`SAVE_AFTER_READING`] files (what a
    /// later process would have to read again) and when the session closes, never after each
    /// command (it holds every file of the workspace).
    pub(super) fn refresh(&mut self) -> Result<Vec<retrace_gitstore::FileChange>> {
        let walk = WorkspaceWalk(retrace_tools::tree_walk::TreeWalk::new(&self.ws));
        let outside = rule_stamps(walk.0.rule_files_outside());
        if let Some(was) = self.rules_outside.replace(outside.clone()) {
            if was != outside {
                let named = outside.iter().find(|f| !was.contains(f)).map(|(f, _)| f);
                let why = named.map_or_else(
                    || "git's ignore rules outside the workspace changed".to_string(),
                    |f| format!("`{}` changed", f.display()),
                );
                self.snap.lose_events(&why);
            }
        }
        let (changed, stats) = self.snap.refresh(&mut self.current, &walk)?;
        if self.snap.last_full_walk.is_some() && stats.hashed > SAVE_AFTER_READING {
            let _ = self.snap.save_cache();
        }
        Ok(changed)
    }

    /// Removes the blobs the current snapshot does not name, once as many files were hashed
    /// since the last prune as the workspace has (plus a thousand): the store stays within about
    /// twice the workspace. Called after a command's changes were captured (never before: the
    /// before-images come from those blobs).
    pub(super) fn prune_if_grown(&mut self) {
        let Some(current) = self.current.as_ref() else {
            return;
        };
        if self.snap.hashed_since_prune() > current.files.len() as u64 + 1000 {
            self.snap.prune(current);
        }
    }
}

impl Drop for GitBackend {
    fn drop(&mut self) {
        if let Some(current) = self.current.as_ref() {
            self.snap.prune(current);
        }
        let _ = self.snap.save_cache();
    }
}
