//! `state.json`: the mutation sequence and Retrace's last write per path (the ownership proof).

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine;
use retrace_fsutil::RelPath;
use serde::{Deserialize, Serialize};

use crate::error::{CheckpointError, Result};
#[cfg(test)]
use crate::layout::STATE_FILE;
use crate::model::Image;
use crate::record::read_bounded;

/// Retrace's last write to one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owned {
    /// Existence, SHA-256 and mode Retrace left there.
    pub image: Image,
    /// The mutation sequence of that write.
    pub seq: u64,
}

/// The loaded `state.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreState {
    /// The last mutation sequence handed out.
    pub mutation_seq: u64,
    /// Retrace's last write per path.
    pub owned: BTreeMap<RelPath, Owned>,
    /// The largest turn number retention has deleted, if any.
    pub pruned_through: Option<u64>,
    /// The log's segments (their names) as of the last write: one listed here that is gone was
    /// lost, not removed by retention (FORMATS.md §19.5).
    pub log_segments: Vec<u64>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawState {
    #[serde(default)]
    mutation_seq: u64,
    #[serde(default)]
    owned: BTreeMap<String, RawOwned>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pruned_through: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    log_segments: Vec<u64>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawOwned {
    existed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mode: Option<u32>,
    #[serde(default)]
    seq: u64,
}

/// Keys of non-UTF-8 names: a NUL (which no real path holds) followed by the base64 of the bytes.
const RAW_KEY_PREFIX: char = '\0';

fn key_of(p: &RelPath) -> String {
    match p.to_str() {
        Some(s) => s.to_string(),
        None => format!(
            "{RAW_KEY_PREFIX}{}",
            base64::engine::general_purpose::STANDARD.encode(p.as_bytes())
        ),
    }
}

fn path_of(key: &str) -> Option<RelPath> {
    match key.strip_prefix(RAW_KEY_PREFIX) {
        Some(b64) => {
            let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
            RelPath::from_stored(&bytes).ok()
        }
        None => RelPath::from_stored(key.as_bytes()).ok(),
    }
}

impl StoreState {
    /// Reads `state.json`; a missing file is the empty state. Entries with unusable paths are
    /// dropped (they prove nothing) and reported by name.
    pub fn load(path: &Path) -> Result<(StoreState, Vec<String>)> {
        if !path.exists() {
            return Ok((StoreState::default(), Vec::new()));
        }
        let bytes = read_bounded(path)?;
        let raw: RawState = serde_json::from_slice(&bytes).map_err(|e| CheckpointError::Corrupt {
            path: path.into(),
            detail: format!("not a valid state file: {e}"),
        })?;
        let mut dropped = Vec::new();
        let mut owned = BTreeMap::new();
        for (k, v) in raw.owned {
            match path_of(&k) {
                Some(p) => {
                    let image = Image {
                        existed: v.existed,
                        sha256: if v.existed { v.sha256 } else { None },
                        mode: if v.existed { v.mode } else { None },
                    };
                    owned.insert(p, Owned { image, seq: v.seq });
                }
                None => dropped.push(k.replace('\0', "\\0")),
            }
        }
        Ok((
            StoreState {
                mutation_seq: raw.mutation_seq,
                owned,
                pruned_through: raw.pruned_through,
                log_segments: raw.log_segments,
            },
            dropped,
        ))
    }

    /// The bytes of `state.json`.
    pub fn to_json(&self) -> Vec<u8> {
        let raw = RawState {
            mutation_seq: self.mutation_seq,
            owned: self
                .owned
                .iter()
                .map(|(p, o)| {
                    (
                        key_of(p),
                        RawOwned {
                            existed: o.image.existed,
                            sha256: o.image.sha256.clone(),
                            mode: o.image.mode,
                            seq: o.seq,
                        },
                    )
                })
                .collect(),
            pruned_through: self.pruned_through,
            log_segments: self.log_segments.clone(),
        };
        serde_json::to_vec_pretty(&raw).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_non_utf8_keys() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(STATE_FILE);
        let mut st = StoreState {
            mutation_seq: 7,
            ..StoreState::default()
        };
        let name = RelPath::from_stored(b"caf\xe9/x").unwrap();
        let img = Image {
            existed: true,
            sha256: Some("ab".repeat(32)),
            mode: Some(0o644),
        };
        st.owned.insert(
            name.clone(),
            Owned {
                image: img.clone(),
                seq: 7,
            },
        );
        std::fs::write(&p, st.to_json()).unwrap();
        let (back, dropped) = StoreState::load(&p).unwrap();
        assert!(dropped.is_empty());
        assert_eq!(back, st);
        assert_eq!(back.owned[&name].image, img);
    }
}
