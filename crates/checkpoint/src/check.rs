//! The per-file check of a restore plan (SPEC §5.2 rules 1–8, FORMATS §15.4): what stands at the
//! path, against the image to restore and Retrace's ownership proof, decides the file's action or
//! its conflict.

use std::collections::BTreeSet;
use std::path::Path;

use retrace_fsutil::{GitDirs, RelPath};
use retrace_protocol::{Conflict, ConflictReason, FileAction};

use crate::fsio::{standing, Standing};
use crate::images::TargetImage;
use crate::memo::HashMemo;
use crate::model::{same_image, Image};
use crate::plan::PlannedFile;
use crate::sidecar::Sidecar;
use crate::timeline::Timeline;

/// What makes a path of a plan unsafe beyond its own name: a `symlink` or `hardlink` gap the
/// spanned turns recorded for it, a git directory above it.
pub(crate) struct UnsafeAt<'a> {
    /// The paths of the spanned turns' `symlink` and `hardlink` gaps.
    pub(crate) gap_paths: &'a BTreeSet<String>,
    /// The git directories found so far, each directory looked at once per plan.
    pub(crate) git_dirs: GitDirs,
}

impl<'a> UnsafeAt<'a> {
    /// For a plan whose spanned turns' gaps name `gap_paths`.
    pub(crate) fn new(gap_paths: &'a BTreeSet<String>) -> Self {
        UnsafeAt {
            gap_paths,
            git_dirs: GitDirs::default(),
        }
    }
}

impl Sidecar {
    /// The per-file check of SPEC §5.2, in order; the first rule that applies decides.
    pub(crate) fn check(
        &self,
        root: &Path,
        rel: Option<RelPath>,
        shown: String,
        target: TargetImage,
        unsafe_at: &mut UnsafeAt<'_>,
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
        if unsafe_at.gap_paths.contains(&rel.to_lossy()) {
            out.conflict = Some(conflict(ConflictReason::PathUnsafe, None, None, &out.target));
            return out;
        }
        // What stands there, typed before anything is opened (nothing is opened in a way that can
        // block: see `retrace_fsutil::open_read`).
        // Nothing inside a `.git` directory is ever written (SPEC §1): a record that names such
        // a path (a legacy one, a forged one) is unsafe, whatever it holds.
        // Nor inside a git directory standing on its own (a bare repository, or the one
        // `git init --separate-git-dir` makes): its config and hooks run commands too.
        if rel.as_path().components().any(|c| c.as_os_str() == ".git")
            || unsafe_at.git_dirs.above(root, rel.as_path())
        {
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
}
