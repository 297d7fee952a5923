//! Workspace path safety (SPEC §4 "Paths").
//!
//! Every path a tool receives is resolved here before anything is read or written:
//!
//! 1. It is normalised lexically into a [`RelPath`] (`./a`, `a` and `<root>/a` are one path); `..`
//!    that climbs above the root and absolute paths outside the root are refused.
//! 2. Its components are then walked on disk from the (canonical) root. A symlink component is
//!    followed: if it leads outside the workspace the path is refused, otherwise the path is usable
//!    but carries a `symlink` gap, because a restore of such a path cannot be trusted. A dangling
//!    symlink is followed too (by reading its target), so `write_file` through it cannot create a
//!    file outside.
//! 3. An existing file with several hard links carries a `hardlink` gap.
//!
//! What it trades away: the check and the write are separate system calls, so a process racing the
//! agent could swap a directory for a symlink in between. The tools re-resolve right before they
//! write and write to the resolved real path, which narrows the window but cannot close it without
//! `openat`-style descriptors; Retrace defends against mistakes, not against a hostile local user.

use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use retrace_fsutil::{Fs, PathError, RelPath};
use retrace_protocol::{Gap, GapReason};

use crate::error::{IoContext, Result, ToolError};

/// How many symlinks one resolution follows before it gives up (as the kernel's `ELOOP`).
const MAX_SYMLINK_HOPS: usize = 40;

/// The directory the tools may touch, with the durable-write layer they use.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    fs: Fs,
    /// Places inside or outside the workspace that no tool reads or writes (Retrace's data root,
    /// its config file and that file's directory), canonical, each with what it is.
    off_limits: Vec<(PathBuf, String)>,
    /// Whether the tools may read and write inside `.git/` (SPEC §8: not by default).
    git: bool,
    /// Environment variables the shell tool's commands do not inherit (API keys).
    hidden_env: Vec<String>,
}

/// A workspace path resolved for an edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// The normalised workspace-relative path (what checkpoints record).
    pub rel: RelPath,
    /// `root/rel`: the lexical absolute path, symlinks not followed.
    pub abs: PathBuf,
    /// The path with every symlink component followed; always inside the workspace. Content is
    /// written here, so a symlink inside the workspace stays a symlink.
    pub real: PathBuf,
    /// The directory entry itself: the real parent joined with the last name, a final symlink not
    /// followed. Renames and deletions act here (deleting a symlink deletes the link).
    pub entry: PathBuf,
    /// `symlink` and `hardlink` gaps of this path (with `tool` unset).
    pub gaps: Vec<Gap>,
}

/// A path resolved for a read tool: like [`ResolvedPath`] but may name the root itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadTarget {
    /// The real path (inside the workspace).
    pub real: PathBuf,
    /// How to show it to the model: workspace-relative, `.` for the root.
    pub shown: String,
}

impl Workspace {
    /// Opens the workspace at `root` (canonicalised), writing durably.
    pub fn new(root: impl AsRef<Path>) -> Result<Workspace> {
        let given = root.as_ref();
        let root = fs::canonicalize(given).at("open workspace", given)?;
        if !root.is_dir() {
            return Err(ToolError::NotADirectory {
                path: given.display().to_string(),
            });
        }
        Ok(Workspace {
            root,
            fs: Fs::durable(),
            off_limits: Vec::new(),
            git: false,
            hidden_env: Vec::new(),
        })
    }

    /// This workspace with `path` (a directory: everything under it; a file: that file) off
    /// limits to every tool; `what` says what it is, for the tool error. A path that does not
    /// exist yet is kept as given.
    /// A directory that holds the whole workspace (a config named by `RETRACE_CONFIG` at the
    /// workspace root) is left out: it would forbid everything; its file alone stays off limits.
    pub fn with_off_limits(mut self, path: &Path, what: &str) -> Workspace {
        let p = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if !self.root.starts_with(&p) {
            self.off_limits.push((p, what.to_string()));
        }
        self
    }

    /// This workspace with `.git/` open to the tools (`[permissions] git = "allow"`).
    pub fn with_git(mut self, allowed: bool) -> Workspace {
        self.git = allowed;
        self
    }

