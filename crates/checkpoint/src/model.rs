//! The typed model of a checkpoint, whatever format it was read from (`from_record.rs` reads a
//! stored record into it, `to_record.rs` gives the stored form of a v3 turn).

use retrace_fsutil::RelPath;
use retrace_protocol::{Coverage, Gap};
use time::OffsetDateTime;

pub use crate::encoding::encode_inline;

/// Capture sources this build writes or knows (SPEC §3.1). Any other value is kept verbatim and
/// counts as a gap ([`UNKNOWN_CAPTURE_SOURCE`]).
pub const KNOWN_CAPTURE_SOURCES: [&str; 3] = ["previewer", "manual", "snapshot"];

/// Gap reason derived on read for entries whose `captureSource` this build does not know.
pub const UNKNOWN_CAPTURE_SOURCE: &str = "unknown_capture_source";

/// Gap reason derived on read for a legacy rename record (`dest_path`): a restore moves the file
/// back, from whatever its destination holds then (legacy records prove nothing, so the turn asks
/// for confirmation).
pub const LEGACY_RENAME: &str = "legacy_rename";

/// The schema a turn's winning record was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `turn-N.json` without `schemaVersion` (or with `0` or `1`, as the reference implementation
    /// rewrites v1 records).
    V1,
    /// `turn-N.json` or `expired/turn-N.json` with `schemaVersion: 2`.
    V2,
    /// `turns/N/meta.json`.
    V3,
}

/// Which file a turn was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `turn-N.json` holding a full v1/v2 record.
    Top,
    /// `expired/turn-N.json`.
    Expired,
    /// `turns/N/meta.json`, kept alive by its marker.
    V3,
    /// The sidecar's log (`log/<S>.seg`, FORMATS.md §19): the turn's frames.
    Log,
    /// Only the marker could be read: the v3 record is unreadable.
    MarkerOnly,
}

/// A path as a record stored it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryPath {
    /// A normalised workspace path.
    Safe(RelPath),
    /// An absolute or escaping path, kept for display but never written (`path_unsafe`).
    Unsafe(String),
}

impl EntryPath {
    /// The display form.
    pub fn display(&self) -> String {
        match self {
            EntryPath::Safe(p) => p.to_lossy(),
            EntryPath::Unsafe(s) => s.clone(),
        }
    }

    /// The normalised path when it is safe.
    pub fn safe(&self) -> Option<&RelPath> {
        match self {
            EntryPath::Safe(p) => Some(p),
            EntryPath::Unsafe(_) => None,
        }
    }
}

/// Where the bytes of a before-image are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payload {
    /// v3: `turns/N/files/<index>.before`.
    File(usize),
    /// A log turn: the body of its entry's frame, in the turn's segment.
    Log(Slice),
    /// v1/v2: the record's `content`, re-encoded with `encoding` when set.
    Inline {
        /// The stored text.
        text: String,
        /// The encoding to re-encode with, as a name [`encode_inline`] understands (`gb18030`,
        /// `utf-16 le`, …), if the record named one.
        encoding: Option<String>,
    },
    /// v2: a content-addressed blob.
    Blob(String),
    /// The bytes were not kept: the file was over the size cap.
    NotKept,
    /// Retention expired the payload.
    Expired,
    /// The record names the bytes in a way that is never followed (a `blobRef` that is not a
    /// SHA-256 but a path): what is wrong. Planning a restore that needs it is a `corrupt` error.
    Corrupt(String),
}

/// A file's state at first touch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Before {
    /// The file did not exist: restoring it means deleting it.
    Absent,
    /// The file existed.
    Present {
        /// SHA-256 of its bytes (absent only in v1 records).
        sha256: Option<String>,
        /// Permission bits (absent only in v1 records).
        mode: Option<u32>,
        /// Size in bytes, when known.
        size: Option<u64>,
        /// Where its bytes are.
        payload: Payload,
    },
}

/// Existence, SHA-256 and mode of a file at one instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Whether the file existed.
    pub existed: bool,
    /// Its SHA-256 when it existed.
    pub sha256: Option<String>,
    /// Its permission bits when it existed.
    pub mode: Option<u32>,
}

impl Image {
    /// "Did not exist".
    pub fn absent() -> Image {
        Image {
            existed: false,
            sha256: None,
            mode: None,
        }
    }
}

/// Existence, SHA-256 and mode equal (a target without a recorded mode matches any mode).
pub(crate) fn same_image(target: &Image, current: &Image) -> bool {
    if target.existed != current.existed {
        return false;
    }
    if !target.existed {
        return true;
    }
    target.sha256.is_some()
        && target.sha256 == current.sha256
        && (target.mode.is_none() || target.mode == current.mode)
}

/// One file touched by a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    /// The workspace path.
    pub path: EntryPath,
    /// The state at first touch.
    pub before: Before,
    /// The state right after Retrace's last write in this turn, when recorded.
    pub after: Option<Image>,
    /// `previewer`, `manual`, or a value another version wrote.
    pub capture_source: Option<String>,
    /// The mutation sequence of the capture (v3).
    pub seq: Option<u64>,
    /// A legacy rename record (`dest_path`): the file was renamed to this path, which holds its
    /// bytes; a restore moves them back (and deletes the destination in the same transaction).
    pub moved_to: Option<EntryPath>,
    /// The file's ancestor directories that did not exist at first touch (outermost first): the
    /// tool created them, so a restore that leaves them empty removes them (`rmdir` only).
    pub created_dirs: Vec<RelPath>,
    /// The file as the turn left it, recorded when the turn ended (v3, since turn results).
    pub end: Option<End>,
}

