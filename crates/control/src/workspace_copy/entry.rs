//! One path of a workspace copied into another tree as it is: a regular file with its bytes and
//! mode, a symlink as a symlink (its text, never followed), a directory made with its mode later;
//! anything else is not copied. Nothing is written through a symlink of the new tree.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use retrace_protocol::{ForkSkipReason, ForkSkipped};

use crate::error::{coded, Result};
use retrace_protocol::ErrorCode;

/// What copying one path did.
pub(super) enum Copied {
    /// A file or a symlink was written.
    File,
    /// A directory: made, its mode to be set once everything in it is written.
    Dir(u32),
    /// Nothing was written, for this reason.
    Skipped(ForkSkipped),
}

/// A path left out of the copy.
pub(super) fn skip(path: String, reason: ForkSkipReason, says: impl Into<String>) -> ForkSkipped {
    ForkSkipped {
        path: Some(path),
        reason,
        turn: None,
        says: says.into(),
    }
}

/// `cannot OP `PATH`: WHY`, the path said once (an error of the no-follow helpers names it
/// already).
fn io(op: &str, path: &Path, e: std::io::Error) -> crate::error::ControlError {
    let shown = format!("`{}`", path.display());
    let says = e.to_string();
    let message = match says.strip_prefix(&shown) {
        Some(rest) if rest.starts_with(':') => format!("cannot {op} {shown}{rest}"),
        // "`PATH` is a symlink; …": the path is the one this error is about.
        Some(rest) => format!("cannot {op} {shown}: it{rest}"),
        None => format!("cannot {op} {shown}: {says}"),
    };
    coded(ErrorCode::Io, message)
}

/// Copies `rel` from the tree `from` to the tree `to`, as it stands now (`lstat`: a symlink is
/// copied as one). A directory is made (owner-writable until its mode is set). Something that
/// is gone since it was listed is skipped as unreadable.
pub(super) fn copy_entry(from: &Path, to: &Path, rel: &Path) -> Result<Copied> {
    let src = from.join(rel);
    let shown = rel.to_string_lossy().into_owned();
    super::check_stopping()?;
    let meta = match std::fs::symlink_metadata(&src) {
        Ok(m) => m,
        Err(e) => {
            return Ok(Copied::Skipped(skip(
                shown,
                ForkSkipReason::Unreadable,
                format!("could not be read: {e}"),
            )))
        }
    };
    let t = meta.file_type();
    if t.is_symlink() {
        let target = std::fs::read_link(&src).map_err(|e| io("read the symlink", &src, e))?;
        retrace_fsutil::place_symlink(to, rel, &target).map_err(|e| io("write", &to.join(rel), e))?;
        return Ok(Copied::File);
    }
    if t.is_dir() {
        retrace_fsutil::create_dirs_nofollow(to, rel, 0o700).map_err(|e| io("create", &to.join(rel), e))?;
        return Ok(Copied::Dir(meta.permissions().mode() & 0o7777));
    }
    if !t.is_file() {
        return Ok(Copied::Skipped(skip(
            shown,
            ForkSkipReason::Special,
            format!("{}: not copied", retrace_fsutil::kind_of(&meta)),
        )));
    }
    let (mut file, opened) = match retrace_fsutil::open_regular_nofollow(&src) {
        Ok(f) => f,
        Err(e) => {
            return Ok(Copied::Skipped(skip(
                shown,
                ForkSkipReason::Unreadable,
                format!("could not be read: {e}"),
            )))
        }
    };
    retrace_fsutil::place_file(to, rel, &mut file, opened.mode() & 0o7777)
        .map_err(|e| io("write", &to.join(rel), e))?;
    Ok(Copied::File)
}

/// Gives the directories made by a copy their modes, deepest first (so that a read-only one is
/// made read-only after what is in it was written).
pub(super) fn set_dir_modes(to: &Path, mut dirs: Vec<(std::path::PathBuf, u32)>) -> Result<()> {
    dirs.sort_by_key(|(d, _)| std::cmp::Reverse(d.components().count()));
    for (d, mode) in dirs {
        if d.as_os_str().is_empty() {
            continue;
        }
        retrace_fsutil::place_dir(to, &d, mode).map_err(|e| io("set the mode of", &to.join(&d), e))?;
    }
    Ok(())
}

/// Removes the file `rel` of the tree `to` (not following a symlink above it), then each
/// directory above it that is left empty, up to the root.
pub(super) fn remove_entry(to: &Path, rel: &Path) -> Result<()> {
    retrace_fsutil::remove_file_nofollow(to, rel).map_err(|e| io("remove", &to.join(rel), e))?;
    let mut dir = rel.parent();
    while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
        if retrace_fsutil::remove_empty_dir_nofollow(to, d).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_is_said_once() {
        let p = Path::new("/d/x");
        let named = std::io::Error::other("`/d/x`: No space left on device");
        let e = retrace_protocol::Error::from(io("write", p, named));
        assert_eq!(e.message, "cannot write `/d/x`: No space left on device");
        let bare = std::io::Error::other("No space left on device");
        let e = retrace_protocol::Error::from(io("write", p, bare));
        assert_eq!(e.message, "cannot write `/d/x`: No space left on device");
        let link = std::io::Error::other("`/d/x` is a symlink; it is not followed");
        let e = retrace_protocol::Error::from(io("create", p, link));
        assert_eq!(
            e.message,
            "cannot create `/d/x`: it is a symlink; it is not followed"
        );
    }
}
