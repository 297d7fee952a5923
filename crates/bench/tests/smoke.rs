//! The harness cannot rot: `retrace-bench --smoke` (a 50-file tree, every scenario once, both sides
//! checked after every rewind) must succeed and print well-formed lines. CI runs this; it does not
//! run the real benchmark, which takes minutes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

#[test]
fn every_scenario_runs_once_on_a_small_tree_and_both_sides_verify() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_retrace-bench"))
        .args(["--smoke", "--dir"])
        .arg(tmp.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    let names: Vec<&str> = lines
        .iter()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    for want in [
        "per_turn_capture_50",
        "first_checkpoint_time_50",
        "first_checkpoint_bytes_50",
        "first_checkpoint_inodes_50",
        "rewind_1_50",
        "rewind_10_50",
        "rewind_12_manual_edit_50",
        "storage_5_turns_50",
        "resume_5_turns_50",
        "git_first_snapshot_50",
        "git_turn_50",
        "peak_memory_1mib_50",
    ] {
        assert!(names.contains(&want), "no line {want} in:\n{stdout}");
    }
    assert_eq!(names.len(), 12, "one line per scenario:\n{stdout}");
    for l in &lines {
        let last = l.split_whitespace().last().unwrap();
        assert!(last.starts_with("ratio="), "{l}");
        assert!(!l.contains("FAIL"), "a side failed its check: {l}\n{stderr}");
    }
    let field = |line: &str, key: &str| -> String {
        let l = lines.iter().find(|l| l.starts_with(line)).unwrap();
        l.split_whitespace()
            .find_map(|f| f.strip_prefix(&format!("{key}=")))
            .unwrap()
            .to_string()
    };
    // Retrace refuses to overwrite a hand edit; git's reset --hard silently overwrites it.
    assert_eq!(field("rewind_12_manual_edit_50", "ours"), "kept_edit");
    assert_eq!(field("rewind_12_manual_edit_50", "git"), "overwrote_edit");
    assert_eq!(field("rewind_12_manual_edit_50", "ratio"), "n/a");
    // Every timed comparison produced a ratio.
    for line in [
        "per_turn_capture_50",
        "rewind_10_50",
        "first_checkpoint_bytes_50",
        "git_turn_50",
    ] {
        let r: f64 = field(line, "ratio").parse().unwrap();
        assert!(r > 0.0, "{line}: ratio {r}");
    }
    // The git backend's turn read only what the command changed.
    assert_eq!(field("git_turn_50", "paths_read"), "1");
    // Nothing is left behind.
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}
