//! After a tool ran (SPEC §4): its after-images, the gaps recorded during a turn, and the journal
//! lines that carry both (and the intents journaled before a tool runs) to the turn's journal.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use retrace_fsutil::RelPath;
use retrace_protocol::Gap;

use crate::error::{CheckpointError, Result};
use crate::fsio::image_of;
use crate::model::{add_gap, same_image, Image};
use crate::record::{JournalAfter, JournalLine};
use crate::state::Owned;
use crate::store::CheckpointStore;
use crate::to_record::gap_to_raw;

impl CheckpointStore {
    /// Records the after-image of each path (successful tool or not): on this turn's entry and in
    /// `state.json`, each with a new mutation sequence.
    pub fn capture_after(&mut self, paths: &[PathBuf]) -> Result<()> {
        let unknown: Vec<(PathBuf, Option<Image>)> = paths.iter().map(|p| (p.clone(), None)).collect();
        self.capture_after_known(&unknown)
    }

    /// After a tool that failed: a path is recorded as Retrace's only where the disk holds what the
    /// tool meant to leave there (`intent`: it wrote, then failed). Anything else is not its
    /// work — most often the user changed the file between the preview and the run, which is why
    /// the tool refused — and the path keeps the proof it had: claiming what is there would let a
    /// later restore overwrite the user's bytes without a conflict.
    pub fn capture_after_failed(&mut self, paths: &[(PathBuf, Option<Image>)]) -> Result<()> {
        let root = self.require_root()?;
        let mut landed = Vec::new();
        for (p, intent) in paths {
            let Some(intent) = intent else { continue };
            let rel = RelPath::normalize(&root, p)?;
            if let Ok(now) = image_of(&rel.under(&root)) {
                if same_image(intent, &now) {
                    landed.push((p.clone(), Some(now)));
                }
            }
        }
        if landed.is_empty() {
            return Ok(());
        }
        self.capture_after_known(&landed)
    }

    /// [`CheckpointStore::capture_after`], taking the image given with a path as what is there
    /// (the intent of a tool that succeeded) instead of reading the file; `None`: read it.
    pub fn capture_after_known(&mut self, paths: &[(PathBuf, Option<Image>)]) -> Result<()> {
        let root = self.require_root()?;
        let Some(number) = self.current_turn() else {
            return Err(CheckpointError::NoTurn);
        };
        let mut changed = false;
        for (p, known) in paths {
            let rel = RelPath::normalize(&root, p)?;
            let read = match known {
                Some(img) => Ok(img.clone()),
                None => image_of(&rel.under(&root)),
            };
            let image = match read {
                Ok(img) => img,
                Err(_) => {
                    // Unreadable after the write: Retrace cannot prove what is there. No frame
                    // says so: `state.json` does, at the end of the turn.
                    if self.sidecar.state.owned.remove(&rel).is_some() {
                        self.state_must_write.store(true, Ordering::Relaxed);
                    }
                    changed = true;
                    continue;
                }
            };
            self.sidecar.state.mutation_seq += 1;
            let seq = self.sidecar.state.mutation_seq;
            let index = self.entry_index_in(number, &rel);
            if let (Some(turn), Some(i)) = (self.sidecar.turns.get_mut(&number), index) {
                if let Some(f) = turn.files.get_mut(i) {
                    f.after = Some(image.clone());
                }
            }
            self.sidecar.state.owned.insert(rel, Owned { image, seq });
            changed = true;
        }
        if changed {
            // Nothing is written now: the log picks the after-images up at the turn's next append
            // (next capture, gap, or the end of the turn), and they are the proofs from then on
            // (`state.json` is not rewritten for them). A crash before then leaves the intents
            // appended before the tool ran, which recovery settles against the disk
            // (`intents.rs`): no fsync after each tool call.
            let indices: Vec<usize> = paths
                .iter()
                .filter_map(|(p, _)| RelPath::normalize(&root, p).ok())
                .filter_map(|rel| self.entry_index_in(number, &rel))
                .collect();
            if let Some(cur) = self.current.as_mut() {
                cur.after_dirty.extend(indices);
            }
        }
        Ok(())
    }

    /// Index of `rel`'s entry in turn `number`: from the current turn's map, else by a scan.
    pub(crate) fn entry_index_in(&self, number: u64, rel: &RelPath) -> Option<usize> {
        match self.current.as_ref() {
            Some(cur) if cur.number == number => cur.touched.get(rel).copied().flatten(),
            _ => self.sidecar.turns.get(&number).and_then(|t| t.entry_index(rel)),
        }
    }

    /// Adds a gap to the current turn (at most one per reason and path).
    pub fn record_gap(&mut self, gap: Gap) -> Result<()> {
        let Some(number) = self.current_turn() else {
            return Err(CheckpointError::NoTurn);
        };
        let Some(turn) = self.sidecar.turns.get_mut(&number) else {
            return Ok(());
        };
        let before = turn.gaps.clone();
        let Some(now) = add_gap(&mut turn.gaps, gap) else {
            return Ok(());
        };
        let mut lines = self.pending_after_lines();
        lines.push(JournalLine {
            gap: Some(gap_to_raw(&now)),
            ..JournalLine::default()
        });
        let appended = self.append_journal(&lines);
        if appended.is_err() {
            // Not recorded: forget it, so that a retry records it.
            if let Some(turn) = self.sidecar.turns.get_mut(&number) {
                turn.gaps = before;
            }
        } else if let Some(cur) = self.current.as_mut() {
            cur.after_dirty.clear();
        }
        appended
    }

