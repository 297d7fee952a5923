//! What a restore plan shows of each file's text (SPEC §5.2): the unified diff from the file on
//! disk to the bytes the commit writes, computed once, here, for every frontend.
//!
//! - A file the commit writes or deletes (for a conflicted file: what `overwrite` does) gets the
//!   diff of its current bytes to its target (a deletion: to nothing; a file made again: from
//!   nothing), with its line counts. Any other file (unchanged, or a conflict no choice writes)
//!   gets an empty diff.
//! - The bytes are those planning read to hash: the memo keeps them while a plan diffs
//!   (`memo.rs`), so a file is read once. Whatever was not kept (a digest the memo already
//!   knew) is read again and held to the SHA-256 the plan recorded.
//! - A side that is not UTF-8, holds a NUL byte or is over [`MAX_DIFF_INPUT`] is binary.
//! - What a plan's diffs may cost is bounded ([`DiffBudget`]): each file's text is cut at
//!   `file_cap` and all files' at `text` (`diff_truncated`, counts whole); once `input` bytes were
//!   diffed or diffing took `time`, the remaining files are not diffed (`diff_deferred`).
//!   Either way, [`Sidecar::plan_file_diff`] gives one file's whole diff on request.

use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use retrace_diff::{diff_sides, Side, MAX_DIFF_INPUT};
use retrace_fsutil::{copy_hashed, RelPath};
use retrace_protocol::{FileAction, PlanDiff, PlanFileDiff, PLAN_DIFF_CAP};

use crate::error::{CheckpointError, IoContext, Result};
use crate::forward::ForwardAt;
use crate::fsio::open_existing;
use crate::images::{ImageSource, TargetImage};
use crate::layout::{blob_rel_path, payload_rel};
use crate::memo::{HashMemo, Kept};
use crate::model::{Before, Image, Payload};
use crate::plan::{overwritable, PlannedFile, RestorePlan};
use crate::sidecar::Sidecar;

/// The most bytes of diff text one plan carries, all files together (4 MiB).
pub const PLAN_DIFF_TEXT_BUDGET: usize = 4 * 1024 * 1024;
/// The most bytes (both sides of every file) one plan diffs (64 MiB).
pub const PLAN_DIFF_INPUT_BUDGET: u64 = 64 * 1024 * 1024;
/// The longest one plan spends diffing (reading what it did not keep, and diffing): 0.5 s. The
/// file being diffed when it runs out finishes (at most [`retrace_diff::DIFF_TIMEOUT`] more).
pub const PLAN_DIFF_TIME_BUDGET: Duration = Duration::from_millis(500);

/// What the diffs of one plan may cost; past a bound, diffs are cut or not computed, and the
/// whole diff of a file is had on request ([`crate::CheckpointStore::plan_file_diff`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiffBudget {
    /// The most bytes of one file's diff text ([`PLAN_DIFF_CAP`]).
    pub file_cap: usize,
    /// The most bytes of diff text of all files together ([`PLAN_DIFF_TEXT_BUDGET`]); past it,
    /// diffs are cut to nothing, their counts still whole.
    pub text: usize,
    /// The most bytes diffed, both sides of every file ([`PLAN_DIFF_INPUT_BUDGET`]); past it,
    /// files are not diffed (`diff_deferred`).
    pub input: u64,
    /// The longest diffing may take ([`PLAN_DIFF_TIME_BUDGET`]); past it, files are not diffed.
    pub time: Duration,
}

impl Default for DiffBudget {
    fn default() -> Self {
        DiffBudget {
            file_cap: PLAN_DIFF_CAP,
            text: PLAN_DIFF_TEXT_BUDGET,
            input: PLAN_DIFF_INPUT_BUDGET,
            time: PLAN_DIFF_TIME_BUDGET,
        }
    }
}

/// The diffs of one plan being made: its budget and what was spent of it.
#[derive(Debug)]
pub(crate) struct Diffing {
    budget: DiffBudget,
    text: usize,
    input: u64,
    time: Duration,
}

impl Diffing {
    pub(crate) fn new(budget: DiffBudget) -> Diffing {
        Diffing {
            budget,
            text: 0,
            input: 0,
            time: Duration::ZERO,
        }
    }

