//! Reading and damaging the sidecar's log (`log/<N>.seg`, FORMATS.md §19) from a test, as a user
//! with a hex editor would: frames found by their prefix lines, bodies by their lengths.

use std::fs;
use std::path::{Path, PathBuf};

/// One frame of a segment.
#[derive(Debug, Clone)]
pub struct Frame {
    /// Where its header starts.
    pub header_at: usize,
    /// Its header.
    pub header: serde_json::Value,
    /// Where its body starts, and its length.
    pub body_at: usize,
    pub body_len: usize,
}

/// The segments of the sidecar at `sidecar`, oldest first.
pub fn segments(sidecar: &Path) -> Vec<PathBuf> {
    let mut out: Vec<(u64, PathBuf)> = fs::read_dir(sidecar.join("log"))
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let n = name.strip_suffix(".seg")?.parse().ok()?;
                    Some((n, e.path()))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out.into_iter().map(|(_, p)| p).collect()
}

/// The one segment of a sidecar that has one.
pub fn segment(sidecar: &Path) -> PathBuf {
    let all = segments(sidecar);
    assert_eq!(all.len(), 1, "segments: {all:?}");
    all[0].clone()
}

/// Every whole frame of the segment at `path`.
pub fn frames(path: &Path) -> Vec<Frame> {
    let bytes = fs::read(path).unwrap();
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let Some(nl) = bytes[at..].iter().position(|b| *b == b'\n') else {
            break;
        };
        let line = std::str::from_utf8(&bytes[at..at + nl]).unwrap();
        let mut parts = line.trim_start_matches('@').split(' ');
        let hlen: usize = parts.next().unwrap().parse().unwrap();
        let blen: usize = parts.next().unwrap().parse().unwrap();
        let header_at = at + nl + 1;
        if header_at + hlen + blen > bytes.len() {
            break;
        }
        let header = serde_json::from_slice(&bytes[header_at..header_at + hlen]).unwrap();
        out.push(Frame {
            header_at,
            header,
            body_at: header_at + hlen,
            body_len: blen,
        });
        at = header_at + hlen + blen;
    }
    out
}

/// The frames of `turn` of kind `k` in every segment.
pub fn frames_of(sidecar: &Path, turn: u64, k: &str) -> Vec<(PathBuf, Frame)> {
    segments(sidecar)
        .into_iter()
        .flat_map(|p| frames(&p).into_iter().map(move |f| (p.clone(), f)))
        .filter(|(_, f)| f.header["turn"] == turn && f.header["k"] == k)
        .collect()
}

/// The entry frame (a `line` with `entry`) of `path` in `turn`: its segment and frame.
pub fn entry_frame(sidecar: &Path, turn: u64, path: &str) -> (PathBuf, Frame) {
    frames_of(sidecar, turn, "line")
        .into_iter()
        .find(|(_, f)| f.header["line"]["entry"]["path"] == path)
        .unwrap_or_else(|| panic!("no entry frame for `{path}` in turn {turn}"))
}

/// Overwrites `bytes` at `offset` of `path`.
pub fn patch(path: &Path, offset: usize, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = fs::OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(bytes, offset as u64).unwrap();
}

/// Rewrites the segment at `path` with every frame's header passed through `edit` (the frames
/// encoded again, with their CRCs): a forger who knows the format.
pub fn edit_headers(path: &Path, mut edit: impl FnMut(&mut serde_json::Value)) {
    let bytes = fs::read(path).unwrap();
    let mut out = Vec::new();
    for f in frames(path) {
        let mut h = f.header.clone();
        edit(&mut h);
        let header = serde_json::to_vec(&h).unwrap();
        let body = &bytes[f.body_at..f.body_at + f.body_len];
        let mut crc = crc32fast::Hasher::new();
        crc.update(format!("{} {}", header.len(), body.len()).as_bytes());
        crc.update(&header);
        out.extend_from_slice(
            format!("@{} {} {:08x}\n", header.len(), body.len(), crc.finalize()).as_bytes(),
        );
        out.extend_from_slice(&header);
        out.extend_from_slice(body);
    }
    fs::write(path, out).unwrap();
}
