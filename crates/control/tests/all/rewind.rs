//! Controller-level rewind tests (SPEC §5.3, §5.5, §7), through a session handle: stale plans,
//! `both` refusing up front or ending `partial`, a file edited between preview and commit, undo of a
//! conversation rewind, and what a commit with and without `in_place` leaves selected. What cannot
//! be provoked through the CLI (a plan lives in one process) is tested here.

use crate::support::{delete, mv, users, write, World};
use retrace_control::SessionHandle;
use retrace_protocol::{
    CommitRevert, CommitRewind, ConflictReason, Error, ErrorCode, ErrorDetails, Event, FileAction,
    ForkRequest, ModelSpec, OnConflict, PlanBlocker, PrepareRevert, PrepareRewind, RewindPlan, RewindResult,
    RewindScope, Role, SummarizeDirection, SummarizeRequest, SwitchRequest, UndoRequest,
};

/// Turn 0 writes a.txt and b.txt; turn 1 edits a.txt, deletes b.txt and creates c.txt.
fn two_turns(w: &World) -> SessionHandle {
    let h = w.open();
    w.turn(&h, "zero", vec![write("a.txt", "a0\n"), write("b.txt", "b0\n")]);
    w.turn(
        &h,
        "one",
        vec![write("a.txt", "a1\n"), delete("b.txt"), write("c.txt", "c1\n")],
    );
    h
}

fn prepare(w: &World, h: &SessionHandle, turn: u64, scope: RewindScope) -> RewindPlan {
    w.run(h.prepare_rewind(PrepareRewind { turn, scope })).unwrap()
}

/// Commits `plan_id` unconfirmed: the current head stays selected (`in_place: false`) or the new
/// one is selected (`in_place: true`).
fn commit(
    w: &World,
    h: &SessionHandle,
    plan_id: &str,
    on_conflict: OnConflict,
    in_place: bool,
) -> Result<RewindResult, Error> {
    w.run(h.commit_rewind(CommitRewind {
        plan_id: plan_id.to_string(),
        confirm: false,
        on_conflict,
        in_place,
    }))
}

fn undo(w: &World, h: &SessionHandle, transaction_id: Option<&str>) -> Result<RewindResult, Error> {
    w.run(h.undo(UndoRequest {
        transaction_id: transaction_id.map(str::to_string),
    }))
}

fn switch(w: &World, h: &SessionHandle, head: &str) {
    w.run(h.switch(SwitchRequest {
        head: head.to_string(),
    }))
    .unwrap();
}

fn assert_stale(r: Result<RewindResult, Error>) {
    match r {
        Err(e) if e.code == ErrorCode::StalePlan => assert!(e.message.contains("stale_plan"), "{e:?}"),
        other => panic!("expected a stale plan, got {other:?}"),
    }
}

/// The conflicts an error lists, as (path, reason).
fn conflicts_of(e: &Error) -> Vec<(String, ConflictReason)> {
    match &e.details {
        Some(ErrorDetails::Conflicts { conflicts }) => {
            conflicts.iter().map(|c| (c.path.clone(), c.reason)).collect()
        }
        other => panic!("expected conflicts in the details, got {other:?} ({e:?})"),
    }
}

#[test]
fn a_plan_is_stale_after_another_turn() {
    let w = World::new();
    let h = two_turns(&w);
    let plan = prepare(&w, &h, 1, RewindScope::Code);
    w.turn(&h, "two", vec![write("d.txt", "d2\n")]);
    let files = w.files();
    assert_stale(commit(&w, &h, &plan.plan_id, OnConflict::Refuse, false));
    assert_eq!(w.files(), files, "a stale plan writes nothing");
    // Even a turn that writes no file moves the generation on.
    let plan = prepare(&w, &h, 1, RewindScope::Conversation);
    w.turn(&h, "three", vec![]);
    assert_stale(commit(&w, &h, &plan.plan_id, OnConflict::Refuse, true));
    assert_eq!(w.heads(&h).len(), 1, "no head was made");
}

