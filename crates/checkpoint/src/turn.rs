//! A turn's life in the store: begun (its marker and empty record made durable), captured into
//! through its journal (`turns/N/journal.jsonl`, one append per capture), and ended (its record
//! written whole, the journal removed).

use std::collections::{BTreeMap, BTreeSet};
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::Ordering;

use crate::error::{CheckpointError, IoContext, Result};
use crate::fsio::{sync_error, write_error};
use crate::layout::{journal_rel, marker_name, meta_rel, TURNS_DIR};
use crate::model::{Format, Source, Turn};
use crate::record::{to_json, JournalLine, MAX_JOURNAL_BYTES, MAX_RECORD_BYTES};
use crate::store::{CheckpointStore, Current};
use crate::to_record::{marker_of, turn_to_raw_v3};

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

impl CheckpointStore {
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
                path: self.sidecar.dir.clone(),
                detail: "the turn numbers recorded reach the largest a turn can have (a damaged record or state.json); no new turn can start".to_string(),
            });
        }
        let fs = self.opts.fs.clone();
        fs.create_dir_all(&self.sidecar.dir)
            .at("create the sidecar", &self.sidecar.dir)?;
        let turn_dir = self.sidecar.turn_dir(n);
        if turn_dir.exists() {
            // A tombstone whose number is being written again: it must not be resurrected.
            fs.remove_dir_all(&turn_dir)
                .at("remove the tombstone", &turn_dir)?;
        }
        let now = (self.opts.clock)();
        // A new turn moves the workspace generation on: plans made before it are stale and the
        // last rewind can no longer be undone.
        self.sidecar.state.mutation_seq += 1;
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
            start_seq: Some(self.sidecar.state.mutation_seq),
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
        let marker = self.sidecar.dir.join(marker_name(n));
        let meta = self.sidecar.dir.join(meta_rel(n));
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
        let turns_dir = self.sidecar.dir.join(TURNS_DIR);
        let dirs = [
            (self.sidecar.dir.as_path(), "sync_dir"),
            (turns_dir.as_path(), "sync_dir"),
            (turn_dir.as_path(), "sync_dir"),
            (files_dir.as_path(), "sync_dir"),
        ];
        fs.sync_paths(&dirs).map_err(sync_error)?;
        self.sidecar.max_turn = Some(self.sidecar.max_turn.map_or(n, |m| m.max(n)));
        self.sidecar.tombstones.remove(&n);
        self.current = Some(Current {
            number: n,
            touched: BTreeMap::new(),
            after_dirty: BTreeSet::new(),
            journal: None,
            payload_bytes: 0,
        });
        self.sidecar.turns.insert(n, turn);
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
        let path = self.sidecar.dir.join(journal_rel(number));
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
            fs.sync_dir(&self.sidecar.turn_dir(number)).at("sync", &path)?;
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
        self.record_ends(number);
        self.compact_turn(number)
    }

    /// Turn `n`'s `meta.json` written whole (atomically) from memory, then its journal removed. A
    /// crash in between leaves both, which read the same (see [`JournalLine`]). A record that would
    /// be larger than a reader accepts is not written: the journal stays, and is read with it.
    pub(crate) fn compact_turn(&self, n: u64) -> Result<()> {
        let Some(turn) = self.sidecar.turns.get(&n) else {
            return Ok(());
        };
        let bytes = to_json(&turn_to_raw_v3(turn));
        if bytes.len() as u64 > MAX_RECORD_BYTES {
            return Ok(());
        }
        let path = self.sidecar.dir.join(meta_rel(n));
        self.opts.fs.write_atomic(&path, &bytes).at("write", &path)?;
        let journal = self.sidecar.dir.join(journal_rel(n));
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
}
