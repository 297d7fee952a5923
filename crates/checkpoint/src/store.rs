//! The store: one session's sidecar opened for reading or writing. It owns the sidecar as loaded
//! ([`crate::sidecar::Sidecar`], which answers every question that only reads) and what writing
//! needs besides: the options, the turn capturing now, the turns held from retention. Its
//! operations are in the modules that name them (`turn`, `capture`, `after`, `commit`, `undo`,
//! `recovery`, `retention`, …), each an `impl CheckpointStore` on top of everything else.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use retrace_fsutil::{Fs, RelPath};
use retrace_protocol::{CheckpointEntry, FsckProblem, FsckReport, PlanFileDiff};
use time::OffsetDateTime;

use crate::error::{CheckpointError, IoContext, Result};
use crate::layout::{parse_turn_file_name, SIDECAR_DIRS, STATE_FILE, TX_DIR};
use crate::model::Turn;
use crate::plan::RestorePlan;
use crate::plan_diff::DiffBudget;
use crate::read::BeforeImage;
use crate::rewind::RewindRecord;
use crate::sidecar::{seq_beyond_text, Sidecar};
use crate::state::StoreState;
use crate::tx::Manifest;

/// Retention limits (SPEC §3.4): `retrace-protocol`'s, so frontends can set them.
pub use retrace_protocol::RetentionLimits as Limits;

/// The store's clock, injectable so tests are deterministic.
pub type Clock = Arc<dyn Fn() -> OffsetDateTime + Send + Sync>;

/// How to open a store.
#[derive(Clone)]
pub struct StoreOptions {
    /// Written into every record's `sessionId`.
    pub session_id: Option<String>,
    /// Retention limits.
    pub limits: Limits,
    /// The durable-write layer.
    pub fs: Fs,
    /// The clock.
    pub clock: Clock,
    /// The process whose tools write the workspace (the edit tools name their temp files after
    /// it): journaled with each intent, so that recovery removes only the temp files the crashed
    /// writer left. This process, but for tests that play a crashed one.
    pub writer_pid: u32,
    /// What the diffs of a restore plan may cost.
    pub plan_diffs: DiffBudget,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            session_id: None,
            limits: Limits::default(),
            fs: Fs::durable(),
            clock: Arc::new(OffsetDateTime::now_utc),
            writer_pid: std::process::id(),
            plan_diffs: DiffBudget::default(),
        }
    }
}

impl std::fmt::Debug for StoreOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreOptions")
            .field("session_id", &self.session_id)
            .field("limits", &self.limits)
            .field("fs", &self.fs)
            .finish_non_exhaustive()
    }
}

/// The turn currently capturing.
#[derive(Debug)]
pub(crate) struct Current {
    pub(crate) number: u64,
    /// Paths already touched in this turn (first touch wins), including unreadable ones, each with
    /// the index of its entry in the turn (`None` for a path recorded as a gap only). Keeps a capture
    /// from scanning the turn's entries: a turn of 10,000 tool calls costs each call the same.
    pub(crate) touched: BTreeMap<RelPath, Option<usize>>,
    /// Entries whose after-image was recorded since the journal last got it (it is in memory and,
    /// at the end of the turn, in `state.json`).
    pub(crate) after_dirty: BTreeSet<usize>,
    /// Whether the turn's `turn` frame is in the log (written with its first append).
    pub(crate) on_disk: bool,
    /// Bytes of journal lines the turn appended (the limit a reader of one turn's lines keeps).
    pub(crate) journal_len: u64,
    /// Bytes of before-image payload the turn keeps, kept up to date by each capture so that
    /// retention, checked after every capture, does not sum the turn's entries each time.
    pub(crate) payload_bytes: u64,
}

/// The checkpoint sidecar store of one session.
pub struct CheckpointStore {
    /// The sidecar as loaded, and as this store's writes changed it.
    pub(crate) sidecar: Sidecar,
    pub(crate) opts: StoreOptions,
    pub(crate) current: Option<Current>,
    pub(crate) held: BTreeMap<u64, usize>,
    /// The log segment this store appends to, once it has one.
    pub(crate) log: Option<crate::seglog::Writer>,
    /// Something `state.json` holds changed that no turn's frames record (a proof dropped): it
    /// is written at the end of the turn.
    pub(crate) state_must_write: AtomicBool,
}

