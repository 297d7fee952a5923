//! A turn's results (SPEC §5.7): each file the turn changed, from its before-image to the state the
//! turn left it in, diffed once here for every frontend.
//!
//! The end state's bytes come from the turn's end pack (`end.rs`); a file the turn left as its
//! before-image needs none. Turns recorded before end packs existed know their end only by the
//! hash of Retrace's last write (the after-image): its bytes are then looked for, verified by hash,
//! wherever the sidecar or the workspace still holds them (a later turn's before-image or end pack,
//! the file on disk). Bytes that cannot be had make the file `unknown`, with the reason: never a
//! guessed diff.

use std::io::{Read, Seek, SeekFrom};

use retrace_diff::{diff_sides, Side, MAX_DIFF_INPUT};
use retrace_fsutil::{hex, RelPath};
use retrace_protocol::{ChangeAction, FileVersion, TurnFile, RESULTS_DIFF_CAP};
use sha2::{Digest, Sha256};

use crate::error::{CheckpointError, Result};
use crate::layout::end_pack_rel;
use crate::model::{Before, End, FileEntry, Image, Payload, Slice};
use crate::read::BeforeImage;
use crate::sidecar::Sidecar;

/// How a turn left one file: its image, its size when known, and where its bytes are.
struct EndState {
    image: Image,
    size: Option<u64>,
    bytes: EndBytes,
}

/// Where the bytes of a file's end state are.
enum EndBytes {
    /// It did not exist.
    Absent,
    /// In the turn's end pack.
    Pack(Slice),
    /// The same as its before-image.
    Before,
    /// To be found by hash (a turn recorded before end packs).
    Find,
    /// Not kept (over the size cap, or not a regular file).
    NotKept,
}

impl Sidecar {
    /// The files turn `n` changed, with their diffs (see the module).
    pub(crate) fn turn_files(&self, n: u64) -> Result<Vec<TurnFile>> {
        let t = self.turns.get(&n).ok_or(CheckpointError::UnknownTurn(n))?;
        let mut out = Vec::new();
        for f in &t.files {
            let Some(path) = f.path.safe() else { continue };
            let before = before_version(&f.before);
            let Some(end) = end_of(f) else { continue };
            if same_state(&f.before, &end.image) {
                continue;
            }
            let after = end.image.existed.then(|| FileVersion {
                sha256: end.image.sha256.clone(),
                size: end.size,
                mode: end.image.mode,
            });
            let action = match (&before, &after) {
                (None, Some(_)) => ChangeAction::Create,
                (Some(_), None) => ChangeAction::Delete,
                _ => ChangeAction::Modify,
            };
            let mut file = TurnFile {
                path: path.to_lossy(),
                action,
                from: None,
                diff: String::new(),
                added: 0,
                removed: 0,
                binary: false,
                diff_truncated: false,
                before,
                after,
                unknown: None,
            };
            self.fill_diff(n, path, f, &end, &mut file);
            out.push(file);
        }
        pair_moves(&mut out);
        Ok(out)
    }

    /// Sets `file`'s diff and counts, or why they cannot be had.
    fn fill_diff(&self, n: u64, path: &RelPath, f: &FileEntry, end: &EndState, file: &mut TurnFile) {
        let too_large = |v: &Option<FileVersion>| {
            v.as_ref()
                .and_then(|v| v.size)
                .is_some_and(|s| s > MAX_DIFF_INPUT as u64)
        };
        if too_large(&file.before) || too_large(&file.after) {
            file.binary = true;
            return;
        }
        let old = match self.before_bytes(n, path, f) {
            Ok(b) => b,
            Err(why) => {
                file.unknown = Some(why);
                return;
            }
        };
        let new = match end.bytes {
            EndBytes::Absent => None,
            EndBytes::Before => old.clone(),
            EndBytes::Pack(s) => match self.pack_bytes(n, s, end.image.sha256.as_deref()) {
                Ok(b) => Some(b),
                Err(why) => {
                    file.unknown = Some(why);
                    return;
                }
            },
            EndBytes::NotKept => {
                file.binary = end.size.is_some_and(|s| s > MAX_DIFF_INPUT as u64);
                if !file.binary {
                    file.unknown = Some(
                        "at the turn's end the path held something other than a regular file Retrace could read (a directory, a symbolic link, a FIFO): nothing was kept".into(),
                    );
                }
                return;
            }
            EndBytes::Find => match end
                .image
                .sha256
                .as_deref()
                .and_then(|sha| self.find_bytes(n, path, sha))
            {
                Some(b) => Some(b),
                None => {
                    file.unknown = Some(
                        "its bytes at the turn's end were not recorded (the turn predates turn results, or was cut short) and the file has changed since".into(),
                    );
                    return;
                }
            },
        };
        let old_s = old.as_deref().map_or(Side::Absent, Side::Bytes);
        let new_s = new.as_deref().map_or(Side::Absent, Side::Bytes);
        match diff_sides(old_s, new_s, RESULTS_DIFF_CAP) {
            Some(d) => {
                file.diff = d.text;
                file.added = d.added;
                file.removed = d.removed;
                file.diff_truncated = d.truncated;
            }
            None => file.binary = true,
        }
    }

    /// The before-image's bytes (`None`: the file did not exist), or why they cannot be had.
    fn before_bytes(
        &self,
        n: u64,
        path: &RelPath,
        f: &FileEntry,
    ) -> std::result::Result<Option<Vec<u8>>, String> {
        if let Before::Present {
            payload: Payload::NotKept,
            ..
        } = &f.before
        {
            return Err("its before-image was over the size cap and not kept".into());
        }
        match self.before_image(n, path) {
            Ok(BeforeImage::Absent) => Ok(None),
            Ok(BeforeImage::Present { reader, .. }) => reader.read_all().map(Some).map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        }
    }

