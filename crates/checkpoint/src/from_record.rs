//! Reading a stored record (v1, v2 or v3, see [`crate::record`]) into the typed model: paths made
//! safe or marked unsafe, where each before-image's bytes are, legacy renames linked, and the gaps
//! a reader derives.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use base64::Engine;
use retrace_fsutil::{is_sha256_hex, sha256_bytes, RelPath};
use retrace_protocol::{Gap, GapReason};
use time::OffsetDateTime;

use crate::encoding::encodings_of;
use crate::model::{
    Before, EntryPath, FileEntry, Format, Image, Payload, Source, Turn, KNOWN_CAPTURE_SOURCES, LEGACY_RENAME,
    UNKNOWN_CAPTURE_SOURCE,
};
use crate::record::{RawFile, RawGap, RawRecord};

/// Parses an RFC 3339 time.
pub(crate) fn parse_time(s: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()
}

/// Converts a stored record into a turn. `root` is the workspace root when known: an absolute stored
/// path under it is made relative. Returns the turn and the file-level findings (unsafe paths, bad
/// digests, legacy renames) as `(workspace path, problem)`.
pub(crate) fn turn_from_raw(
    raw: &RawRecord,
    source: Source,
    record_path: &str,
    root: Option<&Path>,
) -> (Turn, Vec<(String, String)>) {
    // The reference implementation writes `schemaVersion: 1` into v1 records it rewrites.
    let format = match (source, raw.schema_version) {
        (Source::V3 | Source::Log, _) => Format::V3,
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
        let end = end_of(rf, &path, &mut findings);
        files.push(FileEntry {
            path,
            before,
            after,
            capture_source: rf.capture_source.clone(),
            seq: rf.seq,
            moved_to: None,
            created_dirs,
            end,
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
                end: None,
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
pub(crate) fn gap_from_raw(g: &RawGap) -> Gap {
    Gap {
        reason: GapReason::parse(&g.reason),
        tool: g.tool.clone(),
        path: g.path.clone(),
        detail: g.detail.clone(),
    }
}

/// The file as its turn left it, when the record says; a malformed one is a finding and reads as
/// not recorded (the turn's results then say its end is unknown).
fn end_of(rf: &RawFile, path: &EntryPath, findings: &mut Vec<(String, String)>) -> Option<crate::model::End> {
    let e = rf.end.as_ref()?;
    let bad = |findings: &mut Vec<(String, String)>, what: &str| {
        findings.push((
            path.display(),
            format!("`end` {what}: the turn's end state is not used"),
        ));
        None
    };
    if e.sha256.as_deref().is_some_and(|s| !is_sha256_hex(s)) {
        return bad(findings, "has a `sha256` that is not 64 lowercase hex digits");
    }
    let kept = match (e.offset, e.length) {
        (Some(offset), Some(length)) if e.existed && e.sha256.is_some() => {
            if offset.checked_add(length).is_none() {
                return bad(findings, "names a range past any file");
            }
            Some(crate::model::Slice { offset, length })
        }
        (None, None) => None,
        _ => return bad(findings, "has an incomplete or impossible byte range"),
    };
    Some(crate::model::End {
        image: Image {
            existed: e.existed,
            sha256: if e.existed { e.sha256.clone() } else { None },
            mode: if e.existed { e.mode } else { None },
        },
        size: if e.existed { e.size } else { None },
        kept,
        at: e.at.clone(),
        counts: e.added.zip(e.removed),
    })
}
