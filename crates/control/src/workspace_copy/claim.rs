//! Claiming the directory of a fork into a new workspace, so that two forks never share one: its
//! missing parents made, then — under a lock on its parent directory, which every fork into
//! that parent takes — the directory made with `mkdir` (an absent one), or found empty (an
//! existing one), and marked (`.retrace-fork-incomplete`, created exclusively) or, for a `git
//! worktree`, registered with `git worktree add`, before the lock is let go. The marker stays
//! until the fork is whole, so that what an interrupted fork left is recognised.

use std::path::{Path, PathBuf};

use super::{bad_dir, MARKER};
use crate::error::Result;

/// The directory claimed.
#[derive(Debug, Clone)]
pub(crate) struct Claim {
    /// The directory (canonical).
    pub(crate) path: PathBuf,
    /// Whether this fork made it (else it existed, empty, and is emptied again if the fork fails).
    made: bool,
    /// The outermost directory above it this fork made: those left empty are removed again if
    /// the fork fails (another fork may have put its own directory beside this one).
    above: Option<PathBuf>,
}

/// Removes the empty directories from `from` up to `top` (both included), stopping at the first
/// that is not empty.
fn remove_empty_up_to(from: Option<&Path>, top: Option<&Path>) {
    let Some(top) = top else {
        return;
    };
    let mut dir = from;
    while let Some(d) = dir {
        if !d.starts_with(top) || std::fs::remove_dir(d).is_err() || d == top {
            break;
        }
        dir = d.parent();
    }
}

/// Makes the missing directories of `path` above it, one at a time; returns the outermost one
/// made here (`None`: all existed).
fn make_parents(path: &Path) -> Result<Option<PathBuf>> {
    let Some(parent) = path.parent() else {
        return Ok(None);
    };
    let missing: Vec<&Path> = parent
        .ancestors()
        .take_while(|a| std::fs::symlink_metadata(a).is_err())
        .collect();
    let mut first = None;
    for dir in missing.into_iter().rev() {
        match std::fs::create_dir(dir) {
            Ok(()) => {
                first.get_or_insert_with(|| dir.to_path_buf());
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                remove_empty_up_to(dir.parent(), first.as_deref());
                return Err(bad_dir(path, format!("cannot create `{}`: {e}", dir.display())));
            }
        }
    }
    Ok(first)
}

/// "Not empty", saying so when what is there is the leftover of an interrupted fork.
pub(super) fn not_empty(path: &Path) -> crate::error::ControlError {
    let leftover = std::fs::symlink_metadata(path.join(MARKER)).is_ok();
    if leftover {
        return bad_dir(
            path,
            format!(
                "`{}` holds what an interrupted fork into a new workspace left (it has `{MARKER}`); remove the directory (and, when it is a `git worktree`, run `git worktree prune` in the source repository), then fork again",
                path.display()
            ),
        );
    }
    bad_dir(
        path,
        format!(
            "`{}` is not empty; a fork into a new workspace needs a new or empty directory",
            path.display()
        ),
    )
}

fn is_empty(path: &Path) -> Result<bool> {
    let mut names = std::fs::read_dir(path).map_err(|e| {
        bad_dir(
            path,
            format!("the directory `{}` cannot be read: {e}", path.display()),
        )
    })?;
    Ok(names.next().is_none())
}

/// Writes the marker into the claimed directory `path`, exclusively; with `alone`, it must then
/// be the only name there (nothing else came in since `path` was found empty).
pub(super) fn mark(path: &Path, alone: bool) -> Result<()> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path.join(MARKER))
        .map(drop)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => not_empty(path),
            _ => bad_dir(path, format!("cannot write into `{}`: {e}", path.display())),
        })?;
    let names = std::fs::read_dir(path).map(Iterator::count).unwrap_or(0);
    if alone && names != 1 {
        let _ = std::fs::remove_file(path.join(MARKER));
        return Err(not_empty(path));
    }
    Ok(())
}

