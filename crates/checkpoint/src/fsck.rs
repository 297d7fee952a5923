//! `fsck`: checks every record and payload and reports every problem, not just the first: what
//! loading found, then each turn's payloads, each transaction, the blobs, and the temp files an
//! interrupted write left in the sidecar or the workspace.

use std::collections::BTreeSet;
use std::fs;

use retrace_fsutil::hash_reader;
use retrace_protocol::{FsckProblem, FsckReport, Severity};

use crate::blobs::{list_blobs, referenced_blobs};
use crate::forward::ForwardAt;
use crate::layout::{blob_rel_path, files_rel, manifest_rel, payload_name, payload_rel, BLOBS_DIR};
use crate::memo::HashMemo;
use crate::model::{encode_inline, Before, FileEntry, Payload, Source, Turn};
use crate::rewind::RewindRecord;
use crate::sidecar::Sidecar;
use crate::tx::{Manifest, TxState};

/// What fsck found so far.
#[derive(Default)]
struct Findings {
    problems: Vec<FsckProblem>,
    /// Blobs and packs a record or manifest fsck read names (besides those `referenced_blobs`
    /// finds): never reported as unreferenced.
    blobs_seen: BTreeSet<String>,
}

impl Findings {
    fn push(
        &mut self,
        path: String,
        problem: String,
        severity: Severity,
        turn: Option<u64>,
        file: Option<String>,
    ) {
        self.problems.push(FsckProblem {
            path,
            problem,
            severity,
            turn,
            file,
        });
    }
}

impl Sidecar {
    /// Verifies every record and payload. Tombstones, superseded records and unreferenced blobs are
    /// `info`; anything that loses or corrupts data is an `error`.
    pub(crate) fn fsck(&self) -> FsckReport {
        let mut found = Findings {
            problems: self.load_problems.clone(),
            ..Findings::default()
        };
        for t in self.turns.values().filter(|t| t.source != Source::MarkerOnly) {
            self.check_turn(t, &mut found);
        }
        for m in self.transactions.values() {
            self.check_transaction(m, &mut found);
        }
        self.check_blobs(&mut found);
        self.check_temps(&mut found);
        FsckReport::from_problems(found.problems)
    }

    /// A turn's before-images, each against its record, then the payload files of a v3 turn that
    /// no entry names.
    fn check_turn(&self, t: &Turn, found: &mut Findings) {
        let mut referenced_payloads = BTreeSet::new();
        for (i, f) in t.files.iter().enumerate() {
            if let Some(name) = self.check_before_image(t, i, f, found) {
                referenced_payloads.insert(name);
            }
        }
        if t.source == Source::Log {
            found.problems.extend(self.end_problems(t));
            return;
        }
        if t.source != Source::V3 {
            return;
        }
        found.problems.extend(self.end_problems(t));
        let files_dir = self.dir.join(files_rel(t.number));
        let Ok(rd) = fs::read_dir(&files_dir) else {
            return;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !referenced_payloads.contains(&name) {
                found.push(
                    format!("{}/{name}", files_rel(t.number)),
                    "not referenced by the record (left by an interrupted capture)".into(),
                    Severity::Info,
                    Some(t.number),
                    None,
                );
            }
        }
    }

    /// Entry `i` (`f`) of turn `t`: its bytes, wherever they are, must be readable and hash to
    /// what the record says. Returns the name of the payload file it names, if any.
    fn check_before_image(&self, t: &Turn, i: usize, f: &FileEntry, found: &mut Findings) -> Option<String> {
        let file = Some(f.path.display());
        let Before::Present {
            sha256,
            payload,
            size,
            ..
        } = &f.before
        else {
            return None;
        };
        let sha256 = sha256.as_deref();
        match payload {
            Payload::File(idx) => {
                self.check_payload_file(t, *idx, sha256, *size, file, found);
                return Some(payload_name(*idx));
            }
            Payload::Log(s) => self.check_log_body(t, *s, sha256, file, found),
            Payload::Blob(h) => self.check_blob(t, i, h, sha256, file, found),
            Payload::Inline { text, encoding } => {
                check_inline(t, text, encoding.as_deref(), sha256, file, found)
            }
            // Reported with the record's other findings (the `blobRef` is no digest).
            Payload::NotKept | Payload::Expired | Payload::Corrupt(_) => {}
        }
        None
    }

    /// A log turn's before-image, its entry frame's body: its SHA-256 as recorded.
    fn check_log_body(
        &self,
        t: &Turn,
        s: crate::model::Slice,
        sha256: Option<&str>,
        file: Option<String>,
        found: &mut Findings,
    ) {
        let at = self.log_slice(t, s);
        let got = at.open().and_then(hash_reader);
        let why = match got {
            Err(e) => Some(format!("its before-image in the log cannot be read: {e}")),
            Ok((_, len)) if len != s.length => Some(format!(
                "the log ends inside its before-image at offset {}",
                s.offset
            )),
            Ok((h, _)) if sha256 != Some(h.as_str()) => Some(format!(
                "its before-image at offset {} hashes to {h} but the record says {}",
                s.offset,
                sha256.unwrap_or("nothing")
            )),
            Ok(_) => None,
        };
        if let Some(why) = why {
            found.push(t.record_path.clone(), why, Severity::Error, Some(t.number), file);
        }
    }

