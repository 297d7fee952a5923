//! Removing a whole directory tree without leaving the file system it is on, and without following
//! a symlink: what `rm -r --one-file-system` promises, kept even while mounts come and go.
//!
//! Every directory is opened relative to the one holding it (`O_NOFOLLOW | O_DIRECTORY`) and
//! emptied through that descriptor. A directory opened on another mount (its mount id, or failing
//! that its device, differs from the top's) stops the removal before anything in it is touched.
//! A file system mounted on a directory after it was opened does not matter: the descriptor still
//! names the directory under it, and removing that directory's name then fails (`EBUSY`).

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{open, openat, OFlag};
use nix::sys::stat::{fstat, Mode};
use nix::unistd::{unlinkat, UnlinkatFlags};

fn flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

fn err(e: Errno, path: &Path) -> io::Error {
    io::Error::new(
        io::Error::from(e).kind(),
        format!("`{}`: {}", path.display(), e.desc()),
    )
}

/// Where an open directory is: its mount id (from `/proc/self/fdinfo`, where the kernel has it)
/// and its device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Place {
    mount: Option<u64>,
    dev: u64,
}

fn place_of(fd: &OwnedFd, path: &Path) -> io::Result<Place> {
    let dev = fstat(fd).map_err(|e| err(e, path))?.st_dev;
    let mount = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd()))
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("mnt_id:"))
                .and_then(|v| v.trim().parse().ok())
        });
    Ok(Place { mount, dev })
}

/// Whether `other` is on the same mount as `top` (by mount id when both have one, else device).
fn same_mount(top: Place, other: Place) -> bool {
    match (top.mount, other.mount) {
        (Some(a), Some(b)) => a == b && top.dev == other.dev,
        _ => top.dev == other.dev,
    }
}

/// Removes the directory `dir` and everything in it, never following a symlink (a link is
/// removed, not what it names) and never entering another mount: a directory inside on another
/// file system, or a bind mount, stops the removal with an error naming it (`PermissionDenied`
/// kind); what was removed before it stays removed. `dir` itself must be a real directory.
pub fn remove_tree_one_mount(dir: &Path) -> io::Result<()> {
    let top = open(dir, flags(), Mode::empty()).map_err(|e| err(e, dir))?;
    let place = place_of(&top, dir)?;
    empty(&top, dir, place)?;
    drop(top);
    std::fs::remove_dir(dir).map_err(|e| io::Error::new(e.kind(), format!("`{}`: {e}", dir.display())))
}

/// Empties the open directory `fd` (at `path`), every directory in it checked to be on `top`.
fn empty(fd: &OwnedFd, path: &Path, top: Place) -> io::Result<()> {
    loop {
        let names = names_in(fd, path)?;
        if names.is_empty() {
            return Ok(());
        }
        for name in names {
            let name = OsStr::from_bytes(&name);
            let at: PathBuf = path.join(name);
            match openat(fd, name, flags(), Mode::empty()) {
                Ok(sub) => {
                    if !same_mount(top, place_of(&sub, &at)?) {
                        return Err(io::Error::new(
                            io::ErrorKind::PermissionDenied,
                            format!(
                                "`{}` is another file system mounted inside; nothing in it was removed",
                                at.display()
                            ),
                        ));
                    }
                    empty(&sub, &at, top)?;
                    drop(sub);
                    unlinkat(fd, name, UnlinkatFlags::RemoveDir).map_err(|e| err(e, &at))?;
                }
                // Not a directory (a file, a link, a FIFO…): its name is removed.
                Err(Errno::ENOTDIR | Errno::ELOOP) => {
                    unlinkat(fd, name, UnlinkatFlags::NoRemoveDir).map_err(|e| err(e, &at))?;
                }
                Err(Errno::ENOENT) => {}
                Err(e) => return Err(err(e, &at)),
            }
        }
    }
}

/// The names in the open directory `fd`, without `.` and `..`.
fn names_in(fd: &OwnedFd, path: &Path) -> io::Result<Vec<Vec<u8>>> {
    // A descriptor of its own: `Dir` takes the one it reads and reads from its start.
    let again = openat(fd, ".", flags(), Mode::empty()).map_err(|e| err(e, path))?;
    let mut dir = nix::dir::Dir::from_fd(again).map_err(|e| err(e, path))?;
    let mut out = Vec::new();
    for entry in dir.iter() {
        let entry = entry.map_err(|e| err(e, path))?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            out.push(name.to_vec());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_a_tree_with_links_without_following_them() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep.txt"), b"k").unwrap();
        let d = tmp.path().join("d");
        std::fs::create_dir_all(d.join("a/b/c")).unwrap();
        std::fs::write(d.join("a/b/c/f.txt"), b"x").unwrap();
        std::fs::write(d.join("top.txt"), b"y").unwrap();
        std::os::unix::fs::symlink(&outside, d.join("a/link")).unwrap();
        std::os::unix::fs::symlink(outside.join("keep.txt"), d.join("flink")).unwrap();
        remove_tree_one_mount(&d).unwrap();
        assert!(!d.exists());
        assert_eq!(std::fs::read(outside.join("keep.txt")).unwrap(), b"k");
    }

    #[test]
    fn a_symlink_given_as_the_top_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::fs::write(real.join("f"), b"f").unwrap();
        std::os::unix::fs::symlink(&real, tmp.path().join("l")).unwrap();
        assert!(remove_tree_one_mount(&tmp.path().join("l")).is_err());
        assert!(real.join("f").exists());
    }

    /// Needs root (a bind mount); skipped otherwise.
    #[test]
    fn a_bind_mount_inside_stops_the_removal_before_it() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("precious.txt"), b"p").unwrap();
        let d = tmp.path().join("d");
        std::fs::create_dir_all(d.join("mnt")).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["--bind"])
            .arg(&outside)
            .arg(d.join("mnt"))
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            return;
        }
        let r = remove_tree_one_mount(&d);
        let _ = std::process::Command::new("umount").arg(d.join("mnt")).status();
        let e = r.unwrap_err();
        assert!(e.to_string().contains("mounted inside"), "{e}");
        assert_eq!(std::fs::read(outside.join("precious.txt")).unwrap(), b"p");
    }
}
