//! Removing the directory a fork into a new workspace made (`sessions delete --remove-worktree`,
//! SPEC §5.1): only when it is provably that directory — the same device and inode (and creation
//! time, when the file system keeps one) as recorded when it was made and, for a `git worktree`,
//! a `.git` file that still names the worktree the fork registered — and never across into
//! another file system mounted inside it. Anything else is refused before anything is removed.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use retrace_protocol::ErrorCode;
use retrace_session::MadeDir;

use super::git;
use crate::error::{coded, ControlError, Result};

/// What identifies the directory `dir` as made now (its `.git` file read for a `git worktree`).
pub(crate) fn identify(dir: &Path, git_worktree: bool) -> Result<MadeDir> {
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|e| coded(ErrorCode::Io, format!("cannot read `{}`: {e}", dir.display())))?;
    let git_admin = if git_worktree {
        let admin = admin_named(dir).ok_or_else(|| {
            coded(
                ErrorCode::Io,
                format!("`{}` has no `.git` file naming its worktree", dir.display()),
            )
        })?;
        Some(admin.to_string_lossy().into_owned())
    } else {
        None
    };
    Ok(MadeDir {
        dev: meta.dev(),
        ino: meta.ino(),
        born: born(&meta),
        git_admin,
    })
}

/// When the file system says `meta`'s file was created, in nanoseconds since the Unix epoch.
pub(super) fn born(meta: &std::fs::Metadata) -> Option<u64> {
    let t = meta.created().ok()?.duration_since(UNIX_EPOCH).ok()?;
    u64::try_from(t.as_nanos()).ok()
}

/// The administrative directory the `.git` file of the worktree `dir` names (canonical); `None`
/// when `.git` is not a regular file of the form `gitdir: PATH` or PATH does not exist.
fn admin_named(dir: &Path) -> Option<PathBuf> {
    let dot_git = dir.join(".git");
    if !std::fs::symlink_metadata(&dot_git).ok()?.is_file() {
        return None;
    }
    let (mut f, _) = retrace_fsutil::open_regular_nofollow(&dot_git).ok()?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(&mut f, 64 * 1024), &mut text).ok()?;
    let named = text.lines().next()?.strip_prefix("gitdir: ")?;
    let named = dir.join(named.trim_end());
    std::fs::canonicalize(named).ok()
}

fn refused(dir: &Path, why: &str) -> ControlError {
    coded(
        ErrorCode::Refused,
        format!(
            "`{}` {why}; nothing was deleted. Delete the session and keep the directory, then remove it by hand if it is yours to remove",
            dir.display()
        ),
    )
}

/// Removes the directory `dir` a fork into a new workspace made (recorded as `made`): `git
/// worktree remove --force` run from the source repository for a worktree, else the directory
/// with everything in it. `false` when nothing stands at `dir` any more. Refused (`refused`)
/// when it is not provably the directory the fork made, or a file system is mounted inside it.
pub(crate) fn remove_made_dir(dir: &Path, git_worktree: bool, made: Option<&MadeDir>) -> Result<bool> {
    let meta = match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Removed by hand: the source repository forgets the worktree it registered.
            let common = made
                .and_then(|m| m.git_admin.as_deref())
                .map(Path::new)
                .and_then(Path::parent)
                .and_then(Path::parent)
                .filter(|c| git_worktree && c.is_dir());
            if let Some(common) = common {
                git::prune_worktrees(common);
            }
            return Ok(false);
        }
        Err(e) => {
            return Err(coded(
                ErrorCode::Io,
                format!("cannot read `{}`: {e}", dir.display()),
            ))
        }
        Ok(m) => m,
    };
    if !meta.is_dir() {
        return Err(refused(
            dir,
            "is not the directory the fork made (a symlink or a file stands there)",
        ));
    }
    let Some(made) = made else {
        return Err(refused(
            dir,
            "was made by an earlier build, which recorded nothing that proves it is still the directory the fork made",
        ));
    };
    let same = meta.dev() == made.dev
        && meta.ino() == made.ino
        && (made.born.is_none() || born(&meta).is_none() || born(&meta) == made.born);
    if !same {
        return Err(refused(
            dir,
            "is not the directory the fork made (another directory stands there now)",
        ));
    }
    let admin = if git_worktree {
        let Some(recorded) = made.git_admin.as_deref() else {
            return Err(refused(dir, "records no worktree of the source repository"));
        };
        let recorded = PathBuf::from(recorded);
        if admin_named(dir).as_deref() != Some(recorded.as_path()) {
            return Err(refused(
                dir,
                &format!(
                    "is not the worktree the fork registered: its `.git` does not name `{}` (the repository moved, or the worktree was repaired or replaced)",
                    recorded.display()
                ),
            ));
        }
        if recorded.join("locked").exists() {
            return Err(coded(
                ErrorCode::Refused,
                format!(
                    "`{}` is a locked git worktree (`git worktree lock`); nothing was deleted. Unlock it (`git worktree unlock {}`) and delete again, or delete the session and keep the directory",
                    dir.display(),
                    dir.display()
                ),
            ));
        }
        Some(recorded)
    } else {
        None
    };
    if let Some(mount) = mount_inside(dir, meta.dev()) {
        return Err(refused(
            dir,
            &format!(
                "has another file system mounted inside it at `{}`, which removing it would reach into",
                mount.display()
            ),
        ));
    }
    // Removed by Retrace itself, never leaving the file system `dir` is on (a mount made inside
    // it meanwhile stops the removal before anything in it is touched) nor following a link.
    retrace_fsutil::remove_tree_one_mount(dir)
        .map_err(|e| coded(ErrorCode::Io, format!("cannot remove `{}`: {e}", dir.display())))?;
    if let Some(admin) = admin {
        // `<repository>/.git/worktrees/<name>`: git run from the repository's `.git`, never from
        // the worktree, forgets the worktree whose directory is gone.
        let common = admin.parent().and_then(Path::parent).unwrap_or(&admin);
        git::prune_worktrees(common);
    }
    Ok(true)
}

