//! Controller-level rewind tests (SPEC §5.3, §5.5, §7): stale plans, `both` refusing up front or
//! ending `partial`, undo of a conversation rewind, and what `commit_rewind` vs
//! `commit_rewind_in_place` leave selected. What cannot be provoked through the CLI (a plan lives in
//! one process) is tested here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use retrace_control::{ControlError, Controller, SummarizeWhich};
use retrace_model::{open_model, ModelOptions, ModelSpec};
use retrace_protocol::{ConflictReason, Event, FileAction, OnConflict, RewindScope};
use support::{delete, mv, quiet, users, write, World};

/// Turn 0 writes a.txt and b.txt; turn 1 edits a.txt, deletes b.txt and creates c.txt.
fn two_turns(w: &World) -> Controller {
    let mut ctl = w.controller();
    w.turn(
        &mut ctl,
        "zero",
        vec![write("a.txt", "a0\n"), write("b.txt", "b0\n")],
    );
    w.turn(
        &mut ctl,
        "one",
        vec![write("a.txt", "a1\n"), delete("b.txt"), write("c.txt", "c1\n")],
    );
    ctl
}

fn assert_stale(r: Result<retrace_protocol::RewindResult, ControlError>) {
    match r {
        Err(ControlError::Stale(msg)) => assert!(msg.contains("stale_plan"), "{msg}"),
        other => panic!("expected a stale plan, got {other:?}"),
    }
}

#[test]
fn a_plan_is_stale_after_another_turn() {
    let w = World::new();
    let mut ctl = two_turns(&w);
    let plan = ctl.prepare_rewind(1, RewindScope::Code).unwrap();
    w.turn(&mut ctl, "two", vec![write("d.txt", "d2\n")]);
    let files = w.files();
    assert_stale(ctl.commit_rewind(&plan.plan_id, false, OnConflict::Refuse, &mut quiet()));
    assert_eq!(w.files(), files, "a stale plan writes nothing");
    // Even a turn that writes no file moves the generation on.
    let plan = ctl.prepare_rewind(1, RewindScope::Conversation).unwrap();
    w.turn(&mut ctl, "three", vec![]);
    assert_stale(ctl.commit_rewind_in_place(&plan.plan_id, false, OnConflict::Refuse, &mut quiet()));
    assert_eq!(ctl.heads().len(), 1, "no head was made");
}

#[test]
fn a_plan_is_stale_after_a_head_change() {
    let w = World::new();
    let mut ctl = two_turns(&w);
    let main = ctl.head_id().to_string();
    let fork = ctl.fork(1, Some("f".into()), false, &mut quiet()).unwrap();

    let plan = ctl.prepare_rewind(1, RewindScope::Code).unwrap();
    ctl.switch_head(&fork, &mut quiet()).unwrap();
    assert_stale(ctl.commit_rewind(&plan.plan_id, false, OnConflict::Refuse, &mut quiet()));

    ctl.switch_head(&main, &mut quiet()).unwrap();
    let plan = ctl.prepare_rewind(1, RewindScope::Conversation).unwrap();
    ctl.fork(0, None, false, &mut quiet()).unwrap();
    assert_stale(ctl.commit_rewind(&plan.plan_id, false, OnConflict::Refuse, &mut quiet()));
    assert_eq!(w.read("a.txt").unwrap(), b"a1\n");
}

#[test]
fn a_plan_is_stale_after_another_write_by_retrace() {
    let w = World::new();
    let mut ctl = two_turns(&w);
    // A file revert is a write by Retrace outside any turn: it moves the generation on.
    let plan = ctl.prepare_rewind(1, RewindScope::Code).unwrap();
    let revert = ctl.prepare_file_revert(std::path::Path::new("c.txt")).unwrap();
    let r = ctl
        .commit_file_revert(&revert.plan_id, false, &mut quiet())
        .unwrap();
    assert_eq!(r.files_deleted, ["c.txt"]);
    assert_stale(ctl.commit_rewind(&plan.plan_id, false, OnConflict::Refuse, &mut quiet()));
    // So does committing another plan: every other prepared plan is stale afterwards.
    let first = ctl.prepare_rewind(0, RewindScope::Code).unwrap();
    let second = ctl.prepare_rewind(1, RewindScope::Code).unwrap();
    ctl.commit_rewind(&second.plan_id, false, OnConflict::Refuse, &mut quiet())
        .unwrap();
    let files = w.files();
    assert_stale(ctl.commit_rewind(&first.plan_id, false, OnConflict::Refuse, &mut quiet()));
    assert_eq!(w.files(), files);
}

