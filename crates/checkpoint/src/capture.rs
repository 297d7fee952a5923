//! Capture (SPEC §4): before-images made durable before a tool runs, after-images recorded when it
//! has run, and gaps for what cannot be tracked.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use retrace_fsutil::{copy_hashed, hex, pool, Fs, RelPath};
use retrace_protocol::{ChangeKind, Gap, GapReason};
use sha2::{Digest, Sha256};

use crate::error::{CheckpointError, IoContext, Result};
use crate::fsio::{mode_bits, sync_error};
use crate::layout::{files_rel, payload_name};
use crate::model::{add_gap, Before, EntryPath, FileEntry, Image, Payload};
use crate::record::JournalLine;
use crate::store::CheckpointStore;
use crate::to_record::{file_to_raw, gap_to_raw};

/// One path a tool's preview says it will change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The path as the tool received it (relative to the workspace, or absolute under it).
    pub path: PathBuf,
    /// What the tool will do.
    pub kind: ChangeKind,
    /// What the tool will leave at the path if it succeeds, when known: journaled (an intent)
    /// before the tool runs, so that recovery after a crash can recognise the tool's write as
    /// Retrace's own (see [`crate::record::JournalAfter::intended`]).
    pub intent: Option<Image>,
    /// The first number the tool's temp files can carry (the tools number them in order, so its
    /// call's temp files carry this one and the next few): journaled with the intent, so that
    /// recovery removes exactly the temp files the crashed write made.
    pub temps_from: Option<u64>,
}

impl Change {
    /// A change of `path`.
    pub fn new(path: impl Into<PathBuf>, kind: ChangeKind) -> Change {
        Change {
            path: path.into(),
            kind,
            intent: None,
            temps_from: None,
        }
    }

    /// This change, saying the number the tool's temp files start from.
    pub fn with_temps_from(mut self, n: u64) -> Change {
        self.temps_from = Some(n);
        self
    }

    /// This change, saying what the tool will leave at the path.
    pub fn with_intent(mut self, intent: Image) -> Change {
        self.intent = Some(intent);
        self
    }
}

/// What one `capture_before` call did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CaptureReport {
    /// Paths whose before-image was captured now (first touch in this turn).
    pub captured: Vec<RelPath>,
    /// Paths already captured earlier in the turn (first touch wins).
    pub already: Vec<RelPath>,
    /// Gaps recorded by this call.
    pub gaps: Vec<Gap>,
}

/// A payload file created for a before-image whose bytes are still to be copied.
struct ToCopy {
    /// The workspace file, open for reading.
    src: File,
    /// Its absolute path (for errors).
    abs: PathBuf,
    /// The payload file, created and empty.
    out: File,
    /// The payload's path.
    path: PathBuf,
    /// The workspace file's size when it was opened.
    len: u64,
}

