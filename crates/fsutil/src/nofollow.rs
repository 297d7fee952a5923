//! Creating, listing and removing directories inside a workspace without ever following a
//! symlink.
//!
//! `create_dir_all` resolves every component as it goes, so a directory that a user (or an
//! attacker) replaced by a symlink to somewhere else is walked through, and the new directories
//! appear there. Here each component is opened relative to the one before with `O_NOFOLLOW |
//! O_DIRECTORY`, and a missing one is made with `mkdirat` in the directory just opened: the walk
//! holds real directories the whole way, whatever is renamed meanwhile.
//!
//! Where the kernel has `openat2`, a directory that exists is first opened in one call that
//! neither follows a symlink nor leaves the root (`RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH`): the
//! same directory the component walk reaches, without a system call per component, which made
//! reaching every directory of a deep tree quadratic in its depth. Any failure of that call
//! (something missing, a symlink, no `openat2`) falls back to the walk, which says what is in the
//! way in the same words as before.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use nix::errno::Errno;
use nix::fcntl::renameat;
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

/// Set once `openat2` said the kernel has no such call: every later open walks at once.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// `rel` (plain names, not empty) under the open directory `dir`, opened with `oflag` in one call
/// that follows no symlink and stays beneath `dir`; `None` when that call fails, whatever the
/// reason: the caller then goes one component at a time.
#[cfg(target_os = "linux")]
fn open_beneath(dir: &OwnedFd, rel: &Path, oflag: OFlag) -> Option<OwnedFd> {
    use nix::fcntl::{openat2, OpenHow, ResolveFlag};
    if rel.as_os_str().is_empty() || NO_OPENAT2.load(Ordering::Relaxed) {
        return None;
    }
    let how = OpenHow::new()
        .flags(oflag)
        .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS | ResolveFlag::RESOLVE_BENEATH);
    match openat2(dir, rel, how) {
        Ok(fd) => Some(fd),
        Err(Errno::ENOSYS) => {
            NO_OPENAT2.store(true, Ordering::Relaxed);
            None
        }
        Err(_) => None,
    }
}

#[cfg(not(target_os = "linux"))]
fn open_beneath(_dir: &OwnedFd, _rel: &Path, _oflag: OFlag) -> Option<OwnedFd> {
    let _ = &NO_OPENAT2;
    None
}

/// Whether every directory between `root` and `rel` (a plain relative path) is shown, in one
/// call, to be a real directory reached without a symlink (and `root` not a symlink): `true` at
/// once when `rel` has no directory above it (whether `root` is a real directory is the caller's
/// to check). `false` says nothing: the caller looks at each ancestor itself (something may be
/// missing, be a symlink or a file, or the kernel may lack `openat2`).
pub fn dirs_above_are_plain(root: &Path, rel: &Path) -> bool {
    let Some(parent) = rel.parent() else {
        return true;
    };
    if parent.as_os_str().is_empty() {
        return true;
    }
    if names(parent).is_err() {
        return false;
    }
    let path_only = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let Ok(top) = open(root, path_only, Mode::empty()) else {
        return false;
    };
    open_beneath(&top, parent, path_only).is_some()
}

