//! `fsck`: checks every record and payload and reports every problem, not just the first.

use std::collections::BTreeSet;
use std::fs;

use retrace_fsutil::hash_reader;
use retrace_protocol::{FsckProblem, FsckReport, Severity};

use crate::blobs::{list_blobs, referenced_blobs};
use crate::layout::{blob_rel_path, files_rel, manifest_rel, payload_name, payload_rel, BLOBS_DIR};
use crate::model::{encode_inline, Before, Payload, Source};
use crate::sidecar::Sidecar;

impl Sidecar {
    /// Verifies every record and payload. Tombstones, superseded records and unreferenced blobs are
    /// `info`; anything that loses or corrupts data is an `error`.
    pub(crate) fn fsck(&self) -> FsckReport {
        let mut problems: Vec<FsckProblem> = self.load_problems.clone();
        let mut push =
            |path: String, problem: String, severity: Severity, turn: Option<u64>, file: Option<String>| {
                problems.push(FsckProblem {
                    path,
                    problem,
                    severity,
                    turn,
                    file,
                });
            };
        let mut blobs_seen = BTreeSet::new();
        for t in self.turns.values() {
            if t.source == Source::MarkerOnly {
                continue;
            }
            let mut referenced_payloads = BTreeSet::new();
            for (i, f) in t.files.iter().enumerate() {
                let file = Some(f.path.display());
                let Before::Present {
                    sha256,
                    payload,
                    size,
                    ..
                } = &f.before
                else {
                    continue;
                };
                match payload {
                    Payload::File(idx) => {
                        let rel = payload_rel(t.number, *idx);
                        referenced_payloads.insert(payload_name(*idx));
                        match retrace_fsutil::open_regular(&self.dir.join(&rel))
                            .and_then(|(f, _)| hash_reader(f))
                        {
                            Err(e) => push(
                                rel,
                                format!("payload cannot be read: {e}"),
                                Severity::Error,
                                Some(t.number),
                                file,
                            ),
                            Ok((h, len)) => {
                                if sha256.as_deref() != Some(h.as_str()) {
                                    push(
                                        rel,
                                        format!(
                                            "payload hashes to {h} but the record says {}",
                                            sha256.as_deref().unwrap_or("nothing")
                                        ),
                                        Severity::Error,
                                        Some(t.number),
                                        file,
                                    );
                                } else if size.is_some_and(|s| s != len) {
                                    push(
                                        rel,
                                        format!(
                                            "payload is {len} bytes, the record says {}",
                                            size.unwrap_or(0)
                                        ),
                                        Severity::Error,
                                        Some(t.number),
                                        file,
                                    );
                                }
                            }
                        }
                    }
                    Payload::Blob(h) => {
                        let rel = blob_rel_path(h);
                        blobs_seen.insert(h.clone());
                        match retrace_fsutil::open_regular(&self.dir.join(&rel))
                            .and_then(|(f, _)| hash_reader(f))
                        {
                            Err(e) => push(
                                rel,
                                format!("blob cannot be read: {e}"),
                                Severity::Error,
                                Some(t.number),
                                file,
                            ),
                            Ok((got, _)) if got != *h => push(
                                rel,
                                format!("blob content hashes to {got}, not to its name"),
                                Severity::Error,
                                Some(t.number),
                                file,
                            ),
                            Ok(_) => {
                                if sha256.as_deref().is_some_and(|s| s != h) {
                                    push(
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
                    Payload::Inline { text, encoding } => match encode_inline(text, encoding.as_deref()) {
                        None => push(
                            t.record_path.clone(),
                            match encoding.as_deref().unwrap_or("utf-8") {
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
                                if got != *want {
                                    push(
                                        t.record_path.clone(),
                                        format!("inline content hashes to {got}, the record says {want}"),
                                        Severity::Error,
                                        Some(t.number),
                                        file,
                                    );
                                }
                            }
                        }
                    },
                    // Reported with the record's other findings (the `blobRef` is no digest).
                    Payload::NotKept | Payload::Expired | Payload::Corrupt(_) => {}
                }
            }
            if t.source == Source::V3 {
                let files_dir = self.dir.join(files_rel(t.number));
                if let Ok(rd) = fs::read_dir(&files_dir) {
                    for e in rd.flatten() {
                        let name = e.file_name().to_string_lossy().into_owned();
                        if !referenced_payloads.contains(&name) {
                            push(
                                format!("{}/{name}", files_rel(t.number)),
                                "not referenced by the record (left by an interrupted capture)".into(),
                                Severity::Info,
                                Some(t.number),
                                None,
                            );
                        }
                    }
                }
            }
        }
        for m in self.transactions.values() {
            let rel = manifest_rel(&m.id);
            if !m.state.is_terminal() {
                push(
                    rel.clone(),
                    format!(
                        "transaction is {}: the next open for writing rolls it back, or, when something in the workspace stops it, keeps it open and says what",
                        format!("{:?}", m.state).to_lowercase()
                    ),
                    Severity::Warning,
                    m.turn,
                    None,
                );
            }
            for (i, t) in m.targets.iter().enumerate() {
                let file = Some(t.path.clone());
                if t.rel().is_err() {
                    push(
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
                        push(
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
                    push(
                        rel.clone(),
                        format!("content that matched neither image was kept in `{copy}`"),
                        Severity::Warning,
                        m.turn,
                        file.clone(),
                    );
                }
                if matches!(
                    m.state,
                    crate::tx::TxState::Aborted | crate::tx::TxState::Prepared
                ) || !t.forward.existed
                {
                    continue;
                }
                let (Some(sha), Some(at)) = (&t.forward.sha256, self.forward_at(m, i)) else {
                    push(
                        rel.clone(),
                        "forward image has no SHA-256".into(),
                        Severity::Error,
                        m.turn,
                        file,
                    );
                    continue;
                };
                let shown = at
                    .path()
                    .strip_prefix(&self.dir)
                    .unwrap_or(at.path())
                    .to_string_lossy()
                    .into_owned();
                if let crate::forward::ForwardAt::Pack { path, .. } = &at {
                    if let Some(name) = path.file_name() {
                        blobs_seen.insert(name.to_string_lossy().into_owned());
                    }
                } else {
                    blobs_seen.insert(sha.clone());
                }
                if let Some(why) = crate::memo::HashMemo::default().verify_forward(&at, sha) {
                    push(
                        shown,
                        format!("forward image of transaction {}: {why}", m.id),
                        Severity::Error,
                        m.turn,
                        file,
                    );
                }
            }
        }
        match referenced_blobs(&self.dir) {
            Ok(Some(referenced)) => {
                if let Ok(all) = list_blobs(&self.dir) {
                    for (name, rel) in all {
                        if !referenced.contains(&name) && !blobs_seen.contains(&name) {
                            push(rel, "unreferenced blob".into(), Severity::Info, None, None);
                        }
                    }
                }
            }
            Ok(None) => {}
            Err(e) => push(
                BLOBS_DIR.into(),
                format!("cannot list blobs: {e}"),
                Severity::Warning,
                None,
                None,
            ),
        }
        if let Ok(rd) = fs::read_dir(&self.dir) {
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') && name.ends_with(".tmp") {
                    push(
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
            push(
                path,
                format!(
                    "in the workspace: named like the temp file of an edit tool's interrupted write (process {pid}); the next open of the session removes it only if a crashed turn of this session journaled that process, so if it is yours it stays: remove it yourself if it is not"
                ),
                Severity::Warning,
                None,
                None,
            );
        }
        FsckReport::from_problems(problems)
    }
}
