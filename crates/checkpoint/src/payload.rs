//! A before-image's payload (`turns/N/files/NNNN.before`): its bytes copied from the workspace
//! and hashed on the way, large ones through a pipeline whose hashing runs on a helper thread
//! beside the copy and the fsync, all of one capture call made durable together.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use retrace_fsutil::{copy_hashed, hex, pool, Fs};
use sha2::{Digest, Sha256};

use crate::error::{CheckpointError, IoContext, Result};
use crate::fsio::sync_error;
use crate::layout::payload_name;
use crate::model::{Before, FileEntry, Payload};

/// A payload file created for a before-image whose bytes are still to be copied.
pub(crate) struct ToCopy {
    /// Where the bytes come from.
    pub(crate) src: Src,
    /// Its absolute path (for errors).
    pub(crate) abs: PathBuf,
    /// The payload file, created and empty.
    pub(crate) out: File,
    /// The payload's path.
    pub(crate) path: PathBuf,
    /// The workspace file's size when it was opened.
    pub(crate) len: u64,
}

/// Where a before-image's bytes come from.
pub(crate) enum Src {
    /// The workspace file, open for reading.
    File(File),
    /// Bytes given by the caller (the git backend's object store, as the file was before a shell
    /// command changed it).
    Bytes(Vec<u8>),
}

/// A payload written but not yet synced.
struct Pending {
    file: File,
    path: PathBuf,
}

/// From this size on, a before-image is copied in chunks through memory and each chunk is hashed by
/// a helper thread while the next one is read and written ([`copy_teed`]), so SHA-256 (about as
/// costly as writing the bytes out) runs beside the copy and the fsync. Smaller files are copied and
/// hashed in one pass on this thread: a thread would cost more than it hides.
const PIPELINE_MIN_BYTES: u64 = 256 * 1024;

/// Bytes per chunk handed to the hashing thread.
const PIPELINE_CHUNK: usize = 256 * 1024;

/// Bytes of a large payload copied between two writeback starts ([`Fs::start_writeback`]): each
/// start costs about as much as copying 256 KiB, so small payloads are left to their fsync.
const WRITEBACK_EVERY: u64 = 4 << 20;

/// Chunk buffers in flight at most (2 MiB): the copy waits for the hashing thread beyond that.
const PIPELINE_BUFFERS: usize = 8;

/// The payloads of one capture call: each copied (and hashed) as its entry is made, then all
/// made durable in one barrier before any record mentions them.
#[derive(Default)]
pub(crate) struct Payloads {
    /// Written, not yet synced.
    pending: Vec<Pending>,
    /// Spawned at the first large before-image of the call, if any.
    hasher: Option<Hasher>,
}

impl Payloads {
    /// Copies `job`'s bytes into its payload file and fills in `entry`'s size, and its SHA-256
    /// unless the hashing thread computes it (then [`Payloads::sync`] does). `k`: the entry's
    /// position among the call's entries.
    pub(crate) fn copy(&mut self, fs: &Fs, job: ToCopy, entry: &mut FileEntry, k: usize) -> Result<()> {
        if let Src::Bytes(bytes) = &job.src {
            (&job.out)
                .write_all(bytes)
                .at("write the before-image to", &job.path)?;
            fs.start_writeback(&job.out);
            fill_before(
                entry,
                Some(retrace_fsutil::sha256_bytes(bytes)),
                bytes.len() as u64,
            );
            self.pending.push(Pending {
                file: job.out,
                path: job.path,
            });
            return Ok(());
        }
        if self.hasher.is_none() && job.len >= PIPELINE_MIN_BYTES {
            self.hasher = Hasher::spawn();
        }
        let pipelined = self.hasher.as_mut().filter(|_| job.len >= PIPELINE_MIN_BYTES);
        let (sha256, len) = match pipelined {
            Some(h) => (None, copy_teed(fs, &job, h, k)?),
            None => {
                let mut out = &job.out;
                let Src::File(src) = &job.src else {
                    return Err(copy_error(&job.abs, io::Error::other("not a file")));
                };
                let c = copy_hashed(src, Some(&mut out)).map_err(|e| copy_error(&job.abs, e))?;
                fs.start_writeback(&job.out);
                (Some(c.sha256), c.len)
            }
        };
        fill_before(entry, sha256, len);
        self.pending.push(Pending {
            file: job.out,
            path: job.path,
        });
        Ok(())
    }

    /// One barrier makes the payloads of this call durable (each file, then their directory
    /// once). Large ones: the payloads are synced on a helper while this thread syncs their
    /// directory and waits for the digests, which go into `entries` (the call's, the first being
    /// entry `base_index` of the turn). Only then is the record told about them.
    pub(crate) fn sync(
        self,
        fs_: &Fs,
        files_dir: &Path,
        entries: &mut [FileEntry],
        base_index: usize,
    ) -> Result<()> {
        let payloads: Vec<(&File, &Path)> =
            self.pending.iter().map(|p| (&p.file, p.path.as_path())).collect();
        match self.hasher {
            None => {
                for (f, p) in &payloads {
                    fs_.sync_file(f, "sync_payload").at("sync", p)?;
                }
                if !payloads.is_empty() {
                    fs_.sync_dir(files_dir).at("sync", files_dir)?;
                }
            }
            Some(h) => {
                let syncing = fs_
                    .sync_files_later(&payloads, "sync_payload")
                    .map_err(sync_error)?;
                let here = (|| -> Result<()> {
                    fs_.sync_dir(files_dir).at("sync", files_dir)?;
                    digests_into(entries, h.finish()?, files_dir, base_index)
                })();
                let synced = syncing.join().map_err(sync_error);
                here?;
                synced?;
            }
        }
        Ok(())
    }
}

