//! The store: opening a sidecar, starting turns, and the state every other module shares.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use retrace_fsutil::{Fs, RelPath};
use retrace_protocol::{FsckProblem, Severity};
use time::OffsetDateTime;

use crate::error::{CheckpointError, IoContext, Result};
use crate::fsio::{sync_error, write_error};
use crate::layout::{
    journal_rel, manifest_rel, marker_name, meta_rel, parse_turn_file_name, turn_rel, SIDECAR_DIRS,
    STATE_FILE, TURNS_DIR, TX_DIR,
};
use crate::load::load_sidecar;
use crate::model::{Format, Source, Turn};
use crate::record::{to_json, JournalLine, MAX_JOURNAL_BYTES, MAX_RECORD_BYTES};
use crate::state::StoreState;
use crate::to_record::{marker_of, turn_to_raw_v3};
use crate::tx::{load_manifests, Manifest};

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
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            session_id: None,
            limits: Limits::default(),
            fs: Fs::durable(),
            clock: Arc::new(OffsetDateTime::now_utc),
            writer_pid: std::process::id(),
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

/// What the controller knows when a turn starts.
#[derive(Debug, Clone, Default)]
pub struct BeginTurn {
    /// The user's prompt, verbatim.
    pub prompt: String,
    /// Messages on the head before the turn's user message.
    pub msg_index: u64,
    /// The head the turn runs on.
    pub head: Option<String>,
    /// The id the turn's user message will have.
    pub message_id: Option<String>,
    /// The largest turn number the session log knows, so a number is never reused even when the
    /// sidecar lost its records.
    pub log_max_turn: Option<u64>,
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
    /// The turn's journal, open for appending, and its length after the last complete write.
    pub(crate) journal: Option<(File, u64)>,
    /// Bytes of before-image payload the turn keeps, kept up to date by each capture so that
    /// retention, checked after every capture, does not sum the turn's entries each time.
    pub(crate) payload_bytes: u64,
}

/// The checkpoint sidecar store of one session.
pub struct CheckpointStore {
    pub(crate) dir: PathBuf,
    pub(crate) root: Option<PathBuf>,
    pub(crate) opts: StoreOptions,
    pub(crate) turns: BTreeMap<u64, Turn>,
    pub(crate) tombstones: BTreeSet<u64>,
    pub(crate) max_turn: Option<u64>,
    pub(crate) state: StoreState,
    /// After-images recorded in `state` since `state.json` was last written: they reach it at the
    /// end of the turn (or the next write of the whole state), not once per tool call.
    pub(crate) state_dirty: AtomicBool,
    pub(crate) current: Option<Current>,
    pub(crate) held: BTreeMap<u64, usize>,
    pub(crate) load_problems: Vec<FsckProblem>,
    pub(crate) transactions: BTreeMap<String, Manifest>,
    /// A manifest that stops writes (unreadable, or a foreign transaction in flight): its file name
    /// and why.
    pub(crate) blocked_by: Option<(String, String)>,
    /// A sidecar file carrying a mutation sequence above [`MAX_SEQ`] (its path relative to the
    /// sidecar, and the value): damaged or forged; the store is then not written to.
    pub(crate) seq_beyond: Option<(String, u64)>,
}

