//! Forward images (SPEC §5.4, FORMATS.md "Forward images"): copies, never links, in one private
//! pack per transaction. A process that keeps the replaced file open and writes to it cannot touch
//! the undo; targets with the same bytes share a slice; forward images that earlier builds kept as
//! blobs (`forward/<sha>`, `blobs/<aa>/<bb>/<sha>`, some of them hard links to workspace files)
//! are still used, and made private copies of when a store recovers.

use std::fs;
use std::io::{Seek, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use retrace_checkpoint::{
    blob_rel_path, forward_rel_path, pack_rel_path, BeginTurn, Change, CheckpointStore, CommitOptions,
    StoreOptions,
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

fn files_in(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// SPEC §5.4: an editor (or a log writer) that keeps the file open after the restore writes into
/// the inode the rename left behind. With forward images by hard link that inode was the undo's
/// only copy of the bytes; with copies, the undo brings back exactly what was there.
#[test]
fn a_process_writing_to_the_replaced_file_cannot_touch_the_undo() {
    let s = Scratch::new().unwrap();
    s.write("a.txt", b"orig\n").unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store);
    edit(&mut store, &s, "a.txt", b"agent\n");
    store.end_turn();
    // The editor holds the file open, read-write, across the restore…
    let mut editor = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(s.workspace.join("a.txt"))
        .unwrap();
    let out = restore(&mut store, t0);
    assert_eq!(read(&s, "a.txt"), b"orig\n");
    // …and saves into the inode it has, which is no longer the workspace file.
    editor.rewind().unwrap();
    editor.write_all(b"EDITOR-SAVE").unwrap();
    editor.sync_all().unwrap();
    drop(editor);
    assert_eq!(read(&s, "a.txt"), b"orig\n");
    assert!(store.fsck().ok, "{:#?}", store.fsck().problems);
    store.undo(out.transaction_id.as_deref().unwrap()).unwrap();
    assert_eq!(read(&s, "a.txt"), b"agent\n", "the bytes from before the restore");
    assert!(store.fsck().ok, "{:#?}", store.fsck().problems);
}

#[test]
fn one_private_pack_per_transaction_and_shared_bytes_once() {
    let s = Scratch::new().unwrap();
    let paths = ["a.txt", "src/b.rs", "src/deep/c.md", "same1", "same2"];
    for p in paths {
        s.write(p, format!("old {p}").as_bytes()).unwrap();
    }
    fs::set_permissions(s.workspace.join("a.txt"), fs::Permissions::from_mode(0o755)).unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store);
    for p in &paths[..3] {
        edit(&mut store, &s, p, format!("new {p}").as_bytes());
    }
    edit(&mut store, &s, "same1", b"identical bytes");
    edit(&mut store, &s, "same2", b"identical bytes");
    store.end_turn();
    let out = restore(&mut store, t0);
    assert_eq!(out.files_written.len(), 5);
    let tx = out.transaction_id.clone().unwrap();
    // One new file in `forward/`, whatever the number of targets: the pack. Not a link to
    // anything, and private.
    assert_eq!(files_in(&s.sidecar.join("forward")), [format!("{tx}.pack")]);
    let pack = s.sidecar.join(pack_rel_path(&tx));
    let md = fs::metadata(&pack).unwrap();
    assert_eq!(md.nlink(), 1);
    assert_eq!(md.permissions().mode() & 0o777, 0o600);
    let unique: u64 = paths[..3]
        .iter()
        .map(|p| format!("new {p}").len() as u64)
        .sum::<u64>()
        + b"identical bytes".len() as u64;
    assert_eq!(md.len(), unique, "identical bytes are kept once");
    for p in paths {
        assert_eq!(read(&s, p), format!("old {p}").as_bytes());
    }
    // The undo keeps its own forward images (the restored bytes) in a pack of its own.
    let undo = store.undo(&tx).unwrap();
    let undo_tx = undo.transaction_id.unwrap();
    assert_eq!(
        files_in(&s.sidecar.join("forward")),
        [format!("{tx}.pack"), format!("{undo_tx}.pack")]
    );
    for p in &paths[..3] {
        assert_eq!(read(&s, p), format!("new {p}").as_bytes());
    }
    assert_eq!(read(&s, "same2"), b"identical bytes");
    assert!(store.fsck().ok, "{:#?}", store.fsck().problems);
    // A pack that rots is named by fsck, with the transaction.
    fs::write(&pack, b"rot").unwrap();
    let report = store.fsck();
    assert!(!report.ok);
    assert!(report
        .problems
        .iter()
        .any(|p| p.path == pack_rel_path(&tx) && p.problem.contains(&tx)));
}

/// Rewrites transaction `tx`'s manifest as an earlier build wrote it (no pack: each forward image a
/// blob named by its SHA-256), moving the bytes out of the pack to `layout`'s place for each.
fn as_earlier_build(sidecar: &Path, tx: &str, layout: fn(&str) -> String) -> Vec<PathBuf> {
    let path = sidecar.join(format!("transactions/{tx}.json"));
    let mut m: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    let pack = fs::read(sidecar.join(pack_rel_path(tx))).unwrap();
    let mut blobs = Vec::new();
    for t in m["targets"].as_array_mut().unwrap() {
        if let Some(at) = t.as_object_mut().unwrap().remove("forwardAt") {
            let (o, l) = (
                at["offset"].as_u64().unwrap() as usize,
                at["length"].as_u64().unwrap() as usize,
            );
            let bytes = &pack[o..o + l];
            let blob = sidecar.join(layout(&sha256_bytes(bytes)));
            fs::create_dir_all(blob.parent().unwrap()).unwrap();
            fs::write(&blob, bytes).unwrap();
            blobs.push(blob);
        }
    }
    m.as_object_mut().unwrap().remove("forwardPack");
    fs::write(&path, serde_json::to_vec(&m).unwrap()).unwrap();
    fs::remove_file(sidecar.join(pack_rel_path(tx))).unwrap();
    blobs
}

#[test]
fn forward_images_kept_as_blobs_by_earlier_builds_are_still_used() {
    for layout in [forward_rel_path as fn(&str) -> String, blob_rel_path] {
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
        let first = restore(&mut store, t0);
        assert_eq!(read(&s, "f"), b"v0");
        drop(store);
        let blobs = as_earlier_build(&s.sidecar, first.transaction_id.as_deref().unwrap(), layout);

        let mut store = open(&s);
        let report = store.fsck();
        assert!(report.ok, "{:#?}", report.problems);
        assert!(
            !report.problems.iter().any(|p| p.problem.contains("unreferenced")),
            "{:#?}",
            report.problems
        );
        assert!(
            blobs.iter().all(|b| b.is_file()),
            "recovery or collection removed a forward image"
        );
        // The timeline reads the forward image from its old place.
        let out = restore(&mut store, t1);
        assert!(out.conflicts.is_empty(), "{:?}", out.conflicts);
        assert_eq!(read(&s, "f"), b"v1");
        assert!(!s.workspace.join("g").exists());
        // And so does an undo whose forward image is a blob.
        drop(store);
        as_earlier_build(&s.sidecar, out.transaction_id.as_deref().unwrap(), layout);
        let mut store = open(&s);
        store.undo(out.transaction_id.as_deref().unwrap()).unwrap();
        assert_eq!(read(&s, "f"), b"v0");
        assert!(store.fsck().ok, "{:#?}", store.fsck().problems);
    }
}

/// An earlier build kept forward images by hard link: a transaction it left `prepared` has a blob
/// that is the workspace file's own inode. Recovery gives the blob an inode of its own, so nothing
/// written to the workspace file ever reaches it.
#[test]
fn recovery_makes_a_linked_blob_of_an_earlier_build_a_private_copy() {
    let s = Scratch::new().unwrap();
    s.write("a.txt", b"old\n").unwrap();
    let mut store = open(&s);
    let t0 = begin(&mut store);
    edit(&mut store, &s, "a.txt", b"new\n");
    store.end_turn();
    drop(store);
    // What such a build left: a `prepared` manifest, and the blob linked to the target.
    let sha = sha256_bytes(b"new\n");
    let blob = s.sidecar.join(forward_rel_path(&sha));
    fs::create_dir_all(blob.parent().unwrap()).unwrap();
    fs::hard_link(s.workspace.join("a.txt"), &blob).unwrap();
    let manifest = serde_json::json!({
        "id": "00000099-00000000", "kind": "restore", "state": "prepared",
        "time": "2026-01-01T00:00:00Z", "seq": 99, "turn": t0,
        "targets": [{"path": "a.txt", "action": "write",
                     "restore": {"existed": true, "sha256": sha256_bytes(b"old\n"), "mode": 420},
                     "forward": {"existed": true, "sha256": sha, "mode": 420}}]
    });
    fs::create_dir_all(s.sidecar.join("transactions")).unwrap();
    fs::write(
        s.sidecar.join("transactions/00000099-00000000.json"),
        serde_json::to_vec(&manifest).unwrap(),
    )
    .unwrap();
    let ws_inode = fs::metadata(s.workspace.join("a.txt")).unwrap().ino();
    assert_eq!(fs::metadata(&blob).unwrap().ino(), ws_inode);
    let store = open(&s);
    assert_eq!(read(&s, "a.txt"), b"new\n");
    assert_eq!(fs::metadata(s.workspace.join("a.txt")).unwrap().nlink(), 1);
    if blob.exists() {
        assert_ne!(fs::metadata(&blob).unwrap().ino(), ws_inode);
    }
    assert!(store.fsck().ok, "{:#?}", store.fsck().problems);
}
