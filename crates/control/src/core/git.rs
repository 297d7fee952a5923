//! The git backend of a session (`backend = "git"`): a snapshot of the whole workspace before each
//! shell command and another after it; what differs is captured into the checkpoint store as if an
//! edit tool had changed it (before-images from the object store, after-images from the disk), so a
//! rewind, a revert, the turn's results and a file's history cover it. The object store is a cache
//! beside the sidecar (`<sidecar>/git/`); the checkpoint store keeps what a restore needs.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use retrace_agent::{ShellChanges, ShellCoverage};
use retrace_checkpoint::Known;
use retrace_fsutil::RelPath;
use retrace_gitstore::{Side, SkipReason};
use retrace_protocol::{ChangeAction, FileChange, GapReason};
use retrace_tools::diff::{file_change, moved, Side as DiffSide, MAX_DIFF_INPUT};
use retrace_tools::Workspace;

use super::git_sight::{dir_made_by_command, made_by_command, opaque_dirs, under_any, unentered, Before};
use super::git_store::GitBackend;
use super::Core;
use crate::error::Result;

fn unkept(reason: SkipReason, detail: &str) -> Known {
    let reason = match reason {
        SkipReason::Oversized => GapReason::Oversized,
        SkipReason::Symlink => GapReason::Symlink,
        SkipReason::Unreadable | SkipReason::Special => GapReason::Unreadable,
        // not unreadable: a repository the walk leaves to itself
        SkipReason::NestedRepository => GapReason::Untracked,
    };
    Known::Unkept {
        reason,
        detail: detail.to_string(),
    }
}

/// The directories a command made appear as new paths, by their bytes: a path's ancestors are
/// found among them without copying any.
type NewDirs<'a> = HashMap<&'a [u8], &'a RelPath>;

/// The new directories above `path`, deepest first, up to the first that is not new (nothing
/// above a directory that was there is new).
fn new_above<'a, 'p>(path: &'p RelPath, new: &'p NewDirs<'a>) -> impl Iterator<Item = &'a RelPath> + 'p {
    let b = path.as_bytes();
    (0..b.len())
        .rev()
        .filter(move |i| b[*i] == b'/')
        .map_while(move |i| new.get(&b[..i]).copied())
}

/// Marks in `set` the new directories above `path`, stopping at one already marked (whose own
/// are then marked too): each is marked once however many files lie below it.
fn mark_above<'a>(path: &RelPath, new: &NewDirs<'a>, set: &mut HashSet<&'a RelPath>) {
    for d in new_above(path, new) {
        if !set.insert(d) {
            break;
        }
    }
}

/// The directories above `path` that the command created (top down): those in `made` that no
/// file before it named (`claimed`). Each is named once in the turn, by the first new file below
/// it, as a tool's capture names the directories it had to make: a restore removes every one it
/// leaves empty either way, and a deep tree's record stays quadratic, not cubic, in its depth.
fn created_dirs<'a>(
    path: &RelPath,
    new: &NewDirs<'a>,
    made: &HashSet<&'a RelPath>,
    claimed: &mut HashSet<&'a RelPath>,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in new_above(path, new).filter(|d| made.contains(d)) {
        // one claimed has its own claimed too
        if !claimed.insert(d) {
            break;
        }
        out.push(d.as_path().to_path_buf());
    }
    out.reverse();
    out
}

/// A file there before the command that the walk did not see then.
const CAME_INTO_SIGHT: &str = "there before the command where the walk did not look (ignored, inside a repository of its own, or in a directory that could not be read): left as it is";
/// A directory the walk cannot read (no permission, or a path longer than the system allows).
const UNREADABLE_DIR: &str = "a directory the walk cannot read (no permission, or a path longer than the system allows): what the command did in it is not tracked";
/// A file the walk no longer sees after the command, whose bytes cannot be read.
const LEFT_SIGHT: &str = "out of the walk's sight after the command (now ignored, inside a repository of its own, or in a directory that cannot be read): what the command did to it is not tracked";

fn untracked(detail: &str) -> Known {
    Known::Unkept {
        reason: GapReason::Untracked,
        detail: detail.to_string(),
    }
}

