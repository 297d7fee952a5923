//! A tool result's outcome as the log holds it: kept as raw JSON when the log is opened, read
//! when something asks for it.
//!
//! An outcome carries each change's unified diff, often several times the size of the rest of
//! its line. Opening a session replays the whole log on every `retrace exec`, and the model's
//! context never needs the outcome, so parsing it there made each turn pay again, on every later
//! open, for every diff the session ever logged (BENCHMARKS.md, "The session view's cost per
//! turn"). Kept raw, an outcome costs a scan of its bytes on open; the typed record is built
//! only where items are (a snapshot, `retrace transcript --items`).

use std::fmt;

use retrace_protocol::ToolRecord;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::diffs::StoredDiffs;

/// A tool result's outcome, parsed on demand ([`StoredOutcome::record`]).
#[derive(Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StoredOutcome(Box<RawValue>);

/// The outcome as a log line holds it: the record, and whether its diffs were kept apart.
#[derive(Serialize)]
struct Out<'a> {
    #[serde(flatten)]
    record: &'a ToolRecord,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    diffs_apart: bool,
}

#[derive(Deserialize)]
struct In {
    #[serde(flatten)]
    record: ToolRecord,
    #[serde(default)]
    diffs_apart: bool,
}

impl StoredOutcome {
    /// The outcome of a result about to be logged; `diffs_apart` when its changes' diffs were
    /// written to the session's diffs file (and emptied in `record`).
    pub(crate) fn new(record: &ToolRecord, diffs_apart: bool) -> StoredOutcome {
        let out = Out { record, diffs_apart };
        // Serializing plain strings, numbers and lists cannot fail; should it ever, the outcome
        // is stored as `null`, which reads back as "not recorded".
        serde_json::value::to_raw_value(&out)
            .map(StoredOutcome)
            .unwrap_or_else(|_| StoredOutcome(RawValue::NULL.to_owned()))
    }

    /// The typed record of tool message `message`, its diffs taken from `diffs` when they were
    /// kept apart (a change whose diff is missing there says so: `diff_lost`). `None` when the
    /// stored JSON is not a record (read as a result whose outcome was never recorded, as in
    /// older logs).
    pub fn record(&self, message: &str, diffs: &StoredDiffs) -> Option<ToolRecord> {
        let In {
            mut record,
            diffs_apart,
        } = serde_json::from_str(self.0.get()).ok()?;
        if diffs_apart {
            match diffs.of(message) {
                Some(texts) if texts.len() == record.changes.len() => {
                    for (c, t) in record.changes.iter_mut().zip(texts) {
                        c.diff.clone_from(t);
                    }
                }
                _ => {
                    for c in &mut record.changes {
                        c.diff_lost = c.diff.is_empty() && !c.binary && c.added + c.removed > 0;
                    }
                }
            }
        }
        Some(record)
    }

    /// The JSON text as the log holds it.
    pub fn json(&self) -> &str {
        self.0.get()
    }
}

impl PartialEq for StoredOutcome {
    fn eq(&self, other: &StoredOutcome) -> bool {
        self.0.get() == other.0.get()
    }
}

impl Eq for StoredOutcome {}

impl fmt::Debug for StoredOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("StoredOutcome").field(&self.0.get()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use retrace_protocol::{ChangeAction, FileChange, ToolStatus};

    fn record() -> ToolRecord {
        ToolRecord {
            status: ToolStatus::Ok,
            changes: vec![FileChange {
                path: "a.txt".into(),
                action: ChangeAction::Modify,
                from: None,
                diff: "@@ -1 +1 @@\n-a\n+b\n".into(),
                added: 1,
                removed: 1,
                binary: false,
                diff_truncated: false,
                diff_lost: false,
            }],
            gaps: Vec::new(),
            exit_code: None,
            duration_ms: None,
        }
    }

    fn through_a_line(stored: &StoredOutcome) -> StoredOutcome {
        let line = serde_json::to_string(stored).unwrap();
        let back: StoredOutcome = serde_json::from_str(&line).unwrap();
        assert_eq!(&back, stored);
        back
    }

    #[test]
    fn a_record_with_its_diffs_inline_round_trips() {
        let back = through_a_line(&StoredOutcome::new(&record(), false));
        assert!(!back.json().contains("diffs_apart"));
        assert_eq!(back.record("m", &StoredDiffs::default()), Some(record()));
    }

    #[test]
    fn diffs_kept_apart_are_joined_back_or_said_lost() {
        let mut stripped = record();
        let text = std::mem::take(&mut stripped.changes[0].diff);
        let back = through_a_line(&StoredOutcome::new(&stripped, true));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.diffs");
        crate::diffs::DiffsWriter::default()
            .append(&path, "m", &[text])
            .unwrap();
        assert_eq!(back.record("m", &StoredDiffs::read(&path)), Some(record()));
        let lost = back.record("other", &StoredDiffs::read(&path)).unwrap();
        assert!(lost.changes[0].diff_lost);
        assert!(lost.changes[0].diff.is_empty());
        assert_eq!((lost.changes[0].added, lost.changes[0].removed), (1, 1));
    }

    #[test]
    fn a_value_of_another_shape_reads_as_not_recorded() {
        let back: StoredOutcome = serde_json::from_str(r#"{"status":"exploded"}"#).unwrap();
        assert_eq!(back.record("m", &StoredDiffs::default()), None);
    }
}
