//! Putting a file, a symlink or a directory's mode into a directory tree without following a
//! symlink: what a copy of a workspace is made with (a fork into a new workspace). Each name is
//! made in its directory as reached one component at a time (`DirAt`), a file through a temp
//! name renamed over the old one; a symlink's text is written as it is and never followed.
//! A placed file or directory never keeps set-user-ID or set-group-ID ([`KEPT_MODE`]): the copy
//! belongs to whoever makes it, not to the original's owner (as `cp` without `-p` does it).

use std::io::{self, Read};
use std::path::Path;

use nix::sys::stat::{fchmod, Mode};
use nix::unistd::symlinkat;

use crate::hash::{copy_hashed, HashedCopy};
use crate::names::sibling_name;
use crate::nofollow::{create_dirs_nofollow, names, open_dir_nofollow, DirAt};

/// The permission bits a placed file or directory keeps: read, write and execute for each
/// class, and the sticky bit; never set-user-ID or set-group-ID.
pub const KEPT_MODE: u32 = 0o1777;

/// The directory and the name of `rel`, its missing directories made (mode 0777, less the umask),
/// never through a symlink.
fn parent_of(root: &Path, rel: &Path) -> io::Result<(DirAt, std::ffi::OsString)> {
    let parts = names(rel)?;
    let Some((last, parents)) = parts.split_last() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no file name"));
    };
    let dir: std::path::PathBuf = parents.iter().collect();
    create_dirs_nofollow(root, &dir, 0o777)?;
    Ok((DirAt::open(root, &dir)?, last.to_os_string()))
}

/// Writes the file `rel` under `root` with the bytes of `src` and the permission bits `mode`
/// (set exactly, whatever the umask, less set-user-ID and set-group-ID), replacing a file or a symlink standing there: the bytes go
/// to a temp file beside it, renamed over it. Returns what was copied (its SHA-256 and size).
pub fn place_file(root: &Path, rel: &Path, src: &mut dyn Read, mode: u32) -> io::Result<HashedCopy> {
    let (dir, name) = parent_of(root, rel)?;
    let tmp = sibling_name(".", &name, &format!("retrace-place-{}.tmp", std::process::id()));
    dir.remove_file(&tmp)?;
    let mut out = dir.create_new(&tmp, 0o600)?;
    let copied = copy_hashed(src, Some(&mut out)).and_then(|c| {
        fchmod(&out, Mode::from_bits_truncate(mode & KEPT_MODE)).map_err(io::Error::from)?;
        Ok(c)
    });
    drop(out);
    let renamed = copied.and_then(|c| dir.rename(&tmp, &name).map(|()| c));
    if renamed.is_err() {
        let _ = dir.remove_file(&tmp);
    }
    renamed.map_err(|e| io::Error::new(e.kind(), format!("`{}`: {e}", root.join(rel).display())))
}

/// Makes `rel` under `root` a symlink whose text is `target` (never followed), replacing a file
/// or a symlink standing there.
pub fn place_symlink(root: &Path, rel: &Path, target: &Path) -> io::Result<()> {
    let (dir, name) = parent_of(root, rel)?;
    let tmp = sibling_name(".", &name, &format!("retrace-place-{}.tmp", std::process::id()));
    dir.remove_file(&tmp)?;
    symlinkat(target, dir.fd(), tmp.as_os_str()).map_err(|e| {
        io::Error::new(
            io::Error::from(e).kind(),
            format!("`{}`: {}", root.join(rel).display(), e.desc()),
        )
    })?;
    dir.rename(&tmp, &name).inspect_err(|_| {
        let _ = dir.remove_file(&tmp);
    })
}

/// Makes the directory `rel` under `root` (and what is missing above it), never through a
/// symlink, and gives it the permission bits `mode` exactly (less set-user-ID and set-group-ID).
pub fn place_dir(root: &Path, rel: &Path, mode: u32) -> io::Result<()> {
    create_dirs_nofollow(root, rel, 0o700)?;
    let fd = open_dir_nofollow(root, &names(rel)?)?;
    fchmod(&fd, Mode::from_bits_truncate(mode & KEPT_MODE)).map_err(|e| {
        io::Error::new(
            io::Error::from(e).kind(),
            format!("`{}`: {}", root.join(rel).display(), e.desc()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn files_symlinks_and_modes_are_placed_without_following_a_symlink() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let r = root.path();
        place_file(r, Path::new("a/b/x.sh"), &mut &b"run"[..], 0o755).unwrap();
        assert_eq!(std::fs::read(r.join("a/b/x.sh")).unwrap(), b"run");
        let mode = std::fs::metadata(r.join("a/b/x.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o755);
        // Replaced in place.
        place_file(r, Path::new("a/b/x.sh"), &mut &b"again"[..], 0o600).unwrap();
        assert_eq!(std::fs::read(r.join("a/b/x.sh")).unwrap(), b"again");
        place_symlink(r, Path::new("link"), outside.path()).unwrap();
        assert_eq!(std::fs::read_link(r.join("link")).unwrap(), outside.path());
        // Never written through.
        assert!(place_file(r, Path::new("link/y"), &mut &b"no"[..], 0o644).is_err());
        assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
        // A file over the symlink replaces the link itself.
        place_file(r, Path::new("link"), &mut &b"file"[..], 0o644).unwrap();
        assert!(std::fs::symlink_metadata(r.join("link")).unwrap().is_file());
        place_dir(r, Path::new("d/e"), 0o750).unwrap();
        let mode = std::fs::metadata(r.join("d/e")).unwrap().permissions().mode();
        assert_eq!(mode & 0o7777, 0o750);
        let left: Vec<_> = std::fs::read_dir(r.join("a/b")).unwrap().flatten().collect();
        assert_eq!(left.len(), 1, "no temp file left");
    }

    #[test]
    fn set_user_and_group_ids_are_never_kept_and_the_sticky_bit_is() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        place_file(r, Path::new("evil"), &mut &b"x"[..], 0o6755).unwrap();
        let mode = |p: &str| std::fs::metadata(r.join(p)).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode("evil"), 0o755);
        place_dir(r, Path::new("shared"), 0o3777).unwrap();
        assert_eq!(mode("shared"), 0o1777);
    }
}
