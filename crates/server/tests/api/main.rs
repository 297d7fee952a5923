//! The HTTP API, through the router without a socket (`oneshot`) and through real HTTP on
//! 127.0.0.1:0 (docs/API.md). Turns run on the script model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod connections;
mod errors;
mod events;
mod fork_workspace;
mod http;
mod models;
mod routes;
mod security;
mod support;
mod wire;
