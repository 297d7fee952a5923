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
//! before-image (when both are text), so the listing can show a turn's +/− without diffing.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Read, Write};

use retrace_diff::{diff_sides, Side};
use retrace_fsutil::{copy_hashed, sha256_bytes, RelPath};

use crate::error::{IoContext, Result};
use crate::fsio::{mode_bits, standing, Standing};
use crate::layout::{end_pack_rel, end_pack_tmp_rel};
use crate::model::{Before, End, Image, Slice};
use crate::read::BeforeImage;
use crate::store::CheckpointStore;

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
        let paths: Vec<(usize, RelPath, Option<String>)> = turn
            .files
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                let before_sha = match &f.before {
                    Before::Present { sha256, .. } => sha256.clone(),
                    Before::Absent => None,
                };
                f.path.safe().map(|p| (i, p.clone(), before_sha))
            })
            .collect();
        if paths.is_empty() {
            return Ok(());
        }
        let fs_ = self.opts.fs.clone();
        let tmp = self.sidecar.dir.join(end_pack_tmp_rel(n));
        let path = self.sidecar.dir.join(end_pack_rel(n));
        let mut pack: Option<(File, u64, HashMap<String, Slice>)> = None;
        let mut ends = Vec::with_capacity(paths.len());
        for (i, rel, before_sha) in paths {
            let abs = rel.under(&root);
            if standing(&root, &rel) != Standing::Plain {
                // A symbolic link on the way, a directory, a FIFO: nothing is read there. The end
                // says something stands at the path that is not a file Retrace can keep.
                ends.push((i, Some(not_a_file())));
                continue;
            }
            let end = match fs::symlink_metadata(&abs) {
                Err(e) if e.kind() == io::ErrorKind::NotFound || e.kind() == io::ErrorKind::NotADirectory => {
                    let counts = self.counts(n, &rel, Some(&[]), true);
                    Some(End {
                        image: Image::absent(),
                        size: None,
                        kept: None,
                        at: None,
                        counts,
                    })
                }
                Err(_) => Some(not_a_file()),
                Ok(m) if !m.is_file() => Some(not_a_file()),
                Ok(_) => match retrace_fsutil::open_regular_nofollow(&abs) {
                    Err(_) => Some(not_a_file()),
                    Ok((file, meta)) if meta.len() > self.opts.limits.max_file_bytes => {
                        let hashed = copy_hashed::<_, File>(&file, None).at("read", &abs)?;
                        Some(End {
                            image: present(hashed.sha256, mode_bits(&meta)),
                            size: Some(hashed.len),
                            kept: None,
                            at: None,
                            counts: None,
                        })
                    }
                    Ok((mut file, meta)) => {
                        let mut bytes = Vec::with_capacity(meta.len() as usize);
                        file.read_to_end(&mut bytes).at("read", &abs)?;
                        let sha = sha256_bytes(&bytes);
                        let unchanged = before_sha.as_deref() == Some(sha.as_str());
                        let kept = if unchanged {
                            // The before-image holds these bytes.
                            None
                        } else {
                            let (out, len, by_sha) = match &mut pack {
                                Some(p) => p,
                                None => {
                                    let f = fs_.create_file(&tmp).at("create", &tmp)?;
                                    pack.insert((f, 0, HashMap::new()))
                                }
                            };
                            match by_sha.get(&sha) {
                                Some(s) => Some(*s),
                                None => {
                                    fs_.step("write").at("write", &tmp)?;
                                    out.write_all(&bytes).at("write", &tmp)?;
                                    let s = Slice {
                                        offset: *len,
                                        length: bytes.len() as u64,
                                    };
                                    *len += s.length;
                                    by_sha.insert(sha.clone(), s);
                                    Some(s)
                                }
                            }
                        };
                        let counts = if unchanged {
                            Some((0, 0))
                        } else {
                            self.counts(n, &rel, Some(&bytes), false)
                        };
                        Some(End {
                            image: present(sha, mode_bits(&meta)),
                            size: Some(bytes.len() as u64),
                            kept,
                            at: None,
                            counts,
                        })
                    }
                },
            };
            ends.push((i, end));
        }
        if let Some((file, _, by_sha)) = pack {
            // Published whenever a range was recorded, even an empty one (an empty file's).
            if !by_sha.is_empty() {
                fs_.sync_file(&file, "sync_file").at("sync", &tmp)?;
                drop(file);
                fs_.rename(&tmp, &path).at("rename", &tmp)?;
            } else {
                drop(file);
                let _ = fs::remove_file(&tmp);
            }
        }
        let at = (self.opts.clock)()
            .format(&time::format_description::well_known::Rfc3339)
            .ok();
        if let Some(turn) = self.sidecar.turns.get_mut(&n) {
            for (i, end) in ends {
                if let Some(f) = turn.files.get_mut(i) {
                    f.end = end.map(|e| End { at: at.clone(), ..e });
                }
            }
        }
        Ok(())
    }

    /// Lines added and removed from `rel`'s before-image in turn `n` to `end` (`absent`: the file
    /// is gone), when both are text of at most the diffed size; `None` otherwise.
    fn counts(&self, n: u64, rel: &RelPath, end: Option<&[u8]>, absent: bool) -> Option<(u64, u64)> {
        let before = match self.sidecar.before_image(n, rel).ok()? {
            BeforeImage::Absent => None,
            BeforeImage::Present { reader, .. } => Some(reader.read_all().ok()?),
        };
        let old = match &before {
            Some(b) => Side::Bytes(b),
            None => Side::Absent,
        };
        let new = match (absent, end) {
            (true, _) => Side::Absent,
            (false, Some(b)) => Side::Bytes(b),
            (false, None) => return None,
        };
        let d = diff_sides(old, new, 0)?;
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
