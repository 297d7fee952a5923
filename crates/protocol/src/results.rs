//! A turn's results (SPEC §5.7): what one retained turn did to each file it touched, from the file
//! at the turn's start to the file as the turn left it, with the turn's shell commands (its
//! "checks") and what it could not capture. `retrace diff`, `GET …/turns/{n}/results` and every
//! frontend render this; nothing is diffed outside the store.

use serde::{Deserialize, Serialize};

use crate::checkpoint::Coverage;
use crate::item::{ChangeAction, ToolStatus};
use crate::Gap;

/// The largest diff text of one file in a turn's results (1 MiB); longer ones are cut at a line
/// boundary with `diff_truncated` (the counts stay whole).
pub const RESULTS_DIFF_CAP: usize = 1024 * 1024;

/// What a retained turn changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnResults {
    /// The turn number.
    pub turn: u64,
    /// Its prompt.
    pub prompt: String,
    /// How completely its checkpoint covers what it touched.
    pub coverage: Coverage,
    /// Each file whose state the turn changed, in first-touch order (a file the turn touched but
    /// left as it found it is not listed).
    pub files: Vec<TurnFile>,
    /// Its shell commands, in order.
    pub commands: Vec<TurnCommand>,
    /// What it could not capture.
    #[serde(default)]
    pub gaps: Vec<Gap>,
}

/// One file a turn changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnFile {
    /// The workspace-relative path (for a move, the destination).
    pub path: String,
    /// What happened to it.
    pub action: ChangeAction,
    /// For a move: where it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The unified diff from its state at the turn's start to its state at the turn's end (empty
    /// when binary, unknown, or only the mode changed).
    #[serde(default)]
    pub diff: String,
    /// Lines added.
    pub added: u64,
    /// Lines removed.
    pub removed: u64,
    /// True when either side is not text (not UTF-8, a NUL byte, over 4 MiB): see `before` and
    /// `after` for sizes and hashes.
    #[serde(default)]
    pub binary: bool,
    /// True when `diff` was cut at [`RESULTS_DIFF_CAP`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub diff_truncated: bool,
    /// The file at the turn's start; `None` when it did not exist.
    pub before: Option<FileVersion>,
    /// The file as the turn left it; `None` when it did not exist.
    pub after: Option<FileVersion>,
    /// Set when the change cannot be shown exactly, and why (the bytes of one side are no longer
    /// kept: a turn from before turn results were recorded whose file changed since, a payload
    /// over the size cap, retention). `diff` is then empty and the counts are 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
}

impl TurnFile {
    /// A move that changed no line and whose change is known: its counts would say nothing.
    pub fn is_bare_move(&self) -> bool {
        self.unknown.is_none() && crate::item::bare_move(self.action, self.added, self.removed, self.binary)
    }
}

/// One state of a file: its hash, size and mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileVersion {
    /// SHA-256 of its bytes, when known.
    pub sha256: Option<String>,
    /// Its size in bytes, when known.
    pub size: Option<u64>,
    /// Its permission bits, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
}

/// A shell command a turn ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnCommand {
    /// The command line.
    pub command: String,
    /// Its exit code; `None` when it did not exit (killed, timed out, never ran) or the log
    /// predates recording it.
    pub exit_code: Option<i32>,
    /// How long it ran, in milliseconds, when recorded.
    pub duration_ms: Option<u64>,
    /// How the call ended.
    pub status: ToolStatus,
}
