//! Heads: creation, fork / select / retire / switch rules, projection after nested forks.

use std::os::unix::fs::PermissionsExt;

use retrace_session::{ForkSpec, HeadId, HeadKind, MessageId, MessageKind, Role, SessionError};

use crate::common::{contents, exchange, lines, say, Env};

#[test]
fn a_new_session_has_main_selected_and_private_files() {
    let env = Env::new();
    let s = env.create();
    assert_eq!(s.format(), 2);
    assert_eq!(s.selected(), &HeadId::main());
    let heads = s.heads();
    assert_eq!(heads.len(), 1);
    assert_eq!(heads[0].kind, HeadKind::Main);
    assert!(heads[0].selected && !heads[0].retired);
    assert_eq!((heads[0].message_count, heads[0].turns), (0, 0));
    assert_eq!(
        s.workspace().unwrap(),
        std::fs::canonicalize(&env.workspace).unwrap().to_str().unwrap()
    );
    let log = lines(s.log_path());
    assert_eq!(log.len(), 2);
    assert!(log[0].starts_with(r#"{"type":"session","id":""#), "{}", log[0]);
    assert!(log[0].contains(r#""format":2"#));
    assert!(log[1].starts_with(r#"{"type":"fork","head":"main","kind":"main","from":null"#));
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(s.log_path()), 0o600);
    assert_eq!(mode(&env.dir), 0o700);
    assert_eq!(mode(&env.dir.join(format!("{}.lease", s.id()))), 0o600);
}

#[test]
fn fork_select_retire_and_switch_rules() {
    let env = Env::new();
    let mut s = env.create();
    let main = HeadId::main();
    let t0 = exchange(&mut s, &main, "u0", "a0");

    // Fork refusals.
    let kind_main = ForkSpec {
        kind: HeadKind::Main,
        ..ForkSpec::default()
    };
    assert!(matches!(
        s.fork(&main, None, kind_main),
        Err(SessionError::ForkKindMain)
    ));
    let nowhere = MessageId::new("no-such-message");
    assert!(matches!(
        s.fork(&main, Some(&nowhere), ForkSpec::default()),
        Err(SessionError::UnknownMessage(_))
    ));
    assert!(matches!(
        s.fork(&HeadId::new("h-nope"), None, ForkSpec::default()),
        Err(SessionError::UnknownHead(_))
    ));
    let empty_name = ForkSpec {
        name: Some("  ".into()),
        ..ForkSpec::default()
    };
    assert!(matches!(
        s.fork(&main, None, empty_name),
        Err(SessionError::EmptyName)
    ));

    // A named fork, not selected; then its own message is not on main.
    let named = ForkSpec {
        name: Some("idea".into()),
        ..ForkSpec::default()
    };
    let f = s.fork(&main, Some(&t0.message_id), named).unwrap().head;
    assert_eq!(s.selected(), &main);
    assert_eq!(s.resolve_head("idea").unwrap(), f);
    assert_eq!(s.resolve_head(f.as_str()).unwrap(), f);
    assert!(matches!(
        s.resolve_head("nope"),
        Err(SessionError::UnknownHead(_))
    ));
    let taken = |name: &str| ForkSpec {
        name: Some(name.into()),
        ..ForkSpec::default()
    };
    assert!(matches!(
        s.fork(&main, None, taken("idea")),
        Err(SessionError::NameTaken(_))
    ));
    assert!(matches!(
        s.fork(&main, None, taken("main")),
        Err(SessionError::NameTaken(_))
    ));
    say(&mut s, &f, "on f");
    let on_f = s.tip(&f).unwrap().unwrap().clone();
    assert!(matches!(
        s.fork(&main, Some(&on_f), ForkSpec::default()),
        Err(SessionError::NotOnHead { .. })
    ));

    // Switch: select writes one line; selecting the selected head writes nothing.
    let rev = s.revision();
    s.select(&f).unwrap();
    assert_eq!(s.selected(), &f);
    assert_eq!(s.revision(), rev + 1);
    s.select(&f).unwrap();
    assert_eq!(s.revision(), rev + 1);

    // Retire: refused for the selected head; allowed otherwise; once.
    assert!(matches!(s.retire(&f), Err(SessionError::RetireSelected(_))));
    s.select(&main).unwrap();
    s.retire(&f).unwrap();
    let info = s.head(&f).unwrap();
    assert!(info.retired && !info.selected);
    assert!(matches!(s.retire(&f), Err(SessionError::HeadRetired(_))));
    // A retired head cannot be selected or continued, but stays readable and can be forked from.
    assert!(matches!(s.select(&f), Err(SessionError::HeadRetired(_))));
    assert!(matches!(
        s.append(&f, retrace_session::NewMessage::new(Role::User, "x")),
        Err(SessionError::HeadRetired(_))
    ));
    assert_eq!(contents(&s, &f), ["u0", "on f"]);
    let revived = s
        .fork(
            &f,
            Some(&on_f),
            ForkSpec {
                select: true,
                ..ForkSpec::default()
            },
        )
        .unwrap()
        .head;
    assert_eq!(s.selected(), &revived);
    assert_eq!(contents(&s, &revived), ["u0", "on f"]);

    // The rules hold after reopening.
    drop(s);
    let r = env.reader(&env.log_id());
    assert_eq!(r.selected(), &revived);
    assert!(r.head(&f).unwrap().retired);
    assert_eq!(r.head(&f).unwrap().name.as_deref(), Some("idea"));
}

#[test]
fn projection_after_nested_forks() {
    let env = Env::new();
    let mut s = env.create();
    let main = HeadId::main();
    let t0 = exchange(&mut s, &main, "u0", "a0");
    let t1 = exchange(&mut s, &main, "u1", "a1");
    let _t2 = exchange(&mut s, &main, "u2", "a2");

    // A rewind to turn 1: ends just before u1.
    let b1 = s.boundary(&main, t1.turn).unwrap();
    assert_eq!(b1.index, 2);
    let rewind = ForkSpec {
        kind: HeadKind::Rewind,
        ..ForkSpec::default()
    };
    let r = s.fork(&main, b1.before.as_ref(), rewind).unwrap().head;
    let t3 = exchange(&mut s, &r, "u3", "a3");
    // A fork of the rewind head in the middle of its own messages.
    let g = s
        .fork(&r, Some(&t3.message_id), ForkSpec::default())
        .unwrap()
        .head;
    say(&mut s, &g, "g1");
    // A fork of g at a message g shares with main.
    let h = s
        .fork(&g, Some(&t0.message_id), ForkSpec::default())
        .unwrap()
        .head;
    say(&mut s, &h, "h1");
    // A fork from the empty path.
    let e = s.fork(&main, None, ForkSpec::default()).unwrap().head;
    say(&mut s, &e, "e1");
    // main keeps growing after all that.
    say(&mut s, &main, "late");

    let expect = [
        (&main, vec!["u0", "a0", "u1", "a1", "u2", "a2", "late"]),
        (&r, vec!["u0", "a0", "u3", "a3"]),
        (&g, vec!["u0", "a0", "u3", "g1"]),
        (&h, vec!["u0", "h1"]),
        (&e, vec!["e1"]),
    ];
    for (head, want) in &expect {
        assert_eq!(contents(&s, head), *want, "head {head}");
        assert_eq!(s.head(head).unwrap().message_count, want.len());
    }
    let info = s.head(&g).unwrap();
    assert_eq!(info.parent_head.as_ref(), Some(&r));
    assert_eq!(info.fork_from.as_ref(), Some(&t3.message_id));
    assert_eq!(info.kind, HeadKind::Fork);
    assert_eq!(s.head(&r).unwrap().kind, HeadKind::Rewind);
    assert_eq!(s.head(&e).unwrap().fork_from, None);
    // Messages keep the head they were written on, whatever path shows them.
    let on_g = s.project(&g).unwrap();
    assert_eq!(on_g[0].head, main);
    assert_eq!(on_g[2].head, r);
    assert!(on_g.iter().all(|m| m.kind == MessageKind::Message));

    // Turns visible per head: main 0,1,2; r 0,3; g 0,3; h 0; e none.
    let visible = |head: &HeadId| -> Vec<u64> {
        s.turns_on(head)
            .unwrap()
            .into_iter()
            .filter(|t| t.visible())
            .map(|t| t.info.turn)
            .collect()
    };
    assert_eq!(visible(&main), [0, 1, 2]);
    assert_eq!(visible(&r), [0, 3]);
    assert_eq!(visible(&g), [0, 3]);
    assert_eq!(visible(&h), [0]);
    assert!(visible(&e).is_empty());
    assert_eq!(s.head(&r).unwrap().turns, 2);

    // A reader sees the same projections.
    let id = s.id().clone();
    drop(s);
    let reader = env.reader(&id);
    for (head, want) in &expect {
        assert_eq!(contents(&reader, head), *want, "reopened head {head}");
    }
}

#[test]
fn a_fork_appends_one_line_and_copies_no_message() {
    let env = Env::new();
    let mut s = env.create();
    let main = HeadId::main();
    for i in 0..50 {
        exchange(&mut s, &main, &format!("prompt {i}"), &format!("answer {i}"));
    }
    let before = std::fs::metadata(s.log_path()).unwrap().len();
    let at = s.tip(&main).unwrap().cloned();
    let f = s.fork(&main, at.as_ref(), ForkSpec::default()).unwrap().head;
    let log = lines(s.log_path());
    let after = std::fs::metadata(s.log_path()).unwrap().len();
    let last = log.last().unwrap();
    assert_eq!(
        after - before,
        last.len() as u64 + 1,
        "exactly one line was appended"
    );
    assert!(last.starts_with(r#"{"type":"fork""#), "{last}");
    assert!(!last.contains("answer"), "{last}");
    assert_eq!(s.head(&f).unwrap().message_count, 100);
}

impl Env {
    /// The id of the only session in the directory.
    pub fn log_id(&self) -> retrace_session::SessionId {
        let list = retrace_session::list_sessions(&self.dir, None).unwrap();
        assert_eq!(list.sessions.len(), 1);
        list.sessions[0].id.clone()
    }
}
