//! Retrace's MCP client (SPEC §8.1), on the official Rust SDK (`rmcp`).
//!
//! # Design
//!
//! A session's [`McpServers`] holds the `[mcp_servers.NAME]` of the config. Nothing starts until
//! the session first needs its tools ([`McpServers::start_all`], at the first turn); then each
//! enabled server is started at once, within its `startup_timeout_ms`:
//!
//! - **stdio** servers run as a process of their own, leading a process group of their own, with
//!   the workspace root as their directory unless `cwd` says otherwise, Retrace's environment less
//!   the API keys plus `env`. Stopping one kills its group and its descendants that left it;
//!   where `setpriv` is installed the server's own process gets a parent-death signal against a
//!   Retrace killed outright, and a watchdog kills the rest of its group then (what neither
//!   covers: [`mod@spawn`]).
//! - **streamable HTTP** servers are a session over `url`, with the bearer token of
//!   `bearer_token_env`.
//!
//! A server that does not start is reported once and its tools are left out. One that stops (its
//! process died, the connection broke) fails the call it was in with an error saying so, and is
//! started again at its next call. A call that runs past `tool_timeout_ms`, or is cancelled,
//! fails: the server is told to cancel it, and a stdio server that does not answer within a
//! second is stopped (its processes killed and waited for) and started again at its next call.
//!
//! A message from a server is at most [`MAX_MESSAGE_BYTES`] (a stdio line, an HTTP body or event
//! line); past it the request fails and the server is started again.
//!
//! Results are text for the model ([`McpOutput`]): text as it is, structured content as JSON,
//! images and audio as a note, `isError` kept; capped like every tool's output.
//!
//! What a call may do, and how it is checkpointed, is decided above this crate (the agent): the
//! crate only says what the server marks read-only ([`McpTool::read_only`], its own unchecked
//! claim), what the config vouches for ([`McpTool::vouched`]) and what the config allows
//! ([`McpServers::decide`]).

mod cap;
mod catalog;
mod conn;
pub mod error;
mod http;
mod listing;
mod permission;
mod resources;
pub mod result;
mod servers;
pub mod spawn;
mod status;
mod watchdog;

pub use cap::MAX_MESSAGE_BYTES;
pub use catalog::{
    qualified_name, LeftOut, McpTool, MAX_TOOLS_PER_SERVER, MAX_TOOL_BYTES_PER_SERVER, TOOL_PREFIX,
};
pub use error::{CallEnd, McpError, Result};
pub use permission::{permission_word, Decision};
pub use result::McpOutput;
pub use servers::McpServers;
pub use spawn::kill_running_servers;

/// Looks up an environment variable (a bearer token).
pub type EnvLookup = std::sync::Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;
