//! The controller: the one API every frontend calls (SPEC §7). It owns the open session, its
//! checkpoint store and the agent, and it is the only place where rewind logic lives.
//!
//! A turn follows ARCHITECTURE.md's data flow: the checkpoint is opened first (turn number, prompt,
//! boundary, head), then the user message is appended, then the agent runs; the agent's capture seam
//! is implemented here with the store, so every before-image is durable before its tool writes.
//!
//! Reading (listing sessions, checkpoints, transcripts) goes through [`SessionView`], which takes no
//! lease and so works while another process writes the session.

mod controller;
mod error;
mod heads;
mod paths;
mod rewind;
mod seam;
mod view;

pub use controller::{Controller, ControllerOptions, TurnReport};
pub use error::{ControlError, Result};
pub use heads::SummarizeWhich;
pub use paths::DataRoot;
pub use rewind::PLAN_TTL;
pub use view::{session_id, sessions, SessionView};
