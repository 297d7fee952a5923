//! Integration tests of the checkpoint store: one test binary (`tests/all`), one module per topic.
//! Tests that re-run this binary as a child process name their child test with its module
//! (`restore_kill::restore_kill_child`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod hostile_support;
mod log_hostile;
mod log_support;
mod restore_support;

mod after_failed;
mod bad_input;
mod capture;
mod capture_known;
mod crash;
mod history;
mod hostile;
mod hostile_races;
mod kill_dirs;
mod kill_turn;
mod legacy;
mod module_layers;
mod property;
mod redo;
mod redo_faults;
mod reference_records;
mod restore;
mod restore_diffs;
mod restore_dirs;
mod restore_disk_full;
mod restore_faults;
mod restore_forward;
mod restore_kill;
mod restore_ownership;
mod restore_read_only;
mod restore_replan;
mod restore_wide;
mod results;
mod rewind_record;
mod turn_start;
