//! The log file: reading it (torn tails, format detection, replay) and appending to it.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use retrace_fsutil::Fs;
use serde::Deserialize;

use crate::entry::{Entry, Header, FORMAT};
use crate::error::{IoContext, Result, SessionError};
use crate::ids::SessionId;
use crate::index::Index;
use crate::legacy;
use crate::repair::LogDamage;

/// The bytes of a log and where its complete lines end.
#[derive(Debug)]
pub(crate) struct RawLog {
    pub(crate) bytes: Vec<u8>,
    /// Length of the prefix made of whole lines (ending in `\n`).
    pub(crate) complete: usize,
}

impl RawLog {
    /// Reads the whole log.
    pub(crate) fn read(path: &Path) -> Result<RawLog> {
        let bytes = retrace_fsutil::read_regular(path).at("read", path)?;
        let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        Ok(RawLog { bytes, complete })
    }

    /// The torn last line: bytes after the last newline.
    pub(crate) fn torn(&self) -> Option<&[u8]> {
        let tail = &self.bytes[self.complete..];
        (!tail.is_empty()).then_some(tail)
    }

    /// The complete lines with their 1-based numbers.
    pub(crate) fn lines(&self) -> impl Iterator<Item = (usize, &[u8])> {
        let body = match self.complete {
            0 => &[][..],
            n => &self.bytes[..n - 1],
        };
        body.split(|b| *b == b'\n')
            .enumerate()
            .map(|(i, l)| (i + 1, l))
            .take_while(move |_| self.complete > 0)
    }
}

/// A parsed log.
#[derive(Debug)]
pub(crate) enum Loaded {
    /// A format-2 log; `damage` is its first line that cannot be read, when it was loaded with
    /// `tolerate` (the index then holds the entries before that line).
    V2 {
        header: Box<Header>,
        index: Index,
        damage: Option<LogDamage>,
    },
    /// A flat format-1 log, read as one head `main`.
    V1 { index: Index },
}

/// What the first line of a log says about its format.
#[derive(Deserialize)]
struct Probe {
    #[serde(rename = "type")]
    kind: Option<serde_json::Value>,
    format: Option<serde_json::Value>,
    role: Option<serde_json::Value>,
}

fn corrupt(path: &Path, line: usize, detail: impl Into<String>) -> SessionError {
    SessionError::Corrupt {
        path: path.to_path_buf(),
        line,
        detail: detail.into(),
    }
}

fn unsupported(path: &Path, detail: impl Into<String>) -> SessionError {
    SessionError::UnsupportedFormat {
        path: path.to_path_buf(),
        detail: detail.into(),
    }
}

/// Parses the complete lines of `raw`. `fallback_at` dates format-1 messages, which carry no time.
/// With `tolerate`, a bad line after a good format-2 header ends the replay instead of failing it:
/// the result says which line, and holds what came before (with a `main` head made up in memory
/// when the log's own was not reached).
pub(crate) fn load(path: &Path, raw: &RawLog, fallback_at: &str, tolerate: bool) -> Result<Loaded> {
    let mut lines = raw.lines();
    let Some((_, first)) = lines.next() else {
        return Err(if raw.bytes.is_empty() {
            unsupported(path, "the file is empty")
        } else {
            corrupt(path, 1, "the only line is incomplete (no newline at its end)")
        });
    };
    match classify(path, first)? {
        Some(header) => {
            let mut index = Index::default();
            let mut last = 1;
            let mut damage = None;
            for (n, line) in lines {
                last = n;
                if let Err(detail) = replay_line(&mut index, line) {
                    if !tolerate {
                        return Err(corrupt(path, n, detail));
                    }
                    damage = Some(LogDamage {
                        path: path.to_path_buf(),
                        line: n,
                        detail,
                    });
                    break;
                }
            }
            if index.heads.is_empty() {
                if damage.is_none() {
                    return Err(corrupt(
                        path,
                        last,
                        "the log ends before its first head (a `fork` line of kind `main`)",
                    ));
                }
                // Never written: a damaged session takes no writes.
                let main = Entry::Fork(crate::entry::ForkEntry {
                    head: crate::ids::HeadId::main(),
                    kind: crate::entry::HeadKind::Main,
                    from: None,
                    parent_head: None,
                    name: None,
                    at: header.created_at.clone(),
                });
                index.apply(main).map_err(|d| corrupt(path, 2, d))?;
            }
            Ok(Loaded::V2 {
                header: Box::new(header),
                index,
                damage,
            })
        }
        None => {
            let all = std::iter::once((1, first)).chain(lines);
            let index = legacy::load(path, all, fallback_at)?;
            Ok(Loaded::V1 { index })
        }
    }
}

