//! Transaction manifests (`transactions/<id>.json`, SPEC §5.4): one per code restore, revert, undo or
//! redo.

use std::path::{Path, PathBuf};

use base64::Engine;
use retrace_fsutil::{is_sha256_hex, RelPath};
use serde::{Deserialize, Serialize};

use crate::error::{CheckpointError, Result};
use crate::layout::pack_rel_path;
use crate::model::Image;

pub use crate::rewind::{RewindRecord, REWIND_RECORD_VERSION};

/// What a transaction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TxKind {
    /// A code restore to a turn (or its redo, which names it in `redoes`).
    Restore,
    /// A single-file revert (or its redo).
    Revert,
    /// The undo of a restore or revert (or of a redo of one).
    Undo,
    /// A rewind that touched no file (conversation only): kept so undo can find it (or its redo).
    Rewind,
}

/// Where a transaction is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TxState {
    /// The manifest is durable; temp files may exist; nothing is published.
    Prepared,
    /// Targets are being (or were) renamed into place.
    Committing,
    /// Done.
    Committed,
    /// Rolled back; nothing of it remains in the workspace.
    Aborted,
    /// Committed, then undone by a later transaction.
    Undone,
}

impl TxState {
    /// Whether nothing more will happen to the transaction.
    pub fn is_terminal(self) -> bool {
        matches!(self, TxState::Committed | TxState::Aborted | TxState::Undone)
    }

    /// Whether its writes happened (it is an event on the timeline).
    pub fn happened(self) -> bool {
        matches!(self, TxState::Committed | TxState::Undone)
    }
}

/// What a target becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetAction {
    /// A temp file is renamed over the path.
    Write,
    /// The path is renamed to its `.bak` sibling, unlinked once committed.
    Delete,
}

/// Existence, SHA-256 and mode, as a manifest stores them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TxImage {
    /// Whether the file exists in this state.
    pub existed: bool,
    /// Its SHA-256.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Its mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
}

impl From<&Image> for TxImage {
    fn from(i: &Image) -> TxImage {
        TxImage {
            existed: i.existed,
            sha256: i.sha256.clone(),
            mode: i.mode,
        }
    }
}

impl From<&TxImage> for Image {
    fn from(i: &TxImage) -> Image {
        Image {
            existed: i.existed,
            sha256: i.sha256.clone(),
            mode: i.mode,
        }
    }
}

/// One file of a transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TxTarget {
    /// Workspace path (lossy for non-UTF-8 names).
    pub path: String,
    /// The raw name, base64, when not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_bytes: Option<String>,
    /// Write or delete.
    pub action: TargetAction,
    /// The state the transaction writes.
    pub restore: TxImage,
    /// The state it replaces, what compensation and undo put back (its bytes are in the
    /// transaction's pack at `forwardAt`; earlier builds kept them as a blob named by the SHA-256).
    pub forward: TxImage,
    /// Set (durably, per batch) before the target's rename.
    #[serde(default)]
    pub published: bool,
    /// A copy of content that matched neither image, when compensation met one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_copy: Option<String>,
    /// Where the forward image's bytes are in the transaction's pack (`forwardPack`); absent in
    /// manifests of earlier builds, whose forward images are blobs named by their SHA-256.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forward_at: Option<PackSlice>,
    /// Retrace's last own write at the path just before this transaction (its `state.json` entry
    /// then, the ownership proof): what undoing the transaction makes the proof again (SPEC §5.5).
    /// Absent: there was none — and in manifests of earlier builds, which did not record it, read
    /// the same way (the safe reading: a later restore reports the file as a conflict).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owned_before: Option<TxOwned>,
    /// For an undo only: the ownership proof the target leaves, the undone transaction's
    /// `ownedBefore` for it (the bytes an undo puts back are Retrace's only if they were before the
    /// restore). Absent in an undo: none (so also for undos of earlier builds). Ignored for other
    /// kinds, whose targets leave their restore image as Retrace's own write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owned_after: Option<TxOwned>,
}

