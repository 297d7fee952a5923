//! The stored forms of the model: a v3 turn's `meta.json` and marker, its entries (also journal
//! lines), gaps and paths.

use base64::Engine;
use retrace_fsutil::RelPath;
use retrace_protocol::{Coverage, Gap};

use crate::model::{Before, EntryPath, FileEntry, Payload, Turn};
use crate::record::{RawFile, RawGap, RawRecord};

/// The stored form of a gap.
pub(crate) fn gap_to_raw(g: &Gap) -> RawGap {
    RawGap {
        reason: g.reason.as_str().to_string(),
        tool: g.tool.clone(),
        path: g.path.clone(),
        detail: g.detail.clone(),
    }
}

/// The stored form of an entry path: lossy text plus base64 bytes when not UTF-8.
pub(crate) fn path_to_raw(p: &RelPath) -> (String, Option<String>) {
    match p.to_str() {
        Some(s) => (s.to_string(), None),
        None => (
            p.to_lossy(),
            Some(base64::engine::general_purpose::STANDARD.encode(p.as_bytes())),
        ),
    }
}

/// The v3 `meta.json` form of a turn (only v3 turns are ever written).
pub(crate) fn turn_to_raw_v3(t: &Turn) -> RawRecord {
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
pub(crate) fn file_to_raw(f: &FileEntry) -> RawFile {
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
    rf.end = f.end.as_ref().map(end_to_raw);
    rf
}

/// An end as stored.
pub(crate) fn end_to_raw(e: &crate::model::End) -> crate::record::RawEnd {
    crate::record::RawEnd {
        existed: e.image.existed,
        sha256: e.image.sha256.clone(),
        mode: e.image.mode,
        size: e.size,
        offset: e.kept.map(|s| s.offset),
        length: e.kept.map(|s| s.length),
        at: e.at.clone(),
        added: e.counts.map(|c| c.0),
        removed: e.counts.map(|c| c.1),
    }
}

/// The wire name of a coverage.
pub(crate) fn coverage_name(c: Coverage) -> &'static str {
    match c {
        Coverage::Legacy => "legacy",
        Coverage::Partial => "partial",
        Coverage::Complete => "complete",
        Coverage::None => "none",
    }
}
