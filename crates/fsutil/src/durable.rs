//! The durable-write layer with optional fsync and injectable crashes.
//!
//! Every operation that changes durable state calls [`Fs::step`] first. With a [`FaultInjector`]
//! attached, the k-th step fails and so does every step after it, which is how a test simulates a
//! process that died exactly there: it then drops the store, reopens it with a healthy `Fs`, and checks
//! that recovery finds the old or the new state.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::fault::FaultInjector;

/// Mode of every directory Retrace creates: before-images can hold secrets.
pub const PRIVATE_DIR_MODE: u32 = 0o700;
/// Mode of every file Retrace creates in its own stores.
pub const PRIVATE_FILE_MODE: u32 = 0o600;
/// Most fsyncs [`Fs::sync_paths`] runs at once (they wait on the disk, not on a core).
pub const SYNC_THREADS: usize = 16;

/// Up to this many paths, [`Fs::sync_paths`] fsyncs them on the calling thread.
const SMALL_BATCH: usize = 4;

/// The durable-write layer. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Fs {
    sync: bool,
    faults: Option<Arc<FaultInjector>>,
}

impl Default for Fs {
    fn default() -> Self {
        Fs::durable()
    }
}

impl Fs {
    /// The production layer: every durable step is fsynced.
    pub fn durable() -> Fs {
        Fs {
            sync: true,
            faults: None,
        }
    }

    /// A layer for tests that skips fsync (ordering is kept; power-loss durability is not).
    pub fn without_sync() -> Fs {
        Fs {
            sync: false,
            faults: None,
        }
    }

    /// This layer with a fault injector attached.
    pub fn with_faults(mut self, faults: Arc<FaultInjector>) -> Fs {
        self.faults = Some(faults);
        self
    }

    /// Whether fsync is issued.
    pub fn syncs(&self) -> bool {
        self.sync
    }

    /// A failpoint: fails when the injector says the process dies here.
    pub fn step(&self, label: &str) -> io::Result<()> {
        match &self.faults {
            Some(f) => f.step(label),
            None => Ok(()),
        }
    }

    /// fsync of an open file (data and metadata).
    pub fn sync_file(&self, file: &File, label: &str) -> io::Result<()> {
        self.step(label)?;
        if self.sync {
            file.sync_all()?;
        }
        Ok(())
    }

    /// fdatasync of an open file: its data and what reading it back needs (its size), not its
    /// times. What an append to a file that exists needs.
    pub fn sync_data(&self, file: &File, label: &str) -> io::Result<()> {
        self.step(label)?;
        if self.sync {
            file.sync_data()?;
        }
        Ok(())
    }

