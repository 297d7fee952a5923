//! When a turn ends: each file it touched, as it left it, so the turn's results stay exact
//! whatever happens to the files later (a hand edit, a later turn, a restore).
//!
//! The before-image of a file is kept at its first touch; its end state used to be known only by
//! hash (the after-image of Retrace's last write). As a turn ends, every file of the turn is read
//! once more and its bytes go into an `end` frame of the log (FORMATS.md §19), appended with the
//! turn's `ended` frame: one append, one `fdatasync`. A crash before leaves the turn without its
//! ends (its results then say its end was not kept), never an end pointing at bytes that are not
//! there.
//!
//! Not kept (the entry records the image, or only that the file is gone): a file that no longer
//! exists, one over the store's size cap, anything but a regular file, a symbolic link, a file that
//! cannot be read. A file whose bytes are those of its before-image is recorded by hash only (the
//! before-image holds them). Each entry also records the lines added and removed from its
//! before-image (when both are text of at most 4 MiB), so the listing can show a turn's +/−
//! without diffing. A file too large to diff is streamed into the log, never held in memory.

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use retrace_diff::{diff_sides, Side, MAX_DIFF_INPUT};
use retrace_fsutil::{copy_hashed, sha256_bytes, RelPath};

use crate::error::{IoContext, Result};
use crate::fsio::{mode_bits, standing, Standing};
use crate::logread::{Body, Header, Out};
use crate::model::{Before, End, Image};
use crate::read::BeforeImage;
use crate::store::CheckpointStore;

/// What the turn's record says of a file before the turn: its hash and size when it existed.
struct BeforeState {
    sha256: Option<String>,
    size: Option<u64>,
}

impl CheckpointStore {
    /// How turn `n` left each file it touched (see the module): the `end` frames to append, and
    /// each entry's end with whether its frame carries the bytes. A file that cannot be looked at
    /// gets no end.
    pub(crate) fn end_frames(&self, n: u64) -> (Vec<Out>, Vec<(usize, End, bool)>) {
        let mut frames = Vec::new();
        let mut ends = Vec::new();
        let Some(root) = self.sidecar.root.clone() else {
            return (frames, ends);
        };
        let Some(turn) = self.sidecar.turns.get(&n) else {
            return (frames, ends);
        };
        let at = (self.opts.clock)()
            .format(&time::format_description::well_known::Rfc3339)
            .ok();
        for (i, f) in turn.files.iter().enumerate() {
            let Some(rel) = f.path.safe() else { continue };
            let before = match &f.before {
                Before::Present { sha256, size, .. } => BeforeState {
                    sha256: sha256.clone(),
                    size: *size,
                },
                Before::Absent => BeforeState {
                    sha256: None,
                    size: Some(0),
                },
            };
            let Ok((end, body)) = self.end_of(n, &root, rel, &before) else {
                continue;
            };
            let end = End {
                at: at.clone(),
                ..end
            };
            let kept = !matches!(body, Body::None);
            let raw = crate::to_record::end_to_raw(&end);
            frames.push(Out {
                header: Header {
                    index: Some(i),
                    end: Some(raw),
                    ..Header::new("end", n)
                },
                body,
            });
            ends.push((i, end, kept));
        }
        (frames, ends)
    }

