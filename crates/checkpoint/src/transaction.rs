//! One file transaction (SPEC §5.4), a restore's, a revert's, an undo's or a redo's: its manifest
//! written at each step, its files published, and everything put back on failure (`compensate.rs`).
//!
//! Order: manifest `prepared` (durable) → temp files beside the targets, and the forward images
//! copied into the transaction's pack (`prepare.rs`, `pack.rs`), written, then fsynced together
//! (one barrier), then the pack renamed to its name and every directory fsynced (a second barrier)
//! → manifest `committing`, with every target `published` and where its forward image is in the pack
//! (one durable write) → per target: re-check against the forward image, rename → directory fsyncs
//! → manifest `committed` → `state.json`. A crash anywhere leaves every target equal to its forward
//! or its restore image, and the next writer's recovery finishes the rollback.
//!
//! Forward images are copies, never hard links to the replaced inode: a process that keeps the old
//! file open would write into it after the rename and destroy the undo.

use std::collections::BTreeSet;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};

use retrace_fsutil::RelPath;

use crate::error::{CheckpointError, IoContext, Result};
use crate::fsio::{parent_of, sync_error};
use crate::images::TargetImage;
use crate::layout::{manifest_rel, pack_rel_path, TX_DIR};
use crate::model::Image;
use crate::record::{to_json, MAX_RECORD_BYTES};
use crate::state::Owned;
use crate::store::CheckpointStore;
use crate::to_record::path_to_raw;
use crate::tx::{Manifest, TargetAction, TxImage, TxKind, TxOwned, TxState, TxTarget};

/// What a transaction takes back or applies again, if anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Link {
    /// Nothing: a restore or a revert.
    None,
    /// An undo of this transaction (`undoes`).
    Undoes(String),
    /// A redo of this undone transaction (`redoes`).
    Redoes(String),
}

/// One file a transaction will write.
#[derive(Debug, Clone)]
pub(crate) struct TxInput {
    pub(crate) rel: RelPath,
    pub(crate) restore: TargetImage,
    pub(crate) forward: Image,
    /// For an undo: the ownership proof the file gets back (the undone transaction's
    /// `ownedBefore`); `None` for other kinds, whose writes are Retrace's own.
    pub(crate) owned_after: Option<Owned>,
}