impl std::fmt::Debug for CheckpointStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckpointStore")
            .field("dir", &self.sidecar.dir)
            .field("root", &self.sidecar.root)
            .field("turns", &self.sidecar.turns.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl CheckpointStore {
    /// Opens the sidecar `dir` of a session whose workspace is `root`. Nothing is created until the
    /// first turn begins.
    pub fn open(dir: &Path, root: &Path, opts: StoreOptions) -> Result<CheckpointStore> {
        let root = fs::canonicalize(root).at("resolve the workspace", root)?;
        let mut store = Self::open_inner(dir, Some(root), opts)?;
        // A transaction this build cannot read may be in flight, and its forward images may be the
        // only copies of what it replaced: nothing is written until it is repaired or moved aside.
        if let Some((name, why)) = &store.sidecar.blocked_by {
            return Err(CheckpointError::Corrupt {
                path: dir.join(TX_DIR).join(name),
                detail: format!(
                    "{why}; this session's checkpoints are not written to until the manifest is repaired or moved aside"
                ),
            });
        }
        // Sequences only ever grow by one per write: one this close to overflowing was damaged or
        // forged, and writing on would wrap the timeline around.
        if let Some((file, seq)) = &store.sidecar.seq_beyond {
            return Err(CheckpointError::Corrupt {
                path: dir.join(file),
                detail: format!("{}; the store is not written to", seq_beyond_text(*seq)),
            });
        }
        store.reopen_log()?;
        store.recover()?;
        Ok(store)
    }

    /// Opens a session's sidecar for reading only: no recovery, nothing written.
    pub fn open_read_only(dir: &Path, root: &Path) -> Result<CheckpointStore> {
        let root = fs::canonicalize(root).at("resolve the workspace", root)?;
        Self::open_inner(dir, Some(root), StoreOptions::default())
    }

    /// Opens any sidecar directory for reading only (listing, fsck), with no workspace. A directory
    /// that holds nothing a sidecar holds (no record, no state, no transaction) is refused: listing
    /// `/etc` must not say "no checkpoints, all ok".
    pub fn open_bare(dir: &Path) -> Result<CheckpointStore> {
        if !dir.is_dir() {
            return Err(CheckpointError::Io {
                op: "open the sidecar",
                path: dir.into(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such directory"),
            });
        }
        let looks_like_one = fs::read_dir(dir).at("list", dir)?.flatten().any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name == STATE_FILE
                || parse_turn_file_name(&name).is_some()
                || SIDECAR_DIRS.contains(&name.as_str())
        });
        if !looks_like_one {
            return Err(CheckpointError::Corrupt {
                path: dir.into(),
                detail:
                    "this is not a checkpoint sidecar: it holds no turn record, state.json or transaction"
                        .into(),
            });
        }
        Self::open_inner(dir, None, StoreOptions::default())
    }

    fn open_inner(dir: &Path, root: Option<PathBuf>, opts: StoreOptions) -> Result<CheckpointStore> {
        Ok(CheckpointStore {
            sidecar: Sidecar::load(dir, root)?,
            opts,
            current: None,
            held: BTreeMap::new(),
            log: None,
            state_must_write: AtomicBool::new(false),
        })
    }

    /// The sidecar directory.
    pub fn dir(&self) -> &Path {
        &self.sidecar.dir
    }

    /// The canonical workspace root, when the store was opened with one.
    pub fn workspace(&self) -> Option<&Path> {
        self.sidecar.root.as_deref()
    }

    /// The live turns.
    pub fn turns(&self) -> impl Iterator<Item = &Turn> {
        self.sidecar.turns.values()
    }

    /// One live turn.
    pub fn turn(&self, n: u64) -> Option<&Turn> {
        self.sidecar.turns.get(&n)
    }

    /// The turn capturing now, if any.
    pub fn current_turn(&self) -> Option<u64> {
        self.current.as_ref().map(|c| c.number)
    }

    /// `state.json` as loaded and updated.
    pub fn state(&self) -> &StoreState {
        &self.sidecar.state
    }

    /// The last mutation sequence handed out (the workspace generation seen by this store).
    pub fn mutation_seq(&self) -> u64 {
        self.sidecar.state.mutation_seq
    }

    /// Problems found while loading (also part of [`CheckpointStore::fsck`]).
    pub fn load_problems(&self) -> &[FsckProblem] {
        &self.sidecar.load_problems
    }

    /// The number the next turn will get: 1 + the largest number found anywhere.
    pub fn next_turn(&self) -> u64 {
        let seen = [
            self.sidecar.max_turn,
            self.sidecar.state.pruned_through,
            self.current_turn(),
        ];
        seen.iter().flatten().max().map_or(0, |m| m.saturating_add(1))
    }

    /// Protects `turn` from retention until [`CheckpointStore::release`] (counted).
    pub fn hold(&mut self, turn: u64) {
        *self.held.entry(turn).or_insert(0) += 1;
    }

    /// Undoes one [`CheckpointStore::hold`].
    pub fn release(&mut self, turn: u64) {
        if let Some(c) = self.held.get_mut(&turn) {
            *c -= 1;
            if *c == 0 {
                self.held.remove(&turn);
            }
        }
    }

    /// Whether retention must keep `turn`.
    pub(crate) fn is_protected(&self, turn: u64) -> bool {
        if self.current_turn() == Some(turn) || self.held.contains_key(&turn) {
            return true;
        }
        let undo = self.undo_target().map(|m| m.id.clone());
        self.sidecar
            .transactions
            .values()
            .any(|m| m.turn == Some(turn) && (!m.state.is_terminal() || Some(&m.id) == undo.as_ref()))
    }

    /// Writes `state.json` atomically.
    pub(crate) fn write_state(&self) -> Result<()> {
        let path = self.sidecar.dir.join(STATE_FILE);
        self.opts
            .fs
            .write_atomic(&path, &self.sidecar.state.to_json())
            .at("write", &path)?;
        self.state_must_write.store(false, Ordering::Relaxed);
        Ok(())
    }

    /// The workspace root, or `NoTurn` for a store opened without one.
    pub(crate) fn require_root(&self) -> Result<PathBuf> {
        self.sidecar.root.clone().ok_or(CheckpointError::NoTurn)
    }

    /// Normalises a tool's path against the workspace root.
    pub fn normalize(&self, path: &Path) -> Result<RelPath> {
        let root = self.require_root()?;
        Ok(RelPath::normalize(&root, path)?)
    }

    /// Bytes of every file under the sidecar: what history costs on disk.
    pub fn total_size(&self) -> Result<u64> {
        fn walk(dir: &Path, total: &mut u64) -> Result<()> {
            for entry in fs::read_dir(dir).at("list", dir)? {
                let entry = entry.at("list", dir)?;
                let meta = entry.metadata().at("stat", entry.path())?;
                if meta.is_dir() {
                    walk(&entry.path(), total)?;
                } else {
                    *total += meta.len();
                }
            }
            Ok(())
        }
        let mut total = 0;
        if self.sidecar.dir.is_dir() {
            walk(&self.sidecar.dir, &mut total)?;
        }
        Ok(total)
    }
}

