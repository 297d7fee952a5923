//! Integration tests of the session log: one test binary, one module per topic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod copy;
mod format1;
mod heads;
mod lease;
mod log;
mod property;
mod repair;
mod summary;
mod turns;