#[test]
fn a_plan_is_stale_after_a_head_change() {
    let w = World::new();
    let h = two_turns(&w);
    let main = w.head(&h);
    let fork = w
        .run(h.fork(ForkRequest {
            turn: 1,
            name: Some("f".into()),
            select: false,
        }))
        .unwrap();

    let plan = prepare(&w, &h, 1, RewindScope::Code);
    switch(&w, &h, fork.head_id.as_str());
    assert_stale(commit(&w, &h, &plan.plan_id, OnConflict::Refuse, false));

    switch(&w, &h, main.as_str());
    let plan = prepare(&w, &h, 1, RewindScope::Conversation);
    w.run(h.fork(ForkRequest {
        turn: 0,
        name: None,
        select: false,
    }))
    .unwrap();
    assert_stale(commit(&w, &h, &plan.plan_id, OnConflict::Refuse, false));
    assert_eq!(w.read("a.txt").unwrap(), b"a1\n");
}

#[test]
fn a_plan_is_stale_after_another_write_by_retrace() {
    let w = World::new();
    let h = two_turns(&w);
    // A file revert is a write by Retrace outside any turn: it moves the generation on.
    let plan = prepare(&w, &h, 1, RewindScope::Code);
    let revert = w
        .run(h.prepare_revert(PrepareRevert {
            path: "c.txt".into(),
            version: None,
        }))
        .unwrap();
    let r = w
        .run(h.commit_revert(CommitRevert {
            plan_id: revert.plan_id,
            overwrite: false,
            confirm: false,
        }))
        .unwrap();
    assert_eq!(r.files_deleted, ["c.txt"]);
    assert_stale(commit(&w, &h, &plan.plan_id, OnConflict::Refuse, false));
    // So does committing another plan: every other prepared plan is stale afterwards.
    let first = prepare(&w, &h, 0, RewindScope::Code);
    let second = prepare(&w, &h, 1, RewindScope::Code);
    commit(&w, &h, &second.plan_id, OnConflict::Refuse, false).unwrap();
    let files = w.files();
    assert_stale(commit(&w, &h, &first.plan_id, OnConflict::Refuse, false));
    assert_eq!(w.files(), files);
}

#[test]
fn a_plan_is_single_use() {
    let w = World::new();
    let h = two_turns(&w);
    let plan = prepare(&w, &h, 1, RewindScope::Code);
    let r = commit(&w, &h, &plan.plan_id, OnConflict::Refuse, false).unwrap();
    assert!(r.ok && r.transaction_id.is_some());
    assert_stale(commit(&w, &h, &plan.plan_id, OnConflict::Refuse, false));
    // A commit the gate refuses (conflicts under refuse) leaves the plan as it was: the user may
    // choose again, here to skip.
    w.put("a.txt", b"mine\n");
    let plan = prepare(&w, &h, 0, RewindScope::Code);
    assert_eq!(plan.blockers, [PlanBlocker::Conflicts { count: 1 }]);
    let a = plan.files.iter().find(|f| f.path == "a.txt").unwrap();
    assert_eq!(
        (a.action, a.on_overwrite),
        (FileAction::Skip, Some(FileAction::Delete)),
        "a.txt did not exist when turn 0 started"
    );
    let e = commit(&w, &h, &plan.plan_id, OnConflict::Refuse, false).unwrap_err();
    assert_eq!(e.code, ErrorCode::Conflict, "{e:?}");
    assert_eq!(
        conflicts_of(&e),
        [("a.txt".to_string(), ConflictReason::ManualEdit)]
    );
    let r = commit(&w, &h, &plan.plan_id, OnConflict::Skip, false).unwrap();
    assert_eq!(r.conflicts.len(), 1, "{r:?}");
    assert_eq!(w.read("a.txt").unwrap(), b"mine\n");
    assert_stale(commit(&w, &h, &plan.plan_id, OnConflict::Skip, false));
    assert_stale(commit(&w, &h, "no-such-plan", OnConflict::Refuse, false));
}

