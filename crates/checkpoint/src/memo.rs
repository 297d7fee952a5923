//! What a plan hashed, kept in the plan so that the commit's re-plan hashes only what changed since.
//!
//! `commit` plans again before it writes (the workspace may have moved since the user saw the plan),
//! and a plan hashes every file of the restore set and every payload it would restore from: done
//! twice, that was a third of a 100-file restore's fixed cost. A hash is reused only when the
//! file's fingerprint — device, inode, size, mode, modification and change times — is the one it
//! was hashed under; anything written since changes the change time. Where that is not enough (a
//! write within one tick of the clock that keeps the size), nothing unsafe follows: the memo only
//! decides what the re-plan reports, and every target is hashed again right before its rename
//! (`publish_one`) and every restore image while it is copied (`write_temps`).
//!
//! While a plan computes its diffs (`plan_diff.rs`), the memo also keeps the bytes of what it
//! reads (each file or pack slice no larger than the diff's input limit), so that a file hashed
//! for the plan is not read a second time for its diff: the plan takes them file by file
//! ([`HashMemo::take_kept`]) and drops the rest ([`HashMemo::drop_kept`]).

use std::collections::HashMap;
use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use retrace_fsutil::copy_hashed;

use crate::fsio::{mode_bits, open_existing};
use crate::model::Image;

/// The identity and state of a file, as `fstat` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fingerprint {
    dev: u64,
    ino: u64,
    size: u64,
    mode: u32,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Fingerprint {
    fn of(md: &Metadata) -> Self {
        Fingerprint {
            dev: md.dev(),
            ino: md.ino(),
            size: md.size(),
            mode: md.mode(),
            mtime: (md.mtime(), md.mtime_nsec()),
            ctime: (md.ctime(), md.ctime_nsec()),
        }
    }
}

/// Where bytes read while hashing came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Kept {
    /// A whole file.
    File(PathBuf),
    /// The slice of a pack at this offset.
    Slice(PathBuf, u64),
}

/// SHA-256 digests of files, by path, each with the fingerprint it was computed under.
#[derive(Debug, Clone, Default)]
pub(crate) struct HashMemo {
    digests: HashMap<PathBuf, (Fingerprint, String, u64)>,
    /// The bytes of what was read since the last [`HashMemo::drop_kept`], each no larger than
    /// `keep_up_to` (0: nothing is kept).
    kept: HashMap<Kept, Vec<u8>>,
    keep_up_to: u64,
}

impl HashMemo {
    /// The SHA-256 and length of the open `file` (at `path`, with metadata `md`): remembered when
    /// its fingerprint is unchanged, else read and remembered.
    fn digest(&mut self, path: &Path, file: &File, md: &Metadata) -> io::Result<(String, u64)> {
        let fp = Fingerprint::of(md);
        if let Some((seen, sha, len)) = self.digests.get(path) {
            if *seen == fp {
                return Ok((sha.clone(), *len));
            }
        }
        let hashed = if self.keep_up_to > 0 && md.len() <= self.keep_up_to {
            let mut bytes = Vec::with_capacity(md.len() as usize);
            let hashed = copy_hashed(file, Some(&mut bytes))?;
            self.kept.insert(Kept::File(path.to_path_buf()), bytes);
            hashed
        } else {
            copy_hashed::<_, File>(file, None)?
        };
        self.digests
            .insert(path.to_path_buf(), (fp, hashed.sha256.clone(), hashed.len));
        Ok((hashed.sha256, hashed.len))
    }

    /// Keeps the bytes of each file (or pack slice) of at most `limit` bytes read from now on;
    /// 0 keeps none.
    pub(crate) fn keep_up_to(&mut self, limit: u64) {
        self.keep_up_to = limit;
    }

    /// The bytes kept of `at`, taken out of the memo.
    pub(crate) fn take_kept(&mut self, at: &Kept) -> Option<Vec<u8>> {
        self.kept.remove(at)
    }

    /// Forgets every kept byte.
    pub(crate) fn drop_kept(&mut self) {
        self.kept.clear();
    }

    /// [`crate::fsio::image_of`], through the memo.
    pub(crate) fn image_of(&mut self, abs: &Path) -> io::Result<Image> {
        let Some((file, md)) = open_existing(abs)? else {
            return Ok(Image::absent());
        };
        let (sha, _) = self.digest(abs, &file, &md)?;
        Ok(Image {
            existed: true,
            sha256: Some(sha),
            mode: Some(mode_bits(&md)),
        })
    }

    /// Why the payload at `path` cannot be used (unreadable, or not `sha` when given), or `None`.
    pub(crate) fn verify_file(&mut self, path: &Path, sha: Option<&str>) -> Option<String> {
        let got = retrace_fsutil::open_regular(path).and_then(|(f, md)| self.digest(path, &f, &md));
        match got {
            Err(e) => Some(format!("payload `{}` cannot be read: {e}", path.display())),
            Ok((got, _)) => match sha {
                Some(want) if want != got => {
                    Some(format!("payload `{}` does not match its SHA-256", path.display()))
                }
                _ => None,
            },
        }
    }

    /// Why forward image `at` cannot be used (unreadable, or not `sha`), or `None`.
    pub(crate) fn verify_forward(&mut self, at: &crate::forward::ForwardAt, sha: &str) -> Option<String> {
        match at {
            crate::forward::ForwardAt::Blob(p) => self.verify_file(p, Some(sha)),
            crate::forward::ForwardAt::Pack { path, slice } => {
                let keep = self.keep_up_to > 0 && slice.length <= self.keep_up_to;
                let got = at.open().and_then(|r| match keep {
                    false => retrace_fsutil::hash_reader(r),
                    true => {
                        let mut bytes = Vec::with_capacity(slice.length as usize);
                        let hashed = copy_hashed(r, Some(&mut bytes))?;
                        self.kept.insert(Kept::Slice(path.clone(), slice.offset), bytes);
                        Ok((hashed.sha256, hashed.len))
                    }
                });
                match got {
                    Err(e) => Some(format!("pack `{}` cannot be read: {e}", path.display())),
                    Ok((_, len)) if len != slice.length => Some(format!(
                        "pack `{}` ends inside the forward image at offset {}",
                        path.display(),
                        slice.offset
                    )),
                    Ok((got, _)) if got != sha => Some(format!(
                        "the forward image at offset {} of pack `{}` does not match its SHA-256",
                        slice.offset,
                        path.display()
                    )),
                    Ok(_) => None,
                }
            }
        }
    }
}
