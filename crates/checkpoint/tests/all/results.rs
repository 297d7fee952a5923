//! A turn's results (SPEC §5.7): each file the turn changed, diffed from its before-image to the
//! state the turn left it in, exact whatever happens to the files afterwards.

use std::fs;
use std::path::PathBuf;
use std::sync::Arc;

use retrace_checkpoint::{BeginTurn, Change, CheckpointStore, StoreOptions};
use retrace_fsutil::{sha256_bytes, Fs};
use retrace_protocol::{ChangeAction, ChangeKind, TurnFile};
use retrace_testkit::Scratch;

fn opts() -> StoreOptions {
    StoreOptions {
        session_id: Some("results".into()),
        fs: Fs::without_sync(),
        clock: Arc::new(|| time::OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()),
        ..StoreOptions::default()
    }
}

fn open(s: &Scratch) -> CheckpointStore {
    CheckpointStore::open(&s.sidecar, &s.workspace, opts()).unwrap()
}

/// One turn that applies `edits` (path, new bytes or deletion) through the seam, as the agent
/// does, then ends.
fn turn(store: &mut CheckpointStore, s: &Scratch, edits: &[(&str, Option<&[u8]>)]) -> u64 {
    let n = store
        .begin_turn(BeginTurn {
            prompt: "p".into(),
            ..BeginTurn::default()
        })
        .unwrap();
    for (path, bytes) in edits {
        let kind = if bytes.is_some() {
            ChangeKind::Modify
        } else {
            ChangeKind::Delete
        };
        store
            .capture_before(&[Change::new(*path, kind)], Some("write_file"))
            .unwrap();
        match bytes {
            Some(b) => s.write(path, b).unwrap(),
            None => fs::remove_file(s.workspace.join(path)).unwrap(),
        }
        store.capture_after(&[PathBuf::from(*path)]).unwrap();
    }
    store.finish_turn().unwrap();
    n
}

fn by_path<'a>(files: &'a [TurnFile], path: &str) -> &'a TurnFile {
    files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("no {path} in {files:#?}"))
}

#[test]
fn create_modify_delete_and_an_unchanged_file() {
    let s = Scratch::new().unwrap();
    s.write("m.txt", b"one\ntwo\nthree\n").unwrap();
    s.write("d.txt", b"gone\n").unwrap();
    s.write("same.txt", b"x\n").unwrap();
    let mut store = open(&s);
    let n = turn(
        &mut store,
        &s,
        &[
            ("m.txt", Some(b"one\n2\nthree\n")),
            ("c.txt", Some(b"new\n")),
            ("d.txt", None),
            ("same.txt", Some(b"y\n")),
            ("same.txt", Some(b"x\n")),
        ],
    );
    let files = store.turn_files(n).unwrap();
    assert_eq!(
        files.len(),
        3,
        "the file put back as it was is not a change: {files:#?}"
    );
    let m = by_path(&files, "m.txt");
    assert_eq!(m.action, ChangeAction::Modify);
    assert_eq!(m.diff, "@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n");
    assert_eq!((m.added, m.removed), (1, 1));
    let c = by_path(&files, "c.txt");
    assert_eq!(c.action, ChangeAction::Create);
    assert_eq!(c.diff, "@@ -0,0 +1 @@\n+new\n");
    assert!(c.before.is_none());
    assert_eq!(
        c.after.as_ref().unwrap().sha256.as_deref(),
        Some(sha256_bytes(b"new\n").as_str())
    );
    let d = by_path(&files, "d.txt");
    assert_eq!(d.action, ChangeAction::Delete);
    assert_eq!(d.diff, "@@ -1 +0,0 @@\n-gone\n");
    assert!(d.after.is_none());
    // The listing's +/− of the turn, recorded as it ended (no diffing when listing).
    let entry = store.list().into_iter().find(|e| e.turn == n).unwrap();
    assert_eq!((entry.added, entry.removed), (Some(2), Some(2)));
    drop(store);
    let store = open(&s);
    let entry = store.list().into_iter().find(|e| e.turn == n).unwrap();
    assert_eq!((entry.added, entry.removed), (Some(2), Some(2)));
}

