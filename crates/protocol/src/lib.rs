//! Data only: the types that cross a boundary between Retrace's crates and its frontends.
//!
//! Nothing here does I/O or holds behaviour beyond trivial accessors. Every type serialises with
//! snake_case keys (the CLI's `--json` output and, later, the HTTP API); the sidecar's own camelCase
//! records live in `retrace-checkpoint`, which maps them to these types.

pub mod checkpoint;
pub mod event;
pub mod fsck;
pub mod restore;
pub mod rewind;
pub mod session;

pub use checkpoint::{ChangeKind, CheckpointEntry, Coverage, Gap, GapReason};
pub use event::{Event, RewindScope};
pub use fsck::{FsckProblem, FsckReport, Severity};
pub use restore::{
    CodeOutcome, CodePlan, Conflict, ConflictReason, FileAction, OnConflict, PlanFile, PlanGap,
};
pub use rewind::{RewindPlan, RewindResult};
pub use session::{HeadEntry, SessionEntry, TranscriptEntry, TranscriptToolCall};
