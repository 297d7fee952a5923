//! Creating, listing and removing directories inside a workspace without ever following a
//! symlink.
//!
//! `create_dir_all` resolves every component as it goes, so a directory that a user (or an
//! attacker) replaced by a symlink to somewhere else is walked through, and the new directories
//! appear there. Here each component is opened relative to the one before with `O_NOFOLLOW |
//! O_DIRECTORY`, and a missing one is made with `mkdirat` in the directory just opened: the walk
//! holds real directories the whole way, whatever is renamed meanwhile.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{open, openat, OFlag};
use nix::sys::stat::{mkdirat, Mode};
use nix::unistd::{unlinkat, UnlinkatFlags};

fn flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

fn io_err(e: Errno, path: &Path) -> io::Error {
    let symlink = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let says = match e {
        // Linux says ENOTDIR for a symlink opened with O_NOFOLLOW | O_DIRECTORY.
        Errno::ELOOP | Errno::ENOTDIR if symlink => {
            format!("`{}` is a symlink; it is not followed", path.display())
        }
        Errno::ENOTDIR => format!("`{}` is not a directory", path.display()),
        other => format!("`{}`: {}", path.display(), other.desc()),
    };
    io::Error::new(io::Error::from(e).kind(), says)
}

fn open_dir_at(dir: &OwnedFd, name: &OsStr) -> Result<OwnedFd, Errno> {
    openat(dir, name, flags(), Mode::empty())
}

/// Creates the directory `rel` (relative to `root`, which must itself be a real directory, not a
/// symlink) and every missing ancestor, one component at a time, never through a symlink: an
/// existing component that is a symlink or not a directory is an error naming it, and nothing is
/// created under it. New directories get `mode`. Returns the directories created, outermost first.
pub fn create_dirs_nofollow(root: &Path, rel: &Path, mode: u32) -> io::Result<Vec<PathBuf>> {
    let mut cur = open(root, flags(), Mode::empty()).map_err(|e| io_err(e, root))?;
    let mut at = root.to_path_buf();
    let mut created = Vec::new();
    for c in rel.components() {
        let Component::Normal(name) = c else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("`{}` is not a plain relative path", rel.display()),
            ));
        };
        at.push(name);
        let next = match open_dir_at(&cur, name) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) => {
                match mkdirat(&cur, name, Mode::from_bits_truncate(mode)) {
                    Ok(()) => created.push(at.clone()),
                    // Made by someone else meanwhile: opened (and checked) below like any other.
                    Err(Errno::EEXIST) => {}
                    Err(e) => return Err(io_err(e, &at)),
                }
                open_dir_at(&cur, name).map_err(|e| io_err(e, &at))?
            }
            Err(e) => return Err(io_err(e, &at)),
        };
        cur = next;
    }
    Ok(created)
}

/// The components of `rel`, each a plain name.
fn names(rel: &Path) -> io::Result<Vec<&OsStr>> {
    rel.components()
        .map(|c| match c {
            Component::Normal(name) => Ok(name),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("`{}` is not a plain relative path", rel.display()),
            )),
        })
        .collect()
}

/// Opens the directory `rel` under `root` one component at a time, never through a symlink.
fn open_dir_nofollow(root: &Path, rel: &[&OsStr]) -> io::Result<OwnedFd> {
    let mut cur = open(root, flags(), Mode::empty()).map_err(|e| io_err(e, root))?;
    let mut at = root.to_path_buf();
    for name in rel {
        at.push(name);
        cur = open_dir_at(&cur, name).map_err(|e| io_err(e, &at))?;
    }
    Ok(cur)
}

/// The names in the directory `rel` (relative to `root`), reached without following a symlink:
/// an error when a component is a symlink or not a directory.
pub fn list_dir_nofollow(root: &Path, rel: &Path) -> io::Result<Vec<OsString>> {
    use std::os::unix::ffi::OsStrExt;
    let fd = open_dir_nofollow(root, &names(rel)?)?;
    let at = root.join(rel);
    let mut dir = nix::dir::Dir::from_fd(fd).map_err(|e| io_err(e, &at))?;
    let mut out = Vec::new();
    for entry in dir.iter() {
        let entry = entry.map_err(|e| io_err(e, &at))?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            out.push(OsStr::from_bytes(name).to_os_string());
        }
    }
    Ok(out)
}

