//! The `.gitignore`-aware directory walk shared by `list_dir`, `glob` and `grep`.
//!
//! Built on the `ignore` crate's walker (ripgrep's), with the ignore rules of the workspace read by
//! [`IgnoreRules`] (`.ignore`, `.gitignore` and `.git/info/exclude`, from the workspace root down
//! and, inside the same git repository, from its top: see that module for what is read and how)
//! and git's global excludes file read by the walker. They apply also when the workspace is not a
//! git repository. Hidden files are listed (an agent needs `.github/` or `.env.example`); `.git/`
//! never is. Symlinks are not followed, so a walk cannot leave the workspace.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::{Walk, WalkBuilder};

use crate::error::ToolError;
use crate::ignore_rules::IgnoreRules;
use crate::workspace::Workspace;

/// Whether a file exists but is no regular file (a FIFO, a device): the walker opens git's global
/// configuration and excludes file with a plain `open`, which waits forever on a FIFO.
fn special(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| !m.is_file())
}

/// Git's global configuration files and its default global excludes file: `~/.gitconfig`,
/// `$XDG_CONFIG_HOME/git/config` and `$XDG_CONFIG_HOME/git/ignore` (`~/.config` without it).
pub(crate) fn git_global_files() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    let mut files: Vec<PathBuf> = home.map(|h| h.join(".gitconfig")).into_iter().collect();
    if let Some(x) = xdg {
        files.push(x.join("git/config"));
        files.push(x.join("git/ignore"));
    }
    files
}

/// Git's global configuration or excludes file, when one is not a regular file.
pub(crate) fn blocking_global_file() -> Option<PathBuf> {
    git_global_files().into_iter().find(|p| special(p))
}

/// A sorted walk of `dir` (inside `ws`), at most `max_depth` levels deep (`None`: unlimited).
/// Git's global configuration or excludes file not being a regular file is an error before the
/// walk starts; an ignore file of the workspace that is none is not read.
pub(crate) fn walker(ws: &Workspace, dir: &Path, max_depth: Option<usize>) -> Result<Walk, ToolError> {
    walker_with(ws, dir, max_depth, None)
}

/// [`walker`], which with `nested` does not enter a directory holding a repository of its own
/// (a `.git` in it) and adds it to `nested` instead.
pub(crate) fn walker_with(
    ws: &Workspace,
    dir: &Path,
    max_depth: Option<usize>,
    nested: Option<Arc<std::sync::Mutex<Vec<PathBuf>>>>,
) -> Result<Walk, ToolError> {
    if let Some(p) = blocking_global_file() {
        return Err(ToolError::IgnoreFileNotRegular {
            path: p.to_string_lossy().into_owned(),
        });
    }
    let skip = ws.clone();
    let rules = Arc::new(IgnoreRules::new(ws.root()));
    let mut b = WalkBuilder::new(dir);
    b.hidden(false)
        .git_ignore(false)
        .git_exclude(false)
        .ignore(false)
        .parents(false)
        .git_global(true)
        .require_git(false)
        .follow_links(false)
        .current_dir(ws.root())
        .max_depth(max_depth)
        .filter_entry(move |e| {
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            let skipped =
                e.file_name() == ".git" || skip.walk_skips(e.path()) || rules.ignored(e.path(), is_dir);
            if skipped {
                return false;
            }
            match &nested {
                Some(found) if is_dir && e.depth() > 0 && retrace_fsutil::holds_repository(e.path()) => {
                    if let Ok(mut f) = found.lock() {
                        f.push(e.path().to_path_buf());
                    }
                    false
                }
                _ => true,
            }
        })
        .sort_by_file_name(|a, b| a.cmp(b));
    Ok(b.build())
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
