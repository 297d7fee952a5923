//! Writing a transaction's forward images (SPEC §5.4): the bytes each target holds before the
//! transaction replaces it, which compensation and undo put back (read back through
//! [`crate::forward`]).
//!
//! They are **copies**, never links: a process that keeps the old file open (an editor, a log
//! writer, an mmap) writes into the inode the rename leaves behind, and a hard-linked forward image
//! would be destroyed by it. A transaction writes all of its forward images into one pack,
//! `forward/<id>.pack`, each target's bytes at the offset its manifest records (`forwardAt`):
//! one new inode and one fsync per transaction, where a blob per file made one of each per target —
//! a restore of N files creates N + 1 inodes, git's N plus one. The pack is private (0600), written
//! under a temp name, fsynced, renamed, and its directory fsynced before the manifest that points
//! into it says `committing`; it lives exactly as long as its manifest (retention collects it with
//! the manifest). Targets holding the same bytes share one slice.
//!
//! Transactions of earlier builds kept forward images as content-addressed blobs (`forward/<sha>`,
//! and before that `blobs/<aa>/<bb>/<sha>`), some of them by hard link: those are still read, and
//! still made private copies of on recovery (`unshare_blob`).

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use retrace_fsutil::{copy_hashed, open_regular};

use crate::error::{CheckpointError, IoContext, Result};
use crate::fsio::parent_of;
use crate::layout::{blob_rel_path, forward_rel_path, pack_rel_path, pack_tmp_rel, FORWARD_DIR};
use crate::store::CheckpointStore;
use crate::tx::{Manifest, PackSlice};

/// A pack being written: its temp file, where it goes, and what it holds so far.
pub(crate) struct PackWriter {
    pub(crate) tmp: PathBuf,
    pub(crate) path: PathBuf,
    file: File,
    len: u64,
    by_sha: HashMap<String, PackSlice>,
}

impl PackWriter {
    /// Appends the bytes of the regular file `src`, which must hash to `sha` (else
    /// `ExternalChange`: it moved since the plan). Bytes already in the pack are not written again.
    pub(crate) fn append(&mut self, fs_: &retrace_fsutil::Fs, src: &Path, sha: &str) -> Result<PackSlice> {
        if let Some(s) = self.by_sha.get(sha) {
            return Ok(*s);
        }
        let changed = || CheckpointError::ExternalChange {
            path: src.to_string_lossy().into_owned(),
        };
        // Non-blocking and typed: a FIFO or a directory swapped in is a change, not a hang.
        let (input, _) = open_regular(src).map_err(|_| changed())?;
        fs_.step("write_blob").at("write", &self.tmp)?;
        let copied = copy_hashed(&input, Some(&mut self.file)).at("copy into", &self.tmp)?;
        if copied.sha256 != sha {
            return Err(changed());
        }
        let slice = PackSlice {
            offset: self.len,
            length: copied.len,
        };
        self.len += copied.len;
        self.by_sha.insert(sha.to_string(), slice);
        Ok(slice)
    }
}

