//! Putting a transaction's targets back (SPEC §5.4): aborting a `prepared` one, and compensating a
//! `committing` one in reverse order from its forward images, with a recovery copy for content that
//! matches neither image.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use retrace_fsutil::{copy_hashed, DirAt};

use crate::error::{CheckpointError, IoContext, Result};
use crate::fsio::{image_of, parent_of, remove_in_workspace, unsafe_to_write};
use crate::model::{same_image, Image};
use crate::store::CheckpointStore;
use crate::tx::{Manifest, TargetAction, TxState};

impl CheckpointStore {
    /// Removes the temp files of a transaction that published nothing and marks it aborted.
    pub(crate) fn abort_prepared(&mut self, root: &Path, m: &mut Manifest) {
        let mut unreachable = false;
        for (i, t) in m.targets.iter().enumerate() {
            if let Ok(rel) = t.rel() {
                let gone = remove_in_workspace(&self.opts.fs, root, &m.temp_path(root, &rel, i));
                unreachable |= !matches!(gone, Ok(retrace_fsutil::Removal::Gone));
            }
        }
        if unreachable {
            // A temp file that could not be removed (its directory swapped for a symlink since it
            // was made, say): the manifest stays `prepared` so that recovery finds it later.
            return;
        }
        // Nothing was published: the pack is of no use. Should its removal fail, the manifest stays
        // `prepared` and recovery retries.
        if self.remove_pack(m).is_err() {
            return;
        }
        m.state = TxState::Aborted;
        let _ = self.save_manifest(m);
    }

    /// Puts back the renamed targets (among `0..upto`) in reverse order, removes every temp file, and
    /// marks the transaction aborted — or leaves it `committing` when a file matched neither image
    /// (its bytes are then kept in a recovery copy). Returns the error to report when stuck.
    pub(crate) fn compensate(
        &mut self,
        root: &Path,
        m: &mut Manifest,
        upto: usize,
    ) -> Option<CheckpointError> {
        let renamed: Vec<bool> = (0..m.targets.len()).map(|i| i < upto).collect();
        self.compensate_renamed(root, m, &renamed)
    }

    /// [`CheckpointStore::compensate`], told target by target which may have been renamed
    /// (`renamed[i]`; a target past its end was not): what publishing by several threads leaves.
    pub(crate) fn compensate_renamed(
        &mut self,
        root: &Path,
        m: &mut Manifest,
        renamed: &[bool],
    ) -> Option<CheckpointError> {
        let mut stuck = None;
        // Targets never renamed: those not in `renamed`, and every write target whose temp file
        // is still there. They are marked unpublished, durably, before anything is put back or removed: once
        // its temp file is gone, such a target, if someone changed it meanwhile, would pass for a
        // published one holding foreign content, and a later recovery would get stuck on it.
        let never: Vec<usize> = m
            .targets
            .iter()
            .enumerate()
            .filter(|(i, t)| {
                t.published
                    && (!renamed.get(*i).copied().unwrap_or(false)
                        || (t.action == TargetAction::Write
                            && t.rel().is_ok_and(|rel| m.temp_path(root, &rel, *i).exists())))
            })
            .map(|(i, _)| i)
            .collect();
        let mut marked = true;
        if !never.is_empty() {
            for &i in &never {
                m.targets[i].published = false;
            }
            if let Err(e) = self.save_manifest(m) {
                for &i in &never {
                    m.targets[i].published = true;
                }
                marked = false;
                stuck = Some(e);
            }
        }
        let mut settled = Vec::new();
        for i in (0..m.targets.len()).rev() {
            if !m.targets[i].published || never.contains(&i) {
                continue;
            }
            match self.put_back(root, m, i) {
                Ok(()) => settled.push(i),
                Err(e) => {
                    stuck.get_or_insert(e);
                }
            }
        }
        if stuck.is_some() {
            // Staying open: what was put back is no longer the transaction's, so a later recovery
            // (after other transactions, maybe) goes back only to the targets still stuck. Were
            // they left `published`, it would put the forward images back again over whatever
            // a later restore wrote there.
            for i in settled {
                m.targets[i].published = false;
            }
        }
        if !marked {
            // The temp files still say which targets were never renamed; recovery finishes.
            return stuck;
        }
        for (i, t) in m.targets.iter().enumerate() {
            if let Ok(rel) = t.rel() {
                let tmp = m.temp_path(root, &rel, i);
                match remove_in_workspace(&self.opts.fs, root, &tmp) {
                    Ok(retrace_fsutil::Removal::Gone) => {}
                    // Left where it is (never followed): the transaction stays open and recovery
                    // looks for it again at the next open.
                    Ok(retrace_fsutil::Removal::Unreachable) => {
                        stuck.get_or_insert(CheckpointError::ExternalChange { path: rel.to_lossy() });
                    }
                    Err(e) => {
                        stuck.get_or_insert(CheckpointError::Io {
                            op: "remove",
                            path: tmp,
                            source: e,
                        });
                    }
                }
            }
        }
        // Forward images an earlier build kept by hard link become private copies before the
        // transaction ends (kept as they are while it stays open: a later compensation needs them).
        if let Err(e) = self.unshare_forward_blobs(m, stuck.is_some()) {
            if stuck.is_none() {
                // Still `committing`: recovery compensates again and retries.
                let _ = self.save_manifest(m);
                return Some(e);
            }
        }
        if stuck.is_none() {
            m.state = TxState::Aborted;
        }
        if let Err(e) = self.save_manifest(m) {
            stuck.get_or_insert(e);
        } else if m.state == TxState::Aborted {
            // Everything is back: the pack is of no use (collection would remove it anyway).
            let _ = self.remove_pack(m);
        }
        stuck
    }

