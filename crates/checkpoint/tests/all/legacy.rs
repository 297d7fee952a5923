//! Reading older sidecars (SPEC §3.3): the shared fixtures, arbitration, tombstones, legacy payloads.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use retrace_checkpoint::{BeforeImage, BeginTurn, CheckpointStore, Limits, StoreOptions};
use retrace_fsutil::{sha256_bytes, Fs, RelPath};
use retrace_protocol::{Coverage, GapReason, Severity};
use retrace_testkit::{copy_dir, fixture, Scratch};
use serde_json::Value;

fn rel(s: &str) -> RelPath {
    RelPath::from_stored(s.as_bytes()).unwrap()
}

fn bytes_of(img: BeforeImage) -> Option<Vec<u8>> {
    match img {
        BeforeImage::Absent => None,
        BeforeImage::Present { reader, .. } => Some(reader.read_all().unwrap()),
    }
}

fn opts() -> StoreOptions {
    StoreOptions {
        fs: Fs::without_sync(),
        clock: Arc::new(|| ::time::OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()),
        ..StoreOptions::default()
    }
}

#[test]
fn fixture_listing_matches_expected() {
    let store = CheckpointStore::open_bare(&fixture("legacy-sidecar/sidecar")).unwrap();
    let expected: Value =
        serde_json::from_slice(&fs::read(fixture("legacy-sidecar/expected.json")).unwrap()).unwrap();
    assert_eq!(store.next_turn(), expected["next_turn"].as_u64().unwrap());
    let list = store.list();
    let want = expected["checkpoints"].as_array().unwrap();
    assert_eq!(list.len(), want.len());
    for (got, want) in list.iter().zip(want) {
        assert_eq!(got.turn, want["turn"].as_u64().unwrap());
        assert_eq!(got.prompt, want["prompt"].as_str().unwrap());
        let paths: Vec<&str> = want["paths"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        assert_eq!(got.paths, paths, "turn {}", got.turn);
        assert_eq!(
            serde_json::to_value(got.coverage).unwrap(),
            want["coverage"],
            "turn {}",
            got.turn
        );
        let gaps: Vec<&str> = got.gaps.iter().map(|g| g.reason.as_str()).collect();
        let want_gaps: Vec<&str> = want["gaps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        assert_eq!(gaps, want_gaps, "turn {}", got.turn);
        assert_eq!(got.file_count, got.paths.len());
    }
}

#[test]
fn fixture_payloads_read_back_byte_exact() {
    let store = CheckpointStore::open_bare(&fixture("legacy-sidecar/sidecar")).unwrap();
    // v1: content null = did not exist; inline text.
    assert_eq!(bytes_of(store.before_image(0, &rel("hello.txt")).unwrap()), None);
    assert_eq!(
        bytes_of(store.before_image(0, &rel("README.md")).unwrap()).unwrap(),
        b"# Demo\n"
    );
    // v2 inline with CRLF, verified against its sha256.
    let readme = bytes_of(store.before_image(1, &rel("README.md")).unwrap()).unwrap();
    assert_eq!(readme, b"# Demo\nsecond line\r\n");
    // v2 blob, verified on read.
    let logo = bytes_of(store.before_image(2, &rel("assets/logo.bin")).unwrap()).unwrap();
    assert_eq!(
        sha256_bytes(&logo),
        "0d42a8b2489dc6e5632cec0b1f06b4f41b61742536d2c3c361edb990e3b945cd"
    );
    // v2 gb18030 text re-encoded byte-exactly.
    let notes = bytes_of(store.before_image(2, &rel("docs/说明.txt")).unwrap()).unwrap();
    assert_eq!(
        sha256_bytes(&notes),
        "89470bf62516a8c8251c1ed6d06006ff49460da51e50664b5c8e131d296acd69"
    );
    assert_ne!(notes, "你好，世界\n第二行\n".as_bytes());
    // expired payload: the image is known to have existed, but its bytes are gone.
    assert!(store.before_image(3, &rel("old.txt")).is_err());
    // v3 record beats its own marker on a tie.
    let main = bytes_of(store.before_image(4, &rel("src/main.rs")).unwrap()).unwrap();
    assert_eq!(main, b"fn main() {}\n");
    // the newer full v2 record at turn-6.json beats the older v3 record.
    let t6 = store.turn(6).unwrap();
    assert_eq!(t6.prompt, "tune the config");
    assert_eq!(
        bytes_of(store.before_image(6, &rel("collide.txt")).unwrap()).unwrap(),
        b"key = 1\n"
    );
    // the tombstone is not listed.
    assert!(store.turn(5).is_none());
}

#[test]
fn fixture_fsck_good_is_ok_with_info_only() {
    let store = CheckpointStore::open_bare(&fixture("legacy-sidecar/sidecar")).unwrap();
    let report = store.fsck();
    assert!(report.ok, "{:#?}", report.problems);
    assert!(report
        .problems
        .iter()
        .any(|p| p.path == "turns/5" && p.severity == Severity::Info));
    assert!(report
        .problems
        .iter()
        .any(|p| p.path == "turns/6/meta.json" && p.severity == Severity::Info));
}

#[test]
fn fixture_fsck_corrupt_names_every_broken_file() {
    let store = CheckpointStore::open_bare(&fixture("legacy-sidecar/corrupt-sidecar")).unwrap();
    let report = store.fsck();
    assert!(!report.ok);
    let errors: Vec<_> = report
        .problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .collect();
    let blob = errors
        .iter()
        .find(|p| p.path.starts_with("blobs/c8/d6/"))
        .unwrap();
    assert_eq!((blob.turn, blob.file.as_deref()), (Some(0), Some("x.bin")));
    let payload = errors
        .iter()
        .find(|p| p.path == "turns/1/files/0000.before")
        .unwrap();
    assert_eq!((payload.turn, payload.file.as_deref()), (Some(1), Some("y.txt")));
    let meta = errors.iter().find(|p| p.path == "turns/2/meta.json").unwrap();
    assert_eq!(meta.turn, Some(2));
    // Reading a corrupt payload fails at the end of the stream instead of returning wrong bytes.
    let BeforeImage::Present { reader, .. } = store.before_image(1, &rel("y.txt")).unwrap() else {
        panic!()
    };
    let err = reader.read_all().unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    let BeforeImage::Present { reader, .. } = store.before_image(0, &rel("x.bin")).unwrap() else {
        panic!()
    };
    assert!(reader.read_all().is_err());
}

#[test]
fn corrupt_sidecar_still_lists_good_turns_and_the_unreadable_one() {
    let store = CheckpointStore::open_bare(&fixture("legacy-sidecar/corrupt-sidecar")).unwrap();
    let list = store.list();
    assert_eq!(list.iter().map(|e| e.turn).collect::<Vec<_>>(), vec![0, 1, 2]);
    let t2 = &list[2];
    assert_eq!(t2.prompt, "broken meta");
    assert_eq!(t2.coverage, Coverage::None);
    assert_eq!(t2.gaps.len(), 1);
    assert_eq!(t2.gaps[0].reason, GapReason::Unreadable);
    assert!(t2.gaps[0]
        .detail
        .as_deref()
        .unwrap()
        .contains("turns/2/meta.json"));
    assert_eq!(t2.can_restore_code, Some(false));
    assert!(t2.disabled_reason.is_some());
    assert_eq!(list[1].can_restore_code, Some(true));
}

#[test]
fn tombstones_stay_dead_and_numbers_are_never_reused() {
    let s = Scratch::new().unwrap();
    copy_dir(&fixture("legacy-sidecar/sidecar"), &s.sidecar).unwrap();
    let mut store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    let n = store
        .begin_turn(BeginTurn {
            prompt: "next".into(),
            ..BeginTurn::default()
        })
        .unwrap();
    assert_eq!(n, 7);
    drop(store);
    let store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    assert!(store.turn(5).is_none());
    assert_eq!(store.turn(7).unwrap().prompt, "next");
    assert_eq!(store.next_turn(), 8);
}

#[test]
fn a_tombstone_is_removed_if_its_number_is_written_again() {
    let s = Scratch::new().unwrap();
    fs::create_dir_all(s.sidecar.join("turns/0/files")).unwrap();
    fs::write(
        s.sidecar.join("turns/0/meta.json"),
        r#"{"schemaVersion":3,"turn":0,"prompt":"ghost","files":[]}"#,
    )
    .unwrap();
    let mut store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    assert!(store.turn(0).is_none());
    // The number is taken by the tombstone, so the next turn is 1, never 0.
    assert_eq!(store.begin_turn(BeginTurn::default()).unwrap(), 1);
}

#[test]
fn the_session_log_can_push_the_next_number_further() {
    let s = Scratch::new().unwrap();
    let mut store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    let n = store
        .begin_turn(BeginTurn {
            log_max_turn: Some(41),
            ..BeginTurn::default()
        })
        .unwrap();
    assert_eq!(n, 42);
}

fn write_json(path: &Path, v: &Value) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, serde_json::to_vec_pretty(v).unwrap()).unwrap();
}

