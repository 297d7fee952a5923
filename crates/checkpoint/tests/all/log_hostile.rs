//! The log's segments attacked as a hostile user would (found by the attack on the log, issue 32):
//! a segment deleted or cut at a frame boundary, a segment or the log made a symlink or a file.
//! What was lost is said (fsck error) and no code restore is offered across it; nothing is written
//! outside the sidecar.

use std::fs;

use crate::hostile_support::{begin, edit, open};
use crate::log_support::{frames, segments};
use retrace_testkit::Scratch;

/// A session of `n` turns, each creating `f<i>.txt`, ended and closed: more than one segment.
fn session(n: u64) -> Scratch {
    let s = Scratch::new().unwrap();
    let mut store = open(&s);
    for i in 0..n {
        let t = begin(&mut store);
        assert_eq!(t, i);
        edit(&mut store, &s, &format!("f{i}.txt"), Some(b"agent\n"));
    }
    store.end_turn();
    drop(store);
    s
}

fn offered(s: &Scratch) -> Vec<(u64, Option<bool>)> {
    open(s)
        .list()
        .iter()
        .map(|e| (e.turn, e.can_restore_code))
        .collect()
}

#[test]
fn a_deleted_middle_segment_stops_every_restore_across_it() {
    let s = session(40);
    let segs = segments(&s.sidecar);
    assert_eq!(segs.len(), 3, "{segs:?}");
    fs::remove_file(&segs[1]).unwrap();
    let store = open(&s);
    let report = store.fsck();
    assert!(
        !report.ok && format!("{report:?}").contains("missing"),
        "{report:?}"
    );
    for (turn, can) in offered(&s) {
        // Turns 0..15 would span the lost 16..31; 32.. are after it.
        assert_eq!(can, Some(turn >= 32), "turn {turn}");
    }
    assert!(store.plan_restore(10).is_err());
}

#[test]
fn a_middle_segment_cut_at_a_frame_boundary_is_noticed() {
    let s = session(40);
    let segs = segments(&s.sidecar);
    let fr = frames(&segs[1]);
    // Cut just before the tenth frame's prefix line: whole frames, no torn tail to see.
    let bytes = fs::read(&segs[1]).unwrap();
    let at = bytes[..fr[10].header_at - 1]
        .iter()
        .rposition(|b| *b == b'@')
        .unwrap();
    fs::write(&segs[1], &bytes[..at]).unwrap();
    let report = open(&s).fsck();
    assert!(
        !report.ok && format!("{report:?}").contains("sealed"),
        "{report:?}"
    );
    for (turn, can) in offered(&s) {
        assert_eq!(can, Some(turn >= 32), "turn {turn}");
    }
}

#[test]
fn a_deleted_newest_segment_is_noticed_and_its_numbers_not_reused() {
    let s = session(20);
    let segs = segments(&s.sidecar);
    assert_eq!(segs.len(), 2);
    fs::remove_file(&segs[1]).unwrap();
    let mut store = open(&s);
    assert!(!store.fsck().ok);
    assert!(store.list().iter().all(|e| e.can_restore_code == Some(false)));
    let t = begin(&mut store);
    assert!(t >= 20, "turn {t} reuses a number the lost segment may hold");
}

#[test]
fn a_symlinked_segment_is_never_written_through() {
    let s = session(3);
    let seg = segments(&s.sidecar).pop().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("precious.txt");
    fs::write(&victim, b"do not touch\n").unwrap();
    fs::remove_file(&seg).unwrap();
    std::os::unix::fs::symlink(&victim, &seg).unwrap();
    let mut store = open(&s);
    assert!(!store.fsck().ok);
    let t = begin(&mut store);
    edit(&mut store, &s, "g.txt", Some(b"g\n"));
    store.end_turn();
    assert_eq!(fs::read(&victim).unwrap(), b"do not touch\n");
    assert!(fs::symlink_metadata(&seg).unwrap().file_type().is_symlink());
    assert!(store.plan_restore(t).is_ok());
}