/// A capture's additions to its turn, waiting to be published.
struct Staged {
    /// The call's entries, numbered, in the order they join the turn.
    entries: Vec<FileEntry>,
    /// The turn's gaps with the call's added, when it added any.
    gaps: Option<Vec<Gap>>,
    /// The mutation sequence after the call's captures.
    seq: u64,
    /// What the journal gets.
    lines: Vec<JournalLine>,
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

impl CheckpointStore {
    /// Captures the before-image of every path in `changes` not yet touched in this turn, and makes it
    /// durable before returning. `tool` names the tool for gaps. On error nothing of this call is
    /// published nor remembered (a retry captures the paths again), and the caller must refuse the
    /// edit.
    ///
    /// The changes' intents (what the tool will leave) are journaled in the same append, before
    /// the tool runs: a crash after the write, before its after-image is journaled, leaves proof
    /// enough for recovery to know the write as Retrace's own.
    ///
    /// Cost: the payloads' fsyncs and their directory's are paid once per call, then one journal
    /// append (one fsync) publishes the entries with their intents. A call whose paths were all
    /// touched before in the turn costs that one append for its intents, nothing when it has none.
    pub fn capture_before(&mut self, changes: &[Change], tool: Option<&str>) -> Result<CaptureReport> {
        let root = self.require_root()?;
        let Some(number) = self.current_turn() else {
            return Err(CheckpointError::NoTurn);
        };
        let mut report = CaptureReport::default();
        let mut todo: Vec<RelPath> = Vec::new();
        let mut intents: Vec<(RelPath, &Image, Option<u64>)> = Vec::new();
        for c in changes {
            let rel = RelPath::normalize(&root, &c.path)?;
            if let Some(img) = &c.intent {
                intents.push((rel.clone(), img, c.temps_from));
            }
            let touched = self
                .current
                .as_ref()
                .is_some_and(|cur| cur.touched.contains_key(&rel));
            if touched || todo.contains(&rel) {
                report.already.push(rel);
            } else {
                todo.push(rel);
            }
        }
        if todo.is_empty() {
            let intent_lines = self.intent_lines(&intents, &BTreeMap::new());
            if !intent_lines.is_empty() {
                let mut lines = self.pending_after_lines();
                lines.extend(intent_lines);
                self.append_journal(&lines)?;
                if let Some(cur) = self.current.as_mut() {
                    cur.after_dirty.clear();
                }
            }
            return Ok(report);
        }
        let files_dir = self.sidecar.dir.join(files_rel(number));
        let base_index = self.sidecar.turns.get(&number).map_or(0, |t| t.files.len());
        let this = &*self;
        let (staged, gaps) = (|| -> Result<(Staged, Vec<Gap>)> {
            let mut pending: Vec<Pending> = Vec::new();
            let mut entries: Vec<FileEntry> = Vec::new();
            let mut gaps: Vec<Gap> = Vec::new();
            // Spawned at the first large before-image of the call, if any.
            let mut hasher: Option<Hasher> = None;
            for rel in &todo {
                let index = base_index + entries.len();
                let Some((mut entry, job)) =
                    this.capture_one(&root, rel, index, &files_dir, tool, &mut gaps)?
                else {
                    continue;
                };
                if let Some(job) = job {
                    if hasher.is_none() && job.len >= PIPELINE_MIN_BYTES {
                        hasher = Hasher::spawn();
                    }
                    let pipelined = hasher.as_mut().filter(|_| job.len >= PIPELINE_MIN_BYTES);
                    let (sha256, len) = match pipelined {
                        Some(h) => (None, copy_teed(&this.opts.fs, &job, h, entries.len())?),
                        None => {
                            let mut out = &job.out;
                            let c =
                                copy_hashed(&job.src, Some(&mut out)).map_err(|e| copy_error(&job.abs, e))?;
                            this.opts.fs.start_writeback(&job.out);
                            (Some(c.sha256), c.len)
                        }
                    };
                    fill_before(&mut entry, sha256, len);
                    pending.push(Pending {
                        file: job.out,
                        path: job.path,
                    });
                }
                entries.push(entry);
            }
            // One barrier makes the payloads of this call durable (each file, then their directory
            // once). Large ones: the payloads are synced on a helper while this thread syncs their
            // directory and waits for the digests. Only then is the record told about them.
            let fs_ = &this.opts.fs;
            let payloads: Vec<(&File, &Path)> = pending.iter().map(|p| (&p.file, p.path.as_path())).collect();
            match hasher {
                None => {
                    for (f, p) in &payloads {
                        fs_.sync_file(f, "sync_payload").at("sync", p)?;
                    }
                    if !payloads.is_empty() {
                        fs_.sync_dir(&files_dir).at("sync", &files_dir)?;
                    }
                }
                Some(h) => {
                    let syncing = fs_
                        .sync_files_later(&payloads, "sync_payload")
                        .map_err(sync_error)?;
                    let here = (|| -> Result<()> {
                        fs_.sync_dir(&files_dir).at("sync", &files_dir)?;
                        digests_into(&mut entries, h.finish()?, &files_dir, base_index)
                    })();
                    let synced = syncing.join().map_err(sync_error);
                    here?;
                    synced?;
                }
            }
            Ok((this.stage_entries(number, entries, &gaps)?, gaps))
        })()
        .inspect_err(|_| {
            // Payloads this call created are referenced by nothing: a full disk must not keep
            // their bytes (the next capture would have less room still).
            for i in base_index..base_index + todo.len() {
                let _ = fs::remove_file(files_dir.join(payload_name(i)));
            }
        })?;
        // Publish: journal lines that reference only durable payloads (one append, one fsync).
        // Only then does the store remember the capture, so a failed call leaves the paths
        // untouched and a retry captures them again.
        // After-images recorded before this call go first: they are about entries already there.
        let mut lines = self.pending_after_lines();
        lines.extend(staged.lines);
        let base = self.sidecar.turns.get(&number).map_or(0, |t| t.files.len());
        let new_indices: BTreeMap<RelPath, usize> = staged
            .entries
            .iter()
            .enumerate()
            .filter_map(|(k, e)| Some((e.path.safe()?.clone(), base + k)))
            .collect();
        lines.extend(self.intent_lines(&intents, &new_indices));
        if let Err(e) = self.append_journal(&lines) {
            for i in base_index..base_index + todo.len() {
                let _ = fs::remove_file(files_dir.join(payload_name(i)));
            }
            return Err(e);
        }
        self.sidecar.state.mutation_seq = staged.seq;
        let added: u64 = staged.entries.iter().map(FileEntry::payload_bytes).sum();
        let mut indices: BTreeMap<RelPath, Option<usize>> = todo.iter().map(|r| (r.clone(), None)).collect();
        if let Some(turn) = self.sidecar.turns.get_mut(&number) {
            for e in staged.entries {
                if let Some(rel) = e.path.safe() {
                    indices.insert(rel.clone(), Some(turn.files.len()));
                }
                turn.files.push(e);
            }
            if let Some(gaps) = staged.gaps {
                turn.gaps = gaps;
            }
        }
        if let Some(cur) = self.current.as_mut() {
            cur.touched.extend(indices);
            cur.after_dirty.clear();
            cur.payload_bytes += added;
        }
        report.captured = todo;
        report.gaps = gaps;
        self.prune()?;
        Ok(report)
    }

