//! A file's history (SPEC §5.8): every version of one path the sidecar knows, oldest first, each
//! with where its bytes are, so any of them can be restored (`plan_file_version`).
//!
//! Versions: each turn that touched the path gives its state at first touch (the before-image)
//! and as the turn left it (its end state, or for older turns the after-image of Retrace's last
//! write); each transaction that happened (restore, revert, undo, redo) with a target at the path
//! gives what was there before it when that is news (its forward image, when it differs from the
//! version before: a hand edit it replaced) and what it put there; the file on disk is the last. They are ordered by the mutation sequence: a turn
//! runs alone, so every transaction after a turn's start is after its end too.

use std::time::SystemTime;

use retrace_fsutil::RelPath;
use retrace_protocol::{HistoryVersion, VersionOrigin};

use crate::forward::ForwardAt;
use crate::model::{Before, Image, Payload, Slice};
use crate::sidecar::Sidecar;
use crate::tx::{TxImage, TxKind};

/// Where a version's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum VersionBytes {
    /// The file did not exist: restoring the version deletes it.
    Absent,
    /// Entry `index` of turn `turn`'s before-images.
    Before(u64, usize),
    /// A slice of turn `turn`'s end pack.
    End(u64, Slice),
    /// A transaction's forward image.
    Forward(ForwardAt),
    /// The file on disk now.
    Current,
    /// Not kept anywhere (why).
    Lost(String),
}

/// A version with where its bytes are.
#[derive(Debug, Clone)]
pub(crate) struct Located {
    pub(crate) version: HistoryVersion,
    pub(crate) image: Image,
    pub(crate) bytes: VersionBytes,
}

impl Sidecar {
    /// Every version of `rel`, oldest first (see the module).
    pub(crate) fn file_history(&self, rel: &RelPath) -> Vec<Located> {
        let mut events: Vec<((u64, u64, u8), Located)> = Vec::new();
        for t in self.turns.values() {
            let Some(i) = t.entry_index(rel) else { continue };
            let f = &t.files[i];
            let seq = t.start_seq.unwrap_or(0);
            let (image, size, bytes) = match &f.before {
                Before::Absent => (Image::absent(), None, VersionBytes::Absent),
                Before::Present {
                    sha256,
                    mode,
                    size,
                    payload,
                } => {
                    let bytes = match payload {
                        Payload::NotKept => {
                            VersionBytes::Lost("over the size cap: its bytes were not kept".into())
                        }
                        Payload::Expired => VersionBytes::Lost("retention expired its bytes".into()),
                        Payload::Corrupt(why) => VersionBytes::Lost(format!("its record is damaged: {why}")),
                        _ => VersionBytes::Before(t.number, i),
                    };
                    (present(sha256.clone(), *mode), *size, bytes)
                }
            };
            events.push((
                (seq, t.number, 0),
                located(
                    VersionOrigin::TurnStart,
                    Some(t.number),
                    Some(t.time.clone()),
                    image,
                    size,
                    None,
                    bytes,
                ),
            ));
            let end = match (&f.end, &f.after) {
                (Some(e), _) => {
                    let bytes = if !e.image.existed {
                        VersionBytes::Absent
                    } else if let Some(s) = e.kept {
                        VersionBytes::End(t.number, s)
                    } else if e.image.sha256.is_none() {
                        VersionBytes::Lost(
                            "at the turn's end the path held something other than a regular file: nothing was kept".into(),
                        )
                    } else {
                        match self.find(rel, e.image.sha256.as_deref()) {
                            VersionBytes::Lost(_) => VersionBytes::Lost(
                                "its bytes at the turn's end were not kept (over the size cap)".into(),
                            ),
                            found => found,
                        }
                    };
                    Some((e.image.clone(), e.size, e.at.clone(), bytes))
                }
                (None, Some(a)) => {
                    let bytes = if a.existed {
                        self.find(rel, a.sha256.as_deref())
                    } else {
                        VersionBytes::Absent
                    };
                    Some((a.clone(), None, None, bytes))
                }
                (None, None) => None,
            };
            if let Some((image, size, at, bytes)) = end {
                events.push((
                    (seq, t.number, 1),
                    located(
                        VersionOrigin::TurnEnd,
                        Some(t.number),
                        at,
                        image,
                        size,
                        None,
                        bytes,
                    ),
                ));
            }
        }
        for m in self.transactions.values().filter(|m| m.state.happened()) {
            let origin = match m.kind {
                _ if m.redoes.is_some() => VersionOrigin::Redo,
                TxKind::Restore => VersionOrigin::Restore,
                TxKind::Revert => VersionOrigin::Revert,
                TxKind::Undo => VersionOrigin::Undo,
                TxKind::Rewind => continue,
            };
            for (i, t) in m.targets.iter().enumerate() {
                if t.rel().ok().as_ref() != Some(rel) {
                    continue;
                }
                let forward = if t.forward.existed {
                    match self.forward_at(m, i) {
                        Some(at) => VersionBytes::Forward(at),
                        None => self.find(rel, t.forward.sha256.as_deref()),
                    }
                } else {
                    VersionBytes::Absent
                };
                let size = |b: &VersionBytes| match b {
                    VersionBytes::Forward(at) => at.size(),
                    _ => None,
                };
                events.push((
                    (m.seq, 0, 0),
                    located(
                        VersionOrigin::BeforeRestore,
                        m.turn,
                        Some(m.time.clone()),
                        image_of(&t.forward),
                        size(&forward),
                        Some(m.id.clone()),
                        forward,
                    ),
                ));
                let restored = if t.restore.existed {
                    self.find(rel, t.restore.sha256.as_deref())
                } else {
                    VersionBytes::Absent
                };
                events.push((
                    (m.seq, 0, 1),
                    located(
                        origin,
                        m.turn,
                        Some(m.time.clone()),
                        image_of(&t.restore),
                        None,
                        Some(m.id.clone()),
                        restored,
                    ),
                ));
            }
        }
        events.sort_by_key(|(k, _)| *k);
        let mut out: Vec<Located> = Vec::with_capacity(events.len() + 1);
        for (_, l) in events {
            // What a transaction replaced is a version only when it is news: a file changed
            // outside Retrace since the version before (a hand edit the restore overwrote).
            let repeats = out.last().is_some_and(|p: &Located| same(&p.image, &l.image));
            if l.version.origin == VersionOrigin::BeforeRestore && repeats {
                continue;
            }
            out.push(l);
        }
        if let Some(now) = self.now(rel) {
            out.push(now);
        }
        for (n, l) in out.iter_mut().enumerate() {
            l.version.version = u32::try_from(n + 1).unwrap_or(u32::MAX);
            if l.version.size.is_none() {
                l.version.size = self.size_of(&l.bytes);
            }
        }
        out
    }

