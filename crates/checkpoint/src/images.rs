//! The image a restore puts back at each path, and where its bytes are: a turn entry's
//! before-image (its payload checked), a legacy rename's destination, or a transaction's forward
//! image; and a stream of those bytes.

use std::io::{self, Read};

use retrace_fsutil::{sha256_bytes, RelPath};

use crate::error::{CheckpointError, IoContext, Result};
use crate::forward::ForwardAt;
use crate::fsio::{standing, unsafe_to_write, Standing};
use crate::layout::{blob_rel_path, payload_rel};
use crate::memo::HashMemo;
use crate::model::{encode_inline, Before, EntryPath, Format, Image, Payload, Source as TurnSource, Turn};
use crate::read::BeforeImage;
use crate::sidecar::Sidecar;
use crate::tx::Manifest;

/// Where the bytes of a restore image come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ImageSource {
    /// Entry `index` of a turn's record.
    Turn(u64, usize),
    /// A transaction's forward image.
    Forward(ForwardAt),
    /// A workspace file's current bytes: where a legacy rename moved them (`moved_to`).
    Workspace(RelPath),
    /// Nothing to read: the image is "did not exist".
    None,
}

/// The state a path is restored to, and where its bytes are.
#[derive(Debug, Clone)]
pub(crate) struct TargetImage {
    pub(crate) image: Image,
    pub(crate) size: Option<u64>,
    pub(crate) source: ImageSource,
    /// From a v1 record: no proof can exist.
    pub(crate) legacy: bool,
    /// Why the bytes cannot be had, when they cannot.
    pub(crate) unusable: Option<String>,
}

impl Sidecar {
    /// The restore image of entry `i` of `turn`, with its payload checked. A payload the record
    /// names in a way that is never followed (a corrupt entry) is unusable: `missing_payload`,
    /// naming the record (SPEC §5.2 rule 3).
    pub(crate) fn turn_image(&self, turn: &Turn, i: usize, memo: &mut HashMemo) -> Result<TargetImage> {
        let f = &turn.files[i];
        let legacy = turn.format == Format::V1 && turn.source != TurnSource::V3;
        if let Some(dest) = &f.moved_to {
            return Ok(self.moved_image(dest, memo));
        }
        Ok(match &f.before {
            Before::Absent => TargetImage {
                image: Image {
                    existed: false,
                    sha256: None,
                    mode: None,
                },
                size: None,
                source: ImageSource::None,
                legacy,
                unusable: None,
            },
            Before::Present {
                sha256,
                mode,
                size,
                payload,
            } => {
                let mut sha = sha256.clone();
                let mut size = *size;
                let unusable = match payload {
                    Payload::NotKept => Some("over the size cap: bytes not kept".to_string()),
                    Payload::Expired => Some("expired by retention".to_string()),
                    Payload::Inline { text, encoding } => match encode_inline(text, encoding.as_deref()) {
                        None => Some("cannot be re-encoded".into()),
                        Some(b) => {
                            let got = sha256_bytes(&b);
                            size = Some(b.len() as u64);
                            match &sha {
                                Some(want) if *want != got => {
                                    Some("inline content does not match its SHA-256".into())
                                }
                                _ => {
                                    sha = Some(got);
                                    None
                                }
                            }
                        }
                    },
                    Payload::File(idx) => {
                        let p = self.dir.join(payload_rel(turn.number, *idx));
                        memo.verify_file(&p, sha.as_deref())
                    }
                    Payload::Log(s) => match sha.as_deref() {
                        Some(want) => memo.verify_forward(&self.log_slice(turn, *s), want),
                        None => Some("its before-image has no SHA-256 in the log".into()),
                    },
                    Payload::Blob(h) => memo.verify_file(&self.dir.join(blob_rel_path(h)), Some(h)),
                    Payload::Corrupt(why) => {
                        Some(format!("the record {} is corrupt: {why}", turn.record_path))
                    }
                };
                TargetImage {
                    image: Image {
                        existed: true,
                        sha256: sha,
                        mode: *mode,
                    },
                    size,
                    source: ImageSource::Turn(turn.number, i),
                    legacy,
                    unusable,
                }
            }
        })
    }

