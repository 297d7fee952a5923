//! A restore on a read-only workspace (issue 25 item 6): the commit fails with the failure that
//! stopped it — the rename of the file to delete, the temp file of the file to write, each naming
//! the workspace file — never with the removal of a temp file that was never made; nothing is
//! written, no transaction is left open (a later open has nothing to recover and `fsck` nothing to
//! say), and once the file system is writable again the restore works.
//!
//! A read-only file system is what makes `unlink` of a name that is not there fail (`EROFS`
//! comes before the lookup), so the test needs a real one: a tmpfs mounted in a private mount
//! namespace (`unshare -m`, root or CAP_SYS_ADMIN), remounted read-only; this test binary is
//! re-executed inside it as the child. Where that is not possible the test fails, naming why: it
//! never passes without having run.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use retrace_checkpoint::tx::TxState;
use retrace_checkpoint::{BeginTurn, Change, CheckpointError, CheckpointStore, CommitOptions, StoreOptions};
use retrace_fsutil::Fs;
use retrace_protocol::{ChangeKind, OnConflict, Severity};

/// The child test's full name (`--exact`): its module in the `tests/all` binary, then its name.
const CHILD_TEST: &str = "restore_read_only::read_only_child";
const ENV_BASE: &str = "RETRACE_READ_ONLY_BASE";
const START: &str = "READ-ONLY-CHILD-START";

fn opts() -> StoreOptions {
    StoreOptions {
        fs: Fs::durable(),
        clock: Arc::new(|| time::OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()),
        ..StoreOptions::default()
    }
}

#[test]
fn a_restore_on_a_read_only_workspace_reports_what_failed() {
    let base = tempfile::tempdir().unwrap();
    let mnt = base.path().join("ws");
    fs::create_dir(&mnt).unwrap();
    let exe = std::env::current_exe().unwrap();
    let script = r#"mount -t tmpfs -o size=4m,mode=0755 tmpfs "$0" || exit 97; exec "$@""#;
    let out = Command::new("unshare")
        .args(["-m", "sh", "-c", script])
        .arg(&mnt)
        .arg(&exe)
        .args([
            "--exact",
            CHILD_TEST,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ENV_BASE, base.path())
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap_or_else(|e| panic!("cannot run `unshare`: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains(START),
        "no tmpfs in a private mount namespace (`unshare -m` + `mount -t tmpfs`, needs root or CAP_SYS_ADMIN): {}: {}",
        out.status,
        stderr.trim()
    );
    assert!(
        out.status.success(),
        "the read-only child failed: {}\n{stdout}\n{stderr}",
        out.status
    );
}

fn mount(args: &[&str], at: &Path) {
    let status = Command::new("mount").args(args).arg(at).status().unwrap();
    assert!(status.success(), "mount {args:?} {}", at.display());
}

fn begin(store: &mut CheckpointStore) {
    store.begin_turn(BeginTurn::default()).unwrap();
}

fn agent_write(store: &mut CheckpointStore, ws: &Path, rel: &str, kind: ChangeKind, bytes: &[u8]) {
    store
        .capture_before(&[Change::new(rel, kind)], Some("write_file"))
        .unwrap();
    fs::write(ws.join(rel), bytes).unwrap();
    store.capture_after(&[PathBuf::from(rel)]).unwrap();
}

fn commit(
    store: &mut CheckpointStore,
    plan: &retrace_checkpoint::RestorePlan,
) -> Result<(), CheckpointError> {
    store
        .commit(
            plan,
            CommitOptions {
                confirm: true,
                on_conflict: OnConflict::Refuse,
            },
        )
        .map(|_| ())
}

/// Fails with `op` on `ws/<rel>`, and says nothing of removing anything.
fn assert_failed(got: Result<(), CheckpointError>, op: &str, ws: &Path, rel: &str) {
    let e = got.expect_err("a restore on a read-only workspace cannot succeed");
    let shown = e.to_string();
    match &e {
        CheckpointError::Io { op: got_op, path, .. } => {
            assert_eq!(*got_op, op, "{shown}");
            assert_eq!(path, &ws.join(rel), "{shown}");
        }
        other => panic!("not an I/O error naming the file: {other:?}"),
    }
    assert!(shown.contains("Read-only file system"), "{shown}");
    assert!(!shown.starts_with("remove"), "{shown}");
}

/// Every transaction ended (none left for recovery), and a reopen finds nothing to say.
fn assert_settled(store: &CheckpointStore, sidecar: &Path, ws: &Path) {
    for m in store.transactions() {
        assert!(
            matches!(m.state, TxState::Aborted | TxState::Committed | TxState::Undone),
            "transaction {} left {:?}",
            m.id,
            m.state
        );
    }
    let again = CheckpointStore::open(sidecar, ws, opts()).unwrap();
    let serious: Vec<_> = again
        .load_problems()
        .iter()
        .filter(|p| p.severity >= Severity::Warning)
        .collect();
    assert!(serious.is_empty(), "{serious:#?}");
    assert!(again.fsck().ok);
}

/// The child: inside the mount namespace, where `<base>/ws` is a tmpfs of its own.
#[test]
#[ignore = "the child process of a_restore_on_a_read_only_workspace_reports_what_failed"]
fn read_only_child() {
    let Some(base) = std::env::var_os(ENV_BASE) else {
        eprintln!("{CHILD_TEST}: not started by the read-only test; nothing to do");
        return;
    };
    println!("\n{START}");
    let base = PathBuf::from(base);
    let ws = fs::canonicalize(base.join("ws")).unwrap();
    let sidecar = base.join("sidecar");
    fs::write(ws.join("a.txt"), b"a0").unwrap();
    let mut store = CheckpointStore::open(&sidecar, &ws, opts()).unwrap();
    // Turn 0 creates b.txt, turn 1 rewrites a.txt.
    begin(&mut store);
    agent_write(&mut store, &ws, "b.txt", ChangeKind::Create, b"b0");
    begin(&mut store);
    agent_write(&mut store, &ws, "a.txt", ChangeKind::Modify, b"a1");
    store.end_turn();
    mount(&["-o", "remount,ro"], &ws);

    // A delete only (a revert of b.txt, which the session created): the rename fails.
    let plan = store.plan_file_revert(Path::new("b.txt")).unwrap();
    assert_failed(commit(&mut store, &plan), "rename", &ws, "b.txt");
    // A write (the restore to turn 1): its temp file cannot be made.
    let plan = store.plan_restore(1).unwrap();
    assert_failed(commit(&mut store, &plan), "write", &ws, "a.txt");
    // Both (the restore to turn 0: writes come first).
    let plan = store.plan_restore(0).unwrap();
    assert_failed(commit(&mut store, &plan), "write", &ws, "a.txt");
    assert_eq!(fs::read(ws.join("a.txt")).unwrap(), b"a1");
    assert_eq!(fs::read(ws.join("b.txt")).unwrap(), b"b0");
    assert_eq!(
        fs::read_dir(&ws).unwrap().count(),
        2,
        "nothing else in the workspace"
    );
    assert_settled(&store, &sidecar, &ws);

    // Writable again: the restore works.
    mount(&["-o", "remount,rw"], &ws);
    drop(store);
    let mut store = CheckpointStore::open(&sidecar, &ws, opts()).unwrap();
    let plan = store.plan_restore(0).unwrap();
    commit(&mut store, &plan).unwrap();
    assert_eq!(fs::read(ws.join("a.txt")).unwrap(), b"a0");
    assert!(!ws.join("b.txt").exists());
    println!("read-only child: ok");
}
