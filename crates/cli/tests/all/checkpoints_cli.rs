//! `retrace checkpoints --sidecar` and `retrace fsck --sidecar` through the real binary.

use std::process::{Command, Output};

use retrace_testkit::fixture;
use serde_json::Value;

fn retrace(args: &[&str]) -> Output {
    let tmp = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_retrace"))
        .args(args)
        .env("RETRACE_HOME", tmp.path())
        .output()
        .unwrap()
}

fn fixture_arg(rel: &str) -> String {
    fixture(rel).to_string_lossy().into_owned()
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn listing_the_legacy_fixture_gives_exactly_the_expected_checkpoints() {
    let out = retrace(&[
        "checkpoints",
        "--sidecar",
        &fixture_arg("legacy-sidecar/sidecar"),
        "--json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).expect("stdout is only JSON");
    let expected: Value =
        serde_json::from_slice(&std::fs::read(fixture("legacy-sidecar/expected.json")).unwrap()).unwrap();
    let got = got.as_array().unwrap();
    let want = expected["checkpoints"].as_array().unwrap();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g["turn"], w["turn"]);
        assert_eq!(g["prompt"], w["prompt"]);
        assert_eq!(strs(&g["paths"]), strs(&w["paths"]));
        assert_eq!(g["coverage"], w["coverage"]);
        let reasons: Vec<String> = g["gaps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["reason"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(reasons, strs(&w["gaps"]), "turn {}", g["turn"]);
        // The §7 shape: every field is there.
        for key in [
            "time",
            "head",
            "message_id",
            "file_count",
            "bytes",
            "can_restore_code",
            "disabled_reason",
            "visible",
        ] {
            assert!(g.get(key).is_some(), "missing {key}");
        }
    }
}

#[test]
fn the_human_listing_is_a_table_with_the_total_size() {
    let out = retrace(&["checkpoints", "--sidecar", &fixture_arg("legacy-sidecar/sidecar")]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().next().unwrap().contains("TURN"), "{text}");
    assert!(text.contains("update logo and notes"), "{text}");
    assert!(
        text.contains("— a shell command: what it did to files is not tracked"),
        "{text}"
    );
    assert!(text.contains("stored: "), "{text}");
    assert!(text.contains("next turn 7"), "{text}");
}

#[test]
fn fsck_of_the_good_fixture_exits_zero() {
    let out = retrace(&[
        "fsck",
        "--sidecar",
        &fixture_arg("legacy-sidecar/sidecar"),
        "--json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], true);
    let sev: Vec<&str> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["severity"].as_str().unwrap())
        .collect();
    assert!(sev.iter().all(|s| *s == "info"), "{sev:?}");
}

#[test]
fn fsck_of_the_corrupt_fixture_names_every_broken_file() {
    let out = retrace(&[
        "fsck",
        "--sidecar",
        &fixture_arg("legacy-sidecar/corrupt-sidecar"),
        "--json",
    ]);
    assert_ne!(out.status.code(), Some(0));
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], false);
    let expected: Value =
        serde_json::from_slice(&std::fs::read(fixture("legacy-sidecar/corrupt-expected.json")).unwrap())
            .unwrap();
    let errors: Vec<&Value> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["severity"] == "error")
        .collect();
    let mut turns: Vec<u64> = errors.iter().filter_map(|p| p["turn"].as_u64()).collect();
    turns.sort();
    turns.dedup();
    let want_turns: Vec<u64> = expected["problem_turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_u64().unwrap())
        .collect();
    assert_eq!(turns, want_turns);
    for needle in strs(&expected["problem_paths_contain"]) {
        assert!(
            errors
                .iter()
                .any(|p| p["path"].as_str().unwrap().contains(&needle)
                    || p["file"].as_str().is_some_and(|f| f.contains(&needle))),
            "no error names {needle}: {errors:#?}"
        );
    }
    // Each broken payload names both the sidecar file and the workspace file it affects.
    let blob = errors.iter().find(|p| p["file"] == "x.bin").unwrap();
    assert!(blob["path"].as_str().unwrap().starts_with("blobs/"));
    let payload = errors.iter().find(|p| p["file"] == "y.txt").unwrap();
    assert_eq!(payload["path"], "turns/1/files/0000.before");
}

#[test]
fn fsck_human_output_fails_loudly() {
    let out = retrace(&[
        "fsck",
        "--sidecar",
        &fixture_arg("legacy-sidecar/corrupt-sidecar"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("FAILED"), "{text}");
    assert!(
        text.contains("[file x.bin]") && text.contains("[file y.txt]") && text.contains("turns/2/meta.json")
    );
}

#[test]
fn listing_the_corrupt_fixture_still_shows_the_good_turns() {
    let out = retrace(&[
        "checkpoints",
        "--sidecar",
        &fixture_arg("legacy-sidecar/corrupt-sidecar"),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    let turns: Vec<u64> = got
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["turn"].as_u64().unwrap())
        .collect();
    assert_eq!(turns, [0, 1, 2]);
    assert_eq!(got[2]["coverage"], "none");
    assert_eq!(got[2]["gaps"][0]["reason"], "unreadable");
    assert_eq!(got[2]["can_restore_code"], false);
    // The warning about the broken record goes to stderr, never into the JSON.
    assert!(String::from_utf8_lossy(&out.stderr).contains("turns/2/meta.json"));
}

#[test]
fn a_missing_sidecar_is_an_error_naming_it() {
    // A file named on the command line that is missing is a usage error, in every command.
    let out = retrace(&["checkpoints", "--sidecar", "/nonexistent/x.ckpt"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("/nonexistent/x.ckpt") && err.contains("--sidecar"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(retrace(&["checkpoints"]).status.code(), Some(2));
    assert_eq!(retrace(&["fsck", "--sidecar"]).status.code(), Some(2));
    assert_eq!(retrace(&["no-such-command"]).status.code(), Some(2));
}

#[test]
fn the_demo_runs_without_a_key() {
    let out = retrace(&["demo"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Checkpoints") && text.contains("turn 3"), "{text}");
    assert!(text.contains("before-image saved first: demo/notes.md"), "{text}");
    // It rewinds the code to turn 1 and undoes that: the workspace ends as it was after turn 3.
    let holds: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("The workspace now holds:"))
        .collect();
    assert_eq!(holds.len(), 3, "{text}");
    assert_eq!(
        holds[1],
        "The workspace now holds: README.md, demo/notes.md, demo/todo.txt"
    );
    assert_eq!(holds[0], holds[2]);
    assert!(text.contains("demo/summary.md          delete"), "{text}");
}
