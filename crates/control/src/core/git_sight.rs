//! Which of the paths a shell command's snapshots differ in did the command make or remove, and
//! which only came into the walk's sight or left it. A file the walk did not see before the
//! command (ignored, inside a repository of its own, in a directory that could not be read) and
//! sees after it (the command edited `.gitignore`, removed a nested `.git`, ran `chmod`) was not
//! made by the command: taking it for a creation would make a rewind delete it. It is told apart
//! by where it is (under a directory the walk did not enter before), by when it was born (before
//! the command, with an inode no kept file had: it was there out of sight, whatever the command
//! wrote into it) and by when its inode last changed (`ctime`, which no command can set back: a
//! file made, copied, linked or renamed during the command has a `ctime` after it started). The
//! reverse (a file that left the walk's sight but is still there) is not a deletion either.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use retrace_fsutil::RelPath;
use retrace_gitstore::{SkipReason, Snapshot};

/// How much earlier than the command's start an inode change still counts as the command's: the
/// kernel stamps files from a clock that lags the real one by up to a tick (a few milliseconds).
/// A file the walk could not see that changed within this margin before the command is taken as
/// the command's: the only way this check can be wrong, and it needs a change in that instant.
const CLOCK_MARGIN: Duration = Duration::from_millis(100);

/// What the look before a shell command knew.
#[derive(Debug, Clone)]
pub(crate) struct Before {
    /// When the command was about to start.
    pub(crate) started: SystemTime,
    /// The directories the walk named without entering (repositories of their own, directories
    /// that could not be read).
    pub(crate) opaque: Vec<RelPath>,
    /// Other sessions of the workspace whose writer was live when the command started.
    pub(crate) writers: Vec<retrace_protocol::SessionId>,
    /// The inodes of the files the walk kept when the command started: a file born before it
    /// with one of them was moved or linked by the command from a kept file.
    pub(crate) inodes: std::collections::HashSet<u64>,
}

impl Before {
    /// The look before a command: now, and what `snap` did not enter.
    pub(crate) fn now(snap: Option<&Snapshot>) -> Before {
        Before {
            started: SystemTime::now(),
            opaque: snap.map(opaque_dirs).unwrap_or_default(),
            writers: Vec::new(),
            inodes: Default::default(),
        }
    }
}

/// The directories `snap` names without entering them.
pub(crate) fn opaque_dirs(snap: &Snapshot) -> Vec<RelPath> {
    unentered(snap, |r| {
        matches!(r, SkipReason::NestedRepository | SkipReason::Unreadable)
    })
}

/// The directories `snap` did not enter for a reason `why` takes.
pub(crate) fn unentered(snap: &Snapshot, why: impl Fn(SkipReason) -> bool) -> Vec<RelPath> {
    snap.skipped
        .iter()
        .filter(|(_, k)| k.stamp.is_none() && why(k.reason))
        .map(|(p, _)| p.clone())
        .collect()
}

/// Whether `path` is strictly under one of `dirs`.
pub(crate) fn under_any(dirs: &[RelPath], path: &RelPath) -> bool {
    dirs.iter().any(|d| {
        path.as_bytes().len() > d.as_bytes().len()
            && path.as_bytes().starts_with(d.as_bytes())
            && path.as_bytes()[d.as_bytes().len()] == b'/'
    })
}

/// When `abs`'s inode last changed (`None` when it cannot be asked).
fn changed_at(abs: &Path) -> Option<SystemTime> {
    let m = std::fs::symlink_metadata(abs).ok()?;
    let secs = u64::try_from(m.ctime()).ok()?;
    let nanos = u32::try_from(m.ctime_nsec()).ok()?;
    UNIX_EPOCH.checked_add(Duration::new(secs, nanos))
}

/// Whether a path that appeared in the walk during the command was made by it: not under a
/// directory the walk did not enter before; not born before the command started (where the file
/// system says when a file was born) unless its inode was a kept file's (the command moved or
/// linked it here; one the command un-ignored and rewrote in place was there before it, out of
/// sight) — a kept file's inode with no other name is the command's at once (moved, perhaps
/// with its directory); and its inode changed since the command started (one whose change time
/// cannot be read is taken as made).
pub(crate) fn made_by_command(before: &Before, root: &Path, path: &RelPath) -> bool {
    if under_any(&before.opaque, path) {
        return false;
    }
    let abs = path.under(root);
    if let Ok(m) = std::fs::symlink_metadata(&abs) {
        let born_before = m.created().is_ok_and(|t| t + CLOCK_MARGIN < before.started);
        let kept_inode = before.inodes.contains(&m.ino());
        if born_before && !kept_inode {
            return false;
        }
        // A kept file under one name only, seen at another: moved here by the command, with the
        // directory above it when its own change time did not move (a rename of a directory
        // changes nothing of the files in it). One with other names too may be a link that was
        // there before, out of sight: its change time says.
        if born_before && kept_inode && m.nlink() == 1 {
            return true;
        }
    }
    match changed_at(&abs) {
        Some(t) => t + CLOCK_MARGIN >= before.started,
        None => true,
    }
}

/// Whether a directory that appeared in the walk during the command was made by it: not under a
/// directory the walk did not enter before, and born after it started, where the file system
/// says when a file was born (else taken as made: a restore removes only directories it leaves
/// empty).
pub(crate) fn dir_made_by_command(before: &Before, root: &Path, dir: &RelPath) -> bool {
    if under_any(&before.opaque, dir) || before.opaque.contains(dir) {
        return false;
    }
    match std::fs::symlink_metadata(dir.under(root)).and_then(|m| m.created()) {
        Ok(t) => t + CLOCK_MARGIN >= before.started,
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(s: &str) -> RelPath {
        RelPath::from_stored(s.as_bytes()).unwrap_or_else(|_| panic!("{s}"))
    }

    #[test]
    fn under_any_is_strictly_below_a_directory() {
        let dirs = vec![rel("vendor/lib"), rel("locked")];
        assert!(under_any(&dirs, &rel("vendor/lib/a.c")));
        assert!(under_any(&dirs, &rel("locked/x/y")));
        assert!(!under_any(&dirs, &rel("vendor/lib")));
        assert!(!under_any(&dirs, &rel("vendor/library/a.c")));
        assert!(!under_any(&dirs, &rel("lockedx")));
    }

    #[test]
    fn an_old_file_is_not_made_by_a_command_that_starts_now() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = tmp.path();
        std::fs::write(root.join("old"), b"x").unwrap_or_else(|e| panic!("{e}"));
        std::thread::sleep(CLOCK_MARGIN * 2);
        let before = Before::now(None);
        std::fs::write(root.join("new"), b"y").unwrap_or_else(|e| panic!("{e}"));
        assert!(!made_by_command(&before, root, &rel("old")));
        assert!(made_by_command(&before, root, &rel("new")));
        let opaque = Before {
            opaque: vec![rel("d")],
            ..before
        };
        std::fs::create_dir(root.join("d")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("d/n"), b"z").unwrap_or_else(|e| panic!("{e}"));
        assert!(!made_by_command(&opaque, root, &rel("d/n")));
    }
}
