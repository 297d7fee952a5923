//! Settling a turn a crash cut short (SPEC §5.4): the intents its journal holds, and the temp
//! files and directories its tools' interrupted writes left in the workspace.
//!
//! Before a tool writes, its capture journals what the tool will leave at each path (an intent,
//! [`crate::record::JournalAfter::intended`]) in the same append as the before-image's entry. The
//! after-image the tool actually left reaches the journal only at the next append, so a process
//! killed between the write and that append leaves the intent as the newest line of the path.
//! When the store is next opened for writing, each such path is compared with the disk:
//!
//! - it holds the intent: the write landed, and it is Retrace's own;
//! - it holds what stood there before the intent (the previous after-image of the turn, or, for
//!   the turn's first touch, its before-image): the write never landed; the proof stays what it
//!   was before (an earlier after-image, or none from this turn);
//! - anything else: someone changed it since, and the intent stays as the proof, so a restore
//!   reports a conflict and never writes over it.
//!
//! Then the edit tools' temp files beside those paths (`.<name>.retrace-<pid>-<n>.tmp`) that the
//! crashed writer left (its process number is journaled with the intents) are removed
//! (`tool_temps.rs`), and so are the directories the turn created for a file that is not there,
//! when they are empty.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use retrace_fsutil::RelPath;

use crate::error::Result;
use crate::fsio::image_of;
use crate::layout::journal_rel;
use crate::model::{same_image, Before, Image};
use crate::record::{read_bounded_as, JournalAfter, JournalLine, MAX_JOURNAL_BYTES};
use crate::state::Owned;
use crate::store::CheckpointStore;
use crate::tool_temps::remove_tool_temps;

/// What a crashed turn's journal says of one entry: its after-image lines, in order.
type AfterLines = BTreeMap<usize, Vec<JournalAfter>>;

/// The temp file numbers a crashed turn's calls could have used, per journaling process: for each
/// `(pid, tmp)` an intent names, the numbers from `tmp` for as many intents as name it (a call
/// journals one per path it changes, and its temp files are numbered in order from `tmp`).
fn temp_numbers(lines: &AfterLines) -> BTreeMap<(u32, u64), u64> {
    let mut out: BTreeMap<(u32, u64), u64> = BTreeMap::new();
    for a in lines.values().flatten().filter(|a| a.intended) {
        if let (Some(pid), Some(tmp)) = (a.pid, a.tmp) {
            *out.entry((pid, tmp)).or_default() += 1;
        }
    }
    out
}

/// The after-image lines of `bytes`, per entry index, up to the first line that is not valid (as
/// [`crate::record::apply_journal`] stops there too).
fn after_lines(bytes: &[u8]) -> AfterLines {
    let mut out: AfterLines = BTreeMap::new();
    let mut lines = bytes.split(|b| *b == b'\n').peekable();
    while let Some(line) = lines.next() {
        if lines.peek().is_none() {
            break;
        }
        if line.is_empty() {
            continue;
        }
        let Ok(l) = serde_json::from_slice::<JournalLine>(line) else {
            break;
        };
        if let (Some(i), Some(a)) = (l.index, l.after) {
            out.entry(i).or_default().push(a);
        }
    }
    out
}

fn image_of_line(a: &JournalAfter) -> Image {
    Image {
        existed: a.existed,
        sha256: a.sha256.clone().filter(|_| a.existed),
        mode: a.mode.filter(|_| a.existed),
    }
}

/// Whether `current` is what `before` recorded.
fn is_before(before: &Before, current: &Image) -> bool {
    match before {
        Before::Absent => !current.existed,
        Before::Present { sha256, mode, .. } => {
            let img = Image {
                existed: true,
                sha256: sha256.clone(),
                mode: *mode,
            };
            same_image(&img, current)
        }
    }
}

