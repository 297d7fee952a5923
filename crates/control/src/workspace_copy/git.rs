//! A fork's new workspace when the source is inside a git repository: a `git worktree` of it,
//! detached at its `HEAD`, so the user's branches and history work there (the `git` binary is
//! run for it: `worktree add`, and the read-only `rev-parse`, `diff` and `ls-files`, without
//! optional locks, so the source's index is not refreshed or written). The source workspace's
//! uncommitted changes (staged and unstaged) and untracked files are then carried over as files,
//! so that the new workspace's files are the source's; ignored files are not, and special files
//! (which git never lists) are found by the workspace's walk and listed as left out.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use retrace_protocol::{ErrorCode, ForkSkipReason, ForkSkipped};
use retrace_tools::tree_walk::{Found, TreeWalk};
use retrace_tools::Workspace;

use super::entry::{copy_entry, remove_entry, set_dir_modes, skip, Copied};
use crate::error::{coded, Result};

/// The environment variables that would point `git` at another repository than the one the
/// workspace is in.
const REPO_VARS: [&str; 8] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
];

/// `git -C dir ARGS` run to its end, its output kept; hooks never run, no file system monitor
/// the repository names is started, and nothing takes an optional lock (no index refresh is
/// written). The repository's filters (an LFS smudge filter) run, as in any checkout.
pub(super) fn git(dir: &Path, args: &[&OsStr]) -> std::io::Result<Output> {
    let mut c = Command::new("git");
    c.arg("-C")
        .arg(dir)
        .args([
            "--no-optional-locks",
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
        ])
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null());
    for v in REPO_VARS {
        c.env_remove(v);
    }
    c.output()
}

fn os<'a>(args: &[&'a str]) -> Vec<&'a OsStr> {
    args.iter().map(|a| OsStr::new(*a)).collect()
}

/// `git` failed: its first line of stderr.
fn failed(what: &str, dir: &Path, out: &Output) -> crate::error::ControlError {
    use std::os::unix::process::ExitStatusExt;
    // Ctrl-C reaches git too: that is the fork being interrupted, not git failing.
    if let Err(stopped) = super::check_stopping() {
        return stopped;
    }
    if let Some(signal) = out.status.signal() {
        return coded(
            ErrorCode::Cancelled,
            format!(
                "`git {what}` in `{}` was stopped by signal {signal}; what the fork made was removed",
                dir.display()
            ),
        );
    }
    let says = String::from_utf8_lossy(&out.stderr);
    let line = says
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no message");
    coded(
        ErrorCode::Io,
        format!("`git {what}` failed in `{}`: {line}", dir.display()),
    )
}

/// The paths of a `-z` listing.
fn listed(out: &Output) -> Vec<PathBuf> {
    out.stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(OsStr::from_bytes(p)))
        .collect()
}

/// The repository a workspace is in, with a commit at `HEAD`.
#[derive(Debug, Clone)]
pub(crate) struct Repo {
    /// The top of its working tree (canonical).
    pub(crate) top: PathBuf,
    /// Where the workspace is under it (empty at the top).
    pub(crate) prefix: PathBuf,
    /// The repository's own directory (`.git` of its main working tree; canonical).
    pub(crate) common_dir: PathBuf,
    /// The main working tree, when the workspace is in a linked worktree of it (canonical).
    pub(crate) main_tree: Option<PathBuf>,
}

/// Whether a `.git` stands at `dir` or above it.
fn in_repository(dir: &Path) -> bool {
    dir.ancestors().any(|d| d.join(".git").exists())
}

/// `git` refused the repository `root` is in.
fn unopenable(root: &Path, out: &Output) -> crate::error::ControlError {
    let says = String::from_utf8_lossy(&out.stderr);
    let said: Vec<&str> = says
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("git config"))
        .collect();
    let fix = if says.contains("dubious ownership") {
        format!(
            "; if you trust it, allow it with `git config --global --add safe.directory {}` and fork again",
            root.display()
        )
    } else {
        String::new()
    };
    coded(
        ErrorCode::Io,
        format!(
            "`{}` is in a git repository, and a fork into a new workspace makes a `git worktree` of it, but git refuses to open it: {}{fix}",
            root.display(),
            said.first().copied().unwrap_or("no message")
        ),
    )
}

