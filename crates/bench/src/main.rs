//! `retrace-bench`: see the crate documentation and `BENCHMARKS.md`.
//!
//! ```text
//! cargo run --release -p retrace-bench -- --quick     # 1,000 and 10,000 files (minutes)
//! cargo run --release -p retrace-bench -- --full      # adds 80,000 files (about 1 GB)
//! ```
//!
//! Other flags: `--sizes N,N`, `--reps N`, `--turns N`, `--seed N`, `--dir DIR` (where the temp
//! trees go; default the system temp dir), `--keep`, `--retrace BIN` (the binary of the whole-turn
//! figure; default: built from this workspace), `--no-whole-turn`, `--smoke` (a 50-file run for
//! tests). Results go to stdout, one line per scenario; progress and notices to stderr.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};
use nix::sys::stat::{umask, Mode};
use retrace_bench::scenarios::{self, Config};

fn main() -> ExitCode {
    match real_main() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("retrace-bench: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn real_main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("__mem") {
        return retrace_bench::mem::child(&args[1..]);
    }
    // Git writes checked-out files with 0666/0777 minus the umask: make that 0644/0755, the modes
    // the generated trees have, whatever the caller's umask.
    umask(Mode::from_bits_truncate(0o022));
    let mut cfg = Config {
        sizes: vec![1_000, 10_000],
        reps: 5,
        turns: 200,
        rewind_files: vec![1, 100, 1_000],
        seed: 7,
        base_dir: std::env::temp_dir(),
        keep: false,
        retrace: None,
        exe: std::env::current_exe().context("locate this binary")?,
        big_bytes: 32 << 20,
        probe_files: 100,
    };
    let mut whole_turn = true;
    let mut only_git = false;
    let mut explicit_retrace = None;
    let mut it = args.iter();
    let value = |it: &mut std::slice::Iter<'_, String>, flag: &str| -> Result<String> {
        it.next()
            .cloned()
            .with_context(|| format!("{flag} needs a value"))
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => cfg.sizes = vec![1_000, 10_000],
            "--full" => cfg.sizes = vec![1_000, 10_000, 80_000],
            "--smoke" => {
                cfg.sizes = vec![50];
                cfg.reps = 1;
                cfg.turns = 5;
                cfg.rewind_files = vec![1, 10];
                cfg.big_bytes = 1 << 20;
                cfg.probe_files = 10;
                whole_turn = false;
            }
            "--sizes" => {
                cfg.sizes = value(&mut it, a)?
                    .split(',')
                    .map(|s| s.trim().parse::<usize>())
                    .collect::<Result<_, _>>()
                    .context("--sizes: a comma-separated list of file counts")?;
            }
            "--reps" => cfg.reps = value(&mut it, a)?.parse().context("--reps")?,
            "--turns" => cfg.turns = value(&mut it, a)?.parse().context("--turns")?,
            "--seed" => cfg.seed = value(&mut it, a)?.parse().context("--seed")?,
            "--dir" => cfg.base_dir = PathBuf::from(value(&mut it, a)?),
            "--keep" => cfg.keep = true,
            "--retrace" => explicit_retrace = Some(PathBuf::from(value(&mut it, a)?)),
            "--no-whole-turn" => whole_turn = false,
            "--only-git" => only_git = true,
            "-h" | "--help" => {
                println!("{}", include_str!("usage.txt"));
                return Ok(());
            }
            other => bail!("unknown argument `{other}` (see --help)"),
        }
    }
    if cfg.reps == 0 || cfg.turns == 0 || cfg.sizes.iter().any(|&n| n < 20) {
        bail!("--reps and --turns must be at least 1, and trees at least 20 files");
    }
    cfg.retrace = match explicit_retrace {
        Some(p) if p.is_file() => Some(std::fs::canonicalize(&p)?),
        Some(p) => bail!("--retrace {}: no such file", p.display()),
        None if whole_turn => retrace_binary(&cfg.exe),
        None => None,
    };
    describe_machine(&cfg.base_dir);
    if only_git {
        return only_git_backend(&cfg);
    }
    scenarios::run(&cfg, &mut |line| {
        println!("{line}");
        let _ = std::io::stdout().flush();
    })?;
    Ok(())
}