/// An ownership proof as a manifest stores it: Retrace's own write and its mutation sequence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TxOwned {
    /// Existence, SHA-256 and mode of that write.
    #[serde(flatten)]
    pub image: TxImage,
    /// The mutation sequence it happened at.
    pub seq: u64,
}

impl From<&crate::state::Owned> for TxOwned {
    fn from(o: &crate::state::Owned) -> TxOwned {
        TxOwned {
            image: TxImage::from(&o.image),
            seq: o.seq,
        }
    }
}

impl From<&TxOwned> for crate::state::Owned {
    fn from(o: &TxOwned) -> crate::state::Owned {
        crate::state::Owned {
            image: Image::from(&o.image),
            seq: o.seq,
        }
    }
}

/// A forward image inside a transaction's pack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PackSlice {
    /// Where its bytes start.
    pub offset: u64,
    /// How many bytes.
    pub length: u64,
}

impl TxTarget {
    /// The workspace path.
    pub fn rel(&self) -> Result<RelPath> {
        let bytes =
            match &self.path_bytes {
                Some(b) => base64::engine::general_purpose::STANDARD.decode(b).map_err(|e| {
                    CheckpointError::Corrupt {
                        path: PathBuf::from(&self.path),
                        detail: format!("bad pathBytes: {e}"),
                    }
                })?,
                None => self.path.as_bytes().to_vec(),
            };
        Ok(RelPath::from_stored(&bytes)?)
    }
}

/// A transaction manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// Its id (also the file name).
    pub id: String,
    /// What it did.
    pub kind: TxKind,
    /// Its state.
    pub state: TxState,
    /// When it was prepared (RFC 3339).
    pub time: String,
    /// The mutation sequence it takes when committed (its place on the timeline).
    pub seq: u64,
    /// The turn restored to, for a restore.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u64>,
    /// The transaction this one undoes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undoes: Option<String>,
    /// The transaction that undid this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undone_by: Option<String>,
    /// For a redo: the undone transaction it applies again (SPEC §5.5). A redo is of that
    /// transaction's kind (`restore`, `revert` or `rewind`) and is undone like one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redoes: Option<String>,
    /// The rewind record (the conversation half of a rewind, [`RewindRecord`]) as stored: read it
    /// with [`crate::CheckpointStore::rewind_record`]. Absent for an undo, and for a restore or
    /// revert the controller did not make.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<serde_json::Value>,
    /// The pack holding the forward images of its targets, relative to the sidecar
    /// (`forward/<id>.pack`); absent when no target existed before, and in manifests of earlier
    /// builds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forward_pack: Option<String>,
    /// The files, in the order they are published.
    pub targets: Vec<TxTarget>,
    /// Directories the restored turns' tools created that this transaction found empty once its
    /// files were published, deepest first; set with `committed`, then each is removed (`rmdir`).
    /// Undo creates them again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed_dirs: Vec<String>,
    /// Whether those directories are known to be removed: written once their `rmdir`s ran (after
    /// `committed`). Recovery removes them only while this is false (a kill came between), so
    /// one that someone made again since stays theirs. Absent (false) in manifests of earlier
    /// builds.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dirs_removed: bool,
    /// Whether its targets say what Retrace owned (`ownedBefore`, and `ownedAfter` for an undo).
    /// Absent (false) in manifests of earlier builds: an undo of theirs leaves its files owned by
    /// no one (they may be hand edits it put back), and undoing a restore of theirs does the same.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub owned_recorded: bool,
}

