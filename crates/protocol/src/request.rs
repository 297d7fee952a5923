//! Requests a frontend makes of a session, and the small results that have no better home. The
//! HTTP API takes these as its JSON bodies; the controller's handle takes them as arguments.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::ModelSpec;
use crate::event::RewindScope;
use crate::ids::{HeadId, SessionId};
use crate::restore::OnConflict;
use crate::usage::TokenUsage;

/// A prompt for a new turn (`POST …/messages`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SendPrompt {
    /// What the agent should do.
    pub prompt: String,
}

/// A turn that was accepted: its checkpoint exists and its user message is in the log. How it
/// ends comes as the `turn_finished` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnAccepted {
    /// The session (a new one when an old flat log was upgraded by the write).
    pub session_id: SessionId,
    /// The head the turn runs on.
    pub head_id: HeadId,
    /// The turn number.
    pub turn: u64,
}

/// How a turn ended, as the `exec` result reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnOutcome {
    /// The turn.
    pub turn: u64,
    /// False when it ended in an error or was cancelled.
    pub ok: bool,
    /// Why it failed.
    pub error: Option<String>,
    /// The tokens of the turn's model requests, summed (absent when the server counted none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<TokenUsage>,
}

/// The answer to an `approval_requested` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run this command now.
    Once,
    /// Run it, and the same command line again without asking, for as long as the session is open
    /// (or, with the answer's `prefix`, every simple command starting with those words).
    Session,
    /// Do not run it; the model is told it was declined.
    Deny,
}

/// An answer to an approval (`POST …/approvals/{call_id}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalAnswer {
    /// The decision.
    pub decision: ApprovalDecision,
    /// With `session`: allow every simple command starting with these words (one of the
    /// approval's `prefixes`) rather than the exact command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
}

impl ApprovalAnswer {
    /// `decision`, for this command line only.
    pub fn new(decision: ApprovalDecision) -> ApprovalAnswer {
        ApprovalAnswer {
            decision,
            prefix: None,
        }
    }
}

/// Prepare a rewind (`POST …/rewind/prepare`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrepareRewind {
    /// The turn to rewind to.
    pub turn: u64,
    /// What to restore.
    pub scope: RewindScope,
}

fn yes() -> bool {
    true
}

/// Commit a prepared rewind (`POST …/rewind/commit`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitRewind {
    /// The plan, as `prepare` returned it.
    pub plan_id: String,
    /// The user confirmed a plan that spans untracked changes.
    #[serde(default)]
    pub confirm: bool,
    /// What to do with conflicted files.
    #[serde(default)]
    pub on_conflict: OnConflict,
    /// Move onto the new head (what the UIs and the CLI do); false leaves the current head selected.
    #[serde(default = "yes")]
    pub in_place: bool,
}

/// Undo the last rewind (`POST …/undo`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UndoRequest {
    /// The transaction to undo; it must be the last rewind. `None`: whatever that is.
    #[serde(default)]
    pub transaction_id: Option<String>,
}

/// Redo the newest undone rewind (`POST …/redo`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RedoRequest {
    /// The undone transaction to apply again; it must be the newest one undone. `None`: whatever
    /// that is.
    #[serde(default)]
    pub transaction_id: Option<String>,
}

/// Fork from a turn (`POST …/fork`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkRequest {
    /// The new head ends just before this turn.
    pub turn: u64,
    /// A name for it.
    #[serde(default)]
    pub name: Option<String>,
    /// Select the new head.
    #[serde(default = "yes")]
    pub select: bool,
}

/// Which part of the head a summary replaces (SPEC §5.1 actions 5 and 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SummarizeDirection {
    /// This turn and everything after it.
    From,
    /// Everything before this turn.
    UpTo,
}

/// Summarize from or up to a turn (`POST …/summarize`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummarizeRequest {
    /// The turn.
    pub turn: u64,
    /// Which side.
    pub direction: SummarizeDirection,
    /// The model that writes the summary; `None`: the session's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelSpec>,
}

/// Compact the selected head now (`POST …/compact`, `retrace compact`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactRequest {
    /// The model that writes the summary; `None`: the session's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelSpec>,
}

/// Turn plan mode on or off (`POST …/plan`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanModeRequest {
    /// On or off.
    pub on: bool,
}

/// Select a head (`POST …/switch`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchRequest {
    /// Its id or name.
    pub head: String,
}

/// Prepare a single-file revert (`POST …/revert/prepare`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrepareRevert {
    /// The file, relative to the workspace.
    pub path: PathBuf,
    /// A version of the file's history to restore (SPEC §5.8, from 1); absent: its state before
    /// the session first touched it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
}

/// Commit a prepared file revert (`POST …/revert/commit`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitRevert {
    /// The plan, as `prepare` returned it.
    pub plan_id: String,
    /// Replace the file even if it changed since Retrace wrote it (undoable).
    #[serde(default)]
    pub overwrite: bool,
    /// The user confirmed a revert that spans changes Retrace could not track (a shell command in
    /// a turn that touched the file, a legacy or expired record).
    #[serde(default)]
    pub confirm: bool,
}

/// A new session (`POST /api/sessions`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateSession {
    /// Its workspace; `None`: the server's.
    #[serde(default)]
    pub workspace: Option<PathBuf>,
    /// Its model (`deepseek:NAME`, `openai:NAME`, `script:FILE`, `demo`); `None`: the server's.
    #[serde(default)]
    pub model: Option<String>,
    /// Its checkpoint backend, which it keeps: `snapshot` or `git`; `None`: the server's
    /// (`serve --backend`, `[checkpoints] backend`).
    #[serde(default)]
    pub backend: Option<crate::CheckpointBackend>,
}

/// Another model for a session's next turns (`POST /api/sessions/{id}/model`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetModelRequest {
    /// The model, as `--model` takes it (`deepseek:NAME`, `openai:NAME`, `script:FILE`, `demo`).
    pub model: String,
}

/// The models a frontend offers to choose from (`GET /api/models`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelChoices {
    /// The model new sessions get, if one is set up (`serve --model`, else the configured one).
    pub default: Option<String>,
    /// The models to offer, each as `--model` takes it: the default first, `demo` last.
    pub models: Vec<String>,
    /// The same models, each with whether it can answer here: a hosted one whose API key
    /// variable is unset in the server's environment cannot (`ready: false`), and `note` says
    /// what to do ("no API key: export DEEPSEEK_API_KEY").
    #[serde(default)]
    pub offered: Vec<ModelOffer>,
}

/// One model a frontend offers (`ModelChoices::offered`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelOffer {
    /// The model, as `--model` takes it.
    pub model: String,
    /// Whether it can answer here (its API key, if it needs one, is set).
    pub ready: bool,
    /// What it lacks, in words, when it is not ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The workspace new sessions get (`GET /api/workspace`): what a page shows before any session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceInfo {
    /// Its root.
    pub workspace: String,
    /// The git branch (or short detached commit) of the repository it is in, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The session a page opens when its address names none: the newest of the workspace that no
    /// other process holds (absent when there is none: the page starts one with its first prompt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionId>,
}

/// The session a `POST /api/sessions` made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionCreated {
    /// Its id.
    pub session_id: SessionId,
}

/// Retire a head (`POST …/retire`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetireRequest {
    /// Its id or name.
    pub head: String,
}

/// The answer to a cancel (`POST …/cancel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CancelAnswer {
    /// False when nothing was running.
    pub cancelled: bool,
}
