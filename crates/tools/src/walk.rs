//! The `.gitignore`-aware directory walk shared by `list_dir`, `glob` and `grep`.
//!
//! Built on the `ignore` crate (ripgrep's walker): `.gitignore`, `.git/info/exclude`, the global
//! excludes file and `.ignore` files are honoured, also when the workspace is not a git repository
//! (`require_git(false)`). Hidden files are listed (an agent needs `.github/` or `.env.example`);
//! `.git/` never is. Symlinks are not followed, so a walk cannot leave the workspace.
//!
//! Ignore files above the walked directory apply from the *boundary* down: the workspace root, or,
//! when the workspace lies inside a git repository whose top is above it, that top. An ignore file
//! above the boundary never applies (a dotfiles `~/.gitignore` of `*` must not hide a project in
//! `~/src`), nor does one of another repository.

use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{Match, Walk, WalkBuilder};

use crate::error::ToolError;
use crate::workspace::Workspace;

/// Ignore files a walk reads in every directory it enters.
const IGNORE_FILES: [&str; 2] = [".gitignore", ".ignore"];

/// Whether an ignore file exists but is no regular file (a FIFO, a device): the walker opens ignore
/// files with a plain `open`, which waits forever on a FIFO.
fn special(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| !m.is_file())
}

/// The first ignore file a walk of `dir` would read before its first entry that is not a regular
/// file: those of `dir` and every directory above it, the repository's `.git/info/exclude`, and
/// git's global configuration and excludes file.
fn blocking_ignore_file(ws: &Workspace, dir: &Path) -> Option<std::path::PathBuf> {
    let mut candidates: Vec<std::path::PathBuf> = dir
        .ancestors()
        .flat_map(|d| IGNORE_FILES.iter().map(move |f| d.join(f)))
        .collect();
    candidates.push(ws.root().join(".git/info/exclude"));
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    candidates.extend(home.map(|h| h.join(".gitconfig")));
    if let Some(x) = xdg {
        candidates.push(x.join("git/config"));
        candidates.push(x.join("git/ignore"));
    }
    candidates.into_iter().find(|p| special(p))
}

/// A sorted walk of `dir` (inside `ws`), at most `max_depth` levels deep (`None`: unlimited).
/// An ignore file it would read that is not a regular file is an error before the walk starts;
/// a directory below whose ignore file is one is not entered.
pub(crate) fn walker(ws: &Workspace, dir: &Path, max_depth: Option<usize>) -> Result<Walk, ToolError> {
    if let Some(p) = blocking_ignore_file(ws, dir) {
        let shown = p
            .strip_prefix(ws.root())
            .map(|r| r.to_string_lossy().into_owned())
            .unwrap_or_else(|_| p.to_string_lossy().into_owned());
        return Err(ToolError::IgnoreFileNotRegular { path: shown });
    }
    let skip = ws.clone();
    let above = ignores_above(ws.root(), dir);
    let mut b = WalkBuilder::new(dir);
    b.hidden(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .ignore(true)
        .parents(false)
        .require_git(false)
        .follow_links(false)
        .current_dir(ws.root())
        .max_depth(max_depth)
        .filter_entry(move |e| {
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            let skipped = e.file_name() == ".git"
                || skip.walk_skips(e.path())
                || ignored_above(&above, e.path(), is_dir)
                || (is_dir && IGNORE_FILES.iter().any(|f| special(&e.path().join(f))));
            !skipped
        })
        .sort_by_file_name(|a, b| a.cmp(b));
    Ok(b.build())
}

/// The directory whose ignore files are the last to apply to the workspace `root`: `root`
/// itself, or the top of the git repository it lies in when that is above it.
fn boundary(root: &Path) -> PathBuf {
    if root.join(".git").exists() {
        return root.to_path_buf();
    }
    root.ancestors()
        .skip(1)
        .find(|d| d.join(".git").exists())
        .map_or_else(|| root.to_path_buf(), Path::to_path_buf)
}

/// The matchers of the ignore files that apply to a walk of `dir` from above it, deepest first:
/// those of every directory strictly above `dir` up to the boundary (`.ignore` before `.gitignore`,
/// as the walker ranks them), then the boundary repository's `.git/info/exclude` when the
/// boundary is above `dir`. The walker itself reads `dir`'s and those below.
fn ignores_above(root: &Path, dir: &Path) -> Vec<Gitignore> {
    let top = boundary(root);
    let mut out = Vec::new();
    if !dir.starts_with(&top) || dir == top {
        return out;
    }
    for d in dir.ancestors().skip(1) {
        for name in [".ignore", ".gitignore"] {
            let file = d.join(name);
            if file.is_file() {
                out.push(Gitignore::new(&file).0);
            }
        }
        if d == top {
            break;
        }
    }
    let exclude = top.join(".git/info/exclude");
    if exclude.is_file() {
        let mut b = GitignoreBuilder::new(&top);
        let _ = b.add(&exclude);
        if let Ok(g) = b.build() {
            out.push(g);
        }
    }
    out
}

/// Whether the first of `above` that has a say about `path` ignores it.
fn ignored_above(above: &[Gitignore], path: &Path, is_dir: bool) -> bool {
    for g in above {
        match g.matched(path, is_dir) {
            Match::Ignore(_) => return true,
            Match::Whitelist(_) => return false,
            Match::None => {}
        }
    }
    false
}

/// How to show `path`, found by a walk of `base_real`, to the model: relative to the workspace,
/// spelled through `base_shown` (so a walk of a symlinked directory shows the names the model used).
pub(crate) fn shown_under(base_real: &Path, base_shown: &str, path: &Path) -> String {
    let rel = path.strip_prefix(base_real).unwrap_or(path).to_string_lossy();
    match (base_shown, rel.is_empty()) {
        (_, true) => base_shown.to_string(),
        (".", false) => rel.into_owned(),
        (base, false) => format!("{base}/{rel}"),
    }
}
