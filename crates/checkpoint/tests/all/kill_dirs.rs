//! A restore, an undo or a redo killed at any durable step leaves no empty directory behind once
//! the store is reopened (issue 25 item 4): a turn created `d/e/f.txt` (and so `d/e`); its restore
//! removes the file and the directories, its undo puts all back, and its redo removes them again. Whatever step the process dies at, the
//! workspace afterwards holds the file in its directories or neither.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use retrace_checkpoint::model::Image;
use retrace_checkpoint::{BeginTurn, Change, CheckpointStore, Clock, CommitOptions, StoreOptions};
use retrace_fsutil::{sha256_bytes, FaultInjector, Fs};
use retrace_protocol::{ChangeKind, OnConflict};

fn clock() -> Clock {
    Arc::new(|| time::OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap())
}

fn open(sidecar: &Path, ws: &Path, fs_: Fs) -> CheckpointStore {
    let opts = StoreOptions {
        session_id: Some("kill-dirs".into()),
        fs: fs_,
        clock: clock(),
        ..StoreOptions::default()
    };
    CheckpointStore::open(sidecar, ws, opts).unwrap()
}

const CONFIRM: CommitOptions = CommitOptions {
    confirm: true,
    on_conflict: OnConflict::Refuse,
};

struct Run {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    sidecar: PathBuf,
}

impl Run {
    /// Turn 0 creates `d/e/f.txt`.
    fn new() -> Run {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        fs::create_dir(&ws).unwrap();
        let sidecar = tmp.path().join("s.ckpt");
        let mut store = open(&sidecar, &ws, Fs::without_sync());
        store.begin_turn(BeginTurn::default()).unwrap();
        let img = Image {
            existed: true,
            sha256: Some(sha256_bytes(b"f\n")),
            mode: Some(0o644),
        };
        let p = "d/e/f.txt";
        store
            .capture_before(
                &[Change::new(p, ChangeKind::Create).with_intent(img)],
                Some("write_file"),
            )
            .unwrap();
        fs::create_dir_all(ws.join("d/e")).unwrap();
        fs::write(ws.join(p), b"f\n").unwrap();
        let mode = <fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o644);
        fs::set_permissions(ws.join(p), mode).unwrap();
        store.capture_after(&[PathBuf::from(p)]).unwrap();
        store.finish_turn().unwrap();
        Run {
            _tmp: tmp,
            ws,
            sidecar,
        }
    }

    /// The file in its directories, or no `d` at all.
    fn all_or_nothing(&self, ctx: &str) {
        let f = self.ws.join("d/e/f.txt");
        if f.exists() {
            assert_eq!(fs::read(&f).unwrap(), b"f\n", "{ctx}");
        } else {
            assert!(!self.ws.join("d").exists(), "{ctx}: an empty directory was left");
        }
    }
}

#[test]
fn a_restore_killed_at_any_step_leaves_no_empty_directory() {
    for k in 1.. {
        let run = Run::new();
        let inj = FaultInjector::crash_at(k);
        let mut store = open(&run.sidecar, &run.ws, Fs::without_sync().with_faults(inj.clone()));
        let plan = store.plan_restore(0).unwrap();
        let done = store.commit(&plan, CONFIRM);
        let crashed = inj.crashed();
        std::mem::forget(store);
        drop(open(&run.sidecar, &run.ws, Fs::without_sync()));
        run.all_or_nothing(&format!("restore killed at step {k}"));
        // What recovery finished is recorded: a `d` the user makes again stays at the next open.
        if !run.ws.join("d").exists() {
            fs::create_dir(run.ws.join("d")).unwrap();
            drop(open(&run.sidecar, &run.ws, Fs::without_sync()));
            assert!(
                run.ws.join("d").is_dir(),
                "restore killed at step {k}: a directory made again was removed"
            );
            fs::remove_dir(run.ws.join("d")).unwrap();
        }
        if !crashed {
            done.unwrap();
            assert!(!run.ws.join("d").exists());
            break;
        }
    }
}