#[test]
fn a_file_where_the_log_should_be_is_said_and_never_replaced() {
    let s = session(2);
    let log = s.sidecar.join("log");
    fs::rename(&log, s.sidecar.join("log-aside")).unwrap();
    fs::write(&log, b"mine\n").unwrap();
    let store = open(&s);
    let report = store.fsck();
    assert!(
        !report.ok && format!("{report:?}").contains("not a directory"),
        "{report:?}"
    );
    drop(store);
    let mut store = open(&s);
    let t = store
        .begin_turn(retrace_checkpoint::BeginTurn::default())
        .unwrap_err();
    assert!(t.to_string().contains("move it aside"), "{t}");
    assert_eq!(fs::read(&log).unwrap(), b"mine\n");
}

/// A process that lost the session (its writer lease taken over) and goes on: its next append is
/// refused once another process wrote to the log, so it can never record a turn's end over the
/// other's work (found by the attack: the stale end made a later turn's results wrong).
#[test]
fn a_stale_writer_never_appends_after_another_one() {
    let s = Scratch::new().unwrap();
    s.write("a.txt", b"a0\n").unwrap();
    let mut stale = open(&s);
    let t1 = begin(&mut stale);
    edit(&mut stale, &s, "a.txt", Some(b"a1\n"));
    // Another process takes over: it settles the stale one's turn and records its own.
    let mut other = open(&s);
    let t2 = begin(&mut other);
    assert!(t2 > t1);
    edit(&mut other, &s, "a.txt", Some(b"a2\n"));
    other.end_turn();
    let len = fs::metadata(segments(&s.sidecar).pop().unwrap()).unwrap().len();
    // The stale process goes on: refused, and its end is never written.
    let e = stale
        .capture_before(
            &[retrace_checkpoint::Change::new(
                "b.txt",
                retrace_protocol::ChangeKind::Create,
            )],
            Some("write_file"),
        )
        .unwrap_err();
    assert!(e.to_string().contains("another process wrote"), "{e}");
    assert!(stale.finish_turn().is_err());
    drop(stale);
    assert_eq!(
        fs::metadata(segments(&s.sidecar).pop().unwrap()).unwrap().len(),
        len
    );
    let store = open(&s);
    let files = store.turn_files(t2).unwrap();
    assert_eq!(files.len(), 1, "{files:#?}");
    assert!(files[0].diff.contains("+a2"), "{files:#?}");
    assert!(store.fsck().ok, "{:?}", store.fsck());
}

/// An `end` frame whose `at` names bytes other than the `bytes` frame just before it (found by the
/// attack: a forger with a matching hash made a revert write the segment's own header into the
/// file) keeps no bytes: nothing is written from there.
#[test]
fn an_end_that_names_other_bytes_keeps_none() {
    let s = Scratch::new().unwrap();
    s.write("b.txt", b"b0\n").unwrap();
    let mut store = open(&s);
    let t = begin(&mut store);
    edit(&mut store, &s, "b.txt", Some(b"b1\n"));
    store.end_turn();
    drop(store);
    let seg = segments(&s.sidecar).pop().unwrap();
    // Re-encoded once (keys sorted), so that the bytes named below are the final ones.
    crate::log_support::edit_headers(&seg, |_| {});
    let forged = fs::read(&seg).unwrap()[..40].to_vec();
    let sha = retrace_fsutil::sha256_bytes(&forged);
    crate::log_support::edit_headers(&seg, |h| {
        if h["k"] == "end" && h["turn"] == t {
            h.as_object_mut().unwrap().remove("kept");
            h["at"] = serde_json::json!({"offset": 0, "length": 40});
            h["end"]["sha256"] = serde_json::json!(sha);
            h["end"]["size"] = serde_json::json!(40);
        }
    });
    assert_eq!(fs::read(&seg).unwrap()[..40], forged[..]);
    let mut store = open(&s);
    s.write("b.txt", b"by hand\n").unwrap();
    let history = store.file_history(std::path::Path::new("b.txt")).unwrap();
    let end = history
        .versions
        .iter()
        .find(|v| v.origin == retrace_protocol::VersionOrigin::TurnEnd)
        .unwrap();
    if let Ok(plan) = store.plan_file_version(std::path::Path::new("b.txt"), end.version) {
        let _ = store.commit(
            &plan,
            retrace_checkpoint::CommitOptions {
                confirm: true,
                on_conflict: retrace_protocol::OnConflict::Overwrite,
            },
        );
    }
    assert_ne!(fs::read(s.workspace.join("b.txt")).unwrap(), forged);
}
