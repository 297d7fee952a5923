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