    /// Keeps the variable `name` (an API key) out of the shell tool's environment.
    pub fn with_hidden_env(mut self, name: &str) -> Workspace {
        if !self.hidden_env.iter().any(|v| v == name) {
            self.hidden_env.push(name.to_string());
        }
        self
    }

    /// The variables the shell tool's commands do not inherit.
    pub fn hidden_env(&self) -> &[String] {
        &self.hidden_env
    }

    /// Refuses a path inside `.git/` (unless allowed) or inside a place off limits. `real` is the
    /// path with every symlink followed, so a symlink to such a place is refused too.
    fn check_limits(&self, path: &str, rel: &RelPath, real: &Path) -> Result<()> {
        let in_git = |p: &Path| p.components().any(|c| c.as_os_str() == ".git");
        let real_rel = real.strip_prefix(&self.root).unwrap_or(real);
        if !self.git && (in_git(rel.as_path()) || in_git(real_rel)) {
            return Err(ToolError::OffLimits {
                path: path.to_string(),
                why: "it is inside `.git/`, which the tools do not read or write (a hook or a config entry there runs commands); set `git = \"allow\"` under `[permissions]` in the config to allow it".into(),
            });
        }
        // A git directory standing on its own (a bare repository, the one `git init
        // --separate-git-dir` makes) is `.git/` by another name, and so is the piece that would
        // make a directory one (its `HEAD`, `objects`, `refs` written last).
        if !self.git {
            let allow = "set `git = \"allow\"` under `[permissions]` in the config to allow it";
            let why = if retrace_fsutil::GitDirs::default().above(&self.root, real_rel) {
                Some(format!("it is inside a git directory (a bare repository, or one kept apart from its work tree), which the tools do not read or write (a hook or a config entry there runs commands); {allow}"))
            } else {
                retrace_fsutil::completed_git_dir(&self.root, real_rel).map(|dir| {
                    let dir = dir.strip_prefix(&self.root).unwrap_or(&dir).display().to_string();
                    format!("it would make `{dir}` a git directory, whose config and hooks run commands, which the tools do not write; {allow}")
                })
            };
            if let Some(why) = why {
                return Err(ToolError::OffLimits {
                    path: path.to_string(),
                    why,
                });
            }
        }
        if let Some((_, what)) = self.off_limits.iter().find(|(p, _)| real.starts_with(p)) {
            return Err(ToolError::OffLimits {
                path: path.to_string(),
                why: format!("it is {what}, which the tools never read or write"),
            });
        }
        Ok(())
    }

    /// Whether a walk (`list_dir`, `glob`, `grep`) skips `real`: a place off limits (the walk skips
    /// `.git/` itself, whatever the config says).
    pub(crate) fn walk_skips(&self, real: &Path) -> bool {
        self.off_limits
            .iter()
            .any(|(p, _)| crate::ignore_rules::under(real, p))
    }

    /// Whether anything under the directory `dir` (real, absolute) may be off limits: an off-limits
    /// place lies under it or holds it. A walk asks once per directory.
    pub(crate) fn walk_skips_under(&self, dir: &Path) -> bool {
        self.off_limits
            .iter()
            .any(|(p, _)| crate::ignore_rules::under(p, dir) || crate::ignore_rules::under(dir, p))
    }

