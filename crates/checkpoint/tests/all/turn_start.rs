//! The workspace at a turn's start written into another directory (a fork into a new workspace):
//! the copy gets each path as it was then, hand edits since included; what is not known, or
//! excluded by the caller, is listed and left; the workspace and the sidecar do not change.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use retrace_checkpoint::{BeginTurn, Change, CheckpointStore, StoreOptions};
use retrace_fsutil::Fs;
use retrace_protocol::{ChangeKind, ForkSkipReason, ForkSkipped, Gap, GapReason};
use retrace_testkit::{copy_dir, Scratch};

use crate::restore_support::{diff, snapshot};

fn open(s: &Scratch) -> CheckpointStore {
    let opts = StoreOptions {
        fs: Fs::without_sync(),
        clock: Arc::new(|| time::OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()),
        ..StoreOptions::default()
    };
    CheckpointStore::open(&s.sidecar, &s.workspace, opts).unwrap()
}

fn begin(store: &mut CheckpointStore, prompt: &str) -> u64 {
    store
        .begin_turn(BeginTurn {
            prompt: prompt.into(),
            ..BeginTurn::default()
        })
        .unwrap()
}

/// An agent edit through the seam: `Some(bytes)` writes, `None` deletes.
fn edit(store: &mut CheckpointStore, s: &Scratch, path: &str, bytes: Option<&[u8]>) {
    store
        .capture_before(&[Change::new(path, ChangeKind::Modify)], Some("write_file"))
        .unwrap();
    match bytes {
        Some(b) => s.write(path, b).unwrap(),
        None => fs::remove_file(s.workspace.join(path)).unwrap(),
    }
    store.capture_after(&[PathBuf::from(path)]).unwrap();
}

fn chmod(p: &Path, mode: u32) {
    fs::set_permissions(p, fs::Permissions::from_mode(mode)).unwrap();
}

fn none(_: &retrace_fsutil::RelPath) -> Option<ForkSkipped> {
    None
}

#[test]
fn the_copy_gets_each_file_as_it_was_when_the_turn_started() {
    let s = Scratch::new().unwrap();
    s.write("keep.txt", b"untouched").unwrap();
    s.write("a.txt", b"a0").unwrap();
    s.write("run.sh", b"#!/bin/sh\n").unwrap();
    chmod(&s.workspace.join("run.sh"), 0o755);
    s.write("gone.txt", b"g0").unwrap();
    let mut store = open(&s);
    begin(&mut store, "zero");
    edit(&mut store, &s, "early.txt", Some(b"e0"));
    store.end_turn();
    let at_turn_1 = snapshot(&s.workspace);
    let t1 = begin(&mut store, "one");
    edit(&mut store, &s, "a.txt", Some(b"a1"));
    edit(&mut store, &s, "d/new.txt", Some(b"n1"));
    edit(&mut store, &s, "run.sh", Some(b"#!/bin/sh\necho\n"));
    store.end_turn();
    begin(&mut store, "two");
    edit(&mut store, &s, "gone.txt", None);
    edit(&mut store, &s, "a.txt", Some(b"a2"));
    store.end_turn();
    // Edited by hand since: not a conflict here, the copy takes it as it was at turn 1.
    s.write("a.txt", b"by hand").unwrap();
    chmod(&s.workspace.join("run.sh"), 0o700);

    let source_before = snapshot(&s.workspace);
    let sidecar_before = snapshot(&s.sidecar);
    let dest = s.tmp.path().join("copy");
    copy_dir(&s.workspace, &dest).unwrap();
    for (rel, (_, mode)) in &source_before {
        chmod(&dest.join(rel), *mode);
    }
    let done = store.write_turn_start(t1, &dest, &none).unwrap();

    let got = snapshot(&dest);
    assert!(
        got == at_turn_1,
        "the copy differs from turn 1's start:\n{}",
        diff(&got, &at_turn_1)
    );
    assert!(
        !dest.join("d").exists(),
        "the directory turn 1 made is gone with its file"
    );
    let mut restored = done.restored.clone();
    restored.sort();
    assert_eq!(restored, ["a.txt", "d/new.txt", "gone.txt", "run.sh"]);
    assert!(done.skipped.is_empty(), "{:?}", done.skipped);
    assert_eq!(
        snapshot(&s.workspace),
        source_before,
        "the workspace is untouched"
    );
    assert_eq!(snapshot(&s.sidecar), sidecar_before, "the sidecar is untouched");
}

