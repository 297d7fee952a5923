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
//!
//! # How the crate is built
//!
//! Three layers; a module imports only from its own layer and those below it:
//!
//! 1. **Formats and helpers.** Where every file of a sidecar lives (`layout`); the file-system
//!    helpers every part shares (`fsio`); the records as stored ([`record`]), the typed model
//!    ([`model`]) and the conversions between them (`from_record`, `to_record`, `encoding`,
//!    `composed`); `state.json` (`state`); transaction manifests ([`tx`]) and the rewind record
//!    they keep (`rewind`); the error type.
//! 2. **The sidecar as loaded** (`sidecar`: turns, `state.json`, manifests, what was odd about
//!    them) and everything that only reads it: loading (`load`, `manifests`), the listing and
//!    before-images (`read`), restore plans ([`plan`]; `restore_set`, `timeline`, `images`,
//!    `check`, `memo`), their diffs (`plan_diff`) and what a plan offers (`choices`), forward
//!    images (`forward`), blobs (`blobs`), the edit tools' temp files (`tool_temps`), `fsck`.
//! 3. **The store** ([`CheckpointStore`], `store`): the sidecar plus what writing needs (options,
//!    the turn capturing now, holds), with its operations each in a module of its own: a turn's
//!    life (`turn`, its frames in the log: `turnlog`), capture (`capture`, `keep`, `after`), the
//!    end of a turn (`end`),
//!    committing a plan (`commit`, `transaction`, `prepare`, `pack`, `compensate`, `dirs`), undo
//!    and rewinds (`undo`), redo (`redo`), the workspace at a turn's start written elsewhere
//!    (`turn_start`), recovery (`recovery`, `intents`) and `retention`.
//!
//! A question that only reads is answered by the sidecar (the store hands it on); an operation
//! that writes is a method of the store.

// Formats and helpers.
mod composed;
mod encoding;
mod error;
mod from_record;
mod fsio;
mod layout;
mod logread;
pub mod model;
pub mod record;
mod rewind;
mod seglog;
mod state;
mod to_record;
pub mod tx;

// The sidecar as loaded, and what only reads it.
mod blobs;
mod check;
mod choices;
mod end_check;
mod forward;
mod fsck;
mod history;
mod images;
mod load;
mod manifests;
mod memo;
pub mod plan;
mod plan_diff;
mod read;
mod restore_set;
mod results;
mod sidecar;
mod timeline;
mod tool_temps;
mod version_plan;

// The store and its operations.
mod after;
mod capture;
mod capture_known;
mod commit;
mod compensate;
mod dirs;
mod end;
mod intents;
mod keep;
mod pack;
mod prepare;
mod publish;
mod recovery;
mod redo;
mod retention;
mod store;
mod transaction;
mod turn;
mod turn_start;
mod turnlog;
mod undo;
mod workers;

pub use capture::{CaptureReport, Change};
pub use capture_known::SNAPSHOT_CAPTURE_SOURCE;
pub use error::{CheckpointError, Result};
pub use fsio::{image_of, mode_bits};
pub use layout::{blob_rel_path, forward_rel_path, pack_rel_path, FORWARD_DIR, STATE_FILE};
pub use load::{load_sidecar, Loaded};
pub use model::Known;
pub use plan::{CommitOptions, PlanKind, RestorePlan};
pub use plan_diff::{DiffBudget, PLAN_DIFF_INPUT_BUDGET, PLAN_DIFF_TEXT_BUDGET, PLAN_DIFF_TIME_BUDGET};
pub use read::{BeforeImage, VerifiedReader};
pub use state::{Owned, StoreState};
pub use store::{CheckpointStore, Clock, Limits, StoreOptions};
pub use turn::BeginTurn;
pub use turn_start::TurnStartCopy;