    /// Puts one published target back to its forward image, if it holds the restore image.
    ///
    /// Every name it creates, renames or removes (the target, its `.tmp`, `.bak`, `.back.tmp`,
    /// `.kept` and recovery copy) is used inside the target's directory as reached from the root
    /// without following a symlink and held open, and files are created exclusively and without
    /// following a symlink: nothing planted in the workspace (a symlink at one of those names) can
    /// lead a write outside it.
    pub(crate) fn put_back(&mut self, root: &Path, m: &mut Manifest, i: usize) -> Result<()> {
        let t = m.targets[i].clone();
        let rel = t.rel()?;
        let abs = rel.under(root);
        let fs_ = self.opts.fs.clone();
        let name_of = |p: &Path| p.file_name().unwrap_or_default().to_os_string();
        let (bak, tmp, back) = (
            m.bak_path(root, &rel, i),
            m.temp_path(root, &rel, i),
            m.put_back_path(root, &rel, i),
        );
        let name = name_of(&abs);
        // Checked first: nothing below may look through a symlinked parent.
        if unsafe_to_write(root, &rel) {
            return Err(CheckpointError::ExternalChange { path: rel.to_lossy() });
        }
        let parent = parent_of(&abs);
        let dir = DirAt::open(root, parent.strip_prefix(root).unwrap_or(Path::new("")))
            .map_err(|_| CheckpointError::ExternalChange { path: rel.to_lossy() })?;
        let is_file = |p: &Path| fs::symlink_metadata(p).is_ok_and(|m| m.is_file());
        let present = |p: &Path| fs::symlink_metadata(p).is_ok();
        if present(&back) {
            // A forward copy an interrupted compensation never renamed: written again below.
            fs_.step("remove_file").at("remove", &back)?;
            dir.remove_file(&name_of(&back)).at("remove", &back)?;
        }
        if present(&tmp) {
            // Never renamed: the target was not touched.
            fs_.step("remove_file").at("remove", &tmp)?;
            return dir.remove_file(&name_of(&tmp)).at("remove", &tmp);
        }
        let now = image_of(&abs).at("read", &abs)?;
        let forward = Image::from(&t.forward);
        let restore = Image::from(&t.restore);
        let bak_there = is_file(&bak);
        if same_image(&forward, &now) && (!forward.existed || !bak_there) {
            return Ok(());
        }
        // Gone (someone deleted what the transaction wrote): nothing to overwrite, so the forward
        // image goes back below like over the restore image.
        if now.existed && !same_image(&restore, &now) {
            // Someone else's content: never overwrite it; keep a copy and leave it in place.
            let sha = now.sha256.clone().unwrap_or_default();
            let copy = recovery_copy_path(&abs, &sha[..sha.len().min(8)]);
            self.keep_recovery_copy(&dir, &abs, &copy, &sha)?;
            if bak_there {
                let keep = m.kept_path(root, &rel, i);
                fs_.step("rename").at("rename", &bak)?;
                dir.rename(&name_of(&bak), &name_of(&keep)).at("rename", &bak)?;
            }
            m.targets[i].recovery_copy = Some(copy.to_string_lossy().into_owned());
            return Err(CheckpointError::Stuck {
                tx: m.id.clone(),
                path: rel.to_lossy(),
                copy: copy.to_string_lossy().into_owned(),
            });
        }
        // The target holds the restore image (or nothing): put the forward image back.
        if !forward.existed {
            fs_.step("remove_file").at("remove", &abs)?;
            dir.remove_file(&name).at("remove", &abs)?;
        } else if bak_there {
            fs_.step("rename").at("rename", &bak)?;
            dir.rename(&name_of(&bak), &name).at("rename", &bak)?;
        } else {
            let sha = forward.sha256.clone().unwrap_or_default();
            let Some(at) = self.sidecar.forward_at(m, i) else {
                return Err(CheckpointError::MissingPayload {
                    turn: m.turn.unwrap_or(0),
                    path: rel.to_lossy(),
                    why: format!("transaction {} has no forward image for it", m.id),
                });
            };
            // Opened before anything is created: a missing pack leaves nothing behind.
            let src = at.open().at("open", at.path())?;
            // Not `tmp`: a crash before the rename must not look like a target never published.
            fs_.step("create_temp").at("create", &back)?;
            let mut out = dir.create_new(&name_of(&back), 0o600).at("create", &back)?;
            let written = (|| -> Result<()> {
                let copied = copy_hashed(src, Some(&mut out)).at("write", &back)?;
                if copied.sha256 != sha {
                    return Err(CheckpointError::MissingPayload {
                        turn: m.turn.unwrap_or(0),
                        path: rel.to_lossy(),
                        why: format!("its forward image in `{}` is corrupt", at.path().display()),
                    });
                }
                out.set_permissions(fs::Permissions::from_mode(forward.mode.unwrap_or(0o644)))
                    .at("chmod", &back)?;
                fs_.sync_file(&out, "sync_temp").at("sync", &back)?;
                fs_.step("rename").at("rename", &abs)?;
                dir.rename(&name_of(&back), &name).at("rename", &abs)
            })();
            if written.is_err() {
                let _ = dir.remove_file(&name_of(&back));
            }
            written?;
        }
        fs_.sync_dir(&parent).at("sync", &parent)
    }

