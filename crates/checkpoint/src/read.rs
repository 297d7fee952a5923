//! Reading checkpoints back: the listing and verified before-image streams.

use std::io::{self, Cursor, Read};

use retrace_fsutil::{hex, RelPath};
use retrace_protocol::CheckpointEntry;
use sha2::{Digest, Sha256};

use crate::error::{CheckpointError, IoContext, Result};
use crate::layout::{blob_rel_path, payload_rel};
use crate::model::{encode_inline, Before, Payload, Source, Turn};
use crate::sidecar::Sidecar;

/// A file's state at the start of a turn, with its bytes as a verified stream.
pub enum BeforeImage {
    /// The file did not exist.
    Absent,
    /// The file existed.
    Present {
        /// Its permission bits, when recorded.
        mode: Option<u32>,
        /// Its SHA-256, when recorded.
        sha256: Option<String>,
        /// Its bytes. Reading fails with `InvalidData` at the end if they do not hash to `sha256`.
        reader: VerifiedReader,
    },
}

impl std::fmt::Debug for BeforeImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BeforeImage::Absent => f.write_str("Absent"),
            BeforeImage::Present { mode, sha256, .. } => f
                .debug_struct("Present")
                .field("mode", mode)
                .field("sha256", sha256)
                .finish_non_exhaustive(),
        }
    }
}

/// A reader that hashes what it yields and fails at the end when the digest is not the expected one.
pub struct VerifiedReader {
    inner: Box<dyn Read + Send>,
    hasher: Box<Sha256>,
    expected: Option<String>,
    what: String,
    finished: bool,
}

impl VerifiedReader {
    fn new(inner: Box<dyn Read + Send>, expected: Option<String>, what: String) -> VerifiedReader {
        VerifiedReader {
            inner,
            hasher: Box::new(Sha256::new()),
            expected,
            what,
            finished: false,
        }
    }

    /// The bytes without the check, for a caller that hashes them itself.
    pub(crate) fn into_unverified(self) -> Box<dyn Read + Send> {
        self.inner
    }

    /// Reads everything into memory (for small files and tests).
    pub fn read_all(mut self) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        self.read_to_end(&mut out)?;
        Ok(out)
    }
}

impl Read for VerifiedReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.finished {
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        if n > 0 {
            self.hasher.update(&buf[..n]);
            return Ok(n);
        }
        self.finished = true;
        let got = hex(&std::mem::take(&mut *self.hasher).finalize());
        match &self.expected {
            Some(want) if *want != got => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: the bytes hash to {got}, the record says {want}", self.what),
            )),
            _ => Ok(0),
        }
    }
}

impl Sidecar {
    /// The checkpoint list (SPEC §7) as this store alone can tell it: the session-dependent fields
    /// (`visible`, `can_restore_conversation`) are left null for the controller to fill.
    pub(crate) fn list(&self) -> Vec<CheckpointEntry> {
        self.turns.values().map(|t| self.entry_of(t)).collect()
    }

    fn entry_of(&self, t: &Turn) -> CheckpointEntry {
        let (can_code, reason) = self.code_restore_offered(t);
        let counts = turn_counts(t);
        CheckpointEntry {
            turn: t.number,
            time: t.time.clone(),
            prompt: t.prompt.clone(),
            head: t.head.clone(),
            message_id: t.message_id.clone(),
            msg_index: t.msg_index,
            paths: t.files.iter().map(|f| f.path.display()).collect(),
            file_count: t.files.len(),
            bytes: self.turn_payload_bytes(t),
            coverage: t.coverage(),
            gaps: t.gaps.clone(),
            can_restore_code: Some(can_code),
            can_restore_conversation: None,
            disabled_reason: reason,
            visible: None,
            added: counts.map(|c| c.0),
            removed: counts.map(|c| c.1),
            actions: Vec::new(),
        }
    }

    /// Whether a code restore to `t` can be offered, and why not.
    pub(crate) fn code_restore_offered(&self, t: &Turn) -> (bool, Option<String>) {
        if t.source == Source::MarkerOnly {
            return (
                false,
                Some(format!("the checkpoint record {} cannot be read", t.record_path)),
            );
        }
        // `>=`: a turn still listed at the number retention reached is one whose deletion a crash
        // interrupted (its marker outlived its directory), so its own history is gone too.
        if self.state.pruned_through.is_some_and(|p| p >= t.number) {
            return (false, Some("history after this turn was pruned".into()));
        }
        if let Some((_, why)) = self.log_unknown.iter().find(|(below, _)| t.number < *below) {
            return (false, Some(why.clone()));
        }
        (true, None)
    }

    fn turn_payload_bytes(&self, t: &Turn) -> u64 {
        t.files
            .iter()
            .map(|f| match &f.before {
                Before::Present {
                    payload: Payload::Blob(h),
                    size: None,
                    ..
                } => std::fs::metadata(self.dir.join(blob_rel_path(h)))
                    .map(|m| m.len())
                    .unwrap_or(0),
                Before::Present {
                    payload: Payload::File(idx),
                    size: None,
                    ..
                } => {
                    let p = self.dir.join(payload_rel(t.number, *idx));
                    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
                }
                _ => f.payload_bytes(),
            })
            .sum()
    }

