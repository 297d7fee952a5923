//! Records written by the reference implementation (SPEC §3.3), in the shapes it writes them: Go's
//! `encoding/json`, compact, absolute paths, `encoding` as its enum number, `"files": null` for a
//! turn that touched nothing, `captureSource: "before_mutation"`, blobs beside lossy inline text,
//! legacy rename entries (`dest_path`), and transaction manifests. Written by hand from what its
//! checkpoint code and tests persist; none of its files is copied here.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use retrace_checkpoint::{
    blob_rel_path, BeforeImage, BeginTurn, Change, CheckpointError, CheckpointStore, CommitOptions,
    StoreOptions,
};
use retrace_fsutil::{sha256_bytes, Fs, RelPath};
use retrace_protocol::{ChangeKind, ConflictReason, Coverage, GapReason, OnConflict, Severity};
use retrace_testkit::Scratch;

fn opts() -> StoreOptions {
    StoreOptions {
        fs: Fs::without_sync(),
        clock: Arc::new(|| ::time::OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()),
        ..StoreOptions::default()
    }
}

fn rel(s: &str) -> RelPath {
    RelPath::from_stored(s.as_bytes()).unwrap()
}

/// The workspace root as the reference implementation spells paths: absolute.
fn root(s: &Scratch) -> PathBuf {
    fs::canonicalize(&s.workspace).unwrap()
}

fn abs(s: &Scratch, p: &str) -> String {
    root(s).join(p).to_string_lossy().into_owned()
}

