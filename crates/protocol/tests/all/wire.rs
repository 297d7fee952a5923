//! The wire names frontends print (`as_str`) are exactly what serde writes, for every enum that has
//! both, and the shapes a frontend sends in requests parse with their defaults.

use retrace_protocol::*;
use serde_json::json;

fn same<T: serde::Serialize>(v: T, name: &str) {
    assert_eq!(serde_json::to_value(v).unwrap(), name);
}

#[test]
fn as_str_is_the_serde_name() {
    for r in [Role::System, Role::User, Role::Assistant, Role::Tool] {
        same(r, r.as_str());
    }
    for k in [
        HeadKind::Main,
        HeadKind::Fork,
        HeadKind::Rewind,
        HeadKind::Summary,
    ] {
        same(k, k.as_str());
    }
    for c in [
        Coverage::Legacy,
        Coverage::Partial,
        Coverage::Complete,
        Coverage::None,
    ] {
        same(c, c.as_str());
    }
    for c in ErrorCode::ALL {
        same(c, c.as_str());
    }
    for r in [
        ConflictReason::PathUnsafe,
        ConflictReason::MissingPayload,
        ConflictReason::Unverified,
        ConflictReason::LegacyUnverified,
        ConflictReason::DeletedAndRecreated,
        ConflictReason::ExternalChange,
        ConflictReason::ModeChange,
        ConflictReason::ManualEdit,
        ConflictReason::TypeChange,
        ConflictReason::Unreadable,
    ] {
        same(r, r.as_str());
    }
    for a in [
        FileAction::Write,
        FileAction::Delete,
        FileAction::Unchanged,
        FileAction::Skip,
    ] {
        same(a, a.as_str());
    }
}

#[test]
fn requests_parse_with_their_defaults() {
    let c: CommitRewind = serde_json::from_value(json!({"plan_id": "p"})).unwrap();
    assert_eq!(
        c,
        CommitRewind {
            plan_id: "p".into(),
            confirm: false,
            on_conflict: OnConflict::Refuse,
            in_place: true
        }
    );
    let f: ForkRequest = serde_json::from_value(json!({"turn": 2})).unwrap();
    assert!(f.select && f.name.is_none());
    let s: SummarizeRequest = serde_json::from_value(json!({"turn": 1, "direction": "up_to"})).unwrap();
    assert_eq!(s.direction, SummarizeDirection::UpTo);
    let a: ApprovalAnswer = serde_json::from_value(json!({"decision": "session"})).unwrap();
    assert_eq!(a.decision, ApprovalDecision::Session);
}

#[test]
fn errors_serialise_with_code_message_and_details() {
    let e = Error::not_found(Missing::Turn, "9", "there is no turn 9 in this session");
    assert_eq!(
        serde_json::to_value(&e).unwrap(),
        json!({"code": "not_found", "message": "there is no turn 9 in this session",
               "details": {"kind": "not_found", "what": "turn", "id": "9"}})
    );
    let busy = Error::new(ErrorCode::Busy, "held").with_details(ErrorDetails::Holder {
        holder: "pid 1".into(),
    });
    assert_eq!(
        serde_json::to_value(&busy).unwrap()["details"],
        json!({"kind": "holder", "holder": "pid 1"})
    );
}

/// Events and transcripts written before token usage and retry details existed still parse, and the
/// new fields are left out when they have no value.
#[test]
fn usage_and_retry_fields_are_optional() {
    let old: Event = serde_json::from_value(json!({"type": "turn_finished", "turn": 3, "ok": true})).unwrap();
    assert_eq!(
        old,
        Event::TurnFinished {
            turn: 3,
            ok: true,
            error: None,
            usage: None,
        }
    );
    let notice: Event = serde_json::from_value(json!({"type": "notice", "message": "hi"})).unwrap();
    assert_eq!(
        serde_json::to_value(&notice).unwrap(),
        json!({"type": "notice", "message": "hi"})
    );
    let step = Event::StepFinished {
        turn: 0,
        step: 1,
        finish_reason: None,
        usage: Some(TokenUsage {
            prompt_tokens: 5,
            completion_tokens: 1,
            total_tokens: 6,
            cached_tokens: 0,
        }),
    };
    assert_eq!(
        serde_json::to_value(&step).unwrap(),
        json!({"type": "step_finished", "turn": 0, "step": 1,
               "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}})
    );
    let entry: TranscriptEntry =
        serde_json::from_value(json!({"id": "m-1", "role": "assistant", "content": "ok"})).unwrap();
    assert_eq!(entry.usage, None);
}

#[test]
fn a_plan_file_carries_its_diff_flat_and_older_json_still_reads() {
    let old: PlanFile =
        serde_json::from_value(json!({"path": "a.txt", "action": "write", "size": 3})).unwrap();
    assert_eq!(old.diff, PlanDiff::default());
    let f = PlanFile {
        path: "a.txt".into(),
        action: FileAction::Write,
        size: Some(3),
        conflict: None,
        on_overwrite: None,
        diff: PlanDiff {
            text: "@@ -1 +1 @@\n-a\n+b\n".into(),
            added: 1,
            removed: 1,
            ..PlanDiff::default()
        },
    };
    let v = serde_json::to_value(&f).unwrap();
    assert_eq!(
        v,
        json!({"path": "a.txt", "action": "write", "says": "write", "size": 3,
               "diff": "@@ -1 +1 @@\n-a\n+b\n", "added": 1, "removed": 1, "binary": false})
    );
    assert_eq!(serde_json::from_value::<PlanFile>(v).unwrap(), f);
    let cut = PlanDiff {
        truncated: true,
        ..PlanDiff::default()
    };
    let v = serde_json::to_value(&cut).unwrap();
    assert_eq!(v["diff_truncated"], true);
    assert!(v.get("diff_deferred").is_none());
    assert!(cut.partial());
}
