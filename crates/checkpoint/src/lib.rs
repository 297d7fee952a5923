//! The checkpoint sidecar store: Retrace's safety net.
//!
//! A session's sidecar directory holds, per turn, the before-image of every file the edit tools
//! touched (SPEC §3–§4). The design in one paragraph: plain file copies, not git — only touched files
//! are copied, so a turn costs what it edits, not what the repository weighs. Each turn is a directory
//! `turns/N/` with a `meta.json` record and raw `files/NNNN.before` payloads, kept alive by a
//! compatibility marker `turn-N.json` that older builds understand. Every write is ordered so a crash
//! can hide a payload but never a turn, and the before-image is durable before the tool that edits
//! the file runs. `state.json` remembers what Retrace itself wrote last per path: the proof that makes
//! overwriting safe later.
//!
//! What it trades away: a before-image is a whole-file copy (no deltas), so editing one large file in
//! every turn costs its size per turn, bounded by retention (§3.4). Shell side effects are not
//! captured, only recorded as gaps.
//!
//! The store is synchronous `std::fs` code and knows nothing of sessions, models or UIs.

mod after;
mod blobs;
mod capture;
mod choices;
mod commit;
mod compensate;
mod composed;
mod dirs;
mod error;
mod forward;
mod fsck;
mod intents;
mod load;
mod memo;
pub mod model;
pub mod plan;
mod read;
pub mod record;
mod recovery;
mod retention;
mod state;
mod store;
pub mod tx;
mod undo;

pub use blobs::{blob_rel_path, forward_rel_path, FORWARD_DIR};
pub use capture::{image_of, mode_bits, CaptureReport, Change};
pub use commit::CommitOptions;
pub use error::{CheckpointError, Result};
pub use forward::pack_rel_path;
pub use load::{load_sidecar, Loaded};
pub use plan::{PlanKind, RestorePlan};
pub use read::{BeforeImage, VerifiedReader};
pub use state::{Owned, StoreState, STATE_FILE};
pub use store::{BeginTurn, CheckpointStore, Clock, Limits, StoreOptions};
