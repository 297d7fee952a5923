//! Change notification: which paths changed since the last look, so a snapshot re-reads only them.
//!
//! One inotify instance (through `notify`) watches, not recursively, each directory a snapshot
//! walked (ignored directories are never walked, so never watched). Its events arrive in order on
//! one queue, so a look first writes a byte into a barrier file in a watched directory of the
//! store's own (made before that directory is watched, and held open, so that each look makes
//! exactly one event on it and no file is created or removed) and reads events until the
//! barrier's: everything that happened before the look has been read. A
//! look answers "everything" (a full walk) when events were lost (the queue overflowed), the
//! barrier did not come back in time, or watching failed (the watch limit, no inotify): the
//! caller falls back to a full stat walk, which misses nothing.

use std::collections::{BTreeSet, HashSet};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use notify::{Config, Event, EventKindMask, PathOp, RecursiveMode, Watcher};

/// How long a look waits for its barrier before it falls back to a full walk.
const BARRIER_WAIT: Duration = Duration::from_secs(2);

/// What changed since the last look.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dirty {
    /// Anything may have: walk everything (and why).
    All(String),
    /// These absolute paths (files or directories) changed, or were created or removed.
    Paths(BTreeSet<PathBuf>),
}

/// The watcher of one workspace.
pub struct Watch {
    watcher: notify::RecommendedWatcher,
    rx: Receiver<notify::Result<Event>>,
    barrier_dir: PathBuf,
    /// The barrier file, and it open for writing. Each look reads events up to and including its
    /// own write's, so the next barrier event on the queue is always the next look's (a look that
    /// gives up waiting makes the caller walk everything, which starts a new watch and queue).
    barrier: PathBuf,
    barrier_file: std::fs::File,
    watched: HashSet<PathBuf>,
    /// Set when a watch could not be added: every look is `All` until the next full walk.
    broken: Option<String>,
    /// Events came that were lost or out of order: the next look is `All`.
    lost: Option<String>,
    pending: BTreeSet<PathBuf>,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("watched", &self.watched.len())
            .field("broken", &self.broken)
            .finish_non_exhaustive()
    }
}

impl Watch {
    /// Starts watching; `barrier_dir` is a directory of the store's own (outside the workspace
    /// walk) where the barrier file goes.
    pub fn start(barrier_dir: &Path) -> Result<Watch, String> {
        // Made (and earlier versions' numbered barriers removed) before the directory is watched:
        // none of it is an event.
        if let Ok(names) = std::fs::read_dir(barrier_dir) {
            for e in names.flatten() {
                if e.file_name().to_string_lossy().starts_with("barrier-") {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        let barrier = barrier_dir.join("barrier");
        let barrier_file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&barrier)
            .map_err(|e| format!("cannot open the barrier `{}`: {e}", barrier.display()))?;
        let (tx, rx) = channel();
        let config = Config::default().with_event_kinds(EventKindMask::CORE);
        let mut watcher = notify::RecommendedWatcher::new(tx, config).map_err(|e| e.to_string())?;
        watcher
            .watch(barrier_dir, RecursiveMode::NonRecursive)
            .map_err(|e| e.to_string())?;
        Ok(Watch {
            watcher,
            rx,
            barrier_dir: barrier_dir.to_path_buf(),
            barrier,
            barrier_file,
            watched: HashSet::new(),
            broken: None,
            lost: None,
            pending: BTreeSet::new(),
        })
    }

    /// Watches each directory of `dirs` (absolute) not watched yet, all in one request to the
    /// watcher's thread. A failure (the watch limit) leaves watching broken until the next full
    /// walk, and says why once.
    pub fn add_dirs<P: AsRef<Path>>(&mut self, dirs: impl IntoIterator<Item = P>) {
        if self.broken.is_some() {
            return;
        }
        let new: Vec<PathBuf> = dirs
            .into_iter()
            .map(|d| d.as_ref().to_path_buf())
            .filter(|d| !self.watched.contains(d))
            .collect();
        if new.is_empty() {
            return;
        }
        let ops = new.iter().cloned().map(PathOp::watch_non_recursive).collect();
        match self.watcher.update_paths(ops) {
            Ok(()) => self.watched.extend(new),
            Err(e) => {
                let at = e.origin.as_ref().map_or_else(
                    || new[0].display().to_string(),
                    |op| op.as_path().display().to_string(),
                );
                self.broken = Some(format!("cannot watch `{at}`: {}", e.source));
            }
        }
    }

    /// Watches each directory of `dirs` again, even those watched before: a directory removed and
    /// made again under the same name is another one, whose old watch went with the old one.
    pub fn rewatch<P: AsRef<Path>>(&mut self, dirs: impl IntoIterator<Item = P>) {
        let dirs: Vec<P> = dirs.into_iter().collect();
        for d in &dirs {
            self.watched.remove(d.as_ref());
        }
        self.add_dirs(dirs);
    }

    /// Takes the events since the last look as lost (`why`): the next look is `All`.
    pub fn lose(&mut self, why: &str) {
        self.lost = Some(why.to_string());
    }

    /// What changed since the last look.
    pub fn look(&mut self) -> Dirty {
        if let Some(why) = &self.broken {
            return Dirty::All(why.clone());
        }
        if let Err(e) = self.barrier_file.write_at(b"b", 0) {
            return Dirty::All(format!(
                "cannot write the barrier `{}`: {e}",
                self.barrier.display()
            ));
        }
        let deadline = Instant::now() + BARRIER_WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(Ok(ev)) => {
                    if ev.need_rescan() {
                        self.lost = Some("change notification lost events (its queue overflowed)".into());
                        continue;
                    }
                    if ev.paths.iter().any(|p| p == &self.barrier) {
                        break;
                    }
                    let ours = |p: &PathBuf| p.starts_with(&self.barrier_dir);
                    self.pending.extend(ev.paths.into_iter().filter(|p| !ours(p)));
                }
                Ok(Err(e)) => {
                    self.lost = Some(format!("change notification failed: {e}"));
                }
                Err(RecvTimeoutError::Timeout) => {
                    // Its barrier's event may still come: this queue is not read again (the
                    // caller's full walk starts a new watch).
                    self.broken = Some("change notification did not answer in time".into());
                    return Dirty::All("change notification did not answer in time".into());
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.broken = Some("change notification stopped".into());
                    return Dirty::All("change notification stopped".into());
                }
            }
        }
        if let Some(why) = self.lost.take() {
            self.pending.clear();
            return Dirty::All(why);
        }
        Dirty::Paths(std::mem::take(&mut self.pending))
    }
}
