//! The JSON records of the sidecar, as stored (camelCase), for every schema version.
//!
//! One raw type reads v1, v2 and v3 records and markers: every field that some version lacks is
//! optional, unknown keys are ignored. It also reads what the reference implementation writes
//! (`"files": null`, `encoding` as a number, the snake_case `dest_path` of its legacy rename
//! records), and keeps such values as they are when a record is rewritten. `from_record.rs` turns a
//! raw record into the typed model (`model.rs`), and `to_record.rs` back.

use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{CheckpointError, IoContext, Result};

pub use crate::layout::JOURNAL_FILE;

/// Records larger than this are refused unread (SPEC §3.1).
pub const MAX_RECORD_BYTES: u64 = 16 * 1024 * 1024;

/// A checkpoint record or marker as stored in `turn-N.json`, `expired/turn-N.json` or
/// `turns/N/meta.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RawRecord {
    /// 3 for v3 records, 2 for v2 records and v3 markers, absent for v1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_version: Option<u32>,
    /// The session the record belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The turn number.
    pub turn: u64,
    /// When the turn started (RFC 3339).
    #[serde(default)]
    pub time: String,
    /// The user's prompt.
    #[serde(default)]
    pub prompt: String,
    /// Messages on the head before the turn's user message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msg_index: Option<u64>,
    /// The head the turn ran on (v3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    /// The turn's user message id (v3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// v3: the mutation sequence taken when the turn started (orders turns against restores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_seq: Option<u64>,
    /// The coverage the writer computed (readers recompute it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<String>,
    /// Gaps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage_gaps: Option<Vec<RawGap>>,
    /// Files touched, in first-touch order. `null` (what the reference implementation writes for a
    /// turn that touched nothing) reads as empty.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub files: Vec<RawFile>,
    /// Set on markers and on expired legacy records: the payload is not here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expired_file_payload: Option<bool>,
}

/// A gap as stored.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RawGap {
    /// The reason name (older names are mapped when read).
    pub reason: String,
    /// The tool that caused it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The workspace path concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Free text (the command line of a shell gap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// A file entry as stored.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RawFile {
    /// Workspace-relative path, `/`-separated (lossy for non-UTF-8 names).
    pub path: String,
    /// The raw name, base64, when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_bytes: Option<String>,
    /// v1/v2: the text (or, with `encoding`, the decoded text); `null` in v3.
    #[serde(default)]
    pub content: Option<String>,
    /// Permission bits at first touch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
    /// SHA-256 at first touch; present exactly when the file existed (v2, v3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Size at first touch (v3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// `previewer` or `manual` (unknown values kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture_source: Option<String>,
    /// After-image: whether the file existed after Retrace's write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_existed: Option<bool>,
    /// After-image: SHA-256 after Retrace's write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_sha256: Option<String>,
    /// After-image: mode after Retrace's write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_mode: Option<u32>,
    /// v3: `false` when an existing file's bytes were not kept (over the size cap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<bool>,
    /// v3: the mutation sequence of the capture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// v2: the payload blob (64 lowercase hex).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob_ref: Option<String>,
    /// v1/v2: the encoding `content` must be re-encoded with: the reference implementation's
    /// encoding number (`4`), or a name (`"gb18030"`). See [`RawEncoding`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<RawEncoding>,
    /// v3: ancestor directories that did not exist when the file was first touched (outermost
    /// first); a restore removes them when it leaves them empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_dirs: Option<Vec<String>>,
    /// v2: the payload was expired by retention.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload_expired: Option<bool>,
    /// Legacy rename records of the reference implementation: this entry's file was renamed to
    /// `dest_path` (snake_case, as that writer spelled it; `destPath` is accepted too).
    #[serde(
        default,
        rename = "dest_path",
        alias = "destPath",
        skip_serializing_if = "Option::is_none"
    )]
    pub dest_path: Option<String>,
    /// v3: the file as the turn left it (written when the turn ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<RawEnd>,
}

/// A file as its turn left it, as stored: `{existed, sha256?, mode?, size?, offset?, length?}`
/// (`offset`/`length`: its bytes in `turns/N/end.pack`, when kept).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct RawEnd {
    /// Whether the file existed.
    pub existed: bool,
    /// Its SHA-256, when it existed and could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Its permission bits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
    /// Its size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Where its bytes start in the end pack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// How many bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<u64>,
    /// When the turn ended (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// Lines added from the before-image to this state, when both are text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added: Option<u64>,
    /// Lines removed, likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed: Option<u64>,
}

