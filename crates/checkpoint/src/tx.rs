//! Transaction manifests (`transactions/<id>.json`, SPEC §5.4): one per code restore, undo or revert.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use base64::Engine;
use retrace_fsutil::{is_sha256_hex, RelPath};
use serde::{Deserialize, Serialize};

use crate::error::{CheckpointError, IoContext, Result};
use crate::layout::{manifest_rel, pack_rel_path, TX_DIR};
use crate::model::Image;
use crate::record::{read_bounded, to_json};
use crate::store::CheckpointStore;

/// What a transaction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TxKind {
    /// A code restore to a turn.
    Restore,
    /// A single-file revert.
    Revert,
    /// The undo of a restore or revert.
    Undo,
    /// A rewind that touched no file (conversation only): kept so undo can find it.
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
    /// Data the controller keeps with the transaction (the conversation half of a rewind).
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
    fn at_most(&self) -> Manifest {
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

/// A manifest file that is not a manifest this build can use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ManifestProblem {
    /// Its file name in `transactions/`.
    pub(crate) name: String,
    /// What is wrong.
    pub(crate) why: String,
    /// Whether it stops writes to the session: a transaction that may be in flight (or whose
    /// forward images may be the only copies) and that this build cannot read or roll back.
    pub(crate) blocks: bool,
}

/// Manifests by id, and the files that are none.
pub(crate) type LoadedManifests = (BTreeMap<String, Manifest>, Vec<ManifestProblem>);

/// Loads every manifest. A file that does not parse blocks writes (it may be a transaction in
/// flight), except a manifest of the reference implementation that says it finished, which is
/// only noted: that writer's transactions are its own, and a finished one needs nothing.
pub(crate) fn load_manifests(dir: &Path) -> Result<LoadedManifests> {
    let mut out = BTreeMap::new();
    let mut bad = Vec::new();
    let mut misnamed = Vec::new();
    let txd = dir.join(TX_DIR);
    if !txd.is_dir() {
        return Ok((out, bad));
    }
    for e in fs::read_dir(&txd).at("list", &txd)? {
        let e = e.at("list", &txd)?;
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".json") || name.starts_with('.') {
            continue;
        }
        let bytes = match read_bounded(&e.path()) {
            Ok(b) => b,
            Err(err) => {
                bad.push(ManifestProblem {
                    name,
                    why: err.to_string(),
                    blocks: true,
                });
                continue;
            }
        };
        match serde_json::from_slice::<Manifest>(&bytes) {
            Ok(m) if format!("{}.json", m.id) == name => match m.forged() {
                None => {
                    out.insert(m.id.clone(), m);
                }
                // Never followed: a path outside the workspace, a digest that is a path.
                Some(why) => bad.push(ManifestProblem {
                    name,
                    why,
                    blocks: true,
                }),
            },
            Ok(m) => misnamed.push((name, m)),
            Err(err) => bad.push(foreign_or_broken(name, &bytes, &err.to_string())),
        }
    }
    // A manifest under another name: a copy (a backup the user made) of a finished transaction
    // whose own manifest is there is only noted; anything else may be the only record of a
    // transaction, and stops writes.
    for (name, m) in misnamed {
        let copy = m.state.is_terminal() && out.contains_key(&m.id);
        bad.push(ManifestProblem {
            why: if copy {
                format!(
                    "a copy of the manifest of transaction {} (its own, `{}.json`, is there); ignored",
                    m.id, m.id
                )
            } else {
                format!("manifest id `{}` does not match its file name", m.id)
            },
            name,
            blocks: !copy,
        });
    }
    // The one a blocked open names is the same whatever order the directory lists them in.
    bad.sort_by(|a, b| a.name.cmp(&b.name));
    Ok((out, bad))
}

