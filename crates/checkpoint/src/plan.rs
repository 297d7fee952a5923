//! Restore plans (SPEC §5.2): the timeline, the restore set and the per-file checks, in that order.
//! Planning reads the workspace and the sidecar and changes nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use retrace_fsutil::{sha256_bytes, RelPath};
use retrace_protocol::{
    CodePlan, Conflict, ConflictReason, Coverage, FileAction, GapReason, PlanFile, PlanGap,
};

use crate::blobs::blob_rel_path;
use crate::error::{CheckpointError, Result};
use crate::memo::HashMemo;
use crate::model::{encode_inline, Before, EntryPath, Format, Image, Payload, Source as TurnSource, Turn};
use crate::store::CheckpointStore;

/// Where the bytes of a restore image come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ImageSource {
    /// Entry `index` of a turn's record.
    Turn(u64, usize),
    /// A transaction's forward image (a blob).
    Blob(String),
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
    /// What planning hashed, for the commit's re-plan.
    pub(crate) memo: HashMemo,
}

/// An event on a path's timeline: a turn's entry (the turn, the entry's index), or a transaction's
/// forward image.
enum Event<'a> {
    Entry(&'a Turn, usize),
    Forward(&'a crate::tx::TxImage),
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

/// A point on the timeline: legacy records (no sequence) come first, by turn number.
type Pos = (u8, u64, u64);

impl RestorePlan {
    /// Conflicted files that block a commit under `refuse` (unsafe paths never block: they are
    /// never written under any choice).
    pub fn blocking_conflicts(&self) -> usize {
        self.plan
            .conflicts
            .iter()
            .filter(|c| c.reason != ConflictReason::PathUnsafe)
            .count()
    }

    /// Whether a commit with `opts` may go ahead, decided in one place for every caller: blocking
    /// conflicts under `refuse` are [`CheckpointError::Refused`], then a plan that spans
    /// untracked changes without `confirm` is [`CheckpointError::ConfirmationRequired`].
    pub fn check_commit(&self, opts: crate::commit::CommitOptions) -> Result<()> {
        if self.blocking_conflicts() > 0 && opts.on_conflict == retrace_protocol::OnConflict::Refuse {
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

impl CheckpointStore {
    /// Plans a code restore to the state the workspace had when turn `n` started.
    pub fn plan_restore(&self, n: u64) -> Result<RestorePlan> {
        self.plan_restore_with(n, HashMemo::default())
    }

    /// [`CheckpointStore::plan_restore`], reusing what `memo` hashed where nothing changed since.
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
        let start = t.start_seq.unwrap_or(0);
        // The earliest event of each path; its image (and payload check) only once chosen.
        let mut earliest = Earliest::new();
        let mut offer = |key: PathKey, pos: Pos, rel: Option<RelPath>, ev| {
            keep_earliest(&mut earliest, key, pos, rel, ev)
        };
        for turn in &spanned {
            for (i, f) in turn.files.iter().enumerate() {
                let pos = position(turn, f.seq, i);
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
            .filter(|m| m.state.happened() && m.seq > start)
        {
            for (i, tg) in m.targets.iter().enumerate() {
                let Ok(rel) = tg.rel() else { continue };
                offer(
                    PathKey::Safe(rel.clone()),
                    (1, m.seq, i as u64),
                    Some(rel),
                    Event::Forward(&tg.forward),
                );
            }
        }
        let mut order: Vec<(Pos, String, Option<RelPath>, TargetImage)> = earliest
            .into_iter()
            .map(|(k, (p, r, ev))| {
                let img = match ev {
                    Event::Entry(turn, i) => self.turn_image(turn, i, &mut memo),
                    Event::Forward(fwd) => self.forward_image(fwd, &mut memo),
                };
                (p, k.shown(), r, img)
            })
            .collect();
        order.sort_by_key(|a| a.0);
        let unsafe_paths = gap_paths(&spanned);
        let files = order
            .into_iter()
            .map(|(_, shown, rel, img)| self.check(&root, rel, shown, img, &unsafe_paths, &mut memo))
            .collect();
        Ok(self.finish_plan(PlanKind::Turn(n), n, &spanned, files, memo))
    }

    /// Plans the revert of one file to its state before the session first touched it (SPEC §5.6).
    pub fn plan_file_revert(&self, path: &std::path::Path) -> Result<RestorePlan> {
        self.plan_file_revert_with(path, HashMemo::default())
    }

    /// [`CheckpointStore::plan_file_revert`], reusing what `memo` hashed where nothing changed since.
    pub(crate) fn plan_file_revert_with(
        &self,
        path: &std::path::Path,
        mut memo: HashMemo,
    ) -> Result<RestorePlan> {
        let root = self.root.clone().ok_or(CheckpointError::NoTurn)?;
        let rel = RelPath::normalize(&root, path)?;
        let mut best: Option<(Pos, u64, TargetImage)> = None;
        for turn in self.turns.values() {
            if let Some(i) = turn.entry_index(&rel) {
                let pos = position(turn, turn.files[i].seq, i);
                if best.as_ref().is_none_or(|(p, _, _)| pos < *p) {
                    best = Some((pos, turn.number, self.turn_image(turn, i, &mut memo)));
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
        let relevant: Vec<&Turn> = spanned
            .into_iter()
            .filter(|t| t.entry_index(&rel).is_some())
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
        RestorePlan {
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
        if unsafe_paths.contains(&rel.to_lossy()) || has_symlink(root, &rel) {
            out.conflict = Some(conflict(ConflictReason::PathUnsafe, None, None, &out.target));
            return out;
        }
        let current = match memo.image_of(&rel.under(root)) {
            Ok(c) => c,
            Err(_) => {
                out.conflict = Some(conflict(ConflictReason::PathUnsafe, None, None, &out.target));
                return out;
            }
        };
        out.current = Some(current.clone());
        // 2. already the target
        if same_image(&out.target.image, &current) {
            out.action = FileAction::Unchanged;
            return out;
        }
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

    /// The image Retrace wrote last at `rel`: `state.json`, else the newest recorded after-image.
    pub(crate) fn proof(&self, rel: &RelPath) -> Option<Image> {
        if let Some(o) = self.state.owned.get(rel) {
            return Some(o.image.clone());
        }
        self.turns
            .values()
            .rev()
            .filter_map(|t| t.entry_index(rel).map(|i| &t.files[i]))
            .find_map(|f| f.after.clone())
    }

    /// The restore image of entry `i` of `turn`, with its payload checked.
    fn turn_image(&self, turn: &Turn, i: usize, memo: &mut HashMemo) -> TargetImage {
        let f = &turn.files[i];
        let legacy = turn.format == Format::V1 && turn.source != TurnSource::V3;
        match &f.before {
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
                        let p = self
                            .turn_dir(turn.number)
                            .join("files")
                            .join(format!("{idx:04}.before"));
                        memo.verify_file(&p, sha.as_deref())
                    }
                    Payload::Blob(h) => memo.verify_file(&self.dir.join(blob_rel_path(h)), Some(h)),
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
        }
    }

    /// A transaction's forward image as a restore image.
    pub(crate) fn forward_image(&self, fwd: &crate::tx::TxImage, memo: &mut HashMemo) -> TargetImage {
        if !fwd.existed {
            return TargetImage {
                image: Image {
                    existed: false,
                    sha256: None,
                    mode: None,
                },
                size: None,
                source: ImageSource::None,
                legacy: false,
                unusable: None,
            };
        }
        let sha = fwd.sha256.clone().unwrap_or_default();
        let p = self.forward_blob(&sha);
        let size = fs::metadata(&p).map(|m| m.len()).ok();
        TargetImage {
            image: fwd.into(),
            size,
            unusable: memo.verify_file(&p, Some(&sha)),
            source: ImageSource::Blob(sha),
            legacy: false,
        }
    }

    /// Whether any transaction is not yet terminal.
    pub fn has_open_transaction(&self) -> bool {
        self.transactions.values().any(|m| !m.state.is_terminal())
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

fn position(turn: &Turn, seq: Option<u64>, i: usize) -> Pos {
    match seq {
        Some(s) => (1, s, i as u64),
        None => (0, turn.number, i as u64),
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

/// Whether `rel` or any of its ancestors is a symlink, or an ancestor is not a directory.
pub(crate) fn has_symlink(root: &std::path::Path, rel: &RelPath) -> bool {
    for anc in rel.ancestors_top_down() {
        match fs::symlink_metadata(anc.under(root)) {
            Ok(m) if m.file_type().is_symlink() || !m.is_dir() => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    matches!(fs::symlink_metadata(rel.under(root)), Ok(m) if m.file_type().is_symlink() || m.is_dir())
}

/// Existence, SHA-256 and mode equal (a target without a recorded mode matches any mode).
pub(crate) fn same_image(target: &Image, current: &Image) -> bool {
    if target.existed != current.existed {
        return false;
    }
    if !target.existed {
        return true;
    }
    target.sha256.is_some()
        && target.sha256 == current.sha256
        && (target.mode.is_none() || target.mode == current.mode)
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