impl Manifest {
    /// What makes this manifest unusable though it parses: a target path that is absolute or leads
    /// outside the workspace, or an image digest that is not 64 lowercase hex digits (it names a
    /// file). `None` when every target is usable.
    pub(crate) fn forged(&self) -> Option<String> {
        let pack = pack_rel_path(&self.id);
        if let Some(p) = self.forward_pack.as_deref().filter(|p| *p != pack) {
            return Some(format!("`forwardPack` is `{p}`, not `{pack}`"));
        }
        for (i, t) in self.targets.iter().enumerate() {
            if let Err(e) = t.rel() {
                return Some(format!("target {i} (`{}`) is not a workspace path: {e}", t.path));
            }
            let owned = [("ownedBefore", &t.owned_before), ("ownedAfter", &t.owned_after)]
                .into_iter()
                .filter_map(|(n, o)| o.as_ref().map(|o| (n, &o.image)));
            for (name, image) in [("restore", &t.restore), ("forward", &t.forward)]
                .into_iter()
                .chain(owned)
            {
                if let Some(sha) = image.sha256.as_deref().filter(|s| !is_sha256_hex(s)) {
                    return Some(format!(
                        "target {i} (`{}`): the {name} image's sha256 `{sha}` is not 64 lowercase hex digits",
                        t.path
                    ));
                }
            }
        }
        for d in &self.removed_dirs {
            if let Err(e) = RelPath::from_stored(d.as_bytes()) {
                return Some(format!("removed directory `{d}` is not a workspace path: {e}"));
            }
        }
        None
    }

    /// This manifest as large as it becomes once committed: every target published, every forward
    /// image at the largest offset, a removed directory per target (each is an ancestor of one).
    /// Not counted: recovery copies, which only a rollback that met foreign content names.
    pub(crate) fn at_most(&self) -> Manifest {
        let mut m = self.clone();
        m.state = TxState::Committing;
        m.undone_by = Some(self.id.clone());
        for t in &mut m.targets {
            t.published = true;
            t.forward_at = Some(PackSlice {
                offset: u64::MAX,
                length: u64::MAX,
            });
        }
        m.removed_dirs = m.targets.iter().map(|t| t.path.clone()).collect();
        m.dirs_removed = true;
        m
    }

    /// Temp file of target `i`: `.<name>.retrace-<tx>-<i>.tmp` beside it (names too long for that
    /// use a hash of the name instead, see `sibling`).
    pub fn temp_path(&self, root: &Path, rel: &RelPath, i: usize) -> PathBuf {
        sibling(root, rel, &format!("retrace-{}-{i}.tmp", self.id))
    }

    /// Temp file compensation writes a target's forward image into: `.<name>.retrace-<tx>-<i>.back.tmp`.
    /// Distinct from [`Manifest::temp_path`], whose presence means "never renamed".
    pub fn put_back_path(&self, root: &Path, rel: &RelPath, i: usize) -> PathBuf {
        sibling(root, rel, &format!("retrace-{}-{i}.back.tmp", self.id))
    }

    /// Parking place of a delete target: `.<name>.retrace-<tx>-<i>.bak`.
    pub fn bak_path(&self, root: &Path, rel: &RelPath, i: usize) -> PathBuf {
        sibling(root, rel, &format!("retrace-{}-{i}.bak", self.id))
    }

    /// Where compensation keeps a delete target's `.bak` whose path now holds someone else's file:
    /// `.<name>.retrace-<tx>-<i>.kept`.
    pub fn kept_path(&self, root: &Path, rel: &RelPath, i: usize) -> PathBuf {
        sibling(root, rel, &format!("retrace-{}-{i}.kept", self.id))
    }
}

/// `.<name>.<suffix>` beside `rel` (a hash of the name instead when that would be too long: see
/// [`retrace_fsutil::sibling_name`]), so that every valid target name has a temp name.
fn sibling(root: &Path, rel: &RelPath, suffix: &str) -> PathBuf {
    let abs = rel.under(root);
    let name = abs.file_name().unwrap_or_default().to_os_string();
    let parent = abs
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| root.to_path_buf());
    parent.join(retrace_fsutil::sibling_name(".", &name, suffix))
}
