//! Integration tests of the controller, through its handles: one test binary (`tests/all`), one
//! module per topic, the shared world in `support`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod compaction;
mod discard;
mod items;
mod mcp;
mod plan_diffs;
mod redo;
mod rewind;
mod rewind_model;
mod service;
mod tally;
