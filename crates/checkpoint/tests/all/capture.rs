//! The capture rules of SPEC §3–§4, one test per rule.

use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use retrace_checkpoint::model::{Before, Payload};
use retrace_checkpoint::{
    BeforeImage, BeginTurn, Change, CheckpointError, CheckpointStore, Limits, StoreOptions,
};
use retrace_fsutil::{sha256_bytes, Fs, RelPath};
use retrace_protocol::{ChangeKind, Coverage, Gap, GapReason};
use retrace_testkit::Scratch;

fn opts() -> StoreOptions {
    StoreOptions {
        session_id: Some("test-session".into()),
        fs: Fs::without_sync(),
        clock: Arc::new(|| time::OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()),
        ..StoreOptions::default()
    }
}

fn open(s: &Scratch) -> CheckpointStore {
    CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap()
}

fn begin(store: &mut CheckpointStore, prompt: &str) -> u64 {
    store
        .begin_turn(BeginTurn {
            prompt: prompt.into(),
            ..BeginTurn::default()
        })
        .unwrap()
}

fn rel(s: &str) -> RelPath {
    RelPath::from_stored(s.as_bytes()).unwrap()
}

fn modify(p: &str) -> Change {
    Change::new(p, ChangeKind::Modify)
}

fn image(store: &CheckpointStore, turn: u64, path: &RelPath) -> Option<(Vec<u8>, Option<u32>)> {
    match store.before_image(turn, path).unwrap() {
        BeforeImage::Absent => None,
        BeforeImage::Present { reader, mode, .. } => Some((reader.read_all().unwrap(), mode)),
    }
}

/// One edit through the seam, as the agent does it.
fn edit(store: &mut CheckpointStore, s: &Scratch, path: &str, bytes: Option<&[u8]>) {
    store.capture_before(&[modify(path)], Some("write_file")).unwrap();
    match bytes {
        Some(b) => s.write(path, b).unwrap(),
        None => fs::remove_file(s.workspace.join(path)).unwrap(),
    }
    store.capture_after(&[PathBuf::from(path)]).unwrap();
}

#[test]
fn the_sidecar_is_created_lazily_with_private_modes() {
    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    assert!(!s.sidecar.exists(), "opening must not create the sidecar");
    assert!(store.list().is_empty());
    begin(&mut store, "p");
    s.write("a.txt", b"x").unwrap();
    edit(&mut store, &s, "a.txt", Some(b"y"));
    fn check(dir: &Path) {
        for e in fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let mode = e.metadata().unwrap().permissions().mode() & 0o777;
            if e.file_type().unwrap().is_dir() {
                assert_eq!(mode, 0o700, "{}", e.path().display());
                check(&e.path());
            } else {
                assert_eq!(mode, 0o600, "{}", e.path().display());
            }
        }
    }
    assert_eq!(
        fs::metadata(&s.sidecar).unwrap().permissions().mode() & 0o777,
        0o700
    );
    check(&s.sidecar);
}

#[test]
fn first_touch_wins_within_a_turn() {
    let s = Scratch::new().unwrap();
    s.write("a.txt", b"start").unwrap();
    let mut store = open(&s);
    let t = begin(&mut store, "p");
    edit(&mut store, &s, "a.txt", Some(b"one"));
    edit(&mut store, &s, "a.txt", Some(b"two"));
    assert_eq!(image(&store, t, &rel("a.txt")).unwrap().0, b"start");
    assert_eq!(store.list()[0].file_count, 1);
    // A new turn captures the state at its own start.
    let t2 = begin(&mut store, "q");
    edit(&mut store, &s, "a.txt", Some(b"three"));
    assert_eq!(image(&store, t2, &rel("a.txt")).unwrap().0, b"two");
}

#[test]
fn dot_slash_plain_and_absolute_are_one_path() {
    let s = Scratch::new().unwrap();
    s.write("a", b"orig").unwrap();
    let mut store = open(&s);
    let t = begin(&mut store, "p");
    let abs = fs::canonicalize(&s.workspace).unwrap().join("a");
    let r = store
        .capture_before(
            &[modify("./a"), modify("a"), Change::new(&abs, ChangeKind::Modify)],
            None,
        )
        .unwrap();
    assert_eq!(r.captured, vec![rel("a")]);
    assert_eq!(r.already.len(), 2);
    let r = store
        .capture_before(&[Change::new(&abs, ChangeKind::Modify)], None)
        .unwrap();
    assert!(r.captured.is_empty());
    assert_eq!(store.list()[0].paths, ["a"]);
    assert_eq!(image(&store, t, &rel("a")).unwrap().0, b"orig");
}

