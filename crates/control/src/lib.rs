//! The controller: the one API every frontend calls (SPEC §7). It owns the open session, its
//! checkpoint store and the agent, and it is the only place where rewind logic lives.
//!
//! Reading (listing sessions, checkpoints, transcripts) goes through [`SessionView`], which takes no
//! lease and so works while another process writes the session.

mod error;
mod paths;
mod view;

pub use error::{ControlError, Result};
pub use paths::DataRoot;
pub use view::{session_id, sessions, SessionView};