    /// Whether the budget for diffing is spent: no file is diffed any more.
    fn spent(&self) -> bool {
        self.input >= self.budget.input || self.time >= self.budget.time
    }

    /// The largest file whose bytes the memo keeps for a diff now (0: none).
    pub(crate) fn keep_up_to(&self) -> u64 {
        if self.spent() {
            0
        } else {
            MAX_DIFF_INPUT as u64
        }
    }
}

/// One side of a diff, as read.
enum Bytes {
    Absent,
    Read(Vec<u8>),
    TooLarge,
}

impl Bytes {
    fn side(&self) -> Side<'_> {
        match self {
            Bytes::Absent => Side::Absent,
            Bytes::Read(b) => Side::Bytes(b),
            Bytes::TooLarge => Side::TooLarge,
        }
    }

    fn len(&self) -> u64 {
        match self {
            Bytes::Read(b) => b.len() as u64,
            _ => 0,
        }
    }
}

/// Whether committing `f` writes its target (`Some(true)`) or deletes it (`Some(false)`), with
/// `overwrite` for a conflicted file; `None` when no choice changes it.
fn writes(f: &PlannedFile) -> Option<bool> {
    match (&f.conflict, f.action) {
        (None, FileAction::Write) => Some(true),
        (None, FileAction::Delete) => Some(false),
        (None, _) => None,
        (Some(c), _) if overwritable(c.reason) => Some(f.target.image.existed),
        (Some(_), _) => None,
    }
}

/// A diff's text and counts, or binary.
fn plan_diff_of(old: &Bytes, new: &Bytes, cap: usize) -> PlanDiff {
    match diff_sides(old.side(), new.side(), cap) {
        Some(d) => PlanDiff {
            text: d.text,
            added: d.added,
            removed: d.removed,
            binary: false,
            truncated: d.truncated,
            deferred: false,
        },
        None => PlanDiff {
            binary: true,
            ..PlanDiff::default()
        },
    }
}

/// Reads at most [`MAX_DIFF_INPUT`] bytes of `r` (from `from`): `TooLarge` past it, else the
/// bytes, held to `sha` when given (`PlanMoved` for workspace path `path` when they are not those).
fn read_side(r: impl Read, from: &Path, sha: Option<&str>, path: &str) -> Result<Bytes> {
    let mut bytes = Vec::new();
    let got = copy_hashed(r.take(MAX_DIFF_INPUT as u64 + 1), Some(&mut bytes)).at("read", from)?;
    if bytes.len() > MAX_DIFF_INPUT {
        return Ok(Bytes::TooLarge);
    }
    if sha.is_some_and(|s| s != got.sha256) {
        return Err(CheckpointError::PlanMoved { path: path.into() });
    }
    Ok(Bytes::Read(bytes))
}

impl Sidecar {
    /// The diff of planned file `f` within what is left of `d`'s budget, from the bytes `memo`
    /// kept where it kept them. A side that cannot be read (or no longer holds what the plan
    /// hashed) leaves the diff for a request (`diff_deferred`).
    pub(crate) fn plan_diff(&self, f: &PlannedFile, memo: &mut HashMemo, d: &mut Diffing) -> PlanDiff {
        let deferred = PlanDiff {
            deferred: true,
            ..PlanDiff::default()
        };
        if writes(f).is_none() {
            return PlanDiff::default();
        }
        if d.spent() {
            return deferred;
        }
        let started = Instant::now();
        let cap = d.budget.file_cap.min(d.budget.text.saturating_sub(d.text));
        let out = match self.sides(f, Some(memo)) {
            Ok(Some((old, new))) => {
                d.input += old.len() + new.len();
                plan_diff_of(&old, &new, cap)
            }
            Ok(None) => PlanDiff::default(),
            Err(_) => deferred,
        };
        d.time += started.elapsed();
        d.text += out.text.len();
        out
    }