/// Claims `path` (absent, or an empty directory, as checked): makes what is missing, then under
/// the lock of its parent makes it or finds it still empty and runs `then` on it (registering a
/// worktree, or marking it). Another fork that claimed it first makes this one a `usage` error
/// ("not empty"); nothing of its is then touched.
pub(super) fn claim(path: &Path, then: impl FnOnce(&Path) -> Result<()>) -> Result<Claim> {
    let above = make_parents(path)?;
    let undo_above = |above: &Option<PathBuf>| remove_empty_up_to(path.parent(), above.as_deref());
    // A lock the file system does not offer leaves the claim to `mkdir` and the marker alone.
    let parent = path.parent().and_then(|p| std::fs::File::open(p).ok());
    if let Some(p) = &parent {
        let _ = p.lock();
    }
    let made_here = match std::fs::create_dir(path) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let m = std::fs::symlink_metadata(path).ok();
            if !m.is_some_and(|m| m.is_dir()) || !is_empty(path)? {
                undo_above(&above);
                return Err(not_empty(path));
            }
            false
        }
        Err(e) => {
            undo_above(&above);
            return Err(bad_dir(path, format!("cannot create `{}`: {e}", path.display())));
        }
    };
    let claim = Claim {
        path: path.to_path_buf(),
        made: made_here,
        above,
    };
    if let Err(e) = then(path) {
        // What stands in a directory that existed is not this fork's: left as it is.
        if claim.made {
            claim.release();
        }
        return Err(e);
    }
    drop(parent);
    Ok(claim)
}

impl Claim {
    /// Removes what the fork made: the directories it made, or, in a directory that existed,
    /// everything in it (the directory stays, empty).
    pub(crate) fn release(&self) {
        if self.made {
            let _ = std::fs::remove_dir_all(&self.path);
            remove_empty_up_to(self.path.parent(), self.above.as_deref());
        } else if std::fs::symlink_metadata(&self.path).is_err() {
            // Removed with the worktree: it existed, so it stays.
            let _ = std::fs::create_dir(&self.path);
        } else {
            for e in std::fs::read_dir(&self.path).into_iter().flatten().flatten() {
                let p = e.path();
                let _ = match e.file_type() {
                    Ok(t) if t.is_dir() => std::fs::remove_dir_all(&p),
                    _ => std::fs::remove_file(&p),
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(e: crate::error::ControlError) -> retrace_protocol::ErrorCode {
        retrace_protocol::Error::from(e).code
    }

    #[test]
    fn a_directory_is_claimed_once_and_a_failed_claim_leaves_what_others_made() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("new/parent/dir");
        let first = claim(&dir, |d| mark(d, true)).unwrap();
        let second = claim(&dir, |d| mark(d, true)).unwrap_err();
        assert_eq!(code(second), retrace_protocol::ErrorCode::Usage);
        // A second fork beside it, in the parent the first one made, then the first fails.
        let beside = tmp.path().join("new/parent/beside");
        let other = claim(&beside, |d| mark(d, true)).unwrap();
        first.release();
        assert!(!dir.exists());
        assert!(beside.join(MARKER).is_file(), "the other fork's directory stays");
        other.release();
        assert!(!beside.exists());
        // Alone, the parents a failed claim made go with it.
        let lone = tmp.path().join("a/b/c");
        claim(&lone, |d| mark(d, true)).unwrap().release();
        assert!(
            !tmp.path().join("a").exists(),
            "the parents it made go when left empty"
        );
        // An existing empty directory stays, emptied; one holding anything is not claimed.
        let empty = tmp.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        claim(&empty, |d| mark(d, true)).unwrap().release();
        assert!(empty.is_dir() && std::fs::read_dir(&empty).unwrap().next().is_none());
        std::fs::write(empty.join("x"), b"").unwrap();
        assert!(claim(&empty, |d| mark(d, true)).is_err());
        assert!(empty.join("x").is_file());
    }
}