    /// fsync of a directory, making the entries created or renamed in it durable.
    pub fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.step("sync_dir")?;
        if self.sync {
            crate::open_read(dir)?.0.sync_all()?;
        }
        Ok(())
    }

    /// Starts fsyncing `files` on a pool thread and returns at once; [`Syncing::join`] waits for the
    /// result (the first path that failed). Every file's failpoint (`label`) is passed first, in
    /// order, on this thread, so a fault-injection trail does not depend on thread timing, and a
    /// crash there starts nothing. The caller does other work meanwhile (writing a record that will
    /// reference the files, not yet published) and joins before publishing anything.
    pub fn sync_files_later(
        &self,
        files: &[(&File, &Path)],
        label: &str,
    ) -> Result<Syncing, (PathBuf, io::Error)> {
        for (_, p) in files {
            self.step(label).map_err(|e| (p.to_path_buf(), e))?;
        }
        if !self.sync || files.is_empty() {
            return Ok(Syncing(SyncingState::Done(Ok(()))));
        }
        // The helper gets its own handles (dup'd descriptors of the same files) and paths.
        let owned: io::Result<Vec<(File, PathBuf)>> = files
            .iter()
            .map(|(f, p)| f.try_clone().map(|c| (c, p.to_path_buf())))
            .collect();
        let syncs = move |owned: Vec<(File, PathBuf)>| -> Result<(), (PathBuf, io::Error)> {
            for (f, p) in &owned {
                f.sync_all().map_err(|e| (p.clone(), e))?;
            }
            Ok(())
        };
        match owned {
            Ok(owned) => Ok(Syncing(SyncingState::Running(crate::pool::run(move || {
                syncs(owned)
            })))),
            // No descriptor to spare: the same fsyncs, here and now.
            Err(_) => {
                let done = files
                    .iter()
                    .try_for_each(|(f, p)| f.sync_all().map_err(|e| (p.to_path_buf(), e)));
                Ok(Syncing(SyncingState::Done(done)))
            }
        }
    }

    /// fsync of many files and directories, named by path, as one barrier: what a batch of new files
    /// costs once rather than per file. Every failpoint (each entry's label) is passed first, in
    /// order, on this thread, so a fault-injection trail does not depend on thread timing; then the
    /// fsyncs run on up to [`SYNC_THREADS`] pool threads at once (a handful run here, in order).
    /// Concurrent fsyncs overlap on the disk (and, on a journaling file system, share journal
    /// commits), where one after another each pays its own write and cache flush.
    /// Returns once all are done; a failed one gives its path (the first in `paths`' order).
    pub fn sync_paths(&self, paths: &[(&Path, &str)]) -> Result<(), (PathBuf, io::Error)> {
        for (p, label) in paths {
            self.step(label).map_err(|e| (p.to_path_buf(), e))?;
        }
        if !self.sync {
            return Ok(());
        }
        // Opened without blocking: a FIFO at a synced path is an error, never a wait.
        let one = |p: &Path| crate::open_read(p).and_then(|(f, _)| f.sync_all());
        // A handful of fsyncs run here, one after another: a thread costs about as much as the
        // commit it could share (BENCHMARKS.md), and after the first, the others mostly find their
        // changes committed already.
        let threads = if paths.len() <= SMALL_BATCH {
            1
        } else {
            paths.len().min(SYNC_THREADS)
        };
        if threads <= 1 {
            for (p, _) in paths {
                one(p).map_err(|e| (p.to_path_buf(), e))?;
            }
            return Ok(());
        }
        // Pool threads (and this one) take the next path until none is left.
        type Failed = Mutex<Option<(usize, PathBuf, io::Error)>>;
        let shared: Arc<(Vec<PathBuf>, AtomicUsize, Failed)> = Arc::new((
            paths.iter().map(|(p, _)| p.to_path_buf()).collect(),
            AtomicUsize::new(0),
            Mutex::new(None),
        ));
        let work = |shared: &(Vec<PathBuf>, AtomicUsize, Failed)| loop {
            let (paths, next, failed) = shared;
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(p) = paths.get(i) else { break };
            if let Err(e) = crate::open_read(p).and_then(|(f, _)| f.sync_all()) {
                if let Ok(mut f) = failed.lock() {
                    if f.as_ref().is_none_or(|(j, _, _)| i < *j) {
                        *f = Some((i, p.clone(), e));
                    }
                }
            }
        };
        let helpers: Vec<crate::pool::Task<()>> = (1..threads)
            .map(|_| {
                let shared = Arc::clone(&shared);
                crate::pool::run(move || work(&shared))
            })
            .collect();
        work(&shared);
        for h in helpers {
            // A helper that panicked left its path unsynced and unreported: report it.
            if h.join().is_none() {
                return Err((PathBuf::new(), io::Error::other("an fsync thread panicked")));
            }
        }
        let failed = shared.2.lock().map(|mut f| f.take());
        match failed {
            Ok(None) => Ok(()),
            Ok(Some((_, p, e))) => Err((p, e)),
            Err(_) => Err((PathBuf::new(), io::Error::other("an fsync thread panicked"))),
        }
    }

    /// Creates `dir` and its missing parents with mode 0700, durably: each new directory's entry
    /// is fsynced in its parent before this returns (a crash cannot lose a directory that a record
    /// written next relies on).
    pub fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        for made in self.create_dir_all_unsynced(dir)? {
            self.sync_dir(parent_of(&made))?;
        }
        Ok(())
    }

    /// Creates `dir` and its missing parents with mode 0700 and returns the directories it made,
    /// outermost first, without syncing their entries: the caller syncs each one's parent in its
    /// own barrier.
    pub fn create_dir_all_unsynced(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        if dir.is_dir() {
            return Ok(Vec::new());
        }
        let mut missing = Vec::new();
        let mut d = dir;
        while !d.is_dir() {
            missing.push(d);
            match d.parent() {
                Some(p) if !p.as_os_str().is_empty() => d = p,
                _ => break,
            }
        }
        self.step("create_dir")?;
        let mut made = Vec::new();
        for m in missing.iter().rev() {
            match fs::DirBuilder::new().mode(PRIVATE_DIR_MODE).create(m) {
                Ok(()) => made.push(m.to_path_buf()),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && m.is_dir() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(made)
    }

    /// Creates (or truncates) `path` with mode 0600 for writing. Nothing is durable until synced.
    pub fn create_file(&self, path: &Path) -> io::Result<File> {
        self.step("create_file")?;
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(PRIVATE_FILE_MODE)
            .open(path)
    }

    /// Writes `bytes` to a fresh file at `path` (0600) and fsyncs it. The directory entry is not
    /// synced: the caller publishes it with [`Fs::sync_dir`], usually once for a batch.
    pub fn write_unpublished(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let mut f = self.create_file(path)?;
        self.step("write")?;
        f.write_all(bytes)?;
        self.sync_file(&f, "sync_file")
    }

    /// Writes `bytes` to a fresh file at `path` (0600) without syncing it: the caller syncs a batch of
    /// such files at once ([`Fs::sync_paths`]) before publishing any of them.
    pub fn write_unsynced(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let f = self.create_file(path)?;
        self.write_all(&f, bytes)
    }

    /// Writes `bytes` to `file` (just made by [`Fs::create_file`]) and starts its writeback
    /// ([`Fs::start_writeback`]); the caller fsyncs it.
    pub fn write_all(&self, mut file: &File, bytes: &[u8]) -> io::Result<()> {
        self.step("write")?;
        file.write_all(bytes)?;
        self.start_writeback(file);
        Ok(())
    }

    /// Asks the kernel to start writing `file`'s dirty pages out now, without waiting for them
    /// (Linux: `sync_file_range(SYNC_FILE_RANGE_WRITE)`). The fsync that follows then finds the data
    /// on its way (and, on a journaling file system, a new file's blocks are allocated in the
    /// transaction that the next fsync commits, so a batch of new files can share one commit). Best
    /// effort and never a durability step: an error (or another OS) changes only the speed.
    pub fn start_writeback(&self, file: &File) {
        if self.sync {
            start_writeback(file);
        }
    }

    /// Renames `from` to `to` (atomic replace on the same file system).
    pub fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.step("rename")?;
        fs::rename(from, to)
    }

    /// Removes a file; a missing file is not an error.
    pub fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.step("remove_file")?;
        match fs::remove_file(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    /// Removes a directory tree; a missing directory is not an error.
    pub fn remove_dir_all(&self, path: &Path) -> io::Result<()> {
        self.step("remove_dir_all")?;
        match fs::remove_dir_all(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    /// Atomically replaces `path` with `bytes`: temp file beside it, write, fsync, rename, fsync the
    /// directory. A crash leaves the old or the new content, never a mix.
    pub fn write_atomic(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let tmp = temp_sibling(path);
        self.write_unpublished(&tmp, bytes)?;
        if let Err(e) = self.rename(&tmp, path) {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        self.sync_dir(parent_of(path))
    }

    /// Atomically replaces each `(path, bytes)` as one batch: every temp file beside its target
    /// written first, then all of them fsynced ([`Fs::sync_paths`]), then each renamed over its
    /// target in order. The directories are left to the caller, who syncs each once. On failure the
    /// temp files are removed and the error names the target (a failed rename leaves the earlier
    /// targets replaced).
    pub fn replace_all(&self, files: &[(&Path, &[u8])]) -> Result<(), (PathBuf, io::Error)> {
        let temps: Vec<PathBuf> = files.iter().map(|(p, _)| temp_sibling(p)).collect();
        let cleanup = || {
            for t in &temps {
                let _ = fs::remove_file(t);
            }
        };
        let written = files.iter().zip(&temps).try_for_each(|((path, bytes), tmp)| {
            self.write_unsynced(tmp, bytes)
                .map_err(|e| (path.to_path_buf(), e))
        });
        let synced = written.and_then(|()| {
            let batch: Vec<(&Path, &str)> = temps.iter().map(|t| (t.as_path(), "sync_file")).collect();
            self.sync_paths(&batch)
        });
        if let Err(e) = synced {
            cleanup();
            return Err(e);
        }
        for ((path, _), tmp) in files.iter().zip(&temps) {
            if let Err(e) = self.rename(tmp, path) {
                cleanup();
                return Err((path.to_path_buf(), e));
            }
        }
        Ok(())
    }

    /// Sets the permission bits of `path`.
    pub fn set_mode(&self, path: &Path, mode: u32) -> io::Result<()> {
        self.step("set_mode")?;
        fs::set_permissions(path, fs::Permissions::from_mode(mode))
    }
}

/// fsyncs in flight ([`Fs::sync_files_later`]).
#[must_use = "the files are durable only once joined"]
pub struct Syncing(SyncingState);

enum SyncingState {
    Running(crate::pool::Task<Result<(), (PathBuf, io::Error)>>),
    Done(Result<(), (PathBuf, io::Error)>),
}

impl Syncing {
    /// Waits for the fsyncs: the first path that failed, if any.
    pub fn join(self) -> Result<(), (PathBuf, io::Error)> {
        match self.0 {
            SyncingState::Done(r) => r,
            SyncingState::Running(task) => task
                .join()
                .unwrap_or_else(|| Err((PathBuf::new(), io::Error::other("the fsync thread panicked")))),
        }
    }
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn start_writeback(file: &File) {
    use std::os::fd::AsRawFd;
    // SAFETY: `sync_file_range` takes a file descriptor and integers, no pointers; the descriptor is
    // borrowed from `file`, which outlives the call. It only schedules I/O, and its result is
    // deliberately ignored (see `Fs::start_writeback`).
    let _ = unsafe { libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_file: &File) {}

/// The temp name used for an atomic replace of `path`: `.<name>.tmp` in the same directory.
pub fn temp_sibling(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default();
    parent_of(path).join(crate::names::sibling_name(".", name, "tmp"))
}

fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        let fs_ = Fs::durable();
        fs_.write_atomic(&p, b"one").unwrap();
        fs_.write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, PRIVATE_FILE_MODE);
    }

    #[test]
    fn syncing_later_passes_the_failpoints_first_then_syncs_on_a_helper() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        let (fa, fb) = (
            Fs::durable().create_file(&a).unwrap(),
            Fs::durable().create_file(&b).unwrap(),
        );
        for fs_ in [Fs::durable(), Fs::without_sync()] {
            let inj = FaultInjector::crash_at(0);
            let fs_ = fs_.with_faults(inj.clone());
            let files = [(&fa, a.as_path()), (&fb, b.as_path())];
            let syncing = fs_.sync_files_later(&files, "sync_payload").unwrap();
            fs_.write_unpublished(&dir.path().join("c"), b"c").unwrap();
            syncing.join().unwrap();
            // The failpoints come first and in order, whatever the helper does when.
            assert_eq!(
                inj.trail(),
                [
                    "sync_payload",
                    "sync_payload",
                    "create_file",
                    "write",
                    "sync_file"
                ]
            );
        }
        // A crash at a failpoint: nothing is started, and the path is given.
        let inj = FaultInjector::crash_at(2);
        let fs_ = Fs::durable().with_faults(inj.clone());
        let err = fs_
            .sync_files_later(&[(&fa, a.as_path()), (&fb, b.as_path())], "sync_payload")
            .err()
            .unwrap();
        assert_eq!(err.0, b);
        assert!(inj.crashed());
    }

    #[test]
    fn a_path_barrier_passes_its_failpoints_in_order_then_syncs() {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<PathBuf> = (0..40).map(|i| dir.path().join(format!("f{i}"))).collect();
        for f in &files {
            fs::write(f, b"x").unwrap();
        }
        let mut batch: Vec<(&Path, &str)> = files.iter().map(|f| (f.as_path(), "sync_temp")).collect();
        batch.push((dir.path(), "sync_dir"));
        for fs_ in [Fs::durable(), Fs::without_sync()] {
            let inj = FaultInjector::crash_at(0);
            fs_.with_faults(inj.clone()).sync_paths(&batch).unwrap();
            let mut want = vec!["sync_temp".to_string(); 40];
            want.push("sync_dir".into());
            assert_eq!(inj.trail(), want);
        }
        // A crash inside the barrier: nothing after it is synced, and the path is given.
        let inj = FaultInjector::crash_at(3);
        let err = Fs::durable().with_faults(inj).sync_paths(&batch).unwrap_err();
        assert_eq!(err.0, files[2]);
        // A failed fsync gives its path (the first in order).
        let gone = dir.path().join("gone");
        let err = Fs::durable()
            .sync_paths(&[(files[0].as_path(), "a"), (&gone, "b"), (dir.path(), "c")])
            .unwrap_err();
        assert_eq!(err.0, gone);
    }

    #[test]
    fn injector_fails_at_k_and_after() {
        let dir = tempfile::tempdir().unwrap();
        let inj = FaultInjector::crash_at(2);
        let fs_ = Fs::without_sync().with_faults(inj.clone());
        let p = dir.path().join("x");
        // step 1: create_file; step 2: write -> crash.
        assert!(fs_.write_unpublished(&p, b"x").is_err());
        assert!(inj.crashed());
        assert!(fs_.rename(&p, &dir.path().join("y")).is_err());
        assert_eq!(inj.trail()[..2], ["create_file".to_string(), "write".to_string()]);
    }
}
