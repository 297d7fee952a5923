//! Summary heads: "summarize from here" and "summarize up to here" (SPEC §5.1 actions 5, 6).

use retrace_session::{HeadId, HeadKind, MessageKind, Role, SessionError, SummaryMode, SummarySpec};

use crate::common::{contents, exchange, say, turn, Env};

fn spec(head: &HeadId, turn: u64, mode: SummaryMode, text: &str) -> SummarySpec {
    SummarySpec {
        compaction: false,
        usage: None,
        head: head.clone(),
        turn,
        mode,
        content: text.to_string(),
        name: None,
        select: false,
    }
}

#[test]
fn summarize_from_and_up_to_keep_a_prefix_or_a_suffix_and_leave_the_source() {
    let env = Env::new();
    let mut s = env.create();
    let main = HeadId::main();
    for i in 0..3 {
        exchange(&mut s, &main, &format!("u{i}"), &format!("a{i}"));
    }
    let source = contents(&s, &main);
    let log_lines = crate::common::lines(s.log_path()).len();

    // From turn 1: u0 a0 + S.
    let folded: Vec<_> = s
        .summary_source(&main, 1, SummaryMode::From)
        .unwrap()
        .into_iter()
        .map(|m| m.content.clone())
        .collect();
    assert_eq!(folded, ["u1", "a1", "u2", "a2"]);
    let from = s
        .summarize(SummarySpec {
            compaction: false,
            usage: None,
            name: Some("short".into()),
            select: true,
            ..spec(&main, 1, SummaryMode::From, "S-from")
        })
        .unwrap()
        .head;
    assert_eq!(
        crate::common::lines(s.log_path()).len(),
        log_lines + 2,
        "summary + select"
    );
    assert_eq!(s.selected(), &from);
    assert_eq!(contents(&s, &from), ["u0", "a0", "S-from"]);
    let msgs = s.project(&from).unwrap();
    assert_eq!((msgs[2].kind, msgs[2].role), (MessageKind::Summary, Role::User));
    let info = s.head(&from).unwrap();
    assert_eq!(info.kind, HeadKind::Summary);
    assert_eq!(info.name.as_deref(), Some("short"));
    assert_eq!(info.parent_head.as_ref(), Some(&main));
    assert_eq!(info.fork_from.as_ref(), Some(&msgs[1].id));
    assert_eq!(info.turns, 1, "turns 1 and 2 were folded");
    assert_eq!(contents(&s, &main), source, "the source head is untouched");

    // Up to turn 2: S + u2 a2; turn 2 stays visible with its id, its boundary right after S.
    let folded: Vec<_> = s
        .summary_source(&main, 2, SummaryMode::UpTo)
        .unwrap()
        .into_iter()
        .map(|m| m.content.clone())
        .collect();
    assert_eq!(folded, ["u0", "a0", "u1", "a1"]);
    let upto = s
        .summarize(spec(&main, 2, SummaryMode::UpTo, "S-upto"))
        .unwrap()
        .head;
    assert_eq!(s.selected(), &from, "not selected unless asked");
    assert_eq!(contents(&s, &upto), ["S-upto", "u2", "a2"]);
    let b = s.boundary(&upto, 2).unwrap();
    let summary_id = s.project(&upto).unwrap()[0].id.clone();
    assert_eq!((b.index, b.before), (1, Some(summary_id)));
    assert!(matches!(
        s.boundary(&upto, 0),
        Err(SessionError::TurnNotVisible { turn: 0, .. })
    ));
    assert_eq!(s.head(&upto).unwrap().fork_from, None);

    // Both continue like any head, and a turn on the up-to head can be summarized again.
    let t3 = exchange(&mut s, &upto, "u3", "a3");
    say(&mut s, &from, "more");
    assert_eq!(contents(&s, &upto), ["S-upto", "u2", "a2", "u3", "a3"]);
    assert_eq!(contents(&s, &from), ["u0", "a0", "S-from", "more"]);
    let again = s
        .summarize(spec(&upto, t3.turn, SummaryMode::UpTo, "S2"))
        .unwrap()
        .head;
    assert_eq!(contents(&s, &again), ["S2", "u3", "a3"]);

    // Reopening replays the same heads.
    let id = s.id().clone();
    drop(s);
    let r = env.reader(&id);
    assert_eq!(contents(&r, &main), source);
    assert_eq!(contents(&r, &from), ["u0", "a0", "S-from", "more"]);
    assert_eq!(contents(&r, &upto), ["S-upto", "u2", "a2", "u3", "a3"]);
    assert_eq!(contents(&r, &again), ["S2", "u3", "a3"]);
    assert_eq!(r.selected(), &from);
}

