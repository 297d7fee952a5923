//! The rewind record a transaction manifest keeps (`extra`, FORMATS §9.1.1): what a rewind did to
//! the conversation, so that undo can take it back. The controller writes it with every rewind and
//! revert; the store keeps it typed and versioned, and refuses to undo a transaction whose record
//! it cannot read rather than take it for a restore of files only.

use retrace_protocol::{HeadId, RewindScope};
use serde::{Deserialize, Serialize};

/// The version of the rewind record this build writes. Records without `version` (written before
/// it was recorded) are version 1: the same keys.
pub const REWIND_RECORD_VERSION: u32 = 1;

/// What a rewind did to the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindRecord {
    /// What was restored (`code` for a single-file revert too).
    pub scope: RewindScope,
    /// The turn rewound to.
    pub turn: u64,
    /// The head that was selected when the rewind was prepared.
    pub parent_head: HeadId,
    /// The head the rewind made, for `conversation` and `both`.
    pub new_head: Option<HeadId>,
    /// Messages on the new head when it was made: more means it was continued, and undo keeps it.
    pub base_messages: usize,
}

/// The record as stored, snake_case, `version` first.
#[derive(Serialize, Deserialize)]
struct Stored {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    version: Option<u64>,
    scope: RewindScope,
    turn: u64,
    parent_head: HeadId,
    #[serde(default)]
    new_head: Option<HeadId>,
    #[serde(default)]
    base_messages: usize,
}

impl RewindRecord {
    /// The record as a manifest stores it, with this build's `version`.
    pub fn to_stored(&self) -> serde_json::Value {
        let stored = Stored {
            version: Some(u64::from(REWIND_RECORD_VERSION)),
            scope: self.scope,
            turn: self.turn,
            parent_head: self.parent_head.clone(),
            new_head: self.new_head.clone(),
            base_messages: self.base_messages,
        };
        serde_json::to_value(stored).unwrap_or(serde_json::Value::Null)
    }

    /// Reads a stored record of any version this build knows (unknown keys are ignored); `Err`
    /// says why it cannot be read: a version this build does not know, a key missing or of the
    /// wrong type.
    pub fn from_stored(value: &serde_json::Value) -> Result<RewindRecord, String> {
        let version = match value.get("version") {
            None => 1,
            Some(v) => v
                .as_u64()
                .ok_or_else(|| format!("its `version` is {v}, not a version number"))?,
        };
        if version != u64::from(REWIND_RECORD_VERSION) {
            return Err(format!(
                "it is of version {version}, which this build does not know (it reads version {REWIND_RECORD_VERSION})"
            ));
        }
        let s = Stored::deserialize(value).map_err(|e| format!("it is not a rewind record: {e}"))?;
        Ok(RewindRecord {
            scope: s.scope,
            turn: s.turn,
            parent_head: s.parent_head,
            new_head: s.new_head,
            base_messages: s.base_messages,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn records_of_every_version_read_and_this_one_is_written_with_its_version() {
        // Written before records carried a version.
        let old = json!({
            "scope": "both", "turn": 3, "parent_head": "main", "new_head": "h-1234abcd", "base_messages": 5
        });
        let r = RewindRecord::from_stored(&old).unwrap();
        assert_eq!(r.scope, RewindScope::Both);
        assert_eq!(r.new_head, Some(HeadId::new("h-1234abcd")));
        let code =
            json!({"scope": "code", "turn": 1, "parent_head": "main", "new_head": null, "base_messages": 0});
        assert_eq!(RewindRecord::from_stored(&code).unwrap().new_head, None);
        let sparse = json!({"scope": "code", "turn": 1, "parent_head": "main"});
        assert_eq!(RewindRecord::from_stored(&sparse).unwrap().base_messages, 0);
        let mut now = old.clone();
        now["version"] = json!(1);
        assert_eq!(r.to_stored(), now);
        assert_eq!(RewindRecord::from_stored(&r.to_stored()).unwrap(), r);
    }

    #[test]
    fn a_record_that_cannot_be_read_says_why() {
        let newer = json!({"version": 2, "scope": "both", "turn": 3, "parent_head": "main"});
        let why = RewindRecord::from_stored(&newer).unwrap_err();
        assert!(why.contains("version 2"), "{why}");
        let odd = json!({"version": "one", "scope": "both", "turn": 3, "parent_head": "main"});
        assert!(RewindRecord::from_stored(&odd).unwrap_err().contains("`version`"));
        for broken in [
            json!({"turn": 3, "parent_head": "main"}),
            json!({"scope": "all", "turn": 3, "parent_head": "main"}),
            json!("both"),
        ] {
            let why = RewindRecord::from_stored(&broken).unwrap_err();
            assert!(why.contains("not a rewind record"), "{why}");
        }
    }
}
