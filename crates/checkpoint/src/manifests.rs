//! Reading `transactions/`: every manifest this build can use, and what each other file there is
//! (another implementation's manifest, a copy, a broken or forged one) and whether it stops writes
//! (FORMATS §9.4.1).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::error::{IoContext, Result};
use crate::layout::TX_DIR;
use crate::record::read_bounded;
use crate::tx::Manifest;

/// A manifest file that is not a manifest this build can use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ManifestProblem {
    /// Its file name in `transactions/`.
    pub(crate) name: String,
    /// What is wrong.
    pub(crate) why: String,
    /// Whether it stops writes to the session: a transaction that may be in flight (or whose
    /// forward images may be the only copies) and that this build cannot read or roll back.
    pub(crate) blocks: bool,
}

/// Manifests by id, and the files that are none.
pub(crate) type LoadedManifests = (BTreeMap<String, Manifest>, Vec<ManifestProblem>);

/// Loads every manifest. A file that does not parse blocks writes (it may be a transaction in
/// flight), except a manifest of the reference implementation that says it finished, which is
/// only noted: that writer's transactions are its own, and a finished one needs nothing.
pub(crate) fn load_manifests(dir: &Path) -> Result<LoadedManifests> {
    let mut out = BTreeMap::new();
    let mut bad = Vec::new();
    let mut misnamed = Vec::new();
    let txd = dir.join(TX_DIR);
    if !txd.is_dir() {
        return Ok((out, bad));
    }
    for e in fs::read_dir(&txd).at("list", &txd)? {
        let e = e.at("list", &txd)?;
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".json") || name.starts_with('.') {
            continue;
        }
        let bytes = match read_bounded(&e.path()) {
            Ok(b) => b,
            Err(err) => {
                bad.push(ManifestProblem {
                    name,
                    why: err.to_string(),
                    blocks: true,
                });
                continue;
            }
        };
        match serde_json::from_slice::<Manifest>(&bytes) {
            Ok(m) if format!("{}.json", m.id) == name => match m.forged() {
                None => {
                    out.insert(m.id.clone(), m);
                }
                // Never followed: a path outside the workspace, a digest that is a path.
                Some(why) => bad.push(ManifestProblem {
                    name,
                    why,
                    blocks: true,
                }),
            },
            Ok(m) => misnamed.push((name, m)),
            Err(err) => bad.push(foreign_or_broken(name, &bytes, &err.to_string())),
        }
    }
    // A manifest under another name: a copy (a backup the user made) of a finished transaction
    // whose own manifest is there is only noted; anything else may be the only record of a
    // transaction, and stops writes.
    for (name, m) in misnamed {
        let copy = m.state.is_terminal() && out.contains_key(&m.id);
        bad.push(ManifestProblem {
            why: if copy {
                format!(
                    "a copy of the manifest of transaction {} (its own, `{}.json`, is there); ignored",
                    m.id, m.id
                )
            } else {
                format!("manifest id `{}` does not match its file name", m.id)
            },
            name,
            blocks: !copy,
        });
    }
    // The one a blocked open names is the same whatever order the directory lists them in.
    bad.sort_by(|a, b| a.name.cmp(&b.name));
    Ok((out, bad))
}

/// A file of `transactions/` that is no Retrace manifest: another implementation's (the
/// reference's flat `restore*`/`forward*` targets, with `workspaceRoot`), or broken.
fn foreign_or_broken(name: String, bytes: &[u8], err: &str) -> ManifestProblem {
    let value: Option<serde_json::Value> = serde_json::from_slice(bytes).ok();
    let foreign = value.as_ref().filter(|v| {
        v.get("workspaceRoot").is_some()
            && v["targets"].as_array().is_some_and(|t| {
                t.iter()
                    .all(|t| t.get("forwardSha").is_some() || t.get("forwardExisted").is_some())
            })
    });
    match foreign.and_then(|v| v["state"].as_str()) {
        Some(state @ ("committed" | "aborted" | "undone")) => ManifestProblem {
            name,
            why: format!("a transaction manifest another implementation wrote ({state}); nothing needs it"),
            blocks: false,
        },
        Some(state) => ManifestProblem {
            name,
            why: format!(
                "a transaction manifest another implementation wrote, still {state}: it may be in flight, and this build cannot roll it back"
            ),
            blocks: true,
        },
        None => ManifestProblem {
            name,
            why: format!("not a valid transaction manifest: {err}"),
            blocks: true,
        },
    }
}
