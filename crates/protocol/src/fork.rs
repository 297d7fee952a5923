//! A fork into a new workspace (SPEC §5.1 "Fork into a new workspace", `retrace fork --worktree`):
//! what is asked, what it made, what it left, and where a session made by one came from.

use serde::{Deserialize, Serialize};

use crate::ids::{HeadId, SessionId};

/// Fork from a turn into a new workspace (`POST …/fork` with `worktree`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceForkRequest {
    /// The new session's conversation ends just before this turn, and its files are the
    /// workspace's as they stood when the turn started.
    pub turn: u64,
    /// The new workspace's directory: absent or empty. A relative path is taken from the source
    /// workspace (the CLI makes its argument absolute from the current directory first).
    pub worktree: String,
    /// A name for the new session's head.
    #[serde(default)]
    pub name: Option<String>,
}

/// Why a fork into a new workspace did not copy a path, or left it as the source has it now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForkSkipReason {
    /// Ignored by the workspace's ignore rules: not copied.
    Ignored,
    /// A directory holding a repository of its own (a nested repository, a submodule): not
    /// copied.
    Repository,
    /// Neither a file, a directory nor a symlink (a FIFO, a socket, a device): not copied.
    Special,
    /// It could not be read: not copied.
    Unreadable,
    /// What it held when the turn started is not known (a gap of the turns since, a before-image
    /// no longer kept): left as the source has it now.
    Unknown,
    /// A symlink stands at it or above it (in the source or the new workspace), or a directory
    /// where the file was: nothing is written through or over it, and it is left as the source
    /// has it now.
    Blocked,
}

/// A path a fork into a new workspace did not copy, or left as the source has it now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkSkipped {
    /// The path, relative to the workspace (a directory ends with `/`); null for a gap that names
    /// no path (a shell command whose changes were not recorded).
    pub path: Option<String>,
    /// Why.
    pub reason: ForkSkipReason,
    /// The turn whose gap it is, for `unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u64>,
    /// Why, in words.
    pub says: String,
}

/// What a fork into a new workspace made (`retrace fork --worktree`, `POST …/fork` with
/// `worktree`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceFork {
    /// The new session.
    pub session_id: SessionId,
    /// Its selected head.
    pub head_id: HeadId,
    /// Its workspace (canonical): the new directory, or where the source workspace's place in its
    /// repository is inside the new worktree.
    pub workspace: String,
    /// The session it was forked from (unchanged).
    pub source_session_id: SessionId,
    /// The turn it was forked at.
    pub turn: u64,
    /// Whether the new directory is a `git worktree` of the source's repository (detached at its
    /// `HEAD`), else a copy of the workspace.
    pub git_worktree: bool,
    /// Files put back as they were when the turn started (written, or removed where they did not
    /// exist then).
    pub files_restored: usize,
    /// What was not copied, or left as the source has it now, and why.
    pub skipped: Vec<ForkSkipped>,
}

/// Where a session came from (`forked_from` of `retrace sessions --json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionOrigin {
    /// The session it was made from.
    pub session_id: SessionId,
    /// The turn it was forked at (its conversation ends just before it); null for a session an
    /// old flat log became on its first write.
    #[serde(default)]
    pub turn: Option<u64>,
    /// The directory made for it by a fork into a new workspace (a `git worktree` or a copy);
    /// null otherwise.
    #[serde(default)]
    pub directory: Option<String>,
    /// Whether that directory is a `git worktree` of the source's repository.
    #[serde(default)]
    pub git_worktree: bool,
}