/// A kept file that left the walk's sight during the command: gone, a deletion; still there,
/// `None` when it cannot be read as a regular file, `Some(None)` when it is as it was, else its
/// before-image and its change (taken like any other: a rewind brings it back, its after-image
/// read from the disk).
#[allow(clippy::type_complexity)]
fn out_of_sight(
    git: &GitBackend,
    root: &Path,
    path: &RelPath,
    was: &retrace_gitstore::Entry,
) -> Result<Option<Option<(Known, FileChange)>>> {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    let abs = path.under(root);
    let (file, meta) = match retrace_fsutil::open_regular_nofollow(&abs) {
        Ok(opened) => opened,
        // Gone, not merely out of sight: a deletion, from the copy the snapshot kept.
        Err(_)
            if std::fs::symlink_metadata(&abs).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) =>
        {
            let Ok(old) = git.snap.objects().read_blob(&was.id) else {
                return Ok(None);
            };
            let shown = if old.len() <= MAX_DIFF_INPUT {
                DiffSide::Bytes(&old)
            } else {
                DiffSide::TooLarge
            };
            let change = file_change(path.to_lossy(), ChangeAction::Delete, shown, DiffSide::Absent);
            return Ok(Some(Some((
                Known::File {
                    bytes: old,
                    mode: was.mode,
                },
                change,
            ))));
        }
        Err(_) => return Ok(None),
    };
    let mut now = Vec::new();
    if (&file)
        .take(MAX_DIFF_INPUT as u64 + 1)
        .read_to_end(&mut now)
        .is_err()
        || now.len() > MAX_DIFF_INPUT
    {
        return Ok(None);
    }
    let Ok(old) = git.snap.objects().read_blob(&was.id) else {
        return Ok(None);
    };
    let mode = meta.permissions().mode() & 0o7777;
    if old == now && mode == was.mode {
        return Ok(Some(None));
    }
    let change = file_change(
        path.to_lossy(),
        ChangeAction::Modify,
        DiffSide::Bytes(&old),
        DiffSide::Bytes(&now),
    );
    Ok(Some(Some((
        Known::File {
            bytes: old,
            mode: was.mode,
        },
        change,
    ))))
}

impl Core {
    /// Opens the git backend's object store when the session was created with it; `ws` is the
    /// tools' view of the workspace. A store that cannot be opened does not keep the session from
    /// opening (its rewinds and undo need no store): its shell commands are refused, saying why,
    /// until it can be (`git_store`).
    pub(crate) fn attach_git(&mut self, ws: Workspace) -> Result<()> {
        if self.session.backend() == retrace_protocol::CheckpointBackend::Git && self.git.is_none() {
            self.git_ws = Some(ws.clone());
            // The first look walks the whole workspace: in the background, from now on.
            let sidecar = self.data.sidecar(self.session.id());
            let max = self.retention.max_file_bytes;
            let first = std::thread::Builder::new()
                .name("retrace-git-first-look".into())
                .spawn(move || {
                    let mut git = GitBackend::open(&sidecar, ws, max)?;
                    git.refresh()?;
                    Ok(git)
                });
            self.git_first = first.ok();
        }
        Ok(())
    }

    /// The git backend's store, opened (again) when it is not: a store that failed (deleted
    /// while the session ran, a file in its place) is tried afresh at each command.
    fn git_store(&mut self) -> Result<&mut GitBackend> {
        if let Some(first) = self.git_first.take() {
            if !first.is_finished() {
                self.bus.publish(retrace_protocol::Event::Notice {
                    message: "waiting for the git backend's first look at the workspace (a new session reads every file once; a resumed one checks each file's size and times against its last snapshot)…".into(),
                    retry: None,
                });
            }
            // a first look that failed leaves the store to be opened afresh below
            if let Ok(Ok(git)) = first.join() {
                self.git = Some(git);
            }
        }
        if self.git.is_none() {
            let Some(ws) = self.git_ws.clone() else {
                return Err(crate::error::coded(
                    retrace_protocol::ErrorCode::Internal,
                    "the session has no git backend",
                ));
            };
            let sidecar = self.data.sidecar(self.session.id());
            let opened = GitBackend::open(&sidecar, ws, self.retention.max_file_bytes).map_err(|e| {
                crate::error::coded(
                    retrace_protocol::ErrorCode::Io,
                    format!(
                        "the git backend's object store `{}` cannot be used ({e}); remove it (it is a cache: the next command stores the workspace again)",
                        sidecar.join("git").display()
                    ),
                )
            })?;
            self.git = Some(opened);
        }
        match self.git.as_mut() {
            Some(g) => Ok(g),
            None => Err(crate::error::coded(
                retrace_protocol::ErrorCode::Internal,
                "no git store",
            )),
        }
    }

    /// Other sessions of this workspace whose writer is live now.
    fn other_writers(&self) -> Vec<retrace_protocol::SessionId> {
        let Some(ws) = self.git_ws.as_ref() else {
            return Vec::new();
        };
        retrace_session::other_writers(&self.data.sessions_dir(), ws.root(), self.session.id())
    }