#[test]
fn a_plan_is_single_use() {
    let w = World::new();
    let mut ctl = two_turns(&w);
    let plan = ctl.prepare_rewind(1, RewindScope::Code).unwrap();
    let r = ctl
        .commit_rewind(&plan.plan_id, false, OnConflict::Refuse, &mut quiet())
        .unwrap();
    assert!(r.ok && r.transaction_id.is_some());
    assert_stale(ctl.commit_rewind(&plan.plan_id, false, OnConflict::Refuse, &mut quiet()));
    // A refused commit uses the plan up as well.
    w.put("a.txt", b"mine\n");
    let plan = ctl.prepare_rewind(0, RewindScope::Code).unwrap();
    assert!(matches!(
        ctl.commit_rewind(&plan.plan_id, false, OnConflict::Refuse, &mut quiet()),
        Err(ControlError::Refused(_))
    ));
    assert_stale(ctl.commit_rewind(&plan.plan_id, false, OnConflict::Skip, &mut quiet()));
    assert_stale(ctl.commit_rewind("no-such-plan", false, OnConflict::Refuse, &mut quiet()));
}

#[test]
fn an_edit_after_prepare_is_caught_by_the_commits_recheck() {
    let w = World::new();
    let mut ctl = two_turns(&w);
    let plan = ctl.prepare_rewind(1, RewindScope::Code).unwrap();
    assert!(plan.conflicts.is_empty());
    // Another editor changes a target: the generation cannot see it, the re-check does.
    w.put("c.txt", b"an editor saved this\n");
    let before = w.files();
    match ctl.commit_rewind(&plan.plan_id, false, OnConflict::Refuse, &mut quiet()) {
        Err(ControlError::Refused(msg)) => assert!(msg.contains("c.txt"), "{msg}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(w.files(), before, "nothing written, not even the clean files");
    // Previewed again, the conflict shows, and skip restores the rest.
    let plan = ctl.prepare_rewind(1, RewindScope::Code).unwrap();
    assert_eq!(plan.conflicts.len(), 1);
    assert_eq!(plan.conflicts[0].path, "c.txt");
    assert_eq!(plan.conflicts[0].reason, ConflictReason::ManualEdit);
    let r = ctl
        .commit_rewind(&plan.plan_id, false, OnConflict::Skip, &mut quiet())
        .unwrap();
    assert_eq!(r.conflicts.len(), 1);
    assert_eq!(w.read("a.txt").unwrap(), b"a0\n");
    assert_eq!(w.read("b.txt").unwrap(), b"b0\n");
    assert_eq!(w.read("c.txt").unwrap(), b"an editor saved this\n");
}

#[test]
fn both_with_a_conflict_known_at_prepare_makes_no_head() {
    let w = World::new();
    let mut ctl = two_turns(&w);
    w.put("a.txt", b"mine\n");
    let plan = ctl.prepare_rewind(1, RewindScope::Both).unwrap();
    assert_eq!(plan.conflicts.len(), 1);
    let transcript = ctl.transcript(None).unwrap();
    let before = w.files();
    let mut events = Vec::new();
    let r = ctl.commit_rewind_in_place(&plan.plan_id, false, OnConflict::Refuse, &mut |e| events.push(e));
    assert!(matches!(r, Err(ControlError::Refused(_))), "{r:?}");
    assert_eq!(ctl.heads().len(), 1, "no head");
    assert_eq!(ctl.head_id(), "main");
    assert_eq!(ctl.transcript(None).unwrap(), transcript);
    assert_eq!(w.files(), before);
    assert!(events.is_empty(), "{events:?}");
    // Reopened from disk, the log has no trace of it either.
    let id = ctl.session_id().to_string();
    drop(ctl);
    let view = retrace_control::SessionView::open(&w.data, &id).unwrap();
    assert_eq!(view.heads().len(), 1);
}

#[test]
fn both_whose_files_fail_after_the_fork_keeps_the_head_and_says_partial() {
    let w = World::new();
    let mut ctl = two_turns(&w);
    let plan = ctl.prepare_rewind(1, RewindScope::Both).unwrap();
    assert!(plan.conflicts.is_empty() && plan.can_files && plan.can_conversation);
    // Between prepare and commit an editor changes a target (same generation).
    w.put("c.txt", b"saved by an editor\n");
    let before = w.files();
    let mut events = Vec::new();
    let r = ctl
        .commit_rewind_in_place(&plan.plan_id, false, OnConflict::Refuse, &mut |e| events.push(e))
        .unwrap();
    assert!(r.partial, "{r:?}");
    assert!(!r.ok);
    assert!(r.conversation_forked);
    assert!(r.error.as_deref().is_some_and(|e| e.contains("c.txt")), "{r:?}");
    assert!(r.files_written.is_empty() && r.files_deleted.is_empty());
    assert_eq!(w.files(), before, "the files were refused as a whole");
    // The head is kept and selected; it ends before turn 1.
    let new = r.head_id.clone();
    assert_ne!(new, "main");
    assert_eq!(ctl.head_id(), new);
    assert_eq!(
        users(&ctl.transcript(None).unwrap()),
        [(Some(0), "zero".to_string())]
    );
    assert!(ctl.heads().iter().any(|h| h.id == new && !h.retired));
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::Rewound { partial: true, .. })));
    assert!(events.iter().any(|e| matches!(e, Event::HeadChanged { .. })));
    // It is undoable like a conversation rewind: main again, the empty head retired.
    assert!(r.undo_available);
    let u = ctl.undo_rewind(None, &mut quiet()).unwrap();
    assert_eq!(u.head_id, "main");
    assert_eq!(ctl.head_id(), "main");
    assert!(ctl.heads().iter().any(|h| h.id == new && h.retired));
    assert_eq!(w.files(), before);
}

