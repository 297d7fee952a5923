//! Opening a file for reading without ever blocking: `O_NONBLOCK` first, the type from `fstat`
//! after. A plain `open(2)` of a FIFO waits for a writer forever, and a path can become a FIFO
//! between any check and the open; with `O_NONBLOCK` the open returns at once, and the caller sees
//! from the metadata that it is not a regular file. Reads of a regular file ignore the flag.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// `path` opened read-only and non-blocking, with the metadata of what was opened (not of what the
/// path named a moment before). Symlinks are followed. A path longer than the kernel takes in one
/// call (`PATH_MAX`: a restore's temp file beside a file whose path is near it) is opened a piece
/// at a time ([`open_long`]).
pub fn open_read(path: &Path) -> io::Result<(File, Metadata)> {
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
    {
        Err(e) if e.raw_os_error() == Some(libc::ENAMETOOLONG) => open_long(path)?,
        opened => opened?,
    };
    let meta = file.metadata()?;
    Ok((file, meta))
}

/// The most bytes of a path opened in one call by [`open_long`].
const PIECE: usize = 2048;

/// `path` opened read-only and non-blocking a piece at a time: each piece whole components,
/// at most [`PIECE`] bytes, looked up from the directory the piece before it opened, so every
/// component is resolved (symlinks followed, `..` taken) as one call would resolve it.
fn open_long(path: &Path) -> io::Result<File> {
    use nix::fcntl::{open, openat, OFlag};
    use nix::sys::stat::Mode;
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let too_long = || io::Error::from_raw_os_error(libc::ENAMETOOLONG);
    let bytes = path.as_os_str().as_bytes();
    let mut pieces: Vec<&[u8]> = Vec::new();
    let mut start = 0;
    while bytes.len() - start > PIECE {
        let cut = bytes[start..start + PIECE]
            .iter()
            .rposition(|b| *b == b'/')
            .filter(|i| *i > 0)
            .ok_or_else(too_long)?;
        pieces.push(&bytes[start..start + cut]);
        start += cut + 1;
    }
    let last = &bytes[start..];
    let dir = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let mut held = None;
    for piece in pieces {
        let piece = OsStr::from_bytes(piece);
        held = Some(match &held {
            None => open(piece, dir, Mode::empty())?,
            Some(at) => openat(at, piece, dir, Mode::empty())?,
        });
    }
    let at = held.ok_or_else(too_long)?;
    let flags = OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
    Ok(File::from(openat(
        &at,
        OsStr::from_bytes(last),
        flags,
        Mode::empty(),
    )?))
}

/// `path` opened read-only and non-blocking if it is a regular file; an error of kind
/// `InvalidInput` naming what it is otherwise (a directory, a FIFO, a socket, a device).
pub fn open_regular(path: &Path) -> io::Result<(File, Metadata)> {
    let (file, meta) = open_read(path)?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file ({})", kind_of(&meta)),
        ));
    }
    Ok((file, meta))
}

/// [`open_regular`], but a symlink as the last component is not followed: it is an error (`ELOOP`
/// from the kernel), as anything but a regular file is.
pub fn open_regular_nofollow(path: &Path) -> io::Result<(File, Metadata)> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file ({})", kind_of(&meta)),
        ));
    }
    Ok((file, meta))
}

/// The whole of the regular file at `path`, read without ever blocking on what is there: a FIFO,
/// socket or device is an `InvalidInput` error naming what it is (symlinks are followed).
pub fn read_regular(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let (mut file, meta) = open_regular(path)?;
    let mut out = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut out)?;
    Ok(out)
}

/// [`read_regular`] as UTF-8 text (`InvalidData` when it is not).
pub fn read_regular_string(path: &Path) -> io::Result<String> {
    String::from_utf8(read_regular(path)?).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// What a non-regular file is, in words.
pub fn kind_of(meta: &Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else if t.is_symlink() {
        "a symlink"
    } else if t.is_file() {
        "a regular file"
    } else {
        "a special file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn a_fifo_opens_at_once_and_says_what_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("p");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let (_, meta) = open_read(&fifo).unwrap();
        assert_eq!(kind_of(&meta), "a FIFO");
        let e = open_regular(&fifo).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("FIFO"), "{e}");
        let e = open_regular(dir.path()).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
        std::fs::write(dir.path().join("f"), b"bytes").unwrap();
        let (mut f, meta) = open_regular(&dir.path().join("f")).unwrap();
        assert!(meta.is_file());
        let mut s = String::new();
        f.read_to_string(&mut s).unwrap();
        assert_eq!(s, "bytes");
    }

    /// A path past `PATH_MAX` (a restore's temp file beside a file whose path is near it) opens,
    /// and reads what is there; the fsync barrier takes it too.
    #[test]
    fn a_path_longer_than_the_kernel_takes_at_once_opens_a_piece_at_a_time() {
        use nix::fcntl::{open, openat, OFlag};
        use nix::sys::stat::{mkdirat, Mode};
        let tmp = tempfile::tempdir().unwrap();
        let name = "d".repeat(200);
        let mut at = open(tmp.path(), OFlag::O_DIRECTORY | OFlag::O_RDONLY, Mode::empty()).unwrap();
        let mut abs = tmp.path().to_path_buf();
        for _ in 0..22 {
            mkdirat(&at, name.as_str(), Mode::from_bits_truncate(0o700)).unwrap();
            at = openat(
                &at,
                name.as_str(),
                OFlag::O_DIRECTORY | OFlag::O_RDONLY,
                Mode::empty(),
            )
            .unwrap();
            abs.push(&name);
        }
        let f = openat(
            &at,
            "f",
            OFlag::O_CREAT | OFlag::O_WRONLY,
            Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        std::io::Write::write_all(&mut std::fs::File::from(f), b"deep\n").unwrap();
        abs.push("f");
        assert!(abs.as_os_str().len() > 4096);
        let err = std::fs::File::open(&abs).unwrap_err();
        assert_eq!(
            err.raw_os_error(),
            Some(libc::ENAMETOOLONG),
            "the kernel alone refuses it"
        );
        let (mut file, meta) = open_read(&abs).unwrap();
        assert!(meta.is_file());
        let mut got = String::new();
        file.read_to_string(&mut got).unwrap();
        assert_eq!(got, "deep\n");
        crate::Fs::durable()
            .sync_paths(&[(abs.as_path(), "sync_temp"), (abs.parent().unwrap(), "sync_dir")])
            .unwrap();
        let missing = abs.with_file_name("missing");
        assert_eq!(open_read(&missing).unwrap_err().kind(), io::ErrorKind::NotFound);
    }
}