#[test]
fn contents_and_names_round_trip_byte_exactly() {
    let s = Scratch::new().unwrap();
    let cases: Vec<(PathBuf, Vec<u8>)> = vec![
        (PathBuf::from("bin.dat"), (0..=255u8).chain([0, 0, 255]).collect()),
        (PathBuf::from("crlf.txt"), b"one\r\ntwo\r\n\r\n".to_vec()),
        (PathBuf::from("bad-utf8.txt"), vec![b'a', 0xff, 0xfe, b'\n', 0xc3]),
        (PathBuf::from("empty"), Vec::new()),
        (
            PathBuf::from(OsStr::from_bytes(b"caf\xe9/n\xffme")),
            b"latin-1 dir".to_vec(),
        ),
        (PathBuf::from("說明/中文.txt"), "中文\n".as_bytes().to_vec()),
    ];
    for (p, b) in &cases {
        let abs = s.workspace.join(p);
        fs::create_dir_all(abs.parent().unwrap()).unwrap();
        fs::write(&abs, b).unwrap();
    }
    let mut store = open(&s);
    let t = begin(&mut store, "p");
    let changes: Vec<Change> = cases
        .iter()
        .map(|(p, _)| Change::new(p.clone(), ChangeKind::Modify))
        .collect();
    store.capture_before(&changes, None).unwrap();
    for (p, _) in &cases {
        fs::write(s.workspace.join(p), b"overwritten").unwrap();
    }
    store
        .capture_after(&cases.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>())
        .unwrap();
    drop(store);
    let store = open(&s);
    for (p, b) in &cases {
        let r = RelPath::normalize(Path::new("/"), p).unwrap();
        let (got, _) = image(&store, t, &r).unwrap();
        assert_eq!(&got, b, "{}", p.display());
        assert!(store.state().owned.contains_key(&r), "{}", p.display());
    }
    assert!(store.fsck().ok, "{:#?}", store.fsck().problems);
}

#[test]
fn create_modify_delete_and_move_are_captured() {
    let s = Scratch::new().unwrap();
    s.write("mod.txt", b"m0").unwrap();
    s.write("del.txt", b"d0").unwrap();
    s.write("src.txt", b"s0").unwrap();
    fs::set_permissions(s.workspace.join("del.txt"), fs::Permissions::from_mode(0o751)).unwrap();
    let mut store = open(&s);
    let t = begin(&mut store, "p");
    let changes = [
        Change::new("new.txt", ChangeKind::Create),
        Change::new("mod.txt", ChangeKind::Modify),
        Change::new("del.txt", ChangeKind::Delete),
        // move_file previews its source (delete) and its destination (create).
        Change::new("src.txt", ChangeKind::Delete),
        Change::new("dir/dst.txt", ChangeKind::Create),
    ];
    store.capture_before(&changes, Some("multi")).unwrap();
    s.write("new.txt", b"n1").unwrap();
    s.write("mod.txt", b"m1").unwrap();
    fs::remove_file(s.workspace.join("del.txt")).unwrap();
    fs::create_dir(s.workspace.join("dir")).unwrap();
    fs::rename(s.workspace.join("src.txt"), s.workspace.join("dir/dst.txt")).unwrap();
    let paths: Vec<PathBuf> = changes.iter().map(|c| c.path.clone()).collect();
    store.capture_after(&paths).unwrap();

    assert_eq!(image(&store, t, &rel("new.txt")), None);
    assert_eq!(image(&store, t, &rel("mod.txt")).unwrap().0, b"m0");
    assert_eq!(
        image(&store, t, &rel("del.txt")).unwrap(),
        (b"d0".to_vec(), Some(0o751))
    );
    assert_eq!(image(&store, t, &rel("src.txt")).unwrap().0, b"s0");
    assert_eq!(image(&store, t, &rel("dir/dst.txt")), None);
    let e = &store.list()[0];
    assert_eq!(
        e.paths,
        ["new.txt", "mod.txt", "del.txt", "src.txt", "dir/dst.txt"]
    );
    assert_eq!(e.coverage, Coverage::Complete);
    assert_eq!(e.bytes, 6);
    // After-images and ownership proofs.
    let owned = &store.state().owned;
    assert!(!owned[&rel("del.txt")].image.existed);
    assert!(!owned[&rel("src.txt")].image.existed);
    assert_eq!(
        owned[&rel("dir/dst.txt")].image.sha256.as_deref(),
        Some(sha256_bytes(b"s0").as_str())
    );
    let turn = store.turn(t).unwrap();
    let dst = &turn.files[4];
    assert!(dst.after.as_ref().unwrap().existed);
    assert!(turn.files.iter().all(|f| f.seq.is_some()));
}

