//! The ignore rules of the walking tools (`list_dir`, `glob`, `grep`), read by Retrace itself
//! rather than by the walker, so that a hostile repository cannot hang, exhaust or mislead a walk:
//!
//! - each ignore file is opened without following a symlink (as git does since 2.32) and without
//!   blocking, is read only when it is a regular file, and at most [`MAX_IGNORE_FILE_BYTES`] of
//!   it; anything else counts as absent (a FIFO, `/proc/self/pagemap` behind a symlink);
//! - the rules that apply come from the workspace root down, and above it only from inside the
//!   same git repository, up to its top (the *boundary*): a dotfiles `~/.gitignore` of `*` does not
//!   hide a project in `~/src`. A directory counts as a repository top only when it holds a real
//!   `.git` (a directory with `HEAD`, or a `gitdir:` file) owned by the workspace's owner;
//! - a nested repository inside the workspace starts afresh: rules from above it do not apply
//!   inside it, as git does not look into it;
//! - the deepest directory with a say decides, so `!keep.log` in `a/.gitignore` re-includes what
//!   `*.log` above excluded; within a directory `.ignore` comes before `.gitignore`, and that before
//!   the repository's `.git/info/exclude`.

use std::collections::HashMap;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;

/// The most of one ignore file that is read.
pub const MAX_IGNORE_FILE_BYTES: u64 = 1 << 20;

/// Ignore files read in every directory, in precedence order.
pub(crate) const IGNORE_FILES: [&str; 2] = [".ignore", ".gitignore"];

/// The rules of one directory, in precedence order.
#[derive(Default)]
struct DirRules {
    matchers: Vec<Gitignore>,
    /// The directory is the top of a git repository.
    repo_top: bool,
}

/// The ignore rules of one workspace, read lazily per directory and kept for the walk.
pub(crate) struct IgnoreRules {
    boundary: PathBuf,
    owner: Option<u32>,
    /// Keyed by the directory's bytes (a `PathBuf` key hashes component by component, which a
    /// walk pays for every ancestor of every entry; the walk's paths are normalized, so the bytes
    /// name a directory as well).
    dirs: Mutex<HashMap<std::ffi::OsString, Arc<DirRules>>>,
}

/// Whether `path` is `prefix` or lies under it, comparing bytes (the walk's paths are
/// normalized: no `.`, `..` or doubled `/`); a path spelled otherwise falls back to comparing
/// components, so the answer is always `Path::starts_with`'s.
pub(crate) fn under(path: &Path, prefix: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (p, q) = (path.as_os_str().as_bytes(), prefix.as_os_str().as_bytes());
    let plain = |b: &[u8]| {
        !b.ends_with(b"/")
            && !b.ends_with(b"/.")
            && !b.windows(2).any(|w| w == b"//")
            && !b.windows(3).any(|w| w == b"/./")
    };
    if !(plain(p) && plain(q)) || q.is_empty() {
        return path.starts_with(prefix);
    }
    match p.strip_prefix(q) {
        Some(rest) => rest.is_empty() || rest[0] == b'/' || q == b"/",
        None => false,
    }
}

impl IgnoreRules {
    /// The rules of the workspace at `root` (canonical).
    pub(crate) fn new(root: &Path) -> IgnoreRules {
        let owner = std::fs::metadata(root).ok().map(|m| m.uid());
        let boundary = if root.join(".git").exists() {
            root.to_path_buf()
        } else {
            root.ancestors()
                .skip(1)
                .find(|d| is_repo_top(d, owner))
                .map_or_else(|| root.to_path_buf(), Path::to_path_buf)
        };
        IgnoreRules {
            boundary,
            owner,
            dirs: Mutex::new(HashMap::new()),
        }
    }