#[test]
fn an_edit_after_prepare_is_caught_by_the_commits_recheck() {
    let w = World::new();
    let h = two_turns(&w);
    // Whatever the choice, a file that moved between preview and commit fails the whole commit.
    for choice in [OnConflict::Refuse, OnConflict::Skip, OnConflict::Overwrite] {
        // c.txt as Retrace wrote it: the plan is clean.
        w.put("c.txt", b"c1\n");
        let plan = prepare(&w, &h, 1, RewindScope::Code);
        assert!(plan.conflicts.is_empty(), "{choice:?}: {plan:?}");
        assert!(plan.blockers.is_empty(), "{choice:?}: {plan:?}");
        // Another editor changes a target: the generation cannot see it, the re-check does.
        w.put("c.txt", b"an editor saved this\n");
        let before = w.files();
        let mut rec = w.record(&h);
        let e = commit(&w, &h, &plan.plan_id, choice, false).unwrap_err();
        assert_eq!(e.code, ErrorCode::Conflict, "{choice:?}: {e:?}");
        assert!(e.message.contains("c.txt"), "{choice:?}: {e:?}");
        assert_eq!(
            conflicts_of(&e),
            [("c.txt".to_string(), ConflictReason::ExternalChange)],
            "{choice:?}"
        );
        assert_eq!(
            w.files(),
            before,
            "{choice:?}: nothing written, not even the clean files"
        );
        assert!(
            w.recorded(&h, &mut rec).is_empty(),
            "{choice:?}: a refused commit publishes nothing"
        );
    }
    // Previewed again, the conflict shows, and skip restores the rest.
    let plan = prepare(&w, &h, 1, RewindScope::Code);
    assert_eq!(plan.conflicts.len(), 1);
    assert_eq!(plan.conflicts[0].path, "c.txt");
    assert_eq!(plan.conflicts[0].reason, ConflictReason::ManualEdit);
    assert_eq!(plan.blockers, [PlanBlocker::Conflicts { count: 1 }]);
    let c = plan.files.iter().find(|f| f.path == "c.txt").unwrap();
    assert_eq!(
        (c.action, c.on_overwrite),
        (FileAction::Skip, Some(FileAction::Delete))
    );
    let r = commit(&w, &h, &plan.plan_id, OnConflict::Skip, false).unwrap();
    assert_eq!(r.conflicts.len(), 1);
    assert_eq!(w.read("a.txt").unwrap(), b"a0\n");
    assert_eq!(w.read("b.txt").unwrap(), b"b0\n");
    assert_eq!(w.read("c.txt").unwrap(), b"an editor saved this\n");
}

#[test]
fn both_with_a_conflict_known_at_prepare_makes_no_head() {
    let w = World::new();
    let h = two_turns(&w);
    w.put("a.txt", b"mine\n");
    let plan = prepare(&w, &h, 1, RewindScope::Both);
    assert_eq!(plan.conflicts.len(), 1);
    assert_eq!(plan.blockers, [PlanBlocker::Conflicts { count: 1 }]);
    let a = plan.files.iter().find(|f| f.path == "a.txt").unwrap();
    assert_eq!(
        (a.action, a.on_overwrite),
        (FileAction::Skip, Some(FileAction::Write)),
        "a.txt existed when turn 1 started"
    );
    let transcript = w.transcript(&h, None);
    let before = w.files();
    let mut rec = w.record(&h);
    let e = commit(&w, &h, &plan.plan_id, OnConflict::Refuse, true).unwrap_err();
    assert_eq!(e.code, ErrorCode::Conflict, "{e:?}");
    assert_eq!(
        conflicts_of(&e),
        [("a.txt".to_string(), ConflictReason::ManualEdit)]
    );
    assert_eq!(w.heads(&h).len(), 1, "no head");
    assert_eq!(w.head(&h), "main");
    assert_eq!(w.transcript(&h, None), transcript);
    assert_eq!(w.files(), before);
    let events = w.recorded(&h, &mut rec);
    assert!(events.is_empty(), "{events:?}");
    // Reopened from disk, the log has no trace of it either.
    let id = h.session_id();
    drop(rec);
    drop(h);
    w.run(w.svc.wait_closed());
    let reader = w.svc.reader(id.as_str()).unwrap();
    assert_eq!(reader.heads().unwrap().len(), 1);
}

