//! Errors as every frontend sees them: a code to branch on, a message to show, and structured
//! details. The controller speaks only in these; the CLI maps codes to exit codes and the HTTP
//! server to statuses, each in one table, and adds its own hints (which flag to pass, which
//! button to press). Messages never name a frontend's flags.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::restore::Conflict;

/// What kind of failure an [`Error`] is. Frontends map these, never the message text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The request does not make sense (an empty prompt, a bad id, a workspace that does not fit).
    Usage,
    /// What the request names does not exist: a session, a head, a turn, a plan's file.
    NotFound,
    /// Another process holds the session's writer lease (the details name the holder).
    Busy,
    /// A turn (or a summary) is running in this session; the request must wait for it (or cancel
    /// it). The details say which.
    TurnRunning,
    /// The action is not available (not on this head, nothing to undo, nothing to summarize, …).
    Refused,
    /// Confirmation is required and was not given (the restore spans untracked changes).
    ConfirmationRequired,
    /// The plan is stale: single-use, expired, or the session or workspace moved since it was made.
    StalePlan,
    /// Files conflict with the restore: changed since Retrace wrote them (under `refuse`), or
    /// changed between preview and commit (`external_change`, under any choice). The details list
    /// them; nothing was written.
    Conflict,
    /// The model could not be set up or failed.
    Model,
    /// The request was cancelled before it finished (a summary stopped by `cancel`).
    Cancelled,
    /// An I/O error (the message names the path).
    Io,
    /// Stored data cannot be trusted or read (the message names the file).
    Corrupt,
    /// Retrace itself failed (a bug, or the session's worker stopped); the message says what.
    Internal,
}

impl ErrorCode {
    /// Every code, for tables that must cover them all.
    pub const ALL: [ErrorCode; 13] = [
        ErrorCode::Usage,
        ErrorCode::NotFound,
        ErrorCode::Busy,
        ErrorCode::TurnRunning,
        ErrorCode::Refused,
        ErrorCode::ConfirmationRequired,
        ErrorCode::StalePlan,
        ErrorCode::Conflict,
        ErrorCode::Model,
        ErrorCode::Cancelled,
        ErrorCode::Io,
        ErrorCode::Corrupt,
        ErrorCode::Internal,
    ];

    /// The wire name (`not_found`, `stale_plan`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Usage => "usage",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Busy => "busy",
            ErrorCode::TurnRunning => "turn_running",
            ErrorCode::Refused => "refused",
            ErrorCode::ConfirmationRequired => "confirmation_required",
            ErrorCode::StalePlan => "stale_plan",
            ErrorCode::Conflict => "conflict",
            ErrorCode::Model => "model",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::Io => "io",
            ErrorCode::Corrupt => "corrupt",
            ErrorCode::Internal => "internal",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a `not_found` error did not find.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Missing {
    /// A session id.
    Session,
    /// A head id or name.
    Head,
    /// A turn number.
    Turn,
    /// A workspace file the session never edited.
    File,
    /// A message id.
    Message,
    /// A pending approval (by tool call id).
    Approval,
    /// A transaction id.
    Transaction,
    /// A version of a file's history.
    Version,
}

/// Structured details of an error, by kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ErrorDetails {
    /// `busy`: who holds the lease, as the holder wrote it (`pid 123 on host box since …`).
    Holder {
        /// The holder.
        holder: String,
    },
    /// `not_found`: what was looked for.
    NotFound {
        /// What kind of thing.
        what: Missing,
        /// The id, name or number as given.
        id: String,
    },
    /// `turn_running`: what runs.
    Running {
        /// A turn or a summary.
        job: crate::session::RunningJob,
    },
    /// `conflict`: the conflicted files.
    Conflicts {
        /// The conflicts.
        conflicts: Vec<Conflict>,
    },
    /// Files concerned (an undo refused because they changed since the rewind).
    Paths {
        /// Workspace paths.
        paths: Vec<String>,
    },
    /// `usage`: a change to an old (format-1) log, which records no workspace, found no usable
    /// directory to be the workspace of the new session it goes to (SPEC §6).
    WorkspaceUnknown {
        /// The old log.
        log_path: String,
    },
    /// `usage`: the directory named for a fork into a new workspace cannot be used (it is not
    /// empty, inside the workspace, cannot be made, …).
    Worktree {
        /// The directory, as resolved.
        path: String,
    },
    /// `corrupt`: a line of the session's log cannot be read, so the conversation takes no change
    /// (and cannot be shown) until the log is repaired; restoring files still works.
    DamagedLog {
        /// The session.
        session_id: String,
        /// The log.
        log_path: String,
        /// The first line that cannot be read (1-based).
        line: u64,
    },
}

/// An error: a code, a message for people, and details for programs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Error {
    /// What kind of failure.
    pub code: ErrorCode,
    /// What happened, in words; names paths and ids, never a frontend's flags.
    pub message: String,
    /// Structured details, when the code has any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<ErrorDetails>,
}

impl Error {
    /// An error without details.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Error {
        Error {
            code,
            message: message.into(),
            details: None,
        }
    }

    /// The same error with details.
    pub fn with_details(mut self, details: ErrorDetails) -> Error {
        self.details = Some(details);
        self
    }

    /// A `not_found` error naming what was missing.
    pub fn not_found(what: Missing, id: impl Into<String>, message: impl Into<String>) -> Error {
        Error::new(ErrorCode::NotFound, message).with_details(ErrorDetails::NotFound { what, id: id.into() })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
