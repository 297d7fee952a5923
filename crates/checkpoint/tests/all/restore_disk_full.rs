//! Disk full during a code restore (TESTING.md layer 3): the commit fails with a clear error that
//! names a path, the workspace is left exactly as it was, no transaction file is left in it, and the
//! next open (recovery) cleans the sidecar so that a restore works once there is room.
//!
//! What a restore needs room for: its manifest, a temp file beside each target it writes, and its
//! pack of forward images (copies, never links). The scenario runs twice: as is, and with every
//! workspace file given a second name outside the workspace (which must change nothing: a forward
//! image is a copy either way). ENOSPC hits the manifest, the temp files and the pack.
//!
//! Two ways to run out of space, tried in order:
//! 1. a small tmpfs mounted in a private mount namespace (`unshare -m`, needs root or
//!    CAP_SYS_ADMIN): this test binary is re-executed inside it as the child, which builds the
//!    workspace there, fills the file system so that only a part of what the restore needs is free,
//!    and commits — several times, so that ENOSPC hits the manifest, the temp files beside the
//!    targets and (forward images copied) the blobs;
//! 2. `strace -f -e inject=write:error=ENOSPC:when=K+` around the child that commits (the parent
//!    checks the workspace afterwards), for several K.
//!
//! Where neither is possible the test fails, naming why (CI installs `strace`): it never passes
//! without having run. `RETRACE_DISK_FULL_METHOD=tmpfs|strace` forces one of them.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::restore_support::*;
use retrace_checkpoint::tx::TxKind;
use retrace_checkpoint::CheckpointStore;
use retrace_fsutil::Fs;
use retrace_protocol::OnConflict;

/// The child test's full name (`--exact`): its module in the `tests/all` binary, then its name.
const CHILD_TEST: &str = "restore_disk_full::disk_full_child";
const ENV_MODE: &str = "RETRACE_DISK_FULL_CHILD";
const ENV_DIR: &str = "RETRACE_DISK_FULL_DIR";
const ENV_WS: &str = "RETRACE_DISK_FULL_WS";
const ENV_SIDECAR: &str = "RETRACE_DISK_FULL_SIDECAR";
const ENV_TURN: &str = "RETRACE_DISK_FULL_TURN";
const START: &str = "DISK-FULL-CHILD-START";
const RESULT: &str = "DISK-FULL-RESULT";
/// Files the scenario's turn edits.
const FILES: usize = 40;
/// Size of the tmpfs.
const TMPFS_SIZE: &str = "8m";
const PAGE: u64 = 4096;

/// The child of both methods. Run only by the parent test, with the environment set.
#[test]
#[ignore = "the child process of a_restore_that_runs_out_of_space_fails_cleanly"]
fn disk_full_child() {
    match std::env::var(ENV_MODE).ok().as_deref() {
        Some("tmpfs") => tmpfs_child(Path::new(&std::env::var_os(ENV_DIR).unwrap())),
        Some("strace") => strace_child(),
        _ => eprintln!("{CHILD_TEST}: not started by the disk-full test; nothing to do"),
    }
}

#[test]
fn a_restore_that_runs_out_of_space_fails_cleanly() {
    let forced = std::env::var("RETRACE_DISK_FULL_METHOD").ok();
    let mut why_not = Vec::new();
    if forced.as_deref() != Some("strace") {
        match via_tmpfs() {
            Ok(()) => return,
            Err(why) => why_not.push(why),
        }
    }
    if forced.as_deref() != Some("tmpfs") {
        match via_strace() {
            Ok(()) => {
                if !why_not.is_empty() {
                    let _ = writeln!(
                        io::stderr(),
                        "NOTE: disk-full restore test ran under strace instead: {}",
                        why_not.join("; ")
                    );
                }
                return;
            }
            Err(why) => why_not.push(why),
        }
    }
    panic!(
        "the disk-full restore test could not run: no way to run out of space here ({}); install strace, or run as root for a private tmpfs",
        why_not.join("; ")
    );
}

fn child_command(program: &str) -> Command {
    let mut c = Command::new(program);
    c.env("RUST_BACKTRACE", "0");
    c
}