#[test]
fn both_whose_files_fail_after_the_fork_keeps_the_head_and_says_partial() {
    let w = World::new();
    let h = two_turns(&w);
    let plan = prepare(&w, &h, 1, RewindScope::Both);
    assert!(plan.conflicts.is_empty() && plan.can_files && plan.can_conversation);
    assert!(plan.blockers.is_empty(), "{plan:?}");
    // Between prepare and commit an editor changes a target (same generation).
    w.put("c.txt", b"saved by an editor\n");
    let before = w.files();
    let mut rec = w.record(&h);
    let r = commit(&w, &h, &plan.plan_id, OnConflict::Refuse, true).unwrap();
    // The reference's outcome for this case: ok (the head is made and selected), partial, and
    // the conversation forked.
    assert!(r.partial, "{r:?}");
    assert!(r.ok, "{r:?}");
    assert!(r.conversation_forked);
    assert!(r.error.as_deref().is_some_and(|e| e.contains("c.txt")), "{r:?}");
    // The file that moved is reported typed, as a code-only commit reports it.
    let moved: Vec<(&str, ConflictReason)> =
        r.conflicts.iter().map(|c| (c.path.as_str(), c.reason)).collect();
    assert_eq!(moved, [("c.txt", ConflictReason::ExternalChange)], "{r:?}");
    assert!(r.files_written.is_empty() && r.files_deleted.is_empty());
    assert_eq!(w.files(), before, "the files were refused as a whole");
    // The head is kept and selected; it ends before turn 1.
    let new = r.head_id.clone();
    assert_ne!(new, "main");
    assert_eq!(w.head(&h), new);
    assert_eq!(users(&w.transcript(&h, None)), [(Some(0), "zero".to_string())]);
    assert!(w.heads(&h).iter().any(|x| x.id == new && !x.retired));
    let events = w.recorded(&h, &mut rec);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Rewound { partial: true, .. })),
        "{events:?}"
    );
    assert!(
        events.iter().any(|e| matches!(e, Event::HeadChanged { .. })),
        "{events:?}"
    );
    // It is undoable like a conversation rewind: main again, the empty head retired.
    assert!(r.undo_available);
    let u = undo(&w, &h, None).unwrap();
    assert_eq!(u.head_id, "main");
    assert_eq!(w.head(&h), "main");
    assert!(w.heads(&h).iter().any(|x| x.id == new && x.retired));
    assert_eq!(w.files(), before);
}

#[test]
fn undo_of_a_conversation_rewind_selects_the_parent_and_retires_the_empty_head() {
    let w = World::new();
    let h = two_turns(&w);
    let full = w.transcript(&h, None);
    let plan = prepare(&w, &h, 1, RewindScope::Conversation);
    assert!(plan.files.is_empty() && !plan.requires_confirmation);
    assert!(plan.blockers.is_empty(), "{plan:?}");
    let mut rec = w.record(&h);
    let r = commit(&w, &h, &plan.plan_id, OnConflict::Refuse, true).unwrap();
    assert_eq!(r.prompt, "one");
    assert!(r.transaction_id.is_some() && r.undo_available);
    assert_eq!(w.head(&h), r.head_id);
    let events = w.recorded(&h, &mut rec);
    assert!(
        matches!(
            events.first(),
            Some(Event::Rewound {
                scope: RewindScope::Conversation,
                turn: 1,
                ..
            })
        ),
        "{events:?}"
    );
    assert!(
        matches!(events.last(), Some(Event::HeadChanged { head_id }) if *head_id == r.head_id),
        "{events:?}"
    );

    let u = undo(&w, &h, r.transaction_id.as_deref()).unwrap();
    assert_eq!(u.head_id, "main");
    assert_eq!(w.head(&h), "main");
    assert_eq!(w.transcript(&h, None), full);
    let head = w.heads(&h).into_iter().find(|x| x.id == r.head_id).unwrap();
    assert!(head.retired && !head.selected);
    let events = w.recorded(&h, &mut rec);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::HeadChanged { head_id } if head_id == "main")),
        "{events:?}"
    );
    assert!(
        events.iter().any(|e| matches!(e, Event::Undone { .. })),
        "{events:?}"
    );
    // Nothing more to undo.
    let e = undo(&w, &h, None).unwrap_err();
    assert_eq!(e.code, ErrorCode::Refused, "{e:?}");
}