    /// The call's `entries` and `gaps` as they join turn `number`, and the journal lines that say
    /// so; nothing in the store changes (the turn is not copied: a call costs the same however many
    /// entries the turn already has).
    fn stage_entries(&self, number: u64, entries: Vec<FileEntry>, gaps: &[Gap]) -> Result<Staged> {
        let turn = self
            .sidecar
            .turns
            .get(&number)
            .ok_or(CheckpointError::UnknownTurn(number))?;
        let mut seq = self.sidecar.state.mutation_seq;
        let mut lines = Vec::new();
        let mut staged = Vec::with_capacity(entries.len());
        for mut e in entries {
            seq += 1;
            e.seq = Some(seq);
            lines.push(JournalLine {
                index: Some(turn.files.len() + staged.len()),
                entry: Some(file_to_raw(&e)),
                ..JournalLine::default()
            });
            staged.push(e);
        }
        let mut all = None;
        if !gaps.is_empty() {
            let mut with = turn.gaps.clone();
            for g in gaps {
                if let Some(now) = add_gap(&mut with, g.clone()) {
                    lines.push(JournalLine {
                        gap: Some(gap_to_raw(&now)),
                        ..JournalLine::default()
                    });
                }
            }
            all = Some(with);
        }
        Ok(Staged {
            entries: staged,
            gaps: all,
            seq,
            lines,
        })
    }

