//! Crash-safe file operations of the edit tools, all through [`retrace_fsutil::Fs`] so tests can
//! switch fsync off or inject a crash at any step.
//!
//! - A content write is: a fresh temp file beside the target (unique name, created exclusively, so a
//!   user's own `.x.tmp` is never clobbered), write, set the mode, fsync, rename over the target,
//!   fsync the directory. A crash leaves the old or the new file, and at worst a stray temp file.
//!   The mode is set on the temp file before its fsync, so the new content never appears with the
//!   wrong permissions. Renaming replaces the name: other hard links keep the old content (the
//!   resolver records a `hardlink` gap for such files).
//! - Missing parent directories are created one at a time, each made durable in its parent.
//! - `recheck` compares a file with what the preview read, right before it is written.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{IoContext, Result, ToolError};
use crate::tool::{FileState, PlannedChange};
use crate::workspace::Workspace;

/// The mode of a file the tools create: `0666` less the process's umask, like any program's new
/// file (`0644` under the usual umask `022`, `0600` under `077`).
pub fn new_file_mode() -> u32 {
    static MODE: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *MODE.get_or_init(|| 0o666 & !umask())
}

/// The process's umask, read from `/proc/self/status` (setting it to read it back would race the
/// other threads' file creation); `022` where that cannot be read.
fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

/// Distinguishes the temp files of one process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The number the next temp file of an edit tool in this process will carry (`.<name>.retrace-
/// <pid>-<n>.tmp`). The seam journals it before a call runs, so that recovery after a crash
/// removes exactly the temp files that call made (and never a file that merely looks like one).
pub fn next_temp_number() -> u64 {
    TEMP_COUNTER.load(Ordering::Relaxed)
}

/// Fails with "file changed since it was read" unless `path` is still as `change.seen` says.
pub(crate) fn recheck(change: &PlannedChange, path: &Path) -> Result<()> {
    let shown = change.path.to_lossy();
    let now = FileState::read(path, &shown)?;
    if now != change.seen {
        return Err(ToolError::FileChanged { path: shown });
    }
    Ok(())
}

/// Atomically replaces (or creates) `target` with `bytes`, giving it `mode`.
pub(crate) fn write_atomic(ws: &Workspace, target: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    let fs_ = ws.fs();
    let dir = parent_of(target);
    create_parents(ws, dir)?;
    let (tmp, mut file) = create_temp(ws, target)?;
    let written = (|| -> io::Result<()> {
        fs_.step("write")?;
        file.write_all(bytes)?;
        fs_.step("set_mode")?;
        file.set_permissions(fs::Permissions::from_mode(mode))?;
        fs_.sync_file(&file, "sync_file")?;
        drop(file);
        fs_.rename(&tmp, target)
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e).at("write", target);
    }
    fs_.sync_dir(dir).at("sync directory", dir)
}

/// Creates `dir` and its missing ancestors (mode 0777 less the umask), each made durable.
pub(crate) fn create_parents(ws: &Workspace, dir: &Path) -> Result<()> {
    let mut missing: Vec<&Path> = Vec::new();
    let mut cur = dir;
    loop {
        match fs::symlink_metadata(cur) {
            Ok(m) if m.is_dir() => break,
            Ok(m) if m.file_type().is_symlink() && cur.is_dir() => break,
            Ok(_) => {
                return Err(ToolError::NotADirectory {
                    path: ws.display(cur),
                })
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                missing.push(cur);
                match cur.parent() {
                    Some(p) => cur = p,
                    None => break,
                }
            }
            Err(e) => return Err(e).at("inspect", cur),
        }
    }
    for d in missing.into_iter().rev() {
        ws.fs().step("create_dir").at("create directory", d)?;
        match fs::create_dir(d) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && d.is_dir() => continue,
            Err(e) => return Err(e).at("create directory", d),
        }
        let parent = parent_of(d);
        ws.fs().sync_dir(parent).at("sync directory", parent)?;
    }
    Ok(())
}

/// Removes the entry `path` (a file or a symlink) and makes that durable.
pub(crate) fn remove(ws: &Workspace, path: &Path) -> Result<()> {
    ws.fs().remove_file(path).at("delete", path)?;
    let dir = parent_of(path);
    ws.fs().sync_dir(dir).at("sync directory", dir)
}

