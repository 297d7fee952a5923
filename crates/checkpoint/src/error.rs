//! The store's error type. Every I/O variant names the path it concerns.

use std::io;
use std::path::PathBuf;

use retrace_fsutil::PathError;

/// Errors of the checkpoint store.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// An I/O operation failed on `path`.
    #[error("{op} `{path}`: {source}")]
    Io {
        /// What was being done (`read`, `write`, `rename`, …).
        op: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A workspace path was refused.
    #[error(transparent)]
    Path(#[from] PathError),
    /// A capture was attempted with no turn open.
    #[error("no turn is open: call begin_turn before capturing")]
    NoTurn,
    /// A capture named a directory; only files are captured.
    #[error("`{path}` is a directory; edit tools change files only")]
    NotAFile {
        /// The workspace path.
        path: String,
    },
    /// A record is larger than the 16 MiB limit and was not read.
    #[error("`{path}` is {size} bytes, over the 16 MiB record limit; it was not read")]
    RecordTooLarge {
        /// The record file.
        path: PathBuf,
        /// Its size.
        size: u64,
    },
    /// A record or payload could not be understood.
    #[error("`{path}`: {detail}")]
    Corrupt {
        /// The sidecar file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// The turn is not in the store.
    #[error("turn {0} is not in this checkpoint store")]
    UnknownTurn(u64),
    /// The turn did not capture that path.
    #[error("turn {turn} holds no before-image of `{path}`")]
    UnknownFile {
        /// The turn asked for.
        turn: u64,
        /// The workspace path asked for.
        path: String,
    },
    /// The before-image exists but its bytes were not kept or cannot be trusted.
    #[error("turn {turn}: the before-image of `{path}` is not available: {why}")]
    MissingPayload {
        /// The turn.
        turn: u64,
        /// The workspace path.
        path: String,
        /// Why (oversized, expired, corrupt …).
        why: String,
    },
}

/// Result alias of the store.
pub type Result<T, E = CheckpointError> = std::result::Result<T, E>;

/// Attaches an operation and a path to an `io::Result`.
pub(crate) trait IoContext<T> {
    fn at(self, op: &'static str, path: impl Into<PathBuf>) -> Result<T>;
}

impl<T> IoContext<T> for io::Result<T> {
    fn at(self, op: &'static str, path: impl Into<PathBuf>) -> Result<T> {
        self.map_err(|source| CheckpointError::Io {
            op,
            path: path.into(),
            source,
        })
    }
}
