//! The controller: the one API every frontend uses (SPEC §7, ARCHITECTURE.md "The controller as a
//! service"). It is the only place where rewind logic lives.
//!
//! ```text
//!  cli ─┐      tui ─┐      server ─┐          (each: requests in, events out)
//!       └── handle ─┴──── handle ──┴─► Service ─► session actor ─► agent, store, log
//! ```
//!
//! A [`Service`] lists, creates and opens sessions. Each open session is an actor task that owns
//! the session log (and its writer lease), the checkpoint store and the agent; frontends hold
//! cloneable [`SessionHandle`]s whose whole surface is `retrace-protocol` types. Events carry a
//! per-session sequence number; [`SessionHandle::subscribe`] replays from a bounded buffer
//! ([`EVENT_BUFFER`]) and says `lagged` rather than skip. Approvals are answered by `call_id`, cancel
//! is a request, and a session whose last handle is dropped cancels its turn and closes cleanly.
//! Errors are `retrace-protocol` [`Error`](retrace_protocol::Error)s: a code, a message that names
//! no frontend's flags, and details.
//!
//! A turn follows ARCHITECTURE.md's data flow: the checkpoint is opened first (turn number, prompt,
//! boundary, head), then the user message is appended, then the agent runs; the agent's capture seam
//! is implemented here with the store, so every before-image is durable before its tool writes.
//!
//! Reading without a lease (listing sessions, checkpoints, transcripts, fsck) goes through
//! [`SessionReader`], which works while another process writes the session.
//!
//! Trade-offs: one mutex guards a session's state, shared by its actor and its running turn; it is
//! never held across an `await`, and file-system work runs on the runtime's workers (a
//! multi-threaded runtime is required). Each opening of a session numbers its events above every
//! earlier opening (module `bus`), so a subscriber resuming across a reopen or a restart gets
//! `lagged`, never another opening's events. Plans live in the actor: a plan prepared in one
//! process cannot be committed in another.

mod actor;
mod allow;
mod bus;
mod core;
mod error;
mod handle;
mod held;
mod items;
mod options;
mod paths;
mod recorded_model;
mod results;
mod service;
mod session_list;
mod shared;
mod tally;
mod turn;
mod view;
mod workspace_copy;

pub use bus::{Subscription, EVENT_BUFFER};
pub use core::PLAN_TTL;
pub use core::{check_prompt, counted_prompt_len, MAX_PROMPT_BYTES};
pub use handle::SessionHandle;
pub use items::{Applied, ItemList};
pub use options::{EnvLookup, ServiceOptions};
pub use paths::DataRoot;
pub use recorded_model::{reopen_recorded_model, ReopenedModel};
/// Kills the process group of every MCP server running now: for a process about to exit at once.
pub use retrace_agent::kill_running_servers as kill_running_mcp_servers;
/// The git branch (or short detached commit) of the repository a workspace is in, read from its
/// `.git` without running `git`: what the frontends show beside the workspace.
pub use retrace_fsutil::git_branch;
/// The known context window of a model (what `[model] context_window` overrides).
pub use retrace_model::default_context_window;
/// Kills the process group of every shell command running now: for a process about to exit at
/// once (a second Ctrl-C), so that nothing it started keeps changing the workspace.
pub use retrace_session::route_warnings as route_session_warnings;
pub use retrace_tools::kill_running_shells;
pub use service::PruneRequest;
pub use service::Service;
pub use view::{fsck_sidecar, read_sidecar, SessionReader};
pub use workspace_copy::stop_workspace_forks;
