//! `fsck` of a turn's end pack (`turns/N/end.pack`, FORMATS.md §5.1): every range a record names
//! must be there and hash to the end state it records; a pack no entry names is left over.

use std::io::{Read, Seek, SeekFrom};

use retrace_fsutil::hash_reader;
use retrace_protocol::{FsckProblem, Severity};

use crate::layout::end_pack_rel;
use crate::model::Turn;
use crate::sidecar::Sidecar;

impl Sidecar {
    /// What is wrong with turn `t`'s end pack, if anything.
    pub(crate) fn end_problems(&self, t: &Turn) -> Vec<FsckProblem> {
        let (rel, path) = match t.source {
            crate::model::Source::Log => (t.record_path.clone(), self.end_store(t)),
            _ => (end_pack_rel(t.number), self.dir.join(end_pack_rel(t.number))),
        };
        let problem = |problem: String, severity: Severity, file: Option<String>| FsckProblem {
            path: rel.clone(),
            problem,
            severity,
            turn: Some(t.number),
            file,
        };
        let kept: Vec<_> = t
            .files
            .iter()
            .filter_map(|f| {
                let e = f.end.as_ref()?;
                Some((f.path.display(), e.kept?, e.image.sha256.clone()))
            })
            .collect();
        if kept.is_empty() {
            if t.source == crate::model::Source::Log {
                return Vec::new();
            }
            return match std::fs::symlink_metadata(&path) {
                Ok(_) => vec![problem(
                    "not referenced by the record (left by a turn end a crash interrupted)".into(),
                    Severity::Info,
                    None,
                )],
                Err(_) => Vec::new(),
            };
        }
        let mut out = Vec::new();
        for (file, slice, sha) in kept {
            let read = retrace_fsutil::open_regular_nofollow(&path).and_then(|(mut f, meta)| {
                if slice.offset.saturating_add(slice.length) > meta.len() {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!("the pack ({} bytes) ends inside the range", meta.len()),
                    ));
                }
                f.seek(SeekFrom::Start(slice.offset))?;
                hash_reader(f.take(slice.length))
            });
            match read {
                Err(e) => out.push(problem(
                    format!(
                        "the file's end state (bytes {}..{}) cannot be read: {e}; the turn's results lose it",
                        slice.offset,
                        slice.offset.saturating_add(slice.length)
                    ),
                    Severity::Error,
                    Some(file),
                )),
                Ok((h, _)) if sha.as_deref() != Some(h.as_str()) => out.push(problem(
                    format!(
                        "the file's end state hashes to {h} but the record says {}; the turn's results lose it",
                        sha.as_deref().unwrap_or("nothing")
                    ),
                    Severity::Error,
                    Some(file),
                )),
                Ok(_) => {}
            }
        }
        out
    }
}