/// A stored `encoding`, kept as written so a record is rewritten unchanged (retention).
///
/// The reference implementation writes its encoding enum as a number (SPEC §3.3: 0 UTF-8, 1 UTF-8
/// with BOM, 2 UTF-16LE with BOM, 3 UTF-16BE with BOM, 4 GB18030, 5 lossy UTF-8, 6 UTF-16LE without
/// BOM, 7 UTF-16BE without BOM); other writers a name. Any other JSON value is kept too: an entry
/// whose encoding this build does not understand has no usable inline payload, but its record
/// still loads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RawEncoding {
    /// The reference implementation's encoding number.
    Kind(i64),
    /// An encoding name (`"gb18030"`, `"utf-8"`, a WHATWG label, …).
    Name(String),
    /// Anything else, kept verbatim.
    Other(serde_json::Value),
}

impl std::fmt::Display for RawEncoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RawEncoding::Kind(k) => write!(f, "{k}"),
            RawEncoding::Name(n) => f.write_str(n),
            RawEncoding::Other(v) => write!(f, "{v}"),
        }
    }
}

/// `null` or a list: a Go writer marshals an empty slice it never filled as `null`.
fn null_as_empty<'de, D, T>(d: D) -> std::result::Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default())
}

impl RawRecord {
    /// True for the payload-free v2 record that keeps a v3 turn alive.
    pub fn is_marker(&self) -> bool {
        self.schema_version == Some(2) && self.files.is_empty() && self.expired_file_payload == Some(true)
    }
}

/// A record (or manifest) as written: pretty JSON, then a newline.
pub(crate) fn to_json<T: Serialize>(v: &T) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(v).unwrap_or_default();
    out.push(b'\n');
    out
}

/// Reads and parses a record, refusing files over [`MAX_RECORD_BYTES`] before reading them and
/// anything that is not a regular file.
pub fn read_record(path: &Path) -> Result<RawRecord> {
    let bytes = read_bounded(path)?;
    parse_record(path, &bytes)
}

/// Parses record bytes; errors name `path`.
pub fn parse_record(path: &Path, bytes: &[u8]) -> Result<RawRecord> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(CheckpointError::Corrupt {
            path: path.into(),
            detail: "the record is empty".into(),
        });
    }
    serde_json::from_slice(bytes).map_err(|e| CheckpointError::Corrupt {
        path: path.into(),
        detail: format!("not a valid record: {e}"),
    })
}

/// The largest journal a turn's record is read with (about 200,000 captured files).
pub const MAX_JOURNAL_BYTES: u64 = 4 * MAX_RECORD_BYTES;

/// Reads a whole small file, refusing non-files and files over [`MAX_RECORD_BYTES`] unread.
pub fn read_bounded(path: &Path) -> Result<Vec<u8>> {
    read_bounded_as(path, MAX_RECORD_BYTES)
}

/// [`read_bounded`] with another limit. Opened without blocking: a FIFO planted in a sidecar is
/// refused, not waited on.
pub fn read_bounded_as(path: &Path, limit: u64) -> Result<Vec<u8>> {
    let (file, meta) = retrace_fsutil::open_read(path).at("open", path)?;
    if !meta.is_file() {
        return Err(CheckpointError::Corrupt {
            path: path.into(),
            detail: "expected a file, found a directory or special file".into(),
        });
    }
    if meta.len() > limit {
        return Err(CheckpointError::RecordTooLarge {
            path: path.into(),
            size: meta.len(),
            limit,
        });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1).read_to_end(&mut bytes).at("read", path)?;
    if bytes.len() as u64 > limit {
        return Err(CheckpointError::RecordTooLarge {
            path: path.into(),
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}

/// One line of a v3 turn's journal, `turns/N/journal.jsonl`: what the turn captured since its
/// `meta.json` was last written whole. Exactly one of `entry`, `after` and `gap` is set.
///
/// A capture appends a line (after its payloads are durable) instead of rewriting the record, so a
/// turn of N tool calls costs O(N), not O(N²); the end of the turn writes `meta.json` whole again
/// and removes the journal. Readers apply the journal over `meta.json` in order: an entry whose
/// `index` is already in the record is skipped (a crash between the final record and the
/// journal's removal), one that would leave a hole ends the journal (what follows cannot be placed:
/// payload names are positions), an after-image replaces the entry's, a gap replaces the one of
/// the same reason and path (a shell gap grows a line per command) or is added, and a gap line
/// marked `settled` removes the one of its reason and path. A last line
/// without its newline is a write cut short, and is ignored. An after-image marked `intended` is
/// written before the tool runs, in the same append as the entry (or alone, for a file the turn
/// touched before): what the tool will leave there if it succeeds.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct JournalLine {
    /// The position in `files` the line is about (`entry`, `after`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// A new file entry, at `index`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<RawFile>,
    /// The after-image of the entry at `index`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<JournalAfter>,
    /// A coverage gap of the turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<RawGap>,
    /// On a gap line: the gap of that reason and path is taken back (removed), not recorded. A
    /// gap recorded before a shell command runs, in case the process dies during it, is taken
    /// back once the command's changes are captured. Builds that do not know it read the line
    /// as the gap itself (a gap too many, never one too few).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub settled: bool,
}

/// An after-image in a journal line.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct JournalAfter {
    /// Whether the file existed after the write.
    pub existed: bool,
    /// Its SHA-256.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Its mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
    /// Written before the tool ran: what the tool is about to leave there (an intent), not yet
    /// what it left. Readers take it as the after-image (a proof that can only turn a restore
    /// into a conflict, never into an overwrite); recovery of a turn a crash cut short settles it
    /// against the disk (see `CheckpointStore::recover`). Builds that know no intents read it as
    /// an after-image too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub intended: bool,
    /// On an intent: the process that journaled it, whose tools name their temp files after it.
    /// Recovery removes a temp file beside the path only when it carries this number (one the
    /// crashed writer left, never a file of the user's that merely looks like one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// On an intent: the first number the call's temp files carry (`.<name>.retrace-<pid>-<n>.tmp`,
    /// `n` from `tmp` for as many paths as the call journaled intents with this number). Recovery
    /// removes only those names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmp: Option<u64>,
    /// On an after-image that is not an intent, in the log: the mutation sequence it took (the
    /// ownership proof's place on the timeline; `state.json` is not rewritten for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
}

/// A journal line that could not be used; nothing from it on was applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalStop {
    /// What is wrong, naming the line.
    pub problem: String,
    /// Complete lines after it. 0: it was the last line, which a crash can leave damaged (the
    /// process never went on). More: the journal was damaged afterwards, and the turn cannot be
    /// read (what it touched after that line is unknown).
    pub lines_after: usize,
}