/// Fills in the digests the hashing thread computed, and checks that every kept before-image has
/// one: without it the entry would read as "did not exist".
fn digests_into(
    entries: &mut [FileEntry],
    digests: Vec<(usize, String)>,
    files_dir: &Path,
    base_index: usize,
) -> Result<()> {
    for (i, sha256) in digests {
        if let Some(entry) = entries.get_mut(i) {
            let len = entry_size(entry);
            fill_before(entry, Some(sha256), len);
        }
    }
    if let Some(i) = entries.iter().position(|e| {
        matches!(
            e.before,
            Before::Present {
                sha256: None,
                payload: Payload::File(_),
                ..
            }
        )
    }) {
        return Err(io::Error::other("no digest was computed")).at(
            "hash the before-image in",
            files_dir.join(payload_name(base_index + i)),
        );
    }
    Ok(())
}

fn copy_error(abs: &Path, source: io::Error) -> CheckpointError {
    CheckpointError::Io {
        op: "copy the before-image of",
        path: abs.to_path_buf(),
        source,
    }
}

/// Sets the SHA-256 and size of a kept before-image.
fn fill_before(entry: &mut FileEntry, sha: Option<String>, len: u64) {
    if let Before::Present { sha256, size, .. } = &mut entry.before {
        if sha.is_some() {
            *sha256 = sha;
        }
        *size = Some(len);
    }
}

fn entry_size(entry: &FileEntry) -> u64 {
    match &entry.before {
        Before::Present { size, .. } => size.unwrap_or(0),
        Before::Absent => 0,
    }
}

/// Copies a before-image into its payload through memory, a chunk at a time: each chunk is read,
/// written to the payload, then handed to the hashing thread, so the
/// digest is that of exactly the bytes written and hashing runs beside the copy instead of after
/// it. At most [`PIPELINE_BUFFERS`] chunks exist at once. Returns the bytes copied.
fn copy_teed(fs: &Fs, job: &ToCopy, hasher: &mut Hasher, entry: usize) -> Result<u64> {
    hasher.send(HashMsg::Start { entry });
    let mut total = 0u64;
    loop {
        let mut buf = hasher.buffer();
        let Src::File(src) = &job.src else {
            return Err(copy_error(&job.abs, io::Error::other("not a file")));
        };
        let n = read_full(src, &mut buf).map_err(|e| copy_error(&job.abs, e))?;
        if n == 0 {
            hasher.recycle(buf);
            break;
        }
        (&job.out)
            .write_all(&buf[..n])
            .at("write the before-image to", &job.path)?;
        total += n as u64;
        if total.is_multiple_of(WRITEBACK_EVERY) {
            // A large payload starts going to disk while the rest is copied (the copy waits for
            // the hashing thread, so the disk would otherwise sit idle until the fsync).
            fs.start_writeback(&job.out);
        }
        hasher.send(HashMsg::Chunk(buf, n));
    }
    hasher.send(HashMsg::End);
    Ok(total)
}

