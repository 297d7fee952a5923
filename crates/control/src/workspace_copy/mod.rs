//! The new workspace of a fork into a new workspace (SPEC §5.1): the directory checked (absent or
//! empty, outside the source workspace and its repository, outside the data root), then made —
//! a `git worktree` of the source's repository with its uncommitted and untracked files carried
//! over ([`git`]), else a copy of what the workspace's walk keeps ([`plain`]) — so that its files
//! are the source workspace's as they are now, ignored ones left out. The turn's start is then
//! written over it by the checkpoint store (`CheckpointStore::write_turn_start`), never here.
//! Nothing in the source (its files, its `.git`'s index and refs) is written; `git worktree add`
//! registers the new worktree in the repository (`.git/worktrees/`), as it always does.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use retrace_fsutil::RelPath;
use retrace_protocol::{Error, ErrorCode, ErrorDetails, ForkSkipReason, ForkSkipped};
use retrace_session::MadeDir;
use retrace_tools::tree_walk::TreeWalk;
use retrace_tools::Workspace;

use crate::error::{coded, ControlError, Result};

mod claim;
mod entry;
mod git;
mod plain;
mod remove;

pub(crate) use git::{repo_of, Repo};
pub(crate) use remove::remove_made_dir;

/// Set when the process is being stopped (an interrupt, a termination): a fork in progress stops
/// at its next step and removes what it made, as for any error.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// Makes every fork into a new workspace of this process stop at its next step and remove what
/// it made (a frontend calls it when it is interrupted or told to terminate).
pub fn stop_workspace_forks() {
    STOPPING.store(true, Ordering::SeqCst);
}

/// `cancelled` when the process is being stopped.
pub(crate) fn check_stopping() -> Result<()> {
    if STOPPING.load(Ordering::SeqCst) {
        return Err(coded(
            ErrorCode::Cancelled,
            "the fork into a new workspace was interrupted; what it made was removed",
        ));
    }
    Ok(())
}

/// A `usage` error about the directory named for a new workspace (its details name it, so that
/// a frontend can say which of its arguments that is).
pub(crate) fn bad_dir(path: &Path, message: String) -> ControlError {
    ControlError::Coded(
        Error::new(ErrorCode::Usage, message).with_details(ErrorDetails::Worktree {
            path: path.to_string_lossy().into_owned(),
        }),
    )
}

/// The directory a fork makes its new workspace in, as checked.
#[derive(Debug, Clone)]
pub(crate) struct NewDir {
    /// Its canonical path.
    pub(crate) path: PathBuf,
    /// Where the fork keeps its record of it until the fork is whole (`claim::record_path`).
    record: PathBuf,
}

/// `given` (absolute) as a canonical path: its nearest existing ancestor resolved (`..` and
/// symlinks in it followed), the names below it as given.
fn resolved(given: &Path) -> Result<PathBuf> {
    let mut existing = given.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    while std::fs::symlink_metadata(&existing).is_err() {
        let Some(name) = existing.file_name().map(|n| n.to_os_string()) else {
            break;
        };
        rest.push(name);
        existing.pop();
    }
    let mut path = std::fs::canonicalize(&existing).map_err(|e| {
        bad_dir(
            given,
            format!("the directory `{}` cannot be used: {e}", given.display()),
        )
    })?;
    for n in rest.iter().rev() {
        path.push(n);
    }
    Ok(path)
}

/// Checks `given` (absolute) as the directory of a new workspace forked from the workspace
/// `source` (in `repo`, when it is in one): absent, or an empty directory (not a symlink); not
/// the workspace, outside it and the repository it is in (its working trees and its `.git`),
/// outside `data_root`. Makes nothing.
pub(crate) fn check_new_dir(
    given: &Path,
    source: &Path,
    repo: Option<&Repo>,
    data_root: &Path,
) -> Result<NewDir> {
    if given.to_str().is_none() {
        return Err(bad_dir(
            given,
            format!(
                "`{}` is not valid UTF-8, which a session's workspace must be",
                given.display()
            ),
        ));
    }
    if let Ok(m) = std::fs::symlink_metadata(given) {
        if m.file_type().is_symlink() {
            return Err(bad_dir(
                given,
                format!(
                    "`{}` is a symlink; name a new or empty directory for the new workspace",
                    given.display()
                ),
            ));
        }
        if !m.is_dir() {
            return Err(bad_dir(
                given,
                format!(
                    "`{}` exists and is not a directory; name a new or empty directory for the new workspace",
                    given.display()
                ),
            ));
        }
    }
    let path = resolved(given)?;
    let source = std::fs::canonicalize(source).unwrap_or_else(|_| source.to_path_buf());
    if path == source {
        return Err(bad_dir(
            &path,
            format!(
                "`{}` is the session's own workspace; name a new or empty directory outside it",
                path.display()
            ),
        ));
    }
    let mut outers = vec![source.as_path()];
    if let Some(r) = repo {
        outers.push(&r.top);
        outers.push(&r.common_dir);
        outers.extend(r.main_tree.as_deref());
    }
    for outer in outers {
        if path.starts_with(outer) || outer.starts_with(&path) {
            return Err(bad_dir(
                &path,
                format!(
                    "`{}` is inside `{}` (or holds it), which the fork copies from; name a directory outside it",
                    path.display(),
                    outer.display()
                ),
            ));
        }
    }
    let data = std::fs::canonicalize(data_root).unwrap_or_else(|_| data_root.to_path_buf());
    if path.starts_with(&data) {
        return Err(bad_dir(
            &path,
            format!(
                "`{}` is inside Retrace's data directory `{}`, which cannot be a workspace",
                path.display(),
                data.display()
            ),
        ));
    }
    if path.components().any(|c| c.as_os_str() == ".git") {
        return Err(bad_dir(
            &path,
            format!(
                "`{}` is inside a `.git` directory, which cannot be a workspace",
                path.display()
            ),
        ));
    }
    if std::fs::symlink_metadata(&path).is_ok() {
        let mut names = std::fs::read_dir(&path).map_err(|e| {
            bad_dir(
                &path,
                format!("the directory `{}` cannot be read: {e}", path.display()),
            )
        })?;
        if names.next().is_some() {
            return Err(claim::not_empty(&path, &claim::record_path(&data, &path)));
        }
    }
    let record = claim::record_path(&data, &path);
    Ok(NewDir { path, record })
}