#[test]
fn a_later_hand_edit_or_turn_does_not_change_a_turns_results() {
    let s = Scratch::new().unwrap();
    s.write("a.txt", b"a\n").unwrap();
    let mut store = open(&s);
    let n = turn(&mut store, &s, &[("a.txt", Some(b"b\n"))]);
    let first = store.turn_files(n).unwrap();
    s.write("a.txt", b"by hand\n").unwrap();
    let m = turn(&mut store, &s, &[("a.txt", Some(b"c\n"))]);
    s.write("a.txt", b"by hand again\n").unwrap();
    drop(store);
    let store = open(&s);
    assert_eq!(store.turn_files(n).unwrap(), first);
    assert_eq!(first[0].diff, "@@ -1 +1 @@\n-a\n+b\n");
    let later = store.turn_files(m).unwrap();
    assert_eq!(later[0].diff, "@@ -1 +1 @@\n-by hand\n+c\n");
}

#[test]
fn a_move_is_one_entry() {
    let s = Scratch::new().unwrap();
    s.write("from.txt", b"payload\n").unwrap();
    let mut store = open(&s);
    let n = store.begin_turn(BeginTurn::default()).unwrap();
    store
        .capture_before(
            &[
                Change::new("from.txt", ChangeKind::Delete),
                Change::new("to.txt", ChangeKind::Create),
            ],
            Some("move_file"),
        )
        .unwrap();
    fs::rename(s.workspace.join("from.txt"), s.workspace.join("to.txt")).unwrap();
    store
        .capture_after(&[PathBuf::from("from.txt"), PathBuf::from("to.txt")])
        .unwrap();
    store.finish_turn().unwrap();
    let files = store.turn_files(n).unwrap();
    assert_eq!(files.len(), 1, "{files:#?}");
    assert_eq!(files[0].action, ChangeAction::Move);
    assert_eq!(files[0].from.as_deref(), Some("from.txt"));
    assert_eq!(files[0].path, "to.txt");
    assert_eq!((files[0].added, files[0].removed), (0, 0));
    let entry = store.list().into_iter().find(|e| e.turn == n).unwrap();
    assert_eq!(
        (entry.added, entry.removed),
        (Some(0), Some(0)),
        "the listing counts a move as its results do"
    );
}

#[test]
fn crlf_binary_invalid_utf8_and_gb18030_are_bytes_not_lossy_text() {
    let s = Scratch::new().unwrap();
    s.write("crlf.txt", b"a\r\nb\r\n").unwrap();
    s.write("bin.dat", b"\x00\x01\x02").unwrap();
    // "中文" in GB18030: not UTF-8.
    s.write("gb.txt", b"\xd6\xd0\xce\xc4\n").unwrap();
    let mut store = open(&s);
    let n = turn(
        &mut store,
        &s,
        &[
            ("crlf.txt", Some(b"a\r\nB\r\n")),
            ("bin.dat", Some(b"\x00\x01\x03")),
            ("gb.txt", Some(b"\xd6\xd0\n")),
            ("bad.txt", Some(b"ok\n\xff\n")),
        ],
    );
    let files = store.turn_files(n).unwrap();
    assert_eq!(
        by_path(&files, "crlf.txt").diff,
        "@@ -1,2 +1,2 @@\n a\r\n-b\r\n+B\r\n"
    );
    for p in ["bin.dat", "gb.txt", "bad.txt"] {
        let f = by_path(&files, p);
        assert!(f.binary, "{p}: {f:#?}");
        assert!(f.diff.is_empty());
        assert!(f.after.as_ref().unwrap().sha256.is_some() && f.after.as_ref().unwrap().size.is_some());
    }
    let gb = by_path(&files, "gb.txt");
    assert_eq!(
        gb.before.as_ref().unwrap().sha256.as_deref(),
        Some(sha256_bytes(b"\xd6\xd0\xce\xc4\n").as_str())
    );
    assert_eq!(gb.after.as_ref().unwrap().size, Some(3));
}

