//! The new workspace of a fork into a new workspace (SPEC §5.1): the directory checked (absent or
//! empty, outside the source workspace and its repository, outside the data root), then made —
//! a `git worktree` of the source's repository with its uncommitted and untracked files carried
//! over ([`git`]), else a copy of what the workspace's walk keeps ([`plain`]) — so that its files
//! are the source workspace's as they are now, ignored ones left out. The turn's start is then
//! written over it by the checkpoint store (`CheckpointStore::write_turn_start`), never here.
//! Nothing in the source (its files, its `.git`'s index and refs) is written; `git worktree add`
//! registers the new worktree in the repository (`.git/worktrees/`), as it always does.

use std::path::{Path, PathBuf};

use retrace_fsutil::RelPath;
use retrace_protocol::{ErrorCode, ForkSkipReason, ForkSkipped};
use retrace_tools::tree_walk::TreeWalk;
use retrace_tools::Workspace;

use crate::error::{coded, Result};

mod entry;
mod git;
mod plain;

pub(crate) use git::{remove_worktree, repo_of};

/// The directory a fork makes its new workspace in, as checked.
#[derive(Debug, Clone)]
pub(crate) struct NewDir {
    /// Its canonical path.
    pub(crate) path: PathBuf,
    /// The outermost directory of it that did not exist (itself, or one above it): removed if
    /// the fork fails. `None` when it existed (empty): emptied again.
    made_from: Option<PathBuf>,
}

fn usage(message: String) -> crate::error::ControlError {
    coded(ErrorCode::Usage, message)
}

/// `given` (absolute) as a canonical path: its nearest existing ancestor resolved (`..` and
/// symlinks in it followed), the names below it as given; and the outermost part of it that does
/// not exist.
fn resolved(given: &Path) -> Result<(PathBuf, Option<PathBuf>)> {
    let mut existing = given.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    while std::fs::symlink_metadata(&existing).is_err() {
        let Some(name) = existing.file_name().map(|n| n.to_os_string()) else {
            break;
        };
        rest.push(name);
        existing.pop();
    }
    let base = std::fs::canonicalize(&existing)
        .map_err(|e| usage(format!("the directory `{}` cannot be used: {e}", given.display())))?;
    let made_from = rest.last().map(|n| base.join(n));
    let mut path = base;
    for n in rest.iter().rev() {
        path.push(n);
    }
    Ok((path, made_from))
}

/// Checks `given` (absolute) as the directory of a new workspace forked from the workspace
/// `source` (inside the tree `outer`: the repository's top, or `source` itself): absent, or an
/// empty directory (not a symlink); outside `outer` and `data_root`. Makes nothing.
pub(crate) fn check_new_dir(given: &Path, outer: &Path, data_root: &Path) -> Result<NewDir> {
    if let Ok(m) = std::fs::symlink_metadata(given) {
        if m.file_type().is_symlink() {
            return Err(usage(format!(
                "`{}` is a symlink; name a new or empty directory for the new workspace",
                given.display()
            )));
        }
        if !m.is_dir() {
            return Err(usage(format!(
                "`{}` exists and is not a directory; name a new or empty directory for the new workspace",
                given.display()
            )));
        }
        let mut names = std::fs::read_dir(given)
            .map_err(|e| usage(format!("the directory `{}` cannot be read: {e}", given.display())))?;
        if names.next().is_some() {
            return Err(usage(format!(
                "`{}` is not empty; a fork into a new workspace needs a new or empty directory",
                given.display()
            )));
        }
    }
    let (path, made_from) = resolved(given)?;
    if path.starts_with(outer) || outer.starts_with(&path) {
        return Err(usage(format!(
            "`{}` is inside `{}` (or holds it), which the fork copies; name a directory outside it",
            path.display(),
            outer.display()
        )));
    }
    let data = std::fs::canonicalize(data_root).unwrap_or_else(|_| data_root.to_path_buf());
    if path.starts_with(&data) {
        return Err(usage(format!(
            "`{}` is inside Retrace's data directory `{}`, which cannot be a workspace",
            path.display(),
            data.display()
        )));
    }
    if path.components().any(|c| c.as_os_str() == ".git") {
        return Err(usage(format!(
            "`{}` is inside a `.git` directory, which cannot be a workspace",
            path.display()
        )));
    }
    Ok(NewDir { path, made_from })
}