/// The new workspace, made.
pub(crate) struct Made {
    /// The directory made (the worktree's top, or the copy).
    pub(crate) dir: PathBuf,
    /// The new session's workspace: `dir`, or the source workspace's place in the new worktree.
    pub(crate) workspace: PathBuf,
    /// Whether `dir` is a `git worktree` of the source's repository.
    pub(crate) git_worktree: bool,
    /// What identifies `dir` as the directory this fork made.
    pub(crate) identity: MadeDir,
    /// What was not copied, and why.
    pub(crate) skipped: Vec<ForkSkipped>,
    /// The source's ignored paths (`git` mode), each with whether it is a directory.
    ignored: Vec<(PathBuf, bool)>,
    /// The directory claimed, and what of it was made.
    claim: claim::Claim,
    /// The source workspace (in the repository the worktree belongs to, for `git` mode).
    source: PathBuf,
}

/// Makes the new workspace in `new` from the workspace `ws` (in `repo`, when it is in one with a
/// commit): its files are the source's as they are now; the fork's record of `new` is held until
/// [`Made::finish`]. Whatever fails, what was made is removed again.
pub(crate) fn make(ws: &Workspace, repo: Option<&Repo>, new: &NewDir) -> Result<Made> {
    let source = ws.root();
    let claimed = match repo {
        Some(_) => claim::claim(&new.path, &new.record, |dir| git::add_worktree(source, dir))?,
        None => claim::claim(&new.path, &new.record, |dir| claim::still_empty(dir, &new.record))?,
    };
    let made = (|| match repo {
        Some(repo) => {
            check_stopping()?;
            git::check_out(&claimed.path)?;
            check_stopping()?;
            make_worktree(ws, repo, &claimed)
        }
        None => make_copy(ws, &claimed),
    })();
    match made {
        Ok(m) => Ok(m),
        Err(e) => {
            undo(&claimed, repo.is_some().then_some(source));
            Err(e)
        }
    }
}

fn make_worktree(ws: &Workspace, repo: &Repo, claimed: &claim::Claim) -> Result<Made> {
    let workspace = claimed.path.join(&repo.prefix);
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
        dir: claimed.path.clone(),
        workspace,
        git_worktree: true,
        identity: remove::identify(&claimed.path, true)?,
        skipped: carried.skipped,
        ignored: carried.ignored,
        claim: claimed.clone(),
        source: ws.root().to_path_buf(),
    })
}

fn make_copy(ws: &Workspace, claimed: &claim::Claim) -> Result<Made> {
    let skipped = plain::copy_workspace(ws, &claimed.path)?;
    Ok(Made {
        dir: claimed.path.clone(),
        workspace: claimed.path.clone(),
        git_worktree: false,
        identity: remove::identify(&claimed.path, false)?,
        skipped,
        ignored: Vec::new(),
        claim: claimed.clone(),
        source: ws.root().to_path_buf(),
    })
}

/// Removes what a fork made in `claimed` (after it failed): the worktree (`git worktree remove`
/// run in `repo_dir`, a directory of the source repository) or the copy, and the directories it
/// made above; a directory that existed (empty) stays, empty.
fn undo(claimed: &claim::Claim, repo_dir: Option<&Path>) {
    if let Some(repo_dir) = repo_dir {
        if claimed.path.exists() {
            let _ = git::remove_worktree(repo_dir, &claimed.path);
        }
    }
    claimed.release();
    if let Some(repo_dir) = repo_dir {
        git::prune_worktrees(repo_dir);
    }
}

impl Made {
    /// Removes what this fork made (after it failed).
    pub(crate) fn undo(&self) {
        undo(&self.claim, self.git_worktree.then_some(self.source.as_path()));
    }

    /// Checks that the directory is still the one this fork made (not removed or replaced while
    /// it was being filled), before the new session is written.
    pub(crate) fn check_still_there(&self) -> Result<()> {
        use std::os::unix::fs::MetadataExt;
        let same = std::fs::symlink_metadata(&self.dir)
            .is_ok_and(|m| m.dev() == self.identity.dev && m.ino() == self.identity.ino);
        if !same {
            return Err(coded(
                ErrorCode::Io,
                format!(
                    "`{}` was removed or replaced while the fork was being made; no session was made",
                    self.dir.display()
                ),
            ));
        }
        Ok(())
    }

    /// The fork is whole (its session made): its record goes, last.
    pub(crate) fn finish(&self) {
        self.claim.finish();
    }

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