#[test]
fn mutation_sequence_grows_and_survives_reopen() {
    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    begin(&mut store, "p");
    let s0 = store.mutation_seq();
    edit(&mut store, &s, "a", Some(b"1"));
    let s1 = store.mutation_seq();
    assert!(s1 >= s0 + 2, "a capture and an after-image each take a number");
    let owned_seq = store.state().owned[&rel("a")].seq;
    assert_eq!(owned_seq, s1);
    drop(store);
    let mut store = open(&s);
    assert_eq!(store.mutation_seq(), s1);
    begin(&mut store, "q");
    edit(&mut store, &s, "a", Some(b"2"));
    assert!(store.mutation_seq() > s1);
}

#[test]
fn symlinks_hard_links_oversized_and_unreadable_files_are_gaps() {
    let s = Scratch::new().unwrap();
    s.write("real/f.txt", b"target").unwrap();
    std::os::unix::fs::symlink("real", s.workspace.join("link")).unwrap();
    std::os::unix::fs::symlink("real/f.txt", s.workspace.join("flink")).unwrap();
    s.write("h1", b"shared").unwrap();
    fs::hard_link(s.workspace.join("h1"), s.workspace.join("h2")).unwrap();
    s.write("big.bin", &vec![7u8; 5000]).unwrap();
    let _sock = std::os::unix::net::UnixListener::bind(s.workspace.join("sock")).unwrap();
    let limits = Limits {
        max_file_bytes: 4096,
        ..Limits::default()
    };
    let mut store =
        CheckpointStore::open(&s.sidecar, &s.workspace, StoreOptions { limits, ..opts() }).unwrap();
    let t = begin(&mut store, "p");
    let changes = ["link/f.txt", "flink", "h1", "big.bin", "sock"].map(modify);
    let r = store.capture_before(&changes, Some("edit_file")).unwrap();
    let reasons: Vec<(&str, Option<&str>)> = r
        .gaps
        .iter()
        .map(|g| (g.reason.as_str(), g.path.as_deref()))
        .collect();
    assert_eq!(
        reasons,
        [
            ("symlink", Some("link/f.txt")),
            ("symlink", Some("flink")),
            ("hardlink", Some("h1")),
            ("oversized", Some("big.bin")),
            ("unreadable", Some("sock")),
        ]
    );
    assert!(r.gaps.iter().all(|g| g.tool.as_deref() == Some("edit_file")));
    let turn = store.turn(t).unwrap();
    // The unreadable socket has no entry; the oversized file is hashed but has no payload.
    assert_eq!(turn.files.len(), 4);
    let Before::Present {
        sha256,
        payload,
        size,
        ..
    } = &turn.files[3].before
    else {
        panic!()
    };
    assert_eq!(sha256.as_deref(), Some(sha256_bytes(&[7u8; 5000]).as_str()));
    assert_eq!(*payload, Payload::NotKept);
    assert_eq!(*size, Some(5000));
    assert!(matches!(
        store.before_image(t, &rel("big.bin")),
        Err(CheckpointError::MissingPayload { .. })
    ));
    // Gaps do not stop the symlinked and hard-linked files from being kept.
    assert_eq!(image(&store, t, &rel("link/f.txt")).unwrap().0, b"target");
    assert_eq!(image(&store, t, &rel("h1")).unwrap().0, b"shared");
    assert_eq!(store.list()[0].coverage, Coverage::Partial);
    // First touch also covers the unreadable path: no second gap, no entry.
    let r = store.capture_before(&[modify("sock")], None).unwrap();
    assert!(r.gaps.is_empty() && r.captured.is_empty());
    // And it all survives a reopen.
    drop(store);
    let store = open(&s);
    let t2 = store.turn(t).unwrap();
    assert_eq!(t2.gaps.len(), 5);
    assert_eq!(t2.files.len(), 4);
}