/// Applies journal `bytes` over `raw` (see [`JournalLine`]). Returns where it stopped when a
/// complete line could not be used (then nothing after it is applied).
pub fn apply_journal(raw: &mut RawRecord, bytes: &[u8]) -> Option<JournalStop> {
    let problem = apply_lines(raw, bytes)?;
    let n: usize = problem.0;
    let lines_after = bytes
        .split(|b| *b == b'\n')
        .collect::<Vec<_>>()
        .split_last()
        .map(|(_, complete)| complete.iter().skip(n).filter(|l| !l.is_empty()).count())
        .unwrap_or(0);
    Some(JournalStop {
        problem: problem.1,
        lines_after,
    })
}

/// [`apply_journal`]'s loop: the number and problem of the line it stopped at.
fn apply_lines(raw: &mut RawRecord, bytes: &[u8]) -> Option<(usize, String)> {
    let mut lines = bytes.split(|b| *b == b'\n').peekable();
    let mut n = 0usize;
    while let Some(line) = lines.next() {
        if lines.peek().is_none() {
            // The part after the last newline: empty, or a write cut short.
            break;
        }
        n += 1;
        if line.is_empty() {
            // Left by the repair of a line cut short (it ends the cut line with a newline).
            continue;
        }
        let Ok(l) = serde_json::from_slice::<JournalLine>(line) else {
            return Some((
                n,
                format!("journal line {n} is not valid; it and what follows are ignored"),
            ));
        };
        match (l.index, l.entry, l.after, l.gap) {
            (Some(i), Some(entry), None, None) => {
                if i < raw.files.len() {
                    continue;
                }
                if i > raw.files.len() {
                    return Some((
                        n,
                        format!(
                        "journal line {n} adds entry {i} after {} entries; it and what follows are ignored",
                        raw.files.len()
                    ),
                    ));
                }
                raw.files.push(entry);
            }
            (Some(i), None, Some(a), None) => {
                let Some(f) = raw.files.get_mut(i) else {
                    return Some((
                        n,
                        format!("journal line {n} updates entry {i}, which does not exist"),
                    ));
                };
                f.after_existed = Some(a.existed);
                f.after_sha256 = if a.existed { a.sha256 } else { None };
                f.after_mode = if a.existed { a.mode } else { None };
            }
            (None, None, None, Some(g)) => {
                // The gap as it stands now: it replaces the one of the same reason and path, or
                // takes it back.
                let gaps = raw.coverage_gaps.get_or_insert_with(Vec::new);
                let at = gaps.iter().position(|x| x.reason == g.reason && x.path == g.path);
                match (at, l.settled) {
                    (Some(i), true) => {
                        gaps.remove(i);
                    }
                    (None, true) => {}
                    (Some(i), false) => gaps[i] = g,
                    (None, false) => gaps.push(g),
                }
            }
            _ => {
                return Some((
                    n,
                    format!("journal line {n} is not an entry, an after-image or a gap"),
                ))
            }
        }
    }
    None
}