/// What only reads, answered by the sidecar.
impl CheckpointStore {
    /// The checkpoint list (SPEC §7) as this store alone can tell it: the session-dependent fields
    /// (`visible`, `can_restore_conversation`) are left null for the controller to fill.
    pub fn list(&self) -> Vec<CheckpointEntry> {
        self.sidecar.list()
    }

    /// Whether a code restore to `t` can be offered, and why not.
    pub fn code_restore_offered(&self, t: &Turn) -> (bool, Option<String>) {
        self.sidecar.code_restore_offered(t)
    }

    /// The before-image of `path` in `turn`, its bytes as a stream verified against the recorded
    /// SHA-256 (blobs also against their name).
    pub fn before_image(&self, turn: u64, path: &RelPath) -> Result<BeforeImage> {
        self.sidecar.before_image(turn, path)
    }

    /// Plans a code restore to the state the workspace had when turn `n` started, each file
    /// with its diff (within [`StoreOptions::plan_diffs`]).
    pub fn plan_restore(&self, n: u64) -> Result<RestorePlan> {
        self.sidecar.plan_restore(n, self.opts.plan_diffs)
    }

    /// Plans the revert of one file to its state before the session first touched it (SPEC §5.6),
    /// with its diff.
    pub fn plan_file_revert(&self, path: &Path) -> Result<RestorePlan> {
        self.sidecar.plan_file_revert(path, self.opts.plan_diffs)
    }