/// Creates the directory `rel` (relative to `root`, which must itself be a real directory, not a
/// symlink) and every missing ancestor, one component at a time, never through a symlink: an
/// existing component that is a symlink or not a directory is an error naming it, and nothing is
/// created under it. New directories get `mode`. Returns the directories created, outermost first.
pub fn create_dirs_nofollow(root: &Path, rel: &Path, mode: u32) -> io::Result<Vec<PathBuf>> {
    let mut cur = open(root, flags(), Mode::empty()).map_err(|e| io_err(e, root))?;
    // Already there, reached without a symlink: nothing to make.
    if names(rel).is_ok() && open_beneath(&cur, rel, flags()).is_some() {
        return Ok(Vec::new());
    }
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
pub(crate) fn names(rel: &Path) -> io::Result<Vec<&OsStr>> {
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
pub(crate) fn open_dir_nofollow(root: &Path, rel: &[&OsStr]) -> io::Result<OwnedFd> {
    let mut cur = open(root, flags(), Mode::empty()).map_err(|e| io_err(e, root))?;
    let joined: PathBuf = rel.iter().collect();
    if let Some(fd) = open_beneath(&cur, &joined, flags()) {
        return Ok(fd);
    }
    let mut at = root.to_path_buf();
    for name in rel {
        at.push(name);
        cur = open_dir_at(&cur, name).map_err(|e| io_err(e, &at))?;
    }
    Ok(cur)
}

/// A directory of a workspace, reached one component at a time without following a symlink and
/// held open: names created, renamed or removed through it stay in that very directory, whatever
/// is renamed or swapped for a symlink meanwhile.
#[derive(Debug)]
pub struct DirAt {
    fd: OwnedFd,
    path: PathBuf,
}

impl DirAt {
    /// Opens the directory `rel_dir` under `root` (`""`: the root itself).
    pub fn open(root: &Path, rel_dir: &Path) -> io::Result<DirAt> {
        let fd = open_dir_nofollow(root, &names(rel_dir)?)?;
        Ok(DirAt {
            fd,
            path: root.join(rel_dir),
        })
    }

    /// Its path when it was opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory as opened.
    pub(crate) fn fd(&self) -> &OwnedFd {
        &self.fd
    }

    /// Creates the file `name` in it for writing, failing if any name (a symlink too) is there.
    pub fn create_new(&self, name: &OsStr, mode: u32) -> io::Result<std::fs::File> {
        let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = openat(&self.fd, name, flags, Mode::from_bits_truncate(mode))
            .map_err(|e| io_err(e, &self.path.join(name)))?;
        Ok(std::fs::File::from(fd))
    }

    /// Opens the file `name` in it to read, non-blocking and without following a symlink:
    /// `Ok(None)` when nothing is there; an error when a symlink (`ELOOP`) or anything but a
    /// regular file (kind `InvalidInput`) is.
    pub fn open_existing(&self, name: &OsStr) -> io::Result<Option<(std::fs::File, std::fs::Metadata)>> {
        let flags = OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let file = match openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => std::fs::File::from(fd),
            Err(Errno::ENOENT) => return Ok(None),
            Err(e) => return Err(io_err(e, &self.path.join(name))),
        };
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "`{}` is {}",
                    self.path.join(name).display(),
                    crate::kind_of(&meta)
                ),
            ));
        }
        Ok(Some((file, meta)))
    }

    /// Renames `from` to `to`, both names in this directory (atomic replace).
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        renameat(&self.fd, from, &self.fd, to).map_err(io::Error::from)
    }

    /// Removes the file (or symlink) `name`; a missing one is not an error.
    pub fn remove_file(&self, name: &OsStr) -> io::Result<()> {
        match unlinkat(&self.fd, name, UnlinkatFlags::NoRemoveDir) {
            Ok(()) | Err(Errno::ENOENT) => Ok(()),
            Err(e) => Err(io_err(e, &self.path.join(name))),
        }
    }
}

/// How [`remove_file_nofollow`] went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    /// Removed, or there was nothing at that name (nor, maybe, its directory).
    Gone,
    /// A component above it is a symlink or not a directory: nothing was removed, and the file,
    /// if there is one, is not reachable from the root without following a link.
    Unreachable,
}