    /// The bytes of `slice` in turn `n`'s end pack, which must hash to `sha`.
    fn pack_bytes(&self, n: u64, slice: Slice, sha: Option<&str>) -> std::result::Result<Vec<u8>, String> {
        let path = match self.turns.get(&n) {
            Some(t) => self.end_store(t),
            None => self.dir.join(end_pack_rel(n)),
        };
        let read = || -> std::io::Result<Vec<u8>> {
            let (mut f, meta) = retrace_fsutil::open_regular_nofollow(&path)?;
            if slice.offset.saturating_add(slice.length) > meta.len() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the pack ends inside it",
                ));
            }
            f.seek(SeekFrom::Start(slice.offset))?;
            let mut buf = Vec::with_capacity(slice.length as usize);
            f.take(slice.length).read_to_end(&mut buf)?;
            Ok(buf)
        };
        let bytes = read().map_err(|e| {
            format!(
                "its bytes at the turn's end cannot be read from `{}`: {e}",
                path.display()
            )
        })?;
        if sha.is_some_and(|s| hex(&Sha256::digest(&bytes)) != s) {
            return Err(format!(
                "its bytes at the turn's end in `{}` are damaged (their SHA-256 differs)",
                path.display()
            ));
        }
        Ok(bytes)
    }

    /// Bytes of `path` hashing to `sha` that something after turn `n` still holds: a later turn's
    /// before-image or end pack, or the file on disk.
    fn find_bytes(&self, n: u64, path: &RelPath, sha: &str) -> Option<Vec<u8>> {
        let verified = |b: Vec<u8>| (hex(&Sha256::digest(&b)) == sha).then_some(b);
        for (&m, t) in self.turns.range(n + 1..) {
            let Some(i) = t.entry_index(path) else { continue };
            let f = &t.files[i];
            if let Before::Present { sha256: Some(s), .. } = &f.before {
                if s == sha {
                    if let Ok(BeforeImage::Present { reader, .. }) = self.before_image(m, path) {
                        if let Some(b) = reader.read_all().ok().and_then(verified) {
                            return Some(b);
                        }
                    }
                }
            }
            if let Some(End {
                image, kept: Some(s), ..
            }) = &f.end
            {
                if image.sha256.as_deref() == Some(sha) {
                    if let Ok(b) = self.pack_bytes(m, *s, Some(sha)) {
                        return Some(b);
                    }
                }
            }
        }
        let root = self.root.as_ref()?;
        if crate::fsio::standing(root, path) != crate::fsio::Standing::Plain {
            return None;
        }
        let (mut file, meta) = retrace_fsutil::open_regular_nofollow(&path.under(root)).ok()?;
        if meta.len() > MAX_DIFF_INPUT as u64 {
            return None;
        }
        let mut buf = Vec::new();
        file.read_to_end(&mut buf).ok()?;
        verified(buf)
    }
}

/// The end state of an entry, with where its bytes are; `None` when the turn never changed it as
/// far as the record knows (no end and no after-image).
fn end_of(f: &FileEntry) -> Option<EndState> {
    let before_sha = match &f.before {
        Before::Present { sha256, .. } => sha256.as_deref(),
        Before::Absent => None,
    };
    if let Some(e) = &f.end {
        let where_ = if !e.image.existed {
            EndBytes::Absent
        } else if let Some(s) = e.kept {
            EndBytes::Pack(s)
        } else if e.image.sha256.is_some() && e.image.sha256.as_deref() == before_sha {
            EndBytes::Before
        } else {
            EndBytes::NotKept
        };
        return Some(EndState {
            image: e.image.clone(),
            size: e.size,
            bytes: where_,
        });
    }
    let a = f.after.as_ref()?;
    let where_ = if !a.existed {
        EndBytes::Absent
    } else if a.sha256.is_some() && a.sha256.as_deref() == before_sha {
        EndBytes::Before
    } else {
        EndBytes::Find
    };
    Some(EndState {
        image: a.clone(),
        size: None,
        bytes: where_,
    })
}

fn before_version(b: &Before) -> Option<FileVersion> {
    match b {
        Before::Absent => None,
        Before::Present {
            sha256, mode, size, ..
        } => Some(FileVersion {
            sha256: sha256.clone(),
            size: *size,
            mode: *mode,
        }),
    }
}

/// Whether the end state is the before state (existence, hash, mode).
fn same_state(before: &Before, end: &Image) -> bool {
    match before {
        Before::Absent => !end.existed,
        Before::Present { sha256, mode, .. } => {
            end.existed
                && sha256.is_some()
                && *sha256 == end.sha256
                && (mode.is_none() || end.mode.is_none() || *mode == end.mode)
        }
    }
}

/// A deleted file whose bytes a created one holds exactly was moved: one `move` entry (at the
/// destination's place) instead of the two.
fn pair_moves(files: &mut Vec<TurnFile>) {
    let mut i = 0;
    while i < files.len() {
        if files[i].action == ChangeAction::Delete {
            let sha = files[i].before.as_ref().and_then(|v| v.sha256.clone());
            let dest = files.iter().position(|c| {
                c.action == ChangeAction::Create
                    && c.unknown.is_none()
                    && sha.is_some()
                    && c.after.as_ref().and_then(|v| v.sha256.clone()) == sha
            });
            if let Some(d) = dest {
                let from = files[i].path.clone();
                let before = files[i].before.clone();
                let c = &mut files[d];
                c.action = ChangeAction::Move;
                c.from = Some(from);
                c.before = before;
                c.diff.clear();
                c.added = 0;
                c.removed = 0;
                c.binary = false;
                c.diff_truncated = false;
                files.remove(i);
                continue;
            }
        }
        i += 1;
    }
}
