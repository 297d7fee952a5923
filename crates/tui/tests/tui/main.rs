//! The terminal UI driven through its state machine and drawn into a `TestBackend`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod approval;
mod attack;
mod commands;
mod first_run;
mod fixtures;
mod flow;
mod fuzz;
mod history;
mod input_keys;
mod long_flow;
mod long_sessions;
mod mcp;
mod offered;
mod popups;
mod preview_diffs;
mod queue;
mod reload_race;
mod rendering;
mod screens;
mod turn_diff;
mod whole_flow;