/// Replays one line of a format-2 log into `index`; on `Err` (what is wrong with it) nothing
/// changed.
pub(crate) fn replay_line(index: &mut Index, line: &[u8]) -> std::result::Result<(), String> {
    index.apply(parse_line(line)?)
}

/// Parses one line of a format-2 log (after the header); `Err` says what is wrong with it.
pub(crate) fn parse_line(line: &[u8]) -> std::result::Result<Entry, String> {
    if line.is_empty() {
        return Err("empty line".to_string());
    }
    parse_entry(line).map_err(|e| e.to_string())
}

/// Parses one entry. Lines as this crate writes them start with their `type`, which lets the
/// common kinds be parsed straight into their struct; serde's internally tagged enums buffer every
/// value first, which made opening a large log about twice as slow. Any other line (keys in another
/// order, an unknown type) goes through the enum, which gives the same result or the same error.
fn parse_entry(line: &[u8]) -> serde_json::Result<Entry> {
    fn typed<'a, T: serde::Deserialize<'a>>(
        line: &'a [u8],
        wrap: fn(T) -> Entry,
    ) -> serde_json::Result<Entry> {
        serde_json::from_slice(line).map(wrap)
    }
    if line.starts_with(br#"{"type":"message","#) {
        typed(line, Entry::Message)
    } else if line.starts_with(br#"{"type":"turn","#) {
        typed(line, Entry::Turn)
    } else if line.starts_with(br#"{"type":"note","#) {
        typed(line, Entry::Note)
    } else {
        // A message's outcome is kept raw, which serde's buffering of tagged enums cannot do: a
        // message whose keys come in another order is parsed as the struct it is.
        #[derive(serde::Deserialize)]
        struct Kind<'a> {
            #[serde(rename = "type", borrow)]
            kind: Option<std::borrow::Cow<'a, str>>,
        }
        match serde_json::from_slice::<Kind<'_>>(line) {
            Ok(Kind { kind: Some(k) }) if k == "message" => typed(line, Entry::Message),
            _ => serde_json::from_slice(line),
        }
    }
}

/// `Some(header)` for a format-2 log, `None` for format 1; any other first line is refused.
pub(crate) fn classify(path: &Path, first: &[u8]) -> Result<Option<Header>> {
    let probe: Probe = serde_json::from_slice(first).map_err(|e| {
        unsupported(
            path,
            format!("line 1 is not a JSON object ({e}); expected a session header or a message"),
        )
    })?;
    match (&probe.kind, &probe.format, &probe.role) {
        (Some(k), _, _) if k == "session" => {
            if probe.format.as_ref().and_then(|f| f.as_u64()) != Some(u64::from(FORMAT)) {
                let f = probe.format.map_or("none".to_string(), |f| f.to_string());
                return Err(unsupported(
                    path,
                    format!("its header says format {f}; this version reads formats 1 and 2"),
                ));
            }
            let header: Header =
                serde_json::from_slice(first).map_err(|e| corrupt(path, 1, e.to_string()))?;
            Ok(Some(header))
        }
        (Some(k), _, _) => Err(unsupported(
            path,
            format!("line 1 is a `{k}` entry, not a session header"),
        )),
        (None, _, Some(_)) => Ok(None),
        (None, _, None) => Err(unsupported(
            path,
            "line 1 is neither a session header nor a {role, content} message",
        )),
    }
}

