//! A file's history (SPEC §5.8): every version of one path the session knows, oldest first —
//! its state at each turn's start and end, before and after each restore, revert, undo or redo,
//! and now. Absent is a version too.

use serde::{Deserialize, Serialize};

/// The versions of one path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileHistory {
    /// The workspace-relative path.
    pub path: String,
    /// Oldest first; `version` counts from 1.
    pub versions: Vec<HistoryVersion>,
}

/// Where a version comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VersionOrigin {
    /// The file when a turn first touched it.
    TurnStart,
    /// The file as a turn left it.
    TurnEnd,
    /// The file just before a restore, revert, undo or redo replaced it (a hand edit shows here).
    BeforeRestore,
    /// What a code restore (rewind) put back.
    Restore,
    /// What a single-file revert put back.
    Revert,
    /// What an undo put back.
    Undo,
    /// What a redo put back.
    Redo,
    /// The file on disk now.
    Now,
}

/// One version of a path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryVersion {
    /// Its number, from 1 (oldest).
    pub version: u32,
    /// The turn it belongs to, for a turn's start or end (and the turn a restore went back to).
    pub turn: Option<u64>,
    /// Where it comes from.
    pub origin: VersionOrigin,
    /// When (RFC 3339), when known.
    pub time: Option<String>,
    /// SHA-256 of its bytes; `null` when the file did not exist (or, rarely, is not known).
    pub sha256: Option<String>,
    /// Its size in bytes, when known.
    pub size: Option<u64>,
    /// Whether the file existed.
    pub existed: bool,
    /// The transaction, for a version a restore, revert, undo or redo made or replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction: Option<String>,
    /// Whether it can be restored (its bytes are kept somewhere, or it is "absent").
    pub restorable: bool,
    /// Why not, when it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
