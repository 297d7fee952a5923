//! The writer lease: one process writes a session at a time (SPEC §6).
//!
//! `<id>.lease` is opened in place (created if missing, never truncated on open, never replaced or
//! deleted) and locked with `flock(LOCK_EX | LOCK_NB)` through [`File::try_lock`]. The log
//! `<id>.jsonl` is locked the same way as well, once it exists: a lease file can be removed while
//! it is held (a clean-up of lock files that look stale), and a second writer would then lock a new
//! one, but the log is the file every writer appends to, so its lock cannot be lost that way. A log
//! replaced between opening and locking (a repair renames a new one in) is opened again, so the
//! lock is always on the file a writer appends to, and before every append the writer checks that
//! the log's name still leads to the file it locked (a log removed or replaced under it fails the
//! append, naming the log, and nothing more goes to the old file). The kernel drops both locks
//! when the holder's files are closed, which includes the process dying by SIGKILL: there is no
//! stale lease to break.
//! After locking both, the holder writes its pid, host and start time into the lease file
//! (truncate, then write), for the error a second writer shows; the content is a message, never
//! the lock itself, so it needs no fsync. When the lease file was removed, that error names the
//! holder of the log's lock from `/proc/locks`. Readers take no lease.
//!
//! What it trades away: `flock` is advisory and, on some network file systems, local to one host.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use retrace_fsutil::PRIVATE_FILE_MODE;
use serde::{Deserialize, Serialize};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::error::{IoContext, Result, SessionError};
use crate::ids::SessionId;

/// Who holds a lease, as written into the lease file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// The holder's process id.
    pub pid: u32,
    /// The host it runs on.
    pub host: String,
    /// When it took the lease (RFC 3339).
    pub started_at: String,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pid {} on host {} since {}",
            self.pid, self.host, self.started_at
        )
    }
}

impl Holder {
    /// Whether this process holds the lease (its pid, on this host).
    pub fn is_this_process(&self) -> bool {
        self.pid == std::process::id() && self.host == host_name()
    }

    /// Whether it runs on this host.
    pub fn is_this_host(&self) -> bool {
        self.host == host_name()
    }
}

/// A held writer lease; dropping it releases the lock.
#[derive(Debug)]
pub struct Lease {
    file: File,
    path: PathBuf,
    /// The session's log, locked too (`None` until the log exists).
    log: Option<File>,
}

/// How often a held lease is tried again (10 ms apart) before it is reported held.
const LOCK_TRIES: u32 = 25;

/// How often a log replaced between opening and locking is opened again before giving up.
const LOCK_LOG_TRIES: usize = 8;

/// The lease file of session `id` in `dir`.
pub fn lease_path(dir: &Path, id: &SessionId) -> PathBuf {
    dir.join(format!("{id}.lease"))
}

impl Lease {
    /// Takes the writer lease of session `id` in `dir` — the lease file's lock, and the log's when
    /// the log exists — or fails with [`SessionError::Held`] naming the holder.
    pub fn acquire(dir: &Path, id: &SessionId) -> Result<Lease> {
        let path = lease_path(dir, id);
        // Never through a symlink, never blocking on a FIFO: the holder is written into this file,
        // and a symlink planted here would have that write empty a file elsewhere.
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(PRIVATE_FILE_MODE)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&path)
            .at("open the lease", &path)?;
        let meta = file.metadata().at("open the lease", &path)?;
        if !meta.is_file() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "not a regular file ({}); remove it",
                    retrace_fsutil::kind_of(&meta)
                ),
            ))
            .at("open the lease", &path);
        }
        // A lock held for a moment longer than its writer (by a child forked meanwhile, until it
        // execs) is waited out: a few tries over about a quarter of a second.
        let mut tries = 0;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) if tries < LOCK_TRIES => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(SessionError::Held {
                        id: id.clone(),
                        holder: describe_holder(&path),
                        path,
                    })
                }
                Err(TryLockError::Error(e)) => return Err(e).at("lock", &path),
            }
        }
        let log = crate::log::log_path(dir, id);
        let log = match lock_log(id, &path, &log)? {
            Locked::Yes(f) => Some(f),
            Locked::NoLog => None,
        };
        let holder = Holder {
            pid: std::process::id(),
            host: host_name(),
            started_at: OffsetDateTime::now_utc().format(&Rfc3339).unwrap_or_default(),
        };
        let mut text = serde_json::to_vec(&holder)?;
        text.push(b'\n');
        file.set_len(0).at("write the holder into", &path)?;
        file.write_all(&text).at("write the holder into", &path)?;
        Ok(Lease { file, path, log })
    }

    /// Locks the log at `log` as well, for a lease taken before its session's log existed (a new
    /// session's log is written after its lease is taken). Fails with [`SessionError::Held`] when
    /// another process locks it.
    pub(crate) fn lock_log(&mut self, id: &SessionId, log: &Path) -> Result<()> {
        if let Locked::Yes(f) = lock_log(id, &self.path, log)? {
            self.log = Some(f);
        }
        Ok(())
    }

    /// The lease file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Who holds the lease of session `id` now, as its file says; `None` when it is free.
    pub fn holder(dir: &Path, id: &SessionId) -> Result<Option<Holder>> {
        let path = lease_path(dir, id);
        match retrace_fsutil::open_regular(&path).map(|(f, _)| f) {
            Ok(file) => match file.try_lock_shared() {
                Ok(()) => {}
                // A lock with no holder written may be a writer that let go, whose lock lives on
                // for a moment in a child forked meanwhile (until it execs): the log's lock says.
                Err(TryLockError::WouldBlock) => {
                    if let Some(h) = read_holder(&path) {
                        return Ok(Some(h));
                    }
                }
                Err(TryLockError::Error(e)) => return Err(e).at("lock", &path),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).at("open the lease", &path),
        }
        // The lease file may have been removed (and made again) while its holder lives: the log's
        // lock says so.
        let log = crate::log::log_path(dir, id);
        let Ok((file, meta)) = retrace_fsutil::open_regular_nofollow(&log) else {
            return Ok(None);
        };
        match file.try_lock_shared() {
            Err(TryLockError::WouldBlock) => Ok(Some(Holder {
                pid: log_lock_holder(&meta).unwrap_or(0),
                host: host_name(),
                started_at: "unknown (its lease file was removed)".to_string(),
            })),
            _ => Ok(None),
        }
    }
}