    /// The whole diff of the file of `plan` shown as `path` (never cut), its bytes read now and
    /// held to what the plan saw: `PlanMoved` when they changed since.
    pub(crate) fn plan_file_diff(&self, plan: &RestorePlan, path: &str) -> Result<PlanFileDiff> {
        let f = plan
            .files
            .iter()
            .find(|f| f.shown == path)
            .ok_or_else(|| CheckpointError::UnknownFile {
                turn: plan.plan.turn,
                path: path.into(),
            })?;
        let diff = match self.sides(f, None)? {
            Some((old, new)) => plan_diff_of(&old, &new, usize::MAX),
            None => PlanDiff::default(),
        };
        Ok(PlanFileDiff {
            path: path.into(),
            diff,
        })
    }

    /// The current bytes of `f` and those committing it leaves (`None` when no choice changes
    /// it), taken from `memo` where it kept them.
    fn sides(&self, f: &PlannedFile, mut memo: Option<&mut HashMemo>) -> Result<Option<(Bytes, Bytes)>> {
        let (Some(writes), Some(rel), Some(current), Some(root)) =
            (writes(f), &f.rel, &f.current, self.root.as_deref())
        else {
            return Ok(None);
        };
        let old = current_bytes(root, rel, current, memo.as_deref_mut())?;
        let new = match writes {
            true => self.target_bytes(&f.target, &f.shown, memo)?,
            false => Bytes::Absent,
        };
        Ok(Some((old, new)))
    }

    /// The bytes a restore writes for `t`, from `memo` where it kept them, else read and held to
    /// its SHA-256.
    fn target_bytes(&self, t: &TargetImage, shown: &str, memo: Option<&mut HashMemo>) -> Result<Bytes> {
        if !t.image.existed {
            return Ok(Bytes::Absent);
        }
        if t.size.is_some_and(|s| s > MAX_DIFF_INPUT as u64) {
            return Ok(Bytes::TooLarge);
        }
        let at = self.kept_at(t);
        if let Some(b) = memo.zip(at.as_ref()).and_then(|(m, at)| m.take_kept(at)) {
            return Ok(Bytes::Read(b));
        }
        let from = match at {
            Some(Kept::File(p) | Kept::Slice(p, _)) => p,
            None => self.dir.clone(),
        };
        read_side(self.open_image(t)?, &from, t.image.sha256.as_deref(), shown)
    }

    /// Where the memo keeps the bytes of `t` when planning read them.
    fn kept_at(&self, t: &TargetImage) -> Option<Kept> {
        Some(match &t.source {
            ImageSource::Turn(n, i) => match &self.turns.get(n)?.files.get(*i)?.before {
                Before::Present {
                    payload: Payload::File(idx),
                    ..
                } => Kept::File(self.dir.join(payload_rel(*n, *idx))),
                Before::Present {
                    payload: Payload::Log(s),
                    ..
                } => {
                    let t = self.turns.get(n)?;
                    Kept::Slice(self.dir.join(&t.record_path), s.offset)
                }
                Before::Present {
                    payload: Payload::Blob(h),
                    ..
                } => Kept::File(self.dir.join(blob_rel_path(h))),
                _ => return None,
            },
            ImageSource::Forward(ForwardAt::Pack { path, slice }) => Kept::Slice(path.clone(), slice.offset),
            ImageSource::Forward(ForwardAt::Blob(p)) => Kept::File(p.clone()),
            ImageSource::Workspace(rel) => Kept::File(rel.under(self.root.as_deref()?)),
            ImageSource::None => return None,
        })
    }
}

/// The bytes of the file at `rel` now, from `memo` where it kept them, else read and held to
/// `current` (the image the plan saw there).
fn current_bytes(root: &Path, rel: &RelPath, current: &Image, memo: Option<&mut HashMemo>) -> Result<Bytes> {
    if !current.existed {
        return Ok(Bytes::Absent);
    }
    let abs = rel.under(root);
    if let Some(b) = memo.and_then(|m| m.take_kept(&Kept::File(abs.clone()))) {
        return Ok(Bytes::Read(b));
    }
    let shown = rel.to_lossy();
    let Some((file, md)) = open_existing(&abs).at("open", &abs)? else {
        return Err(CheckpointError::PlanMoved { path: shown });
    };
    if md.len() > MAX_DIFF_INPUT as u64 {
        return Ok(Bytes::TooLarge);
    }
    read_side(file, &abs, current.sha256.as_deref(), &shown)
}