impl CheckpointStore {
    /// Starts the pack of transaction `m` (its temp file, new and private); `forward/` is made if
    /// missing (true then: the sidecar's directory entry joins the caller's directory barrier).
    pub(crate) fn start_pack(&self, m: &Manifest) -> Result<(PackWriter, bool)> {
        let fs_ = self.opts.fs.clone();
        let dir = self.sidecar.dir.join(FORWARD_DIR);
        let mut made = false;
        if !dir.is_dir() {
            fs_.step("create_dir").at("create", &dir)?;
            fs::DirBuilder::new()
                .mode(retrace_fsutil::PRIVATE_DIR_MODE)
                .create(&dir)
                .or_else(|e| match e.kind() {
                    io::ErrorKind::AlreadyExists if dir.is_dir() => Ok(()),
                    _ => Err(e),
                })
                .at("create", &dir)?;
            made = true;
        }
        let path = self.sidecar.dir.join(pack_rel_path(&m.id));
        let tmp = self.sidecar.dir.join(pack_tmp_rel(&m.id));
        // A stale temp (a crash) is unlinked, never written through.
        match fs::remove_file(&tmp) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e).at("remove", &tmp),
            _ => {}
        }
        fs_.step("create_file").at("create", &tmp)?;
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(retrace_fsutil::PRIVATE_FILE_MODE)
            .open(&tmp)
            .at("create", &tmp)?;
        Ok((
            PackWriter {
                tmp,
                path,
                file,
                len: 0,
                by_sha: HashMap::new(),
            },
            made,
        ))
    }

    /// Removes transaction `m`'s pack and its temp file (a transaction that ends aborted).
    pub(crate) fn remove_pack(&self, m: &Manifest) -> Result<()> {
        let path = self.sidecar.dir.join(pack_rel_path(&m.id));
        let tmp = self.sidecar.dir.join(pack_tmp_rel(&m.id));
        for p in [tmp, path] {
            if fs::symlink_metadata(&p).is_ok() {
                self.opts.fs.remove_file(&p).at("remove", &p)?;
            }
        }
        Ok(())
    }

    /// Makes `blob` the only name of its bytes again, if it shares its inode with another name (a
    /// forward image an earlier build kept by hard link): a fresh private copy is renamed over it,
    /// so the other name keeps the old inode and nothing written through it reaches the blob. A blob
    /// that no longer hashes to its name (written through meanwhile) is removed instead. One that
    /// cannot be copied (a full disk) stays as it is with `keep` (a committed transaction may need
    /// it for undo; the error is returned), and is removed otherwise. Durable before it returns.
    pub(crate) fn unshare_blob(&self, blob: &Path, sha: &str, keep: bool) -> Result<()> {
        let shared = fs::symlink_metadata(blob).is_ok_and(|md| md.is_file() && md.nlink() > 1);
        if !shared {
            return Ok(());
        }
        let fs_ = self.opts.fs.clone();
        let dir = parent_of(blob);
        let tmp = dir.join(format!(".{sha}.tmp"));
        let copy = || -> Result<bool> {
            match fs::remove_file(&tmp) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e).at("remove", &tmp),
                _ => {}
            }
            fs_.step("create_file").at("create", &tmp)?;
            let mut out = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(retrace_fsutil::PRIVATE_FILE_MODE)
                .open(&tmp)
                .at("create", &tmp)?;
            fs_.step("write_blob").at("write", &tmp)?;
            let (input, _) = open_regular(blob).at("read", blob)?;
            let copied = copy_hashed(input, Some(&mut out)).at("copy into", &tmp)?;
            if copied.sha256 != sha {
                return Ok(false);
            }
            fs_.sync_file(&out, "sync_blob").at("sync", &tmp)?;
            fs_.rename(&tmp, blob).at("rename", blob)?;
            Ok(true)
        };
        match copy() {
            Ok(true) => {}
            Err(e) if keep => {
                let _ = fs::remove_file(&tmp);
                return Err(e);
            }
            Ok(false) | Err(_) => {
                let _ = fs::remove_file(&tmp);
                fs_.remove_file(blob).at("remove", blob)?;
            }
        }
        fs_.sync_dir(&dir).at("sync", &dir)
    }

    /// [`CheckpointStore::unshare_blob`] for every forward image of `m` kept as a blob (manifests
    /// of earlier builds).
    pub(crate) fn unshare_forward_blobs(&self, m: &Manifest, keep: bool) -> Result<()> {
        if m.forward_pack.is_some() {
            return Ok(());
        }
        let mut first = None;
        for t in &m.targets {
            let Some(sha) = t.forward.sha256.as_deref().filter(|_| t.forward.existed) else {
                continue;
            };
            for rel in [forward_rel_path(sha), blob_rel_path(sha)] {
                if let Err(e) = self.unshare_blob(&self.sidecar.dir.join(rel), sha, keep) {
                    first.get_or_insert(e);
                }
            }
        }
        first.map_or(Ok(()), Err)
    }
}
