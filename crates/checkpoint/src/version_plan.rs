//! Restoring one version of one file (SPEC §5.8): a one-file plan whose target is any version of
//! the file's history, with the checks, transaction and undo of a single-file revert (§5.6).

use std::path::Path;

use retrace_fsutil::RelPath;

use crate::error::{CheckpointError, Result};
use crate::forward::ForwardAt;
use crate::history::{Located, VersionBytes};
use crate::images::{ImageSource, TargetImage};
use crate::layout::end_pack_rel;
use crate::memo::HashMemo;
use crate::model::{Image, Turn};
use crate::plan::{PlanKind, RestorePlan};
use crate::plan_diff::{DiffBudget, Diffing};
use crate::restore_set::start_file;
use crate::sidecar::Sidecar;
use crate::tx::PackSlice;

impl Sidecar {
    /// Plans restoring version `version` (from 1) of `path`'s history, with its diff within
    /// `diffs`.
    pub(crate) fn plan_file_version(
        &self,
        path: &Path,
        version: u32,
        diffs: DiffBudget,
    ) -> Result<RestorePlan> {
        self.plan_file_version_with(path, version, HashMemo::default(), Some(diffs))
    }

    /// [`Sidecar::plan_file_version`], reusing what `memo` hashed where nothing changed since;
    /// without a diff when `diffs` is `None`.
    pub(crate) fn plan_file_version_with(
        &self,
        path: &Path,
        version: u32,
        mut memo: HashMemo,
        diffs: Option<DiffBudget>,
    ) -> Result<RestorePlan> {
        let root = self.root.clone().ok_or(CheckpointError::NoTurn)?;
        let rel = RelPath::normalize(&root, path)?;
        let mut diffing = diffs.map(Diffing::new);
        start_file(&mut memo, diffing.as_ref());
        let history = self.file_history(&rel);
        let touched = history
            .iter()
            .any(|l| l.version.turn.is_some() || l.version.transaction.is_some());
        if !touched {
            return Err(CheckpointError::UnknownFile {
                turn: 0,
                path: rel.to_lossy(),
            });
        }
        let Some(located) = history.iter().find(|l| l.version.version == version) else {
            return Err(CheckpointError::UnknownVersion {
                path: rel.to_lossy(),
                version,
                count: u32::try_from(history.len()).unwrap_or(u32::MAX),
            });
        };
        let target = self.version_image(&rel, located, &mut memo)?;
        // The turns whose changes to the file this takes back (those from the version's turn on,
        // or every turn that touched it): across a shell command, it needs confirmation.
        let from = located
            .version
            .turn
            .or_else(|| {
                self.turns
                    .values()
                    .find(|t| t.entry_index(&rel).is_some())
                    .map(|t| t.number)
            })
            .unwrap_or(0);
        let shown = rel.to_lossy();
        let relevant: Vec<&Turn> = self
            .turns
            .range(from..)
            .map(|(_, t)| t)
            .filter(|t| {
                t.entry_index(&rel).is_some()
                    || t.gaps.iter().any(|g| match g.path.as_deref() {
                        Some(p) => p == shown,
                        None => g.reason.is_side_effect(),
                    })
            })
            .collect();
        let unsafe_paths = crate::restore_set::gap_paths(&relevant);
        let file = self.check(
            &root,
            Some(rel.clone()),
            shown,
            target,
            &mut crate::check::UnsafeAt::new(&unsafe_paths),
            &mut memo,
        );
        let checked = self.finish_file(file, &mut memo, diffing.as_mut());
        Ok(self.finish_plan(
            PlanKind::Version(rel, version),
            from,
            &relevant,
            vec![checked],
            memo,
        ))
    }

    /// The version as a restore image: where its bytes are, checked.
    fn version_image(&self, rel: &RelPath, l: &Located, memo: &mut HashMemo) -> Result<TargetImage> {
        let pack = |at: ForwardAt, memo: &mut HashMemo| {
            let sha = l.image.sha256.clone().unwrap_or_default();
            TargetImage {
                image: l.image.clone(),
                size: at.size(),
                unusable: memo.verify_forward(&at, &sha),
                source: ImageSource::Forward(at),
                legacy: false,
            }
        };
        Ok(match &l.bytes {
            VersionBytes::Absent => TargetImage {
                image: Image::absent(),
                size: None,
                source: ImageSource::None,
                legacy: false,
                unusable: None,
            },
            VersionBytes::Before(n, i) => {
                let turn = self.turns.get(n).ok_or(CheckpointError::UnknownTurn(*n))?;
                self.turn_image(turn, *i, memo)?
            }
            VersionBytes::End(n, s) => pack(
                ForwardAt::Pack {
                    path: match self.turns.get(n) {
                        Some(t) => self.end_store(t),
                        None => self.dir.join(end_pack_rel(*n)),
                    },
                    slice: PackSlice {
                        offset: s.offset,
                        length: s.length,
                    },
                },
                memo,
            ),
            VersionBytes::Forward(at) => pack(at.clone(), memo),
            VersionBytes::Current => TargetImage {
                image: l.image.clone(),
                size: l.version.size,
                source: ImageSource::Workspace(rel.clone()),
                legacy: false,
                unusable: None,
            },
            VersionBytes::Lost(why) => TargetImage {
                image: l.image.clone(),
                size: l.version.size,
                source: ImageSource::None,
                legacy: false,
                unusable: Some(why.clone()),
            },
        })
    }
}
