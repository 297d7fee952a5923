//! File transactions (SPEC §5.4): commit a plan durably, put everything back on failure.
//!
//! Order: manifest `prepared` (durable) → temp files beside the targets, and the forward images
//! copied into the transaction's pack (see [`crate::forward`]), written, then fsynced together (one
//! barrier), then the pack renamed to its name and every directory fsynced (a second barrier) →
//! manifest `committing`, with every target `published` and where its forward image is in the pack
//! (one durable write) → per target: re-check against the forward image, rename → directory fsyncs
//! → manifest `committed` → `state.json`. A crash anywhere leaves every target equal to its forward
//! or its restore image, and the next writer's recovery finishes the rollback.
//!
//! Forward images are copies, never hard links to the replaced inode: a process that keeps the old
//! file open would write into it after the rename and destroy the undo.

use std::collections::BTreeSet;
use std::fs;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Read, Seek};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use retrace_fsutil::{copy_hashed, RelPath};
use retrace_protocol::{CodeOutcome, Conflict, ConflictReason, FileAction, OnConflict};

use crate::error::{CheckpointError, IoContext, Result};
use crate::fsio::{hash_from_start, mode_bits, open_existing, parent_of, sync_error, unsafe_to_write};
use crate::images::{ImageSource, TargetImage};
use crate::layout::pack_rel_path;
use crate::model::{same_image, Image};
use crate::plan::{overwritable, CommitOptions, PlanKind, PlannedFile, RestorePlan};
use crate::state::Owned;
use crate::store::CheckpointStore;
use crate::to_record::path_to_raw;
use crate::tx::{Manifest, PackSlice, TargetAction, TxImage, TxKind, TxOwned, TxState, TxTarget};

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
        if plan.plan.generation != self.sidecar.state.mutation_seq {
            return Err(CheckpointError::StalePlan {
                planned: plan.plan.generation,
                now: self.sidecar.state.mutation_seq,
            });
        }
        // The one decision of what blocks a commit (the controller asks the same question first).
        plan.check_commit(opts)?;
        // Plan again, and hold the result to what the user previewed: a file that moved since is
        // an `external_change`, whatever the choice (never silently re-classified, then skipped or
        // overwritten).
        let fresh = match &plan.kind {
            PlanKind::Turn(n) => self.sidecar.plan_restore_with(*n, plan.memo.clone())?,
            PlanKind::File(p) => self
                .sidecar
                .plan_file_revert_with(p.as_path(), plan.memo.clone())?,
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
                        owned_after: None,
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
                            owned_after: None,
                        });
                    }
                }
            }
        }
        // A legacy rename's destination goes only with its source written: the bytes move back,
        // never one without the other.
        let writes: std::collections::HashSet<RelPath> = inputs
            .iter()
            .filter(|i| i.restore.image.existed)
            .map(|i| i.rel.clone())
            .collect();
        let kept: std::collections::HashSet<RelPath> = fresh
            .files
            .iter()
            .filter(|f| f.deleted_with.as_ref().is_some_and(|src| !writes.contains(src)))
            .filter_map(|f| f.rel.clone())
            .collect();
        inputs.retain(|i| !kept.contains(&i.rel));
        // Files already in their target state become Retrace's: the disk equals an image Retrace
        // recorded (and keeps), so a later restore may replace it without losing a byte.
        let claims: Vec<(RelPath, Image)> = fresh
            .files
            .iter()
            .filter(|f| f.action == FileAction::Unchanged && f.conflict.is_none())
            .filter_map(|f| Some((f.rel.clone()?, f.current.clone()?)))
            .collect();
        if inputs.is_empty() {
            // Nothing to write: no transaction, and the undo target stays as it was (the claims
            // take the current sequence, which moves on only with a write).
            let seq = self.sidecar.state.mutation_seq;
            self.claim(claims, seq);
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
        let m = self.run_transaction(kind, turn, None, inputs, extra, &fresh.created_dirs)?;
        self.claim(claims, m.seq);
        Ok(self.outcome_of(&m, conflicts))
    }

    /// Records each file found already in its target state as Retrace's own write at `seq` (one
    /// whose ownership proof is another image), then `state.json`. Best effort like every proof after a
    /// commit: a claim lost to a failed write only makes a later restore report a conflict.
    fn claim(&mut self, claims: Vec<(RelPath, Image)>, seq: u64) {
        let mut changed = false;
        for (rel, image) in claims {
            if self.sidecar.proof(&rel).as_ref() == Some(&image) {
                continue;
            }
            self.sidecar.state.owned.insert(rel, Owned { image, seq });
            changed = true;
        }
        if changed && self.write_state().is_err() {
            self.state_dirty.store(true, std::sync::atomic::Ordering::Relaxed);
        }
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
    ///
    /// `created_dirs`: directories the restored turns' tools created; those the published files
    /// leave empty are recorded with `committed` and then removed.
    pub(crate) fn run_transaction(
        &mut self,
        kind: TxKind,
        turn: Option<u64>,
        undoes: Option<String>,
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
                    restore: TxImage::from(&inp.restore.image),
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
            forward_pack,
            targets,
            removed_dirs: Vec::new(),
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
        let mut dirs = BTreeSet::new();
        for (i, inp) in inputs.iter().enumerate() {
            let abs = inp.rel.under(&root);
            if let Err(e) = self.publish_one(&root, &m, i, &inp.rel, &abs) {
                let stuck = self.compensate(&root, &mut m, i);
                return Err(stuck.unwrap_or(e));
            }
            dirs.insert(parent_of(&abs));
        }
        let entries: Vec<(&Path, &str)> = dirs.iter().map(|d| (d.as_path(), "sync_dir")).collect();
        if let Err(e) = self.opts.fs.sync_paths(&entries).map_err(sync_error) {
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
            self.state_dirty.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        for (i, t) in m.targets.iter().enumerate() {
            if t.action == TargetAction::Delete {
                if let Ok(rel) = t.rel() {
                    let bak = m.bak_path(&root, &rel, i);
                    let _ = self.opts.fs.remove_file(&bak);
                }
            }
        }
        self.remove_dirs(&root, &empty);
        Ok(m)
    }

    /// Steps (2) and (3): the forward images copied into the transaction's pack, and the temp
    /// files, all durable.
    ///
    /// Every file is written first (the temp files, then the pack) and all are fsynced in one barrier
    /// ([`retrace_fsutil::Fs::sync_paths`]), so the durable cost belongs to the batch, not to each
    /// file; only then is the pack renamed to its name, and `forward/` and the temp files'
    /// directories fsynced (a second barrier). Nothing is published before both: the manifest
    /// still says `prepared`.
    ///
    /// Returns where each target's forward image is in the pack (`None`: it did not exist).
    fn prepare_files(
        &mut self,
        root: &Path,
        m: &Manifest,
        inputs: &[TxInput],
    ) -> Result<Vec<Option<PackSlice>>> {
        let fs_ = self.opts.fs.clone();
        // (3) Temp files beside their targets.
        let (temps, dirs) = self.write_temps(root, m, inputs)?;
        // (2) The forward images: the current bytes, kept so compensation and undo can put them back.
        let mut slices = vec![None; inputs.len()];
        if !inputs.iter().any(|i| i.forward.existed) {
            let entries: Vec<(&Path, &str)> = temps
                .iter()
                .map(|t| (t.as_path(), "sync_temp"))
                .chain(dirs.iter().map(|d| (d.as_path(), "sync_dir")))
                .collect();
            fs_.sync_paths(&entries).map_err(sync_error)?;
            return Ok(slices);
        }
        let (mut pack, made_dir) = self.start_pack(m)?;
        let written = (|| -> Result<()> {
            for (i, inp) in inputs.iter().enumerate() {
                if !inp.forward.existed {
                    continue;
                }
                let sha = inp.forward.sha256.clone().unwrap_or_default();
                // A change caught here is named by its workspace path, as every other.
                let slice = pack
                    .append(&fs_, &inp.rel.under(root), &sha)
                    .map_err(|e| match e {
                        CheckpointError::ExternalChange { .. } => CheckpointError::ExternalChange {
                            path: inp.rel.to_lossy(),
                        },
                        e => e,
                    })?;
                slices[i] = Some(slice);
            }
            // One barrier for the data of the pack and every temp file.
            let data: Vec<(&Path, &str)> = std::iter::once((pack.tmp.as_path(), "sync_blob"))
                .chain(temps.iter().map(|t| (t.as_path(), "sync_temp")))
                .collect();
            fs_.sync_paths(&data).map_err(sync_error)?;
            Ok(())
        })();
        if let Err(e) = written {
            // The pack's temp file must not keep the space a full disk needs to recover.
            let _ = fs::remove_file(&pack.tmp);
            return Err(e);
        }
        // The pack takes its name only once its bytes are durable.
        if let Err(e) = fs_.rename(&pack.tmp, &pack.path).at("rename", &pack.path) {
            let _ = fs::remove_file(&pack.tmp);
            return Err(e);
        }
        // One barrier for every directory entry: the pack (and `forward/` itself when new), then
        // the temp files.
        let pack_dir = parent_of(&pack.path);
        let mut entries: Vec<(&Path, &str)> = vec![(pack_dir.as_path(), "sync_dir")];
        if made_dir {
            entries.push((self.sidecar.dir.as_path(), "sync_dir"));
        }
        entries.extend(dirs.iter().map(|d| (d.as_path(), "sync_dir")));
        fs_.sync_paths(&entries).map_err(sync_error)?;
        Ok(slices)
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
        let mut held: std::collections::BTreeMap<PathBuf, retrace_fsutil::DirAt> = Default::default();
        for (i, inp) in inputs.iter().enumerate() {
            if !inp.restore.image.existed {
                continue;
            }
            let abs = inp.rel.under(root);
            let parent = parent_of(&abs);
            // Checked before anything is created, and the missing directories made one component
            // at a time without following a symlink: nothing is ever created outside the workspace.
            if unsafe_to_write(root, &inp.rel) {
                return Err(CheckpointError::ExternalChange {
                    path: inp.rel.to_lossy(),
                });
            }
            if !parent.is_dir() {
                fs_.step("create_dir").at("create", &parent)?;
                let rel_dir = parent.strip_prefix(root).unwrap_or(Path::new(""));
                let made =
                    retrace_fsutil::create_dirs_nofollow(root, rel_dir, 0o777).at("create", &parent)?;
                // Each new directory's entry joins the directory barrier.
                dirs.extend(made.iter().map(|d| parent_of(d)));
            }
            let tmp = m.temp_path(root, &inp.rel, i);
            fs_.step("create_temp").at("create", &tmp)?;
            // Made in the directory as reached without a symlink and held open: a parent swapped
            // for a symlink meanwhile cannot lead the temp file (or its rename) anywhere else.
            // Each directory is opened (component by component) once per transaction.
            let dir = match held.entry(parent.clone()) {
                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::btree_map::Entry::Vacant(e) => {
                    let rel_dir = parent.strip_prefix(root).unwrap_or(Path::new(""));
                    e.insert(retrace_fsutil::DirAt::open(root, rel_dir).at("create", &tmp)?)
                }
            };
            // Named by the file the user knows (the error names the temp file too).
            let mut out = dir
                .create_new(tmp.file_name().unwrap_or_default(), 0o600)
                .at("write", &abs)?;
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
                    why: format!(
                        "the bytes copied into `{}` do not match the recorded SHA-256",
                        tmp.display()
                    ),
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
                let turn = self
                    .sidecar
                    .turns
                    .get(n)
                    .ok_or(CheckpointError::UnknownTurn(*n))?;
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
            ImageSource::Forward(at) => Ok(at.open().at("open", at.path())?),
            ImageSource::Workspace(rel) => {
                let root = self.sidecar.root.clone().ok_or(CheckpointError::NoTurn)?;
                if unsafe_to_write(&root, rel) {
                    return Err(CheckpointError::ExternalChange { path: rel.to_lossy() });
                }
                let abs = rel.under(&root);
                let (f, _) = retrace_fsutil::open_regular(&abs)
                    .map_err(|_| CheckpointError::ExternalChange { path: rel.to_lossy() })?;
                Ok(Box::new(f))
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

    /// Renames target `i` into place after checking it still equals its forward image (and that
    /// nothing but a plain file stands at the path).
    ///
    /// The file the rename replaces is held open from the check on, and hashed again once the
    /// rename is done: a save made in place between the check and the rename (an editor writing
    /// into the file it has open) went into that very file, so it is seen, and the file is put
    /// back at its name as it is now, bytes and mode; then the target counts as never renamed
    /// (`external_change`). Nothing written before the rename is lost with the replaced inode.
    fn publish_one(&self, root: &Path, m: &Manifest, i: usize, rel: &RelPath, abs: &Path) -> Result<()> {
        let t = &m.targets[i];
        let changed = || CheckpointError::ExternalChange { path: rel.to_lossy() };
        if unsafe_to_write(root, rel) {
            return Err(changed());
        }
        let held = open_existing(abs).map_err(|_| changed())?;
        let now = match &held {
            None => Image::absent(),
            Some((f, md)) => Image {
                existed: true,
                sha256: Some(hash_from_start(f).map_err(|_| changed())?),
                mode: Some(mode_bits(md)),
            },
        };
        let forward = Image::from(&t.forward);
        if !same_image(&forward, &now) {
            return Err(changed());
        }
        // Renamed within the directory as reached without a symlink: a parent swapped for one
        // since the check is an error here, never a rename somewhere else.
        let parent = parent_of(abs);
        let dir = retrace_fsutil::DirAt::open(root, parent.strip_prefix(root).unwrap_or(Path::new("")))
            .map_err(|_| changed())?;
        let name = abs.file_name().unwrap_or_default();
        self.opts.fs.step("rename").at("rename", abs)?;
        let moved_to = match t.action {
            TargetAction::Write => m.temp_path(root, rel, i),
            TargetAction::Delete => m.bak_path(root, rel, i),
        };
        let moved = moved_to.file_name().unwrap_or_default();
        match t.action {
            TargetAction::Write => dir.rename(moved, name).at("rename", abs)?,
            TargetAction::Delete => dir.rename(name, moved).at("rename", abs)?,
        }
        let Some((file, _)) = held else { return Ok(()) };
        let after = hash_from_start(&file).ok();
        if after.is_some()
            && after == now.sha256
            && file.metadata().is_ok_and(|md| Some(mode_bits(&md)) == now.mode)
        {
            return Ok(());
        }
        // Written to in the window: the file goes back to its name as it is now.
        match t.action {
            TargetAction::Delete => {
                // The `.bak` is that very file: renamed back, unless something took the name.
                if fs::symlink_metadata(abs).is_err() {
                    let _ = dir.rename(moved, name);
                }
            }
            TargetAction::Write => {
                let back = m.put_back_path(root, rel, i);
                let restored = (|| -> io::Result<()> {
                    let mut out = dir.create_new(back.file_name().unwrap_or_default(), 0o600)?;
                    (&file).seek(io::SeekFrom::Start(0))?;
                    io::copy(&mut &file, &mut out)?;
                    out.set_permissions(file.metadata()?.permissions())?;
                    self.opts.fs.sync_file(&out, "sync_temp")?;
                    dir.rename(back.file_name().unwrap_or_default(), name)
                })();
                if restored.is_err() {
                    let _ = dir.remove_file(back.file_name().unwrap_or_default());
                }
            }
        }
        let _ = self.opts.fs.sync_dir(&parent);
        Err(changed())
    }
}

/// The files whose state differs between the previewed plan and a fresh one (other action, other
/// conflict, other bytes, mode or existence on disk): a file that moved on disk is an
/// `external_change`; one whose plan changed for another reason (its payload went bad, say)
/// carries the fresh plan's conflict.
fn moved_since_preview(shown: &RestorePlan, fresh: &RestorePlan) -> Vec<Conflict> {
    // Keyed by the raw name: two names can share a lossy spelling.
    let key = |f: &PlannedFile| (f.rel.clone(), f.shown.clone());
    let before: std::collections::HashMap<_, &PlannedFile> =
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
