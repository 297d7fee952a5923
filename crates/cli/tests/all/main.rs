//! Integration tests of the `retrace` binary, each running the real binary
//! (`env!("CARGO_BIN_EXE_retrace")`): one test binary (`tests/all`), one module per topic, what
//! they share in `support`. Run one topic with its module, e.g.
//! `cargo test -p retrace-cli --test all tui_cli::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod boundaries_cli;
mod checkpoints_cli;
mod credentials_cli;
mod daily_cli;
mod diff_cli;
mod exec_cli;
mod fork_worktree_cli;
mod fork_worktree_guard_cli;
mod git_backend_cli;
mod git_sight_cli;
mod git_tree_cli;
mod headless_cli;
mod hostile_cli;
mod input_cli;
mod items_cli;
mod kill_turn_cli;
mod layering;
mod legacy_cli;
mod log_damage_cli;
mod long_cli;
mod mcp_cli;
mod mcp_hostile_cli;
mod model_cli;
mod ownership_cli;
mod redo_cli;
mod render_cli;
mod restore_diffs_cli;
mod resume_model_cli;
mod rewind_cli;
mod serve_cli;
mod sessions_cli;
mod signals_cli;
mod terminal_cli;
mod tui_cli;
mod tui_input_cli;
mod tui_trial_cli;
mod web_cli;
mod web_held_cli;
mod web_status_cli;
