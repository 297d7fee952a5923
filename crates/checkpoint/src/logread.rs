//! Turns recorded in the sidecar's log (docs/TURN-LOG.md, FORMATS.md §19): what a frame's header
//! holds, and how the frames of every segment are read back into one record per turn (the store
//! appends them: `turnlog.rs`).
//!
//! A turn's frames: `turn` (its record as it began), `line` (a journal line, FORMATS.md §4.6.1: an
//! entry, whose body is its before-image; an after-image or intent; a gap), `end` (the file as the
//! turn left it, its bytes as the body), `unowned` (recovery found an intent's write never landed
//! on the turn's first touch: the entry keeps no after-image), `ended`. Reading a turn applies its
//! `line` frames as a journal over its `turn` record: the journal's rules hold unchanged.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{IoContext, Result};
use crate::model::Slice;
use crate::record::{JournalLine, RawEnd, RawRecord};
use crate::seglog::{parse_segment_name, scan, segment_rel, Tail, LOG_DIR};

/// A segment is not appended to by a new turn once it holds this many turns or bytes.
pub(crate) const SEGMENT_TURNS: usize = 16;
/// See [`SEGMENT_TURNS`].
pub(crate) const SEGMENT_BYTES: u64 = 16 * 1024 * 1024;

/// A frame's header.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Header {
    /// The kind: `turn`, `line`, `end`, `unowned`, `ended`.
    pub k: String,
    /// The turn it belongs to.
    pub turn: u64,
    /// `turn`: the record as the turn began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<RawRecord>,
    /// `line`: a journal line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<JournalLine>,
    /// `end`, `unowned`: the entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// `end`: the file as the turn left it (where its bytes are: the frame's body, when `kept`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<RawEnd>,
    /// The frame's body holds the bytes its header is about (an entry's before-image, an end
    /// state), even when there are none (an empty file).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub kept: bool,
    /// The bytes its header is about are the body of the `bytes` frame just before it, at this
    /// offset of the segment (a file streamed in before its hash was known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<At>,
}

/// Where bytes are in a segment.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct At {
    pub offset: u64,
    pub length: u64,
}

impl Header {
    pub(crate) fn new(k: &str, turn: u64) -> Header {
        Header {
            k: k.into(),
            turn,
            ..Header::default()
        }
    }

    pub(crate) fn line(turn: u64, line: JournalLine) -> Header {
        Header {
            line: Some(line),
            ..Header::new("line", turn)
        }
    }

    pub(crate) fn bytes(&self) -> Vec<u8> {
        // A header of plain data always encodes.
        serde_json::to_vec(self).unwrap_or_default()
    }
}

/// A frame's body, to append.
pub(crate) enum Body {
    None,
    Bytes(Vec<u8>),
    /// `len` bytes read from a file, which must hash to `sha256` (read a second time: the first
    /// read hashed it).
    File {
        file: fs::File,
        len: u64,
        sha256: String,
    },
    /// The first `len` bytes of a file, hashed as they are copied into a `bytes` frame written
    /// just before this frame, whose header then gets where they are (`at`) and, for an `end`,
    /// their hash and size: one read of a file that may be growing.
    Grab {
        file: fs::File,
        len: u64,
    },
}

/// A frame to append.
pub(crate) struct Out {
    pub header: Header,
    pub body: Body,
}

impl Out {
    pub(crate) fn bare(header: Header) -> Out {
        Out {
            header,
            body: Body::None,
        }
    }
}

/// One turn as the log holds it.
#[derive(Debug, Clone, Default)]
pub(crate) struct LogTurn {
    /// The segment of its `turn` frame.
    pub segment: u64,
    /// Its record as it began.
    pub record: Option<RawRecord>,
    /// Its `line` frames, as journal lines.
    pub journal: Vec<u8>,
    /// The body of each entry line, by index.
    pub bodies: BTreeMap<usize, Slice>,
    /// Its `end` frames (offsets set from their bodies).
    pub ends: Vec<(usize, RawEnd)>,
    /// Entries recovery found untouched.
    pub unowned: Vec<usize>,
    /// Whether its `ended` frame was read.
    pub ended: bool,
    /// Whether retention deleted it (its `deleted` frame was read).
    pub deleted: bool,
    /// Why it cannot be read whole (damage in its segment before it ended), if so.
    pub damaged: Option<String>,
}

/// A segment as read.
#[derive(Debug, Clone)]
pub(crate) struct SegInfo {
    /// Where its last good frame ends.
    pub good_len: u64,
    /// How it ends.
    pub tail: Tail,
    /// The turns with a frame in it.
    pub turns: Vec<u64>,
    /// Whether its last frame is `sealed`: a later segment took over from it.
    pub sealed: bool,
}

/// Everything the log holds.
#[derive(Debug, Default)]
pub(crate) struct LogRead {
    pub turns: BTreeMap<u64, LogTurn>,
    pub segments: BTreeMap<u64, SegInfo>,
    /// (path, problem, is an error) for what is wrong with a segment.
    pub problems: Vec<(String, String, bool)>,
    /// Segments some of whose turns cannot be known (unreadable, or damaged before their end),
    /// each with the first turn after them that can be (the next segment's name), and why: a code
    /// restore to a turn before that is not offered.
    pub unknown: Vec<(u64, String)>,
    /// The largest turn a `deleted` frame names: retention went that far (`prunedThrough`).
    pub max_deleted: Option<u64>,
    /// Why `log` cannot be read at all (a file or a symlink stands there), if so.
    pub not_a_dir: Option<String>,
}

