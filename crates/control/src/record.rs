//! The conversation half of a rewind, kept with its transaction so that undo can take it back.
//!
//! It is stored in the transaction manifest's `extra` (`transactions/<id>.json`, see
//! `docs/FORMATS.md`); the checkpoint store keeps it opaque and this module is its one owner: it
//! is written and read only as [`RewindRecord`].

use retrace_protocol::{HeadId, RewindScope};
use serde::{Deserialize, Serialize};

/// What a rewind did to the conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RewindRecord {
    /// What was restored (`code` for a single-file revert too).
    pub(crate) scope: RewindScope,
    /// The turn rewound to.
    pub(crate) turn: u64,
    /// The head that was selected when the rewind was prepared.
    pub(crate) parent_head: HeadId,
    /// The head the rewind made, for `conversation` and `both`.
    #[serde(default)]
    pub(crate) new_head: Option<HeadId>,
    /// Messages on the new head when it was made: more means it was continued, and undo keeps it.
    #[serde(default)]
    pub(crate) base_messages: usize,
}

impl RewindRecord {
    /// The record as a manifest keeps it.
    pub(crate) fn to_extra(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// The record a manifest kept, if it has one this version understands.
    pub(crate) fn from_extra(extra: Option<&serde_json::Value>) -> Option<RewindRecord> {
        extra.and_then(|v| RewindRecord::deserialize(v).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_written_before_this_type_still_read() {
        let old = serde_json::json!({
            "scope": "both", "turn": 3, "parent_head": "main", "new_head": "h-1234abcd", "base_messages": 5
        });
        let r = RewindRecord::from_extra(Some(&old)).unwrap();
        assert_eq!(r.scope, RewindScope::Both);
        assert_eq!(r.new_head, Some(HeadId::new("h-1234abcd")));
        assert_eq!(r.to_extra(), old);
        let code = serde_json::json!({"scope": "code", "turn": 1, "parent_head": "main", "new_head": null, "base_messages": 0});
        assert_eq!(RewindRecord::from_extra(Some(&code)).unwrap().new_head, None);
        assert_eq!(RewindRecord::from_extra(None), None);
    }
}
