//! The session log's error type. Every I/O variant names the path it concerns; every parse error
//! names the file and the 1-based line.

use std::io;
use std::path::PathBuf;

use crate::ids::{HeadId, MessageId, SessionId};

/// Errors of the session log.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// An I/O operation failed on `path`.
    #[error("{op} `{path}`: {source}")]
    Io {
        /// What was being done (`read`, `append to`, `lock`, …).
        op: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The session's log does not exist.
    #[error("no session `{id}`: `{path}` does not exist")]
    NoSuchSession {
        /// The session asked for.
        id: SessionId,
        /// The log that was looked for.
        path: PathBuf,
    },
    /// A session id that cannot name a file (empty, `/`, NUL, leading `.`).
    #[error("`{0}` is not a valid session id")]
    InvalidSessionId(String),
    /// A line of the log could not be understood; the log is not loaded.
    #[error("`{path}` line {line}: {detail}")]
    Corrupt {
        /// The log.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// What is wrong with it.
        detail: String,
    },
    /// The session was opened tolerantly and a line of its log cannot be read: it takes no
    /// write until the log is repaired.
    #[error("the conversation of session `{id}` cannot be used until its log is repaired: {damage}; the lines that cannot be read can be moved aside")]
    Damaged {
        /// The session.
        id: SessionId,
        /// The first line that cannot be read.
        damage: crate::repair::LogDamage,
    },
    /// A repair that cannot be done; nothing was changed.
    #[error("`{path}` cannot be repaired: {why}; nothing was changed")]
    Unrepairable {
        /// The log.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// The file is not a session log in a format this version reads (1 or 2).
    #[error("`{path}` is not a session log this version can read: {detail}")]
    UnsupportedFormat {
        /// The file.
        path: PathBuf,
        /// Why.
        detail: String,
    },
    /// Another process holds the session's writer lease.
    #[error("session `{id}` is held by another writer ({holder}); lease file `{path}`")]
    Held {
        /// The session.
        id: SessionId,
        /// The lease file.
        path: PathBuf,
        /// Who holds it, as the holder wrote it: `pid 123 on host box since <time>`.
        holder: String,
    },
    /// A write was attempted on a session opened for reading.
    #[error("session `{0}` was opened for reading; open it as a writer to change it")]
    ReadOnly(SessionId),
    /// An earlier write failed half-way; the in-memory state may be ahead of the file.
    #[error("session `{id}` must be reopened: an earlier write failed ({reason})")]
    Poisoned {
        /// The session.
        id: SessionId,
        /// The failure.
        reason: String,
    },
    /// The index refused an entry the writer built: a bug, reported rather than written.
    #[error("internal error: the session index refused an entry: {0}")]
    Inconsistent(String),
    /// No head with that id (or name).
    #[error("no head `{0}` in this session")]
    UnknownHead(String),
    /// The head is retired: it can be read and forked from, not selected or continued.
    #[error("head `{0}` is retired")]
    HeadRetired(HeadId),
    /// The selected head cannot be retired; select another head first.
    #[error("head `{0}` is the selected head and cannot be retired; switch to another head first")]
    RetireSelected(HeadId),
    /// Another head already has that name, or it is a head id.
    #[error("a head is already called `{0}`")]
    NameTaken(String),
    /// A head name must not be empty.
    #[error("a head name must not be empty")]
    EmptyName,
    /// A head name is at most [`crate::MAX_HEAD_NAME`] characters of printable text.
    #[error("the head name `{shown}` cannot be used: {why}; use at most 64 printable characters")]
    BadName {
        /// The name, escaped and cut for display.
        shown: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// `fork` creates heads of kind `fork`, `rewind` or `summary`; `main` exists once.
    #[error("a fork cannot create a head of kind `main`")]
    ForkKindMain,
    /// No message with that id.
    #[error("no message `{0}` in this session")]
    UnknownMessage(MessageId),
    /// The message is not on the head's path.
    #[error("message `{message}` is not on head `{head}`")]
    NotOnHead {
        /// The message.
        message: MessageId,
        /// The head.
        head: HeadId,
    },
    /// A message id that is already used.
    #[error("message id `{0}` is already used in this session")]
    DuplicateMessage(MessageId),
    /// No turn with that number.
    #[error("turn {0} is not in this session")]
    UnknownTurn(u64),
    /// The turn's user message is not on the head (SPEC §5.1 "not on this head").
    #[error("turn {turn} is not on this head (`{head}`)")]
    TurnNotVisible {
        /// The turn.
        turn: u64,
        /// The head.
        head: HeadId,
    },
    /// A turn number at or below one already used.
    #[error("turn {turn} cannot start: turn numbers are never reused (next is {next})")]
    TurnReused {
        /// The number asked for.
        turn: u64,
        /// The smallest number allowed.
        next: u64,
    },
    /// Summarizing would fold nothing worth folding (SPEC §5.1).
    #[error("nothing to summarize")]
    NothingToSummarize,
    /// A format-1 log must become a format-2 session, whose header needs the workspace.
    #[error("`{}` is an old (format-1) log, which records no workspace: a change to it goes to a new session, and that needs to know which directory is the workspace", .0.display())]
    WorkspaceUnknown(PathBuf),
    /// The workspace path is not UTF-8 and cannot be recorded in the header.
    #[error("workspace `{}` is not valid UTF-8; the session header cannot record it", .0.display())]
    NonUtf8Workspace(PathBuf),
    /// The clock's time cannot be written as RFC 3339.
    #[error("cannot format the time as RFC 3339: {0}")]
    Clock(String),
    /// An entry could not be encoded as JSON.
    #[error("cannot encode a log entry: {0}")]
    Encode(#[from] serde_json::Error),
}

/// Result alias of the session log.
pub type Result<T, E = SessionError> = std::result::Result<T, E>;

/// Attaches an operation and a path to an `io::Result`.
pub(crate) trait IoContext<T> {
    fn at(self, op: &'static str, path: impl Into<PathBuf>) -> Result<T>;
}

impl<T> IoContext<T> for io::Result<T> {
    fn at(self, op: &'static str, path: impl Into<PathBuf>) -> Result<T> {
        self.map_err(|source| SessionError::Io {
            op,
            path: path.into(),
            source,
        })
    }
}
