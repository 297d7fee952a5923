//! The report of `retrace fsck`.

use serde::{Deserialize, Serialize};

/// How much a problem matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Expected leftovers: tombstones, superseded records, unreferenced blobs.
    Info,
    /// Something odd that loses no data.
    Warning,
    /// Data that cannot be trusted or read: fsck fails.
    Error,
}

/// One finding of fsck.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FsckProblem {
    /// The sidecar file concerned, relative to the sidecar directory, `/`-separated.
    pub path: String,
    /// What is wrong, in words.
    pub problem: String,
    /// Whether it fails the check.
    pub severity: Severity,
    /// The turn concerned, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u64>,
    /// The workspace path of the entry affected, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// The whole fsck result: `ok` is true exactly when no problem has severity `error`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FsckReport {
    /// No problem fails.
    pub ok: bool,
    /// Every finding, in the order found.
    pub problems: Vec<FsckProblem>,
}

impl FsckReport {
    /// Builds a report, deriving `ok` from the problems.
    pub fn from_problems(problems: Vec<FsckProblem>) -> FsckReport {
        let ok = problems.iter().all(|p| p.severity != Severity::Error);
        FsckReport { ok, problems }
    }
}

/// A line a log repair moved out of a session log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MovedLogLine {
    /// Its 1-based number in the log before the repair.
    pub line: u64,
    /// Why it could not stay (it does not parse, or it refers to something not in the log).
    pub reason: String,
}

/// What a repair of a session log did (`retrace fsck --session ID --repair`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogRepair {
    /// The session.
    pub session_id: crate::SessionId,
    /// The log.
    pub log_path: String,
    /// The lines moved out of the log, in order; empty when the log was sound and nothing was
    /// written.
    pub moved: Vec<MovedLogLine>,
    /// The file beside the log holding their bytes (`<id>.damaged-<n>`), when lines were moved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved_to: Option<String>,
    /// Lines of the old log the log holds now, its header included.
    pub lines_kept: u64,
    /// Placeholder notes the repair wrote where a message was lost, so that the messages after
    /// it stay on their head.
    pub placeholders: u64,
}