impl CheckpointStore {
    /// Runs one transaction to `committed`, or rolls it back and returns the error.
    ///
    /// `created_dirs`: directories the restored turns' tools created; those the published files
    /// leave empty are recorded with `committed` and then removed.
    pub(crate) fn run_transaction(
        &mut self,
        kind: TxKind,
        turn: Option<u64>,
        link: Link,
        inputs: Vec<TxInput>,
        extra: Option<serde_json::Value>,
        created_dirs: &[RelPath],
    ) -> Result<Manifest> {
        let root = self.sidecar.root.clone().ok_or(CheckpointError::NoTurn)?;
        let seq = self.sidecar.state.mutation_seq + 1;
        let id = format!("{seq:08}-{:08x}", random_u32());
        let time = (self.opts.clock)()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        let targets = inputs
            .iter()
            .map(|inp| {
                let (path, path_bytes) = path_to_raw(&inp.rel);
                TxTarget {
                    path,
                    path_bytes,
                    action: if inp.restore.image.existed {
                        TargetAction::Write
                    } else {
                        TargetAction::Delete
                    },
                    restore: TxImage::from(&as_written(&inp.restore.image)),
                    forward: TxImage::from(&inp.forward),
                    published: false,
                    recovery_copy: None,
                    forward_at: None,
                    owned_before: self.sidecar.state.owned.get(&inp.rel).map(TxOwned::from),
                    owned_after: inp.owned_after.as_ref().map(TxOwned::from),
                }
            })
            .collect();
        let forward_pack = inputs
            .iter()
            .any(|i| i.forward.existed)
            .then(|| pack_rel_path(&id));
        let (undoes, redoes) = match link {
            Link::None => (None, None),
            Link::Undoes(id) => (Some(id), None),
            Link::Redoes(id) => (None, Some(id)),
        };
        let mut m = Manifest {
            id,
            kind,
            state: TxState::Prepared,
            time,
            seq,
            turn,
            undoes,
            undone_by: None,
            redoes,
            extra,
            forward_pack,
            targets,
            removed_dirs: Vec::new(),
            dirs_removed: false,
            owned_recorded: true,
        };
        self.opts
            .fs
            .create_dir_all(&self.sidecar.dir)
            .at("create the sidecar", &self.sidecar.dir)?;
        // (1) The manifest is durable before any temp file or blob of the transaction exists.
        self.save_manifest(&m)?;
        let slices = match self.prepare_files(&root, &m, &inputs) {
            Ok(slices) => slices,
            Err(e) => {
                self.abort_prepared(&root, &mut m);
                return Err(e);
            }
        };
        // (4) Published, with where each forward image is: one durable write for the whole batch,
        // before any rename.
        m.state = TxState::Committing;
        for (t, slice) in m.targets.iter_mut().zip(slices) {
            t.published = true;
            t.forward_at = slice;
        }
        if let Err(e) = self.save_manifest(&m) {
            self.abort_prepared(&root, &mut m);
            return Err(e);
        }
        // (5) Renames, each after re-checking the target against its forward image.
        let (renamed, published) = self.publish_all(&root, &m, &inputs);
        if let Err(e) = published {
            let stuck = self.compensate_renamed(&root, &mut m, &renamed);
            return Err(stuck.unwrap_or(e));
        }
        let dirs: BTreeSet<PathBuf> = inputs.iter().map(|i| parent_of(&i.rel.under(&root))).collect();
        let entries: Vec<(&Path, &str)> = dirs.iter().map(|d| (d.as_path(), "sync_dir")).collect();
        if let Err(e) = self.opts.fs.sync_paths(&entries).map_err(sync_error) {
            let n = m.targets.len();
            let stuck = self.compensate(&root, &mut m, n);
            return Err(stuck.unwrap_or(e));
        }
        // A transaction left open by a compensation that got stuck never goes back to these
        // paths: they are this one's now (released before `committed`, so a crash between the two
        // leaves this one to roll back, and the open one to what it was).
        if let Err(e) = self.release_from_open(&m) {
            let n = m.targets.len();
            let stuck = self.compensate(&root, &mut m, n);
            return Err(stuck.unwrap_or(e));
        }
        // (6) Committed, then the ownership proofs. Decided durably either way: if `committed`
        // cannot be written, everything is put back now (a later open must not roll back a restore
        // the user went on to build on). Once it is written, the proofs follow: `state.json` is
        // rebuilt from committed manifests on open, so a failure there is retried, not reported.
        m.state = TxState::Committed;
        // The parked deletes (`.bak`) go right after `committed`: they do not count.
        let parked: BTreeSet<PathBuf> = m
            .targets
            .iter()
            .enumerate()
            .filter(|(_, t)| t.action == TargetAction::Delete)
            .filter_map(|(i, t)| Some(m.bak_path(&root, &t.rel().ok()?, i)))
            .collect();
        let empty = crate::dirs::removable_dirs(&root, created_dirs, &parked);
        m.removed_dirs = empty
            .iter()
            .filter_map(|d| d.to_str().map(str::to_string))
            .collect();
        if let Err(e) = self.save_manifest(&m) {
            m.state = TxState::Committing;
            m.removed_dirs.clear();
            let n = m.targets.len();
            let stuck = self.compensate(&root, &mut m, n);
            return Err(stuck.unwrap_or(e));
        }
        self.sidecar.apply_committed(&m);
        if self.write_state().is_err() {
            self.state_must_write
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        for (i, t) in m.targets.iter().enumerate() {
            if t.action == TargetAction::Delete {
                if let Ok(rel) = t.rel() {
                    // Through the directory reached from the root, never by its whole path (which
                    // can pass `PATH_MAX` beside a long name) nor through a symlink.
                    let bak = m.bak_path(&root, &rel, i);
                    let _ = crate::fsio::remove_in_workspace(&self.opts.fs, &root, &bak);
                }
            }
        }
        self.remove_dirs(&root, &empty);
        if !empty.is_empty() {
            // Best effort: unrecorded, the next open removes those still empty once more.
            m.dirs_removed = true;
            if self.save_manifest(&m).is_err() {
                m.dirs_removed = false;
            }
        }
        Ok(m)
    }

    /// Marks unpublished, durably, the targets of every other transaction still `committing`
    /// (one whose compensation got stuck) at a path `m` wrote or deleted: recovery must never put
    /// its forward images back over what `m` did.
    fn release_from_open(&mut self, m: &Manifest) -> Result<()> {
        let paths: BTreeSet<RelPath> = m.targets.iter().filter_map(|t| t.rel().ok()).collect();
        let open: Vec<Manifest> = self
            .sidecar
            .transactions
            .values()
            .filter(|o| o.id != m.id && o.state == TxState::Committing)
            .cloned()
            .collect();
        for mut o in open {
            let mut changed = false;
            for t in &mut o.targets {
                if t.published && t.rel().is_ok_and(|r| paths.contains(&r)) {
                    t.published = false;
                    changed = true;
                }
            }
            if changed {
                self.save_manifest(&o)?;
            }
        }
        Ok(())
    }

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
        if size > MAX_RECORD_BYTES {
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

fn random_u32() -> u32 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.write_u32(std::process::id());
    h.finish() as u32
}

/// The image a write of `target` leaves, which is what Retrace then proves it left: a target
/// without a recorded mode (a v1 record's) is written with a new file's mode, 0644.
fn as_written(target: &Image) -> Image {
    let mut image = target.clone();
    if image.existed && image.mode.is_none() {
        image.mode = Some(0o644);
    }
    image
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
            redoes: None,
            extra: None,
            forward_pack: None,
            removed_dirs: Vec::new(),
            dirs_removed: false,
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
        let n = (MAX_RECORD_BYTES / per_target * 95 / 100) as usize;
        let m = Manifest {
            targets: (0..n).map(target).collect(),
            ..m
        };
        assert!((to_json(&m).len() as u64) < MAX_RECORD_BYTES);
        let e = store.save_manifest(&m).unwrap_err();
        assert!(matches!(e, CheckpointError::TransactionTooLarge { .. }), "{e}");
    }
}