#[test]
fn undo_of_a_conversation_rewind_selects_the_parent_and_retires_the_empty_head() {
    let w = World::new();
    let mut ctl = two_turns(&w);
    let full = ctl.transcript(None).unwrap();
    let plan = ctl.prepare_rewind(1, RewindScope::Conversation).unwrap();
    assert!(plan.files.is_empty() && !plan.requires_confirmation);
    let mut events = Vec::new();
    let r = ctl
        .commit_rewind_in_place(&plan.plan_id, false, OnConflict::Refuse, &mut |e| events.push(e))
        .unwrap();
    assert_eq!(r.prompt, "one");
    assert!(r.transaction_id.is_some() && r.undo_available);
    assert_eq!(ctl.head_id(), r.head_id);
    assert!(matches!(
        events.first(),
        Some(Event::Rewound {
            scope: RewindScope::Conversation,
            turn: 1,
            ..
        })
    ));
    assert!(matches!(events.last(), Some(Event::HeadChanged { head_id }) if *head_id == r.head_id));

    let mut events = Vec::new();
    let u = ctl
        .undo_rewind(r.transaction_id.as_deref(), &mut |e| events.push(e))
        .unwrap();
    assert_eq!(u.head_id, "main");
    assert_eq!(ctl.head_id(), "main");
    assert_eq!(ctl.transcript(None).unwrap(), full);
    let h = ctl.heads().into_iter().find(|h| h.id == r.head_id).unwrap();
    assert!(h.retired && !h.selected);
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::HeadChanged { head_id } if head_id == "main")));
    assert!(events.iter().any(|e| matches!(e, Event::Undone { .. })));
    // Nothing more to undo.
    assert!(matches!(
        ctl.undo_rewind(None, &mut quiet()),
        Err(ControlError::Refused(_))
    ));
}

#[test]
fn commit_rewind_leaves_the_controller_on_its_head() {
    let w = World::new();
    let mut ctl = two_turns(&w);
    let plan = ctl.prepare_rewind(1, RewindScope::Both).unwrap();
    let mut events = Vec::new();
    let r = ctl
        .commit_rewind(&plan.plan_id, false, OnConflict::Refuse, &mut |e| events.push(e))
        .unwrap();
    assert!(r.ok && r.conversation_forked);
    assert_ne!(r.head_id, "main");
    assert_eq!(ctl.head_id(), "main", "not in place: still on main");
    assert!(!events.iter().any(|e| matches!(e, Event::HeadChanged { .. })));
    assert_eq!(w.read("a.txt").unwrap(), b"a0\n");
    assert_eq!(w.read("b.txt").unwrap(), b"b0\n");
    assert_eq!(w.read("c.txt"), None);
    let new = ctl.transcript(Some(&r.head_id)).unwrap();
    assert_eq!(users(&new), [(Some(0), "zero".to_string())]);
    // Undo: files back, the head that was never selected is retired, main stays selected.
    ctl.undo_rewind(None, &mut quiet()).unwrap();
    assert_eq!(w.read("a.txt").unwrap(), b"a1\n");
    assert_eq!(w.read("c.txt").unwrap(), b"c1\n");
    assert_eq!(ctl.head_id(), "main");
    assert!(ctl.heads().iter().any(|h| h.id == r.head_id && h.retired));
}