/// Writes `text` at `rel` under `dir`, creating parents.
fn put(dir: &Path, rel: &str, text: impl AsRef<[u8]>) {
    let p = dir.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

/// Stores `bytes` as a legacy blob, named by their SHA-256 (`blobs/<h0h1>/<h2h3>/<hex>`).
fn put_blob(s: &Scratch, bytes: &[u8]) -> String {
    let h = sha256_bytes(bytes);
    put(&s.sidecar, &blob_rel_path(&h), bytes);
    h
}

fn bytes_of(img: BeforeImage) -> Option<Vec<u8>> {
    match img {
        BeforeImage::Absent => None,
        BeforeImage::Present { reader, .. } => Some(reader.read_all().unwrap()),
    }
}

fn read(s: &Scratch, p: &str) -> Option<Vec<u8>> {
    fs::read(s.workspace.join(p)).ok()
}

fn restore(store: &mut CheckpointStore, turn: u64, on_conflict: OnConflict) -> retrace_protocol::CodeOutcome {
    let plan = store.plan_restore(turn).unwrap();
    store
        .commit(
            &plan,
            CommitOptions {
                confirm: true,
                on_conflict,
            },
        )
        .unwrap()
}

const TIME: &str = "2026-03-02T18:04:05.123456789+08:00";

/// One v2 file entry as the reference implementation marshals a `FileSnap` (key order as its
/// struct; empty fields left out, `content` always written).
fn v2_entry(
    path: &str,
    content: Option<&str>,
    encoding: Option<i64>,
    sha256: &str,
    blob: Option<&str>,
) -> String {
    let content = content.map_or("null".to_string(), |c| serde_json::to_string(c).unwrap());
    let encoding = encoding.map_or(String::new(), |e| format!(r#","encoding":{e}"#));
    let blob = blob.map_or(String::new(), |b| format!(r#","blobRef":"{b}""#));
    format!(
        r#"{{"path":{},"content":{content}{encoding},"mode":420,"sha256":"{sha256}"{blob},"captureSource":"before_mutation"}}"#,
        serde_json::to_string(path).unwrap()
    )
}

fn v2_record(turn: u64, files: &[String]) -> String {
    format!(
        r#"{{"schemaVersion":2,"turn":{turn},"time":"{TIME}","prompt":"edit","msgIndex":{},"sessionId":"s-1","files":[{}],"coverage":"complete","lastMutationSeq":3}}"#,
        turn * 2,
        files.join(",")
    )
}

// ---------------------------------------------------------------------------------------------
// `encoding` as a number

#[test]
fn every_integer_encoding_loads_and_reads_back_byte_exact() {
    let s = Scratch::new().unwrap();
    // (name, encoding number, text as the reference decoded it, the file's bytes)
    let cases: Vec<(&str, i64, &str, Vec<u8>)> = vec![
        ("utf8.txt", 0, "plain\n", b"plain\n".to_vec()),
        ("bom.txt", 1, "bom\n", b"\xEF\xBB\xBFbom\n".to_vec()),
        ("le-bom.txt", 2, "hi\n", b"\xFF\xFEh\0i\0\n\0".to_vec()),
        ("be-bom.txt", 3, "hi\n", b"\xFE\xFF\0h\0i\0\n".to_vec()),
        ("gb.txt", 4, "你好\n", b"\xC4\xE3\xBA\xC3\n".to_vec()),
        ("le.txt", 6, "hi\n", b"h\0i\0\n\0".to_vec()),
        ("be.txt", 7, "hi\n", b"\0h\0i\0\n".to_vec()),
        ("astral.txt", 2, "😀", b"\xFF\xFE\x3D\xD8\x00\xDE".to_vec()),
    ];
    // No blob: the inline text alone must give the bytes back, checked against their SHA-256.
    let files: Vec<String> = cases
        .iter()
        .map(|(p, k, text, bytes)| v2_entry(&abs(&s, p), Some(text), Some(*k), &sha256_bytes(bytes), None))
        .collect();
    put(&s.sidecar, "turn-0.json", v2_record(0, &files));
    // v1 records of the same era carry the number too (no digest to check it against).
    put(
        &s.sidecar,
        "turn-1.json",
        format!(
            r#"{{"turn":1,"time":"{TIME}","prompt":"v1","msgIndex":2,"files":[{{"path":"{}","content":"你好\n","encoding":4}},{{"path":"{}","content":null}}]}}"#,
            abs(&s, "old-gb.txt"),
            abs(&s, "created.txt")
        ),
    );
    let store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    assert!(
        store
            .load_problems()
            .iter()
            .all(|p| p.severity != Severity::Error),
        "{:#?}",
        store.load_problems()
    );
    let listed = store.list();
    assert_eq!(listed.iter().map(|e| e.turn).collect::<Vec<_>>(), [0, 1]);
    assert!(listed.iter().all(|e| e.can_restore_code == Some(true)));
    assert_eq!(listed[0].paths.len(), cases.len());
    for (p, k, _, bytes) in &cases {
        let got = bytes_of(store.before_image(0, &rel(p)).unwrap()).unwrap();
        assert_eq!(&got, bytes, "{p} (encoding {k})");
    }
    assert_eq!(
        bytes_of(store.before_image(1, &rel("old-gb.txt")).unwrap()).unwrap(),
        b"\xC4\xE3\xBA\xC3\n"
    );
    assert_eq!(
        bytes_of(store.before_image(1, &rel("created.txt")).unwrap()),
        None
    );
    let report = store.fsck();
    assert!(report.ok, "{:#?}", report.problems);
}

#[test]
fn encoding_names_are_accepted_too() {
    let s = Scratch::new().unwrap();
    let gb = b"\xC4\xE3\xBA\xC3\n".to_vec();
    let le_bom = b"\xFF\xFEh\0i\0".to_vec();
    let le = b"h\0i\0".to_vec();
    let entry = |path: &str, name: &str, text: &str, bytes: &[u8]| {
        format!(
            r#"{{"path":"{path}","content":{},"encoding":"{name}","sha256":"{}"}}"#,
            serde_json::to_string(text).unwrap(),
            sha256_bytes(bytes)
        )
    };
    let files = [
        entry("gb.txt", "gb18030", "你好\n", &gb),
        entry("gbk.txt", "GBK", "你好\n", &gb),
        // The reference's own name for UTF-16LE with a BOM.
        entry("named-bom.txt", "UTF-16 LE", "hi", &le_bom),
        // `utf-16le` means "with a BOM" to the reference and "without" to WHATWG: the digest decides.
        entry("ambiguous-bom.txt", "utf-16le", "hi", &le_bom),
        entry("ambiguous.txt", "utf-16le", "hi", &le),
        entry("nobom.txt", "utf-16le-nobom", "hi", &le),
        entry("latin1.txt", "windows-1252", "café", b"caf\xE9"),
    ];
    put(
        &s.sidecar,
        "turn-0.json",
        format!(
            r#"{{"schemaVersion":2,"turn":0,"time":"{TIME}","prompt":"p","files":[{}]}}"#,
            files.join(",")
        ),
    );
    let store = CheckpointStore::open_bare(&s.sidecar).unwrap();
    for (p, want) in [
        ("gb.txt", &gb),
        ("gbk.txt", &gb),
        ("named-bom.txt", &le_bom),
        ("ambiguous-bom.txt", &le_bom),
        ("ambiguous.txt", &le),
        ("nobom.txt", &le),
    ] {
        assert_eq!(
            &bytes_of(store.before_image(0, &rel(p)).unwrap()).unwrap(),
            want,
            "{p}"
        );
    }
    assert_eq!(
        bytes_of(store.before_image(0, &rel("latin1.txt")).unwrap()).unwrap(),
        b"caf\xE9"
    );
    assert!(store.fsck().ok, "{:#?}", store.fsck().problems);
}

#[test]
fn lossy_and_unknown_encodings_have_no_inline_payload_but_the_record_loads() {
    let s = Scratch::new().unwrap();
    let raw = b"\xFFbin\xFE".to_vec();
    let files = [
        // 5: not UTF-8, not GB18030, decoded lossily; its text cannot give the bytes back.
        v2_entry(
            &abs(&s, "lossy.bin"),
            Some("\u{FFFD}bin\u{FFFD}"),
            Some(5),
            &sha256_bytes(&raw),
            None,
        ),
        v2_entry(
            &abs(&s, "future.txt"),
            Some("x"),
            Some(42),
            &sha256_bytes(b"x?"),
            None,
        ),
        r#"{"path":"odd.txt","content":"x","encoding":{"kind":"ebcdic"}}"#.to_string(),
    ];
    put(&s.sidecar, "turn-0.json", v2_record(0, &files));
    let store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    let e = &store.list()[0];
    assert!(
        !e.gaps.iter().any(|g| g.reason == GapReason::Unreadable),
        "{:?}",
        e.gaps
    );
    for p in ["lossy.bin", "future.txt", "odd.txt"] {
        let err = store.before_image(0, &rel(p)).unwrap_err();
        assert!(
            matches!(err, CheckpointError::MissingPayload { .. }),
            "{p}: {err}"
        );
    }
    let report = store.fsck();
    let errors: Vec<_> = report
        .problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .map(|p| (p.file.clone().unwrap_or_default(), p.problem.clone()))
        .collect();
    assert_eq!(errors.len(), 3, "{errors:#?}");
    assert!(errors
        .iter()
        .any(|(f, p)| f == "lossy.bin" && p.contains("lossily")));
    assert!(errors
        .iter()
        .any(|(f, p)| f == "future.txt" && p.contains("encoding 42")));
    // A restore never writes them.
    let plan = store.plan_restore(0).unwrap();
    assert!(plan
        .plan
        .files
        .iter()
        .all(|f| f.conflict.as_ref().map(|c| c.reason) == Some(ConflictReason::MissingPayload)));
}

// ---------------------------------------------------------------------------------------------
// Inline text beside a blob: the exact bytes win

#[test]
fn the_exact_blob_wins_over_lossy_inline_text_and_restores() {
    let s = Scratch::new().unwrap();
    // A file that is neither UTF-8 nor GB18030: the reference kept its bytes in a blob and a lossy
    // decoding inline (with encoding 5).
    let before = b"\x00\x01\xFFraw\x80\n".to_vec();
    let h = put_blob(&s, &before);
    let after = b"edited\n".to_vec();
    s.write("data.bin", &after).unwrap();
    let entry = format!(
        r#"{{"path":"{}","content":"\u0000\u0001\ufffdraw\ufffd\n","encoding":5,"mode":420,"sha256":"{h}","blobRef":"{h}","captureSource":"before_mutation","afterSha256":"{}","afterExisted":true}}"#,
        abs(&s, "data.bin"),
        sha256_bytes(&after)
    );
    put(&s.sidecar, "turn-3.json", v2_record(3, &[entry]));
    let mut store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    assert_eq!(
        bytes_of(store.before_image(3, &rel("data.bin")).unwrap()).unwrap(),
        before
    );
    assert!(store.fsck().ok, "{:#?}", store.fsck().problems);
    let plan = store.plan_restore(3).unwrap();
    assert!(plan.plan.conflicts.is_empty(), "{:#?}", plan.plan.conflicts);
    let out = restore(&mut store, 3, OnConflict::Refuse);
    assert_eq!(out.files_written, ["data.bin"]);
    assert_eq!(read(&s, "data.bin").unwrap(), before);
}

#[test]
fn a_gb18030_file_whose_inline_text_reencodes_exactly_needs_no_blob() {
    let s = Scratch::new().unwrap();
    let before = b"\xC4\xE3\xBA\xC3\n".to_vec();
    let h = sha256_bytes(&before);
    // The blob is named but gone (collected by some build): the inline text still gives the bytes.
    let entry = v2_entry(&abs(&s, "gb.txt"), Some("你好\n"), Some(4), &h, Some(&h));
    put(&s.sidecar, "turn-0.json", v2_record(0, &[entry]));
    let store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    assert_eq!(
        bytes_of(store.before_image(0, &rel("gb.txt")).unwrap()).unwrap(),
        before
    );
}

#[test]
fn lossy_inline_text_without_a_blob_is_never_restored_as_if_exact() {
    let s = Scratch::new().unwrap();
    let before = b"\xC4\xE3\xFFbroken".to_vec();
    s.write("x.txt", b"now").unwrap();
    // Encoding 4, but the text does not re-encode to the recorded bytes and no blob is named: there
    // are no exact bytes to restore.
    let entry = format!(
        r#"{{"path":"{}","content":"你\ufffdbroken","encoding":4,"mode":420,"sha256":"{}","captureSource":"previewer","afterSha256":"{}","afterExisted":true}}"#,
        abs(&s, "x.txt"),
        sha256_bytes(&before),
        sha256_bytes(b"now")
    );
    put(&s.sidecar, "turn-0.json", v2_record(0, &[entry]));
    let mut store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    // The stream of the re-encoded text fails its digest check instead of passing for the file.
    let BeforeImage::Present { reader, .. } = store.before_image(0, &rel("x.txt")).unwrap() else {
        panic!("the file existed")
    };
    assert_eq!(
        reader.read_all().unwrap_err().kind(),
        std::io::ErrorKind::InvalidData
    );
    let out = restore(&mut store, 0, OnConflict::Overwrite);
    assert_eq!(out.conflicts[0].reason, ConflictReason::MissingPayload);
    assert_eq!(read(&s, "x.txt").unwrap(), b"now");
}

// ---------------------------------------------------------------------------------------------
// Capture sources, v3 turns, `files: null`, `schemaVersion: 1`, expired records

/// A v3 turn as the reference implementation persists it: the payload-free v2 marker first, then
/// `turns/N/files/NNNN.before` (raw bytes) and `turns/N/meta.json` (absolute paths, `content: null`,
/// `captureSource: "before_mutation"`, no `size` or `seq`).
fn reference_v3_turn(s: &Scratch, turn: u64, files_json: &str, payloads: &[(usize, &[u8])]) {
    put(
        &s.sidecar,
        &format!("turn-{turn}.json"),
        format!(
            r#"{{"schemaVersion":2,"turn":{turn},"time":"{TIME}","prompt":"edit","msgIndex":{turn},"sessionId":"s-1","files":[],"coverage":"none","lastMutationSeq":1,"expiredFilePayload":true}}"#
        ),
    );
    for (i, bytes) in payloads {
        put(&s.sidecar, &format!("turns/{turn}/files/{i:04}.before"), bytes);
    }
    put(
        &s.sidecar,
        &format!("turns/{turn}/meta.json"),
        format!(
            r#"{{"schemaVersion":3,"turn":{turn},"time":"{TIME}","prompt":"edit","msgIndex":{turn},"sessionId":"s-1","files":{files_json},"coverage":"complete","lastMutationSeq":1,"recovery":{{"action":{{"id":"a"}},"transcriptDigest":"d"}}}}"#
        ),
    );
}

#[test]
fn unknown_capture_sources_count_as_gaps_and_are_kept_verbatim() {
    let s = Scratch::new().unwrap();
    let before = b"hello".to_vec();
    let after = b"hello, world".to_vec();
    s.write("a.txt", &after).unwrap();
    let files = format!(
        r#"[{{"path":"{}","content":null,"mode":420,"sha256":"{}","captureSource":"before_mutation","afterSha256":"{}","afterExisted":true}},{{"path":"{}","content":null,"captureSource":"legacy"}},{{"path":"{}","content":null,"captureSource":"previewer"}}]"#,
        abs(&s, "a.txt"),
        sha256_bytes(&before),
        sha256_bytes(&after),
        abs(&s, "b.txt"),
        abs(&s, "c.txt")
    );
    reference_v3_turn(&s, 1, &files, &[(0, &before)]);
    let mut store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    let e = &store.list()[0];
    assert_eq!(e.paths, ["a.txt", "b.txt", "c.txt"]);
    assert_eq!(e.coverage, Coverage::Partial);
    let gaps: Vec<_> = e.gaps.iter().map(|g| g.reason.as_str()).collect();
    assert_eq!(gaps, ["unknown_capture_source"]);
    let detail = e.gaps[0].detail.as_deref().unwrap();
    assert!(detail.contains("`before_mutation` on `a.txt`"), "{detail}");
    assert!(detail.contains("`legacy` on `b.txt`"), "{detail}");
    assert!(!detail.contains("c.txt"), "{detail}");
    let t = store.turn(1).unwrap();
    assert_eq!(t.files[0].capture_source.as_deref(), Some("before_mutation"));
    // Still restorable; the gap asks for confirmation.
    let plan = store.plan_restore(1).unwrap();
    assert!(plan.plan.requires_confirmation);
    assert!(plan.plan.conflicts.is_empty(), "{:#?}", plan.plan.conflicts);
    restore(&mut store, 1, OnConflict::Refuse);
    assert_eq!(read(&s, "a.txt").unwrap(), before);
}

#[test]
fn a_turn_that_touched_nothing_has_files_null_and_still_loads() {
    let s = Scratch::new().unwrap();
    // Go marshals a slice it never filled as `null`: the v3 record of a turn without captures, and
    // the v1/v2 records of such turns.
    reference_v3_turn(&s, 2, "null", &[]);
    put(
        &s.sidecar,
        "turn-0.json",
        format!(r#"{{"turn":0,"time":"{TIME}","prompt":"say hi","msgIndex":0,"files":null}}"#),
    );
    put(
        &s.sidecar,
        "turn-1.json",
        format!(
            r#"{{"schemaVersion":2,"turn":1,"time":"{TIME}","prompt":"ran a command","msgIndex":2,"files":null,"coverage":"none","coverageGaps":[{{"reason":"bash_side_effect","detail":"make","tool":"bash"}}]}}"#
        ),
    );
    let store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    assert!(
        store
            .load_problems()
            .iter()
            .all(|p| p.severity != Severity::Error),
        "{:#?}",
        store.load_problems()
    );
    let list = store.list();
    assert_eq!(
        list.iter()
            .map(|e| (e.turn, e.prompt.as_str(), e.file_count))
            .collect::<Vec<_>>(),
        [(0, "say hi", 0), (1, "ran a command", 0), (2, "edit", 0)]
    );
    assert_eq!(list[2].coverage, Coverage::None);
    assert_eq!(list[2].can_restore_code, Some(true));
    assert_eq!(list[1].gaps[0].reason, GapReason::BashSideEffect);
    assert_eq!(store.next_turn(), 3);
}

#[test]
fn schema_version_1_is_a_v1_record() {
    let s = Scratch::new().unwrap();
    // The reference marks v1 records it loads as version 1 and writes them back that way (undo of a
    // conversation rewind, expiry), with its own `legacy_unverified` gap.
    put(
        &s.sidecar,
        "turn-0.json",
        format!(
            r#"{{"schemaVersion":1,"turn":0,"time":"{TIME}","prompt":"old","msgIndex":0,"files":[{{"path":"{}","content":"v1 text","encoding":0}}],"coverage":"legacy","coverageGaps":[{{"reason":"legacy_unverified","detail":"v1 checkpoint cannot verify later manual edits"}}],"legacy":true}}"#,
            abs(&s, "a.txt")
        ),
    );
    put(
        &s.sidecar,
        "expired/turn-1.json",
        format!(
            r#"{{"schemaVersion":1,"turn":1,"time":"{TIME}","prompt":"older","msgIndex":2,"files":[{{"path":"{}","content":null,"encoding":4,"payloadExpired":true}}],"coverage":"partial","coverageGaps":[{{"reason":"legacy_unverified","detail":"v1 checkpoint cannot verify later manual edits"}},{{"reason":"expired_file_payload","detail":"file recovery payload expired"}}],"legacy":true,"expiredFilePayload":true}}"#,
            abs(&s, "gb.txt")
        ),
    );
    let store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    let list = store.list();
    assert_eq!(list[0].coverage, Coverage::Legacy);
    assert_eq!(list[0].gaps.len(), 1);
    assert_eq!(list[0].gaps[0].reason, GapReason::LegacyUnverified);
    assert_eq!(
        bytes_of(store.before_image(0, &rel("a.txt")).unwrap()).unwrap(),
        b"v1 text"
    );
    assert_eq!(list[1].coverage, Coverage::Legacy);
    let reasons: Vec<_> = list[1].gaps.iter().map(|g| g.reason.as_str()).collect();
    assert_eq!(reasons, ["legacy_unverified", "expired_payload"]);
    // Expired: known to have existed, bytes gone.
    assert!(matches!(
        store.before_image(1, &rel("gb.txt")).unwrap_err(),
        CheckpointError::MissingPayload { .. }
    ));
    let plan = store.plan_restore(0).unwrap();
    assert_eq!(
        plan.plan.conflicts[0].reason,
        ConflictReason::LegacyUnverified,
        "v1 entries have no ownership proof"
    );
}

#[test]
fn an_expired_v2_record_with_an_integer_encoding_loads() {
    let s = Scratch::new().unwrap();
    // What the reference's expiry leaves: `content` and `blobRef` dropped, `encoding` and `sha256`
    // kept, `payloadExpired` on every entry, the old gap name.
    put(
        &s.sidecar,
        "expired/turn-4.json",
        format!(
            r#"{{"schemaVersion":2,"turn":4,"time":"{TIME}","prompt":"gone","msgIndex":8,"files":[{{"path":"{}","content":null,"encoding":2,"mode":420,"sha256":"{}","captureSource":"before_mutation","payloadExpired":true}}],"coverage":"partial","coverageGaps":[{{"reason":"expired_file_payload","detail":"file recovery payload expired"}}],"expiredFilePayload":true}}"#,
            abs(&s, "w.txt"),
            sha256_bytes(b"\xFF\xFEx\0")
        ),
    );
    let store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    let e = &store.list()[0];
    assert_eq!((e.turn, e.coverage), (4, Coverage::Partial));
    let reasons: Vec<_> = e.gaps.iter().map(|g| g.reason.as_str()).collect();
    assert_eq!(reasons, ["expired_payload", "unknown_capture_source"]);
    assert!(store.fsck().ok, "{:#?}", store.fsck().problems);
}

#[test]
fn records_with_integer_encodings_are_rewritten_unchanged_by_expiry() {
    let s = Scratch::new().unwrap();
    let entry = v2_entry(
        &abs(&s, "gb.txt"),
        Some("你好\n"),
        Some(4),
        &sha256_bytes(b"\xC4\xE3\xBA\xC3\n"),
        None,
    );
    put(&s.sidecar, "turn-0.json", v2_record(0, &[entry]));
    let limits = retrace_checkpoint::Limits {
        max_turns: 1,
        ..retrace_checkpoint::Limits::default()
    };
    let mut store =
        CheckpointStore::open(&s.sidecar, &s.workspace, StoreOptions { limits, ..opts() }).unwrap();
    store
        .begin_turn(BeginTurn {
            prompt: "next".into(),
            ..BeginTurn::default()
        })
        .unwrap();
    drop(store);
    let expired: serde_json::Value =
        serde_json::from_slice(&fs::read(s.sidecar.join("expired/turn-0.json")).unwrap()).unwrap();
    assert_eq!(expired["files"][0]["payloadExpired"], true);
    assert!(expired["files"][0].get("encoding").is_none());
    let store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    assert!(store.fsck().ok, "{:#?}", store.fsck().problems);
}

// ---------------------------------------------------------------------------------------------
// Renames (the reference's rename tests)

/// A legacy rename record: the reference's `FileSnap{Path: src, DestPath: dst}` and the paired
/// `FileSnap{Path: dst}` (did not exist), persisted by its v1 writer.
fn legacy_rename(s: &Scratch, turn: u64, src: &str, dst: &str, paired: bool) {
    let pair = if paired {
        format!(r#",{{"path":"{}","content":null}}"#, abs(s, dst))
    } else {
        String::new()
    };
    put(
        &s.sidecar,
        &format!("turn-{turn}.json"),
        format!(
            r#"{{"turn":{turn},"time":"{TIME}","prompt":"legacy rename","msgIndex":0,"files":[{{"path":"{}","content":null,"dest_path":"{}"}}{pair}]}}"#,
            abs(s, src),
            abs(s, dst)
        ),
    );
}

#[test]
fn a_legacy_rename_never_deletes_the_only_copy() {
    let s = Scratch::new().unwrap();
    s.write("b.txt", b"only copy").unwrap();
    legacy_rename(&s, 1, "a.txt", "b.txt", true);
    let mut store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    let e = &store.list()[0];
    assert_eq!(e.paths, ["a.txt", "b.txt"]);
    let rename = e
        .gaps
        .iter()
        .find(|g| g.reason.as_str() == "legacy_rename")
        .unwrap();
    assert!(rename
        .detail
        .as_deref()
        .unwrap()
        .contains("`a.txt` was renamed to `b.txt`"));
    assert!(store
        .load_problems()
        .iter()
        .any(|p| p.severity == Severity::Warning && p.problem.contains("legacy rename")));
    // A single-file revert of the destination would delete the only copy without writing the
    // source: it leaves it.
    let plan = store.plan_file_revert(&s.workspace.join("b.txt")).unwrap();
    let _ = store.commit(
        &plan,
        CommitOptions {
            confirm: true,
            on_conflict: OnConflict::Overwrite,
        },
    );
    assert_eq!(read(&s, "b.txt").unwrap(), b"only copy");
    // Skipping the source (a conflict) keeps the destination too.
    let plan = store.plan_restore(1).unwrap();
    let out = store
        .commit(
            &plan,
            CommitOptions {
                confirm: true,
                on_conflict: OnConflict::Skip,
            },
        )
        .unwrap();
    assert!(out.files_deleted.is_empty(), "{out:?}");
    assert_eq!(read(&s, "b.txt").unwrap(), b"only copy");
}

#[test]
fn a_legacy_rename_whose_source_cannot_be_written_keeps_the_destination() {
    // The reference's TestRestoreLegacyRenameFailureKeepsOnlyCopy: when the source cannot be put
    // back, the destination (the only copy) stays.
    let s = Scratch::new().unwrap();
    s.write("b.txt", b"only copy").unwrap();
    fs::create_dir_all(s.workspace.join("a.txt/in-the-way")).unwrap();
    legacy_rename(&s, 1, "a.txt", "b.txt", true);
    let mut store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    let plan = store.plan_restore(1).unwrap();
    let _ = store.commit(
        &plan,
        CommitOptions {
            confirm: true,
            on_conflict: OnConflict::Overwrite,
        },
    );
    assert_eq!(read(&s, "b.txt").unwrap(), b"only copy");
    assert!(s.workspace.join("a.txt/in-the-way").is_dir());
}

#[test]
fn a_legacy_rename_whose_destination_is_gone_changes_nothing() {
    let s = Scratch::new().unwrap();
    legacy_rename(&s, 1, "a.txt", "b.txt", true);
    let mut store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    let plan = store.plan_restore(1).unwrap();
    let out = store
        .commit(
            &plan,
            CommitOptions {
                confirm: true,
                on_conflict: OnConflict::Overwrite,
            },
        )
        .unwrap();
    assert!(
        out.files_written.is_empty() && out.files_deleted.is_empty(),
        "{out:?}"
    );
    assert_eq!(read(&s, "a.txt"), None);
    assert_eq!(read(&s, "b.txt"), None);
}

#[test]
fn a_legacy_rename_is_reversed() {
    // The reference's TestRestoreLegacyRenameFallsBackAcrossFilesystems: the destination holds the
    // only copy; restoring the turn moves it back to the source.
    let s = Scratch::new().unwrap();
    s.write("b.txt", b"only copy").unwrap();
    legacy_rename(&s, 1, "a.txt", "b.txt", true);
    let mut store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    let out = restore(&mut store, 1, OnConflict::Overwrite);
    assert_eq!(read(&s, "a.txt").unwrap(), b"only copy");
    assert_eq!(read(&s, "b.txt"), None);
    assert_eq!(out.files_written, ["a.txt"]);
    assert_eq!(out.files_deleted, ["b.txt"]);
    // And the reversal is undoable like any restore.
    store.undo(out.transaction_id.as_deref().unwrap()).unwrap();
    assert_eq!(read(&s, "a.txt"), None);
    assert_eq!(read(&s, "b.txt").unwrap(), b"only copy");
}

#[test]
fn a_legacy_rename_without_its_paired_entry_is_reversed() {
    // Older rename records may name the destination only in `dest_path`.
    let s = Scratch::new().unwrap();
    s.write("sub/b.txt", b"moved").unwrap();
    legacy_rename(&s, 1, "a.txt", "sub/b.txt", false);
    let mut store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    restore(&mut store, 1, OnConflict::Overwrite);
    assert_eq!(read(&s, "a.txt").unwrap(), b"moved");
    assert_eq!(read(&s, "sub/b.txt"), None);
}

#[test]
fn a_rename_recorded_as_two_contents_restores_the_original() {
    // The reference's current rename snapshots (TestRestoreRenameUsesOriginalContentAfter…):
    // both paths' turn-start states, no `dest_path`. The destination was edited after the rename.
    let s = Scratch::new().unwrap();
    s.write("b.txt", b"modified after rename").unwrap();
    put(
        &s.sidecar,
        "turn-1.json",
        format!(
            r#"{{"turn":1,"time":"{TIME}","prompt":"rename and edit","msgIndex":0,"files":[{{"path":"{}","content":"original","encoding":0}},{{"path":"{}","content":null}}]}}"#,
            abs(&s, "a.txt"),
            abs(&s, "b.txt")
        ),
    );
    let mut store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    restore(&mut store, 1, OnConflict::Overwrite);
    assert_eq!(read(&s, "a.txt").unwrap(), b"original");
    assert_eq!(read(&s, "b.txt"), None);
}

#[test]
fn a_cross_turn_rename_chain_restores_the_first_path() {
    // TestRestoreCrossTurnRenameChain, as the reference records it: a→b in turn 1, b→c in turn 2.
    let s = Scratch::new().unwrap();
    s.write("c.txt", b"original").unwrap();
    for (turn, from, to) in [(1, "a.txt", "b.txt"), (2, "b.txt", "c.txt")] {
        put(
            &s.sidecar,
            &format!("turn-{turn}.json"),
            format!(
                r#"{{"turn":{turn},"time":"{TIME}","prompt":"rename","msgIndex":{turn},"files":[{{"path":"{}","content":"original","encoding":0}},{{"path":"{}","content":null}}]}}"#,
                abs(&s, from),
                abs(&s, to)
            ),
        );
    }
    let mut store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    restore(&mut store, 1, OnConflict::Overwrite);
    assert_eq!(read(&s, "a.txt").unwrap(), b"original");
    assert_eq!(read(&s, "b.txt"), None);
    assert_eq!(read(&s, "c.txt"), None);
}

// ---------------------------------------------------------------------------------------------
// An unreadable transaction manifest

/// Every write to the session must fail, naming the manifest: opening for writing, or else each
/// write entry point.
#[test]
fn an_unreadable_transaction_manifest_blocks_writes_and_names_the_file() {
    let s = Scratch::new().unwrap();
    s.write("a.txt", b"v0").unwrap();
    {
        let mut store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
        store.begin_turn(BeginTurn::default()).unwrap();
        store
            .capture_before(&[Change::new("a.txt", ChangeKind::Modify)], Some("write_file"))
            .unwrap();
        s.write("a.txt", b"v1").unwrap();
        store.capture_after(&[PathBuf::from("a.txt")]).unwrap();
        store.finish_turn().unwrap();
    }
    let name = "transactions/00000009-0badf00d.json";
    // A manifest cut short by a crash of another writer (or a disk error): its transaction may be
    // in flight, and its forward images are the only copies of what it replaced.
    put(
        &s.sidecar,
        name,
        r#"{"id":"00000009-0badf00d","kind":"restore","state":"commit"#,
    );
    let names_it = |e: &CheckpointError| e.to_string().contains(name);
    match CheckpointStore::open(&s.sidecar, &s.workspace, opts()) {
        Err(e) => assert!(names_it(&e), "{e}"),
        Ok(mut store) => {
            let e = store.begin_turn(BeginTurn::default()).unwrap_err();
            assert!(names_it(&e), "begin_turn: {e}");
            let plan = store.plan_restore(0);
            if let Ok(plan) = plan {
                let e = store
                    .commit(
                        &plan,
                        CommitOptions {
                            confirm: true,
                            on_conflict: OnConflict::Overwrite,
                        },
                    )
                    .unwrap_err();
                assert!(names_it(&e), "commit: {e}");
            }
            assert_eq!(read(&s, "a.txt").unwrap(), b"v1");
        }
    }
    // Reading still works, and says what is wrong.
    let store = CheckpointStore::open_read_only(&s.sidecar, &s.workspace).unwrap();
    assert_eq!(store.list().len(), 1);
    assert!(store
        .fsck()
        .problems
        .iter()
        .any(|p| p.path == name && p.severity == Severity::Error));
}

/// A transaction manifest as the reference implementation writes it (`transactions/tx-<ns>-<hex>.json`):
/// flat restore/forward fields per target, `createdAt`/`updatedAt`, no `seq` or `time`. It is not
/// a Retrace manifest, and Retrace cannot roll one back (its temp and backup names differ).
fn reference_manifest(s: &Scratch, id: &str, state: &str) -> String {
    let forward = put_blob(s, b"v1");
    let body = format!(
        r#"{{"schemaVersion":2,"id":"{id}","workspaceRoot":"{root}","state":"{state}","kind":"rewind","turn":0,"scope":0,"createdAt":"{TIME}","updatedAt":"{TIME}","sessionRevision":1,"targets":[{{"path":"a.txt","absPath":"{a}","restoreExisted":true,"restoreMode":420,"restoreSha":"{r}","forwardExisted":true,"forwardMode":420,"forwardSha":"{forward}","forwardBlob":"{forward}","publishTmp":"{root}/.a.txt.reasonix-{id}-0.tmp","backupPath":"{root}/.a.txt.reasonix-{id}-0.bak","published":true,"action":"write"}}],"hasBoundary":false}}"#,
        root = root(s).display(),
        a = abs(s, "a.txt"),
        r = sha256_bytes(b"v0"),
    );
    let name = format!("transactions/{id}.json");
    put(&s.sidecar, &name, body);
    name
}

#[test]
fn a_finished_reference_transaction_manifest_neither_blocks_writes_nor_fails_fsck() {
    let s = Scratch::new().unwrap();
    s.write("a.txt", b"v0").unwrap();
    let name = reference_manifest(&s, "tx-1772445845123456789-1a2b3c4d", "committed");
    let mut store = CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap();
    store.begin_turn(BeginTurn::default()).unwrap();
    let report = store.fsck();
    assert!(report.ok, "{:#?}", report.problems);
    assert!(report
        .problems
        .iter()
        .all(|p| p.path != name || p.severity == Severity::Info));
}

#[test]
fn an_unfinished_reference_transaction_blocks_writes_and_names_the_file() {
    let s = Scratch::new().unwrap();
    s.write("a.txt", b"v0").unwrap();
    let name = reference_manifest(&s, "tx-1772445845123456789-5e6f7a8b", "committing");
    match CheckpointStore::open(&s.sidecar, &s.workspace, opts()) {
        Err(e) => assert!(e.to_string().contains(&name), "{e}"),
        Ok(mut store) => {
            let e = store.begin_turn(BeginTurn::default()).unwrap_err();
            assert!(e.to_string().contains(&name), "begin_turn: {e}");
        }
    }
    assert_eq!(read(&s, "a.txt").unwrap(), b"v0");
}

#[test]
fn an_unreadable_transaction_manifest_is_reported_by_fsck_naming_the_file() {
    let s = Scratch::new().unwrap();
    put(&s.sidecar, "transactions/00000002-deadbeef.json", "{ not json");
    let store = CheckpointStore::open_bare(&s.sidecar).unwrap();
    let report = store.fsck();
    assert!(!report.ok);
    assert!(report
        .problems
        .iter()
        .any(|p| p.path == "transactions/00000002-deadbeef.json" && p.severity == Severity::Error));
}