#[test]
fn a_damaged_end_pack_says_so_instead_of_a_wrong_diff() {
    let s = Scratch::new().unwrap();
    s.write("a.txt", b"a\n").unwrap();
    let mut store = open(&s);
    let n = turn(&mut store, &s, &[("a.txt", Some(b"b\n"))]);
    drop(store);
    let (seg, end) = crate::log_support::frames_of(&s.sidecar, n, "end").remove(0);
    assert_eq!(end.body_len, 2);
    crate::log_support::patch(&seg, end.body_at, b"c\n");
    s.write("a.txt", b"by hand\n").unwrap();
    let store = open(&s);
    let f = &store.turn_files(n).unwrap()[0];
    assert!(
        f.unknown.as_deref().is_some_and(|u| u.contains("damaged")),
        "{f:#?}"
    );
    assert!(f.diff.is_empty());
}

/// Turns recorded before end packs know their end by the after-image's hash only: its bytes are
/// found where they still are (here the file on disk, then a later turn's before-image), and once
/// nothing holds them the file is `unknown`, never guessed.
#[test]
fn a_turn_without_end_states_finds_its_bytes_by_hash_or_says_unknown() {
    let s = Scratch::new().unwrap();
    s.write("a.txt", b"a\n").unwrap();
    s.write("b.txt", b"b\n").unwrap();
    let mut store = open(&s);
    let n = turn(
        &mut store,
        &s,
        &[("a.txt", Some(b"a2\n")), ("b.txt", Some(b"b2\n"))],
    );
    drop(store);
    // The turn's ends taken out of the log (their frames made a kind no build reads).
    let mut ends = 0;
    crate::log_support::edit_headers(&crate::log_support::segment(&s.sidecar), |h| {
        if h["k"] == "end" && h["turn"] == n {
            h["k"] = serde_json::json!("forgotten");
            ends += 1;
        }
    });
    assert_eq!(ends, 2);
    let mut store = open(&s);
    // a.txt: a later turn's before-image holds the bytes; b.txt: changed by hand, nothing holds them.
    turn(&mut store, &s, &[("a.txt", Some(b"a3\n"))]);
    s.write("b.txt", b"by hand\n").unwrap();
    let files = store.turn_files(n).unwrap();
    assert_eq!(by_path(&files, "a.txt").diff, "@@ -1 +1 @@\n-a\n+a2\n");
    let b = by_path(&files, "b.txt");
    assert!(b.unknown.is_some() && b.diff.is_empty(), "{b:#?}");
    s.write("b.txt", b"b2\n").unwrap();
    assert_eq!(
        by_path(&store.turn_files(n).unwrap(), "b.txt").diff,
        "@@ -1 +1 @@\n-b\n+b2\n"
    );
}

/// `fsck` checks the files as the turn left them: damaged bytes are an error naming the segment and
/// the file.
#[test]
fn fsck_reports_a_damaged_end_state() {
    let s = Scratch::new().unwrap();
    s.write("a.txt", b"a\n").unwrap();
    let mut store = open(&s);
    let n = turn(&mut store, &s, &[("a.txt", Some(b"b\n"))]);
    assert!(store.fsck().ok, "{:?}", store.fsck());
    drop(store);
    let (seg, end) = crate::log_support::frames_of(&s.sidecar, n, "end").remove(0);
    crate::log_support::patch(&seg, end.body_at, b"x\n");
    let report = open(&s).fsck();
    assert!(!report.ok);
    let p = report.problems.iter().find(|p| p.path.ends_with(".seg")).unwrap();
    assert!(p.problem.contains("hashes to"), "{p:?}");
    assert_eq!(p.file.as_deref(), Some("a.txt"));
}

