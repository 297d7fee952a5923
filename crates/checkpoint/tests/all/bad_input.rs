//! Bad input: every broken record is a clear problem naming its file; nothing panics; the other turns
//! still load.

use std::fs;
use std::path::Path;

use retrace_checkpoint::{BeginTurn, CheckpointStore, StoreOptions};
use retrace_fsutil::Fs;
use retrace_protocol::{Coverage, Severity};
use retrace_testkit::Scratch;

const GOOD: &str = r#"{"schemaVersion":2,"turn":0,"time":"2026-01-01T00:00:00Z","prompt":"good","files":[{"path":"a","content":"x"}]}"#;

fn sidecar_with(s: &Scratch, files: &[(&str, &[u8])]) {
    fs::create_dir_all(&s.sidecar).unwrap();
    fs::write(s.sidecar.join("turn-0.json"), GOOD).unwrap();
    for (rel, bytes) in files {
        let p = s.sidecar.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, bytes).unwrap();
    }
}

fn open(s: &Scratch) -> CheckpointStore {
    CheckpointStore::open(
        &s.sidecar,
        &s.workspace,
        StoreOptions {
            fs: Fs::without_sync(),
            ..StoreOptions::default()
        },
    )
    .unwrap()
}

/// Asserts turn 0 still loads and that fsck has an error naming `rel` for turn `turn`.
fn assert_named(store: &CheckpointStore, rel: &str, turn: u64) -> String {
    assert_eq!(
        store.turn(0).map(|t| t.prompt.as_str()),
        Some("good"),
        "the good turn must still load"
    );
    let report = store.fsck();
    assert!(!report.ok);
    let p = report
        .problems
        .iter()
        .find(|p| p.path == rel && p.severity == Severity::Error)
        .unwrap_or_else(|| panic!("no error naming {rel}: {:#?}", report.problems));
    assert_eq!(p.turn, Some(turn));
    assert!(
        p.problem.contains(rel),
        "the message names the file: {}",
        p.problem
    );
    p.problem.clone()
}

#[test]
fn corrupt_truncated_empty_and_wrong_typed_top_records() {
    let cases: [(&str, &[u8], &str); 5] = [
        ("corrupt", b"{not json", "not a valid record"),
        (
            "truncated",
            br#"{"schemaVersion":2,"turn":1,"files":[{"path":"#,
            "not a valid record",
        ),
        ("empty", b"", "empty"),
        (
            "wrong-typed",
            br#"{"schemaVersion":2,"turn":"one","files":{}}"#,
            "not a valid record",
        ),
        (
            "wrong-typed files",
            br#"{"schemaVersion":2,"turn":1,"files":[{"path":7}]}"#,
            "not a valid record",
        ),
    ];
    for (name, bytes, want) in cases {
        let s = Scratch::new().unwrap();
        sidecar_with(&s, &[("turn-1.json", bytes)]);
        let store = open(&s);
        let msg = assert_named(&store, "turn-1.json", 1);
        assert!(msg.contains(want), "{name}: {msg}");
        // The turn is still listed (its file exists) but offers nothing to restore.
        let t1 = store.list().into_iter().find(|e| e.turn == 1).unwrap();
        assert_eq!(t1.coverage, Coverage::None, "{name}");
        assert_eq!(t1.can_restore_code, Some(false), "{name}");
        assert_eq!(store.next_turn(), 2, "{name}");
    }
}

#[test]
fn corrupt_v3_meta_is_listed_from_its_marker() {
    let s = Scratch::new().unwrap();
    let marker = br#"{"schemaVersion":2,"turn":1,"time":"2026-01-01T00:00:00Z","prompt":"kept by marker","files":[],"coverage":"none","expiredFilePayload":true}"#;
    for meta in [
        &b"[1,2"[..],
        b"",
        br#"{"schemaVersion":3,"turn":1,"files":"nope"}"#,
    ] {
        sidecar_with(&s, &[("turn-1.json", marker), ("turns/1/meta.json", meta)]);
        let store = open(&s);
        assert_named(&store, "turns/1/meta.json", 1);
        let t1 = store.list().into_iter().find(|e| e.turn == 1).unwrap();
        assert_eq!(t1.prompt, "kept by marker");
        assert_eq!(t1.coverage, Coverage::None);
        assert!(t1.gaps[0]
            .detail
            .as_deref()
            .unwrap()
            .contains("turns/1/meta.json"));
    }
}

#[test]
fn a_huge_record_is_refused_before_it_is_read() {
    let s = Scratch::new().unwrap();
    sidecar_with(&s, &[]);
    let huge = fs::File::create(s.sidecar.join("turn-1.json")).unwrap();
    // Sparse: 17 MiB long, no data written, so reading it would be the only way to notice it is junk.
    huge.set_len(17 * 1024 * 1024).unwrap();
    let store = open(&s);
    let msg = assert_named(&store, "turn-1.json", 1);
    assert!(msg.contains("16 MiB"), "{msg}");
}

