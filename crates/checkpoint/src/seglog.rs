//! The sidecar's log segments (`log/<N>.seg`, docs/TURN-LOG.md): frames appended to a file that
//! exists, so a turn's record costs appends and `fdatasync`s instead of new files.
//!
//! A frame is a prefix line, a header and a body:
//!
//! ```text
//! @<hlen> <blen> <crc>\n    hlen, blen: decimal; crc: CRC-32 (8 lowercase hex digits) of
//!                           "<hlen> <blen>" and the header
//! <header>                  hlen bytes: one compact JSON object
//! <body>                    blen bytes: raw file bytes, or none
//! ```
//!
//! The CRC covers the lengths and the header, not the body: a body is a file's bytes, checked
//! against the SHA-256 its header (or a later frame's) records whenever it is read. Reading a
//! segment reads prefixes and headers only and steps over bodies.
//!
//! What a crash can leave: the file ends inside its last frame (a torn tail), or its last frame is
//! whole by its lengths but its bytes are not what was written (a power cut after the size reached
//! the disk and before the data did). Both are ignored by readers, and the writer cuts them off before
//! it appends again. A frame that fails its check with more bytes after it is damage, not a crash:
//! nothing after it can be placed, so the scan stops there and says so.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use retrace_fsutil::{copy_hashed, Fs, HashedCopy};

use crate::model::Slice;

/// The directory of the segments, in the sidecar.
pub(crate) const LOG_DIR: &str = "log";

/// The largest header a reader accepts (a turn's prompt lives in one).
pub(crate) const MAX_HEADER_BYTES: u64 = 16 * 1024 * 1024;

/// The longest prefix line: `@`, two 20-digit numbers, 8 hex digits, two spaces and `\n`.
const MAX_PREFIX: usize = 1 + 20 + 1 + 20 + 1 + 8 + 1;

/// `log/<N>.seg`: the segment whose first turn is `n`.
pub(crate) fn segment_rel(n: u64) -> String {
    format!("{LOG_DIR}/{n}.seg")
}

/// Parses `<N>.seg`.
pub(crate) fn parse_segment_name(name: &str) -> Option<u64> {
    crate::layout::parse_number(name.strip_suffix(".seg")?)
}

/// The CRC of a frame's lengths and header.
fn frame_crc(hlen: u64, blen: u64, header: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(format!("{hlen} {blen}").as_bytes());
    h.update(header);
    h.finalize()
}

/// The prefix line of a frame.
fn prefix(header: &[u8], blen: u64) -> Vec<u8> {
    let hlen = header.len() as u64;
    format!("@{hlen} {blen} {:08x}\n", frame_crc(hlen, blen, header)).into_bytes()
}

/// A frame as read: where it starts, its header, where its body is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FrameAt {
    /// Offset of its prefix line.
    pub at: u64,
    /// Its header's bytes (checked against the CRC; a JSON object is not checked here).
    pub header: Vec<u8>,
    /// Its body in the segment (`length` 0 for none).
    pub body: Slice,
}

/// How a segment ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tail {
    /// With its last whole frame.
    Clean,
    /// With a frame a crash cut short or left unwritten (from `at` to the end): ignored.
    Torn { at: u64, why: String },
    /// With a frame at `at` that fails its check while bytes follow it: nothing after it is read.
    Damaged { at: u64, why: String },
}

/// Every frame of a segment up to its end or its first bad frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scan {
    /// The frames, in order.
    pub frames: Vec<FrameAt>,
    /// Where the last good frame ends: what the writer keeps.
    pub good_len: u64,
    /// How the segment ends.
    pub tail: Tail,
}

/// What is wrong with the frame at a given offset, if anything.
enum Bad {
    /// It runs past the end of the file (`at` … end): a crash.
    Short(String),
    /// It is whole by its lengths but fails its check; it ends at `end` (if the lengths can be
    /// trusted that far) or its prefix could not be read at all (`None`).
    Wrong { why: String, end: Option<u64> },
}

/// A frame's prefix line, read.
struct Prefix {
    hlen: u64,
    blen: u64,
    crc: u32,
    /// The line's length, with its `\n`.
    len: usize,
}

