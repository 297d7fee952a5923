//! Where a transaction keeps its forward images (FORMATS.md "Blobs"): one flat `forward/`
//! directory, named by SHA-256, made once per sidecar; and forward images that earlier builds kept
//! under `blobs/<aa>/<bb>/` are still found by undo, by later restores and by fsck.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use retrace_checkpoint::{
    blob_rel_path, forward_rel_path, BeginTurn, Change, CheckpointStore, CommitOptions, StoreOptions,
};
use retrace_fsutil::{sha256_bytes, Fs};
use retrace_protocol::{ChangeKind, OnConflict};
use retrace_testkit::Scratch;

fn open(s: &Scratch) -> CheckpointStore {
    let opts = StoreOptions {
        fs: Fs::without_sync(),
        ..StoreOptions::default()
    };
    CheckpointStore::open(&s.sidecar, &s.workspace, opts).unwrap()
}

fn begin(store: &mut CheckpointStore) -> u64 {
    store.begin_turn(BeginTurn::default()).unwrap()
}

fn edit(store: &mut CheckpointStore, s: &Scratch, path: &str, bytes: &[u8]) {
    store
        .capture_before(&[Change::new(path, ChangeKind::Modify)], Some("write_file"))
        .unwrap();
    s.write(path, bytes).unwrap();
    store.capture_after(&[PathBuf::from(path)]).unwrap();
}

fn restore(store: &mut CheckpointStore, turn: u64) -> retrace_protocol::CodeOutcome {
    let plan = store.plan_restore(turn).unwrap();
    let opts = CommitOptions {
        confirm: true,
        on_conflict: OnConflict::Refuse,
    };
    store.commit(&plan, opts).unwrap()
}

fn read(s: &Scratch, p: &str) -> Vec<u8> {
    fs::read(s.workspace.join(p)).unwrap()
}

/// The sidecar's directories, relative to it.
fn dirs(sidecar: &Path) -> Vec<String> {
    fn walk(root: &Path, d: &Path, out: &mut Vec<String>) {
        for e in fs::read_dir(d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                let p = e.path();
                out.push(p.strip_prefix(root).unwrap().to_string_lossy().into_owned());
                walk(root, &p, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(sidecar, sidecar, &mut out);
    out.sort();
    out
}

#[test]
fn forward_images_share_one_flat_directory_made_once() {
    let s = Scratch::new().unwrap();
    let paths = ["a.txt", "src/b.rs", "src/deep/c.md"];
    for p in paths {
        s.write(p, format!("old {p}").as_bytes()).unwrap();
    }
    let mut store = open(&s);
    let t0 = begin(&mut store);
    for p in paths {
        edit(&mut store, &s, p, format!("new {p}").as_bytes());
    }
    store.end_turn();
    let before = dirs(&s.sidecar);
    let out = restore(&mut store, t0);
    assert_eq!(out.files_written.len(), 3);
    // Two new directories, whatever the number of files: `forward/`, and `transactions/` for the
    // manifest (the sidecar's first transaction).
    let mut expected = before.clone();
    expected.extend(["forward".to_string(), "transactions".to_string()]);
    expected.sort();
    assert_eq!(dirs(&s.sidecar), expected);
    for p in paths {
        let blob = s
            .sidecar
            .join(forward_rel_path(&sha256_bytes(format!("new {p}").as_bytes())));
        assert_eq!(fs::read(&blob).unwrap(), format!("new {p}").as_bytes());
        assert_eq!(read(&s, p), format!("old {p}").as_bytes());
    }
    // The undo keeps its own forward images (the restored bytes) in the same directory.
    store.undo(out.transaction_id.as_deref().unwrap()).unwrap();
    assert_eq!(dirs(&s.sidecar), expected);
    for p in paths {
        assert!(s
            .sidecar
            .join(forward_rel_path(&sha256_bytes(format!("old {p}").as_bytes())))
            .is_file());
        assert_eq!(read(&s, p), format!("new {p}").as_bytes());
    }
    assert!(store.fsck().ok, "{:#?}", store.fsck().problems);
}

/// Moves the forward image of `bytes` from `forward/` to where builds before `forward/` kept it.
fn move_to_old_layout(sidecar: &Path, bytes: &[u8]) -> PathBuf {
    let sha = sha256_bytes(bytes);
    let old = sidecar.join(blob_rel_path(&sha));
    fs::create_dir_all(old.parent().unwrap()).unwrap();
    fs::rename(sidecar.join(forward_rel_path(&sha)), &old).unwrap();
    old
}

#[test]
fn forward_images_kept_under_blobs_by_earlier_builds_are_still_used() {
    let s = Scratch::new().unwrap();
    s.write("f", b"v0").unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store);
    edit(&mut store, &s, "f", b"v1");
    let t1 = begin(&mut store);
    edit(&mut store, &s, "g", b"g1");
    store.end_turn();
    // A restore made while t1 ran: its forward image of `f` (v1) is the only record of how `f`
    // was when t1 started.
    restore(&mut store, t0);
    assert_eq!(read(&s, "f"), b"v0");
    drop(store);
    let old = move_to_old_layout(&s.sidecar, b"v1");

    let mut store = open(&s);
    let report = store.fsck();
    assert!(report.ok, "{:#?}", report.problems);
    assert!(
        !report.problems.iter().any(|p| p.problem.contains("unreferenced")),
        "{:#?}",
        report.problems
    );
    assert!(
        old.is_file(),
        "recovery or collection removed a referenced forward image"
    );
    // The timeline reads the forward image from its old place.
    let out = restore(&mut store, t1);
    assert!(out.conflicts.is_empty(), "{:?}", out.conflicts);
    assert_eq!(read(&s, "f"), b"v1");
    assert!(!s.workspace.join("g").exists());
    // And so does an undo whose forward image is there.
    drop(store);
    move_to_old_layout(&s.sidecar, b"v0");
    let mut store = open(&s);
    store.undo(out.transaction_id.as_deref().unwrap()).unwrap();
    assert_eq!(read(&s, "f"), b"v0");
    assert!(store.fsck().ok, "{:#?}", store.fsck().problems);
}
