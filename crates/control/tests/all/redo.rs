//! Redo through a session handle (SPEC §5.5): the walk both ways with the conversation half
//! (heads selected and retired, a retired head made again), across a restart; a code redo's note;
//! a redo after a later turn; a conflict that writes nothing; what there is to redo and when.

use crate::support::{delete, write, World};
use retrace_control::SessionHandle;
use retrace_protocol::{
    CommitRewind, ConflictReason, Error, ErrorCode, ErrorDetails, Event, HeadKind, PrepareRewind,
    RedoRequest, RewindResult, RewindScope, Role, SwitchRequest, UndoRequest,
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

/// Rewinds to `turn` in place.
fn rewind(w: &World, h: &SessionHandle, turn: u64, scope: RewindScope) -> RewindResult {
    let plan = w.run(h.prepare_rewind(PrepareRewind { turn, scope })).unwrap();
    w.run(h.commit_rewind(CommitRewind {
        plan_id: plan.plan_id,
        confirm: false,
        on_conflict: Default::default(),
        in_place: true,
    }))
    .unwrap()
}

fn undo(w: &World, h: &SessionHandle) -> Result<RewindResult, Error> {
    w.run(h.undo(UndoRequest::default()))
}

fn redo(w: &World, h: &SessionHandle, transaction_id: Option<&str>) -> Result<RewindResult, Error> {
    w.run(h.redo(RedoRequest {
        transaction_id: transaction_id.map(str::to_string),
    }))
}

/// Whether head `id` is retired.
fn retired(w: &World, h: &SessionHandle, id: &str) -> bool {
    w.heads(h).iter().find(|x| x.id == id).unwrap().retired
}

#[test]
fn undo_redo_undo_of_a_both_rewind_walks_files_and_heads_across_a_restart() {
    let w = World::new();
    let h = two_turns(&w);
    let at_start = w.files();
    let r = rewind(&w, &h, 1, RewindScope::Both);
    let rewound = w.files();
    let rewound_transcript = w.transcript(&h, None);
    let head = r.head_id.clone();
    assert!(r.undo_available && !r.redo_available, "{r:?}");

    let u = undo(&w, &h).unwrap();
    assert!(u.redo_available, "redo is offered right after an undo: {u:?}");
    assert_eq!(w.head(&h), "main");
    assert_eq!(w.files(), at_start);
    assert!(retired(&w, &h, head.as_str()), "the untouched head was retired");

    let mut rec = w.record(&h);
    let d = redo(&w, &h, None).unwrap();
    assert_eq!(w.files(), rewound, "the files are as the rewind left them");
    assert!(d.ok && d.undo_available && !d.redo_available, "{d:?}");
    assert!(d.conversation_forked, "the retired head is made again: {d:?}");
    assert_ne!(d.head_id, head);
    assert_eq!(w.head(&h), d.head_id);
    assert_eq!(
        w.transcript(&h, None),
        rewound_transcript,
        "the same conversation"
    );
    let again = w.heads(&h).into_iter().find(|x| x.id == d.head_id).unwrap();
    assert_eq!(again.kind, HeadKind::Rewind);
    // The retired head and the one made again are told apart by their titles, as every frontend
    // names them.
    let first = w.heads(&h).into_iter().find(|x| x.id == head).unwrap();
    assert_eq!(first.title, "rewind before “one”");
    assert_eq!(again.title, "rewind before “one” (2)");
    assert_eq!(
        again.parent_head.as_ref().map(|p| p.as_str()),
        Some("main"),
        "a sibling of the retired head"
    );
    assert_eq!(d.prompt, "one");
    let events = w.recorded(&h, &mut rec);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::HeadChanged { head_id } if *head_id == d.head_id)),
        "{events:?}"
    );
    assert!(
        events.iter().any(|e| matches!(e,
            Event::Redone { transaction_id, redo_id, head_id }
                if Some(transaction_id) == r.transaction_id.as_ref()
                    && Some(redo_id) == d.transaction_id.as_ref()
                    && *head_id == d.head_id)),
        "{events:?}"
    );

    // A restart between the steps: everything comes from the sidecar and the log.
    let id = h.session_id();
    w.run(w.svc.shutdown());
    drop(h);
    let h = w.run(w.svc.open(id.as_str(), None)).unwrap();
    let u = undo(&w, &h).unwrap();
    assert!(u.redo_available);
    assert_eq!(w.head(&h), "main");
    assert_eq!(w.files(), at_start, "undo after redo ends where it began");
    assert!(retired(&w, &h, d.head_id.as_str()));

    w.run(w.svc.shutdown());
    drop(h);
    let h = w.run(w.svc.open(id.as_str(), None)).unwrap();
    let d2 = redo(&w, &h, None).unwrap();
    assert_eq!(w.files(), rewound);
    assert_eq!(w.transcript(&h, None), rewound_transcript);
    undo(&w, &h).unwrap();
    assert_eq!(w.files(), at_start);
    assert_eq!(w.head(&h), "main");
    assert!(retired(&w, &h, d2.head_id.as_str()));
    w.run(w.svc.shutdown());
}

