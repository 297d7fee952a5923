//! A log with a line that cannot be read: what opening it tolerantly says, and the repair that
//! moves every line it cannot replay aside.
//!
//! A line in the middle of a log can go bad for reasons outside Retrace's control (a disk, an
//! editor, a second writer of an older version whose lease was removed). Strict opening refuses the
//! whole log naming the line (SPEC §6); opening it *tolerantly* gives the session as it was before
//! that line, with [`Session::damage`] naming it, and refuses every write, so the files can still
//! be restored from the checkpoints while the conversation waits for the repair.
//!
//! [`SessionOptions::repair`] keeps every line that replays exactly as written, in order, and moves
//! each other line — one that does not parse, or one that refers to something not in the log
//! (a message or head of a line moved aside, a parent that is no longer the tip of its head, as a
//! second writer's lines are) — into `<id>.damaged-<n>` beside the log, byte for byte. A message
//! that is missing (lost in a line that cannot be read, or a parent no line defines) is the parent
//! of the next message on its head: so that message and the rest of the head stay, the repair
//! writes a placeholder `note` with the missing message's id in its place (the model sees a system
//! message saying a message is missing). A tool result that answers no open call (its call was
//! lost) moves aside, a note taking its id and place. A `turn` line whose number is larger than a
//! later one's moves aside (not the later ones), and a lost `main` fork line is written again. The
//! repaired log is therefore consistent by construction (every reference in it resolves), and the
//! model is never sent a result that answers nothing. The moved lines are written (and synced)
//! first, then the log is replaced atomically; a crash between the two leaves the old log, and
//! running the repair again reuses the file.

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::entry::Entry;
use crate::error::{IoContext, Result, SessionError};
use crate::ids::{MessageId, SessionId};
use crate::index::Index;
use crate::lease::Lease;
use crate::log::{self, RawLog};
use crate::options::SessionOptions;
use crate::session::Session;

mod rules;

use rules::{
    entry_id, entry_parent, is_main_fork, main_fork, misordered_turns, orphan_result, placeholder, stand_in,
};
pub use rules::{PLACEHOLDER_TEXT, TOOL_PLACEHOLDER_TEXT};

/// The first line of a log that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogDamage {
    /// The log.
    pub path: PathBuf,
    /// The 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub detail: String,
}

