//! Capture of before-images the caller knows (the git backend): what each path was before a
//! command Retrace did not preview (a shell call) changed it, given as bytes from the object store
//! that held the whole workspace before the command ran. The entries are the same as the
//! previewer's (payloads made durable, journaled, first touch wins), marked `snapshot`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use retrace_fsutil::RelPath;
use retrace_protocol::{ChangeKind, Gap};

use crate::capture::{CaptureReport, Change};
use crate::error::Result;
use crate::keep::{Src, ToKeep};
use crate::model::{Before, EntryPath, FileEntry, Known, Payload};
use crate::store::CheckpointStore;

/// The capture source of an entry whose before-image came from the git backend's snapshot.
pub const SNAPSHOT_CAPTURE_SOURCE: &str = "snapshot";

impl CheckpointStore {
    /// Captures the before-image of each path in `items` not yet touched in this turn, from what
    /// the caller knows it was (not from the disk, which the command already changed), durable
    /// before returning, as [`CheckpointStore::capture_before`] does. `tool` names the tool for
    /// gaps. A path touched before in the turn keeps its first before-image.
    pub fn capture_before_known(
        &mut self,
        items: Vec<(PathBuf, Known)>,
        tool: Option<&str>,
    ) -> Result<CaptureReport> {
        let root = self.require_root()?;
        let mut changes = Vec::with_capacity(items.len());
        let mut known = BTreeMap::new();
        for (path, k) in items {
            let rel = RelPath::normalize(&root, &path)?;
            let kind = match k {
                Known::Absent { .. } => ChangeKind::Create,
                _ => ChangeKind::Modify,
            };
            changes.push(Change::new(path, kind));
            known.insert(rel, k);
        }
        self.capture(&changes, tool, Some(&known))
    }

    /// One path's entry from what it is known to have been, with its bytes to keep; `None` (and a
    /// gap) when its bytes were not kept.
    pub(crate) fn capture_known(
        &self,
        root: &Path,
        rel: &RelPath,
        known: &Known,
        tool: Option<&str>,
        gaps: &mut Vec<Gap>,
    ) -> Result<Option<(FileEntry, Option<ToKeep>)>> {
        let entry_of = |before: Before, created_dirs: Vec<RelPath>| FileEntry {
            created_dirs,
            moved_to: None,
            path: EntryPath::Safe(rel.clone()),
            before,
            after: None,
            end: None,
            capture_source: Some(SNAPSHOT_CAPTURE_SOURCE.into()),
            seq: None,
        };
        match known {
            Known::Absent { created_dirs } => {
                let dirs = created_dirs
                    .iter()
                    .map(|d| RelPath::normalize(root, d))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                Ok(Some((entry_of(Before::Absent, dirs), None)))
            }
            Known::Unkept { reason, detail } => {
                gaps.push(Gap {
                    reason: reason.clone(),
                    tool: tool.map(str::to_string),
                    path: Some(rel.to_lossy()),
                    detail: Some(detail.clone()),
                });
                Ok(None)
            }
            Known::File { bytes, mode } => {
                let before = Before::Present {
                    sha256: None,
                    mode: Some(*mode),
                    size: None,
                    payload: Payload::Log(crate::model::Slice { offset: 0, length: 0 }),
                };
                let job = ToKeep {
                    src: Src::Bytes(bytes.clone()),
                    len: bytes.len() as u64,
                    abs: rel.under(root),
                };
                Ok(Some((entry_of(before, Vec::new()), Some(job))))
            }
        }
    }
}
