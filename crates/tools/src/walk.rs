//! The `.gitignore`-aware directory walk shared by `list_dir`, `glob` and `grep`.
//!
//! Built on the `ignore` crate (ripgrep's walker): `.gitignore`, `.git/info/exclude`, the global
//! excludes file and `.ignore` files are honoured, also when the workspace is not a git repository
//! (`require_git(false)`), and ignore files of parent directories apply to a walk that starts in a
//! subdirectory. Hidden files are listed (an agent needs `.github/` or `.env.example`); `.git/`
//! never is. Symlinks are not followed, so a walk cannot leave the workspace.

use std::path::Path;

use ignore::{Walk, WalkBuilder};

use crate::workspace::Workspace;

/// A sorted walk of `dir` (inside `ws`), at most `max_depth` levels deep (`None`: unlimited).
pub(crate) fn walker(ws: &Workspace, dir: &Path, max_depth: Option<usize>) -> Walk {
    let mut b = WalkBuilder::new(dir);
    b.hidden(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .ignore(true)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .current_dir(ws.root())
        .max_depth(max_depth)
        .filter_entry(|e| e.file_name() != ".git")
        .sort_by_file_name(|a, b| a.cmp(b));
    b.build()
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