#[test]
fn the_newer_record_wins_a_collision_and_ties_follow_the_rules() {
    let s = Scratch::new().unwrap();
    let d = &s.sidecar;
    // turn 0: expired record newer than turn-0.json → expired wins.
    write_json(
        &d.join("turn-0.json"),
        &serde_json::json!({"schemaVersion":2,"turn":0,"time":"2026-01-01T00:00:00Z","prompt":"old top","files":[{"path":"a","content":"x"}]}),
    );
    write_json(
        &d.join("expired/turn-0.json"),
        &serde_json::json!({"schemaVersion":2,"turn":0,"time":"2026-01-02T00:00:00Z","prompt":"newer expired","expiredFilePayload":true,"files":[{"path":"a","sha256":sha256_bytes(b"x"),"payloadExpired":true}]}),
    );
    // turn 1: tie between turn-1.json and expired → turn-1.json.
    write_json(
        &d.join("turn-1.json"),
        &serde_json::json!({"schemaVersion":2,"turn":1,"time":"2026-01-01T00:00:00Z","prompt":"top wins tie","files":[]}),
    );
    write_json(
        &d.join("expired/turn-1.json"),
        &serde_json::json!({"schemaVersion":2,"turn":1,"time":"2026-01-01T00:00:00Z","prompt":"expired loses tie","files":[]}),
    );
    // turn 2: tie between a full v2 record and a v3 record → the v2 record (an older build wrote it last).
    write_json(
        &d.join("turn-2.json"),
        &serde_json::json!({"schemaVersion":2,"turn":2,"time":"2026-01-01T00:00:00Z","prompt":"v2 wins tie","files":[{"path":"b","content":"y"}]}),
    );
    write_json(
        &d.join("turns/2/meta.json"),
        &serde_json::json!({"schemaVersion":3,"turn":2,"time":"2026-01-01T00:00:00Z","prompt":"v3 loses tie","files":[]}),
    );
    // turn 3: the v3 record is newer than a full v2 record → v3.
    write_json(
        &d.join("turn-3.json"),
        &serde_json::json!({"schemaVersion":2,"turn":3,"time":"2026-01-01T00:00:00Z","prompt":"v2 older","files":[]}),
    );
    write_json(
        &d.join("turns/3/meta.json"),
        &serde_json::json!({"schemaVersion":3,"turn":3,"time":"2026-01-01T00:00:01+00:00","prompt":"v3 newer","files":[]}),
    );
    let store = CheckpointStore::open(d, &s.workspace, opts()).unwrap();
    let prompts: Vec<_> = store.list().into_iter().map(|e| e.prompt).collect();
    assert_eq!(
        prompts,
        ["newer expired", "top wins tie", "v2 wins tie", "v3 newer"]
    );
    let superseded = store
        .fsck()
        .problems
        .iter()
        .filter(|p| p.problem.starts_with("superseded"))
        .count();
    assert_eq!(superseded, 4);
}

