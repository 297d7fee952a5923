//! Forward images of a transaction as blobs (SPEC §5.4): by hard link when the target allows it,
//! else by copy; and making sure no blob stays a name of a workspace file once a transaction is
//! committed or rolled back.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use retrace_fsutil::copy_hashed;

use crate::blobs::{blob_rel_path, forward_rel_path};
use crate::capture::{mode_bits, open_existing};
use crate::commit::parent_of;
use crate::error::{CheckpointError, IoContext, Result};
use crate::model::Image;
use crate::store::CheckpointStore;
use crate::tx::Manifest;

/// A forward image kept by hard link: the blob (once renamed to its name) is target `target`'s inode.
#[derive(Debug, Clone)]
pub(crate) struct Linked {
    /// Index of the target whose inode it is.
    pub(crate) target: usize,
    /// The blob's final name.
    pub(crate) blob: PathBuf,
    pub(crate) sha: String,
    /// The inode: `(st_dev, st_ino)`.
    pub(crate) inode: (u64, u64),
}

impl CheckpointStore {
    /// Whether the blob named `sha` is stored: a regular file with no other name that hashes to its
    /// name. One that shares its inode with another name (a workspace file, if a transaction's
    /// clean-up was cut short) could still change through that name: it is written afresh, not
    /// trusted.
    pub(crate) fn blob_is_stored(&self, sha: &str) -> bool {
        let path = self.forward_blob(sha);
        fs::symlink_metadata(&path).is_ok_and(|md| md.is_file() && md.nlink() == 1)
            && File::open(&path)
                .and_then(retrace_fsutil::hash_reader)
                .is_ok_and(|(h, _)| h == sha)
    }