    /// A v3 payload, `turns/N/files/NNNN.before`: its SHA-256 and size as recorded.
    fn check_payload_file(
        &self,
        t: &Turn,
        idx: usize,
        sha256: Option<&str>,
        size: Option<u64>,
        file: Option<String>,
        found: &mut Findings,
    ) {
        let rel = payload_rel(t.number, idx);
        match retrace_fsutil::open_regular(&self.dir.join(&rel)).and_then(|(f, _)| hash_reader(f)) {
            Err(e) => found.push(
                rel,
                format!("payload cannot be read: {e}"),
                Severity::Error,
                Some(t.number),
                file,
            ),
            Ok((h, len)) => {
                if sha256 != Some(h.as_str()) {
                    found.push(
                        rel,
                        format!(
                            "payload hashes to {h} but the record says {}",
                            sha256.unwrap_or("nothing")
                        ),
                        Severity::Error,
                        Some(t.number),
                        file,
                    );
                } else if size.is_some_and(|s| s != len) {
                    found.push(
                        rel,
                        format!("payload is {len} bytes, the record says {}", size.unwrap_or(0)),
                        Severity::Error,
                        Some(t.number),
                        file,
                    );
                }
            }
        }
    }

    /// A v2 entry's blob `h`: hashing to its name, which is the entry's `sha256` too.
    fn check_blob(
        &self,
        t: &Turn,
        i: usize,
        h: &str,
        sha256: Option<&str>,
        file: Option<String>,
        found: &mut Findings,
    ) {
        let rel = blob_rel_path(h);
        found.blobs_seen.insert(h.to_string());
        match retrace_fsutil::open_regular(&self.dir.join(&rel)).and_then(|(f, _)| hash_reader(f)) {
            Err(e) => found.push(
                rel,
                format!("blob cannot be read: {e}"),
                Severity::Error,
                Some(t.number),
                file,
            ),
            Ok((got, _)) if got != h => found.push(
                rel,
                format!("blob content hashes to {got}, not to its name"),
                Severity::Error,
                Some(t.number),
                file,
            ),
            Ok(_) => {
                if sha256.is_some_and(|s| s != h) {
                    found.push(
                        t.record_path.clone(),
                        format!("entry {i}: blobRef and sha256 differ"),
                        Severity::Error,
                        Some(t.number),
                        file,
                    );
                }
            }
        }
    }

    /// A transaction: still open, its targets (a path that is none, a kept `.bak`, a recovery
    /// copy), and the forward images of one whose writes happened.
    fn check_transaction(&self, m: &Manifest, found: &mut Findings) {
        let rel = manifest_rel(&m.id);
        if !m.state.is_terminal() {
            // Its temp files still in the workspace (a process killed while preparing): said, so
            // that nobody takes them for stray files of their own.
            let temps = self.root.as_deref().map_or(0, |root| {
                m.targets
                    .iter()
                    .enumerate()
                    .filter_map(|(i, t)| Some(m.temp_path(root, &t.rel().ok()?, i)))
                    .filter(|p| std::fs::symlink_metadata(p).is_ok())
                    .count()
            });
            let left = match temps {
                0 => String::new(),
                n => format!(
                    "; {n} of its temp files (`.<name>.retrace-{}-<i>.tmp`, beside their targets) are in the workspace, and that open removes them",
                    m.id
                ),
            };
            found.push(
                rel.clone(),
                format!(
                    "transaction is {}: the next open for writing rolls it back, or, when something in the workspace stops it, keeps it open and says what{left}",
                    format!("{:?}", m.state).to_lowercase()
                ),
                Severity::Warning,
                m.turn,
                None,
            );
        }
        if let Some(Err(why)) = m.extra.as_ref().map(RewindRecord::from_stored) {
            found.push(
                rel.clone(),
                format!(
                    "its rewind record (`extra`) cannot be read: {why}; undoing this transaction is refused"
                ),
                Severity::Warning,
                m.turn,
                None,
            );
        }
        for (i, t) in m.targets.iter().enumerate() {
            let file = Some(t.path.clone());
            if t.rel().is_err() {
                found.push(
                    rel.clone(),
                    "target path is absolute, escapes or holds NUL".into(),
                    Severity::Error,
                    m.turn,
                    file.clone(),
                );
            }
            if let (false, Some(root), Ok(r)) = (m.state.is_terminal(), self.root.as_deref(), t.rel()) {
                let kept = m.kept_path(root, &r, i);
                if kept.exists() {
                    found.push(
                        rel.clone(),
                        format!(
                            "the file this transaction deleted was kept in `{}`: its path holds someone else's file now",
                            kept.display()
                        ),
                        Severity::Warning,
                        m.turn,
                        file.clone(),
                    );
                }
            }
            if let Some(copy) = &t.recovery_copy {
                found.push(
                    rel.clone(),
                    format!("content that matched neither image was kept in `{copy}`"),
                    Severity::Warning,
                    m.turn,
                    file.clone(),
                );
            }
            if matches!(m.state, TxState::Aborted | TxState::Prepared) || !t.forward.existed {
                continue;
            }
            self.check_forward_image(m, i, &rel, file, found);
        }
    }

