//! Retrace's HTTP server (`retrace serve`, SPEC §9.3, docs/API.md): a JSON API over the
//! controller's [`SessionHandle`](retrace_control::SessionHandle)s, the session's events as
//! server-sent events, and the web UI's files from `retrace-web`.
//!
//! ```text
//!  browser ──HTTP──► listen (connection cap, header timeout)
//!                     └─► security (Host, Origin, token or page key)
//!                          ├─► api ──► Registry ──► SessionHandle
//!                          ├─► events (SSE) ◄── Subscription
//!                          └─► assets (retrace-web)
//! ```
//!
//! The server is a frontend: it parses requests (strictly: unknown fields and wrong types are
//! `usage` errors naming the field), calls the handle, and maps `ErrorCode`s to HTTP statuses in
//! one table ([`status_of`]). It decides nothing about sessions, rewinds or heads, and writes no
//! file of its own. Sessions are opened on demand by id and kept open until the server stops,
//! so every tab on a session shares its actor and its event stream.
//!
//! Trade-offs: only loopback addresses by default, one token for everything (no users; the
//! page's cookie carries a key of this server's life, not the token), plain HTTP (the token would
//! cross a network in clear: `allow_remote` is for trusted networks or a TLS proxy in front). A
//! plan prepared through the server lives in its process, as plans do.

mod api;
mod app;
mod assets;
mod body;
mod error;
mod events;
mod listen;
mod models;
mod params;
mod registry;
mod security;
mod server;
mod stall;

pub use app::router;
pub use body::MAX_BODY;
pub use error::{status_of, ApiError, ServerError};
pub use events::KEEP_ALIVE;
pub use listen::ConnectionLimits;
pub use registry::{ModelResolver, Registry};
pub use security::Guard;
pub use server::{random_token, ServeOptions, Server};