    /// The whole diff of the file of `plan` shown as `path`, never cut: what its plan file's
    /// `diff` shows, or would have shown past the plan's budget. Its bytes are read now and held
    /// to what the plan saw ([`CheckpointError::PlanMoved`] when they changed since;
    /// [`CheckpointError::UnknownFile`] for a path the plan does not have).
    pub fn plan_file_diff(&self, plan: &RestorePlan, path: &str) -> Result<PlanFileDiff> {
        self.sidecar.plan_file_diff(plan, path)
    }

    /// The files turn `n` changed, each with its diff from the turn's start to its end (SPEC §5.7).
    pub fn turn_files(&self, n: u64) -> Result<Vec<retrace_protocol::TurnFile>> {
        self.sidecar.turn_files(n)
    }

    /// Every version of `path` the sidecar knows, oldest first (SPEC §5.8).
    pub fn file_history(&self, path: &Path) -> Result<retrace_protocol::FileHistory> {
        let root = self.require_root()?;
        let rel = RelPath::normalize(&root, path)?;
        let versions = self
            .sidecar
            .file_history(&rel)
            .into_iter()
            .map(|l| l.version)
            .collect();
        Ok(retrace_protocol::FileHistory {
            path: rel.to_lossy(),
            versions,
        })
    }

    /// Plans restoring version `version` (from 1) of `path`'s history as a one-file plan, with the
    /// checks, transaction and undo of a single-file revert (SPEC §5.8).
    pub fn plan_file_version(&self, path: &Path, version: u32) -> Result<RestorePlan> {
        self.sidecar
            .plan_file_version(path, version, self.opts.plan_diffs)
    }

    /// The manifests, by id.
    pub fn transactions(&self) -> impl Iterator<Item = &Manifest> {
        self.sidecar.transactions()
    }

    /// The transaction that `undo` would undo now: the last committed restore or revert, when no
    /// turn or write happened since.
    pub fn undo_target(&self) -> Option<&Manifest> {
        self.sidecar.undo_target()
    }

    /// The transaction that `redo` would apply again now: the one the newest undo took back,
    /// while no restore, revert or rewind happened since (turns may have).
    pub fn redo_target(&self) -> Option<&Manifest> {
        self.sidecar.redo_target()
    }

    /// The rewind record transaction `m` keeps: `None` when it keeps none (a restore of files
    /// only); an error naming its manifest when the record cannot be read.
    pub fn rewind_record(&self, m: &Manifest) -> Result<Option<RewindRecord>> {
        self.sidecar.rewind_record(m)
    }

    /// Whether any transaction is not yet terminal.
    pub fn has_open_transaction(&self) -> bool {
        self.sidecar.has_open_transaction()
    }

    /// Verifies every record and payload. Tombstones, superseded records and unreferenced blobs are
    /// `info`; anything that loses or corrupts data is an `error`.
    pub fn fsck(&self) -> FsckReport {
        self.sidecar.fsck()
    }
}

impl Drop for CheckpointStore {
    fn drop(&mut self) {
        // Best effort: a crash before this point costs the newest ownership proofs (restores then
        // report those files as conflicts), never bytes. A turn not yet in the log gets its start
        // there, so it is listed.
        if let Some(n) = self.current.as_ref().filter(|c| !c.on_disk).map(|c| c.number) {
            let _ = self.log_append(n, Vec::new());
        }
        let _ = self.flush_pending();
    }
}
