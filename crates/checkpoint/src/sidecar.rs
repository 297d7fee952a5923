//! A session's sidecar as loaded, apart from the operations that change it: its turns,
//! `state.json` and transaction manifests, and what was odd about them. Everything that only reads
//! (the listing, before-images, restore plans, fsck) is answered from it; the store
//! ([`crate::CheckpointStore`]) owns one, and each of its operations changes it as it writes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use retrace_protocol::{FsckProblem, Severity};

use crate::error::{CheckpointError, Result};
use crate::layout::{manifest_rel, STATE_FILE, TURNS_DIR, TX_DIR};
use crate::load::load_sidecar;
use crate::manifests::load_manifests;
use crate::model::{Image, Turn};
use crate::rewind::RewindRecord;
use crate::state::{Owned, StoreState};
use crate::tx::{Manifest, TxKind, TxState};

/// The largest mutation sequence a store that is written to may hold (2^62).
const MAX_SEQ: u64 = 1 << 62;

/// A sidecar as loaded, and as the store's writes have changed it since.
#[derive(Debug)]
pub(crate) struct Sidecar {
    /// The sidecar directory.
    pub(crate) dir: PathBuf,
    /// The canonical workspace root, when known.
    pub(crate) root: Option<PathBuf>,
    /// The live turns.
    pub(crate) turns: BTreeMap<u64, Turn>,
    /// `turns/N` directories without their marker: dead, never resurrected.
    pub(crate) tombstones: BTreeSet<u64>,
    /// The largest turn number found anywhere.
    pub(crate) max_turn: Option<u64>,
    /// `state.json`, with every committed transaction applied.
    pub(crate) state: StoreState,
    /// The manifests, by id.
    pub(crate) transactions: BTreeMap<String, Manifest>,
    /// What loading (and recovery) found odd: part of every fsck.
    pub(crate) load_problems: Vec<FsckProblem>,
    /// A manifest that stops writes (unreadable, or a foreign transaction in flight): its file name
    /// and why.
    pub(crate) blocked_by: Option<(String, String)>,
    /// A sidecar file carrying a mutation sequence above [`MAX_SEQ`] (its path relative to the
    /// sidecar, and the value): damaged or forged; the store is then not written to.
    pub(crate) seq_beyond: Option<(String, u64)>,
    /// The log's segments, by name.
    pub(crate) log_segments: BTreeMap<u64, crate::logread::SegInfo>,
    /// The log's turns that did not end, with their lines (recovery settles them).
    pub(crate) log_unended: BTreeMap<u64, Vec<u8>>,
    /// Below which turn no code restore is offered, and why (a log segment not read whole).
    pub(crate) log_unknown: Vec<(u64, String)>,
}

impl Sidecar {
    /// Loads the sidecar `dir` (of the workspace `root`, when known): every turn record, `state.json`
    /// and every manifest, with what was odd about them. Nothing is written.
    pub(crate) fn load(dir: &Path, root: Option<PathBuf>) -> Result<Sidecar> {
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
        // A segment `state.json` lists that is not there was lost (retention unlists a segment
        // before it removes it): what its turns did is not known.
        let mut log_unknown = loaded.log_unknown;
        let mut missing_upto = 0u64;
        for name in &state.log_segments {
            if loaded.log_segments.contains_key(name) {
                continue;
            }
            let rel = crate::seglog::segment_rel(*name);
            problems.push(FsckProblem {
                path: rel.clone(),
                problem:
                    "the log segment is missing though state.json lists it: the turns recorded there are lost"
                        .into(),
                severity: Severity::Error,
                turn: None,
                file: None,
            });
            let next = loaded
                .log_segments
                .keys()
                .find(|n| *n > name)
                .copied()
                .unwrap_or(u64::MAX);
            log_unknown.push((
                next,
                format!("the log segment `{rel}` is missing: what the turns recorded there did is not known"),
            ));
            missing_upto = missing_upto.max(match next {
                u64::MAX => name.saturating_add(crate::logread::SEGMENT_TURNS as u64 - 1),
                n => n - 1,
            });
        }
        // Retention's deletions the log records (FORMATS.md §19.5).
        if let Some(p) = loaded.log_pruned {
            state.pruned_through = Some(state.pruned_through.map_or(p, |q| q.max(p)));
        }
        // Retrace's writes the log recorded after `state.json` was last written: the proofs.
        for (rel, image, seq) in &loaded.log_owned {
            if state.owned.get(rel).is_none_or(|o| o.seq < *seq) {
                state.owned.insert(
                    rel.clone(),
                    Owned {
                        image: image.clone(),
                        seq: *seq,
                    },
                );
            }
            state.mutation_seq = state.mutation_seq.max(*seq);
        }
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
        let mut sidecar = Sidecar {
            dir: dir.to_path_buf(),
            root,
            turns: loaded.turns,
            tombstones: loaded.tombstones,
            // The numbers a lost segment may have held are never handed out again.
            max_turn: match (loaded.max_turn, missing_upto) {
                (m, 0) => m,
                (m, upto) => Some(m.map_or(upto, |m| m.max(upto))),
            },
            state,
            load_problems: problems,
            blocked_by: blocking.map(|b| (b.name, b.why)),
            seq_beyond,
            transactions,
            log_segments: loaded.log_segments,
            log_unended: loaded.log_unended,
            log_unknown,
        };
        // Committed transactions are Retrace's own writes, even if state.json lagged behind them.
        // Oldest first: an undo's proofs (which may say "not Retrace's") must land after the
        // restore it undid.
        let mut happened: Vec<Manifest> = sidecar
            .transactions
            .values()
            .filter(|m| m.state.happened())
            .cloned()
            .collect();
        happened.sort_by_key(|m| m.seq);
        for m in &happened {
            sidecar.apply_committed(m);
        }
        Ok(sidecar)
    }

