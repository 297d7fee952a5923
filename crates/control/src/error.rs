//! The controller's error type, mapped to the CLI's exit codes and (later) HTTP statuses at the edge.

use retrace_checkpoint::CheckpointError;
use retrace_session::SessionError;

/// Errors of the controller.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// The checkpoint store failed.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// The session log failed.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The data root could not be found or made.
    #[error("cannot use the data directory `{path}`: {why}")]
    DataRoot {
        /// The directory.
        path: std::path::PathBuf,
        /// Why.
        why: String,
    },
    /// The arguments do not fit the session (another workspace, an unknown head, …).
    #[error("{0}")]
    Usage(String),
    /// The action is not available (the plan or the reason says why).
    #[error("{0}")]
    Refused(String),
    /// Confirmation is required and was not given.
    #[error("{0}")]
    Confirmation(String),
    /// The plan is stale: single-use, expired, or the session or workspace changed.
    #[error("{0}")]
    Stale(String),
    /// The model could not be set up or failed.
    #[error("{0}")]
    Model(String),
}

/// Result alias of the controller.
pub type Result<T, E = ControlError> = std::result::Result<T, E>;
