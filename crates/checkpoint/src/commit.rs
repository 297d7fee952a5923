//! File transactions (SPEC §5.4): commit a plan durably, put everything back on failure.
//!
//! Order: manifest `prepared` (durable) → temp files beside the targets, and forward images as blob
//! temp files in `forward/` (see [`crate::blobs`]), written, then fsynced together (one barrier),
//! then the blobs renamed and every directory fsynced (a second barrier) → manifest `committing`
//! with every target `published` (one durable write) → per target: re-check against the forward
//! image, rename → directory fsyncs → manifest `committed` → `state.json`. A crash anywhere leaves
//! every target equal to its forward or its restore image, and the next writer's recovery finishes
//! the rollback.
//!
//! A forward image is usually not a copy: the target itself (a regular file with no other link, its
//! bytes verified) is hard-linked into `forward/`, so the blob is the very inode the rename over
//! the target then leaves behind, and costs no bytes and no new inode. Whatever refuses the link
//! (another file system, more links, no permission) gets a copy, as before. While a blob shares its
//! inode with a workspace name (between the link and the target's rename), the target's re-check
//! before the rename hashes that inode; once a transaction is committed or rolled back, no blob is a
//! name of a workspace file ([`CheckpointStore::unshare_blob`]), and nothing ever links a blob back
//! into the workspace: compensation and undo copy from it.

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Read};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use retrace_fsutil::{copy_hashed, RelPath};
use retrace_protocol::{CodeOutcome, Conflict, ConflictReason, FileAction, OnConflict};

use crate::blobs::FORWARD_DIR;
use crate::error::{CheckpointError, IoContext, Result};
use crate::forward::{image_and_inode, Linked};
use crate::model::{path_to_raw, Image};
use crate::plan::{has_symlink, same_image, ImageSource, PlanKind, RestorePlan, TargetImage};
use crate::state::Owned;
use crate::store::CheckpointStore;
use crate::tx::{Manifest, TargetAction, TxImage, TxKind, TxState, TxTarget};

/// How to commit a plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommitOptions {
    /// The user confirmed a plan that requires confirmation.
    pub confirm: bool,
    /// What to do with conflicted files.
    pub on_conflict: OnConflict,
}

/// One file a transaction will write.
#[derive(Debug, Clone)]
pub(crate) struct TxInput {
    pub(crate) rel: RelPath,
    pub(crate) restore: TargetImage,
    pub(crate) forward: Image,
}

impl CheckpointStore {
    /// Commits a plan as one durable file transaction. Re-runs the checks first: a plan made before
    /// the workspace generation moved is `StalePlan`; conflicts with `refuse` write nothing.
    pub fn commit(&mut self, plan: &RestorePlan, opts: CommitOptions) -> Result<CodeOutcome> {
        self.commit_tagged(plan, opts, None)
    }

    /// [`CheckpointStore::commit`], keeping `extra` in the manifest (the controller records the
    /// conversation half of a rewind there, so undo can find it).
    pub fn commit_tagged(
        &mut self,
        plan: &RestorePlan,
        opts: CommitOptions,
        extra: Option<serde_json::Value>,
    ) -> Result<CodeOutcome> {
        if plan.plan.generation != self.state.mutation_seq {
            return Err(CheckpointError::StalePlan {
                planned: plan.plan.generation,
                now: self.state.mutation_seq,
            });
        }
        // The one decision of what blocks a commit (the controller asks the same question first).
        plan.check_commit(opts)?;
        // Plan again, and hold the result to what the user previewed: a file that moved since is
        // an `external_change`, whatever the choice (never silently re-classified, then skipped or
        // overwritten).
        let fresh = match &plan.kind {
            PlanKind::Turn(n) => self.plan_restore_with(*n, plan.memo.clone())?,
            PlanKind::File(p) => self.plan_file_revert_with(p.as_path(), plan.memo.clone())?,
        };
        let moved = moved_since_preview(plan, &fresh);
        if !moved.is_empty() {
            return Err(CheckpointError::Changed { conflicts: moved });
        }
        let mut inputs = Vec::new();
        let mut conflicts: Vec<Conflict> = Vec::new();
        for f in &fresh.files {
            let (Some(rel), Some(current)) = (f.rel.clone(), f.current.clone()) else {
                conflicts.extend(f.conflict.clone());
                continue;
            };
            match (&f.conflict, f.action) {
                (None, FileAction::Write | FileAction::Delete) => {
                    inputs.push(TxInput {
                        rel,
                        restore: f.target.clone(),
                        forward: current,
                    });
                }
                (None, _) => {}
                (Some(c), _) => {
                    conflicts.push(c.clone());
                    if opts.on_conflict == OnConflict::Overwrite && overwritable(c.reason) {
                        inputs.push(TxInput {
                            rel,
                            restore: f.target.clone(),
                            forward: current,
                        });
                    }
                }
            }
        }
        if inputs.is_empty() {
            // Nothing to write: no transaction, and the undo target stays as it was.
            return Ok(CodeOutcome {
                transaction_id: None,
                files_written: Vec::new(),
                files_deleted: Vec::new(),
                conflicts,
                undo_available: self.undo_target().is_some(),
            });
        }
        let (kind, turn) = match &plan.kind {
            PlanKind::Turn(n) => (TxKind::Restore, Some(*n)),
            PlanKind::File(_) => (TxKind::Revert, Some(fresh.plan.turn)),
        };
        let m = self.run_transaction(kind, turn, None, inputs, extra)?;
        Ok(self.outcome_of(&m, conflicts))
    }

