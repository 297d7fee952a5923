//! Failpoint tests of a restore wide enough to be written and published by several threads
//! (`workers.rs`: 32 targets or more): whatever step fails, and in whichever order the threads
//! reached their steps, recovery leaves every target forward or every target restored, and an
//! error reported in-process leaves the workspace as it was. The loops are `restore_faults.rs`'s.

use crate::restore_faults::{crash_at_every_step, each_error_decides, CrashTally};
use crate::restore_support::*;

/// Files the turn edits (and `FILES / 8` it creates): above the threshold of several threads.
const FILES: usize = 40;

#[test]
fn a_crash_at_every_step_of_a_wide_restore_recovers_all_or_nothing() {
    let CrashTally {
        rolled_back,
        finished,
        phases,
        ..
    } = crash_at_every_step(&|| wide_scenario(FILES), FILES + FILES / 8);
    assert!(
        rolled_back > 0 && finished > 0,
        "{rolled_back} rolled back, {finished} finished"
    );
    assert!(
        phases.contains_key(&Phase::Committing),
        "no crash landed while publishing"
    );
}

#[test]
fn an_error_at_any_step_of_a_wide_restore_decides_it_there_and_then() {
    each_error_decides(&|| wide_scenario(FILES));
}