    /// The restore image of a legacy rename's source: the bytes its destination holds now (a
    /// plain file reached through real directories), else unusable (nothing is written or deleted).
    fn moved_image(&self, dest: &EntryPath, memo: &mut HashMemo) -> TargetImage {
        let unusable = |why: String| TargetImage {
            image: Image {
                existed: true,
                sha256: None,
                mode: None,
            },
            size: None,
            source: ImageSource::None,
            legacy: true,
            unusable: Some(why),
        };
        let (Some(root), EntryPath::Safe(d)) = (self.root.as_deref(), dest) else {
            return unusable(format!(
                "its bytes were moved to `{}`, outside the workspace",
                dest.display()
            ));
        };
        if standing(root, d) != Standing::Plain {
            return unusable(format!(
                "its bytes were moved to `{}`, which is not a plain file now",
                d.to_lossy()
            ));
        }
        match memo.image_of(&d.under(root)) {
            Ok(img) if img.existed => TargetImage {
                size: std::fs::metadata(d.under(root)).ok().map(|m| m.len()),
                image: img,
                source: ImageSource::Workspace(d.clone()),
                legacy: true,
                unusable: None,
            },
            Ok(_) => unusable(format!(
                "its bytes were moved to `{}`, which is gone",
                d.to_lossy()
            )),
            Err(e) => unusable(format!(
                "its bytes were moved to `{}`, which cannot be read: {e}",
                d.to_lossy()
            )),
        }
    }

    /// Target `i`'s forward image (of transaction `m`) as a restore image, its bytes checked.
    pub(crate) fn forward_image(&self, m: &Manifest, i: usize, memo: &mut HashMemo) -> TargetImage {
        let (Some(t), Some(at)) = (m.targets.get(i), self.forward_at(m, i)) else {
            return TargetImage {
                image: Image::absent(),
                size: None,
                source: ImageSource::None,
                legacy: false,
                unusable: None,
            };
        };
        let sha = t.forward.sha256.clone().unwrap_or_default();
        TargetImage {
            image: (&t.forward).into(),
            size: at.size(),
            unusable: memo.verify_forward(&at, &sha),
            source: ImageSource::Forward(at),
            legacy: false,
        }
    }

    /// A stream of a restore image's bytes, not verified: the caller hashes what it reads and
    /// compares it with the image's SHA-256 (the commit while it copies them, a diff after).
    pub(crate) fn open_image(&self, img: &TargetImage) -> Result<Box<dyn Read>> {
        match &img.source {
            ImageSource::Turn(n, i) => {
                let turn = self.turns.get(n).ok_or(CheckpointError::UnknownTurn(*n))?;
                let rel = turn
                    .files
                    .get(*i)
                    .and_then(|f| f.path.safe().cloned())
                    .ok_or_else(|| CheckpointError::MissingPayload {
                        turn: *n,
                        path: String::new(),
                        why: "no such entry".into(),
                    })?;
                self.open_turn_image(*n, &rel, img)
            }
            ImageSource::Forward(at) => Ok(at.open().at("open", at.path())?),
            ImageSource::Workspace(rel) => {
                let root = self.root.clone().ok_or(CheckpointError::NoTurn)?;
                if unsafe_to_write(&root, rel) {
                    return Err(CheckpointError::ExternalChange { path: rel.to_lossy() });
                }
                let abs = rel.under(&root);
                let (f, _) = retrace_fsutil::open_regular(&abs)
                    .map_err(|_| CheckpointError::ExternalChange { path: rel.to_lossy() })?;
                Ok(Box::new(f))
            }
            ImageSource::None => Ok(Box::new(io::empty())),
        }
    }

    fn open_turn_image(&self, n: u64, rel: &RelPath, img: &TargetImage) -> Result<Box<dyn Read>> {
        match self.before_image(n, rel)? {
            BeforeImage::Present { reader, sha256, .. } => {
                if sha256.is_some() && sha256 != img.image.sha256 {
                    return Err(CheckpointError::MissingPayload {
                        turn: n,
                        path: rel.to_lossy(),
                        why: "digest mismatch".into(),
                    });
                }
                // `write_temps` hashes what it copies and compares it with the restore image.
                Ok(reader.into_unverified())
            }
            BeforeImage::Absent => Ok(Box::new(io::empty())),
        }
    }
}
