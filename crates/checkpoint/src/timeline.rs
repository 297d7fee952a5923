//! Retrace's writes on one line of time (SPEC §5.2): where each turn entry and each committed
//! transaction's target sits, whatever format the turn was recorded in.

use std::collections::BTreeMap;

use crate::model::Turn;

/// A point on the timeline (see [`Timeline`]): the mutation sequence (or, for a turn without one,
/// the start of the next turn that has one), then 0 for such a turn's entries and 1 for events
/// that have their own sequence, then the turn number, then the index in its record or manifest.
pub(crate) type Pos = (u64, u8, u64, u64);

/// Retrace's writes on one line of time (SPEC §5.2). Captures, restores and undos carry the
/// mutation sequence they happened at. Turns written by older formats (v1/v2, and v3 records
/// from before sequences) carry none: they are placed by turn number among the turns that have
/// one — after every event before the next such turn started, before that turn — so a legacy
/// turn N sits between turns N-1 and N+1 whatever the format of each, and never before turns
/// with smaller numbers.
pub(crate) struct Timeline {
    /// Start sequence of every turn that has one, by turn number.
    starts: BTreeMap<u64, u64>,
}

impl Timeline {
    pub(crate) fn of(turns: &BTreeMap<u64, Turn>) -> Timeline {
        let starts = turns
            .iter()
            .filter_map(|(n, t)| {
                t.start_seq
                    .or_else(|| t.files.iter().filter_map(|f| f.seq).min())
                    .map(|s| (*n, s))
            })
            .collect();
        Timeline { starts }
    }

    /// Where a turn without a sequence of its own sits: the start of the next turn that has one.
    fn anchor(&self, n: u64) -> u64 {
        n.checked_add(1)
            .and_then(|k| self.starts.range(k..).next())
            .map_or(u64::MAX, |(_, s)| *s)
    }

    /// The position of entry `i` of `turn`.
    pub(crate) fn entry(&self, turn: &Turn, i: usize) -> Pos {
        match (
            turn.files.get(i).and_then(|f| f.seq),
            self.starts.get(&turn.number),
        ) {
            (Some(seq), _) => (seq, 1, turn.number, i as u64),
            (None, Some(start)) => (*start, 1, turn.number, i as u64),
            (None, None) => (self.anchor(turn.number), 0, turn.number, i as u64),
        }
    }

    /// Where `turn` starts: every event at or after it belongs to the turn or later.
    pub(crate) fn start(&self, turn: &Turn) -> Pos {
        match self.starts.get(&turn.number) {
            Some(start) => (*start, 1, 0, 0),
            None => (self.anchor(turn.number), 0, turn.number, 0),
        }
    }

    /// The position of target `i` of a transaction committed at `seq`.
    pub(crate) fn transaction(seq: u64, i: usize) -> Pos {
        (seq, 1, 0, i as u64)
    }
}
