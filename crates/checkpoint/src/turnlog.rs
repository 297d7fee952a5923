//! The store's side of the sidecar's log (docs/TURN-LOG.md, FORMATS.md §19): which segment a
//! turn's frames go to, and one append of them (one `write`, one `fdatasync`).

use std::io::Read;

use crate::error::{CheckpointError, IoContext, Result};
use crate::logread::{Body, Header, Out, SegInfo, SEGMENT_BYTES, SEGMENT_TURNS};
use crate::seglog::{segment_rel, Segment, Tail, Writer};
use crate::store::CheckpointStore;

/// Where an appended frame's bytes went, and, for bytes hashed on their way in, their hash.
#[derive(Debug, Clone)]
pub(crate) struct Written {
    pub slice: crate::model::Slice,
    pub hashed: Option<retrace_fsutil::HashedCopy>,
}

impl CheckpointStore {
    /// The segment to append to when a turn starts writing: the open one, unless it is full, else
    /// a new one named `next` (or above every segment there is).
    fn writer_for_new_turn(&mut self, first: u64) -> Result<()> {
        let full = self
            .log
            .as_ref()
            .is_none_or(|w| w.turns >= SEGMENT_TURNS || w.segment.len >= SEGMENT_BYTES);
        if !full {
            return Ok(());
        }
        self.seal_newest()?;
        let above = self.sidecar.log_segments.keys().next_back().map_or(0, |s| s + 1);
        let name = first.max(above);
        let seg = Segment::create(&self.opts.fs, &self.sidecar.dir, name)
            .at("create", self.sidecar.dir.join(segment_rel(name)))?;
        self.sidecar.log_segments.insert(
            name,
            SegInfo {
                good_len: 0,
                tail: Tail::Clean,
                turns: Vec::new(),
                sealed: false,
            },
        );
        self.log = Some(Writer {
            segment: seg,
            turns: 0,
        });
        // Listed, so that losing it is noticed (a crash before this leaves it unlisted: accepted).
        self.sidecar.state.log_segments.push(name);
        self.write_state()?;
        // What a segment not read whole held comes before this one: turns from here on are known.
        for (below, _) in &mut self.sidecar.log_unknown {
            *below = (*below).min(name);
        }
        Ok(())
    }

    /// Ends the newest segment with a `sealed` frame (made durable) before a new one is made: a
    /// segment that is not the newest and has no seal lost its end (FORMATS.md §19.3). A damaged or
    /// unreadable one is left as it is (it is known as such).
    fn seal_newest(&mut self) -> Result<()> {
        if self.log.is_none() {
            self.open_newest(false)?;
        }
        let fs_ = self.opts.fs.clone();
        let Some(w) = self.log.as_mut() else {
            return Ok(());
        };
        let name = w.segment.first_turn;
        let path = w.segment.path.clone();
        let mut a = w.segment.append().at("write", &path)?;
        a.frame(&Header::new("sealed", name).bytes(), b"");
        a.commit(&fs_).at("write", &path)?;
        if let Some(info) = self.sidecar.log_segments.get_mut(&name) {
            info.sealed = true;
        }
        self.log = None;
        Ok(())
    }

    /// Opens the newest segment for appending, when it can take more (recovery's settlement, the
    /// next turn): a torn tail is cut off first.
    pub(crate) fn reopen_log(&mut self) -> Result<()> {
        self.open_newest(true)
    }

    /// Opens the newest segment for appending (a torn tail cut off first) unless it is sealed or
    /// damaged, or, with `room`, full.
    fn open_newest(&mut self, room: bool) -> Result<()> {
        let Some((&name, info)) = self.sidecar.log_segments.iter().next_back() else {
            return Ok(());
        };
        let full = info.turns.len() >= SEGMENT_TURNS || info.good_len >= SEGMENT_BYTES;
        if info.sealed || matches!(info.tail, Tail::Damaged { .. }) || (room && full) {
            return Ok(());
        }
        let path = self.sidecar.dir.join(segment_rel(name));
        let scan = crate::seglog::Scan {
            frames: Vec::new(),
            good_len: info.good_len,
            tail: info.tail.clone(),
        };
        let turns = info.turns.len();
        let segment = Segment::reopen(&self.opts.fs, &path, name, &scan).at("open", &path)?;
        self.log = segment.map(|segment| Writer { segment, turns });
        Ok(())
    }