/// Removes the file `rel` (relative to `root`) without following a symlink in its directories.
pub fn remove_file_nofollow(root: &Path, rel: &Path) -> io::Result<Removal> {
    let parts = names(rel)?;
    let Some((last, parents)) = parts.split_last() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no file name"));
    };
    let mut cur = open(root, flags(), Mode::empty()).map_err(|e| io_err(e, root))?;
    // Its directory in one call when it is there and reached without a symlink; else (missing, a
    // link or a file above it, a path too long for one call) one component at a time, which says
    // which.
    let joined: PathBuf = parents.iter().collect();
    let mut parents = parents;
    if let Some(fd) = open_beneath(&cur, &joined, flags()) {
        cur = fd;
        parents = &[];
    }
    let mut at = root.to_path_buf();
    for name in parents {
        at.push(name);
        cur = match open_dir_at(&cur, name) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) => return Ok(Removal::Gone),
            Err(Errno::ENOTDIR | Errno::ELOOP) => return Ok(Removal::Unreachable),
            Err(e) => return Err(io_err(e, &at)),
        };
    }
    match unlinkat(&cur, *last, UnlinkatFlags::NoRemoveDir) {
        Ok(()) | Err(Errno::ENOENT) => Ok(Removal::Gone),
        Err(e) => Err(io_err(e, &root.join(rel))),
    }
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

    #[test]
    fn a_directory_held_open_keeps_its_names_when_swapped_for_a_symlink() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join("d")).unwrap();
        let dir = DirAt::open(ws.path(), Path::new("d")).unwrap();
        std::fs::rename(ws.path().join("d"), ws.path().join("d.real")).unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.path().join("d")).unwrap();
        use std::io::Write;
        let mut f = dir.create_new(OsStr::new(".t.tmp"), 0o600).unwrap();
        f.write_all(b"x").unwrap();
        assert!(
            dir.create_new(OsStr::new(".t.tmp"), 0o600).is_err(),
            "never reused"
        );
        dir.rename(OsStr::new(".t.tmp"), OsStr::new("t")).unwrap();
        assert_eq!(std::fs::read(ws.path().join("d.real/t")).unwrap(), b"x");
        assert_eq!(
            std::fs::read_dir(outside.path()).unwrap().count(),
            0,
            "nothing outside"
        );
        // Through the path, the symlink is not followed.
        std::fs::write(outside.path().join("t"), b"outside").unwrap();
        assert_eq!(
            remove_file_nofollow(ws.path(), Path::new("d/t")).unwrap(),
            Removal::Unreachable
        );
        assert!(outside.path().join("t").exists());
        assert_eq!(
            remove_file_nofollow(ws.path(), Path::new("d.real/t")).unwrap(),
            Removal::Gone
        );
        assert_eq!(
            remove_file_nofollow(ws.path(), Path::new("none/t")).unwrap(),
            Removal::Gone
        );
        assert!(DirAt::open(ws.path(), Path::new("d")).is_err());
        dir.remove_file(OsStr::new("gone")).unwrap();
    }

    #[test]
    fn the_directories_above_a_path_are_plain_only_when_real_and_there() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = ws.path();
        create_dirs_nofollow(root, Path::new("a/b"), 0o700).unwrap();
        assert!(dirs_above_are_plain(root, Path::new("f")));
        assert!(dirs_above_are_plain(root, Path::new("a/b/f")));
        assert!(dirs_above_are_plain(root, Path::new("a/b")));
        // Something missing, a symlink (to a real directory, inside or out), a file above, a
        // path that is not plain, a root that is a symlink: not shown.
        assert!(!dirs_above_are_plain(root, Path::new("a/missing/f")));
        std::os::unix::fs::symlink("a", root.join("in")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
        assert!(!dirs_above_are_plain(root, Path::new("in/b/f")));
        assert!(!dirs_above_are_plain(root, Path::new("out/f")));
        std::fs::write(root.join("a/file"), b"x").unwrap();
        assert!(!dirs_above_are_plain(root, Path::new("a/file/f")));
        assert!(!dirs_above_are_plain(root, Path::new("a/../a/f")));
        let link = outside.path().join("root-link");
        std::os::unix::fs::symlink(root, &link).unwrap();
        assert!(!dirs_above_are_plain(&link, Path::new("a/f")));
    }

    /// A deep tree is reached in one call per open, and what is in the way deep down is named as
    /// the walk one component at a time names it.
    #[test]
    fn a_deep_tree_is_reached_whole_and_a_symlink_deep_in_it_is_named() {
        use std::os::unix::fs::MetadataExt;
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = ws.path();
        let deep: PathBuf = (0..600).map(|_| "d").collect();
        assert_eq!(create_dirs_nofollow(root, &deep, 0o700).unwrap().len(), 600);
        assert!(create_dirs_nofollow(root, &deep, 0o700).unwrap().is_empty());
        let held = DirAt::open(root, &deep).unwrap();
        let walked = nix::sys::stat::fstat(held.fd()).unwrap();
        assert_eq!(walked.st_ino, std::fs::metadata(root.join(&deep)).unwrap().ino());
        assert!(dirs_above_are_plain(root, &deep.join("f")));
        std::fs::write(root.join(&deep).join("f"), b"f").unwrap();
        std::fs::write(root.join(&deep).join("g"), b"g").unwrap();
        assert_eq!(
            remove_file_nofollow(root, &deep.join("f")).unwrap(),
            Removal::Gone
        );
        assert!(!root.join(&deep).join("f").exists());
        // The 300th directory moved aside inside the workspace, a relative symlink in its place.
        let at: PathBuf = (0..300).map(|_| "d").collect();
        std::fs::rename(root.join(&at), root.join("moved")).unwrap();
        std::os::unix::fs::symlink("../".repeat(299) + "moved", root.join(&at)).unwrap();
        assert!(root.join(&deep).is_dir(), "the symlink leads to the rest");
        assert!(!dirs_above_are_plain(root, &deep.join("f")));
        let e = DirAt::open(root, &deep).unwrap_err();
        assert!(e.to_string().contains("is a symlink; it is not followed"), "{e}");
        assert!(
            e.to_string().contains(&root.join(&at).display().to_string()),
            "{e}"
        );
        let e = create_dirs_nofollow(root, &deep.join("new"), 0o700).unwrap_err();
        assert!(e.to_string().contains("is a symlink"), "{e}");
        assert_eq!(
            remove_file_nofollow(root, &deep.join("g")).unwrap(),
            Removal::Unreachable
        );
        assert!(
            root.join(&deep).join("g").exists(),
            "nothing removed through the link"
        );
        let rest: PathBuf = (0..299).map(|_| "d").collect();
        assert!(!root.join("moved").join(&rest).join("new").exists());
        drop(outside);
    }
}