/// Undo selects the rewind's parent only when the rewind's head is selected; the redo records the
/// head selected when it ran, and undoing the redo goes back there.
#[test]
fn undo_of_a_redo_selects_the_head_the_redo_came_from() {
    let w = World::new();
    let h = two_turns(&w);
    let first = rewind(&w, &h, 1, RewindScope::Conversation);
    w.turn(&h, "on the rewound head", vec![]);
    let switch = |head: &str| {
        w.run(h.switch(SwitchRequest { head: head.into() })).unwrap();
    };
    switch("main");
    let r = rewind(&w, &h, 1, RewindScope::Conversation);
    // A head switch is no rewind: `r` stays the newest, and its undo leaves the head alone.
    switch(first.head_id.as_str());
    undo(&w, &h).unwrap();
    assert_eq!(w.head(&h), first.head_id);
    assert!(retired(&w, &h, r.head_id.as_str()));
    let d = redo(&w, &h, None).unwrap();
    assert!(d.conversation_forked, "{d:?}");
    assert_eq!(w.head(&h), d.head_id);
    let u = undo(&w, &h).unwrap();
    assert_eq!(u.head_id, first.head_id, "{u:?}");
    assert_eq!(w.head(&h), first.head_id);
    assert!(retired(&w, &h, d.head_id.as_str()));
}

#[test]
fn a_code_redo_tells_the_model_and_a_later_turn_elsewhere_does_not_stop_it() {
    let w = World::new();
    let h = two_turns(&w);
    rewind(&w, &h, 1, RewindScope::Code);
    let rewound = w.files();
    undo(&w, &h).unwrap();
    w.turn(&h, "two", vec![write("d.txt", "d2\n")]);
    // A turn ends undo, not redo.
    assert_eq!(undo(&w, &h).unwrap_err().code, ErrorCode::Refused);
    let d = redo(&w, &h, None).unwrap();
    assert!(!d.conversation_forked);
    assert_eq!(w.head(&h), "main");
    let mut want = rewound.clone();
    want.insert("d.txt".into(), b"d2\n".to_vec());
    assert_eq!(w.files(), want);
    let note = w.transcript(&h, None).pop().unwrap();
    assert_eq!(note.role, Role::System);
    assert!(note.content.contains("redid"), "{}", note.content);
    for f in ["a.txt", "b.txt", "c.txt"] {
        assert!(note.content.contains(f), "{}", note.content);
    }
    // Undoable like any rewind.
    assert!(d.undo_available);
    undo(&w, &h).unwrap();
    assert_eq!(w.read("c.txt").unwrap(), b"c1\n");
}

#[test]
fn a_file_changed_since_the_undo_is_a_conflict_and_nothing_changes() {
    let w = World::new();
    let h = two_turns(&w);
    rewind(&w, &h, 1, RewindScope::Both);
    undo(&w, &h).unwrap();
    w.put("a.txt", b"by hand\n");
    let files = w.files();
    let heads = w.heads(&h);
    let e = redo(&w, &h, None).unwrap_err();
    assert_eq!(e.code, ErrorCode::Conflict, "{e:?}");
    assert!(e.message.contains("a.txt"), "{e:?}");
    let Some(ErrorDetails::Conflicts { conflicts }) = &e.details else {
        panic!("expected the files in the details: {e:?}");
    };
    let listed: Vec<(&str, ConflictReason)> = conflicts.iter().map(|c| (c.path.as_str(), c.reason)).collect();
    assert_eq!(listed, [("a.txt", ConflictReason::ManualEdit)]);
    assert_eq!(w.files(), files, "no file written");
    assert_eq!(w.heads(&h), heads, "no head made or selected");
    assert_eq!(w.head(&h), "main");
    // Put back, the redo goes ahead.
    w.put("a.txt", b"a1\n");
    redo(&w, &h, None).unwrap();
    assert_eq!(w.read("a.txt").unwrap(), b"a0\n");
}

#[test]
fn what_there_is_to_redo() {
    let w = World::new();
    let h = two_turns(&w);
    let e = redo(&w, &h, None).unwrap_err();
    assert_eq!(e.code, ErrorCode::Refused);
    assert!(e.message.starts_with("nothing to redo"), "{e:?}");
    let e = redo(&w, &h, Some("00000099-deadbeef")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound, "{e:?}");
    let r = rewind(&w, &h, 1, RewindScope::Code);
    let u = undo(&w, &h).unwrap();
    // The undo's own transaction is not the one to name.
    let e = redo(&w, &h, u.transaction_id.as_deref()).unwrap_err();
    assert_eq!(e.code, ErrorCode::Refused, "{e:?}");
    assert!(e.message.contains(r.transaction_id.as_deref().unwrap()), "{e:?}");
    // A new rewind ends it.
    let again = rewind(&w, &h, 0, RewindScope::Code);
    assert!(!again.redo_available);
    assert_eq!(redo(&w, &h, None).unwrap_err().code, ErrorCode::Refused);
}