    /// How turn `n` left `rel`, with its bytes as a frame's body unless its before-image holds
    /// them.
    fn end_of(&self, n: u64, root: &Path, rel: &RelPath, before: &BeforeState) -> Result<(End, Body)> {
        let abs = rel.under(root);
        if standing(root, rel) != Standing::Plain {
            // A symbolic link on the way, a directory, a FIFO: nothing is read there. The end
            // says something stands at the path that is not a file Retrace can keep.
            return Ok((not_a_file(), Body::None));
        }
        let (mut file, meta) = match fs::symlink_metadata(&abs) {
            Err(e) if e.kind() == io::ErrorKind::NotFound || e.kind() == io::ErrorKind::NotADirectory => {
                let end = End {
                    image: Image::absent(),
                    size: None,
                    kept: None,
                    at: None,
                    counts: self.counts(n, rel, before, Side::Absent),
                };
                return Ok((end, Body::None));
            }
            Err(_) => return Ok((not_a_file(), Body::None)),
            Ok(m) if !m.is_file() => return Ok((not_a_file(), Body::None)),
            Ok(_) => match retrace_fsutil::open_regular_nofollow(&abs) {
                Err(_) => return Ok((not_a_file(), Body::None)),
                Ok(opened) => opened,
            },
        };
        let mode = mode_bits(&meta);
        if meta.len() > self.opts.limits.max_file_bytes {
            let hashed = copy_hashed::<_, File>(&file, None).at("read", &abs)?;
            let end = End {
                image: present(hashed.sha256, mode),
                size: Some(hashed.len),
                kept: None,
                at: None,
                counts: None,
            };
            return Ok((end, Body::None));
        }
        if meta.len() > MAX_DIFF_INPUT as u64 {
            // Too large to diff, so no counts: streamed into the log, never held in memory.
            return streamed(file, &abs, before, mode);
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        (&mut file)
            .take(MAX_DIFF_INPUT as u64 + 1)
            .read_to_end(&mut bytes)
            .at("read", &abs)?;
        if bytes.len() > MAX_DIFF_INPUT {
            // It grew while read: read it again, streamed.
            file.seek(SeekFrom::Start(0)).at("read", &abs)?;
            drop(bytes);
            return streamed(file, &abs, before, mode);
        }
        let sha = sha256_bytes(&bytes);
        if before.sha256.as_deref() == Some(sha.as_str()) {
            // The before-image holds these bytes.
            let end = End {
                image: present(sha, mode),
                size: Some(bytes.len() as u64),
                kept: None,
                at: None,
                counts: Some((0, 0)),
            };
            return Ok((end, Body::None));
        }
        let end = End {
            image: present(sha, mode),
            size: Some(bytes.len() as u64),
            // Set once the frame is written.
            kept: None,
            at: None,
            counts: self.counts(n, rel, before, Side::Bytes(&bytes)),
        };
        Ok((end, Body::Bytes(bytes)))
    }

    /// After the `end` frames were appended: each entry's end, with where its bytes are.
    pub(crate) fn record_end_slices(
        &mut self,
        n: u64,
        ends: Vec<(usize, End, bool)>,
        written: &[crate::turnlog::Written],
    ) {
        let Some(turn) = self.sidecar.turns.get_mut(&n) else {
            return;
        };
        for ((i, mut end, kept), w) in ends.into_iter().zip(written) {
            if kept {
                end.kept = Some(w.slice);
            }
            if let Some(h) = &w.hashed {
                // Streamed: the bytes kept are what was read then.
                end.image.sha256 = Some(h.sha256.clone());
                end.size = Some(h.len);
                end.counts = None;
            }
            if let Some(f) = turn.files.get_mut(i) {
                f.end = Some(end);
            }
        }
    }

    /// Lines added and removed from `rel`'s before-image in turn `n` to `end`, when both are text
    /// of at most the diffed size; `None` otherwise (a before-image too large to diff is not read).
    fn counts(&self, n: u64, rel: &RelPath, before: &BeforeState, end: Side<'_>) -> Option<(u64, u64)> {
        if before.size.is_none_or(|s| s > MAX_DIFF_INPUT as u64) {
            return None;
        }
        let bytes = match self.sidecar.before_image(n, rel).ok()? {
            BeforeImage::Absent => None,
            BeforeImage::Present { reader, .. } => Some(reader.read_all().ok()?),
        };
        let old = match &bytes {
            Some(b) => Side::Bytes(b),
            None => Side::Absent,
        };
        let d = diff_sides(old, end, 0)?;
        Some((d.added, d.removed))
    }
}

/// Something stands at the path that is not a regular file Retrace can read (or it could not be
/// read): existed, no hash, nothing kept.
fn not_a_file() -> End {
    End {
        image: Image {
            existed: true,
            sha256: None,
            mode: None,
        },
        size: None,
        kept: None,
        at: None,
        counts: None,
    }
}

/// A file too large to diff: its bytes streamed into the log once, hashed on the way (a file
/// that grows meanwhile is kept as far as it was when looked at). Its hash and size are those of
/// what was copied. (A large file the turn did not change is kept again: its before-image is not
/// read to find out.)
fn streamed(file: File, _abs: &Path, _before: &BeforeState, mode: u32) -> Result<(End, Body)> {
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let end = End {
        image: Image {
            existed: true,
            sha256: None,
            mode: Some(mode),
        },
        size: Some(len),
        kept: None,
        at: None,
        counts: None,
    };
    Ok((end, Body::Grab { file, len }))
}

fn present(sha256: String, mode: u32) -> Image {
    Image {
        existed: true,
        sha256: Some(sha256),
        mode: Some(mode),
    }
}