    /// This workspace with another durable-write layer (tests use [`Fs::without_sync`]).
    pub fn with_fs(mut self, fs: Fs) -> Workspace {
        self.fs = fs;
        self
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The durable-write layer.
    pub fn fs(&self) -> &Fs {
        &self.fs
    }

    /// Resolves a path given by the model for an edit (see the module docs). Refuses escapes,
    /// absolute paths outside, symlinks leading outside, and the root itself.
    pub fn resolve(&self, path: &str) -> Result<ResolvedPath> {
        if path.is_empty() {
            return Err(ToolError::BadPath(
                "the path is empty; give a path relative to the workspace root, like `src/main.rs`".into(),
            ));
        }
        let rel = self.normalize(path)?;
        let abs = rel.under(&self.root);
        let mut gaps = Vec::new();
        let (real, entry) = self.walk(path, &rel, &mut gaps)?;
        self.check_limits(path, &rel, &real)?;
        if let Ok(meta) = fs::metadata(&real) {
            if meta.is_file() && meta.nlink() > 1 {
                gaps.push(Gap {
                    reason: GapReason::Hardlink,
                    tool: None,
                    path: Some(rel.to_lossy()),
                    detail: Some(format!(
                        "{} hard links; an edit replaces this name only and the other names are not tracked",
                        meta.nlink()
                    )),
                });
            }
        }
        Ok(ResolvedPath {
            rel,
            abs,
            real,
            entry,
            gaps,
        })
    }

    /// Resolves a path for a read tool: `""`, `.` and the root itself name the root.
    pub(crate) fn resolve_read(&self, path: &str) -> Result<ReadTarget> {
        let is_root = path.is_empty()
            || matches!(
                self.normalize(path),
                Err(ToolError::BadPath(_)) if !path.contains('\0')
            );
        if is_root {
            return Ok(ReadTarget {
                real: self.root.clone(),
                shown: ".".into(),
            });
        }
        let r = self.resolve(path)?;
        Ok(ReadTarget {
            shown: r.rel.to_lossy(),
            real: r.real,
        })
    }

    /// `abs` shown relative to the root (`.` for the root; the path itself if outside).
    pub fn display(&self, abs: &Path) -> String {
        match abs.strip_prefix(&self.root) {
            Ok(r) if r.as_os_str().is_empty() => ".".into(),
            Ok(r) => r.to_string_lossy().into_owned(),
            Err(_) => abs.to_string_lossy().into_owned(),
        }
    }

    /// Lexical normalisation, mapping errors to messages for the model.
    fn normalize(&self, path: &str) -> Result<RelPath> {
        let mut input = PathBuf::from(path);
        if input.is_absolute() && !input.starts_with(&self.root) {
            // `/tmp/ws/a` when the canonical root is `/private/tmp/ws`: canonicalise what exists.
            if let Some(c) = canonical_prefix(&input) {
                if c.starts_with(&self.root) {
                    input = c;
                }
            }
        }
        RelPath::normalize(&self.root, &input).map_err(|e| match e {
            PathError::Escapes(p) => ToolError::OutsideWorkspace {
                path: p,
                why: "`..` climbs above the workspace root".into(),
            },
            PathError::Outside(p, _) => ToolError::OutsideWorkspace {
                path: p,
                why: format!("it is not under the workspace root `{}`", self.root.display()),
            },
            PathError::Empty(p) => ToolError::BadPath(format!(
                "`{p}` names the workspace root itself; give a file inside it"
            )),
            PathError::Nul(p) => ToolError::BadPath(format!("`{}` contains a NUL byte", p.escape_debug())),
        })
    }

    /// Follows `rel` component by component from the root; returns the real path and the entry
    /// (see [`ResolvedPath::entry`]).
    fn walk(&self, given: &str, rel: &RelPath, gaps: &mut Vec<Gap>) -> Result<(PathBuf, PathBuf)> {
        let comps: Vec<&Path> = rel.as_path().iter().map(Path::new).collect();
        let mut cur = self.root.clone();
        let mut entry = self.root.clone();
        for (i, comp) in comps.iter().enumerate() {
            let next = cur.join(comp);
            entry.clone_from(&next);
            let meta = match fs::symlink_metadata(&next) {
                Ok(m) => m,
                Err(e) if e.kind() == io::ErrorKind::NotFound || e.kind() == io::ErrorKind::NotADirectory => {
                    // Nothing below a missing name can be a symlink: the rest is lexical.
                    let mut rest = next;
                    for c in &comps[i + 1..] {
                        rest.push(c);
                    }
                    return Ok((rest.clone(), rest));
                }
                Err(e) => return Err(e).at("inspect", next),
            };
            if !meta.file_type().is_symlink() {
                cur = next;
                continue;
            }
            let target = follow_symlink(&next)?;
            let shown_link = comps[..=i]
                .iter()
                .map(|c| c.to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            if !target.starts_with(&self.root) {
                return Err(ToolError::OutsideWorkspace {
                    path: given.to_string(),
                    why: format!("`{shown_link}` is a symlink to `{}`", target.display()),
                });
            }
            let what = if i + 1 == comps.len() {
                "the path is a symlink".to_string()
            } else {
                format!("`{shown_link}` is a symlink")
            };
            gaps.push(Gap {
                reason: GapReason::Symlink,
                tool: None,
                path: Some(rel.to_lossy()),
                detail: Some(format!(
                    "{what} to `{}`; the change is made but cannot be restored",
                    self.display(&target)
                )),
            });
            cur = target;
        }
        Ok((cur, entry))
    }
}

/// The real path a symlink leads to, also when it dangles (then its last missing components are
/// kept lexically).
fn follow_symlink(link: &Path) -> Result<PathBuf> {
    let mut cur = link.to_path_buf();
    for _ in 0..MAX_SYMLINK_HOPS {
        match fs::canonicalize(&cur) {
            Ok(p) => return Ok(p),
            Err(e) if e.kind() == io::ErrorKind::NotFound || e.kind() == io::ErrorKind::NotADirectory => {}
            Err(e) => return Err(e).at("resolve symlink", cur),
        }
        let meta = fs::symlink_metadata(&cur);
        match meta {
            Ok(m) if m.file_type().is_symlink() => {
                let target = fs::read_link(&cur).at("read symlink", &cur)?;
                let base = cur.parent().map(Path::to_path_buf).unwrap_or_default();
                cur = lexical(&base.join(target));
            }
            _ => {
                // A missing name: canonicalise its parent, keep the name.
                return Ok(canonical_prefix(&cur).unwrap_or(cur));
            }
        }
    }
    Err(ToolError::Io {
        op: "resolve symlink",
        path: link.to_path_buf(),
        source: io::Error::other("too many levels of symbolic links"),
    })
}

/// Canonicalises the deepest existing ancestor of `p` and appends the rest lexically.
fn canonical_prefix(p: &Path) -> Option<PathBuf> {
    let p = lexical(p);
    let mut tail: Vec<std::ffi::OsString> = Vec::new();
    let mut cur: &Path = &p;
    loop {
        if let Ok(c) = fs::canonicalize(cur) {
            let mut out = c;
            for t in tail.iter().rev() {
                out.push(t);
            }
            return Some(out);
        }
        tail.push(cur.file_name()?.to_os_string());
        cur = cur.parent()?;
    }
}

/// Removes `.` and resolves `..` textually (absolute paths only; `..` at `/` stays at `/`).
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn three_spellings_one_path() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let a = ws.resolve("./a/b.txt").unwrap();
        let b = ws.resolve("a/b.txt").unwrap();
        let abs = format!("{}/a/b.txt", ws.root().display());
        let c = ws.resolve(&abs).unwrap();
        assert_eq!(a, b);
        assert_eq!(b, c);
        assert!(a.gaps.is_empty());
    }

    #[test]
    fn dangling_symlink_outside_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ws_dir = dir.path().join("ws");
        fs::create_dir(&ws_dir).unwrap();
        symlink(dir.path().join("nowhere/new.txt"), ws_dir.join("l")).unwrap();
        let ws = Workspace::new(&ws_dir).unwrap();
        assert!(matches!(ws.resolve("l"), Err(ToolError::OutsideWorkspace { .. })));
    }

    #[test]
    fn dangling_symlink_inside_resolves_to_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        symlink("sub/new.txt", dir.path().join("l")).unwrap();
        let r = ws.resolve("l").unwrap();
        assert_eq!(r.real, ws.root().join("sub/new.txt"));
        assert_eq!(r.entry, ws.root().join("l"));
        assert_eq!(r.gaps.len(), 1);
        assert_eq!(r.gaps[0].reason, GapReason::Symlink);
    }

    #[test]
    fn root_for_read_tools() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        for p in ["", ".", "./", "a/.."] {
            assert_eq!(ws.resolve_read(p).unwrap().shown, ".", "{p}");
        }
        assert!(ws.resolve_read("..").is_err());
        assert!(ws.resolve("").is_err());
        assert!(ws.resolve(".").is_err());
    }
}
