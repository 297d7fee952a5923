//! Removing sessions (SPEC §2): `delete` takes a session's writer lease — so a session some process
//! writes is refused, naming the holder — then removes its log, its whole checkpoint sidecar, the
//! torn lines cut off its log (`<id>.torn-<n>`), the lines a repair moved out of it
//! (`<id>.damaged-<n>`) and the lease file, in that order: the log goes first, so a crash part-way leaves no listed session
//! with half a sidecar, and deleting the same id again finishes the job. `prune` deletes the
//! sessions whose log was last written longer ago than a given age, skipping held ones.
//! `discard_if_empty` deletes a session in which nothing was made (a frontend opened it and left
//! without a prompt), so that it is neither listed nor resumed. The directory a fork into a new
//! workspace made for a session is removed with it only when asked (`delete_session_with`).

use std::path::Path;
use std::time::{Duration, SystemTime};

use retrace_protocol::{Error, ErrorCode, Missing, PruneReport, RemovedSession, SessionId};
use retrace_session::{diffs_path, lease_path, Lease, MadeDir, Session, SessionListing};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::{blocking, Found, Service};
use crate::error::{coded, Result};
use crate::paths::DataRoot;
use crate::session_list::listed;
use crate::view::session_id;
use crate::workspace_copy::remove_made_dir;

/// Which sessions `prune` considers.
#[derive(Debug, Clone)]
pub struct PruneRequest {
    /// Sessions whose log was last written at least this long ago.
    pub older_than: Duration,
    /// Only the sessions of this workspace (found from any directory under it); `None`: every
    /// session of the data root, old flat logs (workspace unknown) included.
    pub workspace: Option<std::path::PathBuf>,
    /// Report what would be removed; remove nothing.
    pub dry_run: bool,
}

impl Service {
    /// Deletes session `id`: its log, lease and whole sidecar. Refused (`busy`) while any process,
    /// this one included, has it open for writing. The directory a fork into a new workspace made
    /// for it stays (see [`Service::delete_session_with`]).
    pub async fn delete_session(&self, id: &str) -> std::result::Result<RemovedSession, Error> {
        self.delete_session_with(id, false).await
    }

    /// [`Service::delete_session`], which with `remove_worktree` also removes the directory a
    /// fork into a new workspace made for the session (a `git worktree`, removed with `git
    /// worktree remove --force` run in the source repository, or a copy), with everything in
    /// it, before the session's files: when that fails, nothing is deleted. Refused (`refused`)
    /// unless it is provably the directory the fork made, and when another file system is
    /// mounted inside it.
    pub async fn delete_session_with(
        &self,
        id: &str,
        remove_worktree: bool,
    ) -> std::result::Result<RemovedSession, Error> {
        let mut sid = session_id(id)?;
        // UUID text is case-insensitive: `01A2…` names the session `01a2…`.
        let lower = session_id(&id.to_ascii_lowercase())?;
        if std::fs::symlink_metadata(self.inner.data.log(&sid)).is_err()
            && std::fs::symlink_metadata(self.inner.data.log(&lower)).is_ok()
        {
            sid = lower;
        }
        let _g = self.inner.opening.lock().await;
        self.refuse_open(&sid)?;
        let data = self.inner.data.clone();
        let found = listed(&data, None)?.into_iter().find(|s| s.id == sid);
        let worktree = found.as_ref().and_then(made_dir);
        let workspace = found.and_then(|s| s.workspace);
        Ok(blocking("deleting the session", move || {
            delete(&data, &sid, workspace, worktree, remove_worktree)
        })
        .await?)
    }

