//! The workspace as it stood when a turn started, written into another directory: what a fork
//! into a new workspace puts into the copy it made of the workspace (SPEC §5.1 "Fork into a new
//! workspace"). The paths and their images are a code restore's (`restore_set.rs`: each path's
//! earliest change since the turn started, whose image it gets back, its payload checked); they
//! are written into `dest`, never into the workspace. Nothing in `dest` is a conflict (it is a
//! copy made just now, and nothing of the user's is overwritten); neither the workspace nor the
//! sidecar changes. A path whose state then is not known stays as the copy has it, listed. What
//! stands in a path's way in the copy (a file where its directory was, a directory where the
//! file was, a symlink the file was made since) is removed, never followed.

use std::collections::BTreeSet;
use std::path::Path;

use retrace_fsutil::{place_file, remove_empty_dir_nofollow, remove_file_nofollow, RelPath};
use retrace_protocol::{words, ConflictReason, FileAction, ForkSkipReason, ForkSkipped, GapReason};

use crate::error::{CheckpointError, IoContext, Result};
use crate::fsio::{standing, Standing};
use crate::memo::HashMemo;
use crate::plan::PlannedFile;
use crate::store::CheckpointStore;

/// What [`CheckpointStore::write_turn_start`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnStartCopy {
    /// The paths put back as they were when the turn started: written, or removed where they
    /// did not exist then.
    pub restored: Vec<String>,
    /// The paths left as the copy has them, and why.
    pub skipped: Vec<ForkSkipped>,
    /// The paths whose state at the turn's start stands in the copy now because this wrote it:
    /// `restored`, and those that did not exist then and are not there (whatever the copy
    /// left out of them does not matter any more).
    pub settled: Vec<String>,
}

fn skipped(path: &str, reason: ForkSkipReason, says: String) -> ForkSkipped {
    ForkSkipped {
        path: Some(path.to_string()),
        reason,
        turn: None,
        says,
    }
}

/// Frees `rel` in `dest` (a copy made just now) for its state at a turn's start: a file (or
/// anything but a directory) standing where one of its directories was is removed, and so is
/// anything but a file at `rel` itself (a directory with what is in it, a special file). Never
/// through a symlink: the caller found none at or above `rel`.
fn make_room(dest: &Path, rel: &RelPath) -> std::io::Result<()> {
    for anc in rel.ancestors_top_down() {
        match std::fs::symlink_metadata(anc.under(dest)) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return remove_file_nofollow(dest, anc.as_path()).map(drop),
            Err(_) => return Ok(()),
        }
    }
    match std::fs::symlink_metadata(rel.under(dest)) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(rel.under(dest)),
        Ok(m) if !m.is_file() => remove_file_nofollow(dest, rel.as_path()).map(drop),
        _ => Ok(()),
    }
}

/// Whether a symlink stands at `rel` under `root` itself, reached through real directories: the
/// path was made a link since (its record is not one through a link).
fn link_at(root: &Path, rel: &RelPath) -> bool {
    rel.ancestors_top_down()
        .iter()
        .all(|a| std::fs::symlink_metadata(a.under(root)).is_ok_and(|m| m.is_dir()))
        && std::fs::symlink_metadata(rel.under(root)).is_ok_and(|m| m.file_type().is_symlink())
}

impl CheckpointStore {
    /// Whether the workspace at turn `n`'s start is known: the turn has a record and is offered
    /// for a code restore (its record readable, its history not pruned). Reads nothing else.
    pub fn check_turn_start(&self, n: u64) -> Result<()> {
        let t = self
            .sidecar
            .turns
            .get(&n)
            .ok_or(CheckpointError::UnknownTurn(n))?;
        match self.sidecar.code_restore_offered(t) {
            (true, _) => Ok(()),
            (false, why) => Err(CheckpointError::NotOffered {
                turn: n,
                why: why.unwrap_or_default(),
            }),
        }
    }

