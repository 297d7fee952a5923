//! Many blobs written as one pack (`objects/pack/pack-<sha>.pack` with its `.idx`, git's version 2
//! formats) instead of one loose object file each: a full walk that hashes thousands of files
//! makes two files, not thousands of inodes and the directories of their fan-out. Git and `gix`
//! read the pack like any other. The pack is written under a temporary name (`tmp-<pid>-<n>.pack`,
//! one a killed process left is removed when the store opens) and named when whole, its index
//! last: a pack without its index is never read.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{GitStoreError, Result};
use crate::objects::ObjectId;

/// The type number of a blob in a pack entry's header.
const BLOB: u8 = 3;

/// Names the temporary pack files of this process apart.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// A pack being written.
pub(crate) struct PackWriter {
    dir: PathBuf,
    tmp: PathBuf,
    out: BufWriter<File>,
    /// Bytes written so far (the next entry's offset).
    offset: u64,
    /// Each entry: its id, its offset, the CRC-32 of its bytes in the pack.
    entries: Vec<(ObjectId, u64, u32)>,
    ids: HashSet<ObjectId>,
}

fn io_at<'a>(op: &'static str, path: &'a Path) -> impl Fn(io::Error) -> GitStoreError + 'a {
    move |source| GitStoreError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

/// Removes the temporary packs a killed process left in `pack_dir`.
pub(crate) fn remove_leftovers(pack_dir: &Path) {
    let Ok(names) = std::fs::read_dir(pack_dir) else {
        return;
    };
    for e in names.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("tmp-") && (name.ends_with(".pack") || name.ends_with(".idx")) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

impl PackWriter {
    /// Starts a pack in `objects_dir/pack`.
    pub(crate) fn new(objects_dir: &Path) -> Result<PackWriter> {
        let dir = objects_dir.join("pack");
        std::fs::create_dir_all(&dir).map_err(io_at("create", &dir))?;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!("tmp-{}-{n}.pack", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(io_at("create", &tmp))?;
        let mut out = BufWriter::with_capacity(256 * 1024, file);
        // The header; its count is written when the pack is whole.
        out.write_all(b"PACK\0\0\0\x02\0\0\0\0")
            .map_err(io_at("write", &tmp))?;
        Ok(PackWriter {
            dir,
            tmp,
            out,
            offset: 12,
            entries: Vec::new(),
            ids: HashSet::new(),
        })
    }

    /// Adds blob `id` with `bytes` (nothing when this pack holds it already).
    pub(crate) fn add(&mut self, id: ObjectId, bytes: &[u8]) -> Result<()> {
        if !self.ids.insert(id) {
            return Ok(());
        }
        let mut entry = header(BLOB, bytes.len() as u64);
        // Level 1, as git compresses loose objects: a pack of a first walk is written once and
        // read back a few files at a time.
        let mut z = gix::zlib::stream::deflate::Write::new(&mut entry, gix::zlib::Compression::BEST_SPEED);
        z.write_all(bytes)
            .and_then(|()| z.flush())
            .map_err(io_at("compress a blob for", &self.tmp))?;
        drop(z);
        self.out.write_all(&entry).map_err(io_at("write", &self.tmp))?;
        self.entries.push((id, self.offset, crc32fast::hash(&entry)));
        self.offset += entry.len() as u64;
        Ok(())
    }

    /// Finishes the pack (its count, its checksum), writes its index, and names both; returns how
    /// many blobs it holds. An empty pack is removed instead.
    pub(crate) fn finish(mut self) -> Result<usize> {
        let tmp = self.tmp.clone();
        self.out.flush().map_err(io_at("write", &tmp))?;
        if self.entries.is_empty() {
            return Ok(0); // removed as it is dropped
        }
        let count = u32::try_from(self.entries.len())
            .map_err(|_| io_at("write", &tmp)(io::Error::other("more objects than a pack can count")))?;
        let file = self.out.get_mut();
        file.seek(SeekFrom::Start(8))
            .and_then(|_| file.write_all(&count.to_be_bytes()))
            .map_err(io_at("write", &tmp))?;
        // The trailer: SHA-1 of everything before it (read back: the count changed the header).
        file.seek(SeekFrom::Start(0)).map_err(io_at("read", &tmp))?;
        let mut h = gix::hash::hasher(gix::hash::Kind::Sha1);
        let mut buf = vec![0u8; 256 * 1024];
        loop {
            let n = io::Read::read(file, &mut buf).map_err(io_at("read", &tmp))?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
        }
        let sum = h
            .try_finalize()
            .map_err(|e| io_at("hash", &tmp)(io::Error::other(e.to_string())))?;
        file.write_all(sum.as_slice()).map_err(io_at("write", &tmp))?;
        let mut entries = std::mem::take(&mut self.entries);
        entries.sort_by_key(|e| e.0);
        let hex = sum.to_string();
        let idx_tmp = tmp.with_extension("idx");
        write_index(&idx_tmp, &entries, sum.as_slice())?;
        let pack = self.dir.join(format!("pack-{hex}.pack"));
        let idx = self.dir.join(format!("pack-{hex}.idx"));
        std::fs::rename(&tmp, &pack).map_err(io_at("rename", &tmp))?;
        std::fs::rename(&idx_tmp, &idx).map_err(io_at("rename", &idx_tmp))?;
        Ok(entries.len())
    }
}

impl std::fmt::Debug for PackWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackWriter")
            .field("tmp", &self.tmp)
            .field("blobs", &self.entries.len())
            .finish()
    }
}

impl Drop for PackWriter {
    fn drop(&mut self) {
        // Not finished (an error, a panic, nothing in it): what it wrote goes. Once named, the
        // temporary names are gone and this removes nothing.
        let _ = std::fs::remove_file(&self.tmp);
        let _ = std::fs::remove_file(self.tmp.with_extension("idx"));
    }
}

/// A pack entry's header: type and size, 4 bits of size in the first byte, then 7 per byte.
fn header(kind: u8, mut size: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    let mut byte = (kind << 4) | (size & 0x0f) as u8;
    size >>= 4;
    while size > 0 {
        out.push(byte | 0x80);
        byte = (size & 0x7f) as u8;
        size >>= 7;
    }
    out.push(byte);
    out
}

/// Writes a version 2 index of `entries` (sorted by id) for the pack whose checksum is `pack_sum`.
fn write_index(path: &Path, entries: &[(ObjectId, u64, u32)], pack_sum: &[u8]) -> Result<()> {
    let mut idx = Vec::with_capacity(1072 + entries.len() * 28 + 40);
    idx.extend_from_slice(b"\xfftOc\0\0\0\x02");
    let mut fanout = [0u32; 256];
    for (id, _, _) in entries {
        fanout[usize::from(id.as_slice()[0])] += 1;
    }
    let mut total = 0u32;
    for f in fanout {
        total += f;
        idx.extend_from_slice(&total.to_be_bytes());
    }
    for (id, _, _) in entries {
        idx.extend_from_slice(id.as_slice());
    }
    for (_, _, crc) in entries {
        idx.extend_from_slice(&crc.to_be_bytes());
    }
    let mut large = Vec::new();
    for (_, offset, _) in entries {
        match u32::try_from(*offset) {
            Ok(o) if o < 0x8000_0000 => idx.extend_from_slice(&o.to_be_bytes()),
            _ => {
                let at = 0x8000_0000u32 | large.len() as u32;
                idx.extend_from_slice(&at.to_be_bytes());
                large.push(*offset);
            }
        }
    }
    for o in large {
        idx.extend_from_slice(&o.to_be_bytes());
    }
    idx.extend_from_slice(pack_sum);
    let mut h = gix::hash::hasher(gix::hash::Kind::Sha1);
    h.update(&idx);
    let sum = h
        .try_finalize()
        .map_err(|e| io_at("hash", path)(io::Error::other(e.to_string())))?;
    idx.extend_from_slice(sum.as_slice());
    std::fs::write(path, &idx).map_err(io_at("write", path))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::objects::Objects;

    #[test]
    fn headers_follow_gits_variable_length_sizes() {
        assert_eq!(header(BLOB, 5), vec![0x35]);
        assert_eq!(header(BLOB, 16), vec![0xb0, 0x01]);
        assert_eq!(header(BLOB, 300), vec![0xbc, 0x12]);
    }

    #[test]
    fn a_packed_blob_reads_back_checked_and_git_finds_the_pack_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("repo.git");
        let o = Objects::open(&dir).unwrap();
        let mut p = PackWriter::new(&dir.join("objects")).unwrap();
        let blobs: Vec<Vec<u8>> = (0..300)
            .map(|i| format!("file {i}\n").repeat(i % 7 + 1).into_bytes())
            .chain([Vec::new(), vec![0u8; 70_000]])
            .collect();
        let mut ids = Vec::new();
        for b in &blobs {
            let id = Objects::blob_id(b).unwrap();
            p.add(id, b).unwrap();
            p.add(id, b).unwrap();
            ids.push(id);
        }
        assert_eq!(p.finish().unwrap(), 302);
        let o2 = Objects::open(&dir).unwrap();
        for (b, id) in blobs.iter().zip(&ids) {
            assert_eq!(&o2.read_blob(id).unwrap(), b);
            assert!(o.has(id) || o2.has(id));
        }
        // git itself checks the pack and its index, when it is installed.
        if let Ok(out) = std::process::Command::new("git")
            .arg("--git-dir")
            .arg(&dir)
            .args(["fsck", "--strict", "--no-dangling"])
            .output()
        {
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        }
        let names: Vec<String> = std::fs::read_dir(dir.join("objects/pack"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(names.iter().all(|n| n.starts_with("pack-")));
    }

    #[test]
    fn an_unfinished_pack_leaves_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("repo.git");
        let _o = Objects::open(&dir).unwrap();
        let mut p = PackWriter::new(&dir.join("objects")).unwrap();
        p.add(Objects::blob_id(b"x").unwrap(), b"x").unwrap();
        drop(p);
        assert_eq!(std::fs::read_dir(dir.join("objects/pack")).unwrap().count(), 0);
        std::fs::write(dir.join("objects/pack/tmp-1-0.pack"), b"PACK").unwrap();
        remove_leftovers(&dir.join("objects/pack"));
        assert_eq!(std::fs::read_dir(dir.join("objects/pack")).unwrap().count(), 0);
    }
}
