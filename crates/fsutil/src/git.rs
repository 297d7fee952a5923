//! The git branch a workspace is on, read from its `.git` without running `git`: the frontends
//! show it beside the workspace (the web page's header); and whether a directory is a repository
//! of its own, which the walks of the workspace leave to itself.
//!
//! The nearest `.git` at or above the workspace is used, as git finds it: a directory holding
//! `HEAD`, or a file `gitdir: DIR` (a linked worktree or a submodule; `DIR` relative to the file's
//! folder unless absolute). `HEAD` reading `ref: refs/heads/NAME` is on branch `NAME` (another
//! `ref:` is shown without its `refs/`), a commit id is a detached HEAD shown as its first seven
//! digits. Files are opened without blocking and read only when small; anything unexpected is no
//! branch, never an error.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::open::read_regular;

/// The most bytes a `.git` file or a `HEAD` may have to be read.
const SMALL: u64 = 4096;

/// The branch (or short detached commit) of the repository `workspace` is in; `None` when it is
/// in none, or its `HEAD` cannot be read.
pub fn git_branch(workspace: &Path) -> Option<String> {
    let git = workspace
        .ancestors()
        .map(|d| d.join(".git"))
        .find(|g| g.symlink_metadata().is_ok())?;
    head_name(&read_small(&git_dir(&git)?.join("HEAD"))?)
}

/// The git directory `.git` stands for: itself, or the one its `gitdir:` line names.
fn git_dir(git: &Path) -> Option<PathBuf> {
    if git.is_dir() {
        return Some(git.to_path_buf());
    }
    let text = read_small(git)?;
    let dir = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    if dir.is_empty() {
        return None;
    }
    let dir = Path::new(dir);
    Some(if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        git.parent()?.join(dir)
    })
}

/// The names that make a directory a git directory ([`is_git_dir`]).
pub const GIT_DIR_PIECES: [&str; 4] = ["HEAD", "objects", "refs", "commondir"];

/// Whether `dir` is a repository of its own: it holds a `.git` (a directory, or a file naming
/// one), or it is a git directory itself ([`is_git_dir`]: a bare repository, or the one `git init
/// --separate-git-dir` makes apart from its work tree).
pub fn holds_repository(dir: &Path) -> bool {
    dir.join(".git").exists() || is_git_dir(dir)
}

/// Whether `dir` is a git directory itself (not a work tree), as git tells one, generously: a
/// `HEAD` (a file, or a symlink) beside `objects` and `refs` (of any type), or beside a
/// `commondir` file standing for them (a linked worktree's). Its config and hooks run commands, as
/// `.git/`'s do.
pub fn is_git_dir(dir: &Path) -> bool {
    git_dir_with(dir, None)
}

/// [`is_git_dir`] of `dir` once `made` (one of [`GIT_DIR_PIECES`]) is there too.
fn git_dir_with(dir: &Path, made: Option<&str>) -> bool {
    let there = |name: &str| made == Some(name) || dir.join(name).symlink_metadata().is_ok();
    let head = made == Some("HEAD")
        || dir
            .join("HEAD")
            .symlink_metadata()
            .is_ok_and(|m| m.is_file() || m.file_type().is_symlink());
    head && (there("commondir") || (there("objects") && there("refs")))
}

/// The directory a write of `rel` (relative to `root`) would complete into a git directory, if
/// any: one at or above it (the root too) lacking only the `HEAD`, `objects`, `refs` or
/// `commondir` that the write would make.
pub fn completed_git_dir(root: &Path, rel: &Path) -> Option<PathBuf> {
    let mut dir = root.to_path_buf();
    for c in rel.components() {
        let name = c.as_os_str();
        let piece = GIT_DIR_PIECES.iter().find(|p| name == **p);
        if piece.is_some_and(|p| git_dir_with(&dir, Some(p))) {
            return Some(dir);
        }
        dir.push(name);
    }
    None
}

/// Which directories of a workspace lie in a git directory standing on its own (a bare
/// repository, the one `git init --separate-git-dir` makes): asked of many paths of one tree,
/// each directory is looked at once.
#[derive(Debug, Default)]
pub struct GitDirs {
    /// A directory (relative to the root) and whether it or one above it is a git directory.
    inside: HashMap<PathBuf, bool>,
}

