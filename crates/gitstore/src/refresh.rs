//! Keeping a snapshot current: after the first full walk, each refresh asks change notification
//! which paths moved and re-reads only those (a new directory is walked), so a refresh costs what
//! changed, not what the tree weighs. It walks everything again (a full stat walk through the stat
//! cache, which misses nothing) when notification cannot say: events were lost, watching failed,
//! an ignore file or a `.git` changed (what the walk keeps changed), or a directory the snapshot
//! had was removed or moved (its watches would name the old place). A file with several names
//! (hard links) that changed is read again under each name the stat cache knows for its inode.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use retrace_fsutil::RelPath;

use crate::changes::{changes, same, side, FileChange, Side};
use crate::error::Result;
use crate::snapshot::{Skip, Snapshot, SnapshotStats, Snapshotter};
use crate::walk::{Found, Walk};
use crate::watch::Dirty;

/// The names whose change changes what the walk keeps.
const IGNORE_FILES: [&str; 3] = [".gitignore", ".ignore", "exclude"];

/// Every path of `s` at or under `rel` (its files, skips and directories).
fn at_or_under(s: &Snapshot, rel: &RelPath) -> Vec<RelPath> {
    let prefix = [rel.as_bytes(), b"/"].concat();
    let under = |p: &RelPath| p == rel || p.as_bytes().starts_with(&prefix);
    // Paths under `rel` sort after it and start with its bytes (`a`, `a-b`, `a/x`): a range walk.
    let near = |p: &&RelPath| p.as_bytes().starts_with(rel.as_bytes());
    let mut all: BTreeSet<RelPath> = BTreeSet::new();
    all.extend(
        s.files
            .range(rel.clone()..)
            .map(|(p, _)| p)
            .take_while(near)
            .filter(|p| under(p))
            .cloned(),
    );
    all.extend(
        s.skipped
            .range(rel.clone()..)
            .map(|(p, _)| p)
            .take_while(near)
            .filter(|p| under(p))
            .cloned(),
    );
    all.extend(
        s.dirs
            .range(rel.clone()..)
            .take_while(near)
            .filter(|p| under(p))
            .cloned(),
    );
    all.into_iter().collect()
}

impl Snapshotter {
    /// Makes the next refresh take its events as lost (`why`), as an overflow of the kernel's
    /// queue does: when something notification does not watch changed what the walk keeps (an
    /// ignore rule outside the workspace's tree), and for tests, which cannot make the kernel
    /// drop events.
    pub fn lose_events(&mut self, why: &str) {
        if let Some(w) = self.watch.as_mut() {
            w.lose(why);
        }
    }

    /// Brings `snap` (the workspace as last seen; `None` before the first look) up to date with the
    /// workspace as `walk` sees it, and returns what changed since (nothing on the first look,
    /// which walks everything). See the module docs for when it walks everything again.
    pub fn refresh(
        &mut self,
        snap: &mut Option<Snapshot>,
        walk: &dyn Walk,
    ) -> Result<(Vec<FileChange>, SnapshotStats)> {
        let dirty = match (snap.is_some(), self.watch.as_mut()) {
            (true, Some(w)) => w.look(),
            (false, _) => Dirty::All("the first look".into()),
            (true, None) => Dirty::All(
                self.last_full_walk
                    .clone()
                    .unwrap_or_else(|| "no change notification".into()),
            ),
        };
        let paths = match dirty {
            Dirty::All(why) => return self.full(snap, walk, why),
            Dirty::Paths(p) => p,
        };
        let Some(s) = snap.as_mut() else {
            return self.full(snap, walk, "the first look".into());
        };
        let mut todo: BTreeSet<RelPath> = BTreeSet::new();
        for abs in &paths {
            let Ok(rel) = abs.strip_prefix(&self.root) else {
                continue;
            };
            if rel.as_os_str().is_empty() {
                continue;
            }
            if rel
                .file_name()
                .is_some_and(|n| IGNORE_FILES.iter().any(|i| n == *i))
            {
                return self.full(snap, walk, format!("`{}` changed", rel.display()));
            }
            // A repository of its own came or went (a `.git` made, removed or swapped, or a kept
            // directory made a git directory itself, whichever of its pieces came last): what the
            // walk keeps under its directory changed, which no other event says.
            let made_git_dir = || {
                rel.file_name()
                    .is_some_and(|n| retrace_fsutil::GIT_DIR_PIECES.iter().any(|g| n == *g))
                    && abs.parent().is_some_and(retrace_fsutil::holds_repository)
            };
            if rel.file_name().is_some_and(|n| n == ".git") || made_git_dir() {
                return self.full(snap, walk, format!("`{}` changed", rel.display()));
            }
            let Ok(r) = RelPath::from_stored(rel.as_os_str().as_encoded_bytes()) else {
                continue;
            };
            if s.dirs.contains(&r) && !fs::symlink_metadata(abs).is_ok_and(|m| m.is_dir()) {
                return self.full(snap, walk, format!("the directory `{}` went", rel.display()));
            }
            if walk.keeps(rel) {
                todo.insert(r);
            }
        }
        // A file with several names changed under each: notification names only the one written.
        let linked: BTreeSet<u64> = todo
            .iter()
            .filter_map(|r| {
                let m = fs::symlink_metadata(r.under(&self.root)).ok()?;
                (m.is_file() && m.nlink() > 1).then(|| m.ino())
            })
            .collect();
        if !linked.is_empty() {
            let others: Vec<RelPath> = self
                .cache
                .inodes()
                .filter(|(_, ino)| linked.contains(ino))
                .filter_map(|(p, _)| RelPath::from_stored(p).ok())
                .collect();
            todo.extend(others);
        }
        let mut stats = SnapshotStats::default();
        let mut found = Vec::new();
        // a path under a directory walked anew is read by that walk
        let mut walked: Vec<RelPath> = Vec::new();
        for rel in todo {
            if walked
                .iter()
                .any(|d| rel.as_bytes().starts_with(&[d.as_bytes(), b"/"].concat()))
            {
                continue;
            }
            let old: Vec<(RelPath, Side)> = at_or_under(s, &rel)
                .into_iter()
                .map(|p| {
                    let side = side(s, &p);
                    (p, side)
                })
                .collect();
            for (p, _) in &old {
                s.files.remove(p);
                s.skipped.remove(p);
                s.dirs.remove(p);
                self.cache.remove(p.as_bytes());
            }
            let abs = rel.under(&self.root);
            match fs::symlink_metadata(&abs) {
                Err(e) if e.kind() == io::ErrorKind::NotFound || e.kind() == io::ErrorKind::NotADirectory => {
                }
                Ok(m) if m.is_dir() => {
                    walked.push(rel.clone());
                    if retrace_fsutil::holds_repository(&abs) {
                        s.skipped
                            .extend(Skip::unwalked(Found::Nested).map(|k| (rel.clone(), k)));
                    } else if fs::read_dir(&abs).is_err() {
                        s.skipped
                            .extend(Skip::unwalked(Found::Unreadable).map(|k| (rel.clone(), k)));
                    } else {
                        self.walk_new_dir(s, &rel, walk, &mut stats)?;
                    }
                }
                _ => {
                    stats.seen += 1;
                    match self.one(&rel, None, &mut stats)? {
                        Ok(e) => {
                            s.files.insert(rel.clone(), e);
                        }
                        Err(Some(k)) => {
                            s.skipped.insert(rel.clone(), k);
                        }
                        Err(None) => {}
                    }
                }
            }
            let mut now: BTreeSet<RelPath> = at_or_under(s, &rel).into_iter().collect();
            for (p, before) in old {
                now.remove(&p);
                let after = side(s, &p);
                if !same(&before, &after) {
                    found.push(FileChange {
                        path: p,
                        before,
                        after,
                    });
                }
            }
            for p in now {
                let after = side(s, &p);
                if after != Side::Absent {
                    found.push(FileChange {
                        path: p,
                        before: Side::Absent,
                        after,
                    });
                }
            }
        }
        self.last_full_walk = None;
        found.sort_by(|a, b| a.path.cmp(&b.path));
        Ok((found, stats))
    }