impl std::fmt::Display for LogDamage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` line {}: {}", self.path.display(), self.line, self.detail)
    }
}

/// A line a repair moved out of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovedLine {
    /// Its 1-based number in the log before the repair.
    pub line: usize,
    /// Why it could not stay.
    pub reason: String,
}

/// What a repair did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repaired {
    /// The log.
    pub log: PathBuf,
    /// The lines moved aside, in order; empty when the log was sound (nothing was written).
    pub moved: Vec<MovedLine>,
    /// The file holding their bytes (`<id>.damaged-<n>`), when lines were moved.
    pub moved_to: Option<PathBuf>,
    /// Lines of the old log the log holds now, the header included.
    pub lines_kept: usize,
    /// Notes the repair wrote in place of messages that could not be read (each stands where a
    /// later message names the lost one as its parent, so that message and the rest of its head
    /// stay).
    pub placeholders: usize,
}

/// The file of the `n`-th repair's moved lines of session `id`.
pub fn damaged_path(dir: &Path, id: &SessionId, n: u32) -> PathBuf {
    dir.join(format!("{id}.damaged-{n}"))
}

impl Session {
    /// The first line of the log that could not be read, for a session opened tolerantly
    /// ([`SessionOptions::open_writer_tolerant`]); `None` for a sound log. While it is set, the
    /// session holds only what came before that line, and every write is refused.
    pub fn damage(&self) -> Option<&LogDamage> {
        self.damage.as_ref()
    }
}

impl SessionOptions {
    /// Repairs session `id`'s log under its writer lease (refused while another process holds
    /// it): every line that does not replay as written moves, byte for byte, to
    /// `<id>.damaged-<n>`, and the log keeps the others in order. A torn last line moves too. A
    /// sound log is left untouched. An old format-1 log is never rewritten, and a log whose header
    /// or first head cannot be read cannot be repaired this way: both are refused, changing nothing.
    pub fn repair(&self, dir: &Path, id: &SessionId) -> Result<Repaired> {
        if !id.is_file_safe() {
            return Err(SessionError::InvalidSessionId(id.to_string()));
        }
        let path = log::log_path(dir, id);
        if !path.exists() {
            return Err(SessionError::NoSuchSession { id: id.clone(), path });
        }
        let lease = Lease::acquire(dir, id)?;
        let raw = RawLog::read(&path)?;
        let refuse = |why: String| SessionError::Unrepairable {
            path: path.clone(),
            why,
        };
        let mut lines = raw.lines();
        let Some((_, first)) = lines.next() else {
            return Err(refuse("it has no complete line, so no header".to_string()));
        };
        let header = match log::classify(&path, first) {
            Ok(Some(h)) => h,
            Ok(None) => {
                return Err(refuse(
                    "it is an old (format-1) log, which is never rewritten".to_string(),
                ))
            }
            Err(e) => return Err(refuse(format!("its header cannot be read ({e})"))),
        };
        if header.id != *id {
            return Err(refuse(format!("its header names session `{}`", header.id)));
        }
        // The messages some line that reads defines: any other id a line names as its parent
        // was in a line that cannot be read (or is itself damaged).
        let parsed: Vec<Option<Entry>> = raw
            .lines()
            .skip(1)
            .map(|(_, l)| log::parse_line(l).ok())
            .collect();
        let defined: HashSet<MessageId> = parsed.iter().flatten().filter_map(entry_id).collect();
        let named: HashSet<MessageId> = parsed.iter().flatten().filter_map(entry_parent).collect();
        let misordered = misordered_turns(&parsed);
        let mut index = Index::default();
        let mut kept: Vec<Cow<'_, [u8]>> = vec![Cow::Borrowed(first)];
        let mut moved: Vec<(MovedLine, &[u8])> = Vec::new();
        let mut placeholders = 0;
        let mut count = 1;
        // Lines the repair writes (placeholder notes, a `main` fork line written again).
        let mut written = 0;
        let mut write = |index: &mut Index, kept: &mut Vec<Cow<'_, [u8]>>, e: Entry| -> Result<bool> {
            let bytes = log::encode(std::slice::from_ref(&e))?;
            let ok = index.apply(e).is_ok();
            if ok {
                written += 1;
                kept.push(Cow::Owned(bytes[..bytes.len() - 1].to_vec()));
            }
            Ok(ok)
        };
        for (i, (n, line)) in lines.enumerate() {
            count = n;
            let entry = match log::parse_line(line) {
                Ok(entry) => entry,
                Err(e) => {
                    let reason = format!("cannot be read: {e}");
                    moved.push((MovedLine { line: n, reason }, line));
                    continue;
                }
            };
            if index.heads.is_empty() && !is_main_fork(&entry) {
                // The `main` fork line was lost: it is fully determined, so it is written again.
                write(&mut index, &mut kept, main_fork(&header.created_at))?;
            }
            if let Some(reason) = misordered.get(&i) {
                moved.push((
                    MovedLine {
                        line: n,
                        reason: reason.clone(),
                    },
                    line,
                ));
                continue;
            }
            if let Some(note) = placeholder(&index, &defined, &entry) {
                placeholders += usize::from(write(&mut index, &mut kept, note)?);
            }
            if let Some(reason) = orphan_result(&index, &entry) {
                // A result no open call asks for (its call was lost): it moves aside, and a note
                // takes its id and place when a later line names it as its parent.
                if let Some(note) = stand_in(&index, &named, &entry, TOOL_PLACEHOLDER_TEXT) {
                    placeholders += usize::from(write(&mut index, &mut kept, note)?);
                }
                moved.push((MovedLine { line: n, reason }, line));
                continue;
            }
            match index.apply(entry) {
                Ok(()) => kept.push(Cow::Borrowed(line)),
                Err(d) => {
                    let reason = format!("refers to what the log does not hold: {d}");
                    moved.push((MovedLine { line: n, reason }, line));
                }
            }
        }
        if let Some(tail) = raw.torn() {
            let reason = "a torn last line (no newline at its end)".to_string();
            moved.push((
                MovedLine {
                    line: count + 1,
                    reason,
                },
                tail,
            ));
        }
        if index.heads.is_empty() && !moved.is_empty() {
            write(&mut index, &mut kept, main_fork(&header.created_at))?;
        }
        if index.heads.is_empty() {
            return Err(refuse(
                "its first head (the `fork` line of kind `main`) cannot be read".to_string(),
            ));
        }
        if moved.is_empty() && kept.len() == count {
            return Ok(Repaired {
                log: path,
                moved: Vec::new(),
                moved_to: None,
                lines_kept: kept.len(),
                placeholders: 0,
            });
        }
        let mut aside = Vec::new();
        for (m, bytes) in &moved {
            aside.extend_from_slice(bytes);
            if m.line <= count {
                aside.push(b'\n');
            }
        }
        // Notes alone (a parent that names nothing) move no line.
        let moved_to = if moved.is_empty() {
            None
        } else {
            Some(self.keep_aside(dir, id, &aside)?)
        };
        let mut body = Vec::with_capacity(raw.complete);
        for line in &kept {
            body.extend_from_slice(line);
            body.push(b'\n');
        }
        let lines_kept = kept.len() - written;
        self.fs
            .write_atomic(&path, &body)
            .at("write the repaired log", &path)?;
        drop(lease);
        Ok(Repaired {
            log: path,
            moved: moved.into_iter().map(|(m, _)| m).collect(),
            moved_to,
            lines_kept,
            placeholders,
        })
    }

    /// Writes `bytes` durably to the first `<id>.damaged-<n>` that is free, or reuses one that
    /// holds exactly them (a repair run again after a crash). A name taken by anything but a
    /// regular file (a directory, a symbolic link) is skipped: a link is never followed, read or
    /// written through.
    fn keep_aside(&self, dir: &Path, id: &SessionId, bytes: &[u8]) -> Result<PathBuf> {
        log::keep_in_free_file(
            &self.fs,
            |n| damaged_path(dir, id, n),
            bytes,
            "keep the lines moved out of the log in",
        )
    }
}