/// The `retrace` binary of this workspace, built in this binary's profile (a no-op when fresh);
/// `None`, with a notice, when it can be neither built nor found.
fn retrace_binary(exe: &Path) -> Option<PathBuf> {
    let dir = exe.parent()?;
    let candidate = dir.join("retrace");
    let release = dir.file_name().is_some_and(|n| n == "release");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut c = Command::new(cargo);
    c.arg("build")
        .arg("--manifest-path")
        .arg(&manifest)
        .args(["-p", "retrace-cli"]);
    if release {
        c.arg("--release");
    }
    eprintln!("retrace-bench: building the retrace binary for the whole-turn figure");
    let built = c.status().is_ok_and(|s| s.success());
    match (built, candidate.is_file()) {
        (true, true) => Some(candidate),
        (false, true) => {
            eprintln!(
                "retrace-bench: the build failed; using the existing {}",
                candidate.display()
            );
            Some(candidate)
        }
        _ => {
            eprintln!("retrace-bench: no retrace binary: the whole_turn line is skipped");
            None
        }
    }
}

/// The machine, to stderr (BENCHMARKS.md quotes it).
fn describe_machine(dir: &Path) {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|k| k.parse::<u64>().ok())
        })
        .map_or_else(|| "?".into(), |k| format!("{:.0} GiB", k as f64 / 1048576.0));
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let git = Command::new("git")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|_| "git: not found".into());
    let fs_kind = std::fs::canonicalize(dir)
        .ok()
        .and_then(|d| {
            let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
            mounts
                .lines()
                .filter_map(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    (f.len() > 3 && d.starts_with(f[1]))
                        .then(|| (f[1].len(), format!("{} on {} ({})", f[2], f[0], f[3])))
                })
                .max()
                .map(|(_, s)| s)
        })
        .unwrap_or_default();
    eprintln!(
        "retrace-bench: machine: {cpu}, {cores} cores, {mem} RAM, Linux {kernel}, {git}; \
         trees under {} ({fs_kind})",
        dir.display()
    );
    // Which store is measured: the commit of this workspace, and whether the store had local
    // changes (read-only git commands; nothing is written to the repository).
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let git_out = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(&repo)
            .arg("--no-optional-locks")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    if let Some(head) = git_out(&["rev-parse", "--short", "HEAD"]) {
        let dirty = git_out(&[
            "status",
            "--porcelain",
            "--",
            "crates/checkpoint",
            "crates/fsutil",
            "crates/tools",
            "crates/control",
        ])
        .is_some_and(|s| !s.is_empty());
        eprintln!(
            "retrace-bench: source: commit {head}{}",
            if dirty {
                " with uncommitted changes to the store or tools"
            } else {
                ""
            }
        );
    }
}

/// `--only-git`: the git backend's lines alone, for each size, and this process's peak memory
/// after them (the git backend's snapshot, stat cache and watches, and the run's own manifests).
fn only_git_backend(cfg: &Config) -> Result<()> {
    for &files in &cfg.sizes {
        let tmp = tempfile::Builder::new()
            .prefix("retrace-bench-git-")
            .tempdir_in(&cfg.base_dir)
            .context("make a temp directory")?;
        let turns = (cfg.reps * 3).max(10);
        let bin = cfg.retrace.as_deref();
        for line in retrace_bench::gitmode::run(tmp.path(), files, cfg.seed, cfg.reps, turns, bin)? {
            println!("{line}");
        }
        let peak = retrace_bench::mem::high_water_kib().unwrap_or(0);
        let sfx = retrace_bench::report::suffix(files);
        println!("git_process_peak_rss{sfx} kib={peak}");
        let _ = std::io::stdout().flush();
    }
    Ok(())
}
