//! Workspace-relative paths.
//!
//! A [`RelPath`] is a normalised, `/`-separated, relative path with no `.`/`..` components and no
//! NUL, stored as raw bytes so that non-UTF-8 names survive byte for byte.

use std::ffi::OsStr;
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Why a path cannot be a workspace path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The path is empty or names the workspace root itself.
    #[error("path `{0}` is empty or names the workspace root; give a file inside the workspace")]
    Empty(String),
    /// The path climbs out of the workspace with `..`.
    #[error("path `{0}` escapes the workspace through `..`")]
    Escapes(String),
    /// The path is absolute and not under the workspace root.
    #[error("path `{0}` is outside the workspace `{1}`")]
    Outside(String, String),
    /// The path contains a NUL byte.
    #[error("path `{0}` contains a NUL byte")]
    Nul(String),
}

/// A normalised workspace-relative path.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelPath(Vec<u8>);

impl RelPath {
    /// Normalises `input` against the workspace `root` (already canonical): `./a`, `a` and `<root>/a`
    /// give the same `RelPath`. `..` may cancel a previous component but never climb above the root.
    pub fn normalize(root: &Path, input: &Path) -> Result<RelPath, PathError> {
        let shown = || input.to_string_lossy().into_owned();
        if input.as_os_str().as_bytes().contains(&0) {
            return Err(PathError::Nul(shown()));
        }
        let rel: &Path = if input.is_absolute() {
            match input.strip_prefix(root) {
                Ok(r) => r,
                Err(_) => return Err(PathError::Outside(shown(), root.to_string_lossy().into_owned())),
            }
        } else {
            input
        };
        let mut parts: Vec<&[u8]> = Vec::new();
        for c in rel.components() {
            match c {
                Component::CurDir => {}
                Component::ParentDir => {
                    if parts.pop().is_none() {
                        return Err(PathError::Escapes(shown()));
                    }
                }
                Component::Normal(s) => parts.push(s.as_bytes()),
                Component::RootDir | Component::Prefix(_) => {
                    return Err(PathError::Outside(shown(), root.to_string_lossy().into_owned()))
                }
            }
        }
        if parts.is_empty() {
            return Err(PathError::Empty(shown()));
        }
        Ok(RelPath(parts.join(&b'/')))
    }

    /// Parses a stored relative path strictly: no absolute path, no `..`, no `.`, no NUL, no empty
    /// component. Used for paths read back from records.
    pub fn from_stored(bytes: &[u8]) -> Result<RelPath, PathError> {
        let shown = String::from_utf8_lossy(bytes).into_owned();
        if bytes.contains(&0) {
            return Err(PathError::Nul(shown));
        }
        if bytes.is_empty() {
            return Err(PathError::Empty(shown));
        }
        if bytes[0] == b'/' {
            return Err(PathError::Outside(shown, String::new()));
        }
        for part in bytes.split(|b| *b == b'/') {
            match part {
                b"" | b"." => return Err(PathError::Empty(shown)),
                b".." => return Err(PathError::Escapes(shown)),
                _ => {}
            }
        }
        Ok(RelPath(bytes.to_vec()))
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// As a relative `Path`.
    pub fn as_path(&self) -> &Path {
        Path::new(OsStr::from_bytes(&self.0))
    }

    /// `root.join(self)`.
    pub fn under(&self, root: &Path) -> PathBuf {
        root.join(self.as_path())
    }

    /// The text form when the name is valid UTF-8.
    pub fn to_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }

    /// The text form, with invalid UTF-8 replaced (for display and the lossy `path` field).
    pub fn to_lossy(&self) -> String {
        String::from_utf8_lossy(&self.0).into_owned()
    }

    /// Each ancestor directory from the top, excluding the path itself (`a`, `a/b` for `a/b/c`).
    pub fn ancestors_top_down(&self) -> Vec<RelPath> {
        let mut out = Vec::new();
        for (i, b) in self.0.iter().enumerate() {
            if *b == b'/' {
                out.push(RelPath(self.0[..i].to_vec()));
            }
        }
        out
    }
}

impl fmt::Debug for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.to_lossy())
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_lossy())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_path_three_ways() {
        let root = Path::new("/w/root");
        let a = RelPath::normalize(root, Path::new("./a")).unwrap();
        let b = RelPath::normalize(root, Path::new("a")).unwrap();
        let c = RelPath::normalize(root, Path::new("/w/root/a")).unwrap();
        let d = RelPath::normalize(root, Path::new("x/../a")).unwrap();
        assert_eq!(a, b);
        assert_eq!(b, c);
        assert_eq!(c, d);
        assert_eq!(a.to_str(), Some("a"));
    }

    #[test]
    fn escapes_and_outside_refused() {
        let root = Path::new("/w/root");
        assert!(matches!(
            RelPath::normalize(root, Path::new("../x")),
            Err(PathError::Escapes(_))
        ));
        assert!(matches!(
            RelPath::normalize(root, Path::new("/etc/passwd")),
            Err(PathError::Outside(..))
        ));
        assert!(matches!(
            RelPath::normalize(root, Path::new(".")),
            Err(PathError::Empty(_))
        ));
        assert!(matches!(
            RelPath::normalize(root, Path::new("/w/root")),
            Err(PathError::Empty(_))
        ));
    }

    #[test]
    fn stored_paths_are_strict() {
        assert!(RelPath::from_stored(b"a/b.txt").is_ok());
        assert!(RelPath::from_stored(b"../x").is_err());
        assert!(RelPath::from_stored(b"a/../x").is_err());
        assert!(RelPath::from_stored(b"/etc/passwd").is_err());
        assert!(RelPath::from_stored(b"a\0b").is_err());
        assert!(RelPath::from_stored(b"a//b").is_err());
        assert!(RelPath::from_stored(b"").is_err());
        assert!(RelPath::from_stored(b"caf\xe9").is_ok());
    }

    #[test]
    fn ancestors() {
        let p = RelPath::from_stored(b"a/b/c").unwrap();
        let names: Vec<String> = p.ancestors_top_down().iter().map(|a| a.to_lossy()).collect();
        assert_eq!(names, vec!["a", "a/b"]);
    }
}
