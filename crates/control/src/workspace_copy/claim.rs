//! Claiming the directory of a fork into a new workspace, so that two forks never share one: its
//! missing parents made, then — under a lock on its parent directory, which every fork into
//! that parent takes — the directory made with `mkdir` (an absent one), or found empty (an
//! existing one), and its record taken ([`Record`]) before the lock is let go; then registered
//! with `git worktree add` for a worktree, or found still empty for a copy. The record lives in
//! the data directory, never in the new tree (so that no file of the workspace can be taken for
//! it), and stays until the fork is whole: a record whose fork is gone names what an interrupted
//! fork left; one whose fork is still running (it holds a lock on it) says so.

use std::path::{Path, PathBuf};

use retrace_protocol::ErrorCode;

use super::bad_dir;
use super::remove::born;
use crate::error::{coded, Result};

/// Where a fork keeps its record of the directory it is making: `<data root>/forks/`, one file
/// per directory, named after a hash of its canonical path.
pub(crate) fn record_path(data_root: &Path, dir: &Path) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let hash = retrace_fsutil::sha256_bytes(dir.as_os_str().as_bytes());
    data_root
        .join("forks")
        .join(format!("{}.incomplete", &hash[..32]))
}

/// The record of a fork in progress, held (an exclusive `flock`) for as long as the fork runs.
#[derive(Debug)]
pub(crate) struct Record {
    path: PathBuf,
    _held: std::fs::File,
}

/// What a record says: the directory, the process making it, and the directory's numbers.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct RecordText {
    directory: String,
    pid: u32,
    dev: u64,
    ino: u64,
    /// Its creation time (nanoseconds since the epoch) where the file system keeps one: an
    /// inode number is reused once a directory is gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    born: Option<u64>,
}

/// Whoever holds the record at `record` now: `Some(pid)` while a fork into its directory runs.
fn running_fork(record: &Path) -> Option<u32> {
    let f = std::fs::File::open(record).ok()?;
    match f.try_lock() {
        Ok(()) => None,
        Err(_) => {
            let text = std::fs::read_to_string(record).unwrap_or_default();
            Some(serde_json::from_str::<RecordText>(text.trim()).map_or(0, |r| r.pid))
        }
    }
}

/// Whether the record at `record` names `dir` as it stands (the same directory, not one made
/// there since), its fork gone.
fn left_by_interrupted_fork(record: &Path, dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(text) = std::fs::read_to_string(record) else {
        return false;
    };
    let Ok(r) = serde_json::from_str::<RecordText>(text.trim()) else {
        return false;
    };
    std::fs::symlink_metadata(dir).is_ok_and(|m| m.dev() == r.dev && m.ino() == r.ino && born(&m) == r.born)
}

/// Takes the record of `dir` (just claimed under its parent's lock), `busy` while another fork
/// holds it.
fn take_record(record: &Path, dir: &Path) -> Result<Record> {
    use std::io::Write as _;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let io = |e: std::io::Error| {
        coded(
            ErrorCode::Io,
            format!(
                "cannot write Retrace's record of the fork `{}`: {e}",
                record.display()
            ),
        )
    };
    if let Some(parent) = record.parent() {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(io)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .mode(0o600)
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(record)
        .map_err(io)?;
    if f.try_lock().is_err() {
        return Err(busy(dir, running_fork(record).unwrap_or(0)));
    }
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|e| bad_dir(dir, format!("cannot read `{}`: {e}", dir.display())))?;
    let text = RecordText {
        directory: dir.to_string_lossy().into_owned(),
        pid: std::process::id(),
        dev: meta.dev(),
        ino: meta.ino(),
        born: born(&meta),
    };
    let line = serde_json::to_string(&text).unwrap_or_default();
    f.set_len(0).map_err(io)?;
    f.write_all(format!("{line}\n").as_bytes()).map_err(io)?;
    Ok(Record {
        path: record.to_path_buf(),
        _held: f,
    })
}