    /// Puts `src`'s bytes into a temp file beside the blob named `sha` (not
    /// [stored](CheckpointStore::blob_is_stored) yet), and adds `(temp, blob)` to `blobs`; not synced
    /// (the caller's barrier does that, then renames). Fails with `ExternalChange` if the bytes are
    /// not `sha`.
    ///
    /// The temp file is a hard link to `src` when `src` is a regular file with no other link (and
    /// `link` is set): no bytes are copied and no inode is created, and the blob is the inode the
    /// rename over `src` will leave behind. Returns that inode and the blob's name then. The link is
    /// verified (its only other name is `src`, it hashes to `sha`) before it is trusted; anything that
    /// refuses or fails the link (another file system — which clears `link` for the rest of the batch
    /// —, too many links, no permission, another link appearing) falls back to a copy.
    pub(crate) fn write_blob_unsynced(
        &self,
        src: &Path,
        sha: &str,
        blobs: &mut Vec<(PathBuf, PathBuf)>,
        link: &mut bool,
    ) -> Result<Option<((u64, u64), PathBuf)>> {
        let fs_ = self.opts.fs.clone();
        let final_path = self.dir.join(forward_rel_path(sha));
        let dir = parent_of(&final_path);
        fs_.create_dir_all(&dir).at("create", &dir)?;
        let tmp = dir.join(format!(".{sha}.tmp"));
        // A stale temp file (from a crash) is unlinked, never truncated or written through: it may be
        // a link to a workspace file.
        match fs::remove_file(&tmp) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e).at("remove", &tmp),
            _ => {}
        }
        if *link && fs::symlink_metadata(src).is_ok_and(|md| md.is_file() && md.nlink() == 1) {
            fs_.step("link_blob").at("link", &tmp)?;
            match fs::hard_link(src, &tmp) {
                Ok(()) => {
                    // From here on the caller removes the temp file if anything fails.
                    blobs.push((tmp.clone(), final_path.clone()));
                    // What was linked: a regular file whose only other name is `src` (not a symlink
                    // that replaced it since the check, nor a file that gained a name).
                    let named = fs::symlink_metadata(&tmp).at("read", &tmp)?;
                    let file = File::open(&tmp).at("read", &tmp)?;
                    let md = file.metadata().at("read", &tmp)?;
                    if named.is_file() && named.nlink() == 2 && md.ino() == named.ino() {
                        let (h, _) = retrace_fsutil::hash_reader(&file).at("read", &tmp)?;
                        if h != sha {
                            return Err(CheckpointError::ExternalChange {
                                path: src.to_string_lossy().into_owned(),
                            });
                        }
                        return Ok(Some(((md.dev(), md.ino()), final_path)));
                    }
                    // Not a lone regular file any more: a copy, below.
                    blobs.pop();
                    fs::remove_file(&tmp).at("remove", &tmp)?;
                }
                Err(e) if e.kind() == io::ErrorKind::CrossesDevices => *link = false,
                Err(_) => {}
            }
        }
        let mut out = new_blob_temp(&fs_, &tmp)?;
        // From here on the caller removes the temp file if anything fails.
        blobs.push((tmp.clone(), final_path));
        let (input, _) = retrace_fsutil::open_regular(src).at("read", src)?;
        fs_.step("write_blob").at("write", &tmp)?;
        let copied = copy_hashed(&input, Some(&mut out)).at("copy into", &tmp)?;
        if copied.sha256 != sha {
            return Err(CheckpointError::ExternalChange {
                path: src.to_string_lossy().into_owned(),
            });
        }
        Ok(None)
    }

    /// Makes `blob` the only name of its bytes again, if it shares its inode with another name (a
    /// forward image kept by hard link whose target was never renamed, or was put back from its
    /// `.bak`): a fresh private copy is renamed over it, so the other name keeps the old inode and
    /// nothing written through it reaches the blob. A blob that no longer hashes to its name (written
    /// through meanwhile) is removed instead. One that cannot be copied (a full disk) stays as it is
    /// with `keep` (a committed transaction may need it for undo; the error is returned), and is
    /// removed otherwise (its bytes are that other name's, and nothing else needs them). Durable (the
    /// copy or the removal, then its directory) before it returns.
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
            let mut out = new_blob_temp(&fs_, &tmp)?;
            fs_.step("write_blob").at("write", &tmp)?;
            let copied =
                copy_hashed(File::open(blob).at("read", blob)?, Some(&mut out)).at("copy into", &tmp)?;
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

    /// [`CheckpointStore::unshare_blob`] for every forward image of `m`.
    pub(crate) fn unshare_forward_blobs(&self, m: &Manifest, keep: bool) -> Result<()> {
        let mut first = None;
        for t in &m.targets {
            let Some(sha) = t.forward.sha256.as_deref().filter(|_| t.forward.existed) else {
                continue;
            };
            // Where this build links them, and where earlier builds did.
            for rel in [forward_rel_path(sha), blob_rel_path(sha)] {
                if let Err(e) = self.unshare_blob(&self.dir.join(rel), sha, keep) {
                    first.get_or_insert(e);
                }
            }
        }
        first.map_or(Ok(()), Err)
    }
}

/// [`image_of`], with the inode (`(st_dev, st_ino)`) it read when the file exists.
pub(crate) fn image_and_inode(abs: &Path) -> io::Result<(Image, Option<(u64, u64)>)> {
    let Some((file, meta)) = open_existing(abs)? else {
        return Ok((Image::absent(), None));
    };
    let hashed = copy_hashed::<_, File>(&file, None)?;
    let image = Image {
        existed: true,
        sha256: Some(hashed.sha256),
        mode: Some(mode_bits(&meta)),
    };
    Ok((image, Some((meta.dev(), meta.ino()))))
}

/// Creates a blob's temp file: new (never an existing file, which could be another name of a
/// workspace file), private (0600), after its failpoint.
fn new_blob_temp(fs_: &retrace_fsutil::Fs, tmp: &Path) -> Result<File> {
    fs_.step("create_file").at("create", tmp)?;
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(retrace_fsutil::PRIVATE_FILE_MODE)
        .open(tmp)
        .at("create", tmp)
}