/// The bytes an `at` names, when it names exactly the body of the `bytes` frame just before
/// (`before`); `None` otherwise (the header is taken as keeping no bytes).
fn named_bytes(a: At, before: Option<Slice>) -> Option<Slice> {
    let s = Slice {
        offset: a.offset,
        length: a.length,
    };
    (before == Some(s)).then_some(s)
}

/// Reads every segment under `dir/log`, oldest first.
pub(crate) fn read_log(dir: &Path) -> Result<LogRead> {
    let mut out = LogRead::default();
    let log = dir.join(LOG_DIR);
    if let Err(e) = crate::seglog::log_dir_usable(&log) {
        out.problems.push((LOG_DIR.into(), e.to_string(), true));
        out.not_a_dir = Some(e.to_string());
        return Ok(out);
    }
    let Ok(names) = fs::read_dir(&log) else {
        return Ok(out);
    };
    let mut segs: Vec<u64> = Vec::new();
    for e in names {
        let e = e.at("list", &log)?;
        if let Some(n) = e.file_name().to_str().and_then(parse_segment_name) {
            segs.push(n);
        }
    }
    segs.sort_unstable();
    for s in segs {
        let rel = segment_rel(s);
        let path = dir.join(&rel);
        let read =
            retrace_fsutil::open_regular_nofollow(&path).and_then(|(f, md)| Ok((scan(&f, md.len())?, md)));
        let (sc, _) = match read {
            Ok(r) => r,
            Err(e) => {
                out.problems
                    .push((rel.clone(), format!("the log segment cannot be read: {e}"), true));
                out.unknown
                    .push((s, format!("the log segment `{rel}` cannot be read")));
                // Its name stays taken, and it is never appended to nor removed.
                out.segments.insert(
                    s,
                    SegInfo {
                        good_len: 0,
                        tail: Tail::Damaged {
                            at: 0,
                            why: e.to_string(),
                        },
                        turns: Vec::new(),
                        sealed: false,
                    },
                );
                continue;
            }
        };
        let mut info = SegInfo {
            good_len: sc.good_len,
            tail: sc.tail.clone(),
            turns: Vec::new(),
            sealed: false,
        };
        let mut touched: Vec<u64> = Vec::new();
        // The body of the frame just before, when it was a `bytes` frame: the only place an
        // `at` may name (anything else is not bytes this build wrote for it).
        let mut last_bytes: Option<Slice> = None;
        for f in &sc.frames {
            info.sealed = false;
            let before = last_bytes.take();
            let Ok(h) = serde_json::from_slice::<Header>(&f.header) else {
                out.problems.push((
                    rel.clone(),
                    format!(
                        "the frame at offset {} is not a frame header this build reads; it is skipped",
                        f.at
                    ),
                    false,
                ));
                continue;
            };
            if h.k == "sealed" {
                info.sealed = true;
                continue;
            }
            if !touched.contains(&h.turn) {
                touched.push(h.turn);
            }
            let t = out.turns.entry(h.turn).or_default();
            match h.k.as_str() {
                "turn" if t.record.is_none() => {
                    t.segment = s;
                    t.record = h.record;
                }
                "line" => {
                    if let Some(line) = h.line {
                        if let (Some(i), Some(_)) = (line.index, &line.entry) {
                            let at = match (h.kept, h.at) {
                                (true, _) => Some(f.body),
                                (false, Some(a)) => named_bytes(a, before),
                                _ => None,
                            };
                            if let Some(at) = at {
                                t.bodies.entry(i).or_insert(at);
                            }
                        }
                        t.journal
                            .extend_from_slice(&serde_json::to_vec(&line).unwrap_or_default());
                        t.journal.push(b'\n');
                    }
                }
                "end" => {
                    if let (Some(i), Some(mut end)) = (h.index, h.end) {
                        if h.kept {
                            end.offset = Some(f.body.offset);
                            end.length = Some(f.body.length);
                        } else if let Some(s) = h.at.and_then(|a| named_bytes(a, before)) {
                            end.offset = Some(s.offset);
                            end.length = Some(s.length);
                        }
                        t.ends.push((i, end));
                    }
                }
                "unowned" => t.unowned.extend(h.index),
                "bytes" => last_bytes = Some(f.body),
                "deleted" => {
                    t.deleted = true;
                    out.max_deleted = Some(out.max_deleted.map_or(h.turn, |m| m.max(h.turn)));
                }
                "ended" => t.ended = true,
                // A kind a later build writes: nothing this build knows is in it.
                _ => {}
            }
        }
        match &sc.tail {
            Tail::Clean => {}
            Tail::Torn { at, why } => out.problems.push((
                rel.clone(),
                format!(
                    "the log segment ends in a frame a crash cut short at offset {at} ({why}); it is ignored"
                ),
                false,
            )),
            Tail::Damaged { at, why } => {
                out.problems.push((
                    rel.clone(),
                    format!(
                        "the log segment is damaged at offset {at} ({why}); nothing after it can be read"
                    ),
                    true,
                ));
                out.unknown
                    .push((s, format!("the log segment `{rel}` is damaged")));
                for n in &touched {
                    if let Some(t) = out.turns.get_mut(n).filter(|t| !t.ended) {
                        t.damaged = Some(format!(
                            "its log segment `{rel}` is damaged at offset {at}: what the turn did after that is not known"
                        ));
                    }
                }
            }
        }
        info.turns = touched;
        out.segments.insert(s, info);
    }
    Ok(out)
}