/// Reads the prefix line at the reader's position; `Ok(None)` at the end of the file.
fn read_prefix(r: &mut impl BufRead) -> io::Result<Option<Result<Prefix, Bad>>> {
    let mut line = Vec::with_capacity(MAX_PREFIX);
    let n = r.by_ref().take(MAX_PREFIX as u64).read_until(b'\n', &mut line)?;
    if n == 0 {
        return Ok(None);
    }
    if line.last() != Some(&b'\n') {
        return Ok(Some(Err(if n < MAX_PREFIX {
            Bad::Short("its prefix line is cut short".into())
        } else {
            Bad::Wrong {
                why: "its prefix line is too long".into(),
                end: None,
            }
        })));
    }
    let bad = |why: &str| {
        Ok(Some(Err(Bad::Wrong {
            why: format!("its prefix line is not `@<length> <length> <crc>` ({why})"),
            end: None,
        })))
    };
    let Some(text) = std::str::from_utf8(&line[..n - 1])
        .ok()
        .and_then(|t| t.strip_prefix('@'))
    else {
        return bad("it does not start with `@`");
    };
    let parts: Vec<&str> = text.split(' ').collect();
    let [h, b, c] = parts.as_slice() else {
        return bad("not three fields");
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let (Some(hlen), Some(blen)) = (
        digits(h).then(|| h.parse::<u64>().ok()).flatten(),
        digits(b).then(|| b.parse::<u64>().ok()).flatten(),
    ) else {
        return bad("a length is not a number");
    };
    let Some(crc) = (c.len() == 8
        && c.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()))
    .then(|| u32::from_str_radix(c, 16).ok())
    .flatten() else {
        return bad("the CRC is not 8 lowercase hex digits");
    };
    Ok(Some(Ok(Prefix {
        hlen,
        blen,
        crc,
        len: n,
    })))
}

/// Reads every frame of `file` (its length `len`), stepping over bodies.
pub(crate) fn scan(file: &File, len: u64) -> io::Result<Scan> {
    let mut r = BufReader::with_capacity(64 * 1024, file);
    r.seek(SeekFrom::Start(0))?;
    let mut frames = Vec::new();
    let mut at = 0u64;
    loop {
        let bad = match read_prefix(&mut r)? {
            None => {
                return Ok(Scan {
                    frames,
                    good_len: at,
                    tail: Tail::Clean,
                })
            }
            Some(Err(b)) => b,
            Some(Ok(Prefix {
                hlen,
                blen,
                crc,
                len: plen,
            })) => {
                let header_at = at + plen as u64;
                let end = header_at.checked_add(hlen).and_then(|e| e.checked_add(blen));
                match end {
                    _ if hlen > MAX_HEADER_BYTES => Bad::Wrong {
                        why: format!("its header is {hlen} bytes, over the {MAX_HEADER_BYTES} byte limit"),
                        end: None,
                    },
                    Some(end) if end <= len => {
                        let mut header = vec![0u8; hlen as usize];
                        r.read_exact(&mut header)?;
                        if frame_crc(hlen, blen, &header) != crc {
                            Bad::Wrong {
                                why: "its CRC does not match its header".into(),
                                end: Some(end),
                            }
                        } else {
                            frames.push(FrameAt {
                                at,
                                header,
                                body: Slice {
                                    offset: header_at + hlen,
                                    length: blen,
                                },
                            });
                            r.seek_relative(i64::try_from(blen).unwrap_or(i64::MAX))?;
                            at = end;
                            continue;
                        }
                    }
                    _ => Bad::Short(format!(
                        "the frame ({hlen} header and {blen} body bytes) runs past the end of the file"
                    )),
                }
            }
        };
        let tail = match bad {
            Bad::Short(why) => Tail::Torn { at, why },
            // Whole by its lengths and the last thing in the file: what a power cut can leave.
            Bad::Wrong { why, end: Some(end) } if end == len => Tail::Torn { at, why },
            // Bytes follow it: damage when a frame can be found in them, else what a crash left
            // (a power cut can leave an append's blocks zeroed or stale).
            Bad::Wrong { why, .. } if frame_after(file, at, len)? => Tail::Damaged { at, why },
            Bad::Wrong { why, .. } => Tail::Torn { at, why },
        };
        return Ok(Scan {
            frames,
            good_len: at,
            tail,
        });
    }
}

/// The most bytes after a bad frame searched for a good one.
const MAX_SEARCH: u64 = 64 * 1024 * 1024;

