//! What a frontend is sent in words beside the wire names: a gap, a conflict and a plan's file
//! (what a restore does to it) serialize with `says`, made by [`crate::words`] when sent, so that
//! no frontend words a reason or an action itself. Sent only:
//! reading ignores `says`, and the session log stores a tool call's gaps without it
//! ([`stored_gaps`]).

use serde::{Serialize, Serializer};

use crate::{words, ChoiceFile, Conflict, FileAction, Gap, GapReason, PlanDiff, PlanFile, PlanGap};

/// A gap as sent: its fields, then `says`.
#[derive(Serialize)]
struct GapSent<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    turn: Option<u64>,
    reason: &'a GapReason,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    says: Option<String>,
}

impl<'a> GapSent<'a> {
    fn new(
        turn: Option<u64>,
        reason: &'a GapReason,
        tool: &'a Option<String>,
        path: &'a Option<String>,
        detail: &'a Option<String>,
    ) -> Self {
        GapSent {
            turn,
            reason,
            tool: tool.as_deref(),
            path: path.as_deref(),
            detail: detail.as_deref(),
            says: Some(words::gap_line(reason, path.as_deref(), detail.as_deref())),
        }
    }
}

impl Serialize for Gap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        GapSent::new(None, &self.reason, &self.tool, &self.path, &self.detail).serialize(s)
    }
}

impl Serialize for PlanGap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        GapSent::new(
            Some(self.turn),
            &self.reason,
            &self.tool,
            &self.path,
            &self.detail,
        )
        .serialize(s)
    }
}

/// A tool call's gaps as the session log stores them: without `says`.
pub(crate) fn stored_gaps<S: Serializer>(gaps: &[Gap], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(gaps.iter().map(|g| GapSent {
        says: None,
        ..GapSent::new(None, &g.reason, &g.tool, &g.path, &g.detail)
    }))
}

/// A conflict as sent: its fields, then `says`.
#[derive(Serialize)]
struct ConflictSent<'a> {
    path: &'a str,
    reason: crate::ConflictReason,
    checkpoint_sha256: &'a Option<String>,
    last_owned_sha256: &'a Option<String>,
    current_sha256: &'a Option<String>,
    checkpoint_mode: Option<u32>,
    current_mode: Option<u32>,
    says: String,
}

impl Serialize for Conflict {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ConflictSent {
            path: &self.path,
            reason: self.reason,
            checkpoint_sha256: &self.checkpoint_sha256,
            last_owned_sha256: &self.last_owned_sha256,
            current_sha256: &self.current_sha256,
            checkpoint_mode: self.checkpoint_mode,
            current_mode: self.current_mode,
            says: words::conflict(self),
        }
        .serialize(s)
    }
}

/// A plan's file as sent: its fields, `says` after its action.
#[derive(Serialize)]
struct PlanFileSent<'a> {
    path: &'a str,
    action: FileAction,
    says: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    conflict: Option<&'a Conflict>,
    #[serde(skip_serializing_if = "Option::is_none")]
    on_overwrite: Option<FileAction>,
    #[serde(flatten)]
    diff: &'a PlanDiff,
}

impl Serialize for PlanFile {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        PlanFileSent {
            path: &self.path,
            action: self.action,
            says: words::file_action(self.action),
            size: self.size,
            conflict: self.conflict.as_ref(),
            on_overwrite: self.on_overwrite,
            diff: &self.diff,
        }
        .serialize(s)
    }
}

/// What a choice does to a file, as sent: its fields, then `says`.
#[derive(Serialize)]
struct ChoiceFileSent<'a> {
    path: &'a str,
    action: FileAction,
    says: &'static str,
}

impl Serialize for ChoiceFile {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ChoiceFileSent {
            path: &self.path,
            action: self.action,
            says: words::file_action(self.action),
        }
        .serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ConflictReason, ToolRecord, ToolStatus};
    use serde_json::json;

    fn shell_gap() -> Gap {
        Gap {
            reason: GapReason::BashSideEffect,
            tool: Some("bash".into()),
            path: None,
            detail: Some("rm x".into()),
        }
    }

    #[test]
    fn a_gap_is_sent_with_its_words_and_read_back_without_them() {
        let v = serde_json::to_value(shell_gap()).unwrap();
        assert_eq!(
            v,
            json!({"reason": "bash_side_effect", "tool": "bash", "detail": "rm x",
                   "says": "rm x — a shell command: what it did to files is not tracked"})
        );
        assert_eq!(serde_json::from_value::<Gap>(v).unwrap(), shell_gap());
        let plan = PlanGap {
            turn: 2,
            reason: GapReason::Symlink,
            tool: None,
            path: Some("a/b".into()),
            detail: None,
        };
        let v = serde_json::to_value(&plan).unwrap();
        assert_eq!(
            v,
            json!({"turn": 2, "reason": "symlink", "path": "a/b", "says": "a/b — reached through a link"})
        );
        assert_eq!(serde_json::from_value::<PlanGap>(v).unwrap(), plan);
    }

    #[test]
    fn the_log_stores_a_calls_gaps_without_words() {
        let record = ToolRecord {
            status: ToolStatus::Ok,
            changes: Vec::new(),
            gaps: vec![shell_gap()],
            exit_code: None,
            duration_ms: None,
        };
        let v = serde_json::to_value(&record).unwrap();
        assert_eq!(
            v["gaps"],
            json!([{"reason": "bash_side_effect", "tool": "bash", "detail": "rm x"}])
        );
    }

    #[test]
    fn a_conflict_is_sent_with_its_words() {
        let c = Conflict {
            path: "a.txt".into(),
            reason: ConflictReason::ExternalChange,
            checkpoint_sha256: None,
            last_owned_sha256: None,
            current_sha256: None,
            checkpoint_mode: None,
            current_mode: None,
        };
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["says"], "already absent");
        assert_eq!(v["current_sha256"], serde_json::Value::Null);
        assert_eq!(serde_json::from_value::<Conflict>(v).unwrap(), c);
    }

    /// The words of a plan's file actions are the terminal UI's and the CLI's, sent so that no
    /// frontend words them itself ("keep" for a skipped file, "unchanged" for one already as it
    /// was); reading ignores them.
    #[test]
    fn a_plan_file_and_a_choice_file_are_sent_with_their_words() {
        let f = PlanFile {
            path: "a.txt".into(),
            action: FileAction::Skip,
            size: None,
            conflict: None,
            on_overwrite: Some(FileAction::Write),
            diff: PlanDiff {
                text: "@@ -1 +1 @@\n-a\n+b\n".into(),
                added: 1,
                removed: 1,
                ..PlanDiff::default()
            },
        };
        let v = serde_json::to_value(&f).unwrap();
        assert_eq!(
            (&v["action"], &v["says"], &v["on_overwrite"], &v["added"]),
            (&json!("skip"), &json!("keep"), &json!("write"), &json!(1)),
            "{v}"
        );
        assert_eq!(serde_json::from_value::<PlanFile>(v).unwrap(), f);
        for (action, says) in [
            (FileAction::Write, "write"),
            (FileAction::Delete, "delete"),
            (FileAction::Unchanged, "unchanged"),
            (FileAction::Skip, "keep"),
        ] {
            let c = ChoiceFile {
                path: "b.txt".into(),
                action,
            };
            let v = serde_json::to_value(&c).unwrap();
            assert_eq!(v["says"], says, "{v}");
            assert_eq!(serde_json::from_value::<ChoiceFile>(v).unwrap(), c);
        }
    }
}