#[test]
fn commit_rewind_leaves_the_controller_on_its_head() {
    let w = World::new();
    let h = two_turns(&w);
    let plan = prepare(&w, &h, 1, RewindScope::Both);
    let mut rec = w.record(&h);
    let r = commit(&w, &h, &plan.plan_id, OnConflict::Refuse, false).unwrap();
    assert!(r.ok && r.conversation_forked);
    assert_ne!(r.head_id, "main");
    assert_eq!(w.head(&h), "main", "not in place: still on main");
    let events = w.recorded(&h, &mut rec);
    assert!(
        !events.iter().any(|e| matches!(e, Event::HeadChanged { .. })),
        "{events:?}"
    );
    assert_eq!(w.read("a.txt").unwrap(), b"a0\n");
    assert_eq!(w.read("b.txt").unwrap(), b"b0\n");
    assert_eq!(w.read("c.txt"), None);
    let new = w.transcript(&h, Some(r.head_id.as_str()));
    assert_eq!(users(&new), [(Some(0), "zero".to_string())]);
    // Undo: files back, the head that was never selected is retired, main stays selected.
    undo(&w, &h, None).unwrap();
    assert_eq!(w.read("a.txt").unwrap(), b"a1\n");
    assert_eq!(w.read("c.txt").unwrap(), b"c1\n");
    assert_eq!(w.head(&h), "main");
    assert!(w.heads(&h).iter().any(|x| x.id == r.head_id && x.retired));
}

#[test]
fn code_rewind_plan_and_note() {
    let w = World::new();
    let h = w.open();
    w.turn(&h, "zero", vec![write("m.txt", "m0\n")]);
    w.turn(&h, "one", vec![mv("m.txt", "d/n.txt"), write("x.txt", "x\n")]);
    let plan = prepare(&w, &h, 1, RewindScope::Code);
    let actions: Vec<(String, FileAction)> = plan.files.iter().map(|f| (f.path.clone(), f.action)).collect();
    assert_eq!(
        actions,
        [
            ("m.txt".to_string(), FileAction::Write),
            ("d/n.txt".to_string(), FileAction::Delete),
            ("x.txt".to_string(), FileAction::Delete)
        ]
    );
    assert!(plan.blockers.is_empty(), "{plan:?}");
    assert!(plan.files.iter().all(|f| f.on_overwrite.is_none()), "{plan:?}");
    commit(&w, &h, &plan.plan_id, OnConflict::Refuse, true).unwrap();
    assert_eq!(w.read("m.txt").unwrap(), b"m0\n");
    // The note: a system message at the end of the head, naming the files; never a turn.
    let t = w.transcript(&h, None);
    let note = t.last().unwrap();
    assert_eq!(note.role, Role::System);
    assert_eq!(note.turn, None);
    for f in ["m.txt", "d/n.txt", "x.txt"] {
        assert!(note.content.contains(f), "{}", note.content);
    }
    let (r, _) = w.turn(&h, "two", vec![]);
    assert_eq!(r.turn, 2);
}

/// A code restore that changes nothing offers no undo of its own, whether every file was already
/// as it was or its one conflicted file was kept; the restore before it stays the one undo takes
/// back. A conflicted plan opens on keeping the file when that commits. Each plan says, for
/// every frontend, when committing it (or one of its choices) would change nothing, and why.
#[test]
fn a_restore_that_changes_nothing_offers_no_undo() {
    let w = World::new();
    let h = w.open();
    w.turn(&h, "zero", vec![write("a.txt", "a0\n")]);
    w.turn(&h, "one", vec![write("a.txt", "a1\n")]);
    let plan = prepare(&w, &h, 1, RewindScope::Code);
    assert_eq!(plan.unchanged, None, "{plan:?}");
    let first = commit(&w, &h, &plan.plan_id, OnConflict::Refuse, true).unwrap();
    assert!(
        first.transaction_id.is_some() && first.undo_available,
        "{first:?}"
    );

    // Again: every file in the workspace already as it was.
    let plan = prepare(&w, &h, 1, RewindScope::Code);
    assert!(
        plan.files.iter().all(|f| f.action == FileAction::Unchanged),
        "{plan:?}"
    );
    assert_eq!(plan.preselected(), None);
    assert_eq!(
        plan.unchanged.as_deref(),
        Some("every file in the workspace is already as it was")
    );
    // … the conversation would still go back
    let both = prepare(&w, &h, 1, RewindScope::Both);
    assert_eq!(both.unchanged, None, "{both:?}");
    let again = commit(&w, &h, &plan.plan_id, OnConflict::Refuse, true).unwrap();
    assert!(
        again.files_written.is_empty() && again.transaction_id.is_none(),
        "{again:?}"
    );
    assert!(!again.undo_available, "{again:?}");

    // Edited by hand and kept: nothing changes either.
    w.put("a.txt", b"mine\n");
    let plan = prepare(&w, &h, 1, RewindScope::Code);
    assert_eq!(plan.preselected(), Some(OnConflict::Skip), "{plan:?}");
    let said: Vec<(OnConflict, Option<&str>)> = plan
        .choices
        .iter()
        .map(|c| (c.on_conflict, c.unchanged.as_deref()))
        .collect();
    assert_eq!(
        said,
        [
            (OnConflict::Refuse, None),
            (
                OnConflict::Skip,
                Some("every file in the workspace is already as it was or kept as it is")
            ),
            (OnConflict::Overwrite, None),
        ]
    );
    assert_eq!(plan.unchanged, None);
    let kept = commit(&w, &h, &plan.plan_id, OnConflict::Skip, true).unwrap();
    assert!(
        kept.files_written.is_empty() && kept.transaction_id.is_none(),
        "{kept:?}"
    );
    assert!(!kept.undo_available, "{kept:?}");
    assert_eq!(w.read("a.txt").unwrap(), b"mine\n");

    // The first restore is still the one undo takes back.
    w.put("a.txt", b"a0\n");
    let u = undo(&w, &h, None).unwrap();
    assert_eq!(u.files_written, ["a.txt"]);
    assert_eq!(w.read("a.txt").unwrap(), b"a1\n");
}

