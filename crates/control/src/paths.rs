//! Where Retrace keeps its data (SPEC §2).

use std::path::{Path, PathBuf};

use retrace_session::SessionId;

use retrace_protocol::{Error, ErrorCode};

/// The data root: `$RETRACE_HOME`, else `$XDG_DATA_HOME/retrace`, else `~/.local/share/retrace`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataRoot {
    root: PathBuf,
}

impl DataRoot {
    /// A data root at `root`.
    pub fn at(root: impl Into<PathBuf>) -> DataRoot {
        DataRoot { root: root.into() }
    }

    /// The data root the environment names.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<DataRoot, Error> {
        let non_empty = |k: &str| var(k).filter(|v| !v.is_empty());
        if let Some(r) = non_empty("RETRACE_HOME") {
            return Ok(DataRoot::at(r));
        }
        if let Some(x) = non_empty("XDG_DATA_HOME") {
            return Ok(DataRoot::at(Path::new(&x).join("retrace")));
        }
        match non_empty("HOME") {
            Some(h) => Ok(DataRoot::at(Path::new(&h).join(".local/share/retrace"))),
            None => Err(Error::new(
                ErrorCode::Usage,
                "no data directory: neither RETRACE_HOME, XDG_DATA_HOME nor HOME is set; set RETRACE_HOME",
            )),
        }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<root>/sessions`.
    pub fn sessions_dir(&self) -> PathBuf {
        self.root.join("sessions")
    }

    /// The checkpoint sidecar of a session: `<root>/sessions/<id>.ckpt`.
    pub fn sidecar(&self, id: &SessionId) -> PathBuf {
        self.sessions_dir().join(format!("{}.ckpt", id.as_str()))
    }

    /// The log of a session: `<root>/sessions/<id>.jsonl`.
    pub fn log(&self, id: &SessionId) -> PathBuf {
        self.sessions_dir().join(format!("{}.jsonl", id.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolution_order() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        };
        let r = DataRoot::from_env(env(&[
            ("RETRACE_HOME", "/r"),
            ("XDG_DATA_HOME", "/x"),
            ("HOME", "/h"),
        ]));
        assert_eq!(r.unwrap().root(), Path::new("/r"));
        let r = DataRoot::from_env(env(&[("XDG_DATA_HOME", "/x"), ("HOME", "/h")]));
        assert_eq!(r.unwrap().root(), Path::new("/x/retrace"));
        let r = DataRoot::from_env(env(&[("HOME", "/h")]));
        assert_eq!(r.unwrap().root(), Path::new("/h/.local/share/retrace"));
        assert!(DataRoot::from_env(env(&[])).is_err());
    }
}
