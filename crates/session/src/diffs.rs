//! The diffs of tool results, kept apart from the log in `<id>.diffs`.
//!
//! A tool result's outcome lists the files the call changed, each with its unified diff. The
//! diffs are the bulk of an outcome (a rewritten 10 KB file gives about 21 KB of diff) and nothing
//! but the session view reads them, while every `retrace exec` opens the session and so replays
//! the whole log. Kept in the log, each diff made every later turn slower (BENCHMARKS.md, "The
//! session view's cost per turn"). So the log keeps the outcome (status, each change's action and
//! line counts) and this file keeps the diff texts, one JSON line per result:
//! `{"message":"<id of the tool message>","diffs":["<diff of change 0>", …]}`.
//!
//! **Durability.** The line is written before the log line that refers to it, by the process that
//! holds the writer lease, and never fsynced: a killed process loses nothing (the kernel has the
//! bytes), a power loss can lose the diffs of the last turns; the changes then say their diff was
//! not kept (`diff_lost`). A torn last line is skipped by readers and closed with a newline by the
//! next writer. A line that cannot be read loses only its own diffs. Should this file not be
//! writable, the diffs stay in the log line as before.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::ids::SessionId;

/// Where session `id`'s diffs are kept, in the sessions directory `dir`.
pub fn diffs_path(dir: &Path, id: &SessionId) -> PathBuf {
    dir.join(format!("{id}.diffs"))
}

#[derive(Serialize)]
struct LineOut<'a> {
    message: &'a str,
    diffs: &'a [String],
}

#[derive(Deserialize)]
struct LineIn {
    message: String,
    diffs: Vec<String>,
}

/// The append handle of a writer, opened at its first use.
#[derive(Debug, Default)]
pub(crate) struct DiffsWriter {
    file: Option<File>,
}

impl DiffsWriter {
    /// Appends the diffs of tool message `message` (one per change, in order).
    pub(crate) fn append(&mut self, path: &Path, message: &str, diffs: &[String]) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(&LineOut { message, diffs })?;
        line.push(b'\n');
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(open_for_append(path)?),
        };
        file.write_all(&line)
    }
}

/// Opens `path` to append, creating it (0600), and ends a torn last line with a newline.
fn open_for_append(path: &Path) -> std::io::Result<File> {
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    let len = file.metadata()?.len();
    if len > 0 {
        let mut last = [0u8; 1];
        file.seek(SeekFrom::Start(len - 1))?;
        file.read_exact(&mut last)?;
        if last[0] != b'\n' {
            file.write_all(b"\n")?;
        }
    }
    Ok(file)
}

/// The diffs a session kept apart, by tool message id.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct StoredDiffs {
    by_message: HashMap<String, Vec<String>>,
}

impl StoredDiffs {
    /// Reads `path`. A missing or unreadable file holds no diffs; unreadable lines are skipped.
    pub fn read(path: &Path) -> StoredDiffs {
        let Ok(bytes) = retrace_fsutil::read_regular(path) else {
            return StoredDiffs::default();
        };
        let mut by_message = HashMap::new();
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            if let Ok(l) = serde_json::from_slice::<LineIn>(line) {
                // Each result's diffs are written once: a later line for the same message is
                // not the writer's, and never replaces them.
                by_message.entry(l.message).or_insert(l.diffs);
            }
        }
        StoredDiffs { by_message }
    }

    /// The diffs of tool message `message`, when kept.
    pub fn of(&self, message: &str) -> Option<&[String]> {
        self.by_message.get(message).map(Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_read_back_and_a_torn_line_is_closed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.diffs");
        let mut w = DiffsWriter::default();
        w.append(&path, "m1", &["@@ -1 +1 @@\n-a\n+b\n".to_string()])
            .unwrap();
        drop(w);
        // A crash mid-line, then another writer.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(br#"{"message":"m2","di"#).unwrap();
        let mut w = DiffsWriter::default();
        w.append(&path, "m3", &[String::new(), "x".to_string()]).unwrap();
        let read = StoredDiffs::read(&path);
        assert_eq!(read.of("m1"), Some(&["@@ -1 +1 @@\n-a\n+b\n".to_string()][..]));
        assert_eq!(read.of("m2"), None);
        assert_eq!(read.of("m3"), Some(&[String::new(), "x".to_string()][..]));
        assert_eq!(
            StoredDiffs::read(&dir.path().join("absent")),
            StoredDiffs::default()
        );
    }
}