    /// The backend the session was created with.
    pub(crate) fn backend(&self) -> retrace_protocol::CheckpointBackend {
        self.session.backend()
    }

    /// A shell command is about to run: in the git backend, the snapshot its changes are found
    /// against; else the `bash_side_effect` gap.
    pub(crate) fn shell_before(&mut self, command: &str) -> Result<ShellCoverage> {
        self.side_effect_before(super::seam::shell_gap(command))
    }

    /// A call whose effects are not known is about to run (a shell command, an MCP tool): in the
    /// git backend, the snapshot its changes are found against (`gap` recorded until they are
    /// captured); else `gap`.
    pub(crate) fn side_effect_before(&mut self, gap: retrace_protocol::Gap) -> Result<ShellCoverage> {
        if self.git_ws.is_none() {
            self.store.record_gap(gap)?;
            return Ok(ShellCoverage::Gap);
        }
        // What changed since the last look is not the command's (an edit tool's, the user's):
        // only brought up to date. A store that fails is opened afresh by the next command.
        let writers = self.other_writers();
        let git = self.git_store()?;
        let refreshed = git.refresh();
        git.before = Some(Before {
            writers,
            inodes: git.snap.cached_inodes(),
            ..Before::now(git.current.as_ref())
        });
        if refreshed.is_err() {
            self.git = None;
        }
        refreshed?;
        // Recorded as a gap until its changes are captured: a kill during it leaves the gap.
        let fresh = !self.store.has_gap(&gap);
        self.store.record_gap(gap.clone())?;
        if let Some(git) = self.git.as_mut() {
            git.pending = fresh.then_some(gap);
        }
        Ok(ShellCoverage::Tracked)
    }

    /// A call the user vouches changes nothing is about to run: in the git backend, the snapshot
    /// its changes are found against (`gap` recorded until they are captured, as for any call);
    /// else nothing. Whether it is tracked.
    pub(crate) fn watch_before(&mut self, gap: retrace_protocol::Gap) -> Result<bool> {
        if self.git_ws.is_none() {
            return Ok(false);
        }
        self.side_effect_before(gap).map(|c| c == ShellCoverage::Tracked)
    }