#[test]
fn summarizing_nothing_is_refused() {
    let env = Env::new();
    let mut s = env.create();
    let main = HeadId::main();
    exchange(&mut s, &main, "u0", "a0");
    let t1 = turn(&mut s, &main, "u1"); // no answer yet
    let revision = s.revision();
    fn nothing<T>(r: Result<T, SessionError>) -> bool {
        matches!(r, Err(SessionError::NothingToSummarize))
    }
    // Up to the first turn: nothing before it.
    assert!(nothing(s.summarize(spec(&main, 0, SummaryMode::UpTo, "x"))));
    // From a turn with nothing after its user message.
    assert!(nothing(s.summarize(spec(&main, t1.turn, SummaryMode::From, "x"))));
    assert!(nothing(s.summary_source(&main, t1.turn, SummaryMode::From)));
    // From turn 0 there is something (a0, u1).
    assert!(s.summary_source(&main, 0, SummaryMode::From).is_ok());
    // A note before the turn is not worth a summary.
    let r = s.fork(&main, None, Default::default()).unwrap().head;
    s.note(&r, "restored").unwrap();
    let t2 = turn(&mut s, &r, "u2");
    say(&mut s, &r, "a2");
    assert!(nothing(s.summarize(spec(&r, t2.turn, SummaryMode::UpTo, "x"))));
    // Unknown and invisible turns.
    assert!(matches!(
        s.summarize(spec(&main, 9, SummaryMode::From, "x")),
        Err(SessionError::UnknownTurn(9))
    ));
    assert!(matches!(
        s.summarize(spec(&r, 0, SummaryMode::From, "x")),
        Err(SessionError::TurnNotVisible { .. })
    ));
    assert_eq!(
        s.revision(),
        revision + 5,
        "fork, note, turn (2 lines), answer: no summary line"
    );
}

/// The count a server reported for a request is used by a later process only while the head's
/// path still begins with what that request held: not after an "up to" summary replaced the
/// messages before the answer it counted.
#[test]
fn the_last_count_is_the_newest_whose_prefix_the_path_still_has() {
    use retrace_protocol::TokenUsage;
    use retrace_session::NewMessage;
    let env = Env::new();
    let mut s = env.create();
    let main = HeadId::main();
    let counted = |s: &mut retrace_session::Session, head: &HeadId, tokens: u64| {
        s.append(
            head,
            NewMessage {
                usage: Some(TokenUsage {
                    prompt_tokens: tokens,
                    completion_tokens: 1,
                    total_tokens: tokens + 1,
                    cached_tokens: 0,
                }),
                ..NewMessage::new(Role::Assistant, "answer")
            },
        )
        .unwrap();
        s.end_turn().unwrap();
    };
    assert_eq!(s.last_counted(&main).unwrap(), None);
    turn(&mut s, &main, "u0");
    counted(&mut s, &main, 100);
    turn(&mut s, &main, "u1");
    counted(&mut s, &main, 200);
    // u0 a0 u1 a1: the answer to turn 1 was counted with three messages before it.
    assert_eq!(s.last_counted(&main).unwrap(), Some((3, 200)));
    // Its whole usage, prompt and answer, is what the conversation took of the context.
    let usage = s.last_usage(&main).unwrap().unwrap();
    assert_eq!((usage.prompt_tokens, usage.completion_tokens), (200, 1));
    turn(&mut s, &main, "u2");
    assert_eq!(s.last_counted(&main).unwrap(), Some((3, 200)), "no newer count");
    s.end_turn().unwrap();
    // Up to turn 1: S u1 a1 u2. a1's count was of u0 a0 u1, which this path no longer holds.
    let up_to = s.summarize(spec(&main, 1, SummaryMode::UpTo, "S")).unwrap().head;
    assert_eq!(contents(&s, &up_to), ["S", "u1", "answer", "u2"]);
    assert_eq!(s.last_counted(&up_to).unwrap(), None);
    assert_eq!(s.last_usage(&up_to).unwrap(), None);
    // A request made on the summary head is counted again.
    turn(&mut s, &up_to, "u3");
    counted(&mut s, &up_to, 50);
    assert_eq!(s.last_counted(&up_to).unwrap(), Some((5, 50)));
    assert_eq!(
        s.last_counted(&main).unwrap(),
        Some((3, 200)),
        "the source keeps its own"
    );
}

/// Found by the fourth new-user trial: the tokens a summary's request took were not counted in
/// the session's tally. They are recorded with the summary and counted after a reopen; they are
/// no head's context.
#[test]
fn a_summarys_request_counts_in_the_tally_after_a_reopen() {
    let env = Env::new();
    let mut s = env.create();
    let main = HeadId::main();
    for i in 0..3 {
        exchange(&mut s, &main, &format!("u{i}"), &format!("a{i}"));
    }
    let before: u64 = s.spent().iter().map(|x| x.usage.prompt_tokens).sum();
    let usage = retrace_protocol::TokenUsage {
        prompt_tokens: 1000,
        completion_tokens: 50,
        ..Default::default()
    };
    let made = s
        .summarize(SummarySpec {
            usage: Some(usage),
            select: true,
            ..spec(&main, 2, SummaryMode::UpTo, "S")
        })
        .unwrap()
        .head;
    let id = s.id().clone();
    drop(s);
    let s = env.reader(&id);
    let spent = s.spent();
    let prompt: u64 = spent.iter().map(|x| x.usage.prompt_tokens).sum();
    let completion: u64 = spent.iter().map(|x| x.usage.completion_tokens).sum();
    assert_eq!(prompt, before + 1000);
    assert!(completion >= 50);
    assert_ne!(s.last_usage(&made).unwrap(), Some(usage));
}