#[test]
fn summaries_with_the_demo_model() {
    let w = World::new();
    let h = w.open();
    for p in ["first", "second", "third"] {
        let (_, outcome, _) = w.turn_with(&h, p, ModelSpec::demo());
        assert!(outcome.ok, "turn {p:?} failed: {:?}", outcome.error);
    }
    let full = w.transcript(&h, None);
    let files = w.files();
    let at = full.iter().position(|m| m.turn == Some(1)).unwrap();
    let summarize = |turn: u64, direction: SummarizeDirection| {
        w.run(h.summarize(SummarizeRequest {
            turn,
            direction,
            model: None,
        }))
    };

    let from = summarize(1, SummarizeDirection::From).unwrap();
    assert_eq!(w.head(&h), from.head_id);
    let t = w.transcript(&h, None);
    assert_eq!(t.len(), at + 1);
    assert_eq!(t[..at], full[..at]);
    assert_eq!(t[at].role, Role::User);
    assert!(t[at].content.starts_with("Summary of "), "{}", t[at].content);

    switch(&w, &h, "main");
    let up = summarize(1, SummarizeDirection::UpTo).unwrap();
    let t = w.transcript(&h, None);
    assert_eq!(w.head(&h), up.head_id);
    assert_eq!(t[0].role, Role::User);
    assert!(t[0].content.starts_with("Summary of "), "{}", t[0].content);
    assert_eq!(t[1..], full[at..]);
    assert_eq!(w.files(), files, "a summary changes no file");

    switch(&w, &h, "main");
    let nothing = summarize(0, SummarizeDirection::UpTo);
    assert!(
        matches!(&nothing, Err(e) if e.code == ErrorCode::Refused && e.message.contains("nothing to summarize")),
        "{nothing:?}"
    );
    // The code of a turn folded into a summary can still be restored; its conversation cannot.
    switch(&w, &h, up.head_id.as_str());
    let plan = prepare(&w, &h, 0, RewindScope::Both);
    assert!(plan.can_files && !plan.can_conversation);
    assert_eq!(plan.disabled_reason.as_deref(), Some("not on this head"));
    assert_eq!(
        plan.blockers,
        [PlanBlocker::Unavailable {
            reason: "not on this head".into()
        }]
    );
}

/// A flat (format-1) log: turn 0 "make a.txt", turn 1 "now b.txt".
const FORMAT1_LOG: &str = concat!(
    r#"{"role":"system","content":"be brief"}"#,
    "\n",
    r#"{"role":"user","content":"make a.txt"}"#,
    "\n",
    r#"{"role":"assistant","content":"done"}"#,
    "\n",
    r#"{"role":"user","content":"now b.txt"}"#,
    "\n",
    r#"{"role":"assistant","content":"done too"}"#,
    "\n",
);

