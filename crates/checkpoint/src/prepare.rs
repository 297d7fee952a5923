//! Steps (2) and (3) of a file transaction (SPEC §5.4): the temp files beside its targets, holding
//! their restore images, and the forward images copied into its pack, all durable before anything
//! is published.

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use retrace_fsutil::{copy_hashed, DirAt};

use crate::error::{CheckpointError, IoContext, Result};
use crate::fsio::{held_dir, parent_of, sync_error, unsafe_to_write};
use crate::store::CheckpointStore;
use crate::transaction::TxInput;
use crate::tx::{Manifest, PackSlice};
use crate::workers;

impl CheckpointStore {
    /// Steps (2) and (3): the forward images copied into the transaction's pack, and the temp
    /// files, all durable.
    ///
    /// Every file is written first (the temp files, then the pack) and all are fsynced in one barrier
    /// ([`retrace_fsutil::Fs::sync_paths`]), so the durable cost belongs to the batch, not to each
    /// file; only then is the pack renamed to its name, and `forward/` (and the parent of each
    /// directory made for a target) fsynced (a second barrier). Nothing is published before both:
    /// the manifest still says `prepared`.
    ///
    /// The temp files' own names are not made durable here: a temp file lost to a power cut
    /// before its rename leaves its target as it was, which compensation (all recovery does with
    /// a `committing` transaction) takes as never renamed; the renames' directories are fsynced
    /// once they are done.
    ///
    /// Returns where each target's forward image is in the pack (`None`: it did not exist).
    pub(crate) fn prepare_files(
        &mut self,
        root: &Path,
        m: &Manifest,
        inputs: &[TxInput],
    ) -> Result<Vec<Option<PackSlice>>> {
        let fs_ = self.opts.fs.clone();
        // (3) Temp files beside their targets; `made`: the parents of directories made for them.
        let (temps, made) = self.write_temps(root, m, inputs)?;
        // (2) The forward images: the current bytes, kept so compensation and undo can put them back.
        let mut slices = vec![None; inputs.len()];
        if !inputs.iter().any(|i| i.forward.existed) {
            let entries: Vec<(&Path, &str)> = temps
                .iter()
                .map(|t| (t.as_path(), "sync_temp"))
                .chain(made.iter().map(|d| (d.as_path(), "sync_dir")))
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
        // One barrier for the directory entries publishing needs: the pack (and `forward/` itself
        // when new), and the directories made for targets.
        let pack_dir = parent_of(&pack.path);
        let mut entries: Vec<(&Path, &str)> = vec![(pack_dir.as_path(), "sync_dir")];
        if made_dir {
            entries.push((self.sidecar.dir.as_path(), "sync_dir"));
        }
        entries.extend(made.iter().map(|d| (d.as_path(), "sync_dir")));
        fs_.sync_paths(&entries).map_err(sync_error)?;
        Ok(slices)
    }

    /// Step (3): a temp file beside each target that the transaction writes, holding its restore
    /// image (verified against its SHA-256) and mode; not synced. Returns the temp files and the
    /// parents of the directories it made for them.
    ///
    /// Every target is checked and its missing directories made first, in order; then the temp
    /// files are written, by several threads when there are many (making a file is most of a
    /// restore's cost, and the kernel makes files in different directories side by side). The
    /// first error stops every thread; the caller removes whatever temp files exist.
    fn write_temps(
        &self,
        root: &Path,
        m: &Manifest,
        inputs: &[TxInput],
    ) -> Result<(Vec<PathBuf>, BTreeSet<PathBuf>)> {
        let fs_ = self.opts.fs.clone();
        let mut made_parents = BTreeSet::new();
        let mut jobs: Vec<(usize, PathBuf)> = Vec::new();
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
                made_parents.extend(made.iter().map(|d| parent_of(d)));
            }
            jobs.push((i, parent));
        }
        // Whole directories to each thread (`workers.rs`).
        jobs.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
        let runs = workers::split_runs(&jobs, workers::threads_for(jobs.len()), |j| &j.1);
        workers::run_all(
            &runs,
            || None,
            |held, (i, parent)| self.write_temp(root, m, (*i, &inputs[*i]), parent, held),
        )?;
        let temps = inputs
            .iter()
            .enumerate()
            .filter(|(_, inp)| inp.restore.image.existed)
            .map(|(i, inp)| m.temp_path(root, &inp.rel, i))
            .collect();
        Ok((temps, made_parents))
    }

    /// One temp file of [`CheckpointStore::write_temps`]: target `i`'s restore image, checked
    /// against its SHA-256, with its mode.
    fn write_temp(
        &self,
        root: &Path,
        m: &Manifest,
        (i, inp): (usize, &TxInput),
        parent: &Path,
        held: &mut Option<DirAt>,
    ) -> Result<()> {
        let fs_ = &self.opts.fs;
        let abs = inp.rel.under(root);
        let tmp = m.temp_path(root, &inp.rel, i);
        fs_.step("create_temp").at("create", &tmp)?;
        // Made in the directory as reached without a symlink and held open: a parent swapped for a
        // symlink meanwhile cannot lead the temp file (or its rename) anywhere else. A thread's
        // targets come directory by directory, so each is opened once.
        let dir = held_dir(held, root, parent).at("create", &tmp)?;
        // Named by the file the user knows (the error names the temp file too).
        let mut out = dir
            .create_new(tmp.file_name().unwrap_or_default(), 0o600)
            .at("write", &abs)?;
        let mut src = self.sidecar.open_image(&inp.restore)?;
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
        Ok(())
    }
}