/// Whether a whole frame that passes its check starts anywhere after `at` (by its lengths within
/// `len`). Only tells damage from a torn tail: nothing found this way is ever applied.
fn frame_after(file: &File, at: u64, len: u64) -> io::Result<bool> {
    let from = at + 1;
    if len.saturating_sub(from) > MAX_SEARCH {
        return Ok(true);
    }
    let mut rest = Vec::new();
    let mut f = file;
    f.seek(SeekFrom::Start(from))?;
    f.take(len - from).read_to_end(&mut rest)?;
    for (i, _) in rest.iter().enumerate().filter(|(_, b)| **b == b'@') {
        let mut r = &rest[i..];
        let Ok(Some(Ok(Prefix {
            hlen,
            blen,
            crc,
            len: plen,
        }))) = read_prefix(&mut r)
        else {
            continue;
        };
        let header_at = i + plen;
        let fits = u64::try_from(header_at)
            .ok()
            .and_then(|h| h.checked_add(hlen))
            .and_then(|e| e.checked_add(blen))
            .is_some_and(|e| e <= rest.len() as u64);
        if fits {
            let header = &rest[header_at..header_at + hlen as usize];
            if frame_crc(hlen, blen, header) == crc {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// Whether `dir` (the sidecar's `log/`) can hold segments: missing (it is made), or a directory
/// that is not a symlink. Anything else is an error saying what stands there.
pub(crate) fn log_dir_usable(dir: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(m) if m.is_dir() => Ok(()),
        Ok(m) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "`{}` is not a directory but a {}: the sidecar keeps its log there; move it aside",
                dir.display(),
                if m.file_type().is_symlink() {
                    "symlink"
                } else {
                    "file"
                }
            ),
        )),
    }
}

/// A segment open for appending (one writer: the session's lease holder).
#[derive(Debug)]
pub(crate) struct Segment {
    /// Its path.
    pub path: PathBuf,
    /// Its first turn (the name).
    pub first_turn: u64,
    file: File,
    /// Its length: where the next frame goes.
    pub len: u64,
    /// Made by this process and its directory entry not yet made durable.
    unpublished: bool,
}

impl Segment {
    /// Creates `log/<first_turn>.seg` in `sidecar` (which must exist), empty. Its directory entry
    /// is made durable by its first [`Append::commit`].
    pub(crate) fn create(fs: &Fs, sidecar: &Path, first_turn: u64) -> io::Result<Segment> {
        let dir = sidecar.join(LOG_DIR);
        log_dir_usable(&dir)?;
        fs.create_dir_all(&dir)?;
        let path = sidecar.join(segment_rel(first_turn));
        fs.step("create_file")?;
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(true)
            .mode(retrace_fsutil::PRIVATE_FILE_MODE)
            .open(&path)?;
        Ok(Segment {
            path,
            first_turn,
            file,
            len: 0,
            unpublished: true,
        })
    }

    /// Opens an existing segment to append to it, after `scan` read it: a torn tail is cut off
    /// (and the cut made durable) first. A damaged segment is never appended to (`None`): what
    /// would follow the damage could not be read.
    pub(crate) fn reopen(fs: &Fs, path: &Path, first_turn: u64, scan: &Scan) -> io::Result<Option<Segment>> {
        if matches!(scan.tail, Tail::Damaged { .. }) {
            return Ok(None);
        }
        // Never through a symlink: what it points at is not this session's.
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)?;
        let md = file.metadata()?;
        if !md.is_file() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"));
        }
        let len = md.len();
        if len != scan.good_len {
            fs.step("truncate")?;
            file.set_len(scan.good_len)?;
            fs.sync_data(&file, "sync_file")?;
        }
        Ok(Some(Segment {
            path: path.to_path_buf(),
            first_turn,
            file,
            len: scan.good_len,
            unpublished: false,
        }))
    }

    /// Starts an append: frames are gathered, then written and made durable by
    /// [`Append::commit`]. Dropped without a commit, everything it wrote is cut off again.
    ///
    /// Refused (`WouldBlock`) when the file is not as long as this writer left it: another process
    /// appended since (it took the session's writer lease over, or ignored it), and frames of two
    /// writers must never interleave — offsets would be wrong, and a stale writer would record a
    /// turn's end over the other's work.
    pub(crate) fn append(&mut self) -> io::Result<Append<'_>> {
        let now = self.file.metadata()?.len();
        if now != self.len {
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                format!(
                    "another process wrote to this session's log since this one last did ({} bytes, {now} now): this process no longer writes to it (the session's writer lease was taken over)",
                    self.len
                ),
            ));
        }
        let start = self.len;
        Ok(Append {
            seg: self,
            start,
            buf: Vec::new(),
            done: false,
        })
    }
}

