//! Where a transaction's forward images are (SPEC §5.4): the bytes each target held before the
//! transaction replaced it, which compensation and undo put back. This build keeps them in the
//! transaction's pack (`forward/<id>.pack`, written by `pack.rs`), each at the slice its manifest
//! records (`forwardAt`).
//!
//! Transactions of earlier builds kept them as content-addressed blobs, both named by the SHA-256
//! of their bytes: `forward/<hex>`, and before that `blobs/<h0h1>/<h2h3>/<hex>` (where legacy
//! checkpoints' payloads, `blobRef`, live too). Such a forward image is read from `forward/` first,
//! then from `blobs/` (the same bytes, whichever wrote them).

use std::fs;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use retrace_fsutil::open_regular;

use crate::layout::{blob_rel_path, forward_rel_path, pack_rel_path};
use crate::sidecar::Sidecar;
use crate::tx::{Manifest, PackSlice};

/// Where a forward image's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ForwardAt {
    /// A slice of a transaction's pack.
    Pack {
        /// The pack file.
        path: PathBuf,
        /// The slice.
        slice: PackSlice,
    },
    /// A content-addressed blob (transactions of earlier builds).
    Blob(PathBuf),
}

impl ForwardAt {
    /// The file the bytes are in (for messages).
    pub(crate) fn path(&self) -> &Path {
        match self {
            ForwardAt::Pack { path, .. } | ForwardAt::Blob(path) => path,
        }
    }

    /// A reader of exactly the image's bytes (not verified: callers hash what they read).
    pub(crate) fn open(&self) -> io::Result<Box<dyn Read>> {
        match self {
            ForwardAt::Blob(p) => Ok(Box::new(open_regular(p)?.0)),
            ForwardAt::Pack { path, slice } => {
                let (mut f, _) = open_regular(path)?;
                f.seek(SeekFrom::Start(slice.offset))?;
                Ok(Box::new(f.take(slice.length)))
            }
        }
    }

    /// The image's size, when known without reading it.
    pub(crate) fn size(&self) -> Option<u64> {
        match self {
            ForwardAt::Pack { slice, .. } => Some(slice.length),
            ForwardAt::Blob(p) => fs::metadata(p).map(|m| m.len()).ok(),
        }
    }
}

impl Sidecar {
    /// Where target `i`'s forward image is: its transaction's pack, or (earlier builds) a blob.
    /// `None` when the target did not exist before the transaction.
    pub(crate) fn forward_at(&self, m: &Manifest, i: usize) -> Option<ForwardAt> {
        let t = m.targets.get(i)?;
        if !t.forward.existed {
            return None;
        }
        match (&m.forward_pack, t.forward_at) {
            // The pack is named after the transaction (whose id is its manifest's file name), never
            // after what the manifest says: a forged path could lead outside the sidecar.
            (Some(_), Some(slice)) => Some(ForwardAt::Pack {
                path: self.dir.join(pack_rel_path(&m.id)),
                slice,
            }),
            _ => Some(ForwardAt::Blob(
                self.forward_blob(t.forward.sha256.as_deref().unwrap_or_default()),
            )),
        }
    }

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
