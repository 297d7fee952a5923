//! Forward images kept by hard link (SPEC §5.4, BENCHMARKS.md "Code restore"): a restore keeps the
//! bytes it replaces by linking the target itself into the blob store, copies them when the link is
//! not safe or not possible, and never leaves a blob that is also a name of a workspace file — not
//! after a commit, a rollback, a recovery or an undo.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use retrace_checkpoint::{forward_rel_path, BeginTurn, Change, CheckpointStore, CommitOptions, StoreOptions};
use retrace_fsutil::{sha256_bytes, FaultInjector, Fs};
use retrace_protocol::{ChangeKind, OnConflict};
use retrace_testkit::Scratch;

const OLD: &[u8] = b"the bytes the agent wrote\n";
const NEW: &[u8] = b"the bytes before the turn\n";

fn opts(fs: Fs) -> StoreOptions {
    StoreOptions {
        fs,
        clock: Arc::new(|| time::OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()),
        ..StoreOptions::default()
    }
}

fn open_at(sidecar: &Path, ws: &Path, fs: Fs) -> CheckpointStore {
    CheckpointStore::open(sidecar, ws, opts(fs)).unwrap()
}

fn confirm() -> CommitOptions {
    CommitOptions {
        confirm: true,
        on_conflict: OnConflict::Refuse,
    }
}

/// A workspace where `a.txt` held [`NEW`] when turn 1 started and holds [`OLD`] now (written by the
/// agent through the seam, as a new inode), plus `b.txt`, never touched. Returns the turn.
fn scenario(sidecar: &Path, ws: &Path) -> u64 {
    fs::write(ws.join("a.txt"), NEW).unwrap();
    fs::write(ws.join("b.txt"), b"untouched\n").unwrap();
    let mut store = open_at(sidecar, ws, Fs::without_sync());
    let turn = store
        .begin_turn(BeginTurn {
            prompt: "edit a".into(),
            ..BeginTurn::default()
        })
        .unwrap();
    store
        .capture_before(&[Change::new("a.txt", ChangeKind::Modify)], Some("write_file"))
        .unwrap();
    // The tool's atomic write: a new file renamed over the old one.
    fs::write(ws.join(".a.txt.tool.tmp"), OLD).unwrap();
    fs::rename(ws.join(".a.txt.tool.tmp"), ws.join("a.txt")).unwrap();
    store.capture_after(&[PathBuf::from("a.txt")]).unwrap();
    store.end_turn();
    turn
}

fn ino(p: &Path) -> u64 {
    fs::symlink_metadata(p).unwrap().ino()
}

fn links(p: &Path) -> u64 {
    fs::symlink_metadata(p).unwrap().nlink()
}

/// The blob of [`OLD`], the forward image of `a.txt`.
fn old_blob(sidecar: &Path) -> PathBuf {
    sidecar.join(forward_rel_path(&sha256_bytes(OLD)))
}

