//! Capture (SPEC §4): the before-image of every path a tool is about to change, appended to the
//! log with the tool's intents and made durable before the tool runs (`keep.rs`: its bytes); a gap
//! for what cannot be tracked. What the tool left is recorded afterwards (`after.rs`).

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use retrace_fsutil::{copy_hashed, RelPath};
use retrace_protocol::{ChangeKind, Gap, GapReason};

use crate::error::{CheckpointError, IoContext, Result};
use crate::fsio::mode_bits;
use crate::keep::{body_of, Src, ToKeep};
use crate::logread::{Body, Header, Out};
use crate::model::{add_gap, Before, EntryPath, FileEntry, Image, Known, Payload};
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
    /// Cost: one append to the log (one `fdatasync`) keeps the before-images and publishes the
    /// entries with their intents. A call whose paths were all
    /// touched before in the turn costs that one append for its intents, nothing when it has none.
    pub fn capture_before(&mut self, changes: &[Change], tool: Option<&str>) -> Result<CaptureReport> {
        self.capture(changes, tool, None)
    }

    /// [`CheckpointStore::capture_before`], each path's before-image read from the disk, or given
    /// by `known` (path → what it was) for the paths it has.
    pub(crate) fn capture(
        &mut self,
        changes: &[Change],
        tool: Option<&str>,
        known: Option<&BTreeMap<RelPath, Known>>,
    ) -> Result<CaptureReport> {
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
        let base_index = self.sidecar.turns.get(&number).map_or(0, |t| t.files.len());
        let this = &*self;
        let mut entries: Vec<FileEntry> = Vec::new();
        let mut bodies: Vec<Body> = Vec::new();
        let mut gaps: Vec<Gap> = Vec::new();
        for rel in &todo {
            let one = match known.and_then(|k| k.get(rel)) {
                Some(k) => this.capture_known(&root, rel, k, tool, &mut gaps)?,
                None => this.capture_one(&root, rel, tool, &mut gaps)?,
            };
            let Some((mut entry, job)) = one else {
                continue;
            };
            let body = match job {
                Some(job) => body_of(job, &mut entry)?,
                None => Body::None,
            };
            entries.push(entry);
            bodies.push(body);
        }
        let staged = self.stage_entries(number, entries, &gaps)?;
        // Publish: after-images recorded before this call go first (they are about entries already
        // there), then each entry with its before-image's bytes, the gaps, the intents; one
        // append, one `fdatasync`. Only then does the store remember the capture, so a failed call
        // leaves the paths untouched and a retry captures them again.
        let mut frames = self.pending_after_frames();
        let first_entry = frames.len();
        let n_entries = staged.entries.len();
        let mut bodies = bodies.into_iter();
        for (k, l) in staged.lines.iter().enumerate() {
            let body = if k < n_entries {
                bodies.next().unwrap_or(Body::None)
            } else {
                Body::None
            };
            frames.push(Out {
                header: Header::line(number, l.clone()),
                body,
            });
        }
        let base = self.sidecar.turns.get(&number).map_or(0, |t| t.files.len());
        let new_indices: BTreeMap<RelPath, usize> = staged
            .entries
            .iter()
            .enumerate()
            .filter_map(|(k, e)| Some((e.path.safe()?.clone(), base + k)))
            .collect();
        frames.extend(
            self.intent_lines(&intents, &new_indices)
                .into_iter()
                .map(|l| Out::bare(Header::line(number, l))),
        );
        let slices = self.append_lines(number, frames)?;
        let mut staged = staged;
        for (k, e) in staged.entries.iter_mut().enumerate() {
            if let Before::Present { payload, .. } = &mut e.before {
                if matches!(payload, Payload::Log(_)) {
                    if let Some(w) = slices.get(first_entry + k) {
                        *payload = Payload::Log(w.slice);
                    }
                }
            }
        }
        let _ = base_index;
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

    /// Inspects one path. Returns its entry and, for a file whose bytes are kept, where to read them
    /// (the caller reads them and fills in the entry's SHA-256 and size), or `None` when the file
    /// could not be read (an `unreadable` gap is recorded instead).
    fn capture_one(
        &self,
        root: &Path,
        rel: &RelPath,
        tool: Option<&str>,
        gaps: &mut Vec<Gap>,
    ) -> Result<Option<(FileEntry, Option<ToKeep>)>> {
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
            end: None,
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
        let before = Before::Present {
            sha256: None,
            mode: Some(mode),
            size: None,
            payload: Payload::Log(crate::model::Slice { offset: 0, length: 0 }),
        };
        Ok(Some((
            entry_of(before),
            Some(ToKeep {
                src: Src::File(file),
                len: meta.len(),
                abs,
            }),
        )))
    }
}