    /// Inspects one path. Returns its entry and, for a file whose bytes are kept, the payload file
    /// created for them (the caller copies the bytes and fills in the entry's SHA-256 and size), or
    /// `None` when the file could not be read (an `unreadable` gap is recorded instead).
    fn capture_one(
        &self,
        root: &Path,
        rel: &RelPath,
        index: usize,
        files_dir: &Path,
        tool: Option<&str>,
        gaps: &mut Vec<Gap>,
    ) -> Result<Option<(FileEntry, Option<ToCopy>)>> {
        let gap = |reason: GapReason, detail: Option<String>| Gap {
            reason,
            tool: tool.map(str::to_string),
            path: Some(rel.to_lossy()),
            detail,
        };
        let abs = rel.under(root);
        // Ancestors that do not exist yet: the tool about to write the file creates them, and a
        // restore that deletes the file removes them again when it leaves them empty.
        let mut missing = Vec::new();
        let ancestors = rel.ancestors_top_down();
        for (k, anc) in ancestors.iter().enumerate() {
            match fs::symlink_metadata(anc.under(root)) {
                Ok(m) if m.file_type().is_symlink() => {
                    gaps.push(gap(GapReason::Symlink, Some(format!("`{anc}` is a symlink"))));
                    break;
                }
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    missing = ancestors[k..].to_vec();
                    break;
                }
                Err(_) => break,
            }
        }
        let entry_of = |before: Before| FileEntry {
            created_dirs: if before == Before::Absent {
                missing.clone()
            } else {
                Vec::new()
            },
            moved_to: None,
            path: EntryPath::Safe(rel.clone()),
            before,
            after: None,
            capture_source: Some("previewer".into()),
            seq: None,
        };
        let lmeta = match fs::symlink_metadata(&abs) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound || e.kind() == io::ErrorKind::NotADirectory => {
                return Ok(Some((entry_of(Before::Absent), None)));
            }
            Err(e) => return Err(e).at("inspect", &abs),
        };
        if lmeta.file_type().is_symlink() {
            gaps.push(gap(GapReason::Symlink, Some("the path is a symlink".into())));
        }
        match fs::metadata(&abs) {
            Ok(m) if m.is_dir() => return Err(CheckpointError::NotAFile { path: rel.to_lossy() }),
            Ok(m) if !m.is_file() => {
                // A FIFO, socket or device: opening it could block or consume data.
                gaps.push(gap(GapReason::Unreadable, Some("not a regular file".into())));
                return Ok(None);
            }
            _ => {}
        }
        let (file, meta) = match retrace_fsutil::open_read(&abs) {
            Ok(opened) => opened,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // A dangling symlink: nothing to keep.
                return Ok(Some((entry_of(Before::Absent), None)));
            }
            Err(e) => {
                // Permission denied, a socket, a device: the edit may still run, but its
                // before-image cannot be kept. Say so instead of failing the tool.
                gaps.push(gap(GapReason::Unreadable, Some(e.to_string())));
                return Ok(None);
            }
        };
        if meta.is_dir() {
            return Err(CheckpointError::NotAFile { path: rel.to_lossy() });
        }
        if meta.nlink() > 1 {
            gaps.push(gap(
                GapReason::Hardlink,
                Some(format!("{} hard links", meta.nlink())),
            ));
        }
        let mode = mode_bits(&meta);
        if meta.len() > self.opts.limits.max_file_bytes {
            let hashed = copy_hashed::<_, File>(&file, None).at("read", &abs)?;
            gaps.push(gap(
                GapReason::Oversized,
                Some(format!(
                    "{} bytes, over the {} byte cap",
                    hashed.len, self.opts.limits.max_file_bytes
                )),
            ));
            let before = Before::Present {
                sha256: Some(hashed.sha256),
                mode: Some(mode),
                size: Some(hashed.len),
                payload: Payload::NotKept,
            };
            return Ok(Some((entry_of(before), None)));
        }
        let payload_path = files_dir.join(payload_name(index));
        let out = self
            .opts
            .fs
            .create_file(&payload_path)
            .at("create", &payload_path)?;
        self.opts.fs.step("write_payload").at("write", &payload_path)?;
        let before = Before::Present {
            sha256: None,
            mode: Some(mode),
            size: None,
            payload: Payload::File(index),
        };
        Ok(Some((
            entry_of(before),
            Some(ToCopy {
                src: file,
                len: meta.len(),
                abs,
                out,
                path: payload_path,
            }),
        )))
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
        let n = read_full(&job.src, &mut buf).map_err(|e| copy_error(&job.abs, e))?;
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