/// Every blob file, and every regular file of the workspace, by inode: none may be both.
fn assert_no_blob_is_a_workspace_file(sidecar: &Path, ws: &Path) {
    fn files(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                files(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut blobs = Vec::new();
    files(&sidecar.join("forward"), &mut blobs);
    files(&sidecar.join("blobs"), &mut blobs);
    let mut workspace = Vec::new();
    files(ws, &mut workspace);
    for b in &blobs {
        assert_eq!(links(b), 1, "blob {} has another name", b.display());
        for w in &workspace {
            assert_ne!(ino(b), ino(w), "blob {} is {}", b.display(), w.display());
        }
    }
}

#[test]
fn a_forward_image_is_the_replaced_inode_and_an_undo_writes_a_copy() {
    let s = Scratch::new().unwrap();
    let turn = scenario(&s.sidecar, &s.workspace);
    let a = s.workspace.join("a.txt");
    let before = ino(&a);
    assert_eq!(links(&a), 1);

    let mut store = open_at(&s.sidecar, &s.workspace, Fs::without_sync());
    let plan = store.plan_restore(turn).unwrap();
    let out = store.commit(&plan, confirm()).unwrap();
    assert_eq!(out.files_written, vec!["a.txt".to_string()]);

    // The blob is the inode the restore replaced: linked, not copied, and now its only name.
    let blob = old_blob(&s.sidecar);
    assert_eq!(ino(&blob), before, "the forward image was copied, not linked");
    assert_eq!(links(&blob), 1);
    assert_eq!(fs::read(&blob).unwrap(), OLD);
    // The workspace file is the restore's temp file: another inode.
    assert_ne!(ino(&a), before);
    assert_eq!(fs::read(&a).unwrap(), NEW);
    assert_no_blob_is_a_workspace_file(&s.sidecar, &s.workspace);

    // Undo writes the forward image back as a copy of the blob, never as a link to it.
    store.undo(out.transaction_id.as_deref().unwrap()).unwrap();
    assert_eq!(fs::read(&a).unwrap(), OLD);
    assert_ne!(
        ino(&a),
        ino(&blob),
        "undo linked the blob back into the workspace"
    );
    assert_eq!(links(&a), 1);
    assert_no_blob_is_a_workspace_file(&s.sidecar, &s.workspace);
    // Writing into the workspace file in place cannot reach any blob.
    fs::write(&a, b"edited in place after the undo\n").unwrap();
    assert_eq!(fs::read(&blob).unwrap(), OLD);
    assert!(store.fsck().problems.is_empty(), "{:?}", store.fsck().problems);
}

/// Runs the scenario's restore in `s` with a process that dies at the rename of the target: the
/// third `rename` after the temp file's fsync (the blob's, the `committing` manifest's, then the
/// target's), counted in a dry run of the same scenario. Returns the target's inode.
fn die_at_the_target_rename(s: &Scratch) -> u64 {
    let dry = Scratch::new().unwrap();
    let turn = scenario(&dry.sidecar, &dry.workspace);
    let count = FaultInjector::crash_at(0);
    let mut store = open_at(
        &dry.sidecar,
        &dry.workspace,
        Fs::without_sync().with_faults(count.clone()),
    );
    let plan = store.plan_restore(turn).unwrap();
    let start = count.steps() as usize;
    store.commit(&plan, confirm()).unwrap();
    let trail = count.trail();
    assert!(trail[start..].iter().any(|l| l == "link_blob"), "{trail:?}");
    let synced = (start..trail.len()).find(|i| trail[*i] == "sync_temp").unwrap();
    let rename = (synced..trail.len())
        .filter(|i| trail[*i] == "rename")
        .nth(2)
        .unwrap();

    let turn = scenario(&s.sidecar, &s.workspace);
    let before = ino(&s.workspace.join("a.txt"));
    let inj = FaultInjector::crash_at(rename as u64 + 1);
    let mut store = open_at(
        &s.sidecar,
        &s.workspace,
        Fs::without_sync().with_faults(inj.clone()),
    );
    let plan = store.plan_restore(turn).unwrap();
    store.commit(&plan, confirm()).unwrap_err();
    assert!(inj.crashed());
    assert_eq!(
        inj.trail().last().map(String::as_str),
        Some("rename"),
        "{:?}",
        inj.trail()
    );
    // Dead: no clean-up of any kind.
    std::mem::forget(store);
    before
}

#[test]
fn before_the_rename_the_blob_is_the_target_itself_and_recovery_unshares_it() {
    let s = Scratch::new().unwrap();
    let before = die_at_the_target_rename(&s);
    let a = s.workspace.join("a.txt");

    // Dead between the blob's rename and the target's: the blob is the target's own inode.
    let blob = old_blob(&s.sidecar);
    assert_eq!(ino(&blob), before);
    assert_eq!(ino(&a), before);
    assert_eq!(links(&a), 2);

    // Recovery rolls back (the target was never renamed) and gives the blob an inode of its own.
    let store = open_at(&s.sidecar, &s.workspace, Fs::without_sync());
    assert_eq!(fs::read(&a).unwrap(), OLD);
    assert_eq!(ino(&a), before);
    assert_eq!(links(&a), 1);
    assert_eq!(fs::read(&blob).unwrap(), OLD);
    assert_ne!(ino(&blob), before);
    assert_no_blob_is_a_workspace_file(&s.sidecar, &s.workspace);
    let errors: Vec<_> = store.fsck().problems;
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn a_target_written_in_place_through_its_linked_blob_keeps_the_users_bytes() {
    let s = Scratch::new().unwrap();
    let before = die_at_the_target_rename(&s);
    let a = s.workspace.join("a.txt");
    // The user writes into the file in place (same inode), which is also the blob's.
    fs::write(&a, b"the user's own bytes\n").unwrap();
    assert_eq!(ino(&a), before);
    let blob = old_blob(&s.sidecar);
    assert_eq!(fs::read(&blob).unwrap(), b"the user's own bytes\n");

    // Recovery keeps the user's file as it is, and drops the blob: it no longer holds its name's
    // bytes, and it must not stay a name of the workspace file.
    let store = open_at(&s.sidecar, &s.workspace, Fs::without_sync());
    assert_eq!(fs::read(&a).unwrap(), b"the user's own bytes\n");
    assert_eq!(ino(&a), before);
    assert_eq!(links(&a), 1);
    assert!(!blob.exists(), "a blob that does not hash to its name was kept");
    assert_no_blob_is_a_workspace_file(&s.sidecar, &s.workspace);
    let errors: Vec<_> = store.fsck().problems;
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn a_target_with_another_link_is_copied() {
    let s = Scratch::new().unwrap();
    let turn = scenario(&s.sidecar, &s.workspace);
    let a = s.workspace.join("a.txt");
    let before = ino(&a);
    // A second name for the target, outside the workspace: linking it into the store would leave the
    // blob writable through that name after the restore.
    let other = s.tmp.path().join("a-other-name");
    fs::hard_link(&a, &other).unwrap();

    let count = FaultInjector::crash_at(0);
    let mut store = open_at(
        &s.sidecar,
        &s.workspace,
        Fs::without_sync().with_faults(count.clone()),
    );
    let plan = store.plan_restore(turn).unwrap();
    store.commit(&plan, confirm()).unwrap();
    // Copied when the blob was made (not linked and then made a copy afterwards).
    let trail = count.trail();
    assert!(!trail.iter().any(|l| l == "link_blob"), "{trail:?}");
    assert!(trail.iter().any(|l| l == "write_blob"), "{trail:?}");

    let blob = old_blob(&s.sidecar);
    assert_ne!(
        ino(&blob),
        before,
        "a file with two links was linked into the store"
    );
    assert_eq!(links(&blob), 1);
    assert_eq!(fs::read(&blob).unwrap(), OLD);
    assert_eq!(ino(&other), before);
    assert_eq!(links(&other), 1);
    fs::write(&other, b"written through the other name\n").unwrap();
    assert_eq!(fs::read(&blob).unwrap(), OLD);
    assert_eq!(fs::read(&a).unwrap(), NEW);
    assert_no_blob_is_a_workspace_file(&s.sidecar, &s.workspace);
}

#[test]
fn a_stale_link_or_a_shared_blob_is_never_written_through_nor_trusted() {
    let s = Scratch::new().unwrap();
    let turn = scenario(&s.sidecar, &s.workspace);
    let a = s.workspace.join("a.txt");
    let before = ino(&a);
    let mut store = open_at(&s.sidecar, &s.workspace, Fs::without_sync());
    let plan = store.plan_restore(turn).unwrap();

    // After the store opened (recovery removes stale temp files), two traps in the blob store:
    // - the blob's temp name is a link to `b.txt` (a crash of another linked restore could leave
    //   that): it must be unlinked, never truncated or written through;
    // - the blob of OLD already exists, but as another name of `c.txt` (same bytes, not in the
    //   restore): it must not count as the stored forward image.
    let blob = old_blob(&s.sidecar);
    let dir = blob.parent().unwrap();
    fs::create_dir_all(dir).unwrap();
    let b = s.workspace.join("b.txt");
    let stale = dir.join(format!(".{}.tmp", sha256_bytes(OLD)));
    fs::hard_link(&b, &stale).unwrap();
    let c = s.workspace.join("c.txt");
    fs::write(&c, OLD).unwrap();
    fs::hard_link(&c, &blob).unwrap();

    store.commit(&plan, confirm()).unwrap();
    assert_eq!(fs::read(&b).unwrap(), b"untouched\n");
    assert_eq!(links(&b), 1);
    assert_eq!(ino(&blob), before, "the shared blob was trusted");
    assert_eq!(links(&blob), 1);
    assert_eq!(links(&c), 1);
    fs::write(&c, b"c edited in place\n").unwrap();
    assert_eq!(fs::read(&blob).unwrap(), OLD);
    assert_no_blob_is_a_workspace_file(&s.sidecar, &s.workspace);
}

#[test]
fn a_sidecar_on_another_file_system_gets_copies() {
    // /dev/shm is a tmpfs where there is one; the scratch workspace is elsewhere (EXDEV).
    let shm = Path::new("/dev/shm");
    let Ok(side) = tempfile::tempdir_in(shm) else {
        eprintln!("SKIPPED: no writable /dev/shm");
        return;
    };
    let s = Scratch::new().unwrap();
    if fs::metadata(shm).unwrap().dev() == fs::metadata(&s.workspace).unwrap().dev() {
        eprintln!("SKIPPED: /dev/shm and the scratch directory are one file system");
        return;
    }
    let sidecar = side.path().join("s.ckpt");
    let turn = scenario(&sidecar, &s.workspace);
    let a = s.workspace.join("a.txt");
    let before = ino(&a);
    let mut store = open_at(&sidecar, &s.workspace, Fs::without_sync());
    let plan = store.plan_restore(turn).unwrap();
    store.commit(&plan, confirm()).unwrap();
    let blob = old_blob(&sidecar);
    assert_eq!(fs::read(&blob).unwrap(), OLD);
    assert_eq!(links(&blob), 1);
    assert_ne!(
        fs::metadata(&blob).unwrap().dev(),
        fs::metadata(&a).unwrap().dev()
    );
    assert_ne!(ino(&a), before);
    assert_eq!(fs::read(&a).unwrap(), NEW);
}
