//! A new session holding part of another's conversation (a fork into a new workspace): the
//! copied path, the turn lines, the header's `forked_from`, and a source left byte for byte.

use retrace_session::{HeadId, SessionCopy, SessionError};

use crate::common::{contents, exchange, Env};

#[test]
fn the_new_session_holds_the_path_before_the_turn_and_names_its_source() {
    let env = Env::new();
    let mut s = env.create();
    let main = HeadId::main();
    exchange(&mut s, &main, "u0", "a0");
    let t1 = exchange(&mut s, &main, "u1", "a1");
    exchange(&mut s, &main, "u2", "a2");
    let log_before = std::fs::read(s.log_path()).unwrap();
    let other_ws = env.tmp.path().join("other");
    std::fs::create_dir_all(&other_ws).unwrap();
    let b = t1.boundary.clone();
    let copy = SessionCopy {
        workspace: other_ws.clone(),
        turn: t1.turn,
        directory: other_ws.to_string_lossy().into_owned(),
        git_worktree: true,
        made: Some(retrace_session::MadeDir {
            dev: 1,
            ino: 2,
            born: None,
            git_admin: Some("/r/.git/worktrees/b".into()),
        }),
        name: Some("try-b".into()),
    };
    let new = s
        .copy_into_new(&env.dir, &env.opts, &main, b.before.as_ref(), copy)
        .unwrap();
    assert_ne!(new.id(), s.id());
    assert_eq!(contents(&new, &main), ["u0", "a0"]);
    let turns: Vec<u64> = new.turns().iter().map(|t| t.turn).collect();
    assert_eq!(turns, [0]);
    assert_eq!(new.next_turn(), 1, "numbers go on from the copied turns");
    let from = new.forked_from().unwrap();
    assert_eq!(&from.session_id, s.id());
    assert_eq!((from.format, from.messages, from.turn), (2, 2, Some(t1.turn)));
    assert_eq!(from.head.as_ref(), Some(&main));
    assert!(from.git_worktree);
    assert_eq!(
        new.workspace().unwrap(),
        std::fs::canonicalize(&other_ws).unwrap().to_str().unwrap()
    );
    assert_eq!(new.heads()[0].name.as_deref(), Some("try-b"));
    assert_eq!(
        std::fs::read(s.log_path()).unwrap(),
        log_before,
        "the source is not written"
    );
    // Listed with where it came from.
    let listed = retrace_session::list_sessions(&env.dir, Some(&other_ws)).unwrap();
    assert_eq!(listed.sessions.len(), 1);
    assert_eq!(listed.sessions[0].forked_from.as_ref(), Some(from));
}

#[test]
fn a_bad_name_makes_nothing() {
    let env = Env::new();
    let mut s = env.create();
    let main = HeadId::main();
    let t0 = exchange(&mut s, &main, "u0", "a0");
    let copy = SessionCopy {
        workspace: env.workspace.clone(),
        turn: t0.turn,
        directory: env.workspace.to_string_lossy().into_owned(),
        git_worktree: false,
        made: None,
        name: Some("  ".into()),
    };
    let e = s
        .copy_into_new(&env.dir, &env.opts, &main, None, copy)
        .unwrap_err();
    assert!(matches!(e, SessionError::EmptyName), "{e}");
    let listed = retrace_session::list_sessions(&env.dir, None).unwrap();
    assert_eq!(listed.sessions.len(), 1);
}
