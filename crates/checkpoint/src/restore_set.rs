//! Planning a restore (SPEC §5.2): the restore set — each path's earliest event on the timeline
//! since the turn started, whose image it gets back — checked file by file, and the plan the user
//! sees. A single-file revert is the same with one path.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use retrace_fsutil::RelPath;
use retrace_protocol::{CodePlan, Coverage, FileAction, GapReason, PlanDiff, PlanFile, PlanGap};

use crate::error::{CheckpointError, Result};
use crate::images::TargetImage;
use crate::memo::HashMemo;
use crate::model::{EntryPath, Turn};
use crate::plan::{overwritable, PlanKind, PlannedFile, RestorePlan};
use crate::plan_diff::{DiffBudget, Diffing};
use crate::sidecar::Sidecar;
use crate::timeline::{Pos, Timeline};
use crate::tx::Manifest;

/// An event on a path's timeline: a turn's entry (the turn, the entry's index), or a transaction's
/// forward image.
enum Event<'a> {
    Entry(&'a Turn, usize),
    Forward(&'a Manifest, usize),
}

type Earliest<'a> = BTreeMap<PathKey, (Pos, Option<RelPath>, Event<'a>)>;

/// Keeps `ev` as `key`'s event unless an earlier one is kept already.
fn keep_earliest<'a>(map: &mut Earliest<'a>, key: PathKey, pos: Pos, rel: Option<RelPath>, ev: Event<'a>) {
    match map.get(&key) {
        Some((p, _, _)) if *p <= pos => {}
        _ => {
            map.insert(key, (pos, rel, ev));
        }
    }
}

/// A file of a plan as checked, with its diff.
type Checked = (PlannedFile, PlanDiff);

impl Sidecar {
    /// Plans a code restore to the state the workspace had when turn `n` started, each file with
    /// its diff within `diffs` (`plan_diff.rs`).
    pub(crate) fn plan_restore(&self, n: u64, diffs: DiffBudget) -> Result<RestorePlan> {
        self.plan_restore_with(n, HashMemo::default(), Some(diffs))
    }

    /// [`Sidecar::plan_restore`], reusing what `memo` hashed where nothing changed since; without
    /// diffs when `diffs` is `None` (the commit's re-plan, which nobody sees).
    pub(crate) fn plan_restore_with(
        &self,
        n: u64,
        mut memo: HashMemo,
        diffs: Option<DiffBudget>,
    ) -> Result<RestorePlan> {
        let root = self.root.clone().ok_or(CheckpointError::NoTurn)?;
        let t = self.turns.get(&n).ok_or(CheckpointError::UnknownTurn(n))?;
        let (offered, why) = self.code_restore_offered(t);
        if !offered {
            return Err(CheckpointError::NotOffered {
                turn: n,
                why: why.unwrap_or_default(),
            });
        }
        let spanned: Vec<&Turn> = self.turns.range(n..).map(|(_, t)| t).collect();
        let timeline = Timeline::of(&self.turns);
        let start = timeline.start(t);
        // The earliest event of each path; its image (and payload check) only once chosen.
        let mut earliest = Earliest::new();
        let mut offer = |key: PathKey, pos: Pos, rel: Option<RelPath>, ev| {
            keep_earliest(&mut earliest, key, pos, rel, ev)
        };
        for turn in &spanned {
            for (i, f) in turn.files.iter().enumerate() {
                let pos = timeline.entry(turn, i);
                offer(
                    key_of(&f.path),
                    pos,
                    f.path.safe().cloned(),
                    Event::Entry(turn, i),
                );
            }
        }
        for m in self
            .transactions
            .values()
            .filter(|m| m.state.happened() && Timeline::transaction(m.seq, 0) >= start)
        {
            for (i, tg) in m.targets.iter().enumerate() {
                let Ok(rel) = tg.rel() else { continue };
                offer(
                    PathKey::Safe(rel.clone()),
                    Timeline::transaction(m.seq, i),
                    Some(rel),
                    Event::Forward(m, i),
                );
            }
        }
        // In the order shown, each file read, checked and diffed before the next (so the bytes
        // kept for its diff are held for one file at a time).
        let mut order: Vec<(Pos, PathKey, Option<RelPath>, Event)> = earliest
            .into_iter()
            .map(|(k, (p, r, ev))| (p, k, r, ev))
            .collect();
        order.sort_by_key(|a| a.0);
        let unsafe_paths = gap_paths(&spanned);
        let mut diffing = diffs.map(Diffing::new);
        let mut files: Vec<Checked> = Vec::with_capacity(order.len());
        let mut unsafe_at = crate::check::UnsafeAt::new(&unsafe_paths);
        for (_, key, rel, ev) in order {
            start_file(&mut memo, diffing.as_ref());
            let img = match ev {
                Event::Entry(turn, i) => self.turn_image(turn, i, &mut memo)?,
                Event::Forward(m, i) => self.forward_image(m, i, &mut memo),
            };
            let f = self.check(&root, rel, key.shown(), img, &mut unsafe_at, &mut memo);
            files.push(self.finish_file(f, &mut memo, diffing.as_mut()));
        }
        // Legacy renames: each destination is deleted only with its source written.
        let moves: Vec<(RelPath, RelPath)> = spanned
            .iter()
            .flat_map(|t| t.files.iter())
            .filter_map(|f| match (f.path.safe(), &f.moved_to) {
                (Some(src), Some(EntryPath::Safe(dst))) => Some((src.clone(), dst.clone())),
                _ => None,
            })
            .collect();
        for (src, dst) in moves {
            if let Some((f, _)) = files.iter_mut().find(|(f, _)| f.rel.as_ref() == Some(&dst)) {
                f.deleted_with = Some(src);
            }
        }
        Ok(self.finish_plan(PlanKind::Turn(n), n, &spanned, files, memo))
    }