/// Reads into `buf` until it is full or the file ends; returns the bytes read.
fn read_full(mut src: &File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match src.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// What the hashing thread is told, in order.
enum HashMsg {
    /// A payload (entry `entry` of the call) begins.
    Start { entry: usize },
    /// Its next bytes: the first `n` of the buffer, which goes back for reuse once hashed.
    Chunk(Vec<u8>, usize),
    /// It is complete.
    End,
}

/// A pool thread hashing the chunks of payloads as they are written, from the very buffers written.
struct Hasher {
    tx: mpsc::Sender<HashMsg>,
    /// Buffers the thread is done with.
    free: mpsc::Receiver<Vec<u8>>,
    /// Buffers made so far (at most [`PIPELINE_BUFFERS`]).
    made: usize,
    handle: pool::Task<Vec<(usize, String)>>,
}

impl Hasher {
    /// `None` when no thread can be had: the caller hashes on its own thread.
    fn spawn() -> Option<Hasher> {
        let (tx, rx) = mpsc::channel();
        let (back, free) = mpsc::channel();
        let handle = pool::try_run(move || hash_payloads(rx, back))?;
        Some(Hasher {
            tx,
            free,
            made: 0,
            handle,
        })
    }

    /// A chunk buffer: one the thread gave back, a new one while fewer than
    /// [`PIPELINE_BUFFERS`] exist, else the next one the thread gives back.
    fn buffer(&mut self) -> Vec<u8> {
        if let Ok(b) = self.free.try_recv() {
            return b;
        }
        if self.made < PIPELINE_BUFFERS {
            self.made += 1;
            return vec![0u8; PIPELINE_CHUNK];
        }
        // The thread holds every buffer; it gives each back once hashed (or is gone, and then
        // `finish` reports it: a fresh buffer keeps this call simple).
        self.free.recv().unwrap_or_else(|_| vec![0u8; PIPELINE_CHUNK])
    }

    fn recycle(&mut self, buf: Vec<u8>) {
        self.send(HashMsg::Chunk(buf, 0));
    }

    fn send(&self, msg: HashMsg) {
        // A send fails only when the thread is gone, which `finish` reports.
        let _ = self.tx.send(msg);
    }

    /// Waits for every digest: `(entry, sha256)` per payload.
    fn finish(self) -> Result<Vec<(usize, String)>> {
        drop(self.tx);
        self.handle.join().ok_or_else(|| CheckpointError::Io {
            op: "hash the before-images",
            path: PathBuf::new(),
            source: io::Error::other("the hashing thread panicked"),
        })
    }
}

fn hash_payloads(rx: mpsc::Receiver<HashMsg>, back: mpsc::Sender<Vec<u8>>) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut cur: Option<(usize, Sha256)> = None;
    for msg in rx {
        match msg {
            HashMsg::Start { entry } => cur = Some((entry, Sha256::new())),
            HashMsg::Chunk(buf, n) => {
                if let Some((_, h)) = cur.as_mut() {
                    h.update(&buf[..n]);
                }
                // The copy may be done and gone: then the buffer is simply dropped.
                let _ = back.send(buf);
            }
            HashMsg::End => {
                if let Some((entry, h)) = cur.take() {
                    out.push((entry, hex(&h.finalize())));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    use retrace_fsutil::RelPath;
    use retrace_protocol::ChangeKind;

    use crate::capture::Change;
    use crate::store::CheckpointStore;
    use crate::store::StoreOptions;
    use crate::turn::BeginTurn;
    use crate::BeforeImage;
    use retrace_fsutil::{sha256_bytes, Fs};

    fn bytes(len: usize, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    }

    /// Small and large files in one call, with fsync on: the large ones take the pipelined copy
    /// (kernel copy, digest computed by the hashing thread while the payloads are synced), and every
    /// entry gets its own digest, size and bytes.
    #[test]
    fn small_and_large_before_images_in_one_call_keep_their_own_digests() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        fs::create_dir_all(&ws).unwrap();
        let sizes = [
            ("a.txt", 10usize),
            ("big1.bin", PIPELINE_MIN_BYTES as usize + 1),
            ("empty", 0),
            ("big2.bin", 3 * PIPELINE_CHUNK + 7),
            ("c.txt", 4096),
        ];
        let mut originals = Vec::new();
        for (i, (name, len)) in sizes.iter().enumerate() {
            let b = bytes(*len, i as u8);
            fs::write(ws.join(name), &b).unwrap();
            originals.push(b);
        }
        let opts = StoreOptions {
            fs: Fs::durable(),
            ..StoreOptions::default()
        };
        let mut store = CheckpointStore::open(&tmp.path().join("s.ckpt"), &ws, opts).unwrap();
        let turn = store.begin_turn(BeginTurn::default()).unwrap();
        let mut changes: Vec<Change> = sizes
            .iter()
            .map(|(n, _)| Change::new(*n, ChangeKind::Modify))
            .collect();
        changes.insert(2, Change::new("new.txt", ChangeKind::Create));
        let report = store.capture_before(&changes, Some("edit")).unwrap();
        assert_eq!(report.captured.len(), 6);
        assert!(report.gaps.is_empty(), "{:?}", report.gaps);
        // Overwrite the workspace: the before-images must not follow.
        for (name, _) in &sizes {
            fs::write(ws.join(name), b"after").unwrap();
        }
        let reopened =
            CheckpointStore::open(&tmp.path().join("s.ckpt"), &ws, StoreOptions::default()).unwrap();
        let t = reopened.turn(turn).unwrap();
        assert_eq!(t.files.len(), 6);
        for (i, ((name, len), want)) in sizes.iter().zip(&originals).enumerate() {
            let rel = RelPath::from_stored(name.as_bytes()).unwrap();
            let entry = &t.files[t.entry_index(&rel).unwrap()];
            let Before::Present { sha256, size, .. } = &entry.before else {
                panic!("{name}: recorded as absent");
            };
            assert_eq!(
                sha256.as_deref(),
                Some(sha256_bytes(want).as_str()),
                "{name} (#{i})"
            );
            assert_eq!(*size, Some(*len as u64), "{name}");
            match reopened.before_image(turn, &rel).unwrap() {
                BeforeImage::Present { reader, .. } => {
                    assert_eq!(&reader.read_all().unwrap(), want, "{name}")
                }
                BeforeImage::Absent => panic!("{name}: no before-image"),
            }
        }
        let new = RelPath::from_stored(b"new.txt").unwrap();
        assert!(matches!(
            reopened.before_image(turn, &new).unwrap(),
            BeforeImage::Absent
        ));
        assert!(reopened.fsck().ok, "{:#?}", reopened.fsck().problems);
    }
}