    /// Writes into `dest` (a copy of the workspace) every path the turns from `n` on changed, as
    /// it was when turn `n` started: its bytes and mode, or no file where there was none. A path
    /// `excluded` answers for (one the copy left out on purpose, as an ignored file) is not
    /// written; it is listed with that answer. The turn must be offered for a code restore (its
    /// record readable, its history not pruned).
    pub fn write_turn_start(
        &self,
        n: u64,
        dest: &Path,
        excluded: &dyn Fn(&RelPath) -> Option<ForkSkipped>,
    ) -> Result<TurnStartCopy> {
        let plan = self.sidecar.plan_restore_with(n, HashMemo::default(), None)?;
        let mut out = TurnStartCopy::default();
        let in_set: BTreeSet<&str> = plan.files.iter().map(|f| f.shown.as_str()).collect();
        // What the turns' gaps leave unknown, where the restore set does not name it itself.
        for g in &plan.plan.gaps {
            if g.reason == GapReason::LegacyUnverified
                || g.path.as_deref().is_some_and(|p| in_set.contains(p))
            {
                continue;
            }
            let path = match g.reason {
                GapReason::BashSideEffect | GapReason::McpSideEffect => None,
                _ => g.path.clone(),
            };
            out.skipped.push(ForkSkipped {
                path,
                reason: ForkSkipReason::Unknown,
                turn: Some(g.turn),
                says: format!(
                    "turn {}: {}; left as it is now",
                    g.turn,
                    words::gap_line(&g.reason, g.path.as_deref(), g.detail.as_deref())
                ),
            });
        }
        // Removals first: a file that stands where a directory was goes before what is written
        // into that directory.
        let (removals, writes): (Vec<&PlannedFile>, Vec<&PlannedFile>) =
            plan.files.iter().partition(|f| !f.target.image.existed);
        // Paths recorded through a link (a turn's symlink or hard link gap): never written.
        let recorded_unsafe: BTreeSet<&str> = plan
            .plan
            .gaps
            .iter()
            .filter(|g| matches!(g.reason, GapReason::Symlink | GapReason::Hardlink))
            .filter_map(|g| g.path.as_deref())
            .collect();
        for f in removals.into_iter().chain(writes) {
            let linked_since = f.rel.as_ref().is_some_and(|rel| {
                !recorded_unsafe.contains(f.shown.as_str())
                    && !rel.as_path().components().any(|c| c.as_os_str() == ".git")
                    && self
                        .sidecar
                        .root
                        .as_deref()
                        .is_some_and(|root| link_at(root, rel))
            });
            match self.put_back_elsewhere(n, dest, f, linked_since, excluded)? {
                Ok(true) => {
                    out.restored.push(f.shown.clone());
                    out.settled.push(f.shown.clone());
                }
                Ok(false) if !f.target.image.existed => out.settled.push(f.shown.clone()),
                Ok(false) => {}
                Err(s) => out.skipped.push(s),
            }
        }
        // The directories the turns' tools made, where nothing is left in them now (deepest
        // first); one that still holds anything stays.
        let mut dirs = plan.created_dirs.clone();
        dirs.sort_by_key(|d| std::cmp::Reverse(d.as_bytes().len()));
        for d in dirs {
            let _ = remove_empty_dir_nofollow(dest, d.as_path());
        }
        Ok(out)
    }

    /// Puts one file of the restore set back in `dest`: `Ok(true)` when it wrote or removed it,
    /// `Ok(false)` when it was as it should be already, `Err` with why when it left it.
    fn put_back_elsewhere(
        &self,
        n: u64,
        dest: &Path,
        f: &PlannedFile,
        linked_since: bool,
        excluded: &dyn Fn(&RelPath) -> Option<ForkSkipped>,
    ) -> Result<std::result::Result<bool, ForkSkipped>> {
        let blocked = |says: String| Ok(Err(skipped(&f.shown, ForkSkipReason::Blocked, says)));
        let Some(rel) = &f.rel else {
            return blocked("recorded with a path that is not inside the workspace".into());
        };
        if let Some(c) = f
            .conflict
            .as_ref()
            .filter(|c| c.reason == ConflictReason::PathUnsafe && !linked_since)
        {
            return blocked(words::conflict(c));
        }
        if let Some(why) = f.target.unusable.as_ref().filter(|_| f.target.image.existed) {
            return Ok(Err(skipped(
                &f.shown,
                ForkSkipReason::Unknown,
                format!("what it held when turn {n} started is not known ({why}); left as it is now"),
            )));
        }
        if let Some(s) = excluded(rel) {
            return Ok(Err(s));
        }
        // The copy is the workspace as it is: a file already at its state then needs nothing.
        if f.action == FileAction::Unchanged {
            return Ok(Ok(false));
        }
        let abs = rel.under(dest);
        let cleared = match standing(dest, rel) {
            Standing::Plain => false,
            // A symlink at the path itself (the user's file made a link since, copied as a
            // link): replaced, never followed.
            Standing::Unsafe if link_at(dest, rel) => {
                remove_file_nofollow(dest, rel.as_path()).at("remove", &abs)?;
                true
            }
            Standing::Unsafe => {
                return blocked("a symlink stands at it or above it; nothing is written through it".into())
            }
            // `dest` was made just now: what stands in the way is a copy, never the user's.
            Standing::FileAbove | Standing::Special(_) => {
                make_room(dest, rel).at("make room for", &abs)?;
                true
            }
        };
        if !f.target.image.existed {
            let there = std::fs::symlink_metadata(&abs).is_ok();
            remove_file_nofollow(dest, rel.as_path()).at("remove", &abs)?;
            return Ok(Ok(there || cleared));
        }
        let mut src = self.sidecar.open_image(&f.target)?;
        let mode = f.target.image.mode.unwrap_or(0o644);
        let copied = place_file(dest, rel.as_path(), &mut src, mode).at("write", &abs)?;
        if f.target
            .image
            .sha256
            .as_deref()
            .is_some_and(|want| want != copied.sha256)
        {
            return Err(CheckpointError::MissingPayload {
                turn: n,
                path: f.shown.clone(),
                why: format!(
                    "the bytes written to `{}` do not match the recorded SHA-256",
                    abs.display()
                ),
            });
        }
        Ok(Ok(true))
    }
}