    /// Plans the revert of one file to its state before the session first touched it (SPEC §5.6),
    /// with its diff within `diffs`.
    pub(crate) fn plan_file_revert(&self, path: &Path, diffs: DiffBudget) -> Result<RestorePlan> {
        self.plan_file_revert_with(path, HashMemo::default(), Some(diffs))
    }

    /// [`Sidecar::plan_file_revert`], reusing what `memo` hashed where nothing changed since;
    /// without a diff when `diffs` is `None`.
    pub(crate) fn plan_file_revert_with(
        &self,
        path: &Path,
        mut memo: HashMemo,
        diffs: Option<DiffBudget>,
    ) -> Result<RestorePlan> {
        let root = self.root.clone().ok_or(CheckpointError::NoTurn)?;
        let rel = RelPath::normalize(&root, path)?;
        let mut diffing = diffs.map(Diffing::new);
        start_file(&mut memo, diffing.as_ref());
        let mut best: Option<(Pos, u64, TargetImage)> = None;
        let timeline = Timeline::of(&self.turns);
        for turn in self.turns.values() {
            if let Some(i) = turn.entry_index(&rel) {
                let pos = timeline.entry(turn, i);
                if best.as_ref().is_none_or(|(p, _, _)| pos < *p) {
                    best = Some((pos, turn.number, self.turn_image(turn, i, &mut memo)?));
                }
            }
        }
        let Some((_, turn_no, img)) = best else {
            return Err(CheckpointError::UnknownFile {
                turn: 0,
                path: rel.to_lossy(),
            });
        };
        let spanned: Vec<&Turn> = self.turns.range(turn_no..).map(|(_, t)| t).collect();
        let unsafe_paths = gap_paths(&spanned);
        let file = self.check(
            &root,
            Some(rel.clone()),
            rel.to_lossy(),
            img,
            &mut crate::check::UnsafeAt::new(&unsafe_paths),
            &mut memo,
        );
        let (mut file, diff) = self.finish_file(file, &mut memo, diffing.as_mut());
        // The destination of a legacy rename is deleted only with its source written, which a
        // single-file revert of it never does: it stays.
        file.deleted_with = self
            .turns
            .values()
            .flat_map(|t| t.files.iter())
            .find(|f| f.moved_to.as_ref().and_then(EntryPath::safe) == Some(&rel))
            .and_then(|f| f.path.safe().cloned());
        // The turns that bear on this file: those that touched it, and those with a gap that may
        // have (a shell command, which names no path, or a gap on this path): a revert across
        // such a gap needs confirmation like a restore (SPEC §5.6).
        let shown = rel.to_lossy();
        let relevant: Vec<&Turn> = spanned
            .into_iter()
            .filter(|t| {
                t.entry_index(&rel).is_some()
                    || t.gaps.iter().any(|g| match g.path.as_deref() {
                        Some(p) => p == shown,
                        None => g.reason.is_side_effect(),
                    })
            })
            .collect();
        Ok(self.finish_plan(PlanKind::File(rel), turn_no, &relevant, vec![(file, diff)], memo))
    }

    /// A file checked: its diff (when the plan has diffs), the bytes kept for it dropped.
    pub(crate) fn finish_file(
        &self,
        f: PlannedFile,
        memo: &mut HashMemo,
        diffing: Option<&mut Diffing>,
    ) -> Checked {
        let diff = match diffing {
            Some(d) => self.plan_diff(&f, memo, d),
            None => PlanDiff::default(),
        };
        memo.drop_kept();
        (f, diff)
    }