#[test]
fn code_rewind_plan_and_note() {
    let w = World::new();
    let mut ctl = w.controller();
    w.turn(&mut ctl, "zero", vec![write("m.txt", "m0\n")]);
    w.turn(
        &mut ctl,
        "one",
        vec![mv("m.txt", "d/n.txt"), write("x.txt", "x\n")],
    );
    let plan = ctl.prepare_rewind(1, RewindScope::Code).unwrap();
    let actions: Vec<(String, FileAction)> = plan.files.iter().map(|f| (f.path.clone(), f.action)).collect();
    assert_eq!(
        actions,
        [
            ("m.txt".to_string(), FileAction::Write),
            ("d/n.txt".to_string(), FileAction::Delete),
            ("x.txt".to_string(), FileAction::Delete)
        ]
    );
    ctl.commit_rewind_in_place(&plan.plan_id, false, OnConflict::Refuse, &mut quiet())
        .unwrap();
    assert_eq!(w.read("m.txt").unwrap(), b"m0\n");
    // The note: a system message at the end of the head, naming the files; never a turn.
    let t = ctl.transcript(None).unwrap();
    let note = t.last().unwrap();
    assert_eq!(note.role, "system");
    assert_eq!(note.turn, None);
    for f in ["m.txt", "d/n.txt", "x.txt"] {
        assert!(note.content.contains(f), "{}", note.content);
    }
    let (r, _) = w.turn(&mut ctl, "two", vec![]);
    assert_eq!(r.turn, 2);
}

#[test]
fn summaries_with_the_demo_model() {
    let w = World::new();
    let mut ctl = w.controller();
    let demo = || open_model(&ModelSpec::Demo, &ModelOptions::default(), &|_: &str| None).unwrap();
    for p in ["first", "second", "third"] {
        w.turn_with(&mut ctl, p, demo());
    }
    let full = ctl.transcript(None).unwrap();
    let files = w.files();
    let at = full.iter().position(|m| m.turn == Some(1)).unwrap();

    let from =
        w.rt.block_on(ctl.summarize(1, SummarizeWhich::From, &mut |_| {}))
            .unwrap();
    assert_eq!(ctl.head_id(), from);
    let t = ctl.transcript(None).unwrap();
    assert_eq!(t.len(), at + 1);
    assert_eq!(t[..at], full[..at]);
    assert_eq!(t[at].role, "user");
    assert!(t[at].content.starts_with("Summary of "), "{}", t[at].content);

    ctl.switch_head("main", &mut quiet()).unwrap();
    let up =
        w.rt.block_on(ctl.summarize(1, SummarizeWhich::UpTo, &mut |_| {}))
            .unwrap();
    let t = ctl.transcript(None).unwrap();
    assert_eq!(ctl.head_id(), up);
    assert_eq!(t[0].role, "user");
    assert!(t[0].content.starts_with("Summary of "), "{}", t[0].content);
    assert_eq!(t[1..], full[at..]);
    assert_eq!(w.files(), files, "a summary changes no file");

    ctl.switch_head("main", &mut quiet()).unwrap();
    let nothing = w.rt.block_on(ctl.summarize(0, SummarizeWhich::UpTo, &mut |_| {}));
    assert!(
        matches!(&nothing, Err(ControlError::Refused(m)) if m.contains("nothing to summarize")),
        "{nothing:?}"
    );
    // The code of a turn folded into a summary can still be restored; its conversation cannot.
    ctl.switch_head(&up, &mut quiet()).unwrap();
    let plan = ctl.prepare_rewind(0, RewindScope::Both).unwrap();
    assert!(plan.can_files && !plan.can_conversation);
    assert_eq!(plan.disabled_reason.as_deref(), Some("not on this head"));
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
    let dir = w.data.sessions_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let old_log = dir.join("old-session.jsonl");
    std::fs::write(&old_log, FORMAT1_LOG).unwrap();
    let mut ctl = Controller::open(&w.data, "old-session", Some(&w.ws), None, Default::default()).unwrap();
    let plan = ctl.prepare_rewind(1, RewindScope::Conversation).unwrap();
    let r = ctl
        .commit_rewind_in_place(&plan.plan_id, false, OnConflict::Refuse, &mut quiet())
        .unwrap();
    assert!(r.ok && r.conversation_forked, "{r:?}");
    assert_ne!(r.session_id, "old-session");
    assert!(!r.undo_available, "{r:?}");
    assert_eq!(ctl.session_id(), r.session_id);
    assert_eq!(std::fs::read_to_string(&old_log).unwrap(), FORMAT1_LOG);

    let (report, _) = w.turn(&mut ctl, "again", vec![write("x.txt", "x\n")]);
    let turn = report.turn;
    let listed: Vec<u64> = ctl.checkpoints().iter().map(|c| c.turn).collect();
    assert_eq!(listed, [turn]);
    let new_sidecar = dir.join(format!("{}.ckpt", r.session_id));
    assert!(new_sidecar.join(format!("turn-{turn}.json")).is_file());
    assert!(!dir
        .join("old-session.ckpt")
        .join(format!("turn-{turn}.json"))
        .exists());
    drop(ctl);
    let again = Controller::open(&w.data, &r.session_id, None, None, Default::default()).unwrap();
    let listed: Vec<u64> = again.checkpoints().iter().map(|c| c.turn).collect();
    assert_eq!(listed, [turn], "a new process sees the same checkpoints");
}
