//! When a turn ends: each file it touched, as it left it (`turns/N/end.pack`), so the turn's
//! results stay exact whatever happens to the files later (a hand edit, a later turn, a restore).
//!
//! The before-image of a file is kept at its first touch; its end state used to be known only by
//! hash (the after-image of Retrace's last write). Now, as a turn ends, every file of the turn is
//! read once more and its bytes are appended to one pack per turn, each file's range recorded in
//! the turn's record (`end` on its entry, FORMATS.md §5). One new file and one fsync per turn,
//! whatever the number of files; identical bytes are kept once. The pack is written under a temp
//! name, fsynced and renamed before `meta.json` is rewritten, whose directory fsync publishes both:
//! a crash leaves the record without `end` (the turn's results then say its end was not kept) or
//! with a pack that holds it, never a record pointing at bytes that are not there.
//!
//! Not kept (the entry records the image, or only that the file is gone): a file that no longer
//! exists, one over the store's size cap, anything but a regular file, a symbolic link, a file that
//! cannot be read. A file whose bytes are those of its before-image is recorded by hash only (the
//! before-image holds them). Each entry also records the lines added and removed from its
//! before-image (when both are text of at most 4 MiB), so the listing can show a turn's +/−
//! without diffing. A file too large to diff is streamed into the pack, never held in memory.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use retrace_diff::{diff_sides, Side, MAX_DIFF_INPUT};
use retrace_fsutil::{copy_hashed, sha256_bytes, Fs, HashedCopy, RelPath};

use crate::error::{IoContext, Result};
use crate::fsio::{mode_bits, standing, Standing};
use crate::layout::{end_pack_rel, end_pack_tmp_rel};
use crate::model::{Before, End, Image, Slice};
use crate::read::BeforeImage;
use crate::store::CheckpointStore;

/// The turn's end pack as it is written: created at its first range, under its temp name.
struct Pack {
    fs: Fs,
    tmp: PathBuf,
    file: Option<File>,
    len: u64,
    /// The range of each hash already in the pack: identical bytes are kept once.
    by_sha: HashMap<String, Slice>,
}

impl Pack {
    fn out(&mut self) -> Result<&mut File> {
        if self.file.is_none() {
            let f = self.fs.create_file(&self.tmp).at("create", &self.tmp)?;
            self.file = Some(f);
        }
        match &mut self.file {
            Some(f) => Ok(f),
            None => Err(io::Error::other("the end pack is not open")).at("create", &self.tmp),
        }
    }

    /// Keeps `bytes` (hashing to `sha`) and says where.
    fn put(&mut self, sha: &str, bytes: &[u8]) -> Result<Slice> {
        if let Some(s) = self.by_sha.get(sha) {
            return Ok(*s);
        }
        self.fs.step("write").at("write", &self.tmp)?;
        let offset = self.len;
        self.out()?.write_all(bytes).at("write", &self.tmp)?;
        let s = Slice {
            offset,
            length: bytes.len() as u64,
        };
        self.len += s.length;
        self.by_sha.insert(sha.to_string(), s);
        Ok(s)
    }

    /// Keeps what `r` reads, hashing it as it goes (a file too large to hold in memory), unless
    /// it turns out to be `before_sha` or bytes already kept: then what was written is cut off
    /// again. Returns the hash and length read, and where the bytes are kept.
    fn put_stream(&mut self, r: impl Read, before_sha: Option<&str>) -> Result<(HashedCopy, Option<Slice>)> {
        self.fs.step("write").at("write", &self.tmp)?;
        let offset = self.len;
        let tmp = self.tmp.clone();
        let out = self.out()?;
        let hashed = copy_hashed(r, Some(&mut *out)).at("write", &tmp)?;
        let known = self.by_sha.get(&hashed.sha256).copied();
        if before_sha == Some(hashed.sha256.as_str()) || known.is_some() {
            let out = self.out()?;
            out.set_len(offset).at("write", &tmp)?;
            out.seek(SeekFrom::Start(offset)).at("write", &tmp)?;
            return Ok((hashed, known));
        }
        let s = Slice {
            offset,
            length: hashed.len,
        };
        self.len += s.length;
        self.by_sha.insert(hashed.sha256.clone(), s);
        Ok((hashed, Some(s)))
    }
}

/// What the turn's record says of a file before the turn: its hash and size when it existed.
struct BeforeState {
    sha256: Option<String>,
    size: Option<u64>,
}

impl CheckpointStore {
    /// Records how turn `n` left each file it touched (see the module). Called as the turn ends,
    /// before its record is rewritten; a turn whose record is not rewritten keeps no end states.
    pub(crate) fn record_ends(&mut self, n: u64) {
        if self.write_ends(n).is_err() {
            // The turn's results will say its end was not kept; nothing else depends on it.
            let _ = fs::remove_file(self.sidecar.dir.join(end_pack_tmp_rel(n)));
        }
    }