/// What [`move_entry`] found at the destination when it refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum MoveOutcome {
    /// The entry now lives at the destination.
    Moved,
    /// Something already exists at the destination; nothing changed.
    DestinationExists,
}

/// Moves the entry `from` to `to` without ever replacing an existing `to`: a hard link (which
/// fails if `to` exists) then removal of `from`; where hard links are not supported, a final
/// existence check and a rename. The destination's directory is made durable before the source
/// is removed, so a crash leaves the file under one name or both, never under none.
pub(crate) fn move_entry(ws: &Workspace, from: &Path, to: &Path) -> Result<MoveOutcome> {
    let fs_ = ws.fs();
    let (from_dir, to_dir) = (parent_of(from), parent_of(to));
    create_parents(ws, to_dir)?;
    fs_.step("link").at("move", from)?;
    match fs::hard_link(from, to) {
        Ok(()) => {
            fs_.sync_dir(to_dir).at("sync directory", to_dir)?;
            fs_.remove_file(from).at("delete", from)?;
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(MoveOutcome::DestinationExists),
        Err(_) => {
            // No hard links here (some file systems): check, then rename.
            if fs::symlink_metadata(to).is_ok() {
                return Ok(MoveOutcome::DestinationExists);
            }
            fs_.rename(from, to).at("move", from)?;
            fs_.sync_dir(to_dir).at("sync directory", to_dir)?;
        }
    }
    if from_dir != to_dir {
        fs_.sync_dir(from_dir).at("sync directory", from_dir)?;
    }
    Ok(MoveOutcome::Moved)
}

/// Creates a unique, empty temp file beside `target` (mode 0600 until its real mode is set).
fn create_temp(ws: &Workspace, target: &Path) -> Result<(PathBuf, fs::File)> {
    let name = target.file_name().unwrap_or_default();
    let dir = parent_of(target);
    let mut last = None;
    for _ in 0..16 {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        // A name recovery recognises (`retrace_fsutil::tool_temp_owner`): after a crash here the
        // next open of the session removes it once this process is gone.
        let tmp = dir.join(retrace_fsutil::tool_temp_name(name, std::process::id(), n));
        ws.fs().step("create_file").at("create", &tmp)?;
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some((tmp, e)),
            Err(e) => return Err(e).at("create", tmp),
        }
    }
    match last {
        Some((tmp, e)) => Err(e).at("create", tmp),
        None => Err(io::Error::other("no temp name available")).at("create", dir),
    }
}

/// The directory holding `path`.
pub(crate) fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use retrace_fsutil::{FaultInjector, Fs};

    #[test]
    fn mode_is_kept_and_no_temp_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let p = ws.root().join("run.sh");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o751)).unwrap();
        write_atomic(&ws, &p, b"new", 0o751).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        assert_eq!(fs::metadata(&p).unwrap().permissions().mode() & 0o7777, 0o751);
        assert_eq!(fs::read_dir(ws.root()).unwrap().count(), 1);
    }

    #[test]
    fn a_crash_at_any_step_leaves_old_or_new() {
        for k in 1..=8 {
            let dir = tempfile::tempdir().unwrap();
            let inj = FaultInjector::crash_at(k);
            let ws = Workspace::new(dir.path())
                .unwrap()
                .with_fs(Fs::without_sync().with_faults(inj.clone()));
            let p = ws.root().join("a/b.txt");
            let _ = write_atomic(&ws, &p, b"new", 0o644);
            match fs::read(&p) {
                Ok(b) => assert_eq!(b, b"new", "step {k}"),
                Err(e) => assert_eq!(e.kind(), io::ErrorKind::NotFound, "step {k}"),
            }
        }
    }

    #[test]
    fn move_refuses_an_existing_destination() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let (a, b) = (ws.root().join("a"), ws.root().join("b"));
        fs::write(&a, "a").unwrap();
        fs::write(&b, "b").unwrap();
        assert_eq!(move_entry(&ws, &a, &b).unwrap(), MoveOutcome::DestinationExists);
        assert_eq!(fs::read(&a).unwrap(), b"a");
        assert_eq!(fs::read(&b).unwrap(), b"b");
        let c = ws.root().join("x/y/c");
        assert_eq!(move_entry(&ws, &a, &c).unwrap(), MoveOutcome::Moved);
        assert!(!a.exists());
        assert_eq!(fs::read(&c).unwrap(), b"a");
    }
}