fn child_args() -> [&'static str; 5] {
    [
        "--exact",
        CHILD_TEST,
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `key=value` fields of the child's result lines.
fn results(stdout: &str) -> Vec<BTreeMap<String, String>> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix(RESULT))
        .map(|rest| {
            rest.split('\t')
                .filter_map(|f| f.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// 1. A small tmpfs in a private mount namespace.

fn via_tmpfs() -> Result<(), String> {
    let base = tempfile::tempdir().unwrap();
    let mnt = base.path().join("mnt");
    fs::create_dir(&mnt).unwrap();
    let exe = std::env::current_exe().unwrap();
    let script = format!(r#"mount -t tmpfs -o size={TMPFS_SIZE},mode=0700 tmpfs "$0" || exit 97; exec "$@""#);
    let out = child_command("unshare")
        .args(["-m", "sh", "-c", &script])
        .arg(&mnt)
        .arg(&exe)
        .args(child_args())
        .env(ENV_MODE, "tmpfs")
        .env(ENV_DIR, &mnt)
        .output()
        .map_err(|e| format!("cannot run `unshare`: {e}"))?;
    let (stdout, stderr) = text(&out);
    if !stdout.contains(START) {
        return Err(format!(
            "no tmpfs in a private mount namespace (`unshare -m` + `mount -t tmpfs`): {}: {}",
            out.status,
            stderr.trim()
        ));
    }
    assert!(
        out.status.success(),
        "the disk-full child failed: {}\n{stdout}\n{stderr}",
        out.status
    );
    let runs = results(&stdout);
    for r in &runs {
        eprintln!("disk full (tmpfs): {r:?}");
    }
    assert!(runs.len() >= 9, "{stdout}");
    let phases = |forward: Forward| -> BTreeSet<String> {
        runs.iter()
            .filter(|r| r["forward"] == forward.name())
            .map(|r| r["phase"].clone())
            .collect()
    };
    let linked = phases(Forward::Linked);
    // Forward images are copies in the pack: they need room like the temp files do.
    for p in ["manifest", "temp", "blob"] {
        assert!(linked.contains(p), "ENOSPC never hit the {p} writes: {linked:?}");
    }
    let copied = phases(Forward::Copied);
    for p in ["blob", "temp"] {
        assert!(
            copied.contains(p),
            "ENOSPC never hit the {p} writes (copied forward images): {copied:?}"
        );
    }
    Ok(())
}

/// The scenario's two shapes: forward images are copied into the pack in both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Forward {
    /// As is: each target is a file with one link.
    Linked,
    /// Every workspace file has a second name outside the workspace.
    Copied,
}

impl Forward {
    fn name(self) -> &'static str {
        match self {
            Forward::Linked => "linked",
            Forward::Copied => "copied",
        }
    }

    /// Sets the scenario up for this way.
    fn apply(self, sc: &Scenario) {
        if self == Forward::Copied {
            let dir = sc.scratch.tmp.path().join("other-names");
            fs::create_dir_all(&dir).unwrap();
            for k in sc.forward.keys() {
                fs::hard_link(sc.root.join(k), dir.join(k.replace('/', "_"))).unwrap();
            }
        }
    }
}

/// Fills the file system of `dir` with `filler` until it is full, then frees `free` bytes.
fn fill(filler: &Path, free: u64) {
    let mut f = OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(filler)
        .unwrap();
    let chunk = vec![0x5au8; 256 << 10];
    let mut len = 0u64;
    loop {
        match f.write(&chunk) {
            Ok(0) => break,
            Ok(n) => len += n as u64,
            Err(e) if e.raw_os_error() == Some(28) => break,
            Err(e) => panic!("filling the tmpfs: {e}"),
        }
    }
    assert!(len > free, "the tmpfs is too small for the scenario");
    f.set_len(len - free).unwrap();
}

fn pages(n: usize) -> u64 {
    (n as u64).div_ceil(PAGE) * PAGE
}

/// Bytes the files of a restore of the scenario take, page-rounded: a temp file per present restore
/// image, and the pack of the present forward images. The manifest (a few pages) comes on top.
fn restore_needs(sc: &Scenario, _forward: Forward) -> u64 {
    let targets: BTreeSet<&String> = sc
        .forward
        .keys()
        .chain(sc.restore.keys())
        .filter(|k| sc.forward.get(*k) != sc.restore.get(*k))
        .collect();
    let blobs: u64 = targets
        .iter()
        .filter_map(|k| sc.forward.get(*k))
        .map(|(b, _)| pages(b.len()))
        .sum();
    let temps: u64 = targets
        .iter()
        .filter_map(|k| sc.restore.get(*k))
        .map(|(b, _)| pages(b.len()))
        .sum();
    blobs + temps
}

fn classify(path: &Path, sc: &Scenario) -> &'static str {
    if path.starts_with(sc.sidecar().join("transactions")) {
        "manifest"
    } else if path.starts_with(sc.sidecar().join("forward")) || path.starts_with(sc.sidecar().join("blobs")) {
        "blob"
    } else if path.starts_with(&sc.root) {
        "temp"
    } else {
        "other"
    }
}

fn tmpfs_child(mnt: &Path) {
    println!("\n{START}");
    let known = BTreeSet::new();
    let filler = mnt.join("filler");
    // Free space as a share of what the restore needs: none (the manifest cannot be written), then
    // more and more, so that ENOSPC hits the manifest, the blobs (when copied) and the temp files.
    let runs: [(Forward, &[u64]); 2] = [
        (Forward::Linked, &[0, 2, 10, 30, 50, 70, 85]),
        (Forward::Copied, &[10, 30, 70, 85]),
    ];
    for (forward, share) in runs
        .iter()
        .flat_map(|(f, shares)| shares.iter().map(move |s| (*f, *s)))
    {
        let sc = wide_scenario_in(scratch_in(mnt), FILES);
        forward.apply(&sc);
        let needs = restore_needs(&sc, forward);
        let free = needs * share / 100;
        let mut store = CheckpointStore::open(sc.sidecar(), &sc.root, opts(Fs::durable())).unwrap();
        let plan = store.plan_restore(sc.turn).unwrap();
        fill(&filler, free);
        let err = store
            .commit(&plan, confirm(OnConflict::Refuse))
            .err()
            .unwrap_or_else(|| panic!("the restore needs {needs} bytes and fit in {free}"));
        let ctx = format!("{free} of {needs} bytes free, forward images {}", forward.name());
        let path =
            enospc_path(&err).unwrap_or_else(|| panic!("{ctx}: not an ENOSPC error naming a path: {err:?}"));
        let shown = err.to_string();
        assert!(
            shown.contains(&path.display().to_string()),
            "{ctx}: the message does not name the path: {shown}"
        );
        let phase = classify(&path, &sc);
        check_unchanged(&sc, &ctx);
        // Reopening while the disk is still full must not make anything worse.
        drop(store);
        let full_open = match CheckpointStore::open(sc.sidecar(), &sc.root, opts(Fs::durable())) {
            Ok(_) => "ok".to_string(),
            Err(e) => {
                assert!(enospc_path(&e).is_some(), "{ctx}: recovery on a full disk: {e}");
                "enospc".to_string()
            }
        };
        check_unchanged(&sc, &ctx);
        fs::remove_file(&filler).unwrap();
        recovered_then_restore(&sc, &known, &ctx);
        println!(
            "{RESULT}\tforward={}\tfree={free}\tneeds={needs}\tphase={phase}\topen_while_full={full_open}\terror={shown}",
            forward.name()
        );
    }
}

/// Right after the failure: the workspace is exactly the forward images, with nothing added, and no
/// blob is still a name of a workspace file.
fn check_unchanged(sc: &Scenario, ctx: &str) {
    let leftovers = transaction_leftovers(&sc.root);
    assert!(
        leftovers.is_empty(),
        "{ctx}: left in the workspace: {leftovers:?}"
    );
    let shared = shared_blobs(sc.sidecar());
    assert!(
        shared.is_empty(),
        "{ctx}: blobs still sharing an inode with a workspace file: {shared:?}"
    );
    let ws = snapshot(&sc.root);
    assert!(
        ws == sc.forward,
        "{ctx}: the workspace changed:\n{}",
        diff(&ws, &sc.forward)
    );
}

/// With room again: recovery leaves the forward images, changes nothing the second time, and a
/// restore works.
fn recovered_then_restore(sc: &Scenario, known: &BTreeSet<String>, ctx: &str) {
    let mut store = open_healthy(sc.sidecar(), &sc.root);
    let expect = Expect {
        before: &sc.forward,
        after: &sc.restore,
        kind: TxKind::Restore,
        known,
    };
    assert!(!check_recovered(&store, &sc.root, sc.sidecar(), &expect, ctx));
    check_idempotent(&store, &sc.root, sc.sidecar(), ctx);
    let out = restore_now(&mut store, sc.turn, OnConflict::Refuse);
    assert!(out.conflicts.is_empty(), "{ctx}: {:?}", out.conflicts);
    let ws = snapshot(&sc.root);
    assert!(
        ws == sc.restore,
        "{ctx}: restore with room:\n{}",
        diff(&ws, &sc.restore)
    );
}

// ---------------------------------------------------------------------------------------------
// 2. strace fault injection.

fn via_strace() -> Result<(), String> {
    let exe = std::env::current_exe().unwrap();
    // What the commit writes, in order, one write(2) each (every file is under the 64 KiB chunk):
    // the manifest, a temp per present restore image, a slice of the pack per present forward image,
    // then the manifest again. The harness's own threads write fewer than 10 times, so K starts at
    // 10.
    let probe = wide_scenario(FILES);
    let blobs = probe
        .forward
        .keys()
        .filter(|k| probe.forward.get(*k) != probe.restore.get(*k))
        .count();
    let temps = probe
        .restore
        .keys()
        .filter(|k| probe.forward.get(*k) != probe.restore.get(*k))
        .count();
    drop(probe);
    let runs = [
        (Forward::Linked, 10),
        (Forward::Linked, 1 + temps / 2),
        (Forward::Linked, 2 + temps + blobs),
        (Forward::Copied, 1 + temps / 2),
        (Forward::Copied, 1 + temps + blobs / 2),
    ];
    let mut phases = BTreeSet::new();
    for (forward, k) in runs {
        let sc = wide_scenario(FILES);
        forward.apply(&sc);
        let known = BTreeSet::new();
        let out = child_command("strace")
            .args(["-f", "-qq", "-o", "/dev/null", "-e", "trace=write"])
            .arg(format!("-e inject=write:error=ENOSPC:when={k}+").replace("-e ", "--"))
            .arg("--")
            .arg(&exe)
            .args(child_args())
            .env(ENV_MODE, "strace")
            .env(ENV_WS, &sc.root)
            .env(ENV_SIDECAR, sc.sidecar())
            .env(ENV_TURN, sc.turn.to_string())
            .output()
            .map_err(|e| format!("cannot run `strace`: {e}"))?;
        let (stdout, stderr) = text(&out);
        if !stdout.contains(START) {
            return Err(format!(
                "`strace -e inject=write:error=ENOSPC` did not run the child: {}: {}",
                out.status,
                stderr.trim()
            ));
        }
        let ctx = format!("ENOSPC from write #{k} on, forward images {}", forward.name());
        let r = results(&stdout);
        let r = r.first().unwrap_or_else(|| {
            panic!(
                "{ctx}: no result from the child ({}):\n{stdout}\n{stderr}",
                out.status
            )
        });
        eprintln!("disk full (strace, {}): {r:?}", forward.name());
        assert_eq!(r["enospc"], "true", "{ctx}: {r:?}");
        let path = PathBuf::from(&r["path"]);
        assert!(
            r["error"].contains(&r["path"]),
            "{ctx}: the message does not name the path: {r:?}"
        );
        phases.insert((forward, classify(&path, &sc)));
        check_unchanged(&sc, &ctx);
        recovered_then_restore(&sc, &known, &ctx);
    }
    for (forward, p) in [
        (Forward::Linked, "temp"),
        (Forward::Linked, "manifest"),
        (Forward::Copied, "blob"),
        (Forward::Copied, "temp"),
    ] {
        assert!(
            phases.contains(&(forward, p)),
            "ENOSPC never hit the {p} writes (forward images {}): {phases:?}",
            forward.name()
        );
    }
    Ok(())
}

/// Commits on a thread of its own: strace counts writes per thread, so K counts the commit's writes.
fn strace_child() {
    let ws = PathBuf::from(std::env::var_os(ENV_WS).unwrap());
    let sidecar = PathBuf::from(std::env::var_os(ENV_SIDECAR).unwrap());
    let turn: u64 = std::env::var(ENV_TURN).unwrap().parse().unwrap();
    let mut store = CheckpointStore::open(&sidecar, &ws, opts(Fs::durable())).unwrap();
    let plan = store.plan_restore(turn).unwrap();
    let res = std::thread::spawn(move || store.commit(&plan, confirm(OnConflict::Refuse)))
        .join()
        .unwrap();
    let line = match res {
        Ok(_) => format!("{RESULT}\tenospc=false\terror=none"),
        Err(e) => {
            let path = enospc_path(&e);
            format!(
                "{RESULT}\tenospc={}\tpath={}\terror={e}",
                path.is_some(),
                path.map(|p| p.display().to_string()).unwrap_or_default()
            )
        }
    };
    println!("\n{START}\n{line}");
}
