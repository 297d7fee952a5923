//! The blobs of a sidecar (`blobs/…` and `forward/…`, FORMATS §8): which exist, and which a record
//! or manifest references. Blob collection removes the rest; fsck reports them.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use retrace_fsutil::is_sha256_hex;

use crate::error::{IoContext, Result};
use crate::layout::{pack_name, parse_turn_file_name, BLOBS_DIR, EXPIRED_DIR, FORWARD_DIR, TX_DIR};
use crate::record::{read_bounded, read_record, RawRecord};

/// Every blob file of the sidecar at `dir` (under `blobs/` and `forward/`), as (name, path
/// relative to the sidecar). Temp files left by a crash (`.<hex>.tmp`) are listed too: nothing
/// references them.
pub(crate) fn list_blobs(dir: &Path) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let blobs = dir.join(BLOBS_DIR);
    if blobs.is_dir() {
        for a in fs::read_dir(&blobs).at("list", &blobs)? {
            let a = a.at("list", &blobs)?.path();
            if !a.is_dir() {
                continue;
            }
            for b in fs::read_dir(&a).at("list", &a)? {
                let b = b.at("list", &a)?.path();
                if b.is_dir() {
                    list_files(dir, &b, &mut out)?;
                }
            }
        }
    }
    let forward = dir.join(FORWARD_DIR);
    if forward.is_dir() {
        list_files(dir, &forward, &mut out)?;
    }
    Ok(out)
}

fn list_files(sidecar: &Path, d: &Path, out: &mut Vec<(String, String)>) -> Result<()> {
    for f in fs::read_dir(d).at("list", d)? {
        let f = f.at("list", d)?;
        let name = f.file_name().to_string_lossy().into_owned();
        let path = f.path();
        let rel = path
            .strip_prefix(sidecar)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        out.push((name, rel));
    }
    Ok(())
}

/// The set of blobs any record or manifest references; `None` when a file that could reference a
/// blob cannot be read (then nothing may be collected).
pub(crate) fn referenced_blobs(dir: &Path) -> Result<Option<BTreeSet<String>>> {
    let mut set = BTreeSet::new();
    let mut records = Vec::new();
    for sub in [dir.to_path_buf(), dir.join(EXPIRED_DIR)] {
        if !sub.is_dir() {
            continue;
        }
        for e in fs::read_dir(&sub).at("list", &sub)? {
            let e = e.at("list", &sub)?;
            if parse_turn_file_name(&e.file_name().to_string_lossy()).is_some() {
                records.push(e.path());
            }
        }
    }
    for r in records {
        let raw: RawRecord = match read_record(&r) {
            Ok(raw) => raw,
            Err(_) => return Ok(None),
        };
        set.extend(raw.files.iter().filter_map(|f| f.blob_ref.clone()));
    }
    let tx = dir.join(TX_DIR);
    if tx.is_dir() {
        for e in fs::read_dir(&tx).at("list", &tx)? {
            let path = e.at("list", &tx)?.path();
            let Ok(bytes) = read_bounded(&path) else {
                return Ok(None);
            };
            let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
                return Ok(None);
            };
            collect_hex(&value, &mut set);
            // A transaction's pack lives as long as its manifest, unless it was rolled back. Named
            // after the manifest's file (as readers find it), never after what the manifest says.
            if value["state"] != "aborted" {
                if let Some(stem) = path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.strip_suffix(".json"))
                {
                    set.insert(pack_name(stem));
                }
            }
        }
    }
    Ok(Some(set))
}

fn collect_hex(v: &serde_json::Value, set: &mut BTreeSet<String>) {
    match v {
        serde_json::Value::String(s) if is_sha256_hex(s) => {
            set.insert(s.clone());
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_hex(x, set)),
        serde_json::Value::Object(o) => o.values().for_each(|x| collect_hex(x, set)),
        _ => {}
    }
}