#[test]
fn a_directory_or_an_escape_is_refused_and_nothing_is_recorded() {
    let s = Scratch::new().unwrap();
    fs::create_dir(s.workspace.join("d")).unwrap();
    let mut store = open(&s);
    let t = begin(&mut store, "p");
    assert!(matches!(
        store.capture_before(&[modify("d")], None),
        Err(CheckpointError::NotAFile { .. })
    ));
    assert!(matches!(
        store.capture_before(&[modify("../x")], None),
        Err(CheckpointError::Path(_))
    ));
    assert!(matches!(
        store.capture_before(&[modify("/etc/passwd")], None),
        Err(CheckpointError::Path(_))
    ));
    assert!(store.turn(t).unwrap().files.is_empty());
}

#[test]
fn capturing_needs_an_open_turn() {
    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    assert!(matches!(
        store.capture_before(&[modify("a")], None),
        Err(CheckpointError::NoTurn)
    ));
    assert!(matches!(
        store.record_gap(Gap::new(GapReason::BashSideEffect)),
        Err(CheckpointError::NoTurn)
    ));
    begin(&mut store, "p");
    store.end_turn();
    assert!(matches!(
        store.capture_after(&[PathBuf::from("a")]),
        Err(CheckpointError::NoTurn)
    ));
}

#[test]
fn gaps_are_recorded_once_per_reason_and_path_and_the_shell_gap_names_every_command() {
    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    let t = begin(&mut store, "p");
    let bash = |cmd: &str| Gap {
        reason: GapReason::BashSideEffect,
        tool: Some("bash".into()),
        path: None,
        detail: Some(cmd.into()),
    };
    store.record_gap(bash("make")).unwrap();
    store.record_gap(bash("make again")).unwrap();
    store.record_gap(bash("make")).unwrap();
    store
        .record_gap(Gap {
            path: Some("x".into()),
            ..Gap::new(GapReason::ExternalWriter)
        })
        .unwrap();
    drop(store);
    let store = open(&s);
    let e = &store.list()[0];
    assert_eq!(e.turn, t);
    assert_eq!(e.gaps.len(), 2);
    // One shell gap per turn, naming every command that ran (each once).
    assert_eq!(e.gaps[0].detail.as_deref(), Some("make\nmake again"));
    assert_eq!(e.coverage, Coverage::Partial);
}

/// A shell gap recorded before a command and taken back after it: the journal says so, so a turn
/// read after a kill (never ended) has only the gaps not taken back.
#[test]
fn a_gap_taken_back_is_gone_after_a_kill_and_one_not_taken_back_stays() {
    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    let t = begin(&mut store, "p");
    let bash = |cmd: &str| Gap {
        reason: GapReason::BashSideEffect,
        tool: Some("bash".into()),
        path: None,
        detail: Some(cmd.into()),
    };
    store.record_gap(bash("first")).unwrap();
    store.record_gap(bash("killed")).unwrap();
    assert!(store.has_gap(&bash("first")));
    store.settle_gap(&bash("first")).unwrap();
    assert!(!store.has_gap(&bash("first")));
    assert!(store.has_gap(&bash("killed")));
    // the process dies: the turn never ends, its journal is all there is
    drop(store);
    let store = open(&s);
    let e = &store.list()[0];
    assert_eq!(e.turn, t);
    assert_eq!(e.gaps.len(), 1, "{:?}", e.gaps);
    assert_eq!(e.gaps[0].detail.as_deref(), Some("killed"));

    // a gap whose last line is taken back goes whole, and the turn is complete again
    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    begin(&mut store, "p");
    store.record_gap(bash("only")).unwrap();
    store.settle_gap(&bash("only")).unwrap();
    drop(store);
    let store = open(&s);
    assert!(store.list()[0].gaps.is_empty(), "{:?}", store.list()[0].gaps);
}