#[test]
fn older_gap_names_and_unknown_values_are_mapped_or_kept() {
    let s = Scratch::new().unwrap();
    write_json(
        &s.sidecar.join("turn-0.json"),
        &serde_json::json!({"schemaVersion":2,"turn":0,"time":"2026-01-01T00:00:00Z","prompt":"p","coverageGaps":[{"reason":"expired_file_payload"},{"reason":"cosmic_ray","detail":"?"}],"files":[{"path":"a","content":"x","captureSource":"telepathy"}]}),
    );
    let store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    let e = &store.list()[0];
    let reasons: Vec<_> = e.gaps.iter().map(|g| g.reason.as_str().to_string()).collect();
    // An unknown capture source is kept verbatim on its entry and counts as a gap (SPEC §3.3).
    assert_eq!(
        reasons,
        ["expired_payload", "cosmic_ray", "unknown_capture_source"]
    );
    let derived = &e.gaps[2];
    assert_eq!((derived.tool.as_deref(), derived.path.as_deref()), (None, None));
    assert!(derived.detail.as_deref().unwrap().contains("`telepathy` on `a`"));
    assert_eq!(e.coverage, Coverage::Partial);
    assert_eq!(
        store.turn(0).unwrap().files[0].capture_source.as_deref(),
        Some("telepathy")
    );
}