    fn write_ends(&mut self, n: u64) -> Result<()> {
        let Some(root) = self.sidecar.root.clone() else {
            return Ok(());
        };
        let Some(turn) = self.sidecar.turns.get(&n) else {
            return Ok(());
        };
        let paths: Vec<(usize, RelPath, BeforeState)> = turn
            .files
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
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
                f.path.safe().map(|p| (i, p.clone(), before))
            })
            .collect();
        if paths.is_empty() {
            return Ok(());
        }
        let path = self.sidecar.dir.join(end_pack_rel(n));
        let mut pack = Pack {
            fs: self.opts.fs.clone(),
            tmp: self.sidecar.dir.join(end_pack_tmp_rel(n)),
            file: None,
            len: 0,
            by_sha: HashMap::new(),
        };
        let mut ends = Vec::with_capacity(paths.len());
        for (i, rel, before) in paths {
            let end = self.end_of(n, &root, &rel, &before, &mut pack)?;
            ends.push((i, end));
        }
        if let Some(file) = pack.file.take() {
            // Published whenever a range was recorded, even an empty one (an empty file's).
            if !pack.by_sha.is_empty() {
                pack.fs.sync_file(&file, "sync_file").at("sync", &pack.tmp)?;
                drop(file);
                pack.fs.rename(&pack.tmp, &path).at("rename", &pack.tmp)?;
            } else {
                drop(file);
                let _ = fs::remove_file(&pack.tmp);
            }
        }
        let at = (self.opts.clock)()
            .format(&time::format_description::well_known::Rfc3339)
            .ok();
        if let Some(turn) = self.sidecar.turns.get_mut(&n) {
            for (i, end) in ends {
                if let Some(f) = turn.files.get_mut(i) {
                    f.end = Some(End {
                        at: at.clone(),
                        ..end
                    });
                }
            }
        }
        Ok(())
    }

    /// How turn `n` left `rel`, its bytes kept in `pack` unless its before-image holds them.
    fn end_of(
        &self,
        n: u64,
        root: &Path,
        rel: &RelPath,
        before: &BeforeState,
        pack: &mut Pack,
    ) -> Result<End> {
        let abs = rel.under(root);
        if standing(root, rel) != Standing::Plain {
            // A symbolic link on the way, a directory, a FIFO: nothing is read there. The end
            // says something stands at the path that is not a file Retrace can keep.
            return Ok(not_a_file());
        }
        let (mut file, meta) = match fs::symlink_metadata(&abs) {
            Err(e) if e.kind() == io::ErrorKind::NotFound || e.kind() == io::ErrorKind::NotADirectory => {
                return Ok(End {
                    image: Image::absent(),
                    size: None,
                    kept: None,
                    at: None,
                    counts: self.counts(n, rel, before, Side::Absent),
                });
            }
            Err(_) => return Ok(not_a_file()),
            Ok(m) if !m.is_file() => return Ok(not_a_file()),
            Ok(_) => match retrace_fsutil::open_regular_nofollow(&abs) {
                Err(_) => return Ok(not_a_file()),
                Ok(opened) => opened,
            },
        };
        let mode = mode_bits(&meta);
        if meta.len() > self.opts.limits.max_file_bytes {
            let hashed = copy_hashed::<_, File>(&file, None).at("read", &abs)?;
            return Ok(End {
                image: present(hashed.sha256, mode),
                size: Some(hashed.len),
                kept: None,
                at: None,
                counts: None,
            });
        }
        if meta.len() > MAX_DIFF_INPUT as u64 {
            // Too large to diff, so no counts: streamed into the pack, never held in memory.
            let (hashed, kept) = pack.put_stream(&file, before.sha256.as_deref())?;
            let unchanged = before.sha256.as_deref() == Some(hashed.sha256.as_str());
            return Ok(End {
                image: present(hashed.sha256, mode),
                size: Some(hashed.len),
                kept: if unchanged { None } else { kept },
                at: None,
                counts: unchanged.then_some((0, 0)),
            });
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
            let (hashed, kept) = pack.put_stream(&file, before.sha256.as_deref())?;
            let unchanged = before.sha256.as_deref() == Some(hashed.sha256.as_str());
            return Ok(End {
                image: present(hashed.sha256, mode),
                size: Some(hashed.len),
                kept: if unchanged { None } else { kept },
                at: None,
                counts: unchanged.then_some((0, 0)),
            });
        }
        let sha = sha256_bytes(&bytes);
        if before.sha256.as_deref() == Some(sha.as_str()) {
            // The before-image holds these bytes.
            return Ok(End {
                image: present(sha, mode),
                size: Some(bytes.len() as u64),
                kept: None,
                at: None,
                counts: Some((0, 0)),
            });
        }
        let kept = pack.put(&sha, &bytes)?;
        Ok(End {
            image: present(sha, mode),
            size: Some(bytes.len() as u64),
            kept: Some(kept),
            at: None,
            counts: self.counts(n, rel, before, Side::Bytes(&bytes)),
        })
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

fn present(sha256: String, mode: u32) -> Image {
    Image {
        existed: true,
        sha256: Some(sha256),
        mode: Some(mode),
    }
}