/// A file system mounted at or below a directory inside `dir` (whose device is `dev`): a
/// directory under it on another device, or a mount point the kernel lists under it (a bind
/// mount of the same device).
pub(super) fn mount_inside(dir: &Path, dev: u64) -> Option<PathBuf> {
    if let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") {
        for line in text.lines() {
            let Some(point) = line.split(' ').nth(4) else {
                continue;
            };
            let point = PathBuf::from(unescaped(point));
            if point != dir && point.starts_with(dir) {
                return Some(point);
            }
        }
    }
    other_device(dir, dev)
}

fn other_device(dir: &Path, dev: u64) -> Option<PathBuf> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if !m.is_dir() {
            continue;
        }
        if m.dev() != dev {
            return Some(p);
        }
        if let Some(found) = other_device(&p, dev) {
            return Some(found);
        }
    }
    None
}

/// A mount point as `/proc/self/mountinfo` writes it (space, tab, newline and backslash as
/// `\ooo`), as bytes.
fn unescaped(s: &str) -> std::ffi::OsString {
    use std::os::unix::ffi::OsStringExt;
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    std::ffi::OsString::from_vec(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_points_are_unescaped() {
        assert_eq!(unescaped("/a\\040b\\134c"), std::ffi::OsString::from("/a b\\c"));
        assert_eq!(unescaped("/plain"), std::ffi::OsString::from("/plain"));
    }

    #[test]
    fn a_file_system_mounted_inside_is_found() {
        // `/proc` is mounted inside `/` (where the kernel lists its mounts).
        if std::path::Path::new("/proc/self/mountinfo").exists() {
            let dev = std::fs::symlink_metadata("/").unwrap().dev();
            assert!(mount_inside(Path::new("/"), dev).is_some());
        }
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("d")).unwrap();
        let dev = std::fs::symlink_metadata(tmp.path()).unwrap().dev();
        assert_eq!(mount_inside(tmp.path(), dev), None);
    }

    #[test]
    fn a_directory_that_replaced_the_made_one_is_refused_and_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("made");
        std::fs::create_dir(&dir).unwrap();
        let made = identify(&dir, false).unwrap();
        std::fs::rename(&dir, tmp.path().join("moved")).unwrap();
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("precious"), b"p").unwrap();
        let e = remove_made_dir(&dir, false, Some(&made)).unwrap_err();
        assert_eq!(retrace_protocol::Error::from(e).code, ErrorCode::Refused);
        assert!(dir.join("precious").is_file());
        let e = remove_made_dir(&dir, false, None).unwrap_err();
        assert_eq!(retrace_protocol::Error::from(e).code, ErrorCode::Refused);
        // The one made is removed.
        let moved = tmp.path().join("moved");
        assert!(remove_made_dir(&moved, false, Some(&made)).unwrap());
        assert!(!moved.exists());
    }
}
