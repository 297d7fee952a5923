//! Shadow-git checkpoints, done the way Cline, Roo Code, Gemini CLI and opencode do them: a git
//! directory outside the workspace whose `core.worktree` is the workspace, `git add -A && git commit`
//! per checkpoint, `git reset --hard <commit>` to restore.
//!
//! Git runs with git's defaults: the system and global configs are ignored (`GIT_CONFIG_NOSYSTEM`,
//! `GIT_CONFIG_GLOBAL=/dev/null`), so a developer's own settings cannot change the figures. The only
//! settings are what those tools set themselves (identity, no signing, no hooks) and, for the
//! durable variant, `core.fsync=all`. Git's automatic `gc` stays on, as it is for them: it runs
//! detached after a commit that leaves many loose objects; [`wait_background`] waits for it so that
//! it never overlaps another measurement.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// The environment variable that marks every git process of this run (and the `gc` they detach).
pub const TAG_VAR: &str = "RETRACE_BENCH_TAG";

/// One shadow repository.
#[derive(Debug, Clone)]
pub struct ShadowGit {
    /// The git directory (`<shadow>/.git`), outside the workspace.
    pub git_dir: PathBuf,
    /// The workspace (`core.worktree`).
    pub work_tree: PathBuf,
    /// Whether `core.fsync=all` is set.
    pub fsync: bool,
    tag: String,
    commits: u64,
}

impl ShadowGit {
    /// `git init` of `<shadow>/.git` with `core.worktree` = `work_tree`: the first half of a first
    /// checkpoint.
    pub fn init(shadow: &Path, work_tree: &Path, fsync: bool, tag: &str) -> Result<ShadowGit> {
        let mut c = base_command(tag, work_tree);
        c.args(["init", "-q"]).arg(shadow);
        run(c, "git init")?;
        let git = ShadowGit {
            git_dir: shadow.join(".git"),
            work_tree: work_tree.to_path_buf(),
            fsync,
            tag: tag.to_string(),
            commits: 0,
        };
        let wt = work_tree.to_str().context("non-UTF-8 workspace path")?;
        let mut settings = vec![
            ("core.worktree", wt),
            ("user.name", "Shadow Checkpoint"),
            ("user.email", "checkpoint@example.invalid"),
            ("commit.gpgSign", "false"),
        ];
        if fsync {
            settings.push(("core.fsync", "all"));
        }
        for (k, v) in settings {
            git.run(&["config", k, v])?;
        }
        Ok(git)
    }

    /// An existing shadow repository made by [`ShadowGit::init`].
    pub fn attach(shadow: &Path, work_tree: &Path, fsync: bool, tag: &str) -> ShadowGit {
        ShadowGit {
            git_dir: shadow.join(".git"),
            work_tree: work_tree.to_path_buf(),
            fsync,
            tag: tag.to_string(),
            commits: 0,
        }
    }

    /// A checkpoint: `git add -A && git commit`, as two processes, as those tools spawn them.
    pub fn checkpoint(&mut self, message: &str) -> Result<()> {
        self.run(&["add", "-A"])?;
        self.run(&["commit", "-q", "--allow-empty", "--no-verify", "-m", message])?;
        self.commits += 1;
        Ok(())
    }

    /// The commit HEAD names.
    pub fn head(&self) -> Result<String> {
        let out = self.run(&["rev-parse", "HEAD"])?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// Restore: `git reset --hard <rev>`.
    pub fn reset_hard(&self, rev: &str) -> Result<()> {
        self.run(&["reset", "-q", "--hard", rev]).map(|_| ())
    }

    /// Lists the newest `n` checkpoints (`git log`); returns how many were listed.
    pub fn list(&self, n: usize) -> Result<usize> {
        let out = self.run(&["log", "-n", &n.to_string(), "--format=%H %ct %s"])?;
        Ok(out
            .stdout
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .count())
    }

    /// The tag of this run's git processes (see [`wait_background`]).
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// Commits made through [`ShadowGit::checkpoint`].
    pub fn commits(&self) -> u64 {
        self.commits
    }

    /// Runs `git --git-dir=<git_dir> <args>` in the workspace; fails on a non-zero exit.
    pub fn run(&self, args: &[&str]) -> Result<Output> {
        let mut c = base_command(&self.tag, &self.work_tree);
        c.arg("--git-dir").arg(&self.git_dir).args(args);
        run(c, &format!("git {}", args.join(" ")))
    }
}

fn base_command(tag: &str, cwd: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(cwd)
        .env(TAG_VAR, tag)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::null());
    for k in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_CEILING_DIRECTORIES",
    ] {
        c.env_remove(k);
    }
    c
}

fn run(mut c: Command, what: &str) -> Result<Output> {
    let out = c.output().with_context(|| format!("{what}: cannot run git"))?;
    if !out.status.success() {
        bail!(
            "{what}: {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out)
}

/// Waits until no process started by this run with `tag` is alive any more (git's detached
/// `gc --auto` / `maintenance run --auto` carry the tag in their environment). Returns how long it
/// waited: work git does in the background after a checkpoint returned.
pub fn wait_background(tag: &str) -> Result<Duration> {
    let needle = format!("{TAG_VAR}={tag}\0").into_bytes();
    let me = std::process::id();
    let start = Instant::now();
    loop {
        let mut alive = false;
        for entry in fs::read_dir("/proc").context("list /proc")? {
            let Ok(entry) = entry else { continue };
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if pid == me {
                continue;
            }
            // Processes of other users, or gone meanwhile: not ours.
            let Ok(env) = fs::read(entry.path().join("environ")) else {
                continue;
            };
            if env.windows(needle.len()).any(|w| w == needle.as_slice()) {
                alive = true;
                break;
            }
        }
        if !alive {
            return Ok(start.elapsed());
        }
        if start.elapsed() > Duration::from_secs(1800) {
            bail!("git's background work is still running after 30 minutes");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
