//! Restore plans (SPEC §5.2): the timeline, the restore set and the per-file checks, in that order.
//! Planning reads the workspace and the sidecar and changes nothing.

use std::collections::{BTreeMap, BTreeSet};

use retrace_fsutil::{sha256_bytes, RelPath};
use retrace_protocol::{
    CodePlan, Conflict, ConflictReason, Coverage, FileAction, GapReason, PlanFile, PlanGap,
};

use crate::error::{CheckpointError, Result};
use crate::fsio::{standing, Standing};
use crate::layout::{blob_rel_path, payload_rel};
use crate::memo::HashMemo;
use crate::model::{
    encode_inline, same_image, Before, EntryPath, Format, Image, Payload, Source as TurnSource, Turn,
};
use crate::sidecar::Sidecar;

/// Where the bytes of a restore image come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ImageSource {
    /// Entry `index` of a turn's record.
    Turn(u64, usize),
    /// A transaction's forward image.
    Forward(crate::forward::ForwardAt),
    /// A workspace file's current bytes: where a legacy rename moved them (`moved_to`).
    Workspace(RelPath),
    /// Nothing to read: the image is "did not exist".
    None,
}

/// The state a path is restored to, and where its bytes are.
#[derive(Debug, Clone)]
pub(crate) struct TargetImage {
    pub(crate) image: Image,
    pub(crate) size: Option<u64>,
    pub(crate) source: ImageSource,
    /// From a v1 record: no proof can exist.
    pub(crate) legacy: bool,
    /// Why the bytes cannot be had, when they cannot.
    pub(crate) unusable: Option<String>,
}

/// One file of a plan, with what commit needs.
#[derive(Debug, Clone)]
pub(crate) struct PlannedFile {
    pub(crate) rel: Option<RelPath>,
    /// For the destination of a legacy rename: the source, which the transaction must write for
    /// this file to be deleted (the bytes move back; never one without the other).
    pub(crate) deleted_with: Option<RelPath>,
    pub(crate) shown: String,
    pub(crate) target: TargetImage,
    pub(crate) current: Option<Image>,
    pub(crate) action: FileAction,
    pub(crate) conflict: Option<Conflict>,
}

/// What a plan restores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanKind {
    /// Every file touched since turn N started, to its state then.
    Turn(u64),
    /// One file, to its state before the session first touched it.
    File(RelPath),
}

/// A restore plan: the DTO the user sees plus what commit needs. Single-use.
#[derive(Debug, Clone)]
pub struct RestorePlan {
    /// What it restores.
    pub kind: PlanKind,
    /// What it will do, as the user sees it.
    pub plan: CodePlan,
    pub(crate) files: Vec<PlannedFile>,
    /// Directories the restored entries' tools created (recorded at capture): the commit removes
    /// those it leaves empty.
    pub(crate) created_dirs: Vec<RelPath>,
    /// What planning hashed, for the commit's re-plan.
    pub(crate) memo: HashMemo,
}