impl std::fmt::Debug for CheckpointStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckpointStore")
            .field("dir", &self.dir)
            .field("root", &self.root)
            .field("turns", &self.turns.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// The largest mutation sequence a store that is written to may hold (2^62).
const MAX_SEQ: u64 = 1 << 62;

fn seq_beyond_text(seq: u64) -> String {
    format!("it carries the mutation sequence {seq}, beyond any a sidecar reaches (2^62): it was damaged or forged, and writing on would wrap the timeline around")
}

impl CheckpointStore {
    /// Opens the sidecar `dir` of a session whose workspace is `root`. Nothing is created until the
    /// first turn begins.
    pub fn open(dir: &Path, root: &Path, opts: StoreOptions) -> Result<CheckpointStore> {
        let root = fs::canonicalize(root).at("resolve the workspace", root)?;
        let mut store = Self::open_inner(dir, Some(root), opts)?;
        // A transaction this build cannot read may be in flight, and its forward images may be the
        // only copies of what it replaced: nothing is written until it is repaired or moved aside.
        if let Some((name, why)) = &store.blocked_by {
            return Err(CheckpointError::Corrupt {
                path: dir.join(TX_DIR).join(name),
                detail: format!(
                    "{why}; this session's checkpoints are not written to until the manifest is repaired or moved aside"
                ),
            });
        }
        // Sequences only ever grow by one per write: one this close to overflowing was damaged or
        // forged, and writing on would wrap the timeline around.
        if let Some((file, seq)) = &store.seq_beyond {
            return Err(CheckpointError::Corrupt {
                path: dir.join(file),
                detail: format!("{}; the store is not written to", seq_beyond_text(*seq)),
            });
        }
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
        let loaded = load_sidecar(dir, root.as_deref())?;
        let mut problems = loaded.problems;
        let state_path = dir.join(STATE_FILE);
        let mut state = match StoreState::load(&state_path) {
            Ok((s, dropped)) => {
                for k in dropped {
                    problems.push(FsckProblem {
                        path: STATE_FILE.into(),
                        problem:
                            "an owned path is absolute, escapes or is empty; it proves nothing and is ignored"
                                .into(),
                        severity: Severity::Warning,
                        turn: None,
                        file: Some(k),
                    });
                }
                s
            }
            Err(e) => {
                problems.push(FsckProblem {
                    path: STATE_FILE.into(),
                    problem: format!("{e}; ownership proofs are lost, so restores will report conflicts"),
                    severity: Severity::Error,
                    turn: None,
                    file: None,
                });
                StoreState::default()
            }
        };
        // A sequence only grows by one per write: one near overflowing was damaged or forged.
        let seq_beyond = (state.mutation_seq > MAX_SEQ)
            .then(|| (STATE_FILE.to_string(), state.mutation_seq))
            .or_else(|| {
                loaded.turns.values().find_map(|t| {
                    let max = t.files.iter().filter_map(|f| f.seq).chain(t.start_seq).max()?;
                    (max > MAX_SEQ).then(|| (t.record_path.clone(), max))
                })
            });
        // The sequence must never move backwards, even if state.json lagged behind the records.
        let max_seq = loaded
            .turns
            .values()
            .flat_map(|t| t.files.iter().filter_map(|f| f.seq).chain(t.start_seq))
            .max()
            .unwrap_or(0);
        state.mutation_seq = state.mutation_seq.max(max_seq);
        let (transactions, bad) = load_manifests(dir)?;
        for b in &bad {
            problems.push(FsckProblem {
                path: format!("{TX_DIR}/{}", b.name),
                problem: b.why.clone(),
                severity: if b.blocks { Severity::Error } else { Severity::Info },
                turn: None,
                file: None,
            });
        }
        let blocking = bad.into_iter().find(|b| b.blocks);
        let seq_beyond = seq_beyond.or_else(|| {
            transactions
                .values()
                .find(|m| m.seq > MAX_SEQ)
                .map(|m| (manifest_rel(&m.id), m.seq))
        });
        if let Some((file, seq)) = &seq_beyond {
            problems.push(FsckProblem {
                path: file.clone(),
                problem: format!("{}; the store is not written to", seq_beyond_text(*seq)),
                severity: Severity::Error,
                turn: None,
                file: None,
            });
        }
        if let Some(turn) = [loaded.max_turn, state.pruned_through]
            .into_iter()
            .flatten()
            .find(|t| *t >= u64::MAX - 1)
        {
            problems.push(FsckProblem {
                path: if loaded.max_turn == Some(turn) {
                    TURNS_DIR.to_string()
                } else {
                    STATE_FILE.to_string()
                },
                problem: format!("{}; no new turn can start", last_turn_text(turn)),
                severity: Severity::Error,
                turn: None,
                file: None,
            });
        }
        let mut store = CheckpointStore {
            dir: dir.to_path_buf(),
            root,
            opts,
            turns: loaded.turns,
            tombstones: loaded.tombstones,
            max_turn: loaded.max_turn,
            state,
            state_dirty: AtomicBool::new(false),
            current: None,
            held: BTreeMap::new(),
            load_problems: problems,
            blocked_by: blocking.map(|b| (b.name, b.why)),
            seq_beyond,
            transactions,
        };
        // Committed transactions are Retrace's own writes, even if state.json lagged behind them.
        // Oldest first: an undo's proofs (which may say "not Retrace's") must land after the
        // restore it undid.
        let mut happened: Vec<Manifest> = store
            .transactions
            .values()
            .filter(|m| m.state.happened())
            .cloned()
            .collect();
        happened.sort_by_key(|m| m.seq);
        for m in &happened {
            store.apply_committed(m);
        }
        Ok(store)
    }

    /// The sidecar directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The canonical workspace root, when the store was opened with one.
    pub fn workspace(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// The live turns.
    pub fn turns(&self) -> impl Iterator<Item = &Turn> {
        self.turns.values()
    }

    /// One live turn.
    pub fn turn(&self, n: u64) -> Option<&Turn> {
        self.turns.get(&n)
    }

    /// The turn capturing now, if any.
    pub fn current_turn(&self) -> Option<u64> {
        self.current.as_ref().map(|c| c.number)
    }

    /// `state.json` as loaded and updated.
    pub fn state(&self) -> &StoreState {
        &self.state
    }

    /// The last mutation sequence handed out (the workspace generation seen by this store).
    pub fn mutation_seq(&self) -> u64 {
        self.state.mutation_seq
    }

    /// Problems found while loading (also part of [`CheckpointStore::fsck`]).
    pub fn load_problems(&self) -> &[FsckProblem] {
        &self.load_problems
    }

    /// The number the next turn will get: 1 + the largest number found anywhere.
    pub fn next_turn(&self) -> u64 {
        let seen = [self.max_turn, self.state.pruned_through, self.current_turn()];
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
        self.transactions
            .values()
            .any(|m| m.turn == Some(turn) && (!m.state.is_terminal() || Some(&m.id) == undo.as_ref()))
    }

    /// Starts a turn: writes its marker, then its (empty) v3 record, and returns its number.
    pub fn begin_turn(&mut self, begin: BeginTurn) -> Result<u64> {
        // The turn before, if nobody ended it, ends here (its journal compacted).
        self.finish_turn()?;
        let mut n = self.next_turn();
        if let Some(m) = begin.log_max_turn {
            n = n.max(m.saturating_add(1));
        }
        if n == u64::MAX {
            return Err(CheckpointError::Corrupt {
                path: self.dir.clone(),
                detail: "the turn numbers recorded reach the largest a turn can have (a damaged record or state.json); no new turn can start".to_string(),
            });
        }
        let fs = self.opts.fs.clone();
        fs.create_dir_all(&self.dir).at("create the sidecar", &self.dir)?;
        let turn_dir = self.turn_dir(n);
        if turn_dir.exists() {
            // A tombstone whose number is being written again: it must not be resurrected.
            fs.remove_dir_all(&turn_dir)
                .at("remove the tombstone", &turn_dir)?;
        }
        let now = (self.opts.clock)();
        // A new turn moves the workspace generation on: plans made before it are stale and the
        // last rewind can no longer be undone.
        self.state.mutation_seq += 1;
        let time = now
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_else(|_| "1970-01-01T00:00:00Z".to_string());
        let turn = Turn {
            number: n,
            time: time.clone(),
            instant: Some(now),
            prompt: begin.prompt,
            msg_index: Some(begin.msg_index),
            head: begin.head,
            message_id: begin.message_id,
            start_seq: Some(self.state.mutation_seq),
            session_id: self.opts.session_id.clone(),
            format: Format::V3,
            source: Source::V3,
            record_path: meta_rel(n),
            files: Vec::new(),
            gaps: Vec::new(),
            expired: false,
        };
        // (1) the marker keeps the turn alive; (2) payloads; (3) meta.json. Both records are written
        // and synced under their temp names first, then renamed, then their directories synced:
        // one barrier each instead of one per file. A crash in between leaves the marker without
        // its record (listed from the marker) or the record without its marker (a tombstone,
        // ignored): never a capture without its turn, since nothing is captured before this returns.
        let marker = self.dir.join(marker_name(n));
        let meta = self.dir.join(meta_rel(n));
        let files_dir = turn_dir.join("files");
        // `turns/`, `turns/N/` and `files/` are synced in the barrier below.
        fs.create_dir_all_unsynced(&files_dir).at("create", &files_dir)?;
        let records = [
            (marker.as_path(), to_json(&marker_of(&turn))),
            (meta.as_path(), to_json(&turn_to_raw_v3(&turn))),
        ];
        let batch: Vec<(&Path, &[u8])> = records.iter().map(|(p, b)| (*p, b.as_slice())).collect();
        fs.replace_all(&batch).map_err(write_error)?;
        // The new directories' entries and both renames are durable before anything is captured.
        let turns_dir = self.dir.join(TURNS_DIR);
        let dirs = [
            (self.dir.as_path(), "sync_dir"),
            (turns_dir.as_path(), "sync_dir"),
            (turn_dir.as_path(), "sync_dir"),
            (files_dir.as_path(), "sync_dir"),
        ];
        fs.sync_paths(&dirs).map_err(sync_error)?;
        self.max_turn = Some(self.max_turn.map_or(n, |m| m.max(n)));
        self.tombstones.remove(&n);
        self.current = Some(Current {
            number: n,
            touched: BTreeMap::new(),
            after_dirty: BTreeSet::new(),
            journal: None,
            payload_bytes: 0,
        });
        self.turns.insert(n, turn);
        self.prune()?;
        Ok(n)
    }

    /// Ends the current turn: later captures need a new [`CheckpointStore::begin_turn`].
    ///
    /// After-images recorded since the last capture are written into the turn's `meta.json` and
    /// `state.json` (the ownership proof) now. Best effort: use [`CheckpointStore::finish_turn`] to
    /// learn about a failure.
    pub fn end_turn(&mut self) {
        let _ = self.finish_turn();
    }

    /// Like [`CheckpointStore::end_turn`], reporting a failure to write the record.
    pub fn finish_turn(&mut self) -> Result<()> {
        let flushed = self.flush_pending();
        let compacted = self.compact_journal();
        self.current = None;
        flushed.and(compacted)
    }

    /// Appends `lines` to the current turn's journal (`turns/N/journal.jsonl`) and makes them
    /// durable: one write and one fsync, whatever the turn's size (the journal is created, and its
    /// directory entry synced, at the turn's first append). A failed write is cut back off, so the
    /// journal never holds half a line followed by whole ones.
    pub(crate) fn append_journal(&mut self, lines: &[JournalLine]) -> Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        let Some(number) = self.current.as_ref().map(|c| c.number) else {
            return Err(CheckpointError::NoTurn);
        };
        let fs = self.opts.fs.clone();
        let path = self.dir.join(journal_rel(number));
        let mut bytes = Vec::new();
        for l in lines {
            bytes.extend_from_slice(&serde_json::to_vec(l).map_err(|e| CheckpointError::Corrupt {
                path: path.clone(),
                detail: format!("cannot encode a journal line: {e}"),
            })?);
            bytes.push(b'\n');
        }
        if self.current.as_ref().is_some_and(|c| c.journal.is_none()) {
            fs.step("create_file").at("create", &path)?;
            let file = OpenOptions::new()
                .append(true)
                .create(true)
                .mode(retrace_fsutil::PRIVATE_FILE_MODE)
                .open(&path)
                .at("create", &path)?;
            let mut len = file.metadata().at("stat", &path)?.len();
            let mut last = [b'\n'];
            if len > 0 {
                std::os::unix::fs::FileExt::read_at(&file, &mut last, len - 1).at("read", &path)?;
            }
            if last[0] != b'\n' {
                // Left by a crash: end a line cut short, so the next one starts clean.
                (&file).write_all(b"\n").at("write", &path)?;
                len += 1;
            }
            fs.sync_dir(&self.turn_dir(number)).at("sync", &path)?;
            if let Some(cur) = self.current.as_mut() {
                cur.journal = Some((file, len));
            }
        }
        let Some((file, len)) = self.current.as_mut().and_then(|c| c.journal.as_mut()) else {
            return Err(CheckpointError::NoTurn);
        };
        // Never larger than a reader accepts: the capture fails (and its tool with it) instead.
        if *len + bytes.len() as u64 > MAX_JOURNAL_BYTES {
            return Err(CheckpointError::TurnTooLarge {
                turn: number,
                limit: MAX_JOURNAL_BYTES / (1024 * 1024),
            });
        }
        let written = fs
            .step("write")
            .and_then(|()| (&*file).write_all(&bytes))
            .and_then(|()| fs.sync_file(file, "sync_file"));
        match written {
            Ok(()) => {
                *len += bytes.len() as u64;
                Ok(())
            }
            Err(e) => {
                let _ = file.set_len(*len);
                Err(e).at("write", &path)
            }
        }
    }

    /// At the end of a turn with a journal: see [`CheckpointStore::compact_turn`].
    fn compact_journal(&mut self) -> Result<()> {
        let Some(number) = self
            .current
            .as_ref()
            .filter(|c| c.journal.is_some())
            .map(|c| c.number)
        else {
            return Ok(());
        };
        if let Some(cur) = self.current.as_mut() {
            cur.journal = None;
        }
        self.compact_turn(number)
    }

    /// Turn `n`'s `meta.json` written whole (atomically) from memory, then its journal removed. A
    /// crash in between leaves both, which read the same (see [`JournalLine`]). A record that would
    /// be larger than a reader accepts is not written: the journal stays, and is read with it.
    pub(crate) fn compact_turn(&self, n: u64) -> Result<()> {
        let Some(turn) = self.turns.get(&n) else {
            return Ok(());
        };
        let bytes = to_json(&turn_to_raw_v3(turn));
        if bytes.len() as u64 > MAX_RECORD_BYTES {
            return Ok(());
        }
        let path = self.dir.join(meta_rel(n));
        self.opts.fs.write_atomic(&path, &bytes).at("write", &path)?;
        let journal = self.dir.join(journal_rel(n));
        self.opts.fs.remove_file(&journal).at("remove", &journal)
    }

    /// Makes durable what the tool calls since the last capture left in memory: their after-images
    /// as journal lines, and `state.json` (the ownership proofs), replaced atomically (temp file,
    /// fsync, rename, directory fsync).
    pub(crate) fn flush_pending(&mut self) -> Result<()> {
        let dirty: Vec<usize> = self
            .current
            .as_ref()
            .map(|c| c.after_dirty.iter().copied().collect())
            .unwrap_or_default();
        if !dirty.is_empty() {
            let lines = self.pending_after_lines();
            self.append_journal(&lines)?;
            if let Some(cur) = self.current.as_mut() {
                cur.after_dirty.clear();
            }
        }
        if self.state_dirty.load(Ordering::Relaxed) {
            self.write_state()?;
        }
        Ok(())
    }

    pub(crate) fn turn_dir(&self, n: u64) -> PathBuf {
        self.dir.join(turn_rel(n))
    }

    /// Writes `state.json` atomically.
    pub(crate) fn write_state(&self) -> Result<()> {
        let path = self.dir.join(STATE_FILE);
        self.opts
            .fs
            .write_atomic(&path, &self.state.to_json())
            .at("write", &path)?;
        self.state_dirty.store(false, Ordering::Relaxed);
        Ok(())
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
        if self.dir.is_dir() {
            walk(&self.dir, &mut total)?;
        }
        Ok(total)
    }
}

impl Drop for CheckpointStore {
    fn drop(&mut self) {
        // Best effort: a crash before this point costs the newest ownership proofs (restores then
        // report those files as conflicts), never bytes.
        let _ = self.flush_pending();
    }
}

/// What a turn number with no number after it says.
fn last_turn_text(turn: u64) -> String {
    format!("turn number {turn} leaves no number for a next turn (a damaged record or state.json)")
}