    pub(crate) fn outcome_of(&self, m: &Manifest, conflicts: Vec<Conflict>) -> CodeOutcome {
        let mut written = Vec::new();
        let mut deleted = Vec::new();
        for t in &m.targets {
            match t.action {
                TargetAction::Write => written.push(t.path.clone()),
                TargetAction::Delete => deleted.push(t.path.clone()),
            }
        }
        CodeOutcome {
            transaction_id: Some(m.id.clone()),
            files_written: written,
            files_deleted: deleted,
            conflicts,
            undo_available: self.undo_target().is_some_and(|u| u.id == m.id),
        }
    }

    /// Runs one transaction to `committed`, or rolls it back and returns the error.
    pub(crate) fn run_transaction(
        &mut self,
        kind: TxKind,
        turn: Option<u64>,
        undoes: Option<String>,
        inputs: Vec<TxInput>,
        extra: Option<serde_json::Value>,
    ) -> Result<Manifest> {
        let root = self.root.clone().ok_or(CheckpointError::NoTurn)?;
        let seq = self.state.mutation_seq + 1;
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
                    restore: TxImage::from(&inp.restore.image),
                    forward: TxImage::from(&inp.forward),
                    published: false,
                    recovery_copy: None,
                }
            })
            .collect();
        let mut m = Manifest {
            id,
            kind,
            state: TxState::Prepared,
            time,
            seq,
            turn,
            undoes,
            undone_by: None,
            extra,
            targets,
        };
        self.opts
            .fs
            .create_dir_all(&self.dir)
            .at("create the sidecar", &self.dir)?;
        // (1) The manifest is durable before any temp file or blob of the transaction exists.
        self.save_manifest(&m)?;
        let linked = match self.prepare_files(&root, &m, &inputs) {
            Ok(linked) => linked,
            Err(e) => {
                self.abort_prepared(&root, &mut m);
                return Err(e);
            }
        };
        // (4) Published: one durable write for the whole batch, before any rename.
        m.state = TxState::Committing;
        for t in &mut m.targets {
            t.published = true;
        }
        if let Err(e) = self.save_manifest(&m) {
            self.abort_prepared(&root, &mut m);
            return Err(e);
        }
        // (5) Renames, each after re-checking the target against its forward image.
        let mut dirs = BTreeSet::new();
        let mut linked_to = vec![None; inputs.len()];
        for l in &linked {
            linked_to[l.target] = Some(l);
        }
        for (i, inp) in inputs.iter().enumerate() {
            let abs = inp.rel.under(&root);
            if let Err(e) = self.publish_one(&root, &m, i, &inp.rel, &abs, linked_to[i]) {
                let stuck = self.compensate(&root, &mut m, i);
                return Err(stuck.unwrap_or(e));
            }
            dirs.insert(parent_of(&abs));
        }
        let entries: Vec<(&Path, &str)> = dirs.iter().map(|d| (d.as_path(), "sync_dir")).collect();
        if let Err(e) = self.opts.fs.sync_paths(&entries).map_err(sync_failed) {
            let n = m.targets.len();
            let stuck = self.compensate(&root, &mut m, n);
            return Err(stuck.unwrap_or(e));
        }
        // (6) Committed, then the ownership proofs.
        m.state = TxState::Committed;
        self.save_manifest(&m)?;
        self.apply_committed(&m);
        self.write_state()?;
        for (i, t) in m.targets.iter().enumerate() {
            if t.action == TargetAction::Delete {
                if let Ok(rel) = t.rel() {
                    let bak = m.bak_path(&root, &rel, i);
                    let _ = self.opts.fs.remove_file(&bak);
                }
            }
        }
        // Every linked blob is now the only name of its inode: the rename replaced the target and the
        // `.bak` is gone. One that is not (a hard link someone made to the target meanwhile, a `.bak`
        // that could not be removed) becomes a copy, so that nothing can write into it. Best effort:
        // the transaction is committed either way.
        for l in &linked {
            let _ = self.unshare_blob(&l.blob, &l.sha, true);
        }
        Ok(m)
    }

    /// Records a committed transaction's writes as Retrace's own (ownership proofs, sequence).
    pub(crate) fn apply_committed(&mut self, m: &Manifest) {
        self.state.mutation_seq = self.state.mutation_seq.max(m.seq);
        for t in &m.targets {
            let Ok(rel) = t.rel() else { continue };
            let newer = self.state.owned.get(&rel).is_none_or(|o| o.seq < m.seq);
            if newer {
                self.state.owned.insert(
                    rel,
                    Owned {
                        image: Image::from(&t.restore),
                        seq: m.seq,
                    },
                );
            }
        }
    }

    /// Steps (2) and (3): forward images as blobs, and temp files, all durable.
    ///
    /// Every file is written first (the temp files, then the blobs: hard links where possible, copies
    /// otherwise) and all are fsynced in one barrier ([`retrace_fsutil::Fs::sync_paths`]), so the
    /// durable cost belongs to the batch, not to each file; only then are the blobs renamed to their
    /// names, and `forward/` and the temp files' directories fsynced (a second barrier). Nothing is
    /// published before both: the manifest still says `prepared`.
    ///
    /// Returns the forward images kept by hard link.
    fn prepare_files(&mut self, root: &Path, m: &Manifest, inputs: &[TxInput]) -> Result<Vec<Linked>> {
        let mut blobs: Vec<(PathBuf, PathBuf)> = Vec::new();
        let prepared = self.prepare_files_batched(root, m, inputs, &mut blobs);
        if prepared.is_err() {
            // A blob temp file must not keep the space a full disk needs to recover.
            for (tmp, _) in &blobs {
                let _ = fs::remove_file(tmp);
            }
        }
        prepared
    }

    fn prepare_files_batched(
        &mut self,
        root: &Path,
        m: &Manifest,
        inputs: &[TxInput],
        blobs: &mut Vec<(PathBuf, PathBuf)>,
    ) -> Result<Vec<Linked>> {
        let fs_ = self.opts.fs.clone();
        // (2) Forward images: the current bytes, kept so compensation and undo can put them back.
        // First which ones need a blob.
        let mut shas = BTreeSet::new();
        let mut needed: Vec<(usize, String)> = Vec::new();
        for (i, inp) in inputs.iter().enumerate() {
            if !inp.forward.existed {
                continue;
            }
            let sha = inp.forward.sha256.clone().unwrap_or_default();
            if !shas.insert(sha.clone()) || self.blob_is_stored(&sha) {
                continue;
            }
            needed.push((i, sha));
        }
        // Their one directory, `forward/`, made by the sidecar's first transaction that needs it
        // (then its entry in the sidecar joins the directory barrier below).
        let forward_dir = self.dir.join(FORWARD_DIR);
        let mut new_dirs = BTreeSet::new();
        if !needed.is_empty() && !forward_dir.is_dir() {
            fs_.step("create_dir").at("create", &forward_dir)?;
            fs::DirBuilder::new()
                .mode(retrace_fsutil::PRIVATE_DIR_MODE)
                .create(&forward_dir)
                .or_else(|e| match e.kind() {
                    io::ErrorKind::AlreadyExists if forward_dir.is_dir() => Ok(()),
                    _ => Err(e),
                })
                .at("create", &forward_dir)?;
            new_dirs.insert(self.dir.clone());
        }
        // (3) Temp files beside their targets.
        let (temps, dirs) = self.write_temps(root, m, inputs)?;
        // Then the forward images, linked or copied, into their directories.
        let mut linked = Vec::new();
        // Cleared by the first EXDEV: the sidecar is on another file system, every link would fail.
        let mut link = true;
        for (i, sha) in needed {
            let abs = inputs[i].rel.under(root);
            if let Some((inode, blob)) = self.write_blob_unsynced(&abs, &sha, blobs, &mut link)? {
                linked.push(Linked {
                    target: i,
                    blob,
                    sha,
                    inode,
                });
            }
        }
        // One barrier for the data of every blob and temp file.
        let data: Vec<(&Path, &str)> = blobs
            .iter()
            .map(|(tmp, _)| (tmp.as_path(), "sync_blob"))
            .chain(temps.iter().map(|t| (t.as_path(), "sync_temp")))
            .collect();
        fs_.sync_paths(&data).map_err(sync_failed)?;
        // The blobs take their names only once their bytes are durable.
        let mut blob_dirs = new_dirs;
        for (tmp, fin) in blobs.drain(..) {
            if let Err(e) = fs_.rename(&tmp, &fin).at("rename", &fin) {
                let _ = fs::remove_file(&tmp);
                return Err(e);
            }
            blob_dirs.insert(parent_of(&fin));
        }
        // One barrier for every directory entry: blobs (and `forward/` itself when new), then temp
        // files.
        let entries: Vec<(&Path, &str)> = blob_dirs
            .iter()
            .chain(dirs.iter())
            .map(|d| (d.as_path(), "sync_dir"))
            .collect();
        fs_.sync_paths(&entries).map_err(sync_failed)?;
        Ok(linked)
    }

    /// Step (3): a temp file beside each target that the transaction writes, holding its restore
    /// image (verified against its SHA-256) and mode; not synced. Returns the temp files and their
    /// directories.
    fn write_temps(
        &self,
        root: &Path,
        m: &Manifest,
        inputs: &[TxInput],
    ) -> Result<(Vec<PathBuf>, BTreeSet<PathBuf>)> {
        let fs_ = self.opts.fs.clone();
        let mut temps = Vec::new();
        let mut dirs = BTreeSet::new();
        for (i, inp) in inputs.iter().enumerate() {
            if !inp.restore.image.existed {
                continue;
            }
            let abs = inp.rel.under(root);
            let parent = parent_of(&abs);
            if !parent.is_dir() {
                fs_.step("create_dir").at("create", &parent)?;
                fs::create_dir_all(&parent).at("create", &parent)?;
            }
            if has_symlink(root, &inp.rel) {
                return Err(CheckpointError::ExternalChange {
                    path: inp.rel.to_lossy(),
                });
            }
            let tmp = m.temp_path(root, &inp.rel, i);
            fs_.step("create_temp").at("create", &tmp)?;
            let mut out = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&tmp)
                .at("create", &tmp)?;
            let mut src = self.open_image(&inp.restore)?;
            fs_.step("write_temp").at("write", &tmp)?;
            let copied = copy_hashed(&mut src, Some(&mut out)).at("write", &tmp)?;
            if inp
                .restore
                .image
                .sha256
                .as_deref()
                .is_some_and(|s| s != copied.sha256)
            {
                return Err(CheckpointError::MissingPayload {
                    turn: m.turn.unwrap_or(0),
                    path: inp.rel.to_lossy(),
                    why: "its bytes do not match the recorded SHA-256".into(),
                });
            }
            let mode = inp.restore.image.mode.unwrap_or(0o644);
            out.set_permissions(fs::Permissions::from_mode(mode))
                .at("chmod", &tmp)?;
            temps.push(tmp);
            dirs.insert(parent);
        }
        Ok((temps, dirs))
    }

    /// A stream of a restore image's bytes, verified against its SHA-256.
    fn open_image(&self, img: &TargetImage) -> Result<Box<dyn Read>> {
        match &img.source {
            ImageSource::Turn(n, i) => {
                let turn = self.turns.get(n).ok_or(CheckpointError::UnknownTurn(*n))?;
                let rel = turn
                    .files
                    .get(*i)
                    .and_then(|f| f.path.safe().cloned())
                    .ok_or_else(|| CheckpointError::MissingPayload {
                        turn: *n,
                        path: String::new(),
                        why: "no such entry".into(),
                    })?;
                self.open_turn_image(*n, &rel, img)
            }
            ImageSource::Blob(sha) => {
                let p = self.forward_blob(sha);
                Ok(Box::new(File::open(&p).at("open", &p)?))
            }
            ImageSource::None => Ok(Box::new(io::empty())),
        }
    }

    fn open_turn_image(&self, n: u64, rel: &RelPath, img: &TargetImage) -> Result<Box<dyn Read>> {
        match self.before_image(n, rel)? {
            crate::read::BeforeImage::Present { reader, sha256, .. } => {
                if sha256.is_some() && sha256 != img.image.sha256 {
                    return Err(CheckpointError::MissingPayload {
                        turn: n,
                        path: rel.to_lossy(),
                        why: "digest mismatch".into(),
                    });
                }
                // `write_temps` hashes what it copies and compares it with the restore image.
                Ok(reader.into_unverified())
            }
            crate::read::BeforeImage::Absent => Ok(Box::new(io::empty())),
        }
    }

    /// Renames target `i` into place after checking it still equals its forward image. When that
    /// image is kept by hard link (`linked`) and the target is no longer that inode (replaced by a
    /// rename since), the blob is hashed too: it may have been written through before.
    fn publish_one(
        &self,
        root: &Path,
        m: &Manifest,
        i: usize,
        rel: &RelPath,
        abs: &Path,
        linked: Option<&Linked>,
    ) -> Result<()> {
        let t = &m.targets[i];
        if has_symlink(root, rel) {
            return Err(CheckpointError::ExternalChange { path: rel.to_lossy() });
        }
        let (now, inode) = image_and_inode(abs).at("read", abs)?;
        if !same_image(&Image::from(&t.forward), &now) {
            return Err(CheckpointError::ExternalChange { path: rel.to_lossy() });
        }
        if let Some(l) = linked.filter(|l| inode != Some(l.inode)) {
            let intact = File::open(&l.blob)
                .and_then(retrace_fsutil::hash_reader)
                .is_ok_and(|(h, _)| h == l.sha);
            if !intact {
                // This transaction made it (no valid blob existed); it no longer holds its name's bytes.
                let _ = self.opts.fs.remove_file(&l.blob);
                return Err(CheckpointError::ExternalChange { path: rel.to_lossy() });
            }
        }
        match t.action {
            TargetAction::Write => {
                let tmp = m.temp_path(root, rel, i);
                self.opts.fs.rename(&tmp, abs).at("rename", abs)
            }
            TargetAction::Delete => {
                let bak = m.bak_path(root, rel, i);
                self.opts.fs.rename(abs, &bak).at("rename", abs)
            }
        }
    }
}