#[test]
fn the_fixture_gb18030_file_reads_back_from_the_integer_encoding_too() {
    // The reference implementation persists `encoding` as its enum number (4 is GB18030); the
    // fixture spells it as a name. Both must give the same bytes.
    let s = Scratch::new().unwrap();
    copy_dir(&fixture("legacy-sidecar/sidecar"), &s.sidecar).unwrap();
    let path = s.sidecar.join("turn-2.json");
    let mut record: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    assert_eq!(record["files"][1]["encoding"], "gb18030");
    record["files"][1]["encoding"] = Value::from(4);
    fs::write(&path, serde_json::to_vec(&record).unwrap()).unwrap();
    let store = CheckpointStore::open_bare(&s.sidecar).unwrap();
    let listed = store.list().into_iter().find(|e| e.turn == 2).unwrap();
    assert!(!listed.gaps.iter().any(|g| g.reason == GapReason::Unreadable));
    let notes = bytes_of(store.before_image(2, &rel("docs/说明.txt")).unwrap()).unwrap();
    assert_eq!(
        sha256_bytes(&notes),
        "89470bf62516a8c8251c1ed6d06006ff49460da51e50664b5c8e131d296acd69"
    );
    assert!(store.fsck().ok, "{:#?}", store.fsck().problems);
}

#[test]
fn absolute_paths_under_the_root_become_relative_others_are_unsafe() {
    let s = Scratch::new().unwrap();
    let root = fs::canonicalize(&s.workspace).unwrap();
    let inside = root.join("src/lib.rs").to_string_lossy().into_owned();
    write_json(
        &s.sidecar.join("turn-0.json"),
        &serde_json::json!({"turn":0,"time":"2026-01-01T00:00:00Z","prompt":"p","files":[{"path":inside,"content":"a"},{"path":"/etc/passwd","content":"b"},{"path":"../up","content":"c"}]}),
    );
    let store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    assert_eq!(store.list()[0].paths, ["src/lib.rs", "/etc/passwd", "../up"]);
    let t = store.turn(0).unwrap();
    assert!(t.files[0].path.safe().is_some());
    assert!(t.files[1].path.safe().is_none());
    assert!(t.files[2].path.safe().is_none());
    let warnings = store
        .fsck()
        .problems
        .iter()
        .filter(|p| p.problem.contains("path_unsafe"))
        .count();
    assert_eq!(warnings, 2);
}