    /// Target `i`'s forward image (of transaction `m`, whose manifest is `rel`): where the manifest
    /// says, and hashing to its SHA-256.
    fn check_forward_image(
        &self,
        m: &Manifest,
        i: usize,
        rel: &str,
        file: Option<String>,
        found: &mut Findings,
    ) {
        let t = &m.targets[i];
        let (Some(sha), Some(at)) = (&t.forward.sha256, self.forward_at(m, i)) else {
            found.push(
                rel.to_string(),
                "forward image has no SHA-256".into(),
                Severity::Error,
                m.turn,
                file,
            );
            return;
        };
        let shown = at
            .path()
            .strip_prefix(&self.dir)
            .unwrap_or(at.path())
            .to_string_lossy()
            .into_owned();
        if let ForwardAt::Pack { path, .. } = &at {
            if let Some(name) = path.file_name() {
                found.blobs_seen.insert(name.to_string_lossy().into_owned());
            }
        } else {
            found.blobs_seen.insert(sha.clone());
        }
        if let Some(why) = HashMemo::default().verify_forward(&at, sha) {
            found.push(
                shown,
                format!("forward image of transaction {}: {why}", m.id),
                Severity::Error,
                m.turn,
                file,
            );
        }
    }

    /// Blobs and packs nothing references.
    fn check_blobs(&self, found: &mut Findings) {
        match referenced_blobs(&self.dir) {
            Ok(Some(referenced)) => {
                if let Ok(all) = list_blobs(&self.dir) {
                    for (name, rel) in all {
                        if !referenced.contains(&name) && !found.blobs_seen.contains(&name) {
                            found.push(rel, "unreferenced blob".into(), Severity::Info, None, None);
                        }
                    }
                }
            }
            Ok(None) => {}
            Err(e) => found.push(
                BLOBS_DIR.into(),
                format!("cannot list blobs: {e}"),
                Severity::Warning,
                None,
                None,
            ),
        }
    }

    /// Temp files an interrupted write left: in the sidecar, and the edit tools' in the workspace.
    fn check_temps(&self, found: &mut Findings) {
        if let Ok(rd) = fs::read_dir(&self.dir) {
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') && name.ends_with(".tmp") {
                    found.push(
                        name,
                        "temporary file left by an interrupted write".into(),
                        Severity::Info,
                        None,
                        None,
                    );
                }
            }
        }
        // The edit tools' temp files that recovery left in the workspace (their process still
        // runs, or their directory is behind a symlink): named, never removed here.
        for (path, pid) in self.stray_tool_temps() {
            found.push(
                path,
                format!(
                    "in the workspace: named like the temp file of an edit tool's interrupted write (process {pid}); the next open of the session removes it only if a crashed turn of this session journaled that process, so if it is yours it stays: remove it yourself if it is not"
                ),
                Severity::Warning,
                None,
                None,
            );
        }
    }
}

/// A v1/v2 entry's inline text: re-encoded exactly, to the recorded SHA-256 when there is one.
fn check_inline(
    t: &Turn,
    text: &str,
    encoding: Option<&str>,
    sha256: Option<&str>,
    file: Option<String>,
    found: &mut Findings,
) {
    match encode_inline(text, encoding) {
        None => found.push(
            t.record_path.clone(),
            match encoding.unwrap_or("utf-8") {
                "lossy utf-8" => "inline content was decoded lossily (the file was neither \
                                  UTF-8 nor GB18030) and its bytes are not kept elsewhere"
                    .to_string(),
                other => format!("inline content cannot be re-encoded as {other}"),
            },
            Severity::Error,
            Some(t.number),
            file,
        ),
        Some(bytes) => {
            if let Some(want) = sha256 {
                let got = retrace_fsutil::sha256_bytes(&bytes);
                if got != want {
                    found.push(
                        t.record_path.clone(),
                        format!("inline content hashes to {got}, the record says {want}"),
                        Severity::Error,
                        Some(t.number),
                        file,
                    );
                }
            }
        }
    }
}
