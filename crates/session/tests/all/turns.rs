//! Turn bookkeeping, notes, when the log is fsynced, and what happens when a write fails.

use retrace_fsutil::{FaultInjector, Fs};
use retrace_session::{Boundary, HeadId, MessageKind, NewMessage, Role, SessionError, ToolCall, TurnStart};

use crate::common::{contents, exchange, turn, Env};

#[test]
fn turns_are_numbered_bound_to_their_user_message_and_never_reused() {
    let env = Env::new();
    let mut s = env.create();
    let main = HeadId::main();
    assert_eq!(s.next_turn(), 0);
    let t0 = exchange(&mut s, &main, "u0", "a0");
    assert_eq!(
        (t0.turn, t0.boundary.index, t0.boundary.before.clone()),
        (0, 0, None)
    );

    // The caller may skip numbers (the sidecar knows higher ones) and pre-draw the message id.
    let id = s.new_message_id();
    let t5 = s
        .start_turn(TurnStart {
            turn: 5,
            head: main.clone(),
            message_id: Some(id.clone()),
            content: "u5".into(),
        })
        .unwrap();
    assert_eq!(t5.message_id, id);
    assert_eq!(t5.boundary.index, 2);
    assert_eq!(s.next_turn(), 6);
    let reused = TurnStart {
        turn: 3,
        head: main.clone(),
        message_id: None,
        content: "u3".into(),
    };
    assert!(matches!(
        s.start_turn(reused),
        Err(SessionError::TurnReused { turn: 3, next: 6 })
    ));
    let dup = TurnStart {
        turn: 6,
        head: main.clone(),
        message_id: Some(id.clone()),
        content: "again".into(),
    };
    assert!(matches!(
        s.start_turn(dup),
        Err(SessionError::DuplicateMessage(_))
    ));

    // Tool calls and results round-trip.
    let call = ToolCall {
        id: "c1".into(),
        name: "write_file".into(),
        arguments: r#"{"path":"a.txt","content":"hi\n"}"#.into(),
    };
    s.append(
        &main,
        NewMessage {
            tool_calls: vec![call.clone()],
            ..NewMessage::new(Role::Assistant, "")
        },
    )
    .unwrap();
    s.append(
        &main,
        NewMessage {
            tool_call_id: Some("c1".into()),
            ..NewMessage::new(Role::Tool, "ok")
        },
    )
    .unwrap();
    s.end_turn().unwrap();

    let turns = s.turns();
    assert_eq!(turns.iter().map(|t| t.turn).collect::<Vec<_>>(), [0, 5]);
    assert_eq!(turns[1].message_id, id);
    assert_eq!(turns[1].head, main);
    let b = s.boundary(&main, 5).unwrap();
    assert_eq!(b.index, 2);
    assert_eq!(b.before.as_ref(), s.project(&main).unwrap().get(1).map(|m| &m.id));
    assert!(matches!(s.boundary(&main, 4), Err(SessionError::UnknownTurn(4))));

    let sid = s.id().clone();
    drop(s);
    let r = env.reader(&sid);
    assert_eq!(r.next_turn(), 6);
    let msgs = r.project(&main).unwrap();
    assert_eq!(msgs[0].turn, Some(0));
    assert_eq!(msgs[2].turn, Some(5));
    assert_eq!(msgs[1].turn, None);
    assert_eq!(msgs[3].tool_calls, vec![call]);
    assert_eq!(msgs[4].tool_call_id.as_deref(), Some("c1"));
}

#[test]
fn a_turn_is_visible_only_on_heads_holding_its_user_message() {
    let env = Env::new();
    let mut s = env.create();
    let main = HeadId::main();
    exchange(&mut s, &main, "u0", "a0");
    let t1 = exchange(&mut s, &main, "u1", "a1");
    let before = s.boundary(&main, t1.turn).unwrap().before;
    let r = s.fork(&main, before.as_ref(), Default::default()).unwrap().head;
    let on_r = s.turns_on(&r).unwrap();
    assert!(on_r[0].visible());
    assert!(!on_r[1].visible());
    assert!(matches!(
        s.boundary(&r, t1.turn),
        Err(SessionError::TurnNotVisible { turn: 1, .. })
    ));
    // A turn run on r numbers after every turn of the session, and is not visible on main.
    let t2 = turn(&mut s, &r, "u2");
    assert_eq!(t2.turn, 2);
    assert_eq!(
        t2.boundary,
        Boundary {
            index: 2,
            before: s.project(&r).unwrap().get(1).map(|m| m.id.clone()),
        }
    );
    assert!(!s.turns_on(&main).unwrap()[2].visible());
    assert_eq!(s.head(&main).unwrap().turns, 2);
    assert_eq!(s.head(&r).unwrap().turns, 2);
}