/// Removes the directory `rel` (relative to `root`) if it is empty (`rmdir`, never anything in
/// it), reached without following a symlink. A directory that is not empty stays: the error's
/// kind is then `DirectoryNotEmpty`.
pub fn remove_empty_dir_nofollow(root: &Path, rel: &Path) -> io::Result<()> {
    let parts = names(rel)?;
    let Some((last, parents)) = parts.split_last() else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the workspace root itself is never removed",
        ));
    };
    let parent = open_dir_nofollow(root, parents)?;
    let at = root.join(rel);
    // Opened first so that a symlink (or a file) at the name is refused, not removed.
    open_dir_at(&parent, last).map_err(|e| io_err(e, &at))?;
    unlinkat(&parent, *last, UnlinkatFlags::RemoveDir).map_err(|e| io_err(e, &at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_what_is_missing_and_never_walks_a_symlink() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let made = create_dirs_nofollow(ws.path(), Path::new("a/b/c"), 0o700).unwrap();
        assert_eq!(made.len(), 3);
        assert!(ws.path().join("a/b/c").is_dir());
        assert!(create_dirs_nofollow(ws.path(), Path::new("a/b"), 0o700)
            .unwrap()
            .is_empty());
        std::os::unix::fs::symlink(outside.path(), ws.path().join("p")).unwrap();
        let e = create_dirs_nofollow(ws.path(), Path::new("p/q"), 0o700).unwrap_err();
        assert!(e.to_string().contains("symlink"), "{e}");
        assert_eq!(
            std::fs::read_dir(outside.path()).unwrap().count(),
            0,
            "nothing made outside"
        );
        std::fs::write(ws.path().join("f"), b"x").unwrap();
        let e = create_dirs_nofollow(ws.path(), Path::new("f/g"), 0o700).unwrap_err();
        assert!(e.to_string().contains("not a directory"), "{e}");
        // A root that is a symlink is refused too.
        let link = outside.path().join("root-link");
        std::os::unix::fs::symlink(ws.path(), &link).unwrap();
        assert!(create_dirs_nofollow(&link, Path::new("z"), 0o700).is_err());
        assert!(!ws.path().join("z").exists());
        assert!(create_dirs_nofollow(ws.path(), Path::new("../x"), 0o700).is_err());
    }

    #[test]
    fn lists_and_removes_only_empty_real_directories() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        create_dirs_nofollow(ws.path(), Path::new("a/b"), 0o700).unwrap();
        std::fs::write(ws.path().join("a/f"), b"x").unwrap();
        let mut listed = list_dir_nofollow(ws.path(), Path::new("a")).unwrap();
        listed.sort();
        assert_eq!(listed, [OsString::from("b"), OsString::from("f")]);
        let e = remove_empty_dir_nofollow(ws.path(), Path::new("a")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::DirectoryNotEmpty, "{e}");
        remove_empty_dir_nofollow(ws.path(), Path::new("a/b")).unwrap();
        assert!(!ws.path().join("a/b").exists());
        // Through a symlinked parent, or a symlink at the name: refused, nothing removed outside.
        std::fs::create_dir(outside.path().join("q")).unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.path().join("p")).unwrap();
        assert!(remove_empty_dir_nofollow(ws.path(), Path::new("p/q")).is_err());
        assert!(list_dir_nofollow(ws.path(), Path::new("p")).is_err());
        assert!(remove_empty_dir_nofollow(ws.path(), Path::new("p")).is_err());
        assert!(outside.path().join("q").is_dir());
        assert!(ws.path().join("p").symlink_metadata().is_ok());
        assert!(remove_empty_dir_nofollow(ws.path(), Path::new("")).is_err());
    }
}