    /// Deletes the sessions not written for `req.older_than` (of `req.workspace`, or all), oldest
    /// first; sessions a process writes are left and listed as `held`.
    pub async fn prune_sessions(&self, req: PruneRequest) -> std::result::Result<PruneReport, Error> {
        let _g = self.inner.opening.lock().await;
        let data = self.inner.data.clone();
        let mut old: Vec<(SystemTime, SessionListing)> = listed(&data, req.workspace.as_deref())?
            .into_iter()
            // An old flat log is listed with every workspace, but belongs to none we know of: only
            // a prune of every workspace takes it.
            .filter(|s| req.workspace.is_none() || s.workspace.is_some())
            .filter_map(|s| {
                let used = last_used(&s.log_path)?;
                let age = SystemTime::now().duration_since(used).unwrap_or_default();
                (age >= req.older_than).then_some((used, s))
            })
            .collect();
        old.sort_by_key(|(used, _)| *used);
        let mut report = PruneReport {
            removed: Vec::new(),
            held: Vec::new(),
            dry_run: req.dry_run,
        };
        for (_, s) in old {
            let open_here = self.refuse_open(&s.id).is_err();
            let held = open_here
                || retrace_session::Lease::holder(&data.sessions_dir(), &s.id)
                    .ok()
                    .flatten()
                    .is_some();
            if held {
                report.held.push(s.id.clone());
                continue;
            }
            let worktree = made_dir(&s);
            if req.dry_run {
                report
                    .removed
                    .push(described(&data, &s.id, s.workspace, worktree));
                continue;
            }
            let (d, id) = (data.clone(), s.id.clone());
            match blocking("deleting the session", move || {
                delete(&d, &s.id, s.workspace, worktree, false)
            })
            .await
            .map_err(Error::from)
            {
                Ok(r) => report.removed.push(r),
                // Taken by a writer since the check above.
                Err(e) if e.code == ErrorCode::Busy => report.held.push(id),
                Err(e) => return Err(e),
            }
        }
        Ok(report)
    }

    /// Deletes session `id` when it holds nothing anyone made ([`holds_nothing`]), as [`delete_session`]
    /// does; answers whether it did. A session open here or held by another process, one that
    /// cannot be read, or one with anything in it is left as it is (`false`).
    ///
    /// [`delete_session`]: Service::delete_session
    pub async fn discard_if_empty(&self, id: &str) -> std::result::Result<bool, Error> {
        let sid = session_id(id)?;
        let _g = self.inner.opening.lock().await;
        if self.refuse_open(&sid).is_err() {
            return Ok(false);
        }
        let data = self.inner.data.clone();
        Ok(blocking("discarding an empty session", move || {
            let dir = data.sessions_dir();
            // Under its lease, so that no process writes it between the look and the removal.
            let Ok(held) = Lease::acquire(&dir, &sid) else {
                return Ok(false);
            };
            match Session::open_reader(&dir, &sid) {
                Ok(s) if holds_nothing(&s) => {
                    let workspace = s.workspace().map(str::to_string);
                    remove(&data, &sid, workspace, None, held)?;
                    Ok(true)
                }
                _ => Ok(false),
            }
        })
        .await?)
    }

    /// `busy` when this process has session `id` open (or closing).
    pub(super) fn refuse_open(&self, id: &SessionId) -> Result<()> {
        match self.find(id) {
            Found::Nothing => Ok(()),
            Found::Open(_) | Found::Closing(_) => Err(coded(
                ErrorCode::Busy,
                format!("session {id} is open in this process; close it before deleting it"),
            )),
        }
    }
}

/// When the log at `log` was last written.
fn last_used(log: &Path) -> Option<SystemTime> {
    std::fs::symlink_metadata(log).and_then(|m| m.modified()).ok()
}

fn rfc3339(t: SystemTime) -> Option<String> {
    OffsetDateTime::from(t).format(&Rfc3339).ok()
}

/// The bytes under `p` (files and symlinks counted by their own size; nothing followed).
fn bytes_under(p: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(p) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(p)
        .map(|rd| rd.flatten().map(|e| bytes_under(&e.path())).sum())
        .unwrap_or(0)
}

/// The directory a fork into a new workspace made for the session `s`: where, whether it is a
/// `git worktree`, and what identifies it.
#[derive(Debug, Clone)]
struct Worktree {
    dir: String,
    git: bool,
    made: Option<MadeDir>,
}

fn made_dir(s: &SessionListing) -> Option<Worktree> {
    let f = s.forked_from.as_ref()?;
    Some(Worktree {
        dir: f.directory.clone()?,
        git: f.git_worktree,
        made: f.made.clone(),
    })
}

fn described(
    data: &DataRoot,
    id: &SessionId,
    workspace: Option<String>,
    worktree: Option<Worktree>,
) -> RemovedSession {
    let (log, sidecar) = (data.log(id), data.sidecar(id));
    RemovedSession {
        worktree: worktree.map(|w| w.dir),
        worktree_removed: false,
        id: id.clone(),
        workspace,
        log_path: log.display().to_string(),
        checkpoint_dir: sidecar.display().to_string(),
        bytes: bytes_under(&log) + bytes_under(&sidecar) + bytes_under(&diffs_path(&data.sessions_dir(), id)),
        last_used: last_used(&log).and_then(rfc3339),
    }
}

