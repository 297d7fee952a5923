//! The typed model of a checkpoint, whatever format it was read from.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use base64::Engine;
use retrace_fsutil::{is_sha256_hex, sha256_bytes, RelPath};
use retrace_protocol::{Coverage, Gap, GapReason};
use time::OffsetDateTime;

use crate::record::{RawEncoding, RawFile, RawGap, RawRecord};

/// Capture sources this build writes or knows (SPEC §3.1). Any other value is kept verbatim and
/// counts as a gap ([`UNKNOWN_CAPTURE_SOURCE`]).
pub const KNOWN_CAPTURE_SOURCES: [&str; 2] = ["previewer", "manual"];

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

    /// Bytes of before-image payload the turn keeps.
    pub fn payload_bytes(&self) -> u64 {
        self.files.iter().map(FileEntry::payload_bytes).sum()
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
        Some(g) if gap.reason == GapReason::BashSideEffect => {
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

/// An encoding a legacy record can ask its inline text to be re-encoded with (SPEC §3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TextEncoding {
    /// UTF-8 without a BOM.
    Utf8,
    /// UTF-8 with a BOM (`EF BB BF`).
    Utf8Bom,
    /// UTF-16LE with a BOM (`FF FE`).
    Utf16LeBom,
    /// UTF-16BE with a BOM (`FE FF`).
    Utf16BeBom,
    /// GB18030.
    Gb18030,
    /// Bytes that were neither UTF-8 nor GB18030, decoded lossily: the text cannot give them back.
    LossyUtf8,
    /// UTF-16LE without a BOM.
    Utf16Le,
    /// UTF-16BE without a BOM.
    Utf16Be,
    /// Any other WHATWG encoding that can encode (single-byte encodings, Shift_JIS, …).
    Whatwg(&'static encoding_rs::Encoding),
}

impl TextEncoding {
    /// The reference implementation's encoding number.
    fn of_kind(kind: i64) -> Option<TextEncoding> {
        Some(match kind {
            0 => TextEncoding::Utf8,
            1 => TextEncoding::Utf8Bom,
            2 => TextEncoding::Utf16LeBom,
            3 => TextEncoding::Utf16BeBom,
            4 => TextEncoding::Gb18030,
            5 => TextEncoding::LossyUtf8,
            6 => TextEncoding::Utf16Le,
            7 => TextEncoding::Utf16Be,
            _ => return None,
        })
    }

    /// What a name may mean, the likeliest first (empty when unknown). The names the reference
    /// implementation prints or parses come first (`utf-16le` means *with* a BOM there, so it may
    /// mean either), then WHATWG labels.
    fn of_name(name: &str) -> Vec<TextEncoding> {
        use TextEncoding::*;
        let n = name.trim().to_ascii_lowercase();
        match n.as_str() {
            "utf-8" | "utf8" => vec![Utf8],
            "utf-8 bom" | "utf8 bom" | "utf8bom" => vec![Utf8Bom],
            "utf-16 le" => vec![Utf16LeBom],
            "utf-16 be" => vec![Utf16BeBom],
            "utf-16le" | "utf16le" => vec![Utf16LeBom, Utf16Le],
            "utf-16be" | "utf16be" => vec![Utf16BeBom, Utf16Be],
            "utf-16 le (no bom)" | "utf-16le-nobom" | "utf16le-nobom" => vec![Utf16Le],
            "utf-16 be (no bom)" | "utf-16be-nobom" | "utf16be-nobom" => vec![Utf16Be],
            "gb18030" => vec![Gb18030],
            "gbk" | "gb2312" => vec![Gb18030, Whatwg(encoding_rs::GBK)],
            "lossy utf-8" => vec![LossyUtf8],
            _ => {
                let label = n.strip_prefix("whatwg:").unwrap_or(&n);
                match encoding_rs::Encoding::for_label(label.as_bytes()) {
                    Some(e) if e == encoding_rs::UTF_8 => vec![Utf8],
                    Some(e) if e == encoding_rs::GB18030 => vec![Gb18030],
                    Some(e) => vec![Whatwg(e)],
                    None => Vec::new(),
                }
            }
        }
    }

    /// The name stored in [`Payload::Inline`]: [`TextEncoding::of_name`] reads it back as this
    /// encoding and nothing else.
    fn name(self) -> String {
        match self {
            TextEncoding::Utf8 => "utf-8".into(),
            TextEncoding::Utf8Bom => "utf-8 bom".into(),
            TextEncoding::Utf16LeBom => "utf-16 le".into(),
            TextEncoding::Utf16BeBom => "utf-16 be".into(),
            TextEncoding::Gb18030 => "gb18030".into(),
            TextEncoding::LossyUtf8 => "lossy utf-8".into(),
            TextEncoding::Utf16Le => "utf-16 le (no bom)".into(),
            TextEncoding::Utf16Be => "utf-16 be (no bom)".into(),
            TextEncoding::Whatwg(e) => format!("whatwg:{}", e.name()),
        }
    }

    /// The bytes of `text` in this encoding; `None` when they cannot be exact.
    fn encode(self, text: &str) -> Option<Vec<u8>> {
        let utf16 = |bom: &[u8], unit: fn(u16) -> [u8; 2]| {
            let mut out = Vec::with_capacity(bom.len() + 2 * text.len());
            out.extend_from_slice(bom);
            text.encode_utf16().for_each(|u| out.extend_from_slice(&unit(u)));
            out
        };
        match self {
            TextEncoding::Utf8 => Some(text.as_bytes().to_vec()),
            TextEncoding::Utf8Bom => Some([&[0xEF, 0xBB, 0xBF], text.as_bytes()].concat()),
            TextEncoding::Utf16LeBom => Some(utf16(&[0xFF, 0xFE], u16::to_le_bytes)),
            TextEncoding::Utf16BeBom => Some(utf16(&[0xFE, 0xFF], u16::to_be_bytes)),
            TextEncoding::Utf16Le => Some(utf16(&[], u16::to_le_bytes)),
            TextEncoding::Utf16Be => Some(utf16(&[], u16::to_be_bytes)),
            TextEncoding::LossyUtf8 => None,
            TextEncoding::Gb18030 => TextEncoding::Whatwg(encoding_rs::GB18030).encode(text),
            TextEncoding::Whatwg(enc) => {
                let (bytes, _, unmappable) = enc.encode(text);
                if unmappable || enc.output_encoding() != enc {
                    return None;
                }
                Some(bytes.into_owned())
            }
        }
    }
}

/// Re-encodes inline legacy text to the file's bytes. `encoding` is a name: the ones the reference
/// implementation uses (`gb18030`, `utf-8 bom`, `utf-16 le`, `utf-16le-nobom`, …; `utf-16le` is
/// read as it reads it, with a BOM), or a WHATWG label. `None` when the encoding is unknown, cannot
/// encode, or the text cannot be encoded exactly (lossy UTF-8, unmappable characters).
pub fn encode_inline(text: &str, encoding: Option<&str>) -> Option<Vec<u8>> {
    match encoding {
        None => Some(text.as_bytes().to_vec()),
        Some(label) => TextEncoding::of_name(label).first()?.encode(text),
    }
}

/// The encodings a stored `encoding` may mean, the likeliest first; `Err` with a label naming it
/// when this build does not know it.
fn encodings_of(raw: Option<&RawEncoding>) -> std::result::Result<Vec<TextEncoding>, String> {
    match raw {
        None => Ok(vec![TextEncoding::Utf8]),
        Some(RawEncoding::Kind(k)) => TextEncoding::of_kind(*k)
            .map(|e| vec![e])
            .ok_or_else(|| format!("encoding {k}")),
        Some(RawEncoding::Name(n)) => {
            let all = TextEncoding::of_name(n);
            if all.is_empty() {
                Err(n.clone())
            } else {
                Ok(all)
            }
        }
        Some(RawEncoding::Other(v)) => Err(format!("encoding {v}")),
    }
}

/// Parses an RFC 3339 time.
pub fn parse_time(s: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()
}

/// Converts a stored record into a turn. `root` is the workspace root when known: an absolute stored
/// path under it is made relative. Returns the turn and the file-level findings (unsafe paths, bad
/// digests, legacy renames) as `(workspace path, problem)`.
pub fn turn_from_raw(
    raw: &RawRecord,
    source: Source,
    record_path: &str,
    root: Option<&Path>,
) -> (Turn, Vec<(String, String)>) {
    // The reference implementation writes `schemaVersion: 1` into v1 records it rewrites.
    let format = match (source, raw.schema_version) {
        (Source::V3, _) => Format::V3,
        (_, None | Some(0) | Some(1)) => Format::V1,
        (_, Some(_)) => Format::V2,
    };
    let mut findings = Vec::new();
    let mut files = Vec::with_capacity(raw.files.len());
    for (i, rf) in raw.files.iter().enumerate() {
        let path = entry_path(rf, root);
        if let EntryPath::Unsafe(p) = &path {
            findings.push((
                p.clone(),
                "stored path is absolute, escapes the workspace or holds NUL (path_unsafe)".into(),
            ));
        }
        for (name, value) in [
            ("sha256", &rf.sha256),
            ("afterSha256", &rf.after_sha256),
            ("blobRef", &rf.blob_ref),
        ] {
            if let Some(v) = value {
                if !is_sha256_hex(v) {
                    findings.push((path.display(), format!("`{name}` is not 64 lowercase hex digits")));
                }
            }
        }
        let before = before_of(rf, format, i);
        let after = rf.after_existed.map(|existed| Image {
            existed,
            sha256: if existed { rf.after_sha256.clone() } else { None },
            mode: if existed { rf.after_mode } else { None },
        });
        let created_dirs = created_dirs_of(rf, &path, &mut findings);
        files.push(FileEntry {
            path,
            before,
            after,
            capture_source: rf.capture_source.clone(),
            seq: rf.seq,
            moved_to: None,
            created_dirs,
        });
    }
    let renames = link_legacy_renames(raw, root, &mut files, &mut findings);
    let mut turn = Turn {
        number: raw.turn,
        time: raw.time.clone(),
        instant: parse_time(&raw.time),
        // A record Retrace did not write (no head) may hold the prompt as the reference composed
        // it: the picker lists the user's text alone.
        prompt: match raw.head {
            Some(_) => raw.prompt.clone(),
            None => crate::composed::user_text(&raw.prompt),
        },
        msg_index: raw.msg_index,
        head: raw.head.clone(),
        message_id: raw.message_id.clone(),
        start_seq: raw.start_seq,
        session_id: raw.session_id.clone(),
        format,
        source,
        record_path: record_path.to_string(),
        files,
        gaps: Vec::new(),
        expired: source == Source::Expired
            || raw.files.iter().any(|f| f.payload_expired == Some(true))
            || (format != Format::V3 && raw.expired_file_payload == Some(true) && !raw.files.is_empty()),
    };
    for g in raw.coverage_gaps.iter().flatten() {
        turn.add_gap(gap_from_raw(g));
    }
    if format == Format::V1 {
        turn.add_gap(Gap::new(GapReason::LegacyUnverified));
    }
    // A v3 marker read on its own (no live meta.json: a crash between pruning the turn's directory
    // and its marker, or before the first record) is what it says: a payload-free record whose
    // payload expired. It lists as partial, never as a turn that touched nothing (SPEC §3.1, §3.3).
    let bare_marker = source == Source::Top && raw.is_marker();
    if (turn.expired || bare_marker) && !turn.gaps.iter().any(|g| g.reason == GapReason::ExpiredPayload) {
        turn.add_gap(Gap::new(GapReason::ExpiredPayload));
    }
    if let Some(detail) = unknown_capture_sources(&turn.files) {
        turn.add_gap(derived_gap(UNKNOWN_CAPTURE_SOURCE, detail));
    }
    if !renames.is_empty() {
        let detail = format!(
            "{}: a restore moves each back from its destination, whose current content it takes",
            renames.join("; ")
        );
        turn.add_gap(derived_gap(LEGACY_RENAME, detail));
    }
    (turn, findings)
}

/// A gap derived on read: no tool, no path (FORMATS §13.2), the particulars in `detail`.
fn derived_gap(reason: &str, detail: String) -> Gap {
    Gap {
        reason: GapReason::parse(reason),
        tool: None,
        path: None,
        detail: Some(detail),
    }
}

/// The entries captured by a source this build does not know, for the turn's gap: `` `value` on
/// `path`, `path` `` per value, in first-touch order.
fn unknown_capture_sources(files: &[FileEntry]) -> Option<String> {
    let mut by_source: Vec<(&str, Vec<String>)> = Vec::new();
    for f in files {
        let Some(src) = f.capture_source.as_deref() else {
            continue;
        };
        if KNOWN_CAPTURE_SOURCES.contains(&src) {
            continue;
        }
        let shown = format!("`{}`", f.path.display());
        match by_source.iter_mut().find(|(s, _)| *s == src) {
            Some((_, paths)) => paths.push(shown),
            None => by_source.push((src, vec![shown])),
        }
    }
    if by_source.is_empty() {
        return None;
    }
    let parts: Vec<String> = by_source
        .iter()
        .map(|(src, paths)| format!("captureSource `{src}` on {}", paths.join(", ")))
        .collect();
    Some(format!(
        "{} (a capture source this build does not know)",
        parts.join("; ")
    ))
}

/// A legacy rename record (the reference implementation's `dest_path`: the entry's file was renamed
/// to that path, which holds its bytes). The source entry gets `moved_to`, and the destination an
/// entry of its own ("did not exist") when the record has none: a restore then moves the bytes
/// back — it writes the source from the destination's current content and deletes the
/// destination in the same transaction, never one without the other. Returns `` `src` was renamed
/// to `dest` `` for each rename, and adds a finding per rename.
fn link_legacy_renames(
    raw: &RawRecord,
    root: Option<&Path>,
    files: &mut Vec<FileEntry>,
    findings: &mut Vec<(String, String)>,
) -> Vec<String> {
    let mut renames = Vec::new();
    for (i, rf) in raw.files.iter().enumerate() {
        let Some(dest) = rf.dest_path.as_deref().filter(|d| !d.is_empty()) else {
            continue;
        };
        let dest = entry_path(
            &RawFile {
                path: dest.to_string(),
                ..RawFile::default()
            },
            root,
        );
        let Some(src) = files.get(i).map(|f| f.path.clone()) else {
            continue;
        };
        let text = format!("`{}` was renamed to `{}`", src.display(), dest.display());
        findings.push((
            src.display(),
            format!("{text} (a legacy rename record): a restore moves it back"),
        ));
        renames.push(text);
        if !files.iter().any(|f| f.path == dest) {
            files.push(FileEntry {
                path: dest.clone(),
                before: Before::Absent,
                after: None,
                capture_source: rf.capture_source.clone(),
                seq: None,
                moved_to: None,
                created_dirs: Vec::new(),
            });
        }
        if let Some(f) = files.get_mut(i) {
            f.moved_to = Some(dest);
        }
    }
    renames
}

fn entry_path(rf: &RawFile, root: Option<&Path>) -> EntryPath {
    let bytes: Vec<u8> = match rf.path_bytes.as_deref() {
        Some(b64) => match base64::engine::general_purpose::STANDARD.decode(b64) {
            Ok(b) => b,
            Err(_) => return EntryPath::Unsafe(rf.path.clone()),
        },
        None => rf.path.as_bytes().to_vec(),
    };
    if let Ok(p) = RelPath::from_stored(&bytes) {
        return EntryPath::Safe(p);
    }
    if let Some(root) = root {
        let as_path = Path::new(std::ffi::OsStr::from_bytes(&bytes));
        if as_path.is_absolute() && as_path.starts_with(root) {
            if let Ok(p) = RelPath::normalize(root, as_path) {
                return EntryPath::Safe(p);
            }
        }
    }
    EntryPath::Unsafe(String::from_utf8_lossy(&bytes).replace('\0', "\\0"))
}

fn before_of(rf: &RawFile, format: Format, index: usize) -> Before {
    let existed = rf.sha256.is_some()
        || rf.content.is_some()
        || rf.blob_ref.is_some()
        || rf.payload_expired == Some(true);
    if !existed {
        return Before::Absent;
    }
    let payload = if rf.payload_expired == Some(true) {
        Payload::Expired
    } else if rf.payload == Some(false) {
        Payload::NotKept
    } else if format == Format::V3 {
        Payload::File(index)
    } else {
        legacy_payload(rf)
    };
    // Permission bits only, and from a record this build did not capture (v1/v2) or that holds
    // more than mode bits, never setuid, setgid or sticky: a restore must not hand out privileges
    // a record says a file had.
    let mode = rf.mode.map(|m| {
        if format != Format::V3 || m > 0o7777 {
            m & 0o777
        } else {
            m
        }
    });
    Before::Present {
        sha256: rf.sha256.clone(),
        mode,
        size: rf.size,
        payload,
    }
}

/// Where the bytes of a v1/v2 entry are. Inline `content` is decoded text: for a file that was not
/// UTF-8 it may be lossy, while a blob holds the exact bytes. So when the entry names its bytes (by
/// `sha256`, else `blobRef`), the bytes that hash to that name win: the inline text re-encoded (with
/// each encoding its `encoding` may mean) if it gives them back, else the blob. Inline text that no
/// recorded digest can check is taken as it is; inline text that does not match and has no blob
/// beside it stays inline, and reading it reports the mismatch (`missing_payload`).
fn legacy_payload(rf: &RawFile) -> Payload {
    if let Some(b) = rf.blob_ref.as_deref().filter(|b| !is_sha256_hex(b)) {
        return Payload::Corrupt(format!(
            "its `blobRef` `{b}` is not a SHA-256 (64 lowercase hex digits)"
        ));
    }
    let Some(text) = &rf.content else {
        return match &rf.blob_ref {
            Some(b) => Payload::Blob(b.clone()),
            None => Payload::Expired,
        };
    };
    let blob = rf.blob_ref.clone();
    let inline = |encoding: Option<String>| Payload::Inline {
        text: text.clone(),
        encoding,
    };
    match encodings_of(rf.encoding.as_ref()) {
        Ok(encodings) => {
            if let Some(want) = rf.sha256.as_deref().or(rf.blob_ref.as_deref()) {
                let exact = encodings
                    .iter()
                    .find(|e| e.encode(text).is_some_and(|b| sha256_bytes(&b) == want));
                if let Some(e) = exact {
                    return inline(rf.encoding.as_ref().map(|_| e.name()));
                }
                if let Some(b) = blob {
                    return Payload::Blob(b);
                }
            }
            inline(rf.encoding.as_ref().and(encodings.first()).map(|e| e.name()))
        }
        // An encoding this build does not know: the text cannot be re-encoded, the blob may do.
        Err(label) => match blob {
            Some(b) => Payload::Blob(b),
            None => inline(Some(label)),
        },
    }
}

/// The entry's `createdDirs`: each must be an ancestor of the entry's own (safe) path, or it is a
/// finding and left out (a record never makes a restore remove any other directory).
fn created_dirs_of(rf: &RawFile, path: &EntryPath, findings: &mut Vec<(String, String)>) -> Vec<RelPath> {
    let Some(dirs) = &rf.created_dirs else {
        return Vec::new();
    };
    let ancestors = path.safe().map(RelPath::ancestors_top_down).unwrap_or_default();
    let mut out = Vec::new();
    for d in dirs {
        match RelPath::from_stored(d.as_bytes()) {
            Ok(r) if ancestors.contains(&r) => out.push(r),
            _ => findings.push((
                path.display(),
                format!("`createdDirs` names `{d}`, which is not an ancestor of the entry's path"),
            )),
        }
    }
    out
}

/// Maps a stored gap, translating older reason names.
pub fn gap_from_raw(g: &RawGap) -> Gap {
    Gap {
        reason: GapReason::parse(&g.reason),
        tool: g.tool.clone(),
        path: g.path.clone(),
        detail: g.detail.clone(),
    }
}

/// The stored form of a gap.
pub fn gap_to_raw(g: &Gap) -> RawGap {
    RawGap {
        reason: g.reason.as_str().to_string(),
        tool: g.tool.clone(),
        path: g.path.clone(),
        detail: g.detail.clone(),
    }
}

/// The stored form of an entry path: lossy text plus base64 bytes when not UTF-8.
pub fn path_to_raw(p: &RelPath) -> (String, Option<String>) {
    match p.to_str() {
        Some(s) => (s.to_string(), None),
        None => (
            p.to_lossy(),
            Some(base64::engine::general_purpose::STANDARD.encode(p.as_bytes())),
        ),
    }
}

/// The v3 `meta.json` form of a turn (only v3 turns are ever written).
pub fn turn_to_raw_v3(t: &Turn) -> RawRecord {
    let files = t.files.iter().map(file_to_raw).collect();
    RawRecord {
        schema_version: Some(3),
        session_id: t.session_id.clone(),
        turn: t.number,
        time: t.time.clone(),
        prompt: t.prompt.clone(),
        msg_index: t.msg_index,
        head: t.head.clone(),
        message_id: t.message_id.clone(),
        start_seq: t.start_seq,
        coverage: Some(coverage_name(t.coverage()).to_string()),
        coverage_gaps: Some(t.gaps.iter().map(gap_to_raw).collect()),
        files,
        expired_file_payload: None,
    }
}

/// A file entry as a v3 record (and a journal line) stores it.
pub fn file_to_raw(f: &FileEntry) -> RawFile {
    let (path, path_bytes) = match &f.path {
        EntryPath::Safe(p) => path_to_raw(p),
        EntryPath::Unsafe(s) => (s.clone(), None),
    };
    let mut rf = RawFile {
        path,
        path_bytes,
        capture_source: f.capture_source.clone(),
        seq: f.seq,
        ..RawFile::default()
    };
    if let Before::Present {
        sha256,
        mode,
        size,
        payload,
    } = &f.before
    {
        rf.sha256 = sha256.clone();
        rf.mode = *mode;
        rf.size = *size;
        if matches!(payload, Payload::NotKept) {
            rf.payload = Some(false);
        }
    }
    if !f.created_dirs.is_empty() {
        // Names that are not UTF-8 are left out: such a directory is simply not removed.
        let dirs: Vec<String> = f
            .created_dirs
            .iter()
            .filter_map(|d| d.to_str().map(str::to_string))
            .collect();
        rf.created_dirs = (!dirs.is_empty()).then_some(dirs);
    }
    if let Some(a) = &f.after {
        rf.after_existed = Some(a.existed);
        rf.after_sha256 = a.sha256.clone();
        rf.after_mode = a.mode;
    }
    rf
}

/// The marker `turn-N.json` of a v3 turn.
pub fn marker_of(t: &Turn) -> RawRecord {
    RawRecord {
        schema_version: Some(2),
        session_id: t.session_id.clone(),
        turn: t.number,
        time: t.time.clone(),
        prompt: t.prompt.clone(),
        msg_index: t.msg_index,
        coverage: Some("none".into()),
        files: Vec::new(),
        expired_file_payload: Some(true),
        ..RawRecord::default()
    }
}

/// The wire name of a coverage.
pub fn coverage_name(c: Coverage) -> &'static str {
    match c {
        Coverage::Legacy => "legacy",
        Coverage::Partial => "partial",
        Coverage::Complete => "complete",
        Coverage::None => "none",
    }
}