    /// Records a committed transaction's writes as Retrace's own (ownership proofs, sequence).
    ///
    /// A restore or revert leaves its restore images as Retrace's last writes. An undo leaves what
    /// the proofs were before the transaction it undoes (its targets' `ownedAfter`): a hand edit or
    /// another session's write that it puts back is again not Retrace's (SPEC §5.5). A path whose
    /// proof is newer than the transaction (a later write, already in `state.json`) keeps it, so
    /// manifests may be applied again, oldest first, on top of `state.json` at every open.
    pub(crate) fn apply_committed(&mut self, m: &Manifest) {
        self.state.mutation_seq = self.state.mutation_seq.max(m.seq);
        for t in &m.targets {
            let Ok(rel) = t.rel() else { continue };
            // An undo of an earlier build recorded no proofs, and left the bytes it put back as
            // Retrace's own at its sequence: read as "not Retrace's", that entry included.
            let old_undo = m.kind == TxKind::Undo && !m.owned_recorded;
            let newer = self
                .state
                .owned
                .get(&rel)
                .is_none_or(|o| o.seq < m.seq || (old_undo && o.seq == m.seq));
            if !newer {
                continue;
            }
            let owns = match m.kind {
                TxKind::Undo => t.owned_after.as_ref().map(Owned::from),
                _ => Some(Owned {
                    image: Image::from(&t.restore),
                    seq: m.seq,
                }),
            };
            match owns {
                Some(o) => {
                    self.state.owned.insert(rel, o);
                }
                None => {
                    self.state.owned.remove(&rel);
                }
            }
        }
    }

    /// The manifests, by id.
    pub(crate) fn transactions(&self) -> impl Iterator<Item = &Manifest> {
        self.transactions.values()
    }

    /// The newest transaction that happened (or is still being committed): the end of the line
    /// of restores, undos and redos that `undo` and `redo` walk.
    fn newest_transaction(&self) -> Option<&Manifest> {
        self.transactions
            .values()
            .filter(|m| m.state.happened() || m.state == TxState::Committing)
            .max_by_key(|m| m.seq)
    }

    /// The transaction that `undo` would undo now: the last committed restore, revert or rewind
    /// (a redo of one included), when no turn or write happened since.
    pub(crate) fn undo_target(&self) -> Option<&Manifest> {
        let last = self.newest_transaction()?;
        let undoable = last.state == TxState::Committed
            && matches!(last.kind, TxKind::Restore | TxKind::Revert | TxKind::Rewind)
            && last.seq == self.state.mutation_seq;
        undoable.then_some(last)
    }

    /// The transaction that `redo` would apply again now (SPEC §5.5): the one the newest undo took
    /// back, while that undo is the newest of Retrace's transactions. Turns and captures since do
    /// not end it (the redo is then checked against the files as they are); another restore,
    /// revert or rewind does. A conversation-only rewind is undone without a transaction of its
    /// own: it is the redo target while it is the newest transaction and `undone`.
    pub(crate) fn redo_target(&self) -> Option<&Manifest> {
        let last = self.newest_transaction()?;
        match (last.kind, last.state) {
            (TxKind::Undo, TxState::Committed) => {
                let orig = self.transactions.get(last.undoes.as_deref()?)?;
                let undone = orig.state == TxState::Undone
                    && orig.undone_by.as_deref() == Some(last.id.as_str())
                    && orig.kind != TxKind::Undo;
                undone.then_some(orig)
            }
            (TxKind::Restore | TxKind::Revert | TxKind::Rewind, TxState::Undone)
                if last.targets.is_empty() && last.undone_by.is_none() =>
            {
                Some(last)
            }
            _ => None,
        }
    }

    /// The rewind record transaction `m` keeps (`extra`): `None` when it keeps none (a restore of
    /// files only); an error naming its manifest when the record cannot be read (a version this
    /// build does not know, a damaged record), which is never taken for "files only".
    pub(crate) fn rewind_record(&self, m: &Manifest) -> Result<Option<RewindRecord>> {
        let Some(stored) = &m.extra else {
            return Ok(None);
        };
        RewindRecord::from_stored(stored)
            .map(Some)
            .map_err(|why| CheckpointError::Corrupt {
                path: self.dir.join(manifest_rel(&m.id)),
                detail: format!(
                    "its rewind record (`extra`) cannot be read: {why}; what the rewind did to the conversation is unknown, so it is not undone"
                ),
            })
    }

    /// Whether any transaction is not yet terminal.
    pub(crate) fn has_open_transaction(&self) -> bool {
        self.transactions.values().any(|m| !m.state.is_terminal())
    }
}

/// Why a mutation sequence above [`MAX_SEQ`] stops writes.
pub(crate) fn seq_beyond_text(seq: u64) -> String {
    format!("it carries the mutation sequence {seq}, beyond any a sidecar reaches (2^62): it was damaged or forged, and writing on would wrap the timeline around")
}

/// What a turn number with no number after it says.
fn last_turn_text(turn: u64) -> String {
    format!("turn number {turn} leaves no number for a next turn (a damaged record or state.json)")
}
