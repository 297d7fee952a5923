//! Retrace's side: the real checkpoint store, with its production durability (fsync on).
//!
//! A turn is what the agent's capture seam does around an edit tool (SPEC §4): `begin_turn`, then
//! `capture_before` of the previewed paths (durable before the edit), the edit itself, then
//! `capture_after`. A rewind is `plan_restore` + `commit` with the default `refuse` choice: every
//! file is checked against Retrace's ownership proof, and the transaction is durable.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use retrace_checkpoint::{
    BeginTurn, Change, CheckpointError, CheckpointStore, CommitOptions, Limits, StoreOptions,
};
use retrace_fsutil::{FaultInjector, Fs};
use retrace_protocol::{ChangeKind, CodeOutcome, Conflict, OnConflict};

use crate::tree::{apply, Edit, Manifest, Op};

/// One session's sidecar store on one workspace.
pub struct Ours {
    /// The store.
    pub store: CheckpointStore,
    /// The workspace.
    pub root: PathBuf,
    /// The sidecar directory.
    pub dir: PathBuf,
    /// Counts the store's durable steps (never injects a fault): how many fsyncs a turn costs.
    steps: Arc<FaultInjector>,
    turns: u64,
    /// How long the last rewind planned, and how long it committed.
    pub last_phases: (std::time::Duration, std::time::Duration),
}

/// How a rewind ended.
#[derive(Debug)]
pub enum Rewind {
    /// Committed.
    Done(CodeOutcome),
    /// Refused because of these conflicts; nothing was written.
    Refused(Vec<Conflict>),
}

impl Ours {
    /// Opens (lazily creates) the sidecar `dir` for `root` with `limits`, fsync on.
    pub fn open(dir: &Path, root: &Path, limits: Limits) -> Result<Ours> {
        Ours::open_with(dir, root, limits, Fs::durable())
    }

    /// [`Ours::open`] with fsync off: the same work, ordering and files, without durability. Only
    /// to show what the fsyncs cost; never a figure compared with git.
    pub fn open_unsynced(dir: &Path, root: &Path, limits: Limits) -> Result<Ours> {
        Ours::open_with(dir, root, limits, Fs::without_sync())
    }

    fn open_with(dir: &Path, root: &Path, limits: Limits, fs: Fs) -> Result<Ours> {
        let steps = FaultInjector::crash_at(0);
        let opts = StoreOptions {
            session_id: Some("retrace-bench".into()),
            limits,
            fs: fs.with_faults(steps.clone()),
            ..StoreOptions::default()
        };
        let store = CheckpointStore::open(dir, root, opts).context("open the checkpoint store")?;
        Ok(Ours {
            store,
            root: root.to_path_buf(),
            dir: dir.to_path_buf(),
            steps,
            turns: 0,
            last_phases: Default::default(),
        })
    }

    /// One turn applying `edits` through the capture seam (one `capture_before` for all of them, as
    /// one multi-file tool call); returns the turn number.
    pub fn turn(&mut self, prompt: &str, edits: &[Edit], manifest: &mut Manifest) -> Result<u64> {
        let n = self.begin(prompt)?;
        self.capture_before(edits, manifest)?;
        for e in edits {
            apply(&self.root, e, manifest)?;
        }
        self.capture_after(edits)?;
        Ok(n)
    }

    /// The first phase of a turn: `begin_turn`.
    pub fn begin(&mut self, prompt: &str) -> Result<u64> {
        let n = self
            .store
            .begin_turn(BeginTurn {
                prompt: prompt.to_string(),
                msg_index: self.turns * 4,
                ..BeginTurn::default()
            })
            .context("begin_turn")?;
        self.turns += 1;
        Ok(n)
    }

    /// The second phase: the before-images of what `edits` will change, durable.
    pub fn capture_before(&mut self, edits: &[Edit], manifest: &Manifest) -> Result<()> {
        let changes: Vec<Change> = edits
            .iter()
            .map(|e| {
                let kind = match e.op {
                    Op::Delete => ChangeKind::Delete,
                    Op::Write(_) if manifest.contains_key(&e.rel) => ChangeKind::Modify,
                    Op::Write(_) => ChangeKind::Create,
                };
                Change::new(&e.rel, kind)
            })
            .collect();
        self.store
            .capture_before(&changes, Some("write_file"))
            .context("capture_before")?;
        Ok(())
    }

    /// The last phase, once the edits ran: their after-images, then the turn ends.
    pub fn capture_after(&mut self, edits: &[Edit]) -> Result<()> {
        let paths: Vec<PathBuf> = edits.iter().map(|e| PathBuf::from(&e.rel)).collect();
        self.store.capture_after(&paths).context("capture_after")?;
        self.store.end_turn();
        Ok(())
    }

    /// Restores the workspace to its state when turn `n` started: plan, then a durable commit that
    /// refuses on conflicts (or skips them, with `skip`).
    pub fn rewind(&mut self, n: u64, skip: bool) -> Result<Rewind> {
        let start = std::time::Instant::now();
        let plan = self.store.plan_restore(n).context("plan_restore")?;
        let planned = start.elapsed();
        let opts = CommitOptions {
            confirm: false,
            on_conflict: if skip {
                OnConflict::Skip
            } else {
                OnConflict::Refuse
            },
        };
        let committed = self.store.commit(&plan, opts);
        self.last_phases = (planned, start.elapsed() - planned);
        match committed {
            Ok(outcome) => Ok(Rewind::Done(outcome)),
            Err(CheckpointError::Refused { conflicts }) => Ok(Rewind::Refused(conflicts)),
            Err(e) => Err(e).context("commit the restore"),
        }
    }

    /// fsyncs (of files and directories) issued by the store so far.
    pub fn fsyncs(&self) -> u64 {
        self.steps
            .trail()
            .iter()
            .filter(|l| l.starts_with("sync"))
            .count() as u64
    }

    /// Labels of the store's durable steps so far, in order.
    pub fn trail(&self) -> Vec<String> {
        self.steps.trail()
    }

    /// Durable steps (creates, writes, renames, fsyncs) so far.
    pub fn steps(&self) -> u64 {
        self.steps.steps()
    }
}

/// Limits that keep every turn: like for like with a shadow repository, which never forgets.
pub fn keep_everything() -> Limits {
    Limits {
        max_turns: usize::MAX,
        max_bytes: u64::MAX,
        ..Limits::default()
    }
}
