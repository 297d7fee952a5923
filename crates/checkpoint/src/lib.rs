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
mod check;
mod commit;
mod compensate;
mod composed;
mod dirs;
mod encoding;
mod error;
mod forward;
mod from_record;
mod fsck;
mod fsio;
mod images;
mod intents;
mod layout;
mod load;
mod manifests;
mod memo;
pub mod model;
mod pack;
mod payload;
pub mod plan;
mod prepare;
mod read;
pub mod record;
mod recovery;
mod restore_set;
mod retention;
mod rewind;
mod sidecar;
mod state;
mod store;
mod timeline;
mod to_record;
mod tool_temps;
mod transaction;
mod turn;
pub mod tx;
mod undo;

pub use capture::{CaptureReport, Change};
pub use error::{CheckpointError, Result};
pub use fsio::{image_of, mode_bits};
pub use layout::{blob_rel_path, forward_rel_path, pack_rel_path, FORWARD_DIR, STATE_FILE};
pub use load::{load_sidecar, Loaded};
pub use plan::{CommitOptions, PlanKind, RestorePlan};
pub use read::{BeforeImage, VerifiedReader};
pub use state::{Owned, StoreState};
pub use store::{CheckpointStore, Clock, Limits, StoreOptions};
pub use turn::BeginTurn;