#[test]
fn a_turn_records_its_conversation_anchor() {
    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    let t = store
        .begin_turn(BeginTurn {
            prompt: "line one\nline two".into(),
            msg_index: 12,
            head: Some("head-1".into()),
            message_id: Some("msg-9".into()),
            log_max_turn: None,
        })
        .unwrap();
    drop(store);
    let store = open(&s);
    let e = &store.list()[0];
    assert_eq!(
        (e.turn, e.prompt.as_str(), e.msg_index),
        (t, "line one\nline two", Some(12))
    );
    assert_eq!(
        (e.head.as_deref(), e.message_id.as_deref()),
        (Some("head-1"), Some("msg-9"))
    );
    assert_eq!(e.time, "2027-01-15T08:00:00Z");
    assert_eq!(e.coverage, Coverage::None);
    assert_eq!(store.turn(t).unwrap().session_id.as_deref(), Some("test-session"));
    // The turn's start is the first frame of the log: its record as it began, no files.
    let start = &crate::log_support::frames_of(&s.sidecar, t, "turn")[0].1.header["record"];
    assert_eq!(start["schemaVersion"], 3);
    assert_eq!(start["files"], serde_json::json!([]));
    assert_eq!(start["prompt"], "line one\nline two");
    assert_eq!(start["messageId"], "msg-9");
}

#[test]
fn retention_drops_whole_oldest_turns_never_the_current_or_a_held_one() {
    let s = Scratch::new().unwrap();
    let limits = Limits {
        max_turns: 2,
        ..Limits::default()
    };
    let mut store =
        CheckpointStore::open(&s.sidecar, &s.workspace, StoreOptions { limits, ..opts() }).unwrap();
    let t0 = begin(&mut store, "t0");
    edit(&mut store, &s, "a", Some(b"0"));
    store.hold(t0);
    let t1 = begin(&mut store, "t1");
    edit(&mut store, &s, "a", Some(b"1"));
    let t2 = begin(&mut store, "t2");
    edit(&mut store, &s, "a", Some(b"2"));
    // t0 is held, so t1 goes although it is not the oldest.
    let turns: Vec<u64> = store.list().iter().map(|e| e.turn).collect();
    assert_eq!(turns, [t0, t2]);
    assert!(!s.sidecar.join(format!("turns/{t1}")).exists());
    assert!(!s.sidecar.join(format!("turn-{t1}.json")).exists());
    store.release(t0);
    let t3 = begin(&mut store, "t3");
    let turns: Vec<u64> = store.list().iter().map(|e| e.turn).collect();
    assert_eq!(turns, [t2, t3]);
    // A restore to t2 is still offered; numbers are never reused.
    assert_eq!(store.list()[0].can_restore_code, Some(true));
    drop(store);
    let store = open(&s);
    assert_eq!(store.next_turn(), t3 + 1);
    assert_eq!(store.state().pruned_through, Some(t1.max(t0)));
}

#[test]
fn the_byte_budget_prunes_but_keeps_the_current_turn_even_over_budget() {
    let s = Scratch::new().unwrap();
    s.write("big", &vec![1u8; 3000]).unwrap();
    let limits = Limits {
        max_bytes: 1000,
        ..Limits::default()
    };
    let mut store =
        CheckpointStore::open(&s.sidecar, &s.workspace, StoreOptions { limits, ..opts() }).unwrap();
    let t0 = begin(&mut store, "t0");
    edit(&mut store, &s, "big", Some(&[2u8; 3000]));
    assert_eq!(store.list().len(), 1, "the current turn stays over budget");
    let t1 = begin(&mut store, "t1");
    assert_eq!(store.list().iter().map(|e| e.turn).collect::<Vec<_>>(), [t1]);
    assert!(store.turn(t0).is_none());
}