    /// A directory that appeared: watched, then walked (so nothing made in it meanwhile is missed).
    fn walk_new_dir(
        &mut self,
        s: &mut Snapshot,
        rel: &RelPath,
        walk: &dyn Walk,
        stats: &mut SnapshotStats,
    ) -> Result<()> {
        s.dirs.insert(rel.clone());
        let root = self.root.clone();
        let mut dirs = vec![rel.under(&root)];
        let mut files: Vec<(PathBuf, Found)> = Vec::new();
        if let Some(w) = self.watch.as_mut() {
            w.rewatch(dirs.iter().map(PathBuf::as_path));
        }
        walk.walk_under(rel.as_path(), &mut |p, f| files.push((p.to_path_buf(), f)))
            .map_err(|e| crate::GitStoreError::Io {
                op: "walk",
                path: rel.under(&root),
                source: e,
            })?;
        for (p, f) in &files {
            if *f == Found::Dir {
                dirs.push(root.join(p));
            }
        }
        if let Some(w) = self.watch.as_mut() {
            w.rewatch(dirs.iter().map(PathBuf::as_path));
        }
        for (p, f) in files {
            let Ok(r) = RelPath::from_stored(p.as_os_str().as_encoded_bytes()) else {
                continue;
            };
            match f {
                Found::Dir => {
                    s.dirs.insert(r);
                }
                Found::Nested | Found::Unreadable => {
                    s.skipped.extend(Skip::unwalked(f).map(|k| (r, k)));
                }
                Found::File => {
                    stats.seen += 1;
                    match self.one(&r, None, stats)? {
                        Ok(e) => {
                            s.files.insert(r, e);
                        }
                        Err(Some(k)) => {
                            s.skipped.insert(r, k);
                        }
                        Err(None) => {}
                    }
                }
            }
        }
        Ok(())
    }

    /// A full walk: the new snapshot, what changed since `snap`, watches set up again.
    fn full(
        &mut self,
        snap: &mut Option<Snapshot>,
        walk: &dyn Walk,
        why: String,
    ) -> Result<(Vec<FileChange>, SnapshotStats)> {
        // Watches start afresh: one on a directory that moved would name its old place.
        // Each directory is watched before its files are read (the root first, the others as the
        // walk reaches them), so a change made while the walk runs is an event for the next look.
        self.watch = None;
        self.watch = crate::watch::Watch::start(&self.watch_dir).ok();
        let root = self.root.clone();
        if let Some(w) = self.watch.as_mut() {
            w.add_dirs(std::iter::once(root.as_path()));
        }
        let (new, stats) = self.snapshot(walk)?;
        let found = snap.as_ref().map(|old| changes(old, &new)).unwrap_or_default();
        *snap = Some(new);
        self.last_full_walk = Some(why);
        Ok((found, stats))
    }
}