/// The new workspace, made.
pub(crate) struct Made {
    /// The directory made (the worktree's top, or the copy).
    pub(crate) dir: PathBuf,
    /// The new session's workspace: `dir`, or the source workspace's place in the new worktree.
    pub(crate) workspace: PathBuf,
    /// Whether `dir` is a `git worktree` of the source's repository.
    pub(crate) git_worktree: bool,
    /// What was not copied, and why.
    pub(crate) skipped: Vec<ForkSkipped>,
    /// The source's ignored paths (`git` mode), each with whether it is a directory.
    ignored: Vec<(PathBuf, bool)>,
}

/// Makes the new workspace in `new` from the workspace `ws` (in `repo`, when it is in one with a
/// commit): its files are the source's as they are now. Whatever fails, what was made is
/// removed again.
pub(crate) fn make(ws: &Workspace, repo: Option<&git::Repo>, new: &NewDir) -> Result<Made> {
    let made = match repo {
        Some(repo) => make_worktree(ws, repo, new),
        None => make_copy(ws, new),
    };
    if made.is_err() {
        undo(new, repo.is_some());
    }
    made
}

fn make_worktree(ws: &Workspace, repo: &git::Repo, new: &NewDir) -> Result<Made> {
    git::add_worktree(ws.root(), &new.path)?;
    let workspace = new.path.join(&repo.prefix);
    if !workspace.is_dir() {
        std::fs::create_dir_all(&workspace).map_err(|e| {
            coded(
                ErrorCode::Io,
                format!("cannot create `{}`: {e}", workspace.display()),
            )
        })?;
    }
    let carried = git::carry_over(ws, &workspace)?;
    Ok(Made {
        dir: new.path.clone(),
        workspace,
        git_worktree: true,
        skipped: carried.skipped,
        ignored: carried.ignored,
    })
}

fn make_copy(ws: &Workspace, new: &NewDir) -> Result<Made> {
    std::fs::create_dir_all(&new.path).map_err(|e| {
        coded(
            ErrorCode::Io,
            format!("cannot create `{}`: {e}", new.path.display()),
        )
    })?;
    let skipped = plain::copy_workspace(ws, &new.path)?;
    Ok(Made {
        dir: new.path.clone(),
        workspace: new.path.clone(),
        git_worktree: false,
        skipped,
        ignored: Vec::new(),
    })
}

/// Removes what a fork made in `new` (after it failed): the worktree or the copy, and the
/// directories it made above; a directory that existed (empty) stays, empty.
pub(crate) fn undo(new: &NewDir, git_worktree: bool) {
    if git_worktree && new.path.exists() {
        let _ = git::remove_worktree(&new.path);
    }
    match &new.made_from {
        Some(top) => {
            let _ = std::fs::remove_dir_all(top);
        }
        None => {
            for e in std::fs::read_dir(&new.path).into_iter().flatten().flatten() {
                let p = e.path();
                let _ = match e.file_type() {
                    Ok(t) if t.is_dir() => std::fs::remove_dir_all(&p),
                    _ => std::fs::remove_file(&p),
                };
            }
        }
    }
}

impl Made {
    /// Whether the turn's start is not written at `rel` (of the source workspace): it is ignored
    /// (`git`'s listing, for what exists; the walk's rules for anything else), and the copy left
    /// it out.
    pub(crate) fn excluded(&self, walk: &TreeWalk<'_>, source: &Path, rel: &RelPath) -> Option<ForkSkipped> {
        let p = rel.as_path();
        let listed = self
            .ignored
            .iter()
            .any(|(i, dir)| p == i.as_path() || (*dir && p.starts_with(i)));
        let unseen = std::fs::symlink_metadata(rel.under(source)).is_err() && !walk.keeps(p);
        let by_walk = !self.git_worktree && !walk.keeps(p);
        (listed || unseen || by_walk).then(|| ForkSkipped {
            path: Some(rel.to_lossy()),
            reason: ForkSkipReason::Ignored,
            turn: None,
            says: "ignored by the workspace's ignore rules, or off limits: not written".into(),
        })
    }
}