/// The repository the workspace `root` is in, when it is in one whose `HEAD` is a commit; `None`
/// otherwise (a repository without a commit yet is copied like any directory). A `.git` that
/// `git` refuses to open (one owned by another user, say) is an error, never a silent copy.
pub(crate) fn repo_of(root: &Path) -> Result<Option<Repo>> {
    let args = [
        "rev-parse",
        "--path-format=absolute",
        "--show-toplevel",
        "--show-prefix",
        "--git-common-dir",
    ];
    let out = match git(root, &os(&args)) {
        Ok(out) => out,
        Err(e) if in_repository(root) => {
            return Err(coded(
                ErrorCode::Io,
                format!(
                    "`{}` is in a git repository, and a fork into a new workspace makes a `git worktree` of it, but `git` could not be run: {e}",
                    root.display()
                ),
            ))
        }
        Err(_) => return Ok(None),
    };
    if !out.status.success() {
        if in_repository(root) {
            return Err(unopenable(root, &out));
        }
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines();
    let (Some(top), prefix, Some(common)) = (lines.next(), lines.next().unwrap_or(""), lines.next()) else {
        return Ok(None);
    };
    let head = git(root, &os(&["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]))
        .map_err(|e| coded(ErrorCode::Io, format!("cannot run `git`: {e}")))?;
    if !head.status.success() {
        return Ok(None);
    }
    let canonical = |p: &str| std::fs::canonicalize(p).unwrap_or_else(|_| PathBuf::from(p));
    let top = canonical(top);
    let common_dir = canonical(common);
    let main_tree = common_dir
        .file_name()
        .filter(|n| *n == ".git")
        .and(common_dir.parent())
        .filter(|m| *m != top)
        .map(Path::to_path_buf);
    Ok(Some(Repo {
        top,
        prefix: PathBuf::from(prefix.trim_end_matches('/')),
        common_dir,
        main_tree,
    }))
}

/// What a worktree fork carried over and left out.
pub(super) struct Carried {
    /// Paths not copied, and why.
    pub(super) skipped: Vec<ForkSkipped>,
    /// The ignored paths of the source workspace (relative to it), each with whether it is a
    /// directory: nothing at or under them is copied or written.
    pub(super) ignored: Vec<(PathBuf, bool)>,
}

/// `git worktree add --detach DIR HEAD` of the repository `root` is in, into the empty
/// directory `dir`, without its checkout (`--no-checkout`): [`check_out`] does that.
pub(super) fn add_worktree(root: &Path, dir: &Path) -> Result<()> {
    let mut args = os(&["worktree", "add", "--quiet", "--no-checkout", "--detach"]);
    args.push(dir.as_os_str());
    args.push(OsStr::new("HEAD"));
    let out = git(root, &args).map_err(|e| coded(ErrorCode::Io, format!("cannot run `git`: {e}")))?;
    if !out.status.success() {
        return Err(failed("worktree add", root, &out));
    }
    Ok(())
}

/// Checks out the new worktree `dir`'s `HEAD` (as `git worktree add` does it: `reset --hard`,
/// submodules left alone).
pub(super) fn check_out(dir: &Path) -> Result<()> {
    let args = os(&["reset", "--hard", "--quiet", "--no-recurse-submodules"]);
    let out = git(dir, &args).map_err(|e| coded(ErrorCode::Io, format!("cannot run `git`: {e}")))?;
    if !out.status.success() {
        return Err(failed("reset --hard", dir, &out));
    }
    Ok(())
}

/// Removes the worktree at `dir`, with whatever is in it: `git worktree remove --force` run in
/// `repo` (a directory of the repository it is a worktree of, never `dir` itself), then `git
/// worktree prune` there should the directory be gone already.
pub(crate) fn remove_worktree(repo: &Path, dir: &Path) -> Result<()> {
    let mut args = os(&["worktree", "remove", "--force"]);
    args.push(dir.as_os_str());
    let out = git(repo, &args).map_err(|e| coded(ErrorCode::Io, format!("cannot run `git`: {e}")))?;
    if !out.status.success() {
        return Err(failed("worktree remove", repo, &out));
    }
    Ok(())
}

/// `git worktree prune` in `repo`: forgets worktrees whose directory is gone.
pub(super) fn prune_worktrees(repo: &Path) {
    let _ = git(repo, &os(&["worktree", "prune"]));
}

/// Carries the source workspace's changes since `HEAD` (staged and unstaged) and its untracked
/// files over from `ws` to `to` (the same place in the new worktree), as files; lists what is
/// ignored. Paths are the workspace's (`git` lists them relative to it, and only under it).
pub(super) fn carry_over(ws: &Workspace, to: &Path) -> Result<Carried> {
    let from = ws.root();
    let run = |what: &str, args: &[&str]| -> Result<Vec<PathBuf>> {
        let out = git(from, &os(args)).map_err(|e| coded(ErrorCode::Io, format!("cannot run `git`: {e}")))?;
        if !out.status.success() {
            return Err(failed(what, from, &out));
        }
        Ok(listed(&out))
    };
    let changed = run(
        "diff",
        &[
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            "--ignore-submodules=none",
            "--relative",
            "--name-only",
            "-z",
            "HEAD",
            "--",
        ],
    )?;
    let untracked = run("ls-files", &["ls-files", "-z", "--others", "--exclude-standard"])?;
    let ignored = run(
        "ls-files",
        &[
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--directory",
        ],
    )?;
    let walk = TreeWalk::new(ws);
    let mut skipped = Vec::new();
    let (mut removals, mut copies) = (Vec::new(), Vec::new());
    for p in changed {
        match std::fs::symlink_metadata(from.join(&p)) {
            Ok(m) if m.is_dir() && from.join(&p).join(".git").exists() => skipped.push(skip(
                format!("{}/", p.to_string_lossy()),
                ForkSkipReason::Repository,
                "a repository of its own (a submodule): not copied",
            )),
            // A file that became a directory: what is in it is untracked, copied below.
            Ok(m) if m.is_dir() => removals.push(p),
            Ok(_) => copies.push(p),
            Err(_) => removals.push(p),
        }
    }
    for p in untracked {
        let shown = p.to_string_lossy().into_owned();
        if p.as_os_str().as_bytes().ends_with(b"/") {
            skipped.push(skip(
                shown,
                ForkSkipReason::Repository,
                "a repository of its own: not copied",
            ));
        } else if !walk.keeps(&p) {
            skipped.push(skip(
                shown,
                ForkSkipReason::Ignored,
                "ignored by the workspace's ignore rules, or off limits: not copied",
            ));
        } else {
            copies.push(p);
        }
    }
    for p in &removals {
        remove_entry(to, p)?;
    }
    for p in &copies {
        if let Copied::Skipped(s) = copy_entry(from, to, p)? {
            skipped.push(s);
        }
    }
    // Git keeps no directory's mode: the directories above what was carried over get the
    // source's (a private directory stays private).
    set_dir_modes(to, source_dir_modes(from, &copies))?;
    let ignored: Vec<(PathBuf, bool)> = ignored
        .into_iter()
        .map(|p| {
            let dir = p.as_os_str().as_bytes().ends_with(b"/");
            (p, dir)
        })
        .collect();
    for (p, dir) in &ignored {
        let mut shown = p.to_string_lossy().into_owned();
        if *dir && !shown.ends_with('/') {
            shown.push('/');
        }
        skipped.push(skip(
            shown,
            ForkSkipReason::Ignored,
            "ignored by the repository's ignore rules: not copied",
        ));
    }
    skipped.extend(specials(&walk, from, &skipped));
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Carried { skipped, ignored })
}

/// The special files (FIFOs, sockets, devices) the walk of the workspace `from` keeps and `git`
/// does not list (it never tracks one), except those `listed` already: each is left out.
fn specials(walk: &TreeWalk<'_>, from: &Path, listed: &[ForkSkipped]) -> Vec<ForkSkipped> {
    let listed: std::collections::BTreeSet<&str> = listed.iter().filter_map(|s| s.path.as_deref()).collect();
    let mut out = Vec::new();
    let _ = walk.walk(Path::new(""), &mut |rel, found| {
        if found != Found::File {
            return;
        }
        let Ok(m) = std::fs::symlink_metadata(from.join(rel)) else {
            return;
        };
        let t = m.file_type();
        let shown = rel.to_string_lossy();
        if t.is_file() || t.is_symlink() || t.is_dir() || listed.contains(shown.as_ref()) {
            return;
        }
        out.push(skip(
            shown.into_owned(),
            ForkSkipReason::Special,
            format!("{}: not copied", retrace_fsutil::kind_of(&m)),
        ));
    });
    out
}

/// The modes of the source's directories above `paths` (relative to `from`), each once; a name
/// that is not a directory there (a symlink above is never followed) is left out.
fn source_dir_modes(from: &Path, paths: &[PathBuf]) -> Vec<(PathBuf, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut seen = std::collections::BTreeSet::new();
    for p in paths {
        for a in p.ancestors().skip(1).filter(|a| !a.as_os_str().is_empty()) {
            if !seen.insert(a.to_path_buf()) {
                break;
            }
        }
    }
    seen.into_iter()
        .filter_map(|d| {
            let m = std::fs::symlink_metadata(from.join(&d)).ok()?;
            m.is_dir().then(|| (d, m.permissions().mode() & 0o7777))
        })
        .collect()
}