    /// The file on disk now, as the last version.
    fn now(&self, rel: &RelPath) -> Option<Located> {
        let root = self.root.as_ref()?;
        let abs = rel.under(root);
        if crate::fsio::standing(root, rel) != crate::fsio::Standing::Plain {
            // Never read through a symbolic link or into a directory, FIFO or device.
            let image = Image {
                existed: true,
                sha256: None,
                mode: None,
            };
            let why = "the path holds something other than a regular file reached through real directories";
            return Some(located(
                VersionOrigin::Now,
                None,
                None,
                image,
                None,
                None,
                VersionBytes::Lost(why.into()),
            ));
        }
        let (image, size, time) = match std::fs::symlink_metadata(&abs) {
            Err(_) => (Image::absent(), None, None),
            Ok(m) if !m.is_file() => return None,
            Ok(m) => {
                let image = crate::fsio::image_of(&abs).ok()?;
                let time = m.modified().ok().and_then(rfc3339);
                (image, Some(m.len()), time)
            }
        };
        let bytes = if image.existed {
            VersionBytes::Current
        } else {
            VersionBytes::Absent
        };
        Some(located(VersionOrigin::Now, None, time, image, size, None, bytes))
    }

    /// Where bytes of `rel` hashing to `sha` are kept: a turn's before-image or end pack, or a
    /// transaction's forward image (the newest first).
    fn find(&self, rel: &RelPath, sha: Option<&str>) -> VersionBytes {
        let Some(sha) = sha else {
            return VersionBytes::Lost("its hash was not recorded".into());
        };
        for t in self.turns.values().rev() {
            let Some(i) = t.entry_index(rel) else { continue };
            let f = &t.files[i];
            if let Some(e) = &f.end {
                if let (Some(s), Some(h)) = (e.kept, e.image.sha256.as_deref()) {
                    if h == sha {
                        return VersionBytes::End(t.number, s);
                    }
                }
            }
            if let Before::Present {
                sha256: Some(h),
                payload,
                ..
            } = &f.before
            {
                if h == sha && !matches!(payload, Payload::NotKept | Payload::Expired | Payload::Corrupt(_)) {
                    return VersionBytes::Before(t.number, i);
                }
            }
        }
        for m in self.transactions.values().rev() {
            for (i, t) in m.targets.iter().enumerate() {
                if t.forward.existed
                    && t.forward.sha256.as_deref() == Some(sha)
                    && t.rel().ok().as_ref() == Some(rel)
                {
                    if let Some(at) = self.forward_at(m, i) {
                        return VersionBytes::Forward(at);
                    }
                }
            }
        }
        VersionBytes::Lost("its bytes are no longer kept".into())
    }

    fn size_of(&self, b: &VersionBytes) -> Option<u64> {
        match b {
            VersionBytes::Before(n, i) => match &self.turns.get(n)?.files.get(*i)?.before {
                Before::Present { size, .. } => *size,
                Before::Absent => None,
            },
            VersionBytes::End(_, s) => Some(s.length),
            VersionBytes::Forward(at) => at.size(),
            _ => None,
        }
    }
}

/// The same state: existence and bytes.
fn same(a: &Image, b: &Image) -> bool {
    a.existed == b.existed && a.sha256 == b.sha256
}

fn present(sha256: Option<String>, mode: Option<u32>) -> Image {
    Image {
        existed: true,
        sha256,
        mode,
    }
}

fn image_of(i: &TxImage) -> Image {
    Image::from(i)
}

fn located(
    origin: VersionOrigin,
    turn: Option<u64>,
    time: Option<String>,
    image: Image,
    size: Option<u64>,
    transaction: Option<String>,
    bytes: VersionBytes,
) -> Located {
    let (restorable, reason) = match &bytes {
        VersionBytes::Lost(why) => (false, Some(why.clone())),
        _ => (true, None),
    };
    Located {
        version: HistoryVersion {
            version: 0,
            turn,
            origin,
            time,
            sha256: image.sha256.clone(),
            size: if image.existed { size } else { None },
            existed: image.existed,
            transaction,
            restorable,
            reason,
        },
        image,
        bytes,
    }
}

fn rfc3339(t: SystemTime) -> Option<String> {
    time::OffsetDateTime::from(t)
        .format(&time::format_description::well_known::Rfc3339)
        .ok()
}