/// A rewind of a format-1 log makes a new session (SPEC §6) and the controller continues there,
/// with the new session's own sidecar: the next turn's checkpoint is where a new process opening
/// that session looks for it. The rewind itself cannot be undone from the new session.
#[test]
fn a_rewind_of_a_format1_log_continues_in_the_new_session_and_its_sidecar() {
    let w = World::new();
    let dir = w.svc.data_root().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let old_log = dir.join("old-session.jsonl");
    std::fs::write(&old_log, FORMAT1_LOG).unwrap();
    let h = w.run(w.svc.open("old-session", Some(&w.ws))).unwrap();
    let plan = prepare(&w, &h, 1, RewindScope::Conversation);
    let r = commit(&w, &h, &plan.plan_id, OnConflict::Refuse, true).unwrap();
    assert!(r.ok && r.conversation_forked, "{r:?}");
    assert_ne!(r.session_id, "old-session");
    assert!(!r.undo_available, "{r:?}");
    // The handle knows the new id as soon as the answer arrives.
    assert_eq!(h.session_id(), r.session_id);
    assert_eq!(w.run(h.status()).unwrap().session_id, r.session_id);
    // Opening the old id again in this process reaches the same session, not a second successor.
    let same = w.run(w.svc.open("old-session", Some(&w.ws))).unwrap();
    assert_eq!(same.session_id(), r.session_id);
    drop(same);
    assert_eq!(std::fs::read_to_string(&old_log).unwrap(), FORMAT1_LOG);

    let (accepted, _) = w.turn(&h, "again", vec![write("x.txt", "x\n")]);
    let turn = accepted.turn;
    assert_eq!(accepted.session_id, r.session_id);
    let listed: Vec<u64> = w
        .run(h.checkpoints())
        .unwrap()
        .entries
        .iter()
        .map(|c| c.turn)
        .collect();
    assert_eq!(listed, [turn]);
    // The turn is recorded in the new session's sidecar (its log), none of it in the old one's.
    let new_sidecar = dir.join(format!("{}.ckpt", r.session_id));
    let in_log = |sidecar: &std::path::Path| {
        std::fs::read_dir(sidecar.join("log")).is_ok_and(|rd| {
            rd.flatten().any(|e| {
                std::fs::read(e.path()).is_ok_and(|b| {
                    String::from_utf8_lossy(&b).contains(&format!("\"k\":\"turn\",\"turn\":{turn}"))
                })
            })
        })
    };
    assert!(in_log(&new_sidecar));
    assert!(!in_log(&dir.join("old-session.ckpt")));
    assert!(!dir
        .join("old-session.ckpt")
        .join(format!("turn-{turn}.json"))
        .exists());
    drop(h);
    w.run(w.svc.wait_closed());
    let again = w.run(w.svc.open(r.session_id.as_str(), None)).unwrap();
    let listed: Vec<u64> = w
        .run(again.checkpoints())
        .unwrap()
        .entries
        .iter()
        .map(|c| c.turn)
        .collect();
    assert_eq!(listed, [turn], "a new process sees the same checkpoints");
}

#[test]
fn a_code_rewind_of_a_format1_log_reports_the_session_its_note_went_to() {
    let w = World::new();
    let h = w.open();
    w.turn(&h, "make a.txt", vec![write("a.txt", "a\n")]);
    let sid = h.session_id();
    drop(h);
    w.run(w.svc.wait_closed());
    // An old flat log of the same conversation, with the sidecar the turn left.
    let dir = w.svc.data_root().join("sessions");
    std::fs::write(
        dir.join("old-session.jsonl"),
        "{\"role\":\"user\",\"content\":\"make a.txt\"}\n{\"role\":\"assistant\",\"content\":\"done\"}\n",
    )
    .unwrap();
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(dir.join(format!("{sid}.ckpt")))
        .arg(dir.join("old-session.ckpt"))
        .status()
        .unwrap();
    assert!(status.success());
    let h = w.run(w.svc.open("old-session", Some(&w.ws))).unwrap();
    let plan = prepare(&w, &h, 0, RewindScope::Code);
    let r = w
        .run(h.commit_rewind(CommitRewind {
            plan_id: plan.plan_id,
            confirm: true,
            on_conflict: OnConflict::Refuse,
            in_place: true,
        }))
        .unwrap();
    assert_eq!(r.files_deleted, ["a.txt"]);
    // The note for the model was the write that made the new session: the result names it.
    assert_ne!(r.session_id, "old-session");
    assert_eq!(r.session_id, h.session_id());
    let notes: Vec<_> = w
        .transcript(&h, None)
        .into_iter()
        .filter(|m| m.role == Role::System)
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
}
