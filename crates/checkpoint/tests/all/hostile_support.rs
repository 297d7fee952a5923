//! Helpers of the hostile-workspace tests (`hostile.rs`, `hostile_races.rs`, `restore_dirs.rs`): a
//! store on a scratch workspace, agent edits through the capture seam, and the fault injector's
//! view of one restore (its durable steps, the one that publishes).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use retrace_checkpoint::{BeginTurn, Change, CheckpointStore, CommitOptions, StoreOptions};
use retrace_fsutil::{FaultInjector, Fs};
use retrace_protocol::{ChangeKind, OnConflict};
use retrace_testkit::Scratch;

/// The store of `s`, on a layer without fsync.
pub fn open(s: &Scratch) -> CheckpointStore {
    let opts = StoreOptions {
        fs: Fs::without_sync(),
        ..StoreOptions::default()
    };
    CheckpointStore::open(&s.sidecar, &s.workspace, opts).unwrap()
}

/// The store of `s`, its file-system layer run by `inj`.
pub fn faulty(s: &Scratch, inj: &Arc<FaultInjector>) -> CheckpointStore {
    let opts = StoreOptions {
        fs: Fs::without_sync().with_faults(inj.clone()),
        ..StoreOptions::default()
    };
    CheckpointStore::open(&s.sidecar, &s.workspace, opts).unwrap()
}

pub fn begin(store: &mut CheckpointStore) -> u64 {
    store.begin_turn(BeginTurn::default()).unwrap()
}

/// One tool call: capture, then write `bytes` (making the parents, as the tools do) or delete.
pub fn edit(store: &mut CheckpointStore, s: &Scratch, path: &str, bytes: Option<&[u8]>) {
    store
        .capture_before(&[Change::new(path, ChangeKind::Modify)], Some("write_file"))
        .unwrap();
    match bytes {
        Some(b) => s.write(path, b).unwrap(),
        None => fs::remove_file(s.workspace.join(path)).unwrap(),
    }
    store.capture_after(&[PathBuf::from(path)]).unwrap();
}

/// A file one turn wrote: its path, its bytes before the turn (none: it did not exist), and the
/// bytes the agent wrote.
pub type Written<'a> = (&'a str, Option<&'a [u8]>, &'a [u8]);

/// A scratch workspace holding `files` after one turn that wrote them all; the store is closed.
/// Returns it and the turn.
pub fn agent_turn(files: &[Written]) -> (Scratch, u64) {
    let s = Scratch::new().unwrap();
    for (p, before, _) in files {
        if let Some(b) = before {
            s.write(p, b).unwrap();
        }
    }
    let mut store = open(&s);
    let t = begin(&mut store);
    for (p, _, after) in files {
        edit(&mut store, &s, p, Some(after));
    }
    store.end_turn();
    (s, t)
}

pub fn choice(on_conflict: OnConflict) -> CommitOptions {
    CommitOptions {
        confirm: true,
        on_conflict,
    }
}

pub fn read(s: &Scratch, p: &str) -> Option<Vec<u8>> {
    fs::read(s.workspace.join(p)).ok()
}

pub fn mkfifo(p: &Path) {
    assert!(Command::new("mkfifo").arg(p).status().unwrap().success());
}

/// The labels of the durable steps of a restore of `s` to turn `t`, nothing failing.
pub fn restore_trail(s: &Scratch, t: u64) -> Vec<String> {
    let counting = FaultInjector::crash_at(0);
    let mut store = faulty(s, &counting);
    let plan = store.plan_restore(t).unwrap();
    store.commit(&plan, choice(OnConflict::Refuse)).unwrap();
    counting.trail()
}

/// The 1-based number, in `trail`, of the step that renames the first target into place: the
/// `rename` right after the `committing` manifest's directory fsync.
pub fn publishing_rename(trail: &[String]) -> u64 {
    (1..trail.len())
        .find(|&i| trail[i] == "rename" && trail[i - 1] == "sync_dir")
        .unwrap() as u64
        + 1
}
