//! Capture (SPEC §4): before-images made durable before a tool runs, after-images recorded when it
//! has run, and gaps for what cannot be tracked.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use retrace_fsutil::{copy_hashed, RelPath};
use retrace_protocol::{ChangeKind, Gap, GapReason};

use crate::error::{CheckpointError, IoContext, Result};
use crate::model::{Before, EntryPath, FileEntry, Image, Payload};
use crate::state::Owned;
use crate::store::CheckpointStore;

/// One path a tool's preview says it will change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The path as the tool received it (relative to the workspace, or absolute under it).
    pub path: PathBuf,
    /// What the tool will do.
    pub kind: ChangeKind,
}

impl Change {
    /// A change of `path`.
    pub fn new(path: impl Into<PathBuf>, kind: ChangeKind) -> Change {
        Change {
            path: path.into(),
            kind,
        }
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

/// A payload written but not yet synced.
struct Pending {
    file: Option<File>,
    path: PathBuf,
}

/// Permission bits (including setuid/setgid/sticky) of a file.
pub fn mode_bits(meta: &fs::Metadata) -> u32 {
    meta.permissions().mode() & 0o7777
}

impl CheckpointStore {
    fn require_root(&self) -> Result<PathBuf> {
        self.root.clone().ok_or(CheckpointError::NoTurn)
    }

    /// Normalises a tool's path against the workspace root.
    pub fn normalize(&self, path: &Path) -> Result<RelPath> {
        let root = self.require_root()?;
        Ok(RelPath::normalize(&root, path)?)
    }

    /// Captures the before-image of every path in `changes` not yet touched in this turn, and makes it
    /// durable before returning. `tool` names the tool for gaps. On error nothing of this call is
    /// published, and the caller must refuse the edit.
    pub fn capture_before(&mut self, changes: &[Change], tool: Option<&str>) -> Result<CaptureReport> {
        let root = self.require_root()?;
        let Some(number) = self.current_turn() else {
            return Err(CheckpointError::NoTurn);
        };
        let mut report = CaptureReport::default();
        let mut todo: Vec<RelPath> = Vec::new();
        for c in changes {
            let rel = RelPath::normalize(&root, &c.path)?;
            let touched = self
                .current
                .as_ref()
                .is_some_and(|cur| cur.touched.contains(&rel));
            if touched || todo.contains(&rel) {
                report.already.push(rel);
            } else {
                todo.push(rel);
            }
        }
        if todo.is_empty() {
            return Ok(report);
        }
        let files_dir = self.turn_dir(number).join("files");
        let mut pending: Vec<Pending> = Vec::new();
        let mut entries: Vec<FileEntry> = Vec::new();
        let mut gaps: Vec<Gap> = Vec::new();
        let base_index = self.turns.get(&number).map_or(0, |t| t.files.len());
        for rel in &todo {
            let index = base_index + entries.len();
            if let Some((entry, p)) = self.capture_one(&root, rel, index, &files_dir, tool, &mut gaps)? {
                entries.push(entry);
                pending.extend(p);
            }
        }
        // One barrier for the payloads of this call: each file, then their directory once.
        let fs_ = self.opts.fs.clone();
        for p in &mut pending {
            if let Some(f) = p.file.take() {
                fs_.sync_file(&f, "sync_payload").at("sync", &p.path)?;
            }
        }
        if !pending.is_empty() {
            fs_.sync_dir(&files_dir).at("sync", &files_dir)?;
        }
        // Publish: the record now references the durable payloads.
        let turn = self
            .turns
            .get_mut(&number)
            .ok_or(CheckpointError::UnknownTurn(number))?;
        for mut e in entries {
            self.state.mutation_seq += 1;
            e.seq = Some(self.state.mutation_seq);
            turn.files.push(e);
        }
        for g in &gaps {
            turn.add_gap(g.clone());
        }
        if let Some(cur) = self.current.as_mut() {
            cur.touched.extend(todo.iter().cloned());
        }
        self.write_meta(number)?;
        report.captured = todo;
        report.gaps = gaps;
        self.prune()?;
        Ok(report)
    }

    /// Captures one path. Returns the entry and the payload to sync, or `None` when the file could not
    /// be read (an `unreadable` gap is recorded instead).
    fn capture_one(
        &self,
        root: &Path,
        rel: &RelPath,
        index: usize,
        files_dir: &Path,
        tool: Option<&str>,
        gaps: &mut Vec<Gap>,
    ) -> Result<Option<(FileEntry, Option<Pending>)>> {
        let gap = |reason: GapReason, detail: Option<String>| Gap {
            reason,
            tool: tool.map(str::to_string),
            path: Some(rel.to_lossy()),
            detail,
        };
        let abs = rel.under(root);
        for anc in rel.ancestors_top_down() {
            match fs::symlink_metadata(anc.under(root)) {
                Ok(m) if m.file_type().is_symlink() => {
                    gaps.push(gap(GapReason::Symlink, Some(format!("`{anc}` is a symlink"))));
                    break;
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        let entry_of = |before: Before| FileEntry {
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
        let file = match File::open(&abs) {
            Ok(f) => f,
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
        let meta = file.metadata().at("inspect", &abs)?;
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
        let payload_path = files_dir.join(format!("{index:04}.before"));
        let mut out = self
            .opts
            .fs
            .create_file(&payload_path)
            .at("create", &payload_path)?;
        self.opts.fs.step("write_payload").at("write", &payload_path)?;
        let copied = copy_hashed(&file, Some(&mut out)).map_err(|e| CheckpointError::Io {
            op: "copy the before-image of",
            path: abs.clone(),
            source: e,
        })?;
        let before = Before::Present {
            sha256: Some(copied.sha256),
            mode: Some(mode),
            size: Some(copied.len),
            payload: Payload::File(index),
        };
        Ok(Some((
            entry_of(before),
            Some(Pending {
                file: Some(out),
                path: payload_path,
            }),
        )))
    }

    /// Records the after-image of each path (successful tool or not): on this turn's entry and in
    /// `state.json`, each with a new mutation sequence.
    pub fn capture_after(&mut self, paths: &[PathBuf]) -> Result<()> {
        let root = self.require_root()?;
        let Some(number) = self.current_turn() else {
            return Err(CheckpointError::NoTurn);
        };
        let mut changed = false;
        for p in paths {
            let rel = RelPath::normalize(&root, p)?;
            let image = match image_of(&rel.under(&root)) {
                Ok(img) => img,
                Err(_) => {
                    // Unreadable after the write: Retrace cannot prove what is there.
                    self.state.owned.remove(&rel);
                    changed = true;
                    continue;
                }
            };
            self.state.mutation_seq += 1;
            let seq = self.state.mutation_seq;
            if let Some(turn) = self.turns.get_mut(&number) {
                if let Some(i) = turn.entry_index(&rel) {
                    turn.files[i].after = Some(image.clone());
                }
            }
            self.state.owned.insert(rel, Owned { image, seq });
            changed = true;
        }
        if changed {
            self.write_meta(number)?;
            self.write_state()?;
        }
        Ok(())
    }

    /// Adds a gap to the current turn (at most one per reason and path).
    pub fn record_gap(&mut self, gap: Gap) -> Result<()> {
        let Some(number) = self.current_turn() else {
            return Err(CheckpointError::NoTurn);
        };
        if let Some(turn) = self.turns.get_mut(&number) {
            turn.add_gap(gap);
        }
        self.write_meta(number)
    }
}

/// Existence, SHA-256 (streamed) and mode of the file at `abs` now.
pub fn image_of(abs: &Path) -> io::Result<Image> {
    let file = match File::open(abs) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound || e.kind() == io::ErrorKind::NotADirectory => {
            return Ok(Image {
                existed: false,
                sha256: None,
                mode: None,
            });
        }
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(io::Error::other("is a directory"));
    }
    let hashed = copy_hashed::<_, File>(&file, None)?;
    Ok(Image {
        existed: true,
        sha256: Some(hashed.sha256),
        mode: Some(mode_bits(&meta)),
    })
}