/// Issue 13 item 13, with the log (issue 32): a turn's captures are appended to the log (a frame
/// each, nothing rewritten), read by every reader at once; a write cut short is ignored by readers
/// and cut off by the next writer; a turn a crash left without its end gets it when the store is
/// next opened for writing.
#[test]
fn captures_append_to_the_log_and_a_torn_tail_is_cut_off() {
    let s = Scratch::new().unwrap();
    for i in 0..5 {
        s.write(&format!("f{i}.txt"), b"o").unwrap();
    }
    let mut store = open(&s);
    let t = begin(&mut store, "many");
    for i in 0..5 {
        edit(
            &mut store,
            &s,
            &format!("f{i}.txt"),
            Some(format!("v{i}").as_bytes()),
        );
    }
    let seg = crate::log_support::segment(&s.sidecar);
    // Mid-turn: the log has the turn's start, the captures (each with its before-image as the
    // body) and the after-images of all but the last, which ride on the next append.
    let lines = crate::log_support::frames_of(&s.sidecar, t, "line");
    let entries: Vec<_> = lines
        .iter()
        .filter(|(_, f)| f.header["line"]["entry"].is_object())
        .collect();
    assert_eq!(entries.len(), 5);
    assert!(entries
        .iter()
        .all(|(_, f)| f.header["kept"] == true && f.body_len == 1));
    let afters = lines
        .iter()
        .filter(|(_, f)| {
            f.header["line"]["after"].is_object() && f.header["line"]["after"]["intended"].is_null()
        })
        .count();
    assert_eq!(afters, 4);
    // Another reader sees every capture now.
    let listed = CheckpointStore::open_bare(&s.sidecar).unwrap().list();
    assert_eq!(listed[0].file_count, 5);
    // A write cut short leaves half a frame: ignored by readers, cut off by the next writer.
    let whole = fs::metadata(&seg).unwrap().len();
    fs::OpenOptions::new()
        .append(true)
        .open(&seg)
        .unwrap()
        .write_all(b"@40 0 0000")
        .unwrap();
    std::mem::forget(store);
    assert_eq!(
        CheckpointStore::open_bare(&s.sidecar).unwrap().list()[0].file_count,
        5
    );
    let mut store = open(&s);
    assert_eq!(store.list()[0].file_count, 5);
    // The crashed turn was ended by recovery, after the cut.
    assert_eq!(crate::log_support::frames_of(&s.sidecar, t, "ended").len(), 1);
    assert!(fs::metadata(&seg).unwrap().len() > whole);
    let t2 = begin(&mut store, "next");
    edit(&mut store, &s, "g.txt", Some(b"g"));
    store.end_turn();
    let listed = CheckpointStore::open_bare(&s.sidecar).unwrap().list();
    assert_eq!((listed[0].file_count, listed[1].file_count), (5, 1));
    assert_eq!(crate::log_support::frames_of(&s.sidecar, t2, "ended").len(), 1);
    assert!(store.fsck().ok, "{:#?}", store.fsck().problems);
    assert!(
        !s.sidecar.join("turns").exists(),
        "no turn directory is made any more"
    );
}

/// Issue 13 item 14: an I/O error at any step of a capture (a full disk, EIO) leaves no payload
/// behind that nothing references, and a retry captures every path again.
#[test]
fn a_capture_that_fails_at_any_step_leaves_no_payload_and_can_be_retried() {
    use retrace_fsutil::FaultInjector;
    let changes: Vec<Change> = ["a.txt", "b.bin", "c/d.txt"]
        .iter()
        .map(|p| Change::new(*p, ChangeKind::Modify))
        .collect();
    // Opens a fresh store under `inj` and begins a turn; returns the steps that took.
    let setup = |inj: &Arc<FaultInjector>| {
        let s = Scratch::new().unwrap();
        s.write("a.txt", b"aaa").unwrap();
        s.write("b.bin", &vec![7u8; 300_000]).unwrap();
        s.write("c/d.txt", b"ddd").unwrap();
        let o = StoreOptions {
            fs: Fs::without_sync().with_faults(inj.clone()),
            ..opts()
        };
        let mut store = CheckpointStore::open(&s.sidecar, &s.workspace, o).unwrap();
        let n = store.begin_turn(BeginTurn::default()).unwrap();
        (s, store, n, inj.steps())
    };
    let (_, _, _, base) = setup(&FaultInjector::fail_once_at(0));
    let mut failures = 0;
    for k in base + 1.. {
        let inj = FaultInjector::fail_once_at(k);
        let (s, mut store, n, _) = setup(&inj);
        let res = store.capture_before(&changes, Some("edit"));
        if inj.steps() < k {
            break; // the capture took fewer steps: every one has failed once
        }
        if let Err(e) = &res {
            failures += 1;
            // Nothing of the failed append is left in the log.
            let left = crate::log_support::frames_of(&s.sidecar, n, "line");
            assert!(left.is_empty(), "step {k} ({e}): frames left: {left:?}");
            let again = store.capture_before(&changes, Some("edit")).unwrap();
            assert_eq!(again.captured.len(), 3, "step {k}: the retry captures every path");
        }
        store.end_turn();
        drop(store);
        let store = open(&s);
        let rel = RelPath::normalize(&s.workspace, Path::new("b.bin")).unwrap();
        match store.before_image(n, &rel).unwrap() {
            BeforeImage::Present { reader, .. } => assert_eq!(reader.read_all().unwrap().len(), 300_000),
            other => panic!("step {k}: {other:?}"),
        }
    }
    assert!(failures > 0, "no step of the capture failed");
}