    /// Whether the current turn's gaps hold `gap` already (its reason and path; for a shell gap,
    /// its command line among the gap's lines).
    pub fn has_gap(&self, gap: &Gap) -> bool {
        let Some(turn) = self.current_turn().and_then(|n| self.sidecar.turns.get(&n)) else {
            return false;
        };
        turn.gaps.iter().any(|g| {
            g.reason == gap.reason
                && g.path == gap.path
                && match (&g.detail, &gap.detail) {
                    (Some(d), Some(line)) if gap.reason.is_side_effect() => d.lines().any(|l| l == line),
                    _ => true,
                }
        })
    }

    /// Takes back `gap` of the current turn, recorded in case the process died before what it
    /// stands for was captured: a shell gap loses `gap`'s command line (and goes with its last
    /// one), another gap of its reason and path goes. Journaled, so a kill before this keeps it.
    pub fn settle_gap(&mut self, gap: &Gap) -> Result<()> {
        let Some(number) = self.current_turn() else {
            return Err(CheckpointError::NoTurn);
        };
        let Some(turn) = self.sidecar.turns.get_mut(&number) else {
            return Ok(());
        };
        let before = turn.gaps.clone();
        let Some(i) = turn
            .gaps
            .iter()
            .position(|g| g.reason == gap.reason && g.path == gap.path)
        else {
            return Ok(());
        };
        let line = match (&turn.gaps[i].detail, &gap.detail) {
            (Some(d), Some(drop)) if gap.reason.is_side_effect() => {
                let rest: Vec<&str> = d.lines().filter(|l| l != drop).collect();
                if rest.len() == d.lines().count() {
                    return Ok(());
                }
                if rest.is_empty() {
                    None
                } else {
                    Some(rest.join("\n"))
                }
            }
            _ => None,
        };
        let journal = match line {
            Some(rest) => {
                turn.gaps[i].detail = Some(rest);
                JournalLine {
                    gap: Some(gap_to_raw(&turn.gaps[i])),
                    ..JournalLine::default()
                }
            }
            None => {
                let gone = turn.gaps.remove(i);
                JournalLine {
                    gap: Some(gap_to_raw(&gone)),
                    settled: true,
                    ..JournalLine::default()
                }
            }
        };
        let mut lines = self.pending_after_lines();
        lines.push(journal);
        let appended = self.append_journal(&lines);
        if appended.is_err() {
            if let Some(turn) = self.sidecar.turns.get_mut(&number) {
                turn.gaps = before;
            }
        } else if let Some(cur) = self.current.as_mut() {
            cur.after_dirty.clear();
        }
        appended
    }

    /// Journal lines for `intents`: each path's entry index from `new` (entries this call adds)
    /// or from the paths the turn touched before. A path without an entry (unreadable, a gap
    /// only) gets none: nothing of it can be restored anyway.
    pub(crate) fn intent_lines(
        &self,
        intents: &[(RelPath, &Image, Option<u64>)],
        new: &BTreeMap<RelPath, usize>,
    ) -> Vec<JournalLine> {
        let touched = self.current.as_ref().map(|c| &c.touched);
        intents
            .iter()
            .filter_map(|(rel, img, temps_from)| {
                let index = new
                    .get(rel)
                    .copied()
                    .or_else(|| touched.and_then(|t| t.get(rel).copied().flatten()))?;
                Some(JournalLine {
                    index: Some(index),
                    after: Some(JournalAfter {
                        existed: img.existed,
                        sha256: img.sha256.clone().filter(|_| img.existed),
                        mode: img.mode.filter(|_| img.existed),
                        intended: true,
                        pid: Some(self.opts.writer_pid),
                        tmp: *temps_from,
                        seq: None,
                    }),
                    ..JournalLine::default()
                })
            })
            .collect()
    }

    /// Journal lines for the after-images recorded since the journal last got them.
    pub(crate) fn pending_after_lines(&self) -> Vec<JournalLine> {
        let Some(cur) = self.current.as_ref() else {
            return Vec::new();
        };
        let Some(turn) = self.sidecar.turns.get(&cur.number) else {
            return Vec::new();
        };
        cur.after_dirty
            .iter()
            .filter_map(|&i| {
                let f = turn.files.get(i)?;
                let a = f.after.as_ref()?;
                let seq = f
                    .path
                    .safe()
                    .and_then(|rel| self.sidecar.state.owned.get(rel))
                    .filter(|o| &o.image == a)
                    .map(|o| o.seq);
                Some(JournalLine {
                    index: Some(i),
                    after: Some(JournalAfter {
                        existed: a.existed,
                        sha256: a.sha256.clone(),
                        mode: a.mode,
                        intended: false,
                        pid: None,
                        tmp: None,
                        seq,
                    }),
                    ..JournalLine::default()
                })
            })
            .collect()
    }
}
