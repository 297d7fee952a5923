//! The crate's one error type.

/// What can go wrong running the terminal UI.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// The terminal could not be set up, drawn on or read from.
    #[error("terminal: {op}: {source}")]
    Terminal {
        /// What was being done (`enter raw mode`, `draw`, `read a key`).
        op: &'static str,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The session refused a request the UI cannot go on without (opening it, loading its transcript).
    #[error("{0}")]
    Session(#[from] retrace_protocol::Error),
}