/// The error of a failed barrier ([`retrace_fsutil::Fs::sync_paths`]).
fn sync_failed((path, source): (PathBuf, io::Error)) -> CheckpointError {
    CheckpointError::Io {
        op: "sync",
        path,
        source,
    }
}

/// Whether `overwrite` writes a file with this conflict: everything but an unsafe path and a
/// missing payload, which are never written.
pub(crate) fn overwritable(reason: ConflictReason) -> bool {
    !matches!(
        reason,
        ConflictReason::PathUnsafe | ConflictReason::MissingPayload
    )
}

/// The files whose state differs between the previewed plan and a fresh one (other action, other
/// conflict, other bytes, mode or existence on disk): a file that moved on disk is an
/// `external_change`; one whose plan changed for another reason (its payload went bad, say)
/// carries the fresh plan's conflict.
fn moved_since_preview(shown: &RestorePlan, fresh: &RestorePlan) -> Vec<Conflict> {
    // Keyed by the raw name: two names can share a lossy spelling.
    let key = |f: &crate::plan::PlannedFile| (f.rel.clone(), f.shown.clone());
    let before: std::collections::HashMap<_, &crate::plan::PlannedFile> =
        shown.files.iter().map(|f| (key(f), f)).collect();
    let mut moved = Vec::new();
    for f in &fresh.files {
        let was = before.get(&key(f));
        let same = was.is_some_and(|b| {
            b.action == f.action
                && b.current == f.current
                && b.conflict.as_ref().map(|c| c.reason) == f.conflict.as_ref().map(|c| c.reason)
        });
        if same {
            continue;
        }
        let on_disk_moved = was.is_none_or(|b| b.current != f.current);
        moved.push(match (&f.conflict, on_disk_moved) {
            (Some(c), false) => c.clone(),
            _ => Conflict {
                path: f.shown.clone(),
                reason: ConflictReason::ExternalChange,
                checkpoint_sha256: f.target.image.sha256.clone(),
                last_owned_sha256: was
                    .and_then(|b| b.current.as_ref())
                    .and_then(|c| c.sha256.clone()),
                current_sha256: f.current.as_ref().and_then(|c| c.sha256.clone()),
                checkpoint_mode: f.target.image.mode,
                current_mode: f.current.as_ref().and_then(|c| c.mode),
            },
        });
    }
    moved
}

pub(crate) fn parent_of(p: &Path) -> PathBuf {
    p.parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
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