    pub(crate) fn finish_plan(
        &self,
        kind: PlanKind,
        n: u64,
        spanned: &[&Turn],
        checked: Vec<Checked>,
        mut memo: HashMemo,
    ) -> RestorePlan {
        memo.keep_up_to(0);
        let (files, diffs): (Vec<PlannedFile>, Vec<PlanDiff>) = checked.into_iter().unzip();
        let mut gaps = Vec::new();
        let mut requires_confirmation = false;
        let mut coverage = Coverage::None;
        for t in spanned {
            let c = t.coverage();
            if matches!(c, Coverage::Legacy | Coverage::Partial) || t.expired || !t.gaps.is_empty() {
                requires_confirmation = true;
            }
            coverage = weaker(coverage, c);
            for g in &t.gaps {
                gaps.push(PlanGap {
                    turn: t.number,
                    reason: g.reason.clone(),
                    tool: g.tool.clone(),
                    path: g.path.clone(),
                    detail: g.detail.clone(),
                });
            }
        }
        let plan_files: Vec<PlanFile> = files
            .iter()
            .zip(diffs)
            .map(|(f, diff)| PlanFile {
                path: f.shown.clone(),
                action: f.action,
                size: (f.action == FileAction::Write).then_some(f.target.size).flatten(),
                conflict: f.conflict.clone(),
                on_overwrite: f.conflict.as_ref().map(|c| {
                    match (overwritable(c.reason), f.target.image.existed) {
                        (false, _) => FileAction::Skip,
                        (true, true) => FileAction::Write,
                        (true, false) => FileAction::Delete,
                    }
                }),
                diff,
            })
            .collect();
        let conflicts = files.iter().filter_map(|f| f.conflict.clone()).collect();
        // One file's plan: the directories above it that the turns made, whichever of their
        // files names them (each is named once, by the first file made below it): the revert
        // removes those it leaves empty, in whatever order the files are reverted.
        let above: Option<Vec<RelPath>> = match &kind {
            PlanKind::File(p) | PlanKind::Version(p, _) => Some(p.ancestors_top_down()),
            PlanKind::Turn(_) => None,
        };
        let created_dirs: BTreeSet<RelPath> = spanned
            .iter()
            .flat_map(|t| t.files.iter())
            .flat_map(|f| f.created_dirs.iter())
            .filter(|d| above.as_ref().is_none_or(|a| a.contains(d)))
            .cloned()
            .collect();
        RestorePlan {
            created_dirs: created_dirs.into_iter().collect(),
            kind,
            plan: CodePlan {
                turn: n,
                generation: self.state.mutation_seq,
                coverage,
                requires_confirmation,
                gaps,
                files: plan_files,
                conflicts,
            },
            files,
            memo,
        }
    }
}

/// Before a file is read: the memo keeps its bytes for its diff while the budget lasts.
pub(crate) fn start_file(memo: &mut HashMemo, diffing: Option<&Diffing>) {
    memo.keep_up_to(diffing.map_or(0, Diffing::keep_up_to));
}

/// A path of the restore set. Safe paths are keyed by their exact bytes: two non-UTF-8 names can
/// share one lossy spelling, and each must be restored (SPEC §3.1: restore uses the bytes).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum PathKey {
    Safe(RelPath),
    Unsafe(String),
}

impl PathKey {
    fn shown(&self) -> String {
        match self {
            PathKey::Safe(r) => r.to_lossy(),
            PathKey::Unsafe(s) => s.clone(),
        }
    }
}

fn key_of(p: &EntryPath) -> PathKey {
    match p {
        EntryPath::Safe(r) => PathKey::Safe(r.clone()),
        EntryPath::Unsafe(s) => PathKey::Unsafe(s.clone()),
    }
}

/// Paths recorded with a symlink or hard-link gap in `turns`: restoring them is unsafe.
pub(crate) fn gap_paths(turns: &[&Turn]) -> BTreeSet<String> {
    turns
        .iter()
        .flat_map(|t| t.gaps.iter())
        .filter(|g| matches!(g.reason, GapReason::Symlink | GapReason::Hardlink))
        .filter_map(|g| g.path.clone())
        .collect()
}

fn weaker(a: Coverage, b: Coverage) -> Coverage {
    let rank = |c: Coverage| match c {
        Coverage::Legacy => 0,
        Coverage::Partial => 1,
        Coverage::Complete => 2,
        Coverage::None => 3,
    };
    if rank(b) < rank(a) {
        b
    } else {
        a
    }
}
