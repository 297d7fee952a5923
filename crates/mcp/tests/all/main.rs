//! The MCP client against real servers the project did not write (the reference servers, pinned
//! in `tests/servers/package.json`; `npm ci` there first, as `.ci/run` does) and against broken
//! ones.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod broken;
mod hostile;
mod http;
mod size;
mod stdio;
mod support;