#[test]
fn notes_are_system_messages_and_never_turns() {
    let env = Env::new();
    let mut s = env.create();
    let main = HeadId::main();
    exchange(&mut s, &main, "u0", "a0");
    let note = s.note(&main, "files restored to turn 0: a.txt").unwrap();
    assert!(note.migrated_from.is_none());
    let t1 = exchange(&mut s, &main, "u1", "a1");
    assert_eq!(t1.turn, 1);
    assert_eq!(
        t1.boundary.index, 3,
        "the note counts as a message before the turn"
    );
    let msgs = s.project(&main).unwrap();
    assert_eq!(msgs[2].kind, MessageKind::Note);
    assert_eq!(msgs[2].role, Role::System);
    assert_eq!(msgs[2].turn, None);
    assert_eq!(s.turns().len(), 2);
    let log = crate::common::lines(s.log_path());
    assert!(log.iter().any(|l| l.starts_with(r#"{"type":"note""#)));
}

#[test]
fn the_log_is_fsynced_after_the_user_message_and_at_turn_end_only() {
    let faults = FaultInjector::crash_at(0); // counts, never crashes
    let env = Env::with_fs(Fs::without_sync().with_faults(faults.clone()));
    let mut s = env.create();
    let main = HeadId::main();
    let mark = || faults.trail().len();
    let since = |from: usize| faults.trail()[from..].to_vec();

    let m = mark();
    turn(&mut s, &main, "u0");
    assert_eq!(since(m), ["append", "sync_log"]);
    let m = mark();
    s.append(&main, NewMessage::new(Role::Assistant, "a0")).unwrap();
    s.append(&main, NewMessage::new(Role::Tool, "r0")).unwrap();
    assert_eq!(since(m), ["append", "append"]);
    let m = mark();
    s.end_turn().unwrap();
    assert_eq!(since(m), ["sync_log"]);
    let m = mark();
    s.fork(&main, None, Default::default()).unwrap();
    assert_eq!(since(m), ["append", "sync_log"]);
}

#[test]
fn readers_cannot_write() {
    let env = Env::new();
    let s = env.create();
    let id = s.id().clone();
    let mut r = env.reader(&id);
    let main = HeadId::main();
    assert!(!r.is_writer());
    assert!(matches!(
        r.append(&main, NewMessage::new(Role::User, "x")),
        Err(SessionError::ReadOnly(_))
    ));
    assert!(matches!(r.select(&main), Err(SessionError::ReadOnly(_))));
    assert!(matches!(r.end_turn(), Err(SessionError::ReadOnly(_))));
    assert!(matches!(
        r.fork(&main, None, Default::default()),
        Err(SessionError::ReadOnly(_))
    ));
}

#[test]
fn a_failed_append_poisons_the_session_and_leaves_the_log_whole() {
    let env = Env::new();
    let mut s = env.create();
    let main = HeadId::main();
    exchange(&mut s, &main, "u0", "a0");
    let id = s.id().clone();
    drop(s);

    // Reopen with an injector that kills the next durable step (the append itself).
    let faults = FaultInjector::crash_at(1);
    let mut opts = env.opts.clone();
    opts.fs = Fs::without_sync().with_faults(faults);
    let mut s = opts.open_writer(&env.dir, &id).unwrap();
    let err = s.append(&main, NewMessage::new(Role::User, "lost")).unwrap_err();
    assert!(matches!(err, SessionError::Io { op: "append to", .. }), "{err}");
    let again = s.append(&main, NewMessage::new(Role::User, "refused"));
    assert!(matches!(again, Err(SessionError::Poisoned { .. })));
    drop(s);

    let r = env.reader(&id);
    assert_eq!(contents(&r, &main), ["u0", "a0"]);
    assert!(r.warnings().is_empty());
}