/// The segment a writer appends to, and how many turns it holds.
#[derive(Debug)]
pub(crate) struct Writer {
    pub segment: Segment,
    pub turns: usize,
}

/// One append to a segment (see [`Segment::append`]).
#[derive(Debug)]
pub(crate) struct Append<'a> {
    seg: &'a mut Segment,
    start: u64,
    buf: Vec<u8>,
    done: bool,
}

impl Append<'_> {
    /// Where the next frame starts.
    fn next_at(&self) -> u64 {
        self.seg.len + self.buf.len() as u64
    }

    /// Adds a frame; returns where its body will be.
    pub(crate) fn frame(&mut self, header: &[u8], body: &[u8]) -> Slice {
        let p = prefix(header, body.len() as u64);
        let offset = self.next_at() + (p.len() + header.len()) as u64;
        self.buf.extend_from_slice(&p);
        self.buf.extend_from_slice(header);
        self.buf.extend_from_slice(body);
        Slice {
            offset,
            length: body.len() as u64,
        }
    }

    /// Writes what is gathered so far.
    fn flush(&mut self, fs: &Fs) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        fs.step("write")?;
        (&self.seg.file).write_all(&self.buf)?;
        self.seg.len += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// Adds a frame whose body is exactly `len` bytes read from `src` (streamed, hashed as it
    /// goes): a source that ends sooner is an error (`InvalidData`: it changed while it was read),
    /// and so is one that holds more when `exact`; then nothing of this append is kept.
    pub(crate) fn stream(
        &mut self,
        fs: &Fs,
        header: &[u8],
        src: &mut dyn Read,
        len: u64,
        exact: bool,
    ) -> io::Result<(Slice, HashedCopy)> {
        let p = prefix(header, len);
        self.buf.extend_from_slice(&p);
        self.buf.extend_from_slice(header);
        self.flush(fs)?;
        let offset = self.seg.len;
        fs.step("write")?;
        let mut out = &self.seg.file;
        let copied = copy_hashed((&mut *src).take(len), Some(&mut out))?;
        self.seg.len += copied.len;
        let mut more = [0u8; 1];
        if copied.len != len || (exact && src.read(&mut more)? != 0) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "it changed while it was read ({len} bytes when looked at, {} read)",
                    copied.len
                ),
            ));
        }
        Ok((Slice { offset, length: len }, copied))
    }

    /// Writes the frames without making them durable: the next [`Append::commit`] does (it syncs
    /// the whole file).
    pub(crate) fn commit_unsynced(mut self, fs: &Fs) -> io::Result<()> {
        self.flush(fs)?;
        self.done = true;
        Ok(())
    }

    /// Writes the frames and makes them durable: one `fdatasync` (with the segment's directory,
    /// the first time, for a segment this process made).
    pub(crate) fn commit(mut self, fs: &Fs) -> io::Result<()> {
        self.flush(fs)?;
        fs.sync_data(&self.seg.file, "sync_file")?;
        if self.seg.unpublished {
            if let Some(dir) = self.seg.path.parent() {
                fs.sync_dir(dir)?;
            }
            self.seg.unpublished = false;
        }
        self.done = true;
        Ok(())
    }
}

impl Drop for Append<'_> {
    fn drop(&mut self) {
        if !self.done && self.seg.len > self.start {
            // Best effort: what is left is a torn tail, cut off by the next writer.
            if self.seg.file.set_len(self.start).is_ok() {
                self.seg.len = self.start;
            }
        }
    }
}

/// Reads a body (or any slice) of a segment.
#[cfg(test)]
pub(crate) fn read_slice(path: &Path, s: Slice) -> io::Result<Vec<u8>> {
    let mut f = File::open(path)?;
    f.seek(SeekFrom::Start(s.offset))?;
    let mut out = Vec::with_capacity(usize::try_from(s.length).unwrap_or(0).min(1 << 20));
    let n = f.take(s.length).read_to_end(&mut out)?;
    if n as u64 != s.length {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "the segment ends before the {} bytes at offset {}",
                s.length, s.offset
            ),
        ));
    }
    Ok(out)
}

#[cfg(test)]
#[path = "seglog_tests.rs"]
mod tests;
