//! A before-image's bytes on their way into the log: read from the workspace file (or given by
//! the caller) and hashed, as the body of its entry's frame. Up to [`IN_MEMORY`] bytes are read
//! once and held; a larger file is hashed first and streamed into its frame afterwards, read a
//! second time there and checked against that hash (a file that changed in between fails the
//! capture, which a retry takes again).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

use retrace_fsutil::{copy_hashed, sha256_bytes};

use crate::error::{IoContext, Result};
use crate::logread::Body;
use crate::model::{Before, FileEntry};

/// Files up to this size are read into memory once; larger ones are streamed.
const IN_MEMORY: u64 = 1024 * 1024;

/// A before-image whose bytes are still to be read.
pub(crate) struct ToKeep {
    /// Where the bytes come from.
    pub(crate) src: Src,
    /// The workspace path (for errors).
    pub(crate) abs: PathBuf,
    /// The size when it was opened.
    pub(crate) len: u64,
}

/// Where a before-image's bytes come from.
pub(crate) enum Src {
    /// The workspace file, open for reading.
    File(File),
    /// Bytes given by the caller (the git backend's object store, as the file was before a shell
    /// command changed it).
    Bytes(Vec<u8>),
}

/// Reads `job`'s bytes (hashing them), fills in `entry`'s SHA-256 and size, and gives the body of
/// its frame.
pub(crate) fn body_of(job: ToKeep, entry: &mut FileEntry) -> Result<Body> {
    let (sha, len, body) = match job.src {
        Src::Bytes(bytes) => (sha256_bytes(&bytes), bytes.len() as u64, Body::Bytes(bytes)),
        Src::File(mut file) if job.len <= IN_MEMORY => {
            let mut bytes = Vec::with_capacity(job.len as usize);
            file.read_to_end(&mut bytes).at("read", &job.abs)?;
            (sha256_bytes(&bytes), bytes.len() as u64, Body::Bytes(bytes))
        }
        Src::File(mut file) => {
            let hashed = copy_hashed::<_, File>(&mut file, None).at("read", &job.abs)?;
            file.seek(SeekFrom::Start(0)).at("read", &job.abs)?;
            let body = Body::File {
                file,
                len: hashed.len,
                sha256: hashed.sha256.clone(),
            };
            (hashed.sha256, hashed.len, body)
        }
    };
    if let Before::Present { sha256, size, .. } = &mut entry.before {
        *sha256 = Some(sha);
        *size = Some(len);
    }
    Ok(body)
}