/// An event on a path's timeline: a turn's entry (the turn, the entry's index), or a transaction's
/// forward image.
enum Event<'a> {
    Entry(&'a Turn, usize),
    Forward(&'a crate::tx::Manifest, usize),
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

/// A point on the timeline (see [`Timeline`]): the mutation sequence (or, for a turn without one,
/// the start of the next turn that has one), then 0 for such a turn's entries and 1 for events
/// that have their own sequence, then the turn number, then the index in its record or manifest.
type Pos = (u64, u8, u64, u64);

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

impl RestorePlan {
    /// Whether every file of the plan is an unsafe path: nothing can be written under any choice,
    /// and a commit is no success (SPEC §5.2).
    fn only_unsafe(&self) -> bool {
        !self.plan.files.is_empty()
            && self.plan.files.iter().all(|f| {
                f.conflict
                    .as_ref()
                    .is_some_and(|c| c.reason == ConflictReason::PathUnsafe)
            })
    }

    /// Conflicted files that block a commit under `refuse`. Unsafe paths never block (they are
    /// never written under any choice) unless they are all there is.
    pub fn blocking_conflicts(&self) -> usize {
        if self.only_unsafe() {
            return self.plan.conflicts.len();
        }
        self.plan
            .conflicts
            .iter()
            .filter(|c| c.reason != ConflictReason::PathUnsafe)
            .count()
    }

    /// Whether a commit with `opts` may go ahead, decided in one place for every caller: blocking
    /// conflicts under `refuse` (or only unsafe paths, under any choice) are
    /// [`CheckpointError::Refused`], then a plan that spans untracked changes without `confirm` is
    /// [`CheckpointError::ConfirmationRequired`].
    pub fn check_commit(&self, opts: crate::commit::CommitOptions) -> Result<()> {
        let refuse = opts.on_conflict == retrace_protocol::OnConflict::Refuse;
        if (self.blocking_conflicts() > 0 && refuse) || self.only_unsafe() {
            return Err(CheckpointError::Refused {
                conflicts: self.plan.conflicts.clone(),
            });
        }
        if self.plan.requires_confirmation && !opts.confirm {
            return Err(CheckpointError::ConfirmationRequired);
        }
        Ok(())
    }
}

impl Sidecar {
    /// Plans a code restore to the state the workspace had when turn `n` started.
    pub(crate) fn plan_restore(&self, n: u64) -> Result<RestorePlan> {
        self.plan_restore_with(n, HashMemo::default())
    }

    /// [`Sidecar::plan_restore`], reusing what `memo` hashed where nothing changed since.
    pub(crate) fn plan_restore_with(&self, n: u64, mut memo: HashMemo) -> Result<RestorePlan> {
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
        let mut order: Vec<(Pos, String, Option<RelPath>, TargetImage)> = earliest
            .into_iter()
            .map(|(k, (p, r, ev))| {
                let img = match ev {
                    Event::Entry(turn, i) => self.turn_image(turn, i, &mut memo)?,
                    Event::Forward(m, i) => self.forward_image(m, i, &mut memo),
                };
                Ok((p, k.shown(), r, img))
            })
            .collect::<Result<_>>()?;
        order.sort_by_key(|a| a.0);
        let unsafe_paths = gap_paths(&spanned);
        let mut files: Vec<PlannedFile> = order
            .into_iter()
            .map(|(_, shown, rel, img)| self.check(&root, rel, shown, img, &unsafe_paths, &mut memo))
            .collect();
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
            if let Some(f) = files.iter_mut().find(|f| f.rel.as_ref() == Some(&dst)) {
                f.deleted_with = Some(src);
            }
        }
        Ok(self.finish_plan(PlanKind::Turn(n), n, &spanned, files, memo))
    }

    /// Plans the revert of one file to its state before the session first touched it (SPEC §5.6).
    pub(crate) fn plan_file_revert(&self, path: &std::path::Path) -> Result<RestorePlan> {
        self.plan_file_revert_with(path, HashMemo::default())
    }

    /// [`Sidecar::plan_file_revert`], reusing what `memo` hashed where nothing changed since.
    pub(crate) fn plan_file_revert_with(
        &self,
        path: &std::path::Path,
        mut memo: HashMemo,
    ) -> Result<RestorePlan> {
        let root = self.root.clone().ok_or(CheckpointError::NoTurn)?;
        let rel = RelPath::normalize(&root, path)?;
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
            &unsafe_paths,
            &mut memo,
        );
        let mut file = file;
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
                        None => g.reason == GapReason::BashSideEffect,
                    })
            })
            .collect();
        Ok(self.finish_plan(PlanKind::File(rel), turn_no, &relevant, vec![file], memo))
    }

    fn finish_plan(
        &self,
        kind: PlanKind,
        n: u64,
        spanned: &[&Turn],
        files: Vec<PlannedFile>,
        memo: HashMemo,
    ) -> RestorePlan {
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
            .map(|f| PlanFile {
                path: f.shown.clone(),
                action: f.action,
                size: (f.action == FileAction::Write).then_some(f.target.size).flatten(),
                conflict: f.conflict.clone(),
                on_overwrite: f.conflict.as_ref().map(|c| {
                    match (crate::commit::overwritable(c.reason), f.target.image.existed) {
                        (false, _) => FileAction::Skip,
                        (true, true) => FileAction::Write,
                        (true, false) => FileAction::Delete,
                    }
                }),
            })
            .collect();
        let conflicts = files.iter().filter_map(|f| f.conflict.clone()).collect();
        let created_dirs: BTreeSet<RelPath> = spanned
            .iter()
            .flat_map(|t| t.files.iter())
            .filter(|f| match &kind {
                PlanKind::File(p) => f.path.safe() == Some(p),
                PlanKind::Turn(_) => true,
            })
            .flat_map(|f| f.created_dirs.iter().cloned())
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

    /// The per-file check of SPEC §5.2, in order; the first rule that applies decides.
    pub(crate) fn check(
        &self,
        root: &std::path::Path,
        rel: Option<RelPath>,
        shown: String,
        target: TargetImage,
        unsafe_paths: &BTreeSet<String>,
        memo: &mut HashMemo,
    ) -> PlannedFile {
        let mut out = PlannedFile {
            rel: rel.clone(),
            deleted_with: None,
            shown: shown.clone(),
            target,
            current: None,
            action: FileAction::Skip,
            conflict: None,
        };
        let conflict = |reason, current: Option<&Image>, proof: Option<&Image>, t: &TargetImage| Conflict {
            path: shown.clone(),
            reason,
            checkpoint_sha256: t.image.sha256.clone(),
            last_owned_sha256: proof.and_then(|p| p.sha256.clone()),
            current_sha256: current.and_then(|c| c.sha256.clone()),
            checkpoint_mode: t.image.mode,
            current_mode: current.and_then(|c| c.mode),
        };
        // 1. unsafe path
        let Some(rel) = rel else {
            out.conflict = Some(conflict(ConflictReason::PathUnsafe, None, None, &out.target));
            return out;
        };
        if unsafe_paths.contains(&rel.to_lossy()) {
            out.conflict = Some(conflict(ConflictReason::PathUnsafe, None, None, &out.target));
            return out;
        }
        // What stands there, typed before anything is opened (nothing is opened in a way that can
        // block: see `retrace_fsutil::open_read`).
        // Nothing inside a `.git` directory is ever written (SPEC §1): a record that names such
        // a path (a legacy one, a forged one) is unsafe, whatever it holds.
        if rel.as_path().components().any(|c| c.as_os_str() == ".git") {
            out.conflict = Some(conflict(ConflictReason::PathUnsafe, None, None, &out.target));
            return out;
        }
        let stands = standing(root, &rel);
        let current = match stands {
            Standing::Unsafe => {
                out.conflict = Some(conflict(ConflictReason::PathUnsafe, None, None, &out.target));
                return out;
            }
            // Nothing can be at the path while a file stands where a directory was.
            Standing::FileAbove => Ok(Image::absent()),
            Standing::Special(_) => Err(ConflictReason::TypeChange),
            // Something other than a file appeared since `standing` looked (`InvalidInput`), or
            // the file cannot be read (permissions, an I/O error): never written over.
            Standing::Plain => memo.image_of(&rel.under(root)).map_err(|e| match e.kind() {
                std::io::ErrorKind::InvalidInput => ConflictReason::TypeChange,
                _ => ConflictReason::Unreadable,
            }),
        };
        // 2. already the target
        if let Ok(c) = &current {
            if same_image(&out.target.image, c) {
                out.current = Some(c.clone());
                out.action = FileAction::Unchanged;
                return out;
            }
        }
        // 2b. something else stands there, or what is there cannot be read: user changes, never
        // written over (SPEC §5.2 rule 2b).
        let current = match (current, stands) {
            (Ok(_), Standing::FileAbove) | (Err(ConflictReason::TypeChange), _) => {
                out.conflict = Some(conflict(ConflictReason::TypeChange, None, None, &out.target));
                return out;
            }
            (Err(reason), _) => {
                out.conflict = Some(conflict(reason, None, None, &out.target));
                return out;
            }
            (Ok(c), _) => c,
        };
        out.current = Some(current.clone());
        // 3. no usable payload
        if out.target.image.existed && out.target.unusable.is_some() {
            out.conflict = Some(conflict(
                ConflictReason::MissingPayload,
                Some(&current),
                None,
                &out.target,
            ));
            return out;
        }
        // 4. no ownership proof
        let Some(proof) = self.proof(&rel) else {
            let reason = if out.target.legacy {
                ConflictReason::LegacyUnverified
            } else {
                ConflictReason::Unverified
            };
            out.conflict = Some(conflict(reason, Some(&current), None, &out.target));
            return out;
        };
        // 5–7. the disk moved away from what Retrace wrote
        let reason = match (proof.existed, current.existed) {
            (false, true) => Some(ConflictReason::DeletedAndRecreated),
            (true, false) => Some(ConflictReason::ExternalChange),
            (false, false) => None,
            (true, true) if proof.mode.is_some() && proof.mode != current.mode => {
                Some(ConflictReason::ModeChange)
            }
            (true, true) if proof.sha256 != current.sha256 => Some(ConflictReason::ManualEdit),
            (true, true) => None,
        };
        if let Some(reason) = reason {
            out.conflict = Some(conflict(reason, Some(&current), Some(&proof), &out.target));
            return out;
        }
        // 8. write or delete
        out.action = if out.target.image.existed {
            FileAction::Write
        } else {
            FileAction::Delete
        };
        out
    }

    /// The image Retrace wrote last at `rel` (the ownership proof): the newest on the timeline of
    /// `state.json`'s entry and the after-images recorded in turns. `state.json` is written at the
    /// end of a turn, a turn's record at each capture: after a crash mid-turn the record can be
    /// the newer one.
    pub(crate) fn proof(&self, rel: &RelPath) -> Option<Image> {
        let timeline = Timeline::of(&self.turns);
        let owned = self
            .state
            .owned
            .get(rel)
            .map(|o| (Timeline::transaction(o.seq, usize::MAX), o.image.clone()));
        let recorded = self.turns.values().rev().find_map(|t| {
            let i = t.entry_index(rel)?;
            let after = t.files[i].after.clone()?;
            Some((timeline.entry(t, i), after))
        });
        match (owned, recorded) {
            (Some((p, a)), Some((q, b))) => Some(if q > p { b } else { a }),
            (Some((_, a)), None) | (None, Some((_, a))) => Some(a),
            (None, None) => None,
        }
    }

    /// The restore image of entry `i` of `turn`, with its payload checked. A payload the record
    /// names in a way that is never followed (a corrupt entry) is unusable: `missing_payload`,
    /// naming the record (SPEC §5.2 rule 3).
    fn turn_image(&self, turn: &Turn, i: usize, memo: &mut HashMemo) -> Result<TargetImage> {
        let f = &turn.files[i];
        let legacy = turn.format == Format::V1 && turn.source != TurnSource::V3;
        if let Some(dest) = &f.moved_to {
            return Ok(self.moved_image(dest, memo));
        }
        Ok(match &f.before {
            Before::Absent => TargetImage {
                image: Image {
                    existed: false,
                    sha256: None,
                    mode: None,
                },
                size: None,
                source: ImageSource::None,
                legacy,
                unusable: None,
            },
            Before::Present {
                sha256,
                mode,
                size,
                payload,
            } => {
                let mut sha = sha256.clone();
                let mut size = *size;
                let unusable = match payload {
                    Payload::NotKept => Some("over the size cap: bytes not kept".to_string()),
                    Payload::Expired => Some("expired by retention".to_string()),
                    Payload::Inline { text, encoding } => match encode_inline(text, encoding.as_deref()) {
                        None => Some("cannot be re-encoded".into()),
                        Some(b) => {
                            let got = sha256_bytes(&b);
                            size = Some(b.len() as u64);
                            match &sha {
                                Some(want) if *want != got => {
                                    Some("inline content does not match its SHA-256".into())
                                }
                                _ => {
                                    sha = Some(got);
                                    None
                                }
                            }
                        }
                    },
                    Payload::File(idx) => {
                        let p = self.dir.join(payload_rel(turn.number, *idx));
                        memo.verify_file(&p, sha.as_deref())
                    }
                    Payload::Blob(h) => memo.verify_file(&self.dir.join(blob_rel_path(h)), Some(h)),
                    Payload::Corrupt(why) => {
                        Some(format!("the record {} is corrupt: {why}", turn.record_path))
                    }
                };
                TargetImage {
                    image: Image {
                        existed: true,
                        sha256: sha,
                        mode: *mode,
                    },
                    size,
                    source: ImageSource::Turn(turn.number, i),
                    legacy,
                    unusable,
                }
            }
        })
    }

    /// The restore image of a legacy rename's source: the bytes its destination holds now (a
    /// plain file reached through real directories), else unusable (nothing is written or deleted).
    fn moved_image(&self, dest: &EntryPath, memo: &mut HashMemo) -> TargetImage {
        let unusable = |why: String| TargetImage {
            image: Image {
                existed: true,
                sha256: None,
                mode: None,
            },
            size: None,
            source: ImageSource::None,
            legacy: true,
            unusable: Some(why),
        };
        let (Some(root), EntryPath::Safe(d)) = (self.root.as_deref(), dest) else {
            return unusable(format!(
                "its bytes were moved to `{}`, outside the workspace",
                dest.display()
            ));
        };
        if standing(root, d) != Standing::Plain {
            return unusable(format!(
                "its bytes were moved to `{}`, which is not a plain file now",
                d.to_lossy()
            ));
        }
        match memo.image_of(&d.under(root)) {
            Ok(img) if img.existed => TargetImage {
                size: std::fs::metadata(d.under(root)).ok().map(|m| m.len()),
                image: img,
                source: ImageSource::Workspace(d.clone()),
                legacy: true,
                unusable: None,
            },
            Ok(_) => unusable(format!(
                "its bytes were moved to `{}`, which is gone",
                d.to_lossy()
            )),
            Err(e) => unusable(format!(
                "its bytes were moved to `{}`, which cannot be read: {e}",
                d.to_lossy()
            )),
        }
    }

    /// Target `i`'s forward image (of transaction `m`) as a restore image, its bytes checked.
    pub(crate) fn forward_image(
        &self,
        m: &crate::tx::Manifest,
        i: usize,
        memo: &mut HashMemo,
    ) -> TargetImage {
        let (Some(t), Some(at)) = (m.targets.get(i), self.forward_at(m, i)) else {
            return TargetImage {
                image: Image::absent(),
                size: None,
                source: ImageSource::None,
                legacy: false,
                unusable: None,
            };
        };
        let sha = t.forward.sha256.clone().unwrap_or_default();
        TargetImage {
            image: (&t.forward).into(),
            size: at.size(),
            unusable: memo.verify_forward(&at, &sha),
            source: ImageSource::Forward(at),
            legacy: false,
        }
    }
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
fn gap_paths(turns: &[&Turn]) -> BTreeSet<String> {
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