/// What [`lock_log`] found.
enum Locked {
    /// The log, locked.
    Yes(File),
    /// There is no log yet.
    NoLog,
}

/// Locks the log at `log` exclusively, never blocking, and makes sure the file locked is the one
/// the name leads to now (a log replaced between opening and locking is opened again).
fn lock_log(id: &SessionId, lease: &Path, log: &Path) -> Result<Locked> {
    for _ in 0..LOCK_LOG_TRIES {
        // Never through a symlink, never blocking on a FIFO.
        let (file, meta) = match retrace_fsutil::open_regular_nofollow(log) {
            Ok(f) => f,
            // No log yet; or one no writer can use (a symlink, a FIFO, a directory, unreadable),
            // which the lease alone guards, as before the log was locked: the session can still be
            // deleted.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound
                        | std::io::ErrorKind::InvalidInput
                        | std::io::ErrorKind::PermissionDenied
                ) || e.raw_os_error() == Some(libc::ELOOP) =>
            {
                return Ok(Locked::NoLog)
            }
            Err(e) => return Err(e).at("open the log", log),
        };
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let holder = match log_lock_holder(&meta) {
                    Some(pid) => format!(
                        "pid {pid} on host {}, which locks the log `{}`; its lease file was removed while it was held",
                        host_name(),
                        log.display()
                    ),
                    None => format!(
                        "holder unknown: a process locks the log `{}`",
                        log.display()
                    ),
                };
                return Err(SessionError::Held {
                    id: id.clone(),
                    holder,
                    path: lease.to_path_buf(),
                });
            }
            Err(TryLockError::Error(e)) => return Err(e).at("lock", log),
        }
        match std::fs::symlink_metadata(log) {
            Ok(now) if now.dev() == meta.dev() && now.ino() == meta.ino() => return Ok(Locked::Yes(file)),
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).at("read", log),
        }
    }
    Err(std::io::Error::other(
        "it was replaced again and again while it was being locked",
    ))
    .at("lock", log)
}

/// The process holding an exclusive `flock` on the file of `meta`, as `/proc/locks` lists it
/// (Linux; `None` elsewhere or when it is not listed).
fn log_lock_holder(meta: &std::fs::Metadata) -> Option<u32> {
    let text = fs::read_to_string("/proc/locks").ok()?;
    text.lines().find_map(|line| {
        // `1: FLOCK  ADVISORY  WRITE 1234 fe:00:5309070 0 EOF`; waiters have `->` after the number.
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 6 || f[1] != "FLOCK" || f[3] != "WRITE" {
            return None;
        }
        // `MAJ:MIN:INODE`, the device numbers in hex: the inode alone may be another file system's.
        let mut id = f[5].split(':');
        let major = u32::from_str_radix(id.next()?, 16).ok()?;
        let minor = u32::from_str_radix(id.next()?, 16).ok()?;
        let ino: u64 = id.next()?.parse().ok()?;
        let pid: u32 = f[4].parse().ok()?;
        let dev = meta.dev();
        (ino == meta.ino() && major == libc::major(dev) && minor == libc::minor(dev)).then_some(pid)
    })
}

impl Drop for Lease {
    fn drop(&mut self) {
        // Still locked here: clear the message so the file does not name a process that let go.
        let _ = self.file.set_len(0);
    }
}

fn read_holder(path: &Path) -> Option<Holder> {
    let text = retrace_fsutil::read_regular_string(path).ok()?;
    serde_json::from_str(text.trim()).ok()
}

fn describe_holder(path: &Path) -> String {
    if let Some(h) = read_holder(path) {
        return h.to_string();
    }
    match retrace_fsutil::read_regular_string(path) {
        Ok(t) if !t.trim().is_empty() => {
            format!(
                "holder unknown: {}",
                t.trim().chars().take(200).collect::<String>()
            )
        }
        _ => "holder unknown: it has not written its name yet".to_string(),
    }
}

/// This machine's host name (`/proc/sys/kernel/hostname`, then `/etc/hostname`, then `$HOSTNAME`).
pub(crate) fn host_name() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| fs::read_to_string(p).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lease_in_the_same_process_is_refused_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let id = SessionId::new("s");
        let first = Lease::acquire(dir.path(), &id).unwrap();
        let holder = Lease::holder(dir.path(), &id).unwrap().unwrap();
        assert_eq!(holder.pid, std::process::id());
        assert!(holder.is_this_process() && holder.is_this_host());
        let err = Lease::acquire(dir.path(), &id).unwrap_err();
        let text = err.to_string();
        assert!(text.contains(&format!("pid {}", std::process::id())), "{text}");
        assert!(text.contains("s.lease"), "{text}");
        let ino = std::os::unix::fs::MetadataExt::ino(&fs::metadata(first.path()).unwrap());
        drop(first);
        assert_eq!(Lease::holder(dir.path(), &id).unwrap(), None);
        let again = Lease::acquire(dir.path(), &id).unwrap();
        let ino2 = std::os::unix::fs::MetadataExt::ino(&fs::metadata(again.path()).unwrap());
        assert_eq!(ino, ino2, "the lease file is opened in place, never replaced");
    }
}