impl Record {
    /// The fork is over (whole, or what it made removed): its record goes.
    fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// `busy`: another fork (process `pid`) is making its new workspace in `dir` now.
fn busy(dir: &Path, pid: u32) -> crate::error::ControlError {
    let by = if pid == 0 {
        String::new()
    } else {
        format!(" (process {pid})")
    };
    crate::error::ControlError::Coded(
        retrace_protocol::Error::new(
            ErrorCode::Busy,
            format!(
                "another fork into a new workspace{by} is making `{}` now; wait for it to finish, or name another directory",
                dir.display()
            ),
        )
        .with_details(retrace_protocol::ErrorDetails::Worktree {
            path: dir.to_string_lossy().into_owned(),
        }),
    )
}

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
    /// The fork's record of the directory, held until the fork is over.
    record: std::sync::Arc<Record>,
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

/// "Not empty", saying so when what is there is the leftover of an interrupted fork (its record
/// `record` names it), and `busy` when a fork is making it now.
pub(super) fn not_empty(path: &Path, record: &Path) -> crate::error::ControlError {
    if let Some(pid) = running_fork(record) {
        return busy(path, pid);
    }
    if left_by_interrupted_fork(record, path) {
        return bad_dir(
            path,
            format!(
                "`{}` holds what an interrupted fork into a new workspace left; remove the directory (and, when it is a `git worktree`, run `git worktree prune` in the source repository), then fork again",
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

/// Checks that the claimed directory `path` is still empty (nothing came in since it was found
/// empty and its record taken).
pub(super) fn still_empty(path: &Path, record: &Path) -> Result<()> {
    if !is_empty(path)? {
        return Err(not_empty(path, record));
    }
    Ok(())
}

/// Claims `path` (absent, or an empty directory, as checked; `record` its record under the data
/// directory): makes what is missing, then under the lock of its parent makes it or finds it
/// still empty, takes its record, and runs `then` on it (registering a worktree, or checking it
/// is still empty). Another fork that claimed it first makes this one a `usage` error ("not
/// empty"), or `busy` while it runs; nothing of its is then touched.
pub(super) fn claim(path: &Path, record: &Path, then: impl FnOnce(&Path) -> Result<()>) -> Result<Claim> {
    let above = make_parents(path)?;
    let undo_above = |above: &Option<PathBuf>| remove_empty_up_to(path.parent(), above.as_deref());
    // A lock the file system does not offer leaves the claim to `mkdir` and the record alone.
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
                return Err(not_empty(path, record));
            }
            false
        }
        Err(e) => {
            undo_above(&above);
            return Err(bad_dir(path, format!("cannot create `{}`: {e}", path.display())));
        }
    };
    let held = match take_record(record, path) {
        Ok(r) => r,
        Err(e) => {
            if made_here {
                let _ = std::fs::remove_dir(path);
            }
            undo_above(&above);
            return Err(e);
        }
    };
    let claim = Claim {
        path: path.to_path_buf(),
        made: made_here,
        above,
        record: std::sync::Arc::new(held),
    };
    if let Err(e) = then(path) {
        // What stands in a directory that existed is not this fork's: left as it is.
        if claim.made {
            claim.release();
        } else {
            claim.record.remove();
        }
        return Err(e);
    }
    drop(parent);
    Ok(claim)
}

impl Claim {
    /// The fork is whole: its record goes.
    pub(crate) fn finish(&self) {
        self.record.remove();
    }

    /// Removes what the fork made: the directories it made, or, in a directory that existed,
    /// everything in it (the directory stays, empty); then its record.
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
        self.record.remove();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(e: crate::error::ControlError) -> retrace_protocol::ErrorCode {
        retrace_protocol::Error::from(e).code
    }

    fn claim_at(data: &Path, dir: &Path) -> Result<Claim> {
        let record = record_path(data, dir);
        claim(dir, &record, |d| still_empty(d, &record))
    }

    #[test]
    fn a_directory_is_claimed_once_and_a_failed_claim_leaves_what_others_made() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let dir = tmp.path().join("new/parent/dir");
        let first = claim_at(&data, &dir).unwrap();
        let second = claim_at(&data, &dir).unwrap_err();
        assert_eq!(
            code(second),
            retrace_protocol::ErrorCode::Busy,
            "it is being made"
        );
        // A second fork beside it, in the parent the first one made, then the first fails.
        let beside = tmp.path().join("new/parent/beside");
        let other = claim_at(&data, &beside).unwrap();
        std::fs::write(beside.join("copied"), b"c").unwrap();
        first.release();
        assert!(!dir.exists());
        assert!(
            beside.join("copied").is_file(),
            "the other fork's directory stays"
        );
        other.release();
        assert!(!beside.exists());
        assert!(!record_path(&data, &beside).exists(), "its record goes with it");
        // Alone, the parents a failed claim made go with it.
        let lone = tmp.path().join("a/b/c");
        claim_at(&data, &lone).unwrap().release();
        assert!(
            !tmp.path().join("a").exists(),
            "the parents it made go when left empty"
        );
        // An existing empty directory stays, emptied; one holding anything is not claimed.
        let empty = tmp.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        claim_at(&data, &empty).unwrap().release();
        assert!(empty.is_dir() && std::fs::read_dir(&empty).unwrap().next().is_none());
        std::fs::write(empty.join("x"), b"").unwrap();
        assert!(claim_at(&data, &empty).is_err());
        assert!(empty.join("x").is_file());
    }

    #[test]
    fn a_running_fork_is_told_from_an_interrupted_one_and_from_a_full_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        // An existing empty directory being filled: a second fork is `busy`, not told to remove it.
        let dir = tmp.path().join("empty");
        std::fs::create_dir(&dir).unwrap();
        let running = claim_at(&data, &dir).unwrap();
        let e = retrace_protocol::Error::from(claim_at(&data, &dir).unwrap_err());
        assert_eq!(e.code, ErrorCode::Busy, "{}", e.message);
        assert!(e.message.contains("now"), "{}", e.message);
        std::fs::write(dir.join("copied"), b"c").unwrap();
        let e = retrace_protocol::Error::from(claim_at(&data, &dir).unwrap_err());
        assert_eq!(e.code, ErrorCode::Busy, "{}", e.message);
        // Its process gone (the lock let go, the record left): what it left is named.
        let record = record_path(&data, &dir);
        drop(running);
        assert!(record.is_file());
        let e = retrace_protocol::Error::from(claim_at(&data, &dir).unwrap_err());
        assert_eq!(e.code, ErrorCode::Usage);
        assert!(e.message.contains("interrupted"), "{}", e.message);
        // Removed and made again by hand, with other files: only "not empty".
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("mine"), b"m").unwrap();
        let e = retrace_protocol::Error::from(claim_at(&data, &dir).unwrap_err());
        assert!(!e.message.contains("interrupted"), "{}", e.message);
        assert!(e.message.contains("not empty"), "{}", e.message);
        // Emptied: claimed again, the stale record taken over, and gone once the fork is whole.
        std::fs::remove_file(dir.join("mine")).unwrap();
        let again = claim_at(&data, &dir).unwrap();
        again.finish();
        assert!(!record.exists());
        // A file in the tree named like an old marker is nothing special.
        std::fs::write(dir.join(".retrace-fork-incomplete"), b"").unwrap();
        let e = retrace_protocol::Error::from(claim_at(&data, &dir).unwrap_err());
        assert!(e.message.contains("not empty"), "{}", e.message);
    }
}