    /// The before-image of `path` in `turn`, its bytes as a stream verified against the recorded
    /// SHA-256 (blobs also against their name).
    pub(crate) fn before_image(&self, turn: u64, path: &RelPath) -> Result<BeforeImage> {
        let t = self.turns.get(&turn).ok_or(CheckpointError::UnknownTurn(turn))?;
        let i = t.entry_index(path).ok_or_else(|| CheckpointError::UnknownFile {
            turn,
            path: path.to_lossy(),
        })?;
        let missing = |why: &str| CheckpointError::MissingPayload {
            turn,
            path: path.to_lossy(),
            why: why.into(),
        };
        let (sha256, mode, payload) = match &t.files[i].before {
            Before::Absent => return Ok(BeforeImage::Absent),
            Before::Present {
                sha256,
                mode,
                payload,
                ..
            } => (sha256.clone(), *mode, payload),
        };
        let what = format!("before-image of `{path}` in turn {turn}");
        let reader: Box<dyn Read + Send> = match payload {
            Payload::File(idx) => {
                let p = self.dir.join(payload_rel(turn, *idx));
                Box::new(retrace_fsutil::open_regular(&p).at("open", &p)?.0)
            }
            Payload::Log(s) => {
                let at = self.log_slice(t, *s);
                let (f, _) = retrace_fsutil::open_regular(at.path()).at("open", at.path())?;
                let mut f = f;
                std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(s.offset)).at("read", at.path())?;
                Box::new(std::io::Read::take(f, s.length))
            }
            Payload::Inline { text, encoding } => {
                let bytes = encode_inline(text, encoding.as_deref()).ok_or_else(|| {
                    missing("its text cannot be re-encoded exactly with the recorded encoding")
                })?;
                Box::new(Cursor::new(bytes))
            }
            Payload::Blob(h) => {
                if sha256.as_deref().is_some_and(|s| s != h) {
                    return Err(missing("its blob reference does not match its SHA-256"));
                }
                let p = self.dir.join(blob_rel_path(h));
                let (f, _) = retrace_fsutil::open_regular(&p).at("open", &p)?;
                return Ok(BeforeImage::Present {
                    mode,
                    sha256: Some(h.clone()),
                    reader: VerifiedReader::new(Box::new(f), Some(h.clone()), what),
                });
            }
            Payload::NotKept => {
                return Err(missing("the file was over the size cap, its bytes were not kept"))
            }
            Payload::Expired => return Err(missing("retention expired the payload")),
            Payload::Corrupt(why) => {
                return Err(CheckpointError::Corrupt {
                    path: self.dir.join(&t.record_path),
                    detail: format!("the entry of `{path}`: {why}"),
                })
            }
        };
        Ok(BeforeImage::Present {
            mode,
            sha256: sha256.clone(),
            reader: VerifiedReader::new(reader, sha256, what),
        })
    }
}

/// A turn's +/− over the files it changed, from the counts its end recorded; a file deleted and
/// another created with its bytes is a move, which counts nothing (as its results show it).
/// `None` when the turn recorded no end.
fn turn_counts(t: &Turn) -> Option<(u64, u64)> {
    use crate::model::Before;
    if t.files.iter().all(|f| f.end.is_none()) {
        return None;
    }
    let mut moved_to: Vec<usize> = Vec::new();
    let mut moved_from: Vec<usize> = Vec::new();
    for (i, f) in t.files.iter().enumerate() {
        let (
            Before::Present {
                sha256: Some(sha), ..
            },
            Some(e),
        ) = (&f.before, &f.end)
        else {
            continue;
        };
        if e.image.existed {
            continue;
        }
        let dest = t.files.iter().enumerate().position(|(j, g)| {
            !moved_to.contains(&j)
                && g.before == Before::Absent
                && g.end.as_ref().and_then(|e| e.image.sha256.as_deref()) == Some(sha.as_str())
        });
        if let Some(j) = dest {
            moved_to.push(j);
            moved_from.push(i);
        }
    }
    let (mut added, mut removed) = (0, 0);
    for (i, f) in t.files.iter().enumerate() {
        if moved_to.contains(&i) || moved_from.contains(&i) {
            continue;
        }
        if let Some((a, r)) = f.end.as_ref().and_then(|e| e.counts) {
            added += a;
            removed += r;
        }
    }
    Some((added, removed))
}

impl Sidecar {
    /// Where a slice of log turn `t`'s segment is, as a pack slice (read and verified as one).
    pub(crate) fn log_slice(
        &self,
        t: &crate::model::Turn,
        s: crate::model::Slice,
    ) -> crate::forward::ForwardAt {
        crate::forward::ForwardAt::Pack {
            path: self.dir.join(&t.record_path),
            slice: crate::tx::PackSlice {
                offset: s.offset,
                length: s.length,
            },
        }
    }

    /// The file holding turn `t`'s end states: its segment for a log turn, else
    /// `turns/N/end.pack`.
    pub(crate) fn end_store(&self, t: &crate::model::Turn) -> std::path::PathBuf {
        match t.source {
            crate::model::Source::Log => self.dir.join(&t.record_path),
            _ => self.dir.join(crate::layout::end_pack_rel(t.number)),
        }
    }
}