    /// Appends `frames` of turn `turn` to the log and makes them durable (one write, one
    /// `fdatasync`): the turn's `turn` frame first when it has none on disk yet. Returns each
    /// frame's body. On failure nothing of it is kept.
    pub(crate) fn log_append(&mut self, turn: u64, frames: Vec<Out>) -> Result<Vec<Written>> {
        self.log_append_with(turn, frames, true)
    }

    /// [`CheckpointStore::log_append`], made durable only when `sync` (else by the next append
    /// that is).
    pub(crate) fn log_append_with(
        &mut self,
        turn: u64,
        frames: Vec<Out>,
        sync: bool,
    ) -> Result<Vec<Written>> {
        let begin = match self.current.as_ref() {
            Some(c) if c.number == turn && !c.on_disk => {
                let t = self
                    .sidecar
                    .turns
                    .get(&turn)
                    .ok_or(CheckpointError::UnknownTurn(turn))?;
                let mut record = crate::to_record::turn_to_raw_v3(&crate::model::Turn {
                    files: Vec::new(),
                    gaps: Vec::new(),
                    ..t.clone()
                });
                record.coverage_gaps = None;
                Some(Header {
                    record: Some(record),
                    ..Header::new("turn", turn)
                })
            }
            _ => None,
        };
        if begin.is_some() {
            self.writer_for_new_turn(turn)?;
        } else if self.log.is_none() {
            self.writer_for_new_turn(self.next_turn())?;
        }
        let fs_ = self.opts.fs.clone();
        let Some(w) = self.log.as_mut() else {
            return Err(CheckpointError::NoTurn);
        };
        let path = w.segment.path.clone();
        let mut slices = Vec::with_capacity(frames.len());
        let mut a = w.segment.append().at("write", &path)?;
        if let Some(h) = &begin {
            a.frame(&h.bytes(), b"");
        }
        for mut f in frames {
            f.header.kept = !matches!(f.body, Body::None);
            let header = f.header.bytes();
            let plain = |slice| Written { slice, hashed: None };
            match f.body {
                Body::None => slices.push(plain(a.frame(&header, b""))),
                Body::Bytes(b) => slices.push(plain(a.frame(&header, &b))),
                Body::Grab { mut file, len } => {
                    let bytes = Header::new("bytes", turn).bytes();
                    let (s, copied) = a
                        .stream(&fs_, &bytes, &mut (&mut file as &mut dyn Read), len, false)
                        .at("write", &path)?;
                    let mut h = f.header;
                    h.kept = false;
                    h.at = Some(crate::logread::At {
                        offset: s.offset,
                        length: s.length,
                    });
                    if let Some(end) = h.end.as_mut() {
                        end.sha256 = Some(copied.sha256.clone());
                        end.size = Some(copied.len);
                    }
                    a.frame(&h.bytes(), b"");
                    slices.push(Written {
                        slice: s,
                        hashed: Some(copied),
                    });
                }
                Body::File {
                    mut file,
                    len,
                    sha256,
                } => {
                    let (s, copied) = a
                        .stream(&fs_, &header, &mut (&mut file as &mut dyn Read), len, true)
                        .at("write", &path)?;
                    if copied.sha256 != sha256 {
                        return Err(CheckpointError::Io {
                            op: "copy",
                            path: path.clone(),
                            source: std::io::Error::new(
                                std::io::ErrorKind::InvalidData,
                                "a file changed while its before-image was kept; try again",
                            ),
                        });
                    }
                    slices.push(plain(s));
                }
            }
        }
        if sync {
            a.commit(&fs_).at("write", &path)?;
        } else {
            a.commit_unsynced(&fs_).at("write", &path)?;
        }
        let len = w.segment.len;
        let name = w.segment.first_turn;
        if begin.is_some() {
            w.turns += 1;
            if let Some(c) = self.current.as_mut() {
                c.on_disk = true;
            }
            if let Some(t) = self.sidecar.turns.get_mut(&turn) {
                t.record_path = segment_rel(name);
            }
        }
        if let Some(info) = self.sidecar.log_segments.get_mut(&name) {
            info.good_len = len;
            if !info.turns.contains(&turn) {
                info.turns.push(turn);
            }
        }
        Ok(slices)
    }
}