/// Whether session `s` holds nothing anyone made: a session of the current format, made from no
/// other, with no turn, no head but its first and no message or note on it. What a frontend sets
/// before the first prompt (the model, plan mode) does not count: there is no conversation for
/// it to matter to.
pub(crate) fn holds_nothing(s: &Session) -> bool {
    s.format() == retrace_session::FORMAT
        && s.forked_from().is_none()
        && s.migrated_from().is_none()
        && s.turns().is_empty()
        && s.heads().len() == 1
        && s.project(s.selected()).is_ok_and(|m| m.is_empty())
}

/// Deletes session `id` of `data` under its lease; with `remove_worktree`, the directory a fork
/// made for it (`worktree`) first.
fn delete(
    data: &DataRoot,
    id: &SessionId,
    workspace: Option<String>,
    worktree: Option<Worktree>,
    remove_worktree: bool,
) -> Result<RemovedSession> {
    let dir = data.sessions_dir();
    let (log, sidecar) = (data.log(id), data.sidecar(id));
    let exists = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    if !exists(&log) && !exists(&sidecar) {
        return Err(Error::not_found(
            Missing::Session,
            id.as_str(),
            // The frontends say what to do (the CLI: `retrace sessions`); the data directory's
            // layout is none of the user's business.
            format!("no session {id}"),
        )
        .into());
    }
    let held = Lease::acquire(&dir, id)?;
    let removed_dir = match worktree.as_ref().filter(|_| remove_worktree) {
        // The directory a fork made is the new session's own workspace: a header naming another
        // (edited by hand) is never taken at its word.
        Some(w) if workspace.as_deref() != Some(w.dir.as_str()) => {
            return Err(coded(
                ErrorCode::Refused,
                format!(
                    "session {id} records `{}` as the directory its fork made, which is not its workspace `{}`; nothing was removed: delete the session without --remove-worktree and remove the directory by hand if it is yours",
                    w.dir,
                    workspace.as_deref().unwrap_or("(none)")
                ),
            ));
        }
        Some(w) => remove_made_dir(Path::new(&w.dir), w.git, w.made.as_ref())?,
        None => false,
    };
    let mut removed = remove(data, id, workspace, worktree, held)?;
    removed.worktree_removed = removed_dir;
    Ok(removed)
}

/// Removes session `id` of `data`, whose lease is `held`.
fn remove(
    data: &DataRoot,
    id: &SessionId,
    workspace: Option<String>,
    worktree: Option<Worktree>,
    held: Lease,
) -> Result<RemovedSession> {
    let dir = data.sessions_dir();
    let (log, sidecar, lease) = (data.log(id), data.sidecar(id), lease_path(&dir, id));
    let removed = described(data, id, workspace, worktree);
    let gone = |r: std::io::Result<()>, p: &Path| match r {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(coded(
            ErrorCode::Io,
            format!("cannot remove `{}`: {e}", p.display()),
        )),
        _ => Ok(()),
    };
    gone(std::fs::remove_file(&log), &log)?;
    let diffs = diffs_path(&dir, id);
    gone(std::fs::remove_file(&diffs), &diffs)?;
    // `remove_dir_all` never follows a symlink (neither the sidecar itself nor anything in it).
    if std::fs::symlink_metadata(&sidecar).is_ok_and(|m| !m.is_dir()) {
        gone(std::fs::remove_file(&sidecar), &sidecar)?;
    } else {
        gone(std::fs::remove_dir_all(&sidecar), &sidecar)?;
    }
    // The bytes of torn last lines cut off the log (`<id>.torn-<n>`), and of lines a repair moved
    // out of it (`<id>.damaged-<n>`).
    let kept = [format!("{id}.torn-"), format!("{id}.damaged-")];
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = e.file_name();
        if name
            .to_str()
            .is_some_and(|n| kept.iter().any(|k| n.starts_with(k.as_str())))
        {
            gone(std::fs::remove_file(e.path()), &e.path())?;
        }
    }
    gone(std::fs::remove_file(&lease), &lease)?;
    drop(held);
    if let Ok(d) = std::fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(removed)
}
