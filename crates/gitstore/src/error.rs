//! What can go wrong in the object store, each naming the file or object it is about.

use std::path::PathBuf;

/// An object store error.
#[derive(Debug, thiserror::Error)]
pub enum GitStoreError {
    /// A file-system call failed on `path`.
    #[error("cannot {op} {}: {source}", path.display())]
    Io {
        /// What was being done.
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The git object store at `path` could not be created, opened, read or written.
    #[error("the object store {} cannot {op}: {detail}", path.display())]
    Git {
        /// What was being done.
        op: &'static str,
        /// The store's directory.
        path: PathBuf,
        /// What gix said.
        detail: String,
    },
    /// Object `id` is missing or does not hash to its name.
    #[error("object {id} in {} is {problem}", path.display())]
    BadObject {
        /// The object's id.
        id: String,
        /// The store's directory.
        path: PathBuf,
        /// "missing", "damaged: …", "not a blob".
        problem: String,
    },
}

/// The crate's result.
pub type Result<T> = std::result::Result<T, GitStoreError>;

/// Attaches an operation and a path to an I/O error.
pub(crate) trait IoContext<T> {
    fn at(self, op: &'static str, path: &std::path::Path) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn at(self, op: &'static str, path: &std::path::Path) -> Result<T> {
        self.map_err(|source| GitStoreError::Io {
            op,
            path: path.to_path_buf(),
            source,
        })
    }
}
