//! Peak memory (TESTING.md "Benchmarks" 6): capturing and restoring a large file (32 MiB).
//!
//! Each side runs in a fresh child process (this binary, hidden command `__mem`) so that its peak
//! resident set is its own: Retrace's side does the work in-process and reports its own high-water
//! mark (`VmHWM`; not `ru_maxrss`, which Linux carries over from the parent across `exec`); git's
//! side runs git and reports the largest `ru_maxrss` among the git processes it waited for (each
//! may carry over the small probe's own size, never the harness's). An idle child gives the
//! baseline of this binary.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use nix::sys::resource::{getrusage, UsageWho};
use retrace_checkpoint::Limits;
use retrace_fsutil::hash_reader;

use crate::ours::{Ours, Rewind};
use crate::shadow::ShadowGit;
use crate::tree::{binary, Manifest, Rng};

/// Writes `len` seeded random bytes at `path` in 64 KiB chunks (never whole in memory).
pub fn write_big(path: &Path, seed: u64, len: u64) -> Result<()> {
    let mut rng = Rng::new(seed);
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .with_context(|| format!("open {}", path.display()))?;
    let mut left = len;
    while left > 0 {
        let n = left.min(64 << 10);
        f.write_all(&binary(&mut rng, n as usize))?;
        left -= n;
    }
    Ok(())
}

/// SHA-256 of a file, streamed.
pub fn sha_of(path: &Path) -> Result<String> {
    Ok(hash_reader(File::open(path).with_context(|| format!("open {}", path.display()))?)?.0)
}

/// Peak resident set sizes, in bytes.
#[derive(Debug, Clone, Copy)]
pub struct Peaks {
    /// Retrace's process: capture, edit, after-image, plan, durable restore.
    pub ours: u64,
    /// The largest git process: `add -A`, `commit`, `reset --hard`.
    pub git: u64,
    /// This binary doing nothing.
    pub baseline: u64,
}

/// Runs the three probes. `rel` must exist in both workspaces with the same bytes, and be
/// committed in `git`'s shadow repository; afterwards both hold those bytes again.
pub fn measure(
    exe: &Path,
    ours_ws: &Path,
    sidecar: &Path,
    git: &ShadowGit,
    rel: &str,
    seed: u64,
    len: u64,
) -> Result<Peaks> {
    let probe = |args: &[&std::ffi::OsStr]| -> Result<u64> {
        let out = Command::new(exe)
            .arg("__mem")
            .args(args)
            .env(crate::shadow::TAG_VAR, git.tag())
            .output()
            .context("run the memory probe")?;
        if !out.status.success() {
            bail!(
                "memory probe {args:?} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let kib: u64 = text
            .trim()
            .strip_prefix("maxrss_kib=")
            .and_then(|v| v.parse().ok())
            .with_context(|| format!("memory probe printed {text:?}"))?;
        Ok(kib * 1024)
    };
    let seed_s = seed.to_string();
    let len_s = len.to_string();
    let baseline = probe(&["idle".as_ref()])?;
    let ours = probe(&[
        "ours".as_ref(),
        ours_ws.as_os_str(),
        sidecar.as_os_str(),
        rel.as_ref(),
        seed_s.as_ref(),
        len_s.as_ref(),
    ])?;
    let git_probe = probe(&[
        "git".as_ref(),
        git.work_tree.as_os_str(),
        git.git_dir.as_os_str(),
        rel.as_ref(),
        seed_s.as_ref(),
        len_s.as_ref(),
        if git.fsync { "fsync" } else { "nofsync" }.as_ref(),
    ])?;
    Ok(Peaks {
        ours,
        git: git_probe,
        baseline,
    })
}

/// The child side of [`measure`]: `__mem idle | ours WS SIDECAR REL SEED LEN | git WS GITDIR REL
/// SEED LEN fsync|nofsync`. Prints `maxrss_kib=<n>`.
pub fn child(args: &[String]) -> Result<()> {
    let arg =
        |i: usize| -> Result<&str> { args.get(i).map(String::as_str).context("__mem: missing argument") };
    let who = match arg(0)? {
        "idle" => None,
        "ours" => {
            let ws = PathBuf::from(arg(1)?);
            let sidecar = PathBuf::from(arg(2)?);
            let rel = arg(3)?;
            let seed: u64 = arg(4)?.parse()?;
            let len: u64 = arg(5)?.parse()?;
            let before = sha_of(&ws.join(rel))?;
            let mut ours = Ours::open(&sidecar, &ws, Limits::default())?;
            let turn = ours.store.begin_turn(Default::default())?;
            let change = retrace_checkpoint::Change::new(rel, retrace_protocol::ChangeKind::Modify);
            ours.store.capture_before(&[change], Some("write_file"))?;
            write_big(&ws.join(rel), seed, len)?;
            ours.store.capture_after(&[PathBuf::from(rel)])?;
            ours.store.end_turn();
            match ours.rewind(turn, false)? {
                Rewind::Done(_) => {}
                Rewind::Refused(c) => bail!("the restore was refused: {c:?}"),
            }
            if sha_of(&ws.join(rel))? != before {
                bail!("Retrace did not restore {rel}");
            }
            None
        }
        "git" => {
            let ws = PathBuf::from(arg(1)?);
            let git_dir = PathBuf::from(arg(2)?);
            let rel = arg(3)?;
            let seed: u64 = arg(4)?.parse()?;
            let len: u64 = arg(5)?.parse()?;
            let shadow = git_dir.parent().context("git dir has no parent")?;
            // The run's tag, so that the harness also waits for any gc these commits detach.
            let tag = std::env::var(crate::shadow::TAG_VAR).unwrap_or_else(|_| "mem-probe".into());
            let mut git = ShadowGit::attach(shadow, &ws, arg(6)? == "fsync", &tag);
            let before = sha_of(&ws.join(rel))?;
            let base = git.head()?;
            write_big(&ws.join(rel), seed, len)?;
            git.checkpoint("big edit")?;
            git.reset_hard(&base)?;
            if sha_of(&ws.join(rel))? != before {
                bail!("git did not restore {rel}");
            }
            Some(UsageWho::RUSAGE_CHILDREN)
        }
        other => bail!("__mem: unknown probe {other}"),
    };
    let kib = match who {
        Some(who) => getrusage(who)?.max_rss() as u64,
        None => high_water_kib()?,
    };
    println!("maxrss_kib={kib}");
    Ok(())
}

/// This process's peak resident set (`VmHWM` of `/proc/self/status`), in KiB.
pub fn high_water_kib() -> Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmHWM in /proc/self/status")
}

/// Updates `manifest` for a file written with [`write_big`].
pub fn record_big(manifest: &mut Manifest, root: &Path, rel: &str) -> Result<()> {
    manifest.insert(
        rel.to_string(),
        crate::tree::Entry {
            sha256: sha_of(&root.join(rel))?,
            mode: 0o644,
        },
    );
    Ok(())
}
