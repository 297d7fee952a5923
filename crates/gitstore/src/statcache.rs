//! The stat cache: for each file hashed before, what `lstat` said of it then (size, mtime, ctime,
//! inode, mode) and its blob id, so that a snapshot re-hashes only files whose stat changed.
//!
//! Git's "racy" problem applies: a file written again within the file system's timestamp
//! granularity of its hashing, with the same size, keeps every stat field. An entry is trusted
//! only when the file's mtime and ctime lie at least [`RACY_MARGIN_NS`] (by default) before the moment it was
//! hashed (which covers every granularity from nanoseconds to FAT's two seconds); a racy entry is
//! hashed again by the next snapshot, which trusts it once it is old enough.
//!
//! On disk (`statcache`), rewritten whole through a temp file and a rename: a magic line, then
//! per entry the path (length-prefixed bytes) and its fields, little-endian, then the SHA-256 of
//! all of it. A cache that is missing, torn or of another version is dropped (every file is
//! hashed again): it is an accelerator, never a record.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::path::Path;

use crate::error::{IoContext, Result};
use crate::objects::ObjectId;

/// How long after its mtime and ctime a file must have been hashed for its entry to be trusted.
pub const RACY_MARGIN_NS: i64 = 2_000_000_000;

const MAGIC: &[u8] = b"retrace-statcache 1\n";

/// What `lstat` says of a file, as far as a change goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// Size in bytes.
    pub size: u64,
    /// Last modification, nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// Last status change, nanoseconds since the epoch.
    pub ctime_ns: i64,
    /// Inode number.
    pub ino: u64,
    /// The full `st_mode` (type and permission bits).
    pub mode: u32,
}

impl Stamp {
    /// The stamp of `meta` (from `lstat` or `fstat`).
    pub fn of(meta: &fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            size: meta.size(),
            mtime_ns: meta
                .mtime()
                .saturating_mul(1_000_000_000)
                .saturating_add(meta.mtime_nsec()),
            ctime_ns: meta
                .ctime()
                .saturating_mul(1_000_000_000)
                .saturating_add(meta.ctime_nsec()),
            ino: meta.ino(),
            mode: meta.mode(),
        }
    }
}

/// One file's cached hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cached {
    stamp: Stamp,
    id: ObjectId,
    /// When the file was read, nanoseconds since the epoch.
    hashed_at_ns: i64,
}

/// Path (workspace-relative bytes) → its last hash.
#[derive(Debug, Default)]
pub struct StatCache {
    entries: HashMap<Vec<u8>, Cached>,
    /// Whether it changed since it was loaded or saved.
    dirty: bool,
}

impl StatCache {
    /// The blob id of `path` when its stamp is `stamp` and the cached hash can be trusted: the
    /// file's mtime and ctime lie at least `margin_ns` before it was hashed.
    pub fn lookup(&self, path: &[u8], stamp: &Stamp, margin_ns: i64) -> Option<ObjectId> {
        let c = self.entries.get(path)?;
        let settled = |t: i64| t.saturating_add(margin_ns) <= c.hashed_at_ns;
        (c.stamp == *stamp && settled(stamp.mtime_ns) && settled(stamp.ctime_ns)).then_some(c.id)
    }

    /// Remembers that `path`, stamped `stamp`, was read at `hashed_at_ns` and hashed to `id`.
    pub fn insert(&mut self, path: &[u8], stamp: Stamp, id: ObjectId, hashed_at_ns: i64) {
        let new = Cached {
            stamp,
            id,
            hashed_at_ns,
        };
        if self.entries.get(path) != Some(&new) {
            self.entries.insert(path.to_vec(), new);
            self.dirty = true;
        }
    }

    /// Forgets `path` (a file gone).
    pub fn remove(&mut self, path: &[u8]) {
        self.dirty |= self.entries.remove(path).is_some();
    }

    /// Forgets every path `keep` says no to (files gone since).
    pub fn retain(&mut self, mut keep: impl FnMut(&[u8]) -> bool) {
        let before = self.entries.len();
        self.entries.retain(|p, _| keep(p));
        self.dirty |= self.entries.len() != before;
    }

    /// Each file it knows, with its blob id.
    pub fn ids(&self) -> impl Iterator<Item = (&[u8], ObjectId)> {
        self.entries.iter().map(|(p, c)| (p.as_slice(), c.id))
    }

    /// Each file it knows, with its inode number.
    pub fn inodes(&self) -> impl Iterator<Item = (&[u8], u64)> {
        self.entries.iter().map(|(p, c)| (p.as_slice(), c.stamp.ino))
    }