#[test]
fn legacy_payloads_expire_then_blobs_are_collected() {
    let s = Scratch::new().unwrap();
    copy_dir(&fixture("legacy-sidecar/sidecar"), &s.sidecar).unwrap();
    let blob = s
        .sidecar
        .join("blobs/0d/42/0d42a8b2489dc6e5632cec0b1f06b4f41b61742536d2c3c361edb990e3b945cd");
    assert!(blob.exists());
    let limits = Limits {
        max_turns: 1,
        ..Limits::default()
    };
    let mut store =
        CheckpointStore::open(&s.sidecar, &s.workspace, StoreOptions { limits, ..opts() }).unwrap();
    store
        .begin_turn(BeginTurn {
            prompt: "now".into(),
            ..BeginTurn::default()
        })
        .unwrap();
    drop(store);
    let store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    let list = store.list();
    // Legacy turns are kept but expired; v3 turns are gone; the current turn stays.
    let turns: Vec<u64> = list.iter().map(|e| e.turn).collect();
    assert_eq!(turns, [0, 1, 2, 3, 6, 7]);
    for e in &list[..5] {
        assert!(
            e.gaps.iter().any(|g| g.reason == GapReason::ExpiredPayload),
            "turn {}",
            e.turn
        );
        assert_eq!(e.bytes, 0);
        // Turn 4 was pruned, so a restore to any earlier turn is no longer offered.
        assert_eq!(e.can_restore_code, Some(e.turn > 4), "turn {}", e.turn);
    }
    assert!(s.sidecar.join("expired/turn-2.json").exists());
    assert!(!s.sidecar.join("turn-2.json").exists());
    assert!(!s.sidecar.join("turns/4").exists());
    assert!(
        !blob.exists(),
        "the blob only the expired record referenced is collected"
    );
    assert!(store.fsck().ok, "{:#?}", store.fsck().problems);
    // The v1 turn keeps its existence facts: README.md existed, hello.txt did not.
    let t0 = store.turn(0).unwrap();
    assert!(matches!(
        t0.files[0].before,
        retrace_checkpoint::model::Before::Absent
    ));
    assert!(!matches!(
        t0.files[1].before,
        retrace_checkpoint::model::Before::Absent
    ));
}

/// The reference's own case: a record it wrote stores the prompt as it composed it (injected
/// blocks, a plan-mode marker, then the input); the list shows the input alone. A prompt Retrace
/// wrote (it records the head) is listed verbatim, whatever it looks like.
#[test]
fn composed_prefixes_of_legacy_prompts_are_not_listed() {
    let s = Scratch::new().unwrap();
    let d = &s.sidecar;
    let composed = "<memory-update>\nA new fact\n</memory-update>\n\n<reasoning-language>\n必须使用简体中文书写全部可见思考/推理文本\n</reasoning-language>\n\n[Plan mode — read-only. Explore and propose (read_file, ls) [x].]\n\n真实的用户输入";
    write_json(
        &d.join("turn-0.json"),
        &serde_json::json!({"turn":0,"time":"2026-01-01T00:00:00Z","prompt":"<reasoning-language>zh</reasoning-language>\n\nfix the bug","msgIndex":0,"files":[]}),
    );
    write_json(
        &d.join("turn-1.json"),
        &serde_json::json!({"schemaVersion":2,"turn":1,"time":"2026-01-01T00:00:01Z","prompt":composed,"msgIndex":2,"files":[]}),
    );
    write_json(
        &d.join("turns/2/meta.json"),
        &serde_json::json!({"schemaVersion":3,"turn":2,"time":"2026-01-01T00:00:02Z","prompt":composed,"msgIndex":4,"files":[]}),
    );
    // A v3 turn lives while its compatibility marker does.
    for (n, prompt) in [
        (2, composed),
        (4, "<memory-update>typed by the user</memory-update> as is"),
    ] {
        write_json(
            &d.join(format!("turn-{n}.json")),
            &serde_json::json!({"schemaVersion":2,"turn":n,"time":format!("2026-01-01T00:00:0{n}Z"),"prompt":prompt,"msgIndex":n * 2,"coverage":"none","files":[],"expiredFilePayload":true}),
        );
    }
    write_json(
        &d.join("turn-3.json"),
        &serde_json::json!({"schemaVersion":2,"turn":3,"time":"2026-01-01T00:00:03Z","prompt":"intro <memory-update>x</memory-update>\nreal","msgIndex":6,"files":[]}),
    );
    write_json(
        &d.join("turns/4/meta.json"),
        &serde_json::json!({"schemaVersion":3,"turn":4,"time":"2026-01-01T00:00:04Z","prompt":"<memory-update>typed by the user</memory-update> as is","head":"h-main","msgIndex":8,"files":[]}),
    );
    for store in [
        CheckpointStore::open(d, &s.workspace, opts()).unwrap(),
        CheckpointStore::open_bare(d).unwrap(),
    ] {
        let prompts: Vec<_> = store.list().into_iter().map(|e| e.prompt).collect();
        assert_eq!(
            prompts,
            [
                "fix the bug",
                "真实的用户输入",
                "真实的用户输入",
                "intro <memory-update>x</memory-update>\nreal",
                "<memory-update>typed by the user</memory-update> as is",
            ]
        );
    }
}
