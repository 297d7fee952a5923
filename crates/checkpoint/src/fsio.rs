//! The small file-system helpers every part of the store shares: what stands at a workspace path,
//! a file's image (existence, SHA-256, mode) read without blocking, removing a transaction's file
//! without following a symlink, and the errors of a failed batch.

use std::fs::{self, File};
use std::io::{self, Seek};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use retrace_fsutil::{copy_hashed, DirAt, Fs, RelPath};

use crate::error::CheckpointError;
use crate::model::Image;

/// The directory holding `p` (`.` for a bare name).
pub(crate) fn parent_of(p: &Path) -> PathBuf {
    p.parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The directory `parent` (a workspace directory under `root`), reached from the root one component
/// at a time without following a symlink, held in `slot` while the targets in it come one after
/// another. Only one is held at a time: a transaction across thousands of directories must not use
/// up descriptors.
pub(crate) fn held_dir<'a>(slot: &'a mut Option<DirAt>, root: &Path, parent: &Path) -> io::Result<&'a DirAt> {
    if let Some(d) = slot.take().filter(|d| d.path() == parent) {
        return Ok(slot.insert(d));
    }
    let rel_dir = parent.strip_prefix(root).unwrap_or(Path::new(""));
    Ok(slot.insert(DirAt::open(root, rel_dir)?))
}

/// Permission bits (including setuid/setgid/sticky) of a file.
pub fn mode_bits(meta: &fs::Metadata) -> u32 {
    meta.permissions().mode() & 0o7777
}

/// Existence, SHA-256 (streamed) and mode of the file at `abs` now.
pub fn image_of(abs: &Path) -> io::Result<Image> {
    let Some((file, meta)) = open_existing(abs)? else {
        return Ok(Image::absent());
    };
    let hashed = copy_hashed::<_, File>(&file, None)?;
    Ok(Image {
        existed: true,
        sha256: Some(hashed.sha256),
        mode: Some(mode_bits(&meta)),
    })
}

/// `abs` opened for reading, with its metadata; `None` when nothing is there (or an ancestor is not
/// a directory); an error for a directory.
pub(crate) fn open_existing(abs: &Path) -> io::Result<Option<(File, std::fs::Metadata)>> {
    // Non-blocking: a FIFO at the path must never hang a plan, a commit or an undo.
    let (file, meta) = match retrace_fsutil::open_read(abs) {
        Ok(opened) => opened,
        Err(e) if e.kind() == io::ErrorKind::NotFound || e.kind() == io::ErrorKind::NotADirectory => {
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("is {}", retrace_fsutil::kind_of(&meta)),
        ));
    }
    Ok(Some((file, meta)))
}

/// The SHA-256 of all of `file`'s bytes, read from its start.
pub(crate) fn hash_from_start(mut file: &File) -> io::Result<String> {
    file.seek(io::SeekFrom::Start(0))?;
    Ok(copy_hashed::<_, File>(file, None)?.sha256)
}

/// What stands at a restore path, as far as writing there goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Standing {
    /// Nothing, or a regular file, reached through real directories.
    Plain,
    /// The workspace root, an ancestor or the path itself is a symlink (or the root is gone):
    /// never followed, never written (`path_unsafe`).
    Unsafe,
    /// An ancestor is not a directory: a file where a directory was (`type_change`).
    FileAbove,
    /// The path holds a directory, a FIFO, a socket or a device (`type_change`).
    Special(&'static str),
}

/// What stands at `rel` under `root`, from `lstat` alone (nothing is opened).
pub(crate) fn standing(root: &Path, rel: &RelPath) -> Standing {
    if !fs::symlink_metadata(root).is_ok_and(|m| m.is_dir()) {
        return Standing::Unsafe;
    }
    // Shown in one call where the kernel can (a deep path is otherwise one `lstat` of a longer
    // and longer path per ancestor); else each ancestor looked at, which says what is in the way.
    let ancestors = match retrace_fsutil::dirs_above_are_plain(root, rel.as_path()) {
        true => Vec::new(),
        false => rel.ancestors_top_down(),
    };
    for anc in ancestors {
        match fs::symlink_metadata(anc.under(root)) {
            Ok(m) if m.file_type().is_symlink() => return Standing::Unsafe,
            Ok(m) if !m.is_dir() => return Standing::FileAbove,
            Ok(_) => {}
            // Missing: nothing below it exists either.
            Err(_) => return Standing::Plain,
        }
    }
    match fs::symlink_metadata(rel.under(root)) {
        Ok(m) if m.file_type().is_symlink() => Standing::Unsafe,
        Ok(m) if m.is_file() => Standing::Plain,
        Ok(m) => Standing::Special(retrace_fsutil::kind_of(&m)),
        Err(_) => Standing::Plain,
    }
}

/// Whether anything but a plain file (or nothing) reached through real directories stands at
/// `rel`: then nothing may be written there.
pub(crate) fn unsafe_to_write(root: &Path, rel: &RelPath) -> bool {
    standing(root, rel) != Standing::Plain
}

/// Removes a transaction's file `abs` in the workspace (a temp, a `.bak`) without following a
/// symlink above it: `Unreachable` when its directory is no longer reached from the root
/// without one (nothing removed).
///
/// A file that is not there is gone: on a read-only file system `unlink` fails (`EROFS`)
/// before it looks the name up, and a temp file that was never made must not turn the failure
/// that stopped the transaction into one about removing it (nor keep the transaction open).
pub(crate) fn remove_in_workspace(fs_: &Fs, root: &Path, abs: &Path) -> io::Result<retrace_fsutil::Removal> {
    fs_.step("remove_file")?;
    let rel = abs.strip_prefix(root).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` is outside the workspace", abs.display()),
        )
    })?;
    match retrace_fsutil::remove_file_nofollow(root, rel) {
        Err(e)
            if e.kind() == io::ErrorKind::ReadOnlyFilesystem
                && fs::symlink_metadata(abs).is_err_and(|e| e.kind() == io::ErrorKind::NotFound) =>
        {
            Ok(retrace_fsutil::Removal::Gone)
        }
        other => other,
    }
}

/// A failed barrier ([`retrace_fsutil::Fs::sync_paths`], a batch of fsyncs), naming the path that
/// failed.
pub(crate) fn sync_error((path, source): (PathBuf, io::Error)) -> CheckpointError {
    CheckpointError::Io {
        op: "sync",
        path,
        source,
    }
}