/// How one path of a crashed turn stands.
enum Settled {
    /// Retrace left this there (the intent, or the after-image before it).
    Owned(Image),
    /// The write never landed on the turn's first touch: the turn proves nothing.
    Untouched,
    /// Neither: the intent stays (a restore reports a conflict).
    Changed,
}

impl CheckpointStore {
    /// Settles turn `n`'s intents against the workspace at `root` and removes what its tools'
    /// interrupted writes left (see the module's documentation). Called by recovery for a turn
    /// that still has its journal, before the journal is compacted. Best effort per path: what
    /// cannot be read or reached stays as it is (a proof that can only cause a conflict).
    pub(crate) fn settle_intents(&mut self, root: &Path, n: u64) -> Result<()> {
        let path = self.sidecar.dir.join(journal_rel(n));
        let Ok(bytes) = read_bounded_as(&path, MAX_JOURNAL_BYTES) else {
            return Ok(());
        };
        self.settle_intents_in(root, n, &bytes).map(drop)
    }

    /// [`CheckpointStore::settle_intents`] over the turn's lines `bytes` (its journal, or its log
    /// frames' lines). Returns each entry it settled with the after-image it now has (`None`: the
    /// write never landed on the turn's first touch).
    pub(crate) fn settle_intents_in(
        &mut self,
        root: &Path,
        n: u64,
        bytes: &[u8],
    ) -> Result<Vec<(usize, Option<Image>)>> {
        let mut settled_entries = Vec::new();
        let lines = after_lines(bytes);
        let numbers = temp_numbers(&lines);
        let mut owned: Vec<(RelPath, Image)> = Vec::new();
        let mut dirs: BTreeSet<RelPath> = BTreeSet::new();
        // Per path, the process and first temp number of its interrupted call.
        let mut temps: Vec<(RelPath, u32, u64)> = Vec::new();
        for (i, seq) in &lines {
            let Some(last) = seq.last().filter(|l| l.intended) else {
                continue;
            };
            let Some(entry) = self.sidecar.turns.get(&n).and_then(|t| t.files.get(*i)) else {
                continue;
            };
            let Some(rel) = entry.path.safe().cloned() else {
                continue;
            };
            if let (Some(pid), Some(tmp)) = (last.pid, last.tmp) {
                temps.push((rel.clone(), pid, tmp));
            }
            let Ok(current) = image_of(&rel.under(root)) else {
                continue;
            };
            let intent = image_of_line(last);
            let prev = seq
                .len()
                .checked_sub(2)
                .and_then(|k| seq.get(k))
                .map(image_of_line);
            let settled = if same_image(&intent, &current) {
                Settled::Owned(intent)
            } else {
                match prev {
                    Some(p) if same_image(&p, &current) => Settled::Owned(p),
                    Some(_) => Settled::Changed,
                    None if is_before(&entry.before, &current) => Settled::Untouched,
                    None => Settled::Changed,
                }
            };
            if !current.existed {
                dirs.extend(entry.created_dirs.iter().cloned());
            }
            let after = match settled {
                Settled::Changed => continue,
                Settled::Owned(img) => {
                    owned.push((rel, img.clone()));
                    Some(img)
                }
                Settled::Untouched => None,
            };
            if let Some(f) = self.sidecar.turns.get_mut(&n).and_then(|t| t.files.get_mut(*i)) {
                f.after = after.clone();
            }
            settled_entries.push((*i, after));
        }
        remove_tool_temps(&self.opts.fs, root, &temps, &numbers);
        if !dirs.is_empty() {
            let candidates: Vec<RelPath> = dirs.into_iter().collect();
            let empty = crate::dirs::removable_dirs(root, &candidates, &BTreeSet::new());
            self.remove_dirs(root, &empty);
        }
        if !owned.is_empty() {
            for (rel, image) in owned {
                self.sidecar.state.mutation_seq += 1;
                let seq = self.sidecar.state.mutation_seq;
                self.sidecar.state.owned.insert(rel, Owned { image, seq });
            }
            self.write_state()?;
        }
        Ok(settled_entries)
    }
}