#[test]
fn an_undo_killed_at_any_step_leaves_no_empty_directory() {
    for k in 1.. {
        let run = Run::new();
        let mut store = open(&run.sidecar, &run.ws, Fs::without_sync());
        let plan = store.plan_restore(0).unwrap();
        let id = store.commit(&plan, CONFIRM).unwrap().transaction_id.unwrap();
        drop(store);
        assert!(!run.ws.join("d").exists());
        let inj = FaultInjector::crash_at(k);
        let mut store = open(&run.sidecar, &run.ws, Fs::without_sync().with_faults(inj.clone()));
        let done = store.undo(&id);
        let crashed = inj.crashed();
        std::mem::forget(store);
        drop(open(&run.sidecar, &run.ws, Fs::without_sync()));
        run.all_or_nothing(&format!("undo killed at step {k}"));
        if !crashed {
            done.unwrap();
            assert!(run.ws.join("d/e/f.txt").exists());
            break;
        }
    }
}

#[test]
fn a_redo_killed_at_any_step_leaves_no_empty_directory() {
    for k in 1.. {
        let run = Run::new();
        let mut store = open(&run.sidecar, &run.ws, Fs::without_sync());
        let plan = store.plan_restore(0).unwrap();
        let id = store.commit(&plan, CONFIRM).unwrap().transaction_id.unwrap();
        store.undo(&id).unwrap();
        drop(store);
        assert!(run.ws.join("d/e/f.txt").exists());
        let inj = FaultInjector::crash_at(k);
        let mut store = open(&run.sidecar, &run.ws, Fs::without_sync().with_faults(inj.clone()));
        let done = store.redo(&id);
        let crashed = inj.crashed();
        std::mem::forget(store);
        drop(open(&run.sidecar, &run.ws, Fs::without_sync()));
        run.all_or_nothing(&format!("redo killed at step {k}"));
        if !crashed {
            done.unwrap();
            assert!(!run.ws.join("d").exists());
            break;
        }
    }
}

/// A turn that made `g/h` for a file it then deleted leaves `g/h` empty; a restore removes it and
/// an undo must make it again — also when the undo is killed after it committed, before it made
/// the directories (the next open finishes that).
#[test]
fn an_undo_killed_after_it_committed_puts_back_the_empty_directories() {
    for k in 1.. {
        let run = Run::new();
        let mut store = open(&run.sidecar, &run.ws, Fs::without_sync());
        store.begin_turn(BeginTurn::default()).unwrap();
        let x = "g/h/x.txt";
        let img = Image {
            existed: true,
            sha256: Some(sha256_bytes(b"x\n")),
            mode: Some(0o644),
        };
        store
            .capture_before(
                &[Change::new(x, ChangeKind::Create).with_intent(img)],
                Some("write_file"),
            )
            .unwrap();
        fs::create_dir_all(run.ws.join("g/h")).unwrap();
        fs::write(run.ws.join(x), b"x\n").unwrap();
        store.capture_after(&[PathBuf::from(x)]).unwrap();
        store
            .capture_before(
                &[Change::new(x, ChangeKind::Delete).with_intent(Image::absent())],
                Some("delete_file"),
            )
            .unwrap();
        fs::remove_file(run.ws.join(x)).unwrap();
        store.capture_after(&[PathBuf::from(x)]).unwrap();
        // And an edit, so that the restore writes something.
        let f = "d/e/f.txt";
        let img = Image {
            existed: true,
            sha256: Some(sha256_bytes(b"f2\n")),
            mode: Some(0o644),
        };
        store
            .capture_before(
                &[Change::new(f, ChangeKind::Modify).with_intent(img)],
                Some("write_file"),
            )
            .unwrap();
        fs::write(run.ws.join(f), b"f2\n").unwrap();
        store.capture_after(&[PathBuf::from(f)]).unwrap();
        store.finish_turn().unwrap();
        let plan = store.plan_restore(1).unwrap();
        let id = store.commit(&plan, CONFIRM).unwrap().transaction_id.unwrap();
        drop(store);
        assert!(
            !run.ws.join("g").exists(),
            "the restore removed the empty directories"
        );
        let inj = FaultInjector::crash_at(k);
        let mut store = open(&run.sidecar, &run.ws, Fs::without_sync().with_faults(inj.clone()));
        let done = store.undo(&id);
        let crashed = inj.crashed();
        std::mem::forget(store);
        let store = open(&run.sidecar, &run.ws, Fs::without_sync());
        let undone = store.undo_target().is_none_or(|m| m.id != id);
        assert_eq!(
            run.ws.join("g/h").is_dir(),
            undone,
            "undo killed at step {k}: the directories do not follow the undo"
        );
        if !crashed {
            done.unwrap();
            assert!(run.ws.join("g/h").is_dir());
            break;
        }
    }
}
