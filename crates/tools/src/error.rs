//! The tools' error type.
//!
//! A [`ToolError`] is not a failure of the turn: the agent shows its text to the model as an error
//! tool result, so every message says what went wrong *and* what call would work instead. Every I/O
//! variant names its path.

use std::io;
use std::path::PathBuf;

/// Result alias of the tools crate.
pub type Result<T, E = ToolError> = std::result::Result<T, E>;

/// Why a tool call was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The arguments are missing a field, have a wrong type or an invalid value.
    #[error("invalid arguments for {tool}: {message}")]
    InvalidArguments {
        /// The tool called.
        tool: &'static str,
        /// What to fix, naming the field.
        message: String,
    },
    /// The path leaves the workspace (`..`, an absolute path elsewhere, a symlink leading out).
    #[error("`{path}` is outside the workspace: {why}; only paths inside the workspace can be used")]
    OutsideWorkspace {
        /// The path as given.
        path: String,
        /// How it leaves the workspace.
        why: String,
    },
    /// The path is inside `.git/`, Retrace's data root or its config: no tool reads or writes there.
    #[error("`{path}` cannot be used: {why}")]
    OffLimits {
        /// The path as given.
        path: String,
        /// Where it is.
        why: String,
    },
    /// The path is not usable as a workspace path (empty, the root itself, a NUL byte).
    #[error("{0}")]
    BadPath(String),
    /// The file does not exist.
    #[error("file not found: `{path}`{hint}")]
    NotFound {
        /// The workspace path.
        path: String,
        /// What to do instead (may be empty).
        hint: &'static str,
    },
    /// A directory was named where a file is needed.
    #[error("`{path}` is a directory, not a file{hint}")]
    IsDirectory {
        /// The workspace path.
        path: String,
        /// What to do instead (may be empty).
        hint: &'static str,
    },
    /// A file was named where a directory is needed.
    #[error("`{path}` is not a directory")]
    NotADirectory {
        /// The workspace path.
        path: String,
    },
    /// A FIFO, socket or device: text tools only work on regular files.
    #[error("`{path}` is not a regular file")]
    NotARegularFile {
        /// The workspace path.
        path: String,
    },
    /// An ignore file a directory walk must read is a FIFO, socket or device: reading it could
    /// block forever, so the walk does not start.
    #[error("`{path}` is git's global configuration or excludes file, which listing, glob and grep read, but it is not a regular file; remove it or make it a file")]
    IgnoreFileNotRegular {
        /// The path of the ignore file.
        path: String,
    },
    /// A text tool met a binary (or non-UTF-8) file.
    #[error("`{path}` is a binary file ({why}); text tools cannot read or edit it (write_file can replace it whole, bash can inspect it)")]
    Binary {
        /// The workspace path.
        path: String,
        /// Why it counts as binary (a NUL byte, invalid UTF-8 at an offset).
        why: String,
    },
    /// `old_string` of an edit matches nowhere in the file.
    #[error("old_string was not found in `{path}`{which}. It must match the file exactly, including whitespace and indentation.{nearest}")]
    NoMatch {
        /// The workspace path.
        path: String,
        /// ` (edit 2 of 3)` inside a multi_edit, else empty.
        which: String,
        /// The closest lines of the file, rendered with line numbers (may be empty).
        nearest: String,
    },
    /// `old_string` matches several times and `replace_all` is not set.
    #[error("old_string was found {count} times in `{path}`{which}, at lines {}; add surrounding lines to old_string so it matches exactly once, or set replace_all to true", lines_list(lines))]
    MultipleMatches {
        /// The workspace path.
        path: String,
        /// ` (edit 2 of 3)` inside a multi_edit, else empty.
        which: String,
        /// Number of (non-overlapping) matches.
        count: usize,
        /// The 1-based line of each match.
        lines: Vec<usize>,
    },
    /// A `multi_edit` edit failed; none was applied.
    #[error("{source}\nNo edit was applied; the file is unchanged.")]
    EditsNotApplied {
        /// The failing edit's error.
        source: Box<ToolError>,
    },
    /// `move_file` refuses to replace an existing destination.
    #[error("destination `{path}` already exists; move_file never replaces a file (delete it first if that is intended)")]
    DestinationExists {
        /// The workspace path of the destination.
        path: String,
    },
    /// The file differs from what the preview read: someone else wrote it in between.
    #[error("file changed since it was read: {path}; read it again and redo the change")]
    FileChanged {
        /// The workspace path.
        path: String,
    },
    /// `run` was given a preview that does not belong to these arguments (a bug of the caller).
    #[error("internal error: the preview does not match the call ({detail})")]
    PreviewMismatch {
        /// What did not match.
        detail: String,
    },
    /// Shell commands are disabled by policy.
    #[error("bash is disabled: shell commands are not allowed in this session (run with --allow-bash or set [permissions] bash = \"allow\")")]
    BashDisabled,
    /// The user declined to run the command.
    #[error("the user declined to run this command: {command}")]
    BashDeclined {
        /// The command line.
        command: String,
    },
    /// The command ran past its timeout and was killed.
    #[error("command timed out after {timeout_ms} ms and was killed; output so far:\n{output}")]
    Timeout {
        /// The timeout applied.
        timeout_ms: u64,
        /// What it printed before it was killed (capped).
        output: String,
    },
    /// The turn was cancelled while the tool ran.
    #[error("cancelled")]
    Cancelled,
    /// An I/O operation failed on `path`.
    #[error("{op} `{}`: {source}", path.display())]
    Io {
        /// What was being done (`read`, `write`, `rename`, …).
        op: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl ToolError {
    /// True when the tool refused before it changed anything or started any process: bad
    /// arguments, path safety, a missing file, a stale preview, a disabled or declined shell
    /// command. The agent can then skip recording a `bash_side_effect` gap for a shell call.
    pub fn touched_nothing(&self) -> bool {
        match self {
            ToolError::InvalidArguments { .. }
            | ToolError::OutsideWorkspace { .. }
            | ToolError::OffLimits { .. }
            | ToolError::BadPath(_)
            | ToolError::NotFound { .. }
            | ToolError::IsDirectory { .. }
            | ToolError::NotADirectory { .. }
            | ToolError::NotARegularFile { .. }
            | ToolError::IgnoreFileNotRegular { .. }
            | ToolError::Binary { .. }
            | ToolError::NoMatch { .. }
            | ToolError::MultipleMatches { .. }
            | ToolError::EditsNotApplied { .. }
            | ToolError::DestinationExists { .. }
            | ToolError::FileChanged { .. }
            | ToolError::PreviewMismatch { .. }
            | ToolError::BashDisabled
            | ToolError::BashDeclined { .. } => true,
            ToolError::Timeout { .. } | ToolError::Cancelled | ToolError::Io { .. } => false,
        }
    }

    /// An [`ToolError::InvalidArguments`] of `tool`.
    pub(crate) fn args(tool: &'static str, message: impl Into<String>) -> ToolError {
        ToolError::InvalidArguments {
            tool,
            message: message.into(),
        }
    }
}

fn lines_list(lines: &[usize]) -> String {
    const SHOWN: usize = 20;
    let mut s: Vec<String> = lines.iter().take(SHOWN).map(|l| l.to_string()).collect();
    if lines.len() > SHOWN {
        s.push(format!("… ({} more)", lines.len() - SHOWN));
    }
    s.join(", ")
}

/// Attaches an operation and a path to an `io::Result`.
pub(crate) trait IoContext<T> {
    /// Maps the error to [`ToolError::Io`] naming `op` and `path`.
    fn at(self, op: &'static str, path: impl Into<PathBuf>) -> Result<T>;
}

impl<T> IoContext<T> for io::Result<T> {
    fn at(self, op: &'static str, path: impl Into<PathBuf>) -> Result<T> {
        self.map_err(|source| ToolError::Io {
            op,
            path: path.into(),
            source,
        })
    }
}