impl GitDirs {
    /// Whether a directory above `rel` (relative to `root`; the root itself not asked) is a git
    /// directory.
    pub fn above(&mut self, root: &Path, rel: &Path) -> bool {
        let mut unknown = Vec::new();
        let mut inside = false;
        let mut cur = rel.parent();
        while let Some(dir) = cur.filter(|d| !d.as_os_str().is_empty()) {
            if let Some(&known) = self.inside.get(dir) {
                inside = known;
                break;
            }
            unknown.push(dir);
            cur = dir.parent();
        }
        for dir in unknown.into_iter().rev() {
            inside = inside || is_git_dir(&root.join(dir));
            self.inside.insert(dir.to_path_buf(), inside);
        }
        inside
    }
}

/// A small regular file's text.
fn read_small(path: &Path) -> Option<String> {
    if path.metadata().ok()?.len() > SMALL {
        return None;
    }
    String::from_utf8(read_regular(path).ok()?).ok()
}

/// What a `HEAD` file's text names: the branch, another ref, or a detached commit (short).
pub fn head_name(head: &str) -> Option<String> {
    let line = head.lines().next()?.trim();
    if let Some(target) = line.strip_prefix("ref:") {
        let target = target.trim();
        let name = target
            .strip_prefix("refs/heads/")
            .or_else(|| target.strip_prefix("refs/"))
            .unwrap_or(target);
        return (!name.is_empty()).then(|| name.to_string());
    }
    let is_id = line.len() >= 7 && line.bytes().all(|b| b.is_ascii_hexdigit());
    is_id.then(|| line[..7].to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_directory_holds_a_repository_with_a_git_or_as_a_git_directory() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        assert!(!super::holds_repository(d));
        std::fs::write(d.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir(d.join("objects")).unwrap();
        assert!(
            !super::holds_repository(d),
            "a HEAD and objects/ alone are not one"
        );
        std::fs::create_dir(d.join("refs")).unwrap();
        assert!(super::holds_repository(d), "a git directory of its own");
        std::fs::remove_file(d.join("HEAD")).unwrap();
        std::os::unix::fs::symlink("refs/heads/main", d.join("HEAD")).unwrap();
        assert!(super::holds_repository(d), "a symlinked HEAD, as old git made");
        std::fs::remove_dir(d.join("refs")).unwrap();
        std::fs::write(d.join("refs"), "").unwrap();
        assert!(super::holds_repository(d), "refs of any type");
        std::fs::remove_file(d.join("refs")).unwrap();
        assert!(!super::holds_repository(d), "no refs");
        std::fs::write(d.join("commondir"), "../main\n").unwrap();
        assert!(super::holds_repository(d), "a linked worktree's git directory");
        std::fs::remove_file(d.join("commondir")).unwrap();
        std::fs::remove_file(d.join("HEAD")).unwrap();
        std::fs::create_dir(d.join("refs")).unwrap();
        std::fs::create_dir(d.join("HEAD")).unwrap();
        assert!(
            !super::holds_repository(d),
            "a HEAD directory is no git directory's"
        );
        std::fs::write(d.join(".git"), "gitdir: elsewhere\n").unwrap();
        assert!(super::holds_repository(d), "a `.git` file");
    }

    #[test]
    fn the_write_that_would_complete_a_git_directory_is_told() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        std::fs::create_dir_all(root.join("h/objects")).unwrap();
        std::fs::write(root.join("h/config"), "").unwrap();
        assert_eq!(
            super::completed_git_dir(root, Path::new("h/HEAD")),
            None,
            "no refs yet"
        );
        std::fs::create_dir_all(root.join("h/refs")).unwrap();
        assert_eq!(
            super::completed_git_dir(root, Path::new("h/HEAD")),
            Some(root.join("h"))
        );
        assert_eq!(super::completed_git_dir(root, Path::new("h/other")), None);
        std::fs::create_dir_all(root.join("g/refs")).unwrap();
        std::fs::write(root.join("g/HEAD"), "").unwrap();
        assert_eq!(
            super::completed_git_dir(root, Path::new("g/objects/keep")),
            Some(root.join("g"))
        );
        std::fs::write(root.join("HEAD"), "").unwrap();
        assert_eq!(
            super::completed_git_dir(root, Path::new("commondir")),
            Some(root.to_path_buf()),
            "the root too"
        );
        assert_eq!(super::completed_git_dir(root, Path::new("plain/f")), None);
    }

    #[test]
    fn a_path_inside_a_git_directory_is_known_as_such_at_any_depth() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        for d in ["plain/a/b", "bare/objects/ab", "bare/refs/heads", "bare/hooks"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("bare/HEAD"), "ref: refs/heads/main\n").unwrap();
        let mut dirs = super::GitDirs::default();
        assert!(!dirs.above(root, Path::new("plain/a/b/f")));
        assert!(!dirs.above(root, Path::new("f")));
        assert!(
            !dirs.above(root, Path::new("bare")),
            "the directory itself is not above it"
        );
        assert!(dirs.above(root, Path::new("bare/config")));
        assert!(dirs.above(root, Path::new("bare/hooks/pre-commit")));
        assert!(dirs.above(root, Path::new("bare/objects/ab/cdef")));
        // asked again, from what it remembers
        assert!(dirs.above(root, Path::new("bare/hooks/post-commit")));
        assert!(!dirs.above(root, Path::new("plain/a/g")));
    }

    use super::*;

    fn repo(head: &str) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join(".git")).unwrap();
        std::fs::write(t.path().join(".git/HEAD"), head).unwrap();
        t
    }

    #[test]
    fn a_branch_is_named_from_head() {
        let t = repo("ref: refs/heads/feature/x\n");
        assert_eq!(git_branch(t.path()).as_deref(), Some("feature/x"));
    }

    #[test]
    fn a_detached_head_is_its_short_commit() {
        let t = repo("0123456789abcdef0123456789abcdef01234567\n");
        assert_eq!(git_branch(t.path()).as_deref(), Some("0123456"));
    }

    #[test]
    fn a_folder_inside_the_repository_has_its_branch() {
        let t = repo("ref: refs/heads/main\n");
        let sub = t.path().join("src/deep");
        std::fs::create_dir_all(&sub).unwrap();
        assert_eq!(git_branch(&sub).as_deref(), Some("main"));
    }

    #[test]
    fn a_worktree_follows_its_gitdir_file() {
        let t = tempfile::tempdir().unwrap();
        let main_git = t.path().join("main/.git/worktrees/wt");
        std::fs::create_dir_all(&main_git).unwrap();
        std::fs::write(main_git.join("HEAD"), "ref: refs/heads/web\n").unwrap();
        let wt = t.path().join("wt");
        std::fs::create_dir(&wt).unwrap();
        std::fs::write(wt.join(".git"), "gitdir: ../main/.git/worktrees/wt\n").unwrap();
        assert_eq!(git_branch(&wt).as_deref(), Some("web"));
        let abs = format!("gitdir: {}\n", main_git.display());
        std::fs::write(wt.join(".git"), abs).unwrap();
        assert_eq!(git_branch(&wt).as_deref(), Some("web"));
    }

    #[test]
    fn no_repository_or_an_unreadable_head_is_no_branch() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        // (the temp dir could itself sit in a repository: only what is below it is looked at)
        std::fs::write(t.path().join(".git"), "not a gitdir line\n").unwrap();
        assert_eq!(git_branch(&ws), None);
        std::fs::remove_file(t.path().join(".git")).unwrap();
        std::fs::create_dir(t.path().join(".git")).unwrap();
        assert_eq!(git_branch(&ws), None, "no HEAD");
        std::fs::write(t.path().join(".git/HEAD"), "garbage\n").unwrap();
        assert_eq!(git_branch(&ws), None);
        std::fs::write(t.path().join(".git/HEAD"), "x".repeat(10_000)).unwrap();
        assert_eq!(git_branch(&ws), None, "too large");
    }

    #[test]
    fn head_names_other_refs_without_refs() {
        assert_eq!(
            head_name("ref: refs/remotes/origin/main").as_deref(),
            Some("remotes/origin/main")
        );
        assert_eq!(head_name("ref: \n"), None);
        assert_eq!(head_name(""), None);
        assert_eq!(head_name("abc"), None);
    }
}
