//! A plan's diffs through the controller (SPEC §5.2): each file of a rewind's or a revert's plan
//! carries its diff, and the whole diff of one file is had on request while the plan is pending.

use crate::support::{delete, write, World};
use retrace_protocol::{
    CommitRewind, ErrorCode, FileAction, OnConflict, PrepareRevert, PrepareRewind, RewindScope,
};

#[test]
fn a_rewinds_plan_carries_each_files_diff_and_gives_the_whole_one_on_request() {
    let w = World::new();
    let h = w.open();
    w.turn(&h, "zero", vec![write("a.txt", "a0\n"), write("b.txt", "b0\n")]);
    w.turn(
        &h,
        "one",
        vec![write("a.txt", "a1\n"), delete("b.txt"), write("c.txt", "c1\n")],
    );
    let plan = w
        .run(h.prepare_rewind(PrepareRewind {
            turn: 1,
            scope: RewindScope::Code,
        }))
        .unwrap();
    let diffs: Vec<(&str, FileAction, &str)> = plan
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.action, f.diff.text.as_str()))
        .collect();
    assert_eq!(
        diffs,
        vec![
            ("a.txt", FileAction::Write, "@@ -1 +1 @@\n-a1\n+a0\n"),
            ("b.txt", FileAction::Write, "@@ -0,0 +1 @@\n+b0\n"),
            ("c.txt", FileAction::Delete, "@@ -1 +0,0 @@\n-c1\n"),
        ]
    );
    for f in &plan.files {
        let whole = w.run(h.plan_file_diff(&plan.plan_id, &f.path)).unwrap();
        assert_eq!((whole.path.as_str(), &whole.diff), (f.path.as_str(), &f.diff));
    }

    // A path the plan does not have; a plan that does not exist.
    let e = w.run(h.plan_file_diff(&plan.plan_id, "zzz.txt")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound, "{e:?}");
    let e = w.run(h.plan_file_diff("plan-nope", "a.txt")).unwrap_err();
    assert_eq!(e.code, ErrorCode::StalePlan, "{e:?}");

    // A file that changed since the plan was made: stale, preview again.
    w.put("a.txt", b"by hand\n");
    let e = w.run(h.plan_file_diff(&plan.plan_id, "a.txt")).unwrap_err();
    assert_eq!(e.code, ErrorCode::StalePlan, "{e:?}");
    assert!(e.message.contains("a.txt"), "{}", e.message);

    // The request changed nothing: the plan still commits (over the hand edit), single-use.
    w.put("a.txt", b"a1\n");
    w.run(h.commit_rewind(CommitRewind {
        plan_id: plan.plan_id.clone(),
        confirm: false,
        on_conflict: OnConflict::Refuse,
        in_place: true,
    }))
    .unwrap();
    assert_eq!(w.read("a.txt").unwrap(), b"a0\n");
    let e = w.run(h.plan_file_diff(&plan.plan_id, "a.txt")).unwrap_err();
    assert_eq!(e.code, ErrorCode::StalePlan, "{e:?}");
}

#[test]
fn a_reverts_plan_and_a_conversation_plan() {
    let w = World::new();
    let h = w.open();
    w.turn(&h, "zero", vec![write("a.txt", "one\n")]);
    w.turn(&h, "one", vec![write("a.txt", "two\n")]);
    let plan = w
        .run(h.prepare_revert(PrepareRevert {
            path: "a.txt".into(),
            version: None,
        }))
        .unwrap();
    assert_eq!(plan.files[0].diff.text, "@@ -1 +0,0 @@\n-two\n");
    let whole = w.run(h.plan_file_diff(&plan.plan_id, "a.txt")).unwrap();
    assert_eq!(whole.diff, plan.files[0].diff);

    // A conversation rewind has no files, so no diffs.
    let conv = w
        .run(h.prepare_rewind(PrepareRewind {
            turn: 1,
            scope: RewindScope::Conversation,
        }))
        .unwrap();
    let e = w.run(h.plan_file_diff(&conv.plan_id, "a.txt")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound, "{e:?}");
}
