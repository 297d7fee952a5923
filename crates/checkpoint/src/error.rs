//! The store's error type. Every I/O variant names the path it concerns.

use std::io;
use std::path::PathBuf;

use retrace_fsutil::PathError;
use retrace_protocol::words::count;

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
    /// A record is larger than its limit (16 MiB; a turn's journal 64 MiB) and was not read.
    #[error("`{path}` is {size} bytes, over the {} MiB limit of such files; it was not read", limit / (1024 * 1024))]
    RecordTooLarge {
        /// The record file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// A turn's journal is full: a capture would make it larger than any reader accepts.
    #[error("turn {turn} has recorded as many files as one turn's checkpoint can hold ({limit} MiB of journal); end the turn and go on in a new one")]
    TurnTooLarge {
        /// The turn.
        turn: u64,
        /// The journal limit in MiB.
        limit: u64,
    },
    /// A record or payload could not be understood.
    #[error("`{path}`: {detail}")]
    Corrupt {
        /// The sidecar file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// A transaction would need a manifest larger than any this build reads back.
    #[error("a restore of {targets} files does not fit one transaction (its manifest would be {size} bytes, over the 16 MiB limit); restore fewer files at a time")]
    TransactionTooLarge {
        /// How many files it has.
        targets: usize,
        /// The manifest's size.
        size: u64,
    },
    /// The turn is not in the store.
    #[error("turn {0} is not in this checkpoint store")]
    UnknownTurn(u64),
    /// The file's history has no such version.
    #[error(
        "`{path}` has no version {version}: its history has versions 1 to {count} (see `retrace history`)"
    )]
    UnknownVersion {
        /// The workspace path asked for.
        path: String,
        /// The version asked for.
        version: u32,
        /// How many versions it has.
        count: u32,
    },
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
    /// A code restore to this turn is not offered.
    #[error("a code restore to before turn {turn} is not offered: {why}")]
    NotOffered {
        /// The turn.
        turn: u64,
        /// Why not.
        why: String,
    },
    /// The plan was made before the workspace or session changed; preview again.
    #[error("stale_plan: the workspace changed since this plan was made (generation {planned}, now {now}); preview again")]
    StalePlan {
        /// The generation the plan was made at.
        planned: u64,
        /// The generation now.
        now: u64,
    },
    /// Conflicts and the choice was `refuse`: nothing was written.
    #[error("restore refused: {} ({}); nothing was written", count(conflicts.len(), "conflicted file"), conflict_list(conflicts))]
    Refused {
        /// The conflicts.
        conflicts: Vec<retrace_protocol::Conflict>,
    },
    /// The plan spans legacy or expired turns or gaps and was not confirmed.
    #[error("confirmation required: the restore spans turns whose changes are not all tracked (gaps, legacy or expired records)")]
    ConfirmationRequired,
    /// Files changed between the preview and the commit: nothing was written; preview again.
    #[error("restore refused: {} changed since the plan was shown ({}); nothing was written", count(conflicts.len(), "file"), conflict_list(conflicts))]
    Changed {
        /// The files, each as an `external_change` conflict.
        conflicts: Vec<retrace_protocol::Conflict>,
    },
    /// A file moved between the checks and its rename; everything published was put back.
    #[error("`{path}` changed while Retrace was writing the workspace (external_change); nothing of this transaction stayed written")]
    ExternalChange {
        /// The workspace path.
        path: String,
    },
    /// A file of a plan no longer holds what the plan saw (asking for its whole diff): preview
    /// again.
    #[error("`{path}` changed since the plan was made; preview again")]
    PlanMoved {
        /// The workspace path.
        path: String,
    },
    /// Nothing can be undone now.
    #[error("nothing to undo: {why}")]
    UndoUnavailable {
        /// Why not.
        why: String,
    },
    /// Files changed since the rewind; undo would overwrite them.
    #[error("undo refused: {} changed since the rewind: {}", count(paths.len(), "file"), paths.join(", "))]
    UndoRefused {
        /// The files that moved.
        paths: Vec<String>,
    },
    /// Nothing can be redone now.
    #[error("nothing to redo: {why}")]
    RedoUnavailable {
        /// Why not.
        why: String,
    },
    /// Files changed since the undo (a later turn's edit, a hand edit); redo would overwrite them.
    #[error("redo refused: {} changed since the undo ({}); nothing was written", count(conflicts.len(), "file"), conflict_list(conflicts))]
    RedoRefused {
        /// The files, each with what stands there now against what the undo left.
        conflicts: Vec<retrace_protocol::Conflict>,
    },
    /// Rolling back met content that matched neither image; it was kept aside and left in place.
    #[error("the transaction {tx} could not be rolled back completely: `{path}` matches neither image; its bytes were kept in `{copy}`")]
    Stuck {
        /// The transaction.
        tx: String,
        /// The workspace path.
        path: String,
        /// The recovery copy.
        copy: String,
    },
}

fn conflict_list(c: &[retrace_protocol::Conflict]) -> String {
    let names: Vec<String> = c
        .iter()
        .take(5)
        .map(|c| format!("{}: {}", c.path, retrace_protocol::words::conflict(c)))
        .collect();
    let more = if c.len() > 5 {
        format!(", and {} more", c.len() - 5)
    } else {
        String::new()
    };
    format!("{}{more}", names.join(", "))
}

/// Result alias of the store.
pub type Result<T, E = CheckpointError> = std::result::Result<T, E>;

/// Attaches an operation and a path to an `io::Result`.
pub(crate) trait IoContext<T> {
    fn at(self, op: &'static str, path: impl Into<PathBuf>) -> Result<T>;
}

impl CheckpointError {
    /// Whether this is an I/O error saying the file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, CheckpointError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }
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
