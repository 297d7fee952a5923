//! Step (5) of a file transaction (SPEC §5.4): each target renamed into place after a look at its
//! path, the file it replaces held to its forward image; by several threads when there are many
//! (`workers.rs`).

use std::fs;
use std::io::{self, Seek};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use retrace_fsutil::{DirAt, RelPath};

use crate::error::{CheckpointError, IoContext, Result};
use crate::fsio::{hash_from_start, held_dir, mode_bits, parent_of};
use crate::model::{same_image, Image};
use crate::store::CheckpointStore;
use crate::transaction::TxInput;
use crate::tx::{Manifest, TargetAction};
use crate::workers;

impl CheckpointStore {
    /// Publishes every target: in order by one thread, or by directories across several when
    /// there are many. Returns which targets were renamed (a target put back in the window, or
    /// never reached, was not), and the first error.
    pub(crate) fn publish_all(
        &self,
        root: &Path,
        m: &Manifest,
        inputs: &[TxInput],
    ) -> (Vec<bool>, Result<()>) {
        let renamed: Vec<AtomicBool> = inputs.iter().map(|_| AtomicBool::new(false)).collect();
        let mut jobs: Vec<(PathBuf, usize)> = inputs
            .iter()
            .enumerate()
            .map(|(i, inp)| (parent_of(&inp.rel.under(root)), i))
            .collect();
        let threads = workers::threads_for_waits(jobs.len());
        if threads > 1 {
            jobs.sort();
        }
        let runs = workers::split_runs(&jobs, threads, |j| &j.0);
        let result = workers::run_all(
            &runs,
            || None,
            |held, (_, i)| {
                let inp = &inputs[*i];
                let abs = inp.rel.under(root);
                self.publish_one(root, m, (*i, &inp.rel, &abs), held)?;
                renamed[*i].store(true, Ordering::Relaxed);
                Ok(())
            },
        );
        (renamed.into_iter().map(AtomicBool::into_inner).collect(), result)
    }

    /// Renames target `i` into place after a look at the path (nothing but a plain file there,
    /// existing as the forward image did, with its mode and length), then holds the replaced
    /// file to the forward image.
    ///
    /// The file the rename replaces is held open from the look on, and hashed once the rename is
    /// done: any change since its bytes were copied into the pack (a save made in place, an
    /// editor writing into the file it has open, even in the window before the rename) went into
    /// that very file, so it is seen, and the file is put back at its name as it is now, bytes
    /// and mode; then the target counts as never renamed (`external_change`). Nothing written
    /// before the rename is lost with the replaced inode.
    fn publish_one(
        &self,
        root: &Path,
        m: &Manifest,
        (i, rel, abs): (usize, &RelPath, &Path),
        held_dir_slot: &mut Option<DirAt>,
    ) -> Result<()> {
        let t = &m.targets[i];
        let changed = || CheckpointError::ExternalChange { path: rel.to_lossy() };
        // Its directory, reached from the root without following a symlink and held (`held_dir`):
        // the check, the rename and a put-back all happen in that very directory; one that is no
        // longer reached that way is an `external_change`.
        let parent = parent_of(abs);
        let dir = held_dir(held_dir_slot, root, &parent).map_err(|_| changed())?;
        let name = abs.file_name().unwrap_or_default();
        // Never through a symlink, and only a plain file (or nothing) is replaced.
        let held = dir.open_existing(name).map_err(|_| changed())?;
        let forward = Image::from(&t.forward);
        // Before the rename, a look at what stands there: it must exist as the forward image did,
        // with its mode and, when the pack holds its bytes, its length (a manifest of an earlier
        // build, without `forwardAt`: its SHA-256). What decides is the hash after the rename,
        // below: a change this look misses is caught there and put back.
        let looks_same = match (&held, t.forward_at) {
            (None, _) => !forward.existed,
            (Some((_, md)), Some(at)) => {
                forward.existed && md.len() == at.length && Some(mode_bits(md)) == forward.mode
            }
            (Some((f, md)), None) => same_image(
                &forward,
                &Image {
                    existed: true,
                    sha256: Some(hash_from_start(f).map_err(|_| changed())?),
                    mode: Some(mode_bits(md)),
                },
            ),
        };
        if !looks_same {
            return Err(changed());
        }
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
            && after == forward.sha256
            && file
                .metadata()
                .is_ok_and(|md| Some(mode_bits(&md)) == forward.mode)
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