    /// A tracked shell command ran: what differs from the snapshot before it is captured (its
    /// before-images from the object store, its after-images from the disk) and returned as the
    /// call's changes.
    pub(crate) fn shell_after(&mut self, _command: &str) -> Result<ShellChanges> {
        if self.git_ws.is_none() {
            return Ok(ShellChanges::default());
        }
        let found = match self.git_store()?.refresh() {
            Ok(found) => found,
            Err(e) => {
                self.git = None;
                return Err(e);
            }
        };
        let Some(git) = self.git.as_mut() else {
            return Ok(ShellChanges::default());
        };
        let root = git.ws.root().to_path_buf();
        let before = git.before.take().unwrap_or_else(|| Before::now(None));
        let opaque_after = git.current.as_ref().map(opaque_dirs).unwrap_or_default();
        // directories the walk could not read after the command: what it did in them is unknown
        let unreadable_after = git
            .current
            .as_ref()
            .map(|snap| unentered(snap, |r| r == SkipReason::Unreadable))
            .unwrap_or_default();
        // what only came into the walk's sight, or left it, was not made or removed by the command
        let mut came: HashSet<&RelPath> = HashSet::new();
        let mut left: HashSet<&RelPath> = HashSet::new();
        for c in &found {
            match (&c.before, &c.after) {
                (Side::Absent, Side::File(_) | Side::Skipped(_))
                    if !made_by_command(&before, &root, &c.path) =>
                {
                    came.insert(&c.path);
                }
                (Side::File(_) | Side::Skipped(_), Side::Absent)
                    if under_any(&opaque_after, &c.path)
                        || std::fs::symlink_metadata(c.path.under(&root)).is_ok() =>
                {
                    left.insert(&c.path);
                }
                _ => {}
            }
        }
        // The new directories the command made, each looked at once (not once for every file
        // below it: a deep tree was cubic in its depth). One born before the command is its too
        // when it holds files the command made or moved and none that only came into sight: a
        // directory it renamed (`mv x y`), whose birth is the old one's.
        let new_dirs: NewDirs = found
            .iter()
            .filter(|c| c.after == Side::Dir && c.before == Side::Absent)
            .map(|c| (c.path.as_bytes(), &c.path))
            .collect();
        let (mut holds_made, mut holds_came) = (HashSet::new(), HashSet::new());
        for c in found
            .iter()
            .filter(|c| c.before == Side::Absent && c.after != Side::Dir)
        {
            let holds = match came.contains(&c.path) {
                true => &mut holds_came,
                false => &mut holds_made,
            };
            mark_above(&c.path, &new_dirs, holds);
        }
        // (Every file under a directory the walk did not enter before only came into sight: no
        // such directory is taken for holding the command's files.)
        let made_dirs: HashSet<&RelPath> = new_dirs
            .values()
            .copied()
            .filter(|d| {
                dir_made_by_command(&before, &root, d) || (holds_made.contains(d) && !holds_came.contains(d))
            })
            .collect();
        // directories that came into sight whole: one gap each, not one per file in them
        let sighted: Vec<&RelPath> = found
            .iter()
            .filter(|c| {
                c.after == Side::Dir
                    && match &c.before {
                        Side::Absent => !made_dirs.contains(&c.path),
                        Side::Skipped(_) => before.opaque.contains(&c.path),
                        _ => false,
                    }
            })
            .map(|c| &c.path)
            .collect();
        let mut sight_gaps: std::collections::BTreeMap<RelPath, &str> = Default::default();
        for p in &came {
            let top = p.ancestors_top_down().into_iter().find(|d| sighted.contains(&d));
            sight_gaps.insert(top.unwrap_or_else(|| (*p).clone()), CAME_INTO_SIGHT);
        }
        for d in &sighted {
            if before.opaque.contains(d) {
                sight_gaps.insert((*d).clone(), CAME_INTO_SIGHT);
            }
        }
        let changed: HashSet<&RelPath> = found.iter().map(|c| &c.path).collect();
        for d in unreadable_after {
            if !changed.contains(&d) {
                sight_gaps.entry(d).or_insert(UNREADABLE_DIR);
            }
        }
        let mut items = Vec::with_capacity(found.len());
        let mut kept = Vec::new();
        let mut shown = Vec::new();
        // a file that went and came back elsewhere with the same bytes: one move
        let mut gone: HashMap<retrace_gitstore::ObjectId, RelPath> = HashMap::new();
        for c in &found {
            if let (Side::File(e), Side::Absent) = (&c.before, &c.after) {
                if !left.contains(&c.path) {
                    gone.insert(e.id, c.path.clone());
                }
            }
        }
        let mut moved_from = Vec::new();
        let mut claimed: HashSet<&RelPath> = HashSet::new();
        let mut sight_gaps = sight_gaps.into_iter().peekable();
        for c in &found {
            // in path order, each gap before the paths it stands for
            while let Some((g, why)) = sight_gaps.next_if(|(g, _)| g <= &c.path) {
                items.push((g.as_path().to_path_buf(), untracked(why)));
            }
            if came.contains(&c.path) || sighted.contains(&&c.path) {
                continue;
            }
            if let (Side::Dir, Side::Skipped(k)) = (&c.before, &c.after) {
                if k.stamp.is_none() {
                    items.push((c.path.as_path().to_path_buf(), untracked(LEFT_SIGHT)));
                    continue;
                }
            }
            if left.contains(&c.path) {
                let still = match &c.before {
                    Side::File(e) => out_of_sight(git, &root, &c.path, e)?,
                    _ => None,
                };
                match still {
                    Some(Some((known, change))) => {
                        kept.push(c.path.as_path().to_path_buf());
                        items.push((c.path.as_path().to_path_buf(), known));
                        shown.push(change);
                    }
                    Some(None) => {} // still there as it was
                    None => items.push((c.path.as_path().to_path_buf(), untracked(LEFT_SIGHT))),
                }
                continue;
            }
            let known = match (&c.before, &c.after) {
                // a directory made or removed: only what is in it is captured
                (Side::Dir, Side::Dir | Side::Absent) | (Side::Absent, Side::Dir) => continue,
                (_, Side::Dir) | (Side::Dir, _) => Known::Unkept {
                    reason: GapReason::Unreadable,
                    detail: "a file and a directory took each other's place".into(),
                },
                // a link or a special file the command made, or a directory the walk does not
                // enter (a repository of its own, one it cannot read): a restore never removes one
                (Side::Absent, Side::Skipped(k))
                    if matches!(k.reason, SkipReason::Symlink | SkipReason::Special)
                        || (k.stamp.is_none()
                            && matches!(k.reason, SkipReason::NestedRepository | SkipReason::Unreadable)) =>
                {
                    unkept(
                        k.reason,
                        &format!("{}, made by the command: a rewind leaves it", k.detail),
                    )
                }
                _ => match &c.before {
                    Side::Absent => Known::Absent {
                        created_dirs: created_dirs(&c.path, &new_dirs, &made_dirs, &mut claimed),
                    },
                    // a damaged object loses this file's before-image, not the command's others
                    Side::File(e) => match git.snap.objects().read_blob(&e.id) {
                        Ok(bytes) => Known::File { bytes, mode: e.mode },
                        Err(err) => Known::Unkept {
                            reason: GapReason::Unreadable,
                            detail: format!("its copy before the command is lost: {err}"),
                        },
                    },
                    Side::Skipped(k) => unkept(k.reason, &k.detail),
                    Side::Dir => continue,
                },
            };
            let old_bytes = match &known {
                Known::File { bytes, .. } => Some(bytes.clone()),
                _ => None,
            };
            if !matches!(known, Known::Unkept { .. }) {
                kept.push(c.path.as_path().to_path_buf());
            }
            items.push((c.path.as_path().to_path_buf(), known));
            let path = c.path.to_lossy();
            let change = match (&c.before, &c.after) {
                (Side::Absent, Side::File(e)) if gone.contains_key(&e.id) => {
                    let from = gone[&e.id].clone();
                    moved_from.push(from.clone());
                    Some(moved(from.to_lossy(), path))
                }
                (_, Side::Skipped(_) | Side::Dir) | (Side::Skipped(_) | Side::Dir, _) => None,
                (before_side, after_side) => {
                    let new_bytes = match after_side {
                        Side::File(e) if e.size <= MAX_DIFF_INPUT as u64 => {
                            Some(git.snap.objects().read_blob(&e.id)?)
                        }
                        _ => None,
                    };
                    let old = match (before_side, &old_bytes) {
                        (Side::Absent, _) => DiffSide::Absent,
                        (_, Some(b)) if b.len() <= MAX_DIFF_INPUT => DiffSide::Bytes(b),
                        _ => DiffSide::TooLarge,
                    };
                    let new = match (after_side, &new_bytes) {
                        (Side::Absent, _) => DiffSide::Absent,
                        (_, Some(b)) => DiffSide::Bytes(b),
                        _ => DiffSide::TooLarge,
                    };
                    let action = match (before_side, after_side) {
                        (Side::Absent, _) => ChangeAction::Create,
                        (_, Side::Absent) => ChangeAction::Delete,
                        _ => ChangeAction::Modify,
                    };
                    Some(file_change(path, action, old, new))
                }
            };
            shown.extend(change);
        }
        for (g, why) in sight_gaps {
            items.push((g.as_path().to_path_buf(), untracked(why)));
        }
        // the source of a move is shown by its move
        shown.retain(|c: &FileChange| {
            !(c.action == ChangeAction::Delete && moved_from.iter().any(|m| m.to_lossy() == c.path))
        });
        // Another session writing in the workspace meanwhile: none of it is taken as the
        // command's (a rewind would undo the other's work), each path a gap naming the writer.
        // Held now, or taken or written since the command started (a session that opened,
        // wrote and closed while it ran).
        let mut writers = before.writers.clone();
        writers.extend(retrace_session::writers_since(
            &self.data.sessions_dir(),
            &root,
            self.session.id(),
            before.started,
        ));
        writers.sort();
        writers.dedup();
        if !writers.is_empty() {
            let names: Vec<&str> = writers.iter().map(|w| w.as_str()).collect();
            let detail = format!(
                "another Retrace session ({}) was working in this workspace while the command ran: this change may be its own, so it is not taken as the command's and a rewind leaves it as it is",
                names.join(", ")
            );
            kept.clear();
            for (_, known) in items.iter_mut() {
                if !matches!(known, Known::Unkept { .. }) {
                    *known = Known::Unkept {
                        reason: GapReason::ExternalWriter,
                        detail: detail.clone(),
                    };
                }
            }
        }
        let pending = git.pending.take();
        let report = self.store.capture_before_known(items, Some("bash"))?;
        if !kept.is_empty() {
            self.store.capture_after(&kept)?;
        }
        if let Some(gap) = pending {
            self.store.settle_gap(&gap)?;
        }
        if let Some(git) = self.git.as_mut() {
            git.prune_if_grown();
        }
        Ok(ShellChanges {
            changes: shown,
            paths: report.captured.iter().map(|p| p.to_lossy()).collect(),
            gaps: report.gaps,
        })
    }

    /// Records `gap` in the running turn.
    pub(crate) fn record_gap(&mut self, gap: retrace_protocol::Gap) -> Result<()> {
        self.store.record_gap(gap)?;
        Ok(())
    }
}

impl Drop for Core {
    /// A first look still running finishes before the session closes (it writes into the
    /// session's sidecar, which may be deleted once the session is closed).
    fn drop(&mut self) {
        if let Some(first) = self.git_first.take() {
            let _ = first.join();
        }
    }
}