#[test]
fn what_is_not_known_or_excluded_is_left_and_listed() {
    let s = Scratch::new().unwrap();
    s.write("a.txt", b"a0").unwrap();
    s.write("secret.env", b"k0").unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store, "zero");
    edit(&mut store, &s, "a.txt", Some(b"a1"));
    edit(&mut store, &s, "secret.env", Some(b"k1"));
    store
        .record_gap(Gap {
            tool: Some("bash".into()),
            detail: Some("make build".into()),
            ..Gap::new(GapReason::BashSideEffect)
        })
        .unwrap();
    store.end_turn();
    let dest = s.tmp.path().join("copy");
    copy_dir(&s.workspace, &dest).unwrap();
    fs::remove_file(dest.join("secret.env")).unwrap();
    let excluded = |rel: &retrace_fsutil::RelPath| {
        (rel.to_lossy() == "secret.env").then(|| ForkSkipped {
            path: Some("secret.env".into()),
            reason: ForkSkipReason::Ignored,
            turn: None,
            says: "ignored".into(),
        })
    };
    let done = store.write_turn_start(t0, &dest, &excluded).unwrap();
    assert_eq!(done.restored, ["a.txt"]);
    assert_eq!(fs::read(dest.join("a.txt")).unwrap(), b"a0");
    assert!(
        !dest.join("secret.env").exists(),
        "an excluded path is not written"
    );
    let reasons: Vec<(Option<&str>, ForkSkipReason, Option<u64>)> = done
        .skipped
        .iter()
        .map(|k| (k.path.as_deref(), k.reason, k.turn))
        .collect();
    assert_eq!(
        reasons,
        [
            (None, ForkSkipReason::Unknown, Some(t0)),
            (Some("secret.env"), ForkSkipReason::Ignored, None),
        ]
    );
    assert!(
        done.skipped[0].says.contains("make build"),
        "{:?}",
        done.skipped[0]
    );
}

#[test]
fn nothing_is_written_through_a_symlink_in_the_copy() {
    let s = Scratch::new().unwrap();
    s.write("d/f.txt", b"f0").unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store, "zero");
    edit(&mut store, &s, "d/f.txt", Some(b"f1"));
    store.end_turn();
    let dest = s.tmp.path().join("copy");
    let outside = s.tmp.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::create_dir_all(&dest).unwrap();
    std::os::unix::fs::symlink(&outside, dest.join("d")).unwrap();
    let done = store.write_turn_start(t0, &dest, &none).unwrap();
    assert!(done.restored.is_empty());
    assert_eq!(done.skipped.len(), 1);
    assert_eq!(done.skipped[0].reason, ForkSkipReason::Blocked);
    assert!(
        fs::read_dir(&outside).unwrap().next().is_none(),
        "nothing written outside"
    );
}

#[test]
fn what_stands_in_a_paths_way_in_the_copy_gives_way_to_its_state_at_the_turns_start() {
    let s = Scratch::new().unwrap();
    s.write("p/q.txt", b"q0").unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store, "zero");
    edit(&mut store, &s, "p/q.txt", None);
    edit(&mut store, &s, "n.txt", Some(b"new"));
    store.end_turn();
    // Since: a file where the directory was, a directory where the made file was.
    fs::remove_dir_all(s.workspace.join("p")).unwrap();
    s.write("p", b"p as a file").unwrap();
    fs::remove_file(s.workspace.join("n.txt")).unwrap();
    s.write("n.txt/inner", b"inner").unwrap();
    let dest = s.tmp.path().join("copy");
    copy_dir(&s.workspace, &dest).unwrap();
    let done = store.write_turn_start(t0, &dest, &none).unwrap();
    assert!(done.skipped.is_empty(), "{:?}", done.skipped);
    assert_eq!(fs::read(dest.join("p/q.txt")).unwrap(), b"q0");
    assert!(!dest.join("n.txt").exists());
    let mut restored = done.restored.clone();
    restored.sort();
    assert_eq!(restored, ["n.txt", "p/q.txt"]);
}

#[test]
fn a_file_made_a_symlink_since_gets_its_bytes_back_in_the_copy_and_nothing_outside_is_written() {
    let s = Scratch::new().unwrap();
    s.write("f.txt", b"f0").unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store, "zero");
    edit(&mut store, &s, "f.txt", Some(b"f1"));
    store.end_turn();
    let outside = s.tmp.path().join("outside.txt");
    fs::write(&outside, b"outside").unwrap();
    fs::remove_file(s.workspace.join("f.txt")).unwrap();
    std::os::unix::fs::symlink(&outside, s.workspace.join("f.txt")).unwrap();
    let dest = s.tmp.path().join("copy");
    fs::create_dir_all(&dest).unwrap();
    std::os::unix::fs::symlink(&outside, dest.join("f.txt")).unwrap();
    let done = store.write_turn_start(t0, &dest, &none).unwrap();
    assert!(done.skipped.is_empty(), "{:?}", done.skipped);
    assert!(fs::symlink_metadata(dest.join("f.txt")).unwrap().is_file());
    assert_eq!(fs::read(dest.join("f.txt")).unwrap(), b"f0");
    assert_eq!(
        fs::read(&outside).unwrap(),
        b"outside",
        "nothing written through the link"
    );
}
