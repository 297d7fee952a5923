//! Where content-addressed payloads live in a sidecar (FORMATS.md "Blobs").
//!
//! Two places, both named by the SHA-256 of their bytes, and both written only by earlier builds
//! (this one keeps a transaction's forward images in its pack, `forward/<id>.pack`: see
//! `forward.rs`):
//! - `blobs/<h0h1>/<h2h3>/<hex>`: legacy checkpoints' payloads (`blobRef`), and the forward images
//!   of transactions written by builds before `forward/` existed;
//! - `forward/<hex>`: the forward images of transactions of builds between those and packs.
//!
//! A forward image of such a transaction is read from `forward/` first, then from `blobs/` (the
//! same bytes, whichever wrote them).

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{IoContext, Result};
use crate::layout::{blob_rel_path, forward_rel_path, BLOBS_DIR, FORWARD_DIR};
use crate::sidecar::Sidecar;

impl Sidecar {
    /// The stored forward image named `sha`, relative to the sidecar: `forward/<hex>` unless only
    /// `blobs/…/<hex>` exists (see the module documentation). When neither exists, the place it
    /// would be written.
    pub(crate) fn forward_rel(&self, sha: &str) -> String {
        let new = forward_rel_path(sha);
        if fs::symlink_metadata(self.dir.join(&new)).is_err() {
            let old = blob_rel_path(sha);
            if fs::symlink_metadata(self.dir.join(&old)).is_ok() {
                return old;
            }
        }
        new
    }

    /// [`Sidecar::forward_rel`], as an absolute path.
    pub(crate) fn forward_blob(&self, sha: &str) -> PathBuf {
        self.dir.join(self.forward_rel(sha))
    }
}

/// Every blob file of the sidecar at `dir` (under `blobs/` and `forward/`), as (name, path
/// relative to the sidecar). Temp files left by a crash (`.<hex>.tmp`) are listed too: nothing
/// references them.
pub(crate) fn list_blobs(dir: &Path) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let blobs = dir.join(BLOBS_DIR);
    if blobs.is_dir() {
        for a in fs::read_dir(&blobs).at("list", &blobs)? {
            let a = a.at("list", &blobs)?.path();
            if !a.is_dir() {
                continue;
            }
            for b in fs::read_dir(&a).at("list", &a)? {
                let b = b.at("list", &a)?.path();
                if b.is_dir() {
                    list_files(dir, &b, &mut out)?;
                }
            }
        }
    }
    let forward = dir.join(FORWARD_DIR);
    if forward.is_dir() {
        list_files(dir, &forward, &mut out)?;
    }
    Ok(out)
}

fn list_files(sidecar: &Path, d: &Path, out: &mut Vec<(String, String)>) -> Result<()> {
    for f in fs::read_dir(d).at("list", d)? {
        let f = f.at("list", d)?;
        let name = f.file_name().to_string_lossy().into_owned();
        let path = f.path();
        let rel = path
            .strip_prefix(sidecar)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        out.push((name, rel));
    }
    Ok(())
}