/// Encodes entries as JSON Lines.
pub(crate) fn encode(entries: &[Entry]) -> Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(256 * entries.len());
    for e in entries {
        serde_json::to_writer(&mut buf, e)?;
        buf.push(b'\n');
    }
    Ok(buf)
}

/// Writes `bytes` durably to the first file `name(1)`, `name(2)`, … whose name is free, or reuses
/// a regular file that holds exactly them (the same step run again after a crash). A name taken by
/// anything but a regular file (a directory, a symbolic link) is skipped: a link is never
/// followed, read or written through.
pub(crate) fn keep_in_free_file(
    fs: &Fs,
    name: impl Fn(u32) -> PathBuf,
    bytes: &[u8],
    op: &'static str,
) -> Result<PathBuf> {
    let mut n = 1u32;
    loop {
        let p = name(n);
        match std::fs::symlink_metadata(&p) {
            Ok(meta) if meta.file_type().is_file() => match retrace_fsutil::read_regular(&p) {
                Ok(existing) if existing == bytes => return Ok(p),
                Ok(_) => {}
                Err(e) => return Err(e).at("read", &p),
            },
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                fs.write_atomic(&p, bytes).at(op, &p)?;
                return Ok(p);
            }
            Err(e) => return Err(e).at("inspect", &p),
        }
        n = match n.checked_add(1) {
            Some(n) => n,
            None => return Err(std::io::Error::other("every numbered name is taken")).at(op, &p),
        };
    }
}

/// The log's path in `dir`.
pub(crate) fn log_path(dir: &Path, id: &SessionId) -> PathBuf {
    dir.join(format!("{id}.jsonl"))
}

/// Keeps a torn tail aside in `<id>.torn-<n>` (durably), then cuts it off the log and syncs it.
/// Returns the file the bytes went to. Running it again after a crash is harmless: a torn file with
/// the same bytes is reused rather than written twice.
pub(crate) fn cut_torn_tail(
    fs: &Fs,
    dir: &Path,
    id: &SessionId,
    log: &Path,
    raw: &RawLog,
) -> Result<PathBuf> {
    let tail = raw.torn().unwrap_or_default();
    let kept = keep_in_free_file(
        fs,
        |n| dir.join(format!("{id}.torn-{n}")),
        tail,
        "keep the torn tail in",
    )?;
    let file = OpenOptions::new().write(true).open(log).at("open", log)?;
    fs.step("truncate_torn_tail").at("cut the torn tail of", log)?;
    file.set_len(raw.complete as u64)
        .at("cut the torn tail of", log)?;
    fs.sync_file(&file, "sync_log").at("sync", log)?;
    Ok(kept)
}

/// An open log, appended to with one `write` per batch of entries.
#[derive(Debug)]
pub(crate) struct Appender {
    file: File,
    path: PathBuf,
    len: u64,
    /// The device and inode of `file`: the log this writer locked and appends to.
    identity: (u64, u64),
}

impl Appender {
    /// Opens `path` (whose length is `len`) for appending.
    pub(crate) fn open(path: &Path, len: u64) -> Result<Appender> {
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .at("open for appending", path)?;
        let meta = file.metadata().at("read", path)?;
        Ok(Appender {
            file,
            path: path.to_path_buf(),
            len,
            identity: (meta.dev(), meta.ino()),
        })
    }