/// A file as its turn left it: its image, and where its bytes were kept (`turns/N/end.pack`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct End {
    /// Existence, SHA-256 and mode when the turn ended.
    pub image: Image,
    /// Its size, when it existed.
    pub size: Option<u64>,
    /// Where its bytes are in the turn's end pack; `None` when they were not kept (absent, over
    /// the size cap, not a regular file, unreadable).
    pub kept: Option<Slice>,
    /// When the turn ended (RFC 3339), when recorded.
    pub at: Option<String>,
    /// Lines added and removed from the before-image to this state, when both are text (the
    /// turn's +/− counts in the listing).
    pub counts: Option<(u64, u64)>,
}

/// A range of bytes in a pack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slice {
    /// Where the bytes start.
    pub offset: u64,
    /// How many there are.
    pub length: u64,
}

impl FileEntry {
    /// Bytes of payload this entry keeps in the sidecar (inline text counts as its encoded size).
    pub fn payload_bytes(&self) -> u64 {
        match &self.before {
            Before::Present {
                payload: Payload::File(_),
                size,
                ..
            } => size.unwrap_or(0),
            Before::Present {
                payload: Payload::Log(s),
                ..
            } => s.length,
            Before::Present {
                payload: Payload::Inline { text, encoding },
                ..
            } => encode_inline(text, encoding.as_deref())
                .map(|b| b.len() as u64)
                .unwrap_or(0),
            Before::Present {
                payload: Payload::Blob(_),
                size,
                ..
            } => size.unwrap_or(0),
            _ => 0,
        }
    }
}

/// A turn's checkpoint, loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// The turn number.
    pub number: u64,
    /// When it started, as stored.
    pub time: String,
    /// `time` parsed, when it parses.
    pub instant: Option<OffsetDateTime>,
    /// The user's prompt.
    pub prompt: String,
    /// Messages before the turn's user message on its head.
    pub msg_index: Option<u64>,
    /// The head it ran on.
    pub head: Option<String>,
    /// The id of its user message.
    pub message_id: Option<String>,
    /// The mutation sequence taken when the turn started (v3; older records have none).
    pub start_seq: Option<u64>,
    /// The session id the record names.
    pub session_id: Option<String>,
    /// The record's schema.
    pub format: Format,
    /// The file it was read from.
    pub source: Source,
    /// That file, relative to the sidecar.
    pub record_path: String,
    /// Files touched, in first-touch order.
    pub files: Vec<FileEntry>,
    /// Stored and derived gaps.
    pub gaps: Vec<Gap>,
    /// The record's payloads were expired by retention.
    pub expired: bool,
}

impl Turn {
    /// Coverage in the order of SPEC §3.1 (an unreadable record lists as `none`).
    pub fn coverage(&self) -> Coverage {
        if self.source == Source::MarkerOnly {
            return Coverage::None;
        }
        if self.format == Format::V1 {
            return Coverage::Legacy;
        }
        if !self.gaps.is_empty() || self.expired {
            return Coverage::Partial;
        }
        if self.files.is_empty() {
            Coverage::None
        } else {
            Coverage::Complete
        }
    }

    /// Index of the entry of `path`, if the turn touched it.
    pub fn entry_index(&self, path: &RelPath) -> Option<usize> {
        self.files.iter().position(|f| f.path.safe() == Some(path))
    }

    /// Adds a gap unless one with the same reason and path is already recorded.
    /// SPEC §3.1 keeps one gap per reason and path; the shell's gap (no path) collects the command
    /// line of every run in the turn instead, one per line, so none goes unrecorded.
    pub fn add_gap(&mut self, gap: Gap) {
        add_gap(&mut self.gaps, gap);
    }

    /// Bytes of before-image payload the turn keeps (what retention's byte limit counts).
    pub fn payload_bytes(&self) -> u64 {
        self.files.iter().map(FileEntry::payload_bytes).sum()
    }

    /// Bytes of the turn's end pack (the files as it left them): not counted by retention's byte
    /// limit; the pack goes with its turn.
    pub fn end_bytes(&self) -> u64 {
        self.files
            .iter()
            .filter_map(|f| f.end.as_ref()?.kept)
            .map(|s| s.offset.saturating_add(s.length))
            .max()
            .unwrap_or(0)
    }
}

/// [`Turn::add_gap`] on a list of gaps. Returns the gap as it now stands when the list changed
/// (added, or a shell gap that gained a command line), `None` when it was recorded already.
pub(crate) fn add_gap(gaps: &mut Vec<Gap>, gap: Gap) -> Option<Gap> {
    let same = gaps
        .iter_mut()
        .find(|g| g.reason == gap.reason && g.path == gap.path);
    match same {
        None => {
            gaps.push(gap.clone());
            Some(gap)
        }
        Some(g) if gap.reason.is_side_effect() => {
            let new = gap.detail?;
            match &mut g.detail {
                Some(d) if d.lines().any(|l| l == new) => return None,
                Some(d) => {
                    d.push('\n');
                    d.push_str(&new);
                }
                None => g.detail = Some(new),
            }
            Some(g.clone())
        }
        Some(_) => None,
    }
}

/// What a path was before a command changed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Known {
    /// It did not exist. `created_dirs`: its ancestors that did not exist either (top down), which
    /// a restore removes again when it leaves them empty.
    Absent {
        /// Workspace-relative directories.
        created_dirs: Vec<std::path::PathBuf>,
    },
    /// A regular file with these bytes and permission bits.
    File {
        /// Its bytes.
        bytes: Vec<u8>,
        /// Its permission bits.
        mode: u32,
    },
    /// It was there but its bytes were not kept: a gap of this reason (no entry; a restore leaves
    /// the path alone).
    Unkept {
        /// Why.
        reason: retrace_protocol::GapReason,
        /// In words.
        detail: String,
    },
}
