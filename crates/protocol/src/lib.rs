//! Data only: the types that cross a boundary between Retrace's crates and its frontends.
//!
//! Nothing here does I/O or holds behaviour beyond constructors and trivial accessors. Every type
//! serialises with snake_case keys (the CLI's `--json` output and the HTTP API); the sidecar's own
//! camelCase records live in `retrace-checkpoint`, which maps them to these types.
//!
//! What lives here, by module: ids ([`ids`]), conversation messages ([`message`]), sessions, heads
//! and transcripts ([`session`]), forks into new workspaces ([`fork`]), checkpoint listings ([`checkpoint`]), restore plans and results
//! ([`restore`], [`rewind`]), the event stream ([`event`], [`stream`]), the session's view ([`item`]), token counts and retry notices ([`usage`]), prices ([`price`]), the requests a frontend makes
//! ([`request`]), what it configures ([`config`]), errors ([`error`]), fsck reports ([`fsck`]) and
//! the plain words every frontend shares (counts and their plurals, how long ago: [`words`]; gaps
//! and conflicts are sent with theirs, `said.rs`).

pub mod checkpoint;
pub mod config;
pub mod error;
pub mod event;
pub mod fork;
pub mod fsck;
pub mod history;
pub mod ids;
pub mod item;
pub mod mcp;
pub mod message;
pub mod models;
pub mod price;
pub mod request;
pub mod restore;
pub mod results;
pub mod rewind;
mod said;
pub mod session;
pub mod stream;
pub mod tally;
pub mod usage;
pub mod words;

pub use checkpoint::{
    ActionKind, ChangeKind, CheckpointAction, CheckpointEntry, CheckpointListing, Coverage, Gap, GapReason,
};
pub use config::{BashPolicy, CheckpointBackend, ModelSpec, ModelSpecError, Provider, RetentionLimits};
pub use error::{Error, ErrorCode, ErrorDetails, Missing};
pub use event::{Event, RewindScope};
pub use fork::{ForkSkipReason, ForkSkipped, SessionOrigin, WorkspaceFork, WorkspaceForkRequest};
pub use fsck::{FsckProblem, FsckReport, LogRepair, MovedLogLine, Severity};
pub use history::{FileHistory, HistoryVersion, VersionOrigin};
pub use ids::{HeadId, MessageId, SessionId, MAIN_HEAD};
pub use item::{
    ChangeAction, CheckpointItem, FileChange, Item, ItemBody, NoteItem, NoteKind, PendingApproval,
    SessionSnapshot, ToolCallItem, ToolRecord, ToolStatus, ITEM_DIFF_CAP, ITEM_OUTPUT_CAP,
};
pub use mcp::{
    McpPermission, McpPromptInfo, McpServerConfig, McpServerStatus, McpStatus, McpToolInfo,
    DEFAULT_MCP_STARTUP_TIMEOUT_MS, DEFAULT_MCP_TOOL_TIMEOUT_MS,
};
pub use message::{ChatMessage, Role, ToolCall};
pub use models::{model_choices, ModelChoice};
pub use price::{Price, Prices};
pub use request::{
    ApprovalAnswer, ApprovalDecision, CancelAnswer, CommitRevert, CommitRewind, CompactRequest,
    CreateSession, ForkRequest, ModelChoices, ModelOffer, PlanModeRequest, PrepareRevert, PrepareRewind,
    RedoRequest, RetireRequest, SendPrompt, SessionCreated, SetModelRequest, SummarizeDirection,
    SummarizeRequest, SwitchRequest, TurnAccepted, TurnOutcome, UndoRequest, WorkspaceInfo,
};
pub use restore::{
    CodeOutcome, CodePlan, Conflict, ConflictReason, FileAction, OnConflict, PlanDiff, PlanFile,
    PlanFileDiff, PlanGap, PLAN_DIFF_CAP,
};
pub use results::{FileVersion, TurnCommand, TurnFile, TurnResults, RESULTS_DIFF_CAP};
pub use rewind::{ChoiceFile, PlanBlocker, PlanChoice, RewindPlan, RewindResult};
pub use session::{
    HeadEntry, HeadKind, HeadRef, JobKind, PruneReport, RemovedSession, RunningJob, SessionEntry,
    SessionHolder, SessionStatus, TranscriptEntry,
};
pub use stream::{Delivery, Numbered};
pub use tally::SessionUsage;
pub use usage::{RetryNotice, TokenUsage};