    /// How many files it knows.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it knows no file.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Reads the cache at `path`: empty when it is missing or cannot be trusted (the second value
    /// says why it was dropped, for a caller that reports it).
    pub fn load(path: &Path) -> (StatCache, Option<String>) {
        match fs::read(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (StatCache::default(), None),
            Err(e) => (StatCache::default(), Some(format!("cannot be read: {e}"))),
            Ok(bytes) => match decode(&bytes) {
                Some(entries) => (
                    StatCache {
                        entries,
                        dirty: false,
                    },
                    None,
                ),
                None => (StatCache::default(), Some("is damaged".into())),
            },
        }
    }

    /// Writes the cache to `path` (a temp file beside it, then a rename) when it changed.
    pub fn save(&mut self, path: &Path) -> Result<()> {
        if !self.dirty {
            return Ok(());
        }
        let mut out = Vec::with_capacity(MAGIC.len() + self.entries.len() * 96);
        out.extend_from_slice(MAGIC);
        let mut paths: Vec<&Vec<u8>> = self.entries.keys().collect();
        paths.sort();
        for p in paths {
            let c = &self.entries[p];
            out.extend_from_slice(&(p.len() as u32).to_le_bytes());
            out.extend_from_slice(p);
            out.extend_from_slice(&c.stamp.size.to_le_bytes());
            out.extend_from_slice(&c.stamp.mtime_ns.to_le_bytes());
            out.extend_from_slice(&c.stamp.ctime_ns.to_le_bytes());
            out.extend_from_slice(&c.stamp.ino.to_le_bytes());
            out.extend_from_slice(&c.stamp.mode.to_le_bytes());
            out.extend_from_slice(&c.hashed_at_ns.to_le_bytes());
            out.extend_from_slice(c.id.as_bytes());
        }
        let sum = sha256(&out);
        out.extend_from_slice(&sum);
        let tmp = path.with_extension("tmp");
        let mut f = fs::File::create(&tmp).at("create", &tmp)?;
        f.write_all(&out).at("write", &tmp)?;
        drop(f);
        fs::rename(&tmp, path).at("rename into place", path)?;
        self.dirty = false;
        Ok(())
    }
}

fn sha256(bytes: &[u8]) -> Vec<u8> {
    let hex = retrace_fsutil::sha256_bytes(bytes);
    (0..hex.len() / 2)
        .filter_map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
        .collect()
}

/// Reads little-endian fields off the front of a byte slice.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

fn decode(bytes: &[u8]) -> Option<HashMap<Vec<u8>, Cached>> {
    let body_len = bytes.len().checked_sub(32)?;
    let (body, sum) = bytes.split_at(body_len);
    if sha256(body) != sum || !body.starts_with(MAGIC) {
        return None;
    }
    let mut r = Reader(&body[MAGIC.len()..]);
    let mut entries = HashMap::new();
    while !r.0.is_empty() {
        let n = r.u32()? as usize;
        let path = r.take(n)?.to_vec();
        let stamp = Stamp {
            size: r.u64()?,
            mtime_ns: r.i64()?,
            ctime_ns: r.i64()?,
            ino: r.u64()?,
            mode: r.u32()?,
        };
        let hashed_at_ns = r.i64()?;
        let id = ObjectId::try_from(r.take(20)?).ok()?;
        entries.insert(
            path,
            Cached {
                stamp,
                id,
                hashed_at_ns,
            },
        );
    }
    Some(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(t: i64) -> Stamp {
        Stamp {
            size: 4,
            mtime_ns: t,
            ctime_ns: t,
            ino: 1,
            mode: 0o100644,
        }
    }

    /// Git's racy case: hashed within the margin of its last change, an entry is not trusted
    /// (the next snapshot reads the file again); hashed later, it is.
    #[test]
    fn an_entry_hashed_within_the_margin_of_a_change_is_not_trusted() {
        let id = ObjectId::empty_blob(gix::hash::Kind::Sha1);
        let t = 1_800_000_000_000_000_000;
        let mut c = StatCache::default();
        c.insert(b"a", stamp(t), id, t + 1_000_000);
        assert_eq!(c.lookup(b"a", &stamp(t), RACY_MARGIN_NS), None);
        c.insert(b"a", stamp(t), id, t + RACY_MARGIN_NS);
        assert_eq!(c.lookup(b"a", &stamp(t), RACY_MARGIN_NS), Some(id));
        // a ctime that moved later is racy again, and any other field differing is a miss
        let mut late = stamp(t);
        late.ctime_ns = t + RACY_MARGIN_NS;
        c.insert(b"b", late, id, t + RACY_MARGIN_NS);
        assert_eq!(c.lookup(b"b", &late, RACY_MARGIN_NS), None);
        let mut other = stamp(t);
        other.ino = 2;
        assert_eq!(c.lookup(b"a", &other, RACY_MARGIN_NS), None);
    }
}