    /// Fails unless the log's name still leads to the file this writer opened (and locked): a log
    /// removed or replaced under a writer (its lease file removed too, and a copy put in its
    /// place) may already have a second writer, and lines appended to the old file would be lost
    /// to every reader.
    fn check_identity(&self) -> Result<()> {
        match std::fs::symlink_metadata(&self.path) {
            Ok(now) if (now.dev(), now.ino()) == self.identity => Ok(()),
            Ok(_) => Err(std::io::Error::other(
                "the log was replaced while this process wrote it (its name leads to another file than the one this writer locked); nothing more is written to it: open the session again",
            ))
            .at("append to", &self.path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(std::io::Error::other(
                "the log was removed while this process wrote it; nothing more is written to it: open the session again",
            ))
            .at("append to", &self.path),
            Err(e) => Err(e).at("read", &self.path),
        }
    }

    /// Appends `buf` (whole lines); fsyncs when `sync`. On failure the file is cut back to its old
    /// length where possible.
    pub(crate) fn append(&mut self, fs: &Fs, buf: &[u8], sync: bool) -> Result<()> {
        self.check_identity()?;
        let written = fs.step("append").and_then(|()| self.file.write_all(buf));
        if let Err(e) = written {
            let _ = self.file.set_len(self.len);
            return Err(e).at("append to", &self.path);
        }
        self.len += buf.len() as u64;
        if sync {
            self.sync(fs)?;
        }
        Ok(())
    }

    /// fsyncs the log.
    pub(crate) fn sync(&mut self, fs: &Fs) -> Result<()> {
        fs.sync_file(&self.file, "sync_log").at("sync", &self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(bytes: &[u8]) -> RawLog {
        let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        RawLog {
            bytes: bytes.to_vec(),
            complete,
        }
    }

    #[test]
    fn lines_and_torn_tails() {
        let r = raw(b"a\nb\nc");
        let lines: Vec<_> = r.lines().collect();
        assert_eq!(lines, [(1, &b"a"[..]), (2, &b"b"[..])]);
        assert_eq!(r.torn(), Some(&b"c"[..]));
        let r = raw(b"a\n\n");
        assert_eq!(r.lines().count(), 2);
        assert_eq!(r.torn(), None);
        assert_eq!(raw(b"").lines().count(), 0);
        assert_eq!(raw(b"abc").lines().count(), 0);
    }

    #[test]
    fn the_fast_path_parses_like_the_enum() {
        let lines: [&[u8]; 5] = [
            br#"{"type":"message","id":"m","parent":null,"head":"main","role":"user","content":"a\nb","at":"t"}"#,
            br#"{"type":"turn","turn":3,"head":"main","message_id":"m","at":"t"}"#,
            br#"{"type":"note","id":"n","parent":"m","head":"main","content":"x","at":"t"}"#,
            br#"{"id":"m","type":"message","parent":null,"head":"main","role":"user","content":"","at":"t"}"#,
            br#"{"type":"select","head":"main","at":"t"}"#,
        ];
        for line in lines {
            let slow: Entry = serde_json::from_slice(line).unwrap();
            assert_eq!(parse_entry(line).unwrap(), slow);
        }
        let bad = br#"{"type":"message","id":"m"}"#;
        assert!(parse_entry(bad).is_err());
    }

    #[test]
    fn other_formats_are_refused_by_name() {
        let p = Path::new("/x/s.jsonl");
        let err = load(p, &raw(b"{\"type\":\"session\",\"format\":3}\n"), "t", false).unwrap_err();
        assert!(err.to_string().contains("format 3"), "{err}");
        assert!(err.to_string().contains("/x/s.jsonl"), "{err}");
        let err = load(p, &raw(b"[1,2]\n"), "t", false).unwrap_err();
        assert!(matches!(err, SessionError::UnsupportedFormat { .. }), "{err}");
        let err = load(p, &raw(b"{\"type\":\"message\"}\n"), "t", false).unwrap_err();
        assert!(err.to_string().contains("not a session header"), "{err}");
        let err = load(p, &raw(b""), "t", false).unwrap_err();
        assert!(err.to_string().contains("empty"), "{err}");
    }
}