    /// Copies the file at `abs` (which hashed to `sha`) to the recovery copy `copy` in `dir`, made
    /// durable before anything else happens to the target. A regular file already there with those
    /// bytes (an earlier attempt's) is kept; anything else there is an error, never written through.
    fn keep_recovery_copy(&self, dir: &DirAt, abs: &Path, copy: &Path, sha: &str) -> Result<()> {
        let fs_ = &self.opts.fs;
        let name = copy.file_name().unwrap_or_default();
        fs_.step("recovery_copy").at("copy", copy)?;
        let mut out = match dir.create_new(name, 0o600) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let kept = retrace_fsutil::open_regular(copy)
                    .ok()
                    .filter(|(_, md)| md.nlink() == 1)
                    .and_then(|(f, _)| copy_hashed::<_, fs::File>(f, None).ok())
                    .is_some_and(|c| c.sha256 == sha);
                if kept && !fs::symlink_metadata(copy).is_ok_and(|m| m.file_type().is_symlink()) {
                    return Ok(());
                }
                return Err(e).at("create", copy);
            }
            Err(e) => return Err(e).at("create", copy),
        };
        let copied = (|| -> Result<()> {
            let (src, _) = retrace_fsutil::open_regular(abs).at("open", abs)?;
            copy_hashed(src, Some(&mut out)).at("copy", copy)?;
            fs_.sync_file(&out, "sync_temp").at("sync", copy)
        })();
        if let Err(e) = copied {
            let _ = dir.remove_file(name);
            return Err(e);
        }
        let parent = parent_of(copy);
        fs_.sync_dir(&parent).at("sync", &parent)
    }
}

/// `<name>.retrace-recovery-<sha8>` beside `abs` (a hash of the name instead when that would be
/// too long a name).
fn recovery_copy_path(abs: &Path, sha8: &str) -> std::path::PathBuf {
    let name = abs.file_name().unwrap_or_default();
    parent_of(abs).join(retrace_fsutil::sibling_name(
        "",
        name,
        &format!("retrace-recovery-{sha8}"),
    ))
}