/// A file of `transactions/` that is no Retrace manifest: another implementation's (the
/// reference's flat `restore*`/`forward*` targets, with `workspaceRoot`), or broken.
fn foreign_or_broken(name: String, bytes: &[u8], err: &str) -> ManifestProblem {
    let value: Option<serde_json::Value> = serde_json::from_slice(bytes).ok();
    let foreign = value.as_ref().filter(|v| {
        v.get("workspaceRoot").is_some()
            && v["targets"].as_array().is_some_and(|t| {
                t.iter()
                    .all(|t| t.get("forwardSha").is_some() || t.get("forwardExisted").is_some())
            })
    });
    match foreign.and_then(|v| v["state"].as_str()) {
        Some(state @ ("committed" | "aborted" | "undone")) => ManifestProblem {
            name,
            why: format!("a transaction manifest another implementation wrote ({state}); nothing needs it"),
            blocks: false,
        },
        Some(state) => ManifestProblem {
            name,
            why: format!(
                "a transaction manifest another implementation wrote, still {state}: it may be in flight, and this build cannot roll it back"
            ),
            blocks: true,
        },
        None => ManifestProblem {
            name,
            why: format!("not a valid transaction manifest: {err}"),
            blocks: true,
        },
    }
}

impl CheckpointStore {
    /// Writes a manifest durably and keeps it in memory.
    pub(crate) fn save_manifest(&mut self, m: &Manifest) -> Result<()> {
        let bytes = to_json(m);
        // What is written must be readable again: manifests are read under the record limit. The
        // first write checks the largest the manifest can grow to (every slice and removed
        // directory filled in), so a transaction is refused before anything is written, never
        // half-way.
        let size = match m.state {
            TxState::Prepared => to_json(&m.at_most()).len(),
            _ => bytes.len(),
        } as u64;
        if size > crate::record::MAX_RECORD_BYTES {
            return Err(CheckpointError::TransactionTooLarge {
                targets: m.targets.len(),
                size,
            });
        }
        let txd = self.sidecar.dir.join(TX_DIR);
        self.opts.fs.create_dir_all(&txd).at("create", &txd)?;
        let path = self.sidecar.dir.join(manifest_rel(&m.id));
        self.opts.fs.write_atomic(&path, &bytes).at("write", &path)?;
        self.sidecar.transactions.insert(m.id.clone(), m.clone());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 13 item 11: a manifest is never written larger than manifests are read back.
    #[test]
    fn a_manifest_too_large_to_read_back_is_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let sidecar = dir.path().join("s.ckpt");
        let mut store = CheckpointStore::open(&sidecar, ws.path(), crate::StoreOptions::default()).unwrap();
        let image = TxImage {
            existed: true,
            sha256: Some("a".repeat(64)),
            mode: Some(0o644),
        };
        let target = |i: usize| TxTarget {
            path: format!("{}/{i}", "d".repeat(200)),
            path_bytes: None,
            action: TargetAction::Write,
            restore: image.clone(),
            forward: image.clone(),
            published: false,
            recovery_copy: None,
            forward_at: None,
            owned_before: None,
            owned_after: None,
        };
        let m = Manifest {
            id: "00000001-00000000".into(),
            kind: TxKind::Restore,
            state: TxState::Prepared,
            time: String::new(),
            seq: 1,
            turn: None,
            undoes: None,
            undone_by: None,
            extra: None,
            forward_pack: None,
            removed_dirs: Vec::new(),
            owned_recorded: true,
            targets: (0..40_000).map(target).collect(),
        };
        let e = store.save_manifest(&m).unwrap_err();
        assert!(
            matches!(e, CheckpointError::TransactionTooLarge { targets: 40_000, .. }),
            "{e}"
        );
        assert!(!sidecar.join(TX_DIR).join("00000001-00000000.json").exists());
        // Small enough as first written, too large once every slice is filled in: refused at
        // the first write, before any temp file or pack exists.
        let per_target = to_json(&m).len() as u64 / 40_000;
        let n = (crate::record::MAX_RECORD_BYTES / per_target * 95 / 100) as usize;
        let m = Manifest {
            targets: (0..n).map(target).collect(),
            ..m
        };
        assert!((to_json(&m).len() as u64) < crate::record::MAX_RECORD_BYTES);
        let e = store.save_manifest(&m).unwrap_err();
        assert!(matches!(e, CheckpointError::TransactionTooLarge { .. }), "{e}");
    }
}