#[test]
fn a_directory_where_a_file_should_be() {
    let s = Scratch::new().unwrap();
    sidecar_with(&s, &[("turn-1.json", b"{}")]);
    fs::remove_file(s.sidecar.join("turn-1.json")).unwrap();
    fs::create_dir_all(s.sidecar.join("turn-1.json")).unwrap();
    fs::create_dir_all(s.sidecar.join("turn-2.json")).unwrap();
    fs::create_dir_all(s.sidecar.join("turns/2/meta.json")).unwrap();
    fs::create_dir_all(s.sidecar.join("state.json")).unwrap();
    let store = open(&s);
    assert_named(&store, "turn-1.json", 1);
    assert_named(&store, "turns/2/meta.json", 2);
    let state = store
        .fsck()
        .problems
        .into_iter()
        .find(|p| p.path == "state.json")
        .unwrap();
    assert_eq!(state.severity, Severity::Error);
    assert_eq!(store.next_turn(), 3);
}

#[test]
fn a_record_whose_turn_disagrees_with_its_name() {
    let s = Scratch::new().unwrap();
    sidecar_with(
        &s,
        &[("turn-1.json", br#"{"schemaVersion":2,"turn":9,"files":[]}"#)],
    );
    let store = open(&s);
    let msg = assert_named(&store, "turn-1.json", 1);
    assert!(msg.contains("turn 9"), "{msg}");
}

#[test]
fn stored_paths_that_escape_are_kept_but_never_trusted() {
    let s = Scratch::new().unwrap();
    let rec = br#"{"turn":1,"time":"2026-01-01T00:00:00Z","prompt":"evil","files":[
        {"path":"../../etc/passwd","content":"x"},
        {"path":"/etc/shadow","content":"y"},
        {"path":"a\u0000b","content":"z"},
        {"path":"ok.txt","content":"fine"}]}"#;
    sidecar_with(&s, &[("turn-1.json", rec)]);
    let store = open(&s);
    let t = store.turn(1).unwrap();
    let safe: Vec<bool> = t.files.iter().map(|f| f.path.safe().is_some()).collect();
    assert_eq!(safe, [false, false, false, true]);
    let unsafe_problems: Vec<_> = store
        .fsck()
        .problems
        .into_iter()
        .filter(|p| p.problem.contains("path_unsafe"))
        .collect();
    assert_eq!(unsafe_problems.len(), 3);
    assert!(unsafe_problems
        .iter()
        .all(|p| p.path == "turn-1.json" && p.turn == Some(1)));
    assert!(unsafe_problems.iter().any(|p| p.file.as_deref() == Some("a\\0b")));
}

#[test]
fn a_corrupt_state_file_loses_proofs_but_not_turns_or_numbers() {
    let s = Scratch::new().unwrap();
    sidecar_with(&s, &[("state.json", b"{\"mutationSeq\": \"x\"")]);
    let mut store = open(&s);
    assert!(store.state().owned.is_empty());
    let p = store
        .fsck()
        .problems
        .into_iter()
        .find(|p| p.path == "state.json")
        .unwrap();
    assert_eq!(p.severity, Severity::Error);
    assert!(p.problem.contains("state.json"));
    assert_eq!(store.begin_turn(BeginTurn::default()).unwrap(), 1);
}

#[test]
fn non_numeric_and_foreign_names_are_ignored() {
    let s = Scratch::new().unwrap();
    sidecar_with(
        &s,
        &[
            ("turn-x.json", b"junk"),
            ("turn-.json", b"junk"),
            ("notes.txt", b"hi"),
            ("turns/abc/meta.json", b"junk"),
        ],
    );
    let store = open(&s);
    assert_eq!(store.list().len(), 1);
    assert!(store.fsck().ok, "{:#?}", store.fsck().problems);
}

#[test]
fn a_missing_sidecar_lists_as_empty_and_a_bare_open_of_nothing_is_an_error() {
    let s = Scratch::new().unwrap();
    assert!(open(&s).list().is_empty());
    let err = CheckpointStore::open_bare(Path::new("/nonexistent/sidecar")).unwrap_err();
    assert!(err.to_string().contains("/nonexistent/sidecar"), "{err}");
}

#[test]
fn the_largest_turn_number_is_a_problem_never_a_panic() {
    for max in [u64::MAX, u64::MAX - 1] {
        let record = GOOD.replace("\"turn\":0", &format!("\"turn\":{max}"));
        let name = format!("turn-{max}.json");
        let state = format!("{{\"prunedThrough\": {max}}}");
        for files in [
            vec![(name.as_str(), record.as_bytes())],
            vec![("state.json", state.as_bytes())],
        ] {
            let s = Scratch::new().unwrap();
            sidecar_with(&s, &files);
            let mut store = open(&s);
            let _ = store.list();
            let report = store.fsck();
            assert!(!report.ok, "{:#?}", report.problems);
            assert!(
                report
                    .problems
                    .iter()
                    .any(|p| p.severity == Severity::Error && p.problem.contains("no new turn can start")),
                "{:#?}",
                report.problems
            );
            let err = store.begin_turn(BeginTurn::default()).unwrap_err();
            assert!(err.to_string().contains("no new turn can start"), "{err}");
        }
    }
}
