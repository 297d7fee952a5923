//! A turn's life in the store: begun (in memory), captured into through the log (its `turn`
//! frame with its first append, then one append per capture), and ended (the files as it left
//! them and `ended`, one append). See docs/TURN-LOG.md and FORMATS.md §19.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;

use crate::error::{CheckpointError, IoContext, Result};
use crate::layout::{journal_rel, meta_rel};
use crate::logread::{Header, Out};
use crate::model::{Format, Source, Turn};
use crate::record::{to_json, JournalLine, MAX_JOURNAL_BYTES, MAX_RECORD_BYTES};
use crate::seglog::segment_rel;
use crate::store::{CheckpointStore, Current};
use crate::to_record::turn_to_raw_v3;

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
    /// Starts a turn and returns its number. Nothing is written: the turn's `turn` frame goes to
    /// the log with its first append (a capture, a gap, or its end), so a turn costs no write
    /// before it has something to keep.
    pub fn begin_turn(&mut self, begin: BeginTurn) -> Result<u64> {
        // The turn before, if nobody ended it, ends here.
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
        let now = (self.opts.clock)();
        // A new turn moves the workspace generation on: plans made before it are stale and the
        // last rewind can no longer be undone.
        self.sidecar.state.mutation_seq += 1;
        let time = now
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_else(|_| "1970-01-01T00:00:00Z".to_string());
        let segment = self
            .log
            .as_ref()
            .filter(|w| {
                w.turns < crate::logread::SEGMENT_TURNS && w.segment.len < crate::logread::SEGMENT_BYTES
            })
            .map_or(n, |w| w.segment.first_turn);
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
            source: Source::Log,
            record_path: segment_rel(segment),
            files: Vec::new(),
            gaps: Vec::new(),
            expired: false,
        };
        self.sidecar.max_turn = Some(self.sidecar.max_turn.map_or(n, |m| m.max(n)));
        self.sidecar.tombstones.remove(&n);
        self.current = Some(Current {
            number: n,
            touched: BTreeMap::new(),
            after_dirty: BTreeSet::new(),
            on_disk: false,
            journal_len: 0,
            payload_bytes: 0,
        });
        self.sidecar.turns.insert(n, turn);
        // Its start, written (not synced: the first capture's `fdatasync` makes it durable with
        // the capture), so a crash after this returns still lists the turn.
        if let Err(e) = self.log_append_with(n, Vec::new(), false) {
            self.sidecar.turns.remove(&n);
            self.current = None;
            return Err(e);
        }
        self.prune()?;
        Ok(n)
    }

    /// Ends the current turn: later captures need a new [`CheckpointStore::begin_turn`].
    ///
    /// After-images recorded since the last capture, and the files as the turn left them, are
    /// appended to the log now. Best effort: use [`CheckpointStore::finish_turn`] to learn about a
    /// failure.
    pub fn end_turn(&mut self) {
        let _ = self.finish_turn();
    }

    /// Like [`CheckpointStore::end_turn`], reporting a failure to write the record.
    pub fn finish_turn(&mut self) -> Result<()> {
        let Some(number) = self.current.as_ref().map(|c| c.number) else {
            return self.flush_pending();
        };
        // The pending after-images, every file as the turn left it, and `ended`: one append.
        let after = self.pending_after_frames();
        let skip = after.len();
        let (end_frames, ends) = self.end_frames(number);
        let mut frames = after;
        frames.extend(end_frames);
        frames.push(Out::bare(Header::new("ended", number)));
        let written = match self.log_append(number, frames) {
            Ok(slices) => {
                self.record_end_slices(number, ends, slices.get(skip..).unwrap_or_default());
                Ok(())
            }
            // A file that changed while its end was read: the turn ends without its ends (its
            // results say so), never without its after-images.
            Err(_) => {
                let mut frames = self.pending_after_frames();
                frames.push(Out::bare(Header::new("ended", number)));
                self.log_append(number, frames).map(drop)
            }
        };
        if written.is_ok() {
            if let Some(cur) = self.current.as_mut() {
                cur.after_dirty.clear();
            }
        }
        let state = self.write_state_if_needed();
        self.current = None;
        written.and(state)
    }

    /// The pending after-images as `line` frames.
    pub(crate) fn pending_after_frames(&self) -> Vec<Out> {
        let Some(number) = self.current.as_ref().map(|c| c.number) else {
            return Vec::new();
        };
        self.pending_after_lines()
            .into_iter()
            .map(|l| Out::bare(Header::line(number, l)))
            .collect()
    }

    /// Appends `lines` to the current turn's frames in the log and makes them durable: one write
    /// and one `fdatasync`, whatever the turn's size. A failed write is cut back off.
    pub(crate) fn append_journal(&mut self, lines: &[JournalLine]) -> Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        let Some(number) = self.current.as_ref().map(|c| c.number) else {
            return Err(CheckpointError::NoTurn);
        };
        let frames = lines
            .iter()
            .map(|l| Out::bare(Header::line(number, l.clone())))
            .collect();
        self.append_lines(number, frames).map(drop)
    }

    /// Appends a turn's `line` frames (some with bodies), within the limit of what one turn's
    /// lines may hold: past it the call fails with `TurnTooLarge` before anything is written.
    pub(crate) fn append_lines(
        &mut self,
        number: u64,
        frames: Vec<Out>,
    ) -> Result<Vec<crate::turnlog::Written>> {
        let add: u64 = frames
            .iter()
            .filter_map(|f| f.header.line.as_ref())
            .map(|l| serde_json::to_vec(l).map_or(0, |b| b.len() as u64 + 1))
            .sum();
        let len = self.current.as_ref().map_or(0, |c| c.journal_len);
        if len + add > MAX_JOURNAL_BYTES {
            return Err(CheckpointError::TurnTooLarge {
                turn: number,
                limit: MAX_JOURNAL_BYTES / (1024 * 1024),
            });
        }
        let slices = self.log_append(number, frames)?;
        if let Some(cur) = self.current.as_mut() {
            cur.journal_len += add;
        }
        Ok(slices)
    }

    /// Turn `n`'s `meta.json` written whole (atomically) from memory, then its journal removed:
    /// for a turn of the directory format (`turns/N/`) an earlier build left with its journal. A
    /// crash in between leaves both, which read the same (see [`JournalLine`]). A record that
    /// would be larger than a reader accepts is not written: the journal stays, and is read with
    /// it.
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
    /// as `line` frames; and `state.json` when something it holds changed that no frame records.
    pub(crate) fn flush_pending(&mut self) -> Result<()> {
        let dirty = self.current.as_ref().is_some_and(|c| !c.after_dirty.is_empty());
        if dirty {
            let lines = self.pending_after_lines();
            self.append_journal(&lines)?;
            if let Some(cur) = self.current.as_mut() {
                cur.after_dirty.clear();
            }
        }
        self.write_state_if_needed()
    }

    /// Writes `state.json` when a proof was dropped (or a transaction's write of it failed):
    /// after-images alone need no write, the log holds them.
    pub(crate) fn write_state_if_needed(&mut self) -> Result<()> {
        if self.state_must_write.load(Ordering::Relaxed) {
            self.write_state()?;
            self.state_must_write.store(false, Ordering::Relaxed);
        }
        Ok(())
    }
}
