//! Where everything lives in a sidecar directory (FORMATS.md §2): the name of every file and
//! directory the store reads or writes, relative to the sidecar, in one place.
//!
//! ```text
//! turn-N.json                     a v3 turn's marker, or a v1/v2 record
//! turns/N/meta.json               a v3 turn's record
//! turns/N/journal.jsonl           what the turn captured since meta.json was written whole
//! turns/N/files/NNNN.before       its before-images
//! turns/N/end.pack                the files as the turn left them
//! expired/turn-N.json             a legacy record whose payloads retention expired
//! state.json                      the mutation sequence and the ownership proofs
//! transactions/<id>.json          a file transaction's manifest
//! forward/<id>.pack               its forward images
//! forward/<sha256>, blobs/aa/bb/<sha256>   content-addressed payloads of earlier builds
//! ```

/// `state.json`.
pub const STATE_FILE: &str = "state.json";

/// The directory of v3 turns.
pub(crate) const TURNS_DIR: &str = "turns";

/// The directory of expired legacy records.
pub(crate) const EXPIRED_DIR: &str = "expired";

/// The directory of transaction manifests.
pub(crate) const TX_DIR: &str = "transactions";

/// The directory of legacy content-addressed blobs.
pub(crate) const BLOBS_DIR: &str = "blobs";

/// The directory of transactions' forward images.
pub const FORWARD_DIR: &str = "forward";

/// A v3 turn's journal's file name inside `turns/N/`.
pub const JOURNAL_FILE: &str = "journal.jsonl";

/// The directories only a sidecar holds: one of them (or `state.json`, or a turn record) tells a
/// sidecar from any other directory.
pub(crate) const SIDECAR_DIRS: [&str; 6] = [TURNS_DIR, TX_DIR, EXPIRED_DIR, BLOBS_DIR, FORWARD_DIR, "log"];

/// `turn-N.json`: a v3 turn's marker, or a v1/v2 record.
pub(crate) fn marker_name(n: u64) -> String {
    format!("turn-{n}.json")
}

/// Parses `turn-<N>.json`.
pub(crate) fn parse_turn_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("turn-")?.strip_suffix(".json")?;
    parse_number(digits)
}

/// A turn number as a directory name holds it: ASCII digits only.
pub(crate) fn parse_number(digits: &str) -> Option<u64> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// `expired/turn-N.json`.
pub(crate) fn expired_rel(n: u64) -> String {
    format!("{EXPIRED_DIR}/turn-{n}.json")
}

/// `turns/N`: a v3 turn's directory.
pub(crate) fn turn_rel(n: u64) -> String {
    format!("{TURNS_DIR}/{n}")
}

/// `turns/N/meta.json`.
pub(crate) fn meta_rel(n: u64) -> String {
    format!("{TURNS_DIR}/{n}/meta.json")
}

/// `turns/N/journal.jsonl`.
pub(crate) fn journal_rel(n: u64) -> String {
    format!("{TURNS_DIR}/{n}/{JOURNAL_FILE}")
}

/// `turns/N/files`: a v3 turn's payloads.
pub(crate) fn files_rel(n: u64) -> String {
    format!("{TURNS_DIR}/{n}/files")
}

/// `turns/N/end.pack`: the bytes of the files as turn N left them.
pub(crate) fn end_pack_rel(n: u64) -> String {
    format!("{TURNS_DIR}/{n}/end.pack")
}

/// `NNNN.before`: the payload of entry `index`.
pub(crate) fn payload_name(index: usize) -> String {
    format!("{index:04}.before")
}

/// `turns/N/files/NNNN.before`.
pub(crate) fn payload_rel(n: u64, index: usize) -> String {
    format!("{TURNS_DIR}/{n}/files/{index:04}.before")
}

/// `transactions/<id>.json`.
pub(crate) fn manifest_rel(id: &str) -> String {
    format!("{TX_DIR}/{id}.json")
}

/// The legacy blob path of a SHA-256: `blobs/<h0h1>/<h2h3>/<hex>`.
pub fn blob_rel_path(hex: &str) -> String {
    match (hex.get(0..2), hex.get(2..4)) {
        (Some(a), Some(b)) => format!("{BLOBS_DIR}/{a}/{b}/{hex}"),
        _ => format!("{BLOBS_DIR}/{hex}"),
    }
}

/// Where a transaction's forward image with this SHA-256 was written by earlier builds:
/// `forward/<hex>`.
pub fn forward_rel_path(hex: &str) -> String {
    format!("{FORWARD_DIR}/{hex}")
}

/// The pack name of transaction `id`, relative to the sidecar: `forward/<id>.pack`.
pub fn pack_rel_path(id: &str) -> String {
    format!("{FORWARD_DIR}/{}", pack_name(id))
}

/// `<id>.pack`: the file name of transaction `id`'s pack in `forward/`.
pub(crate) fn pack_name(id: &str) -> String {
    format!("{id}.pack")
}

/// `forward/.<id>.pack.tmp`: the pack of transaction `id` while it is written.
pub(crate) fn pack_tmp_rel(id: &str) -> String {
    format!("{FORWARD_DIR}/.{id}.pack.tmp")
}