/// Bytes of `len` that are not text, different for each `seed`.
fn big(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// A file too large to diff (over 4 MiB) is streamed into the end pack: the turn's results give
/// its sizes and hashes (binary, no text), its end version restores byte for byte after a hand
/// edit overwrote it, and fsck finds the pack sound.
#[test]
fn a_file_too_large_to_diff_is_streamed_exactly_into_the_end_pack() {
    let s = Scratch::new().unwrap();
    let before = big(5 * 1024 * 1024, 1);
    let after = big(5 * 1024 * 1024 + 3, 2);
    s.write("big.bin", &before).unwrap();
    let mut store = open(&s);
    let n = turn(&mut store, &s, &[("big.bin", Some(&after))]);
    let files = store.turn_files(n).unwrap();
    let f = by_path(&files, "big.bin");
    assert!(f.binary, "{f:?}");
    assert_eq!(f.diff, "");
    let sha = |v: &Option<retrace_protocol::FileVersion>| v.as_ref().and_then(|v| v.sha256.clone());
    assert_eq!(sha(&f.before), Some(sha256_bytes(&before)));
    assert_eq!(sha(&f.after), Some(sha256_bytes(&after)));
    assert_eq!(f.after.as_ref().and_then(|v| v.size), Some(after.len() as u64));
    assert!(store.fsck().ok, "{:?}", store.fsck());

    // overwritten by hand, the turn's end still restores exactly from the pack
    s.write("big.bin", b"by hand\n").unwrap();
    drop(store);
    let mut store = open(&s);
    assert_eq!(store.turn_files(n).unwrap(), files);
    let h = store.file_history(std::path::Path::new("big.bin")).unwrap();
    let end = h
        .versions
        .iter()
        .find(|v| v.origin == retrace_protocol::VersionOrigin::TurnEnd)
        .unwrap();
    assert!(end.restorable, "{h:#?}");
    let plan = store
        .plan_file_version(std::path::Path::new("big.bin"), end.version)
        .unwrap();
    let opts = retrace_checkpoint::CommitOptions {
        confirm: true,
        on_conflict: retrace_protocol::OnConflict::Overwrite,
    };
    store.commit(&plan, opts).unwrap();
    assert!(fs::read(s.workspace.join("big.bin")).unwrap() == after);
    assert!(store.fsck().ok, "{:?}", store.fsck());
}

/// A file that grows past the diffed size while the turn's end reads it: whichever way it was
/// read, what the end pack keeps hashes to what the results say, fsck finds it sound, and its end
/// version restores those very bytes.
#[test]
fn a_file_growing_while_the_turn_ends_is_kept_as_read() {
    use std::io::Write;
    use std::sync::atomic::{AtomicBool, Ordering};
    for round in 0..4u8 {
        let s = Scratch::new().unwrap();
        s.write("g.bin", b"start\n").unwrap();
        let mut store = open(&s);
        let n = store.begin_turn(BeginTurn::default()).unwrap();
        store
            .capture_before(&[Change::new("g.bin", ChangeKind::Modify)], Some("write_file"))
            .unwrap();
        let near = big(4 * 1024 * 1024 - 1024, round);
        s.write("g.bin", &near).unwrap();
        store.capture_after(&[PathBuf::from("g.bin")]).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let grower = {
            let path = s.workspace.join("g.bin");
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut f = fs::OpenOptions::new().append(true).open(path).unwrap();
                let chunk = vec![round; 64 * 1024];
                let mut grown = 0;
                while !stop.load(Ordering::Relaxed) && grown < 48 {
                    f.write_all(&chunk).unwrap();
                    grown += 1;
                    std::thread::yield_now();
                }
            })
        };
        store.finish_turn().unwrap();
        stop.store(true, Ordering::Relaxed);
        grower.join().unwrap();

        let files = store.turn_files(n).unwrap();
        let f = by_path(&files, "g.bin");
        let kept_sha = f.after.as_ref().and_then(|v| v.sha256.clone()).unwrap();
        assert!(store.fsck().ok, "round {round}: {:?}", store.fsck());
        s.write("g.bin", b"by hand\n").unwrap();
        let h = store.file_history(std::path::Path::new("g.bin")).unwrap();
        let end = h
            .versions
            .iter()
            .find(|v| v.origin == retrace_protocol::VersionOrigin::TurnEnd)
            .unwrap();
        assert_eq!(end.sha256.as_deref(), Some(kept_sha.as_str()));
        let plan = store
            .plan_file_version(std::path::Path::new("g.bin"), end.version)
            .unwrap();
        let opts = retrace_checkpoint::CommitOptions {
            confirm: true,
            on_conflict: retrace_protocol::OnConflict::Overwrite,
        };
        store.commit(&plan, opts).unwrap();
        let got = fs::read(s.workspace.join("g.bin")).unwrap();
        assert_eq!(sha256_bytes(&got), kept_sha, "round {round}");
        assert_eq!(f.after.as_ref().and_then(|v| v.size), Some(got.len() as u64));
    }
}