    /// Whether `path` (absolute, inside the workspace) is ignored.
    pub(crate) fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        match path.parent() {
            Some(dir) => self.chain(dir).ignored(path, is_dir),
            None => false,
        }
    }

    /// The rules that bear on the entries of the directory `dir` (absolute, inside the
    /// workspace), deepest first: a walk asks once per directory, not once per entry.
    pub(crate) fn chain(&self, dir: &Path) -> Chain {
        let mut rules = Vec::new();
        // Asked once: every ancestor of a directory under the boundary is, down to the boundary
        // itself, where the walk up stops (asking again of each made a deep tree cubic).
        if !under(dir, &self.boundary) {
            return Chain(rules);
        }
        for dir in dir.ancestors() {
            let r = self.rules(dir);
            let stop = r.repo_top || dir == self.boundary;
            if !r.matchers.is_empty() {
                rules.push(r);
            }
            if stop {
                break;
            }
        }
        Chain(rules)
    }

    /// The top of the repository whose rules apply (the workspace root when it is in none).
    pub(crate) fn boundary(&self) -> &Path {
        &self.boundary
    }

    /// Takes `dir` (absolute) as holding no ignore file and no `.git`, as a listing of it just
    /// found, so that its rules need not be looked for.
    pub(crate) fn listed_plain(&self, dir: &Path) {
        self.lock()
            .entry(dir.as_os_str().to_owned())
            .or_insert_with(|| Arc::new(DirRules::default()));
    }

    fn rules(&self, dir: &Path) -> Arc<DirRules> {
        if let Some(r) = self.lock().get(dir.as_os_str()) {
            return r.clone();
        }
        let r = Arc::new(read_dir_rules(dir, self.owner));
        self.lock().insert(dir.as_os_str().to_owned(), r.clone());
        r
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<std::ffi::OsString, Arc<DirRules>>> {
        self.dirs.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The rules that bear on one directory's entries ([`IgnoreRules::chain`]).
pub(crate) struct Chain(Vec<Arc<DirRules>>);

impl Chain {
    /// Whether `path` (an entry of the directory the chain is of) is ignored: the deepest
    /// directory with a say decides.
    pub(crate) fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        for rules in &self.0 {
            for m in &rules.matchers {
                match m.matched(path, is_dir) {
                    Match::Ignore(_) => return true,
                    Match::Whitelist(_) => return false,
                    Match::None => {}
                }
            }
        }
        false
    }
}

/// Whether `dir` holds a real git repository owned by `owner`: a `.git` directory with a `HEAD`,
/// or a `.git` file that says `gitdir:` (a worktree or a submodule).
fn is_repo_top(dir: &Path, owner: Option<u32>) -> bool {
    let git = dir.join(".git");
    let Ok(meta) = std::fs::symlink_metadata(&git) else {
        return false;
    };
    if owner.is_some_and(|o| o != meta.uid()) {
        return false;
    }
    if meta.is_dir() {
        return git.join("HEAD").is_file();
    }
    meta.is_file() && read_capped(&git, 64).is_some_and(|t| t.starts_with("gitdir:"))
}

fn read_dir_rules(dir: &Path, owner: Option<u32>) -> DirRules {
    let mut matchers = Vec::new();
    for name in IGNORE_FILES {
        if let Some(m) = matcher(dir, &dir.join(name)) {
            matchers.push(m);
        }
    }
    let repo_top = is_repo_top(dir, owner);
    if repo_top && dir.join(".git").is_dir() {
        if let Some(m) = matcher(dir, &dir.join(".git/info/exclude")) {
            matchers.push(m);
        }
    }
    DirRules { matchers, repo_top }
}

/// The rules of the ignore file `file`, anchored at `dir`; `None` when there is none to read.
fn matcher(dir: &Path, file: &Path) -> Option<Gitignore> {
    let text = read_capped(file, MAX_IGNORE_FILE_BYTES)?;
    let mut b = GitignoreBuilder::new(dir);
    for line in text.lines() {
        // A bad pattern is skipped, as git skips it.
        let _ = b.add_line(Some(file.to_path_buf()), line);
    }
    b.build().ok().filter(|g| !g.is_empty())
}

/// At most `cap` bytes of the regular file `file` (not through a symlink, never blocking).
fn read_capped(file: &Path, cap: u64) -> Option<String> {
    let (f, _) = retrace_fsutil::open_regular_nofollow(file).ok()?;
    let mut bytes = Vec::new();
    f.take(cap).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// `under` is a faster `Path::starts_with`: the same answer for every spelling.
    #[test]
    fn under_answers_as_starts_with_does() {
        let paths = [
            "/", "/a", "/a/", "/a/b", "/a/bc", "/ab", "/a/b/c", "/a//b", "/a/./b", "/a/b/.", "/a/..",
            "/a/../b", "a", "a/b", "./a", "", "/a/b/", "//a", "/.",
        ];
        for p in paths {
            for q in paths {
                assert_eq!(
                    under(Path::new(p), Path::new(q)),
                    Path::new(p).starts_with(q),
                    "under({p:?}, {q:?})"
                );
            }
        }
    }
}
