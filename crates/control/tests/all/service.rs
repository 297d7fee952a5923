//! The controller as a service (ARCHITECTURE.md, issue "one handle that every frontend shares"),
//! through its handles only: numbered events for several subscribers, resuming after a number,
//! `lagged` for a slow subscriber, approvals by `call_id` from another task, cancel as a request,
//! requests refused while a turn runs, one actor per session, and a session whose every handle is
//! dropped mid-turn that the next process continues against a strict server.

use std::os::unix::fs::FileTypeExt;
use std::time::Duration;

use crate::support::{until, until_finished, write, World};
use retrace_control::{Service, SessionHandle};
use retrace_protocol::{
    ApprovalDecision, BashPolicy, CommitRevert, CommitRewind, Delivery, ErrorCode, ErrorDetails, Event,
    ForkRequest, JobKind, Missing, ModelSpec, Numbered, OnConflict, PrepareRevert, PrepareRewind, Provider,
    RewindScope, Role, RunningJob, SummarizeDirection, SummarizeRequest, SwitchRequest, UndoRequest,
};
use retrace_testkit::mock_openai::{sse, Chunk, MockServer, Reply};
use serde_json::json;

fn seqs(events: &[Numbered]) -> Vec<u64> {
    events.iter().map(|n| n.seq).collect()
}

fn bash(id: &str, command: &str) -> serde_json::Value {
    json!({"id": id, "name": "bash", "arguments": {"command": command}})
}

#[test]
fn two_subscribers_receive_the_same_numbered_events_of_a_turn() {
    let w = World::new();
    let h = w.open();
    let other = h.clone();
    let model = w.script(json!([
        {"content": "working", "tool_calls": [write("a.txt", "1\n"), write("b.txt", "2\n")]},
        {"content": "done"}
    ]));
    let (one, two) = w.run(async {
        h.set_model(model).await.unwrap();
        let mut first = h.subscribe(None);
        let mut second = other.subscribe(None);
        let turn = h.send("go").await.unwrap().turn;
        let (o1, e1) = until_finished(&mut first, turn).await;
        let (o2, e2) = until_finished(&mut second, turn).await;
        assert!(o1.ok && o2.ok, "{o1:?}");
        (e1, e2)
    });
    assert_eq!(one, two, "the same events, with the same numbers");
    let numbers = seqs(&one);
    assert!(
        numbers.windows(2).all(|p| p[1] == p[0] + 1),
        "consecutive: {numbers:?}"
    );
    assert!(matches!(one[0].event, Event::TurnStarted { .. }), "{:?}", one[0]);
    for kind in ["tool_call", "tool_result", "checkpoint_captured", "turn_finished"] {
        assert!(
            one.iter()
                .any(|n| serde_json::to_value(&n.event).unwrap()["type"] == kind),
            "{kind} in {one:?}"
        );
    }
    assert_eq!(
        w.run(h.status()).unwrap().last_event_seq,
        *numbers.last().unwrap()
    );
}

#[test]
fn a_subscriber_that_resumes_after_its_last_number_misses_nothing() {
    let w = World::new();
    let h = w.open();
    let model = w.script(json!([
        {"content": "a", "tool_calls": [write("a.txt", "1\n")]},
        {"content": "b", "tool_calls": [write("b.txt", "2\n")]},
        {"content": "done"}
    ]));
    let (all, resumed) = w.run(async {
        h.set_model(model).await.unwrap();
        let mut full = h.subscribe(None);
        let mut flaky = h.subscribe(None);
        let turn = h.send("go").await.unwrap().turn;
        // The flaky client reads three events, then its connection drops.
        let mut got = Vec::new();
        for _ in 0..3 {
            match flaky.recv().await.unwrap() {
                Delivery::Event(n) => got.push(n),
                other => panic!("{other:?}"),
            }
        }
        drop(flaky);
        let last = got.last().unwrap().seq;
        let (outcome, all) = until_finished(&mut full, turn).await;
        assert!(outcome.ok);
        // It reconnects with the last number it saw, after the turn is over.
        let mut again = h.subscribe(Some(last));
        let (_, rest) = until_finished(&mut again, turn).await;
        got.extend(rest);
        (all, got)
    });
    assert_eq!(resumed, all, "nothing missed, nothing twice");
}

#[test]
fn a_slow_subscriber_is_told_it_lagged_and_then_continues() {
    let w = World::with(None, |o| o.event_buffer = 16);
    let h = w.open();
    let calls: Vec<_> = (0..6).map(|i| write(&format!("f{i}.txt"), "x\n")).collect();
    let model = w.script(json!([{"content": "many", "tool_calls": calls}, {"content": "done"}]));
    w.run(async {
        h.set_model(model).await.unwrap();
        let mut slow = h.subscribe(None);
        let mut fast = h.subscribe(None);
        let turn = h.send("go").await.unwrap().turn;
        let (_, everything) = until_finished(&mut fast, turn).await;
        assert!(everything.len() > 16, "more events than the buffer holds");
        // The slow one never read; it is told, then gets the events still held, in order.
        match slow.recv().await.unwrap() {
            Delivery::Lagged { next_seq } => {
                assert!(next_seq > everything[0].seq);
                let mut rest = Vec::new();
                while rest
                    .last()
                    .is_none_or(|n: &Numbered| n.seq < everything.last().unwrap().seq)
                {
                    match slow.recv().await.unwrap() {
                        Delivery::Event(n) => rest.push(n),
                        other => panic!("{other:?}"),
                    }
                }
                assert_eq!(rest[0].seq, next_seq);
                assert_eq!(&everything[everything.len() - rest.len()..], &rest[..]);
            }
            other => panic!("expected lagged, got {other:?}"),
        }
        // Resuming from a number the buffer no longer holds says lagged too, never a silent gap.
        let mut late = h.subscribe(Some(1));
        assert!(matches!(late.recv().await, Some(Delivery::Lagged { .. })));
    });
}

#[test]
fn an_approval_is_answered_by_call_id_from_another_task() {
    let w = World::with(None, |o| o.bash = BashPolicy::Ask);
    let h = w.open();
    let model = w.script(json!([
        {"content": "", "tool_calls": [bash("c1", "echo allowed > yes.txt"), bash("c2", "echo denied > no.txt")]},
        {"content": "", "tool_calls": [bash("c3", "echo allowed > yes.txt")]},
        {"content": "done"}
    ]));
    let events = w.run(async {
        h.set_model(model).await.unwrap();
        let mut sub = h.subscribe(None);
        // Another frontend answers: it sees the requests on its own subscription.
        let other = h.clone();
        let mut theirs = other.subscribe(None);
        let answerer = tokio::spawn(async move {
            for decision in [ApprovalDecision::Session, ApprovalDecision::Deny] {
                let n = until(&mut theirs, |e| matches!(e, Event::ApprovalRequested { .. })).await;
                let Event::ApprovalRequested {
                    call_id,
                    tool,
                    command,
                    ..
                } = n.event
                else {
                    unreachable!()
                };
                assert_eq!(tool, "bash");
                assert!(command.starts_with("echo"), "{command}");
                other.approve(&call_id, decision).unwrap();
            }
        });
        let turn = h.send("go").await.unwrap().turn;
        let (outcome, events) = until_finished(&mut sub, turn).await;
        answerer.await.unwrap();
        assert!(outcome.ok, "{outcome:?}");
        events
    });
    let asked: Vec<String> = events
        .iter()
        .filter_map(|n| match &n.event {
            Event::ApprovalRequested { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .collect();
    // c3 repeats a command allowed for the session: not asked again.
    assert_eq!(asked, ["c1", "c2"]);
    let resolved: Vec<(String, ApprovalDecision)> = events
        .iter()
        .filter_map(|n| match &n.event {
            Event::ApprovalResolved { call_id, decision } => Some((call_id.clone(), *decision)),
            _ => None,
        })
        .collect();
    assert_eq!(
        resolved,
        [
            ("c1".to_string(), ApprovalDecision::Session),
            ("c2".to_string(), ApprovalDecision::Deny)
        ]
    );
    assert_eq!(w.read("yes.txt").unwrap(), b"allowed\n");
    assert_eq!(w.read("no.txt"), None, "the denied command did not run");
    let results: Vec<(String, bool)> = events
        .iter()
        .filter_map(|n| match &n.event {
            Event::ToolResult { id, ok, .. } => Some((id.clone(), *ok)),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        [("c1".into(), true), ("c2".into(), false), ("c3".into(), true)]
    );
    // Answering a call nobody waits for is not_found.
    let e = h.approve("c1", ApprovalDecision::Once).unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound);
}

#[test]
fn cancel_is_a_request_that_stops_the_turn_and_answers_every_call() {
    let w = World::with(None, |o| o.bash = BashPolicy::Allow);
    let h = w.open();
    let model = w.script(json!([
        {"content": "", "tool_calls": [bash("slow", "sleep 30"), write("never.txt", "x")]},
        {"content": "never reached"}
    ]));
    let (outcome, took) = w.run(async {
        h.set_model(model).await.unwrap();
        let mut sub = h.subscribe(None);
        let turn = h.send("go").await.unwrap().turn;
        until(
            &mut sub,
            |e| matches!(e, Event::ToolCall { id, .. } if id == "slow"),
        )
        .await;
        let started = std::time::Instant::now();
        // While it runs, writes are refused with the running turn named; reads are answered.
        let e = h
            .prepare_rewind(PrepareRewind {
                turn,
                scope: RewindScope::Code,
            })
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::TurnRunning);
        let job = RunningJob {
            kind: JobKind::Turn,
            turn,
        };
        assert_eq!(e.details, Some(ErrorDetails::Running { job }));
        assert_eq!(h.status().await.unwrap().running, Some(job));
        assert_eq!(h.checkpoints().await.unwrap().entries.len(), 1);
        assert!(h.cancel(), "a turn was running");
        let (outcome, _) = until_finished(&mut sub, turn).await;
        (outcome, started.elapsed())
    });
    assert!(!outcome.ok);
    assert_eq!(outcome.error.as_deref(), Some("cancelled by the user"));
    assert!(
        took < Duration::from_secs(20),
        "the shell was stopped, not waited for: {took:?}"
    );
    assert_eq!(w.read("never.txt"), None);
    assert!(!h.cancel(), "nothing runs any more");
    let t = w.transcript(&h, None);
    let calls: Vec<&str> = t
        .iter()
        .flat_map(|m| m.tool_calls.iter().flatten())
        .map(|c| c.id.as_str())
        .collect();
    let answered: Vec<&str> = t.iter().filter_map(|m| m.tool_call_id.as_deref()).collect();
    assert_eq!(calls.len(), 2, "{t:?}");
    assert_eq!(calls, answered, "every call answered, in order: {t:?}");
}

/// A streamed model reply that calls `calls` (id, name, arguments).
fn tool_reply(calls: &[(&str, &str, serde_json::Value)]) -> Reply {
    let mut chunks = Vec::new();
    for (i, (id, name, args)) in calls.iter().enumerate() {
        chunks.push(sse::tool_call_start(i as u64, id, name));
        chunks.push(sse::tool_call_args(i as u64, &args.to_string()));
    }
    chunks.push(sse::finish("tool_calls"));
    Reply::body(sse::body(&chunks, true))
}

fn text_reply(text: &str) -> Reply {
    Reply::body(sse::body(&[sse::content(text), sse::finish("stop")], true))
}

fn mock_model(server: &MockServer) -> ModelSpec {
    ModelSpec {
        base_url: Some(server.base_url()),
        ..ModelSpec::new(Provider::OpenAi, "mock")
    }
}

#[test]
fn dropping_every_handle_mid_turn_leaves_a_session_the_next_process_continues() {
    let w = World::with(None, |o| o.bash = BashPolicy::Allow);
    let server = w
        .run(MockServer::start_strict(vec![
            tool_reply(&[
                ("c1", "bash", json!({"command": "sleep 30"})),
                ("c2", "write_file", json!({"path": "late.txt", "content": "x"})),
            ]),
            text_reply("continued"),
        ]))
        .unwrap();
    let h = w.open();
    let id = h.session_id();
    w.run(async {
        h.set_model(mock_model(&server)).await.unwrap();
        let mut sub = h.subscribe(None);
        h.send("start something slow").await.unwrap();
        until(
            &mut sub,
            |e| matches!(e, Event::ToolCall { id, .. } if id == "c1"),
        )
        .await;
        // The frontend goes away mid-tool: its subscription and its only handle are dropped.
        drop(sub);
        drop(h);
        tokio::time::timeout(Duration::from_secs(20), w.svc.wait_closed())
            .await
            .expect("the session closes by itself, without waiting for the shell");
    });
    assert_eq!(w.read("late.txt"), None, "the turn was cancelled, not finished");
    // The next process: another service on the same data; the lease is free.
    let next = Service::new(w.options());
    let (outcome, transcript) = w.run(async {
        let h = next.open(id.as_str(), None).await.unwrap();
        h.set_model(mock_model(&server)).await.unwrap();
        let mut sub = h.subscribe(None);
        let turn = h.send("go on").await.unwrap().turn;
        let (outcome, _) = until_finished(&mut sub, turn).await;
        let t = h.transcript(None).await.unwrap();
        next.shutdown().await;
        (outcome, t)
    });
    assert!(outcome.ok, "{outcome:?}");
    assert_eq!(server.rejected(), 0, "the strict server accepted the history");
    assert_eq!(server.request_count(), 2);
    let answered: Vec<&str> = transcript
        .iter()
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    assert_eq!(answered, ["c1", "c2"]);
    assert_eq!(transcript.last().unwrap().content, "continued");
    assert_eq!(transcript.last().unwrap().role, Role::Assistant);
}

#[test]
fn one_actor_per_session_and_the_lease_goes_with_the_last_handle() {
    let w = World::new();
    let h = w.open();
    let id = h.session_id();
    // Opening it again in this process gives a handle to the same actor: same events.
    let again = w.run(w.svc.open(id.as_str(), None)).unwrap();
    // An id in upper case names it too (UUID text is case-insensitive): the same actor.
    let upper = w
        .run(w.svc.open(&id.as_str().to_ascii_uppercase(), None))
        .unwrap();
    assert_eq!(upper.session_id(), id);
    drop(upper);
    let mut sub = again.subscribe(None);
    w.turn(&h, "zero", vec![write("a.txt", "a\n")]);
    let seen = w.run(until(&mut sub, |e| matches!(e, Event::TurnFinished { .. })));
    assert!(seen.seq > 1);
    // Another process is refused while a handle lives: busy, naming the holder.
    let other = Service::new(w.options());
    let e = w.run(other.open(id.as_str(), None)).unwrap_err();
    assert_eq!(e.code, ErrorCode::Busy, "{e:?}");
    assert!(
        matches!(&e.details, Some(ErrorDetails::Holder { holder }) if holder.contains(&std::process::id().to_string())),
        "{e:?}"
    );
    // A workspace that is not the session's is a usage error, open or not.
    let elsewhere = w.tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let e = w.run(w.svc.open(id.as_str(), Some(&elsewhere))).unwrap_err();
    assert_eq!(e.code, ErrorCode::Usage, "{e:?}");
    drop((h, again, sub));
    w.run(w.svc.wait_closed());
    let reopened: SessionHandle = w.run(other.open(id.as_str(), None)).unwrap();
    assert_eq!(reopened.session_id(), id);
    w.run(other.shutdown());
}

/// What a frontend shows of a session another process holds is read without the lease: the reader's
/// snapshot is the handle's, but for what only the open session knows. This process's own sessions
/// are never "held elsewhere", and the newest of them is the one to open first. (A real second
/// process holding one: `crates/cli/tests/all/web_held_cli.rs`.)
#[test]
fn a_reader_snapshot_shows_what_the_handle_shows_and_own_sessions_are_not_held_elsewhere() {
    let w = World::new();
    let older = w.open();
    w.turn(&older, "older", vec![write("o.txt", "o\n")]);
    std::thread::sleep(Duration::from_millis(1100));
    let h = w.open();
    w.turn(&h, "zero", vec![write("a.txt", "a\n")]);
    let id = h.session_id();
    let mine = w.run(h.snapshot()).unwrap();
    let reader = w.svc.reader(id.as_str()).unwrap();
    let read = reader.snapshot().unwrap();
    assert_eq!(read.items, mine.items);
    assert_eq!(read.heads, mine.heads);
    assert_eq!(read.head_id, mine.head_id);
    assert_eq!(read.context_tokens, mine.context_tokens);
    assert_eq!((read.last_event_seq, read.status.running), (0, None));
    assert_eq!(read.status.workspace, mine.status.workspace);
    assert_eq!(read.status.plan_mode, mine.status.plan_mode);
    // held by this very process: not elsewhere
    assert_eq!(reader.held_by(), None);
    assert_eq!(w.svc.held_by(&id), None);
    // another service of this process sees the same
    assert_eq!(Service::new(w.options()).held_by(&id), None);
    let ws = std::path::PathBuf::from(&mine.status.workspace);
    assert_eq!(w.run(w.svc.newest_free(&ws)).unwrap(), Some(id));
}

#[test]
fn unknown_turns_heads_and_sessions_are_not_found_everywhere() {
    let w = World::new();
    let h = w.open();
    w.turn(&h, "zero", vec![write("a.txt", "a\n")]);
    let missing = |e: retrace_protocol::Error, what: Missing| {
        assert_eq!(e.code, ErrorCode::NotFound, "{e:?}");
        assert!(
            matches!(e.details, Some(ErrorDetails::NotFound { what: w, .. }) if w == what),
            "{e:?}"
        );
    };
    for scope in [RewindScope::Code, RewindScope::Conversation, RewindScope::Both] {
        missing(
            w.run(h.prepare_rewind(PrepareRewind { turn: 9, scope }))
                .unwrap_err(),
            Missing::Turn,
        );
    }
    missing(
        w.run(h.fork(ForkRequest {
            turn: 9,
            name: None,
            select: true,
        }))
        .unwrap_err(),
        Missing::Turn,
    );
    missing(
        w.run(h.switch(SwitchRequest { head: "nope".into() }))
            .unwrap_err(),
        Missing::Head,
    );
    missing(
        w.run(h.transcript(Some("nope".into()))).unwrap_err(),
        Missing::Head,
    );
    missing(w.run(h.retire("nope".into())).unwrap_err(), Missing::Head);
    let unknown = "01a22be9-0000-7000-8000-000000000000";
    missing(w.run(w.svc.open(unknown, None)).unwrap_err(), Missing::Session);
    missing(w.svc.reader(unknown).unwrap_err(), Missing::Session);
    let e = w.run(w.svc.open("../x", None)).unwrap_err();
    assert_eq!(e.code, ErrorCode::Usage);
}

#[test]
fn sessions_are_found_from_a_subdirectory_newest_first() {
    let w = World::new();
    let first = w.open();
    let second = w.open();
    std::fs::create_dir_all(w.at("src/deep")).unwrap();
    let list = w.run(w.svc.sessions(Some(&w.at("src/deep")))).unwrap();
    let ids: Vec<_> = list.iter().map(|s| s.id.clone()).collect();
    assert_eq!(ids, [second.session_id(), first.session_id()]);
    let latest = w.run(w.svc.open_latest(&w.at("src/deep"))).unwrap();
    assert_eq!(latest.session_id(), second.session_id());
    let elsewhere = w.tmp.path().join("home");
    assert!(w.run(w.svc.sessions(Some(&elsewhere))).unwrap().is_empty());
    let e = w.run(w.svc.open_latest(&elsewhere)).unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound);
}

#[test]
fn a_summary_is_seen_by_every_frontend_and_cancel_stops_it() {
    let w = World::new();
    let server = w
        .run(MockServer::start(vec![Reply::hang(vec![Chunk::new(sse::body(
            &[sse::content("partial")],
            false,
        ))])]))
        .unwrap();
    let h = w.open();
    w.turn(&h, "zero", vec![write("a.txt", "a\n")]);
    w.turn(&h, "one", vec![write("b.txt", "b\n")]);
    let mut sub = h.subscribe(None);
    let (other, spec) = (h.clone(), mock_model(&server));
    let job = w.rt.spawn(async move {
        other
            .summarize(SummarizeRequest {
                turn: 1,
                direction: SummarizeDirection::From,
                model: Some(spec),
            })
            .await
    });
    let started = w.run(until(&mut sub, |e| matches!(e, Event::SummaryStarted { .. })));
    assert!(matches!(
        started.event,
        Event::SummaryStarted {
            turn: 1,
            direction: SummarizeDirection::From
        }
    ));
    let job_now = RunningJob {
        kind: JobKind::Summary,
        turn: 1,
    };
    assert_eq!(w.run(h.status()).unwrap().running, Some(job_now));
    let e = w
        .run(h.fork(ForkRequest {
            turn: 0,
            name: None,
            select: true,
        }))
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::TurnRunning);
    assert_eq!(e.details, Some(ErrorDetails::Running { job: job_now }));
    assert!(h.cancel());
    let e = w.run(job).unwrap().unwrap_err();
    assert_eq!(e.code, ErrorCode::Cancelled, "{e:?}");
    let done = w.run(until(&mut sub, |e| matches!(e, Event::SummaryFinished { .. })));
    assert!(
        matches!(
            done.event,
            Event::SummaryFinished {
                ok: false,
                head_id: None,
                ..
            }
        ),
        "{done:?}"
    );
    assert_eq!(w.run(h.status()).unwrap().running, None);
    assert_eq!(w.heads(&h).len(), 1, "no head was made");
}

/// A summary's model request is retried like a turn's, and the retry is announced the same way.
#[test]
fn a_retried_summary_request_is_announced() {
    let w = World::new();
    let answer = sse::body(&[sse::content("the summary"), sse::finish("stop")], true);
    let server = w
        .run(MockServer::start(vec![
            Reply::error(503, "overloaded"),
            Reply::body(answer),
        ]))
        .unwrap();
    let h = w.open();
    w.turn(&h, "zero", vec![write("a.txt", "a\n")]);
    let mut sub = h.subscribe(None);
    w.run(h.summarize(SummarizeRequest {
        turn: 0,
        direction: SummarizeDirection::From,
        model: Some(mock_model(&server)),
    }))
    .unwrap();
    let notice = w.run(until(&mut sub, |e| matches!(e, Event::Notice { .. })));
    let Event::Notice { message, retry } = notice.event else {
        unreachable!()
    };
    assert_eq!(
        message,
        "model: HTTP 503 (overloaded), retrying in 1.0 s (attempt 2 of 4)"
    );
    assert_eq!(retry.map(|r| (r.attempt, r.wait_ms)), Some((2, 1000)));
    assert_eq!(server.request_count(), 2);
}

#[test]
fn plans_are_committed_only_as_what_they_were_prepared_for() {
    let w = World::with(None, |o| o.bash = BashPolicy::Allow);
    let h = w.open();
    w.turn(&h, "zero", vec![write("a.txt", "a0\n")]);
    w.turn(&h, "one", vec![write("a.txt", "a1\n"), bash("b1", "true")]);
    let plan = w
        .run(h.prepare_rewind(PrepareRewind {
            turn: 0,
            scope: RewindScope::Both,
        }))
        .unwrap();
    assert!(plan.requires_confirmation);
    // A rewind plan cannot be slipped through the revert commit (which needs no confirmation).
    let e = w
        .run(h.commit_revert(CommitRevert {
            plan_id: plan.plan_id.clone(),
            overwrite: false,
            confirm: false,
        }))
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::Usage, "{e:?}");
    let commit = |confirm| {
        w.run(h.commit_rewind(CommitRewind {
            plan_id: plan.plan_id.clone(),
            confirm,
            on_conflict: OnConflict::Refuse,
            in_place: true,
        }))
    };
    assert_eq!(commit(false).unwrap_err().code, ErrorCode::ConfirmationRequired);
    // Refused by the gate, the plan is still there: confirmed, it commits.
    let r = commit(true).unwrap();
    assert!(r.ok && r.conversation_forked, "{r:?}");
    assert_eq!(w.read("a.txt"), None);
    let revert = w
        .run(h.prepare_revert(PrepareRevert {
            path: "a.txt".into(),
            version: None,
        }))
        .unwrap();
    let e = w
        .run(h.commit_rewind(CommitRewind {
            plan_id: revert.plan_id,
            confirm: true,
            on_conflict: OnConflict::Refuse,
            in_place: true,
        }))
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::Usage, "{e:?}");
    // An undo of a transaction that does not exist is not_found, like every unknown id.
    let e = w
        .run(h.undo(UndoRequest {
            transaction_id: Some("nope".into()),
        }))
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound, "{e:?}");
}

#[test]
fn resuming_after_a_reopen_is_lagged_not_another_openings_events() {
    let w = World::new();
    let h = w.open();
    let id = h.session_id();
    w.turn(&h, "zero", vec![write("a.txt", "a0\n")]);
    let seen = w.run(h.status()).unwrap().last_event_seq;
    drop(h);
    w.run(w.svc.wait_closed());
    let h = w.run(w.svc.open(id.as_str(), None)).unwrap();
    assert!(
        w.run(h.status()).unwrap().last_event_seq > seen,
        "numbers only grow"
    );
    w.turn(&h, "one", vec![write("b.txt", "b\n"), write("c.txt", "c\n")]);
    let first = w.run(async { h.subscribe(Some(seen)).recv().await });
    assert!(matches!(first, Some(Delivery::Lagged { .. })), "{first:?}");
}

#[test]
fn a_prompt_too_large_for_its_checkpoint_is_refused_up_front() {
    let w = World::new();
    let h = w.open();
    w.run(h.set_model(ModelSpec::demo())).unwrap();
    let e = w
        .run(h.send("x".repeat(retrace_control::MAX_PROMPT_BYTES + 1)))
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::Usage, "{e:?}");
    assert!(
        w.run(h.checkpoints()).unwrap().entries.is_empty(),
        "no turn was started"
    );
}

fn mkfifo(path: &std::path::Path) {
    let made = std::process::Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success());
}

/// A FIFO where a file was never wedges the session: a turn that reads it, a plan that meets it,
/// a commit it appears under. Every request answers within seconds (the timeouts fail the test).
#[test]
fn a_fifo_never_wedges_the_session() {
    let w = World::new();
    let h = w.open();
    w.turn(&h, "zero", vec![write("a.txt", "a0\n")]);
    w.turn(&h, "one", vec![write("a.txt", "a1\n")]);
    let within = |what: &str, f: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + '_>>| {
        w.run(async { tokio::time::timeout(Duration::from_secs(20), f).await })
            .unwrap_or_else(|_| panic!("{what} hung"))
    };
    // A FIFO swapped in between prepare and commit: the commit refuses, nothing written.
    let plan = w
        .run(h.prepare_rewind(PrepareRewind {
            turn: 1,
            scope: RewindScope::Code,
        }))
        .unwrap();
    std::fs::remove_file(w.at("a.txt")).unwrap();
    mkfifo(&w.at("a.txt"));
    within(
        "commit",
        Box::pin(async {
            let e = h
                .commit_rewind(CommitRewind {
                    plan_id: plan.plan_id.clone(),
                    confirm: true,
                    on_conflict: OnConflict::Overwrite,
                    in_place: true,
                })
                .await
                .unwrap_err();
            assert_eq!(e.code, ErrorCode::Conflict, "{e:?}");
        }),
    );
    // Prepared with the FIFO there: a plan comes back, and the FIFO is never written.
    within(
        "prepare",
        Box::pin(async {
            let plan = h
                .prepare_rewind(PrepareRewind {
                    turn: 1,
                    scope: RewindScope::Code,
                })
                .await
                .unwrap();
            assert_eq!(plan.conflicts.len(), 1, "{plan:?}");
        }),
    );
    // A turn whose tool reads the FIFO finishes; the tool's error is a result for the model.
    let model = w.script(json!([
        {"content": "", "tool_calls": [{"id": "r", "name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"content": "done"}
    ]));
    within(
        "turn",
        Box::pin(async {
            h.set_model(model).await.unwrap();
            let mut sub = h.subscribe(None);
            let turn = h.send("read it").await.unwrap().turn;
            let (outcome, events) = until_finished(&mut sub, turn).await;
            assert!(outcome.ok, "{outcome:?}");
            assert!(events
                .iter()
                .any(|n| matches!(&n.event, Event::ToolResult { id, ok: false, .. } if id == "r")));
        }),
    );
    assert!(std::fs::symlink_metadata(w.at("a.txt"))
        .unwrap()
        .file_type()
        .is_fifo());
}

/// SPEC §5.6 (issue 13 item 12): a single-file revert across a shell command asks for
/// confirmation like a restore; its plan says so.
#[test]
fn a_revert_across_a_shell_command_needs_confirmation() {
    let w = World::with(None, |o| o.bash = BashPolicy::Allow);
    let h = w.open();
    w.turn(&h, "zero", vec![write("a.txt", "a0\n"), bash("b1", "true")]);
    let plan = w
        .run(h.prepare_revert(PrepareRevert {
            path: "a.txt".into(),
            version: None,
        }))
        .unwrap();
    assert!(plan.requires_confirmation);
    assert_eq!(
        plan.blockers,
        [retrace_protocol::PlanBlocker::ConfirmationRequired]
    );
    let commit = |confirm| {
        w.run(h.commit_revert(CommitRevert {
            plan_id: plan.plan_id.clone(),
            overwrite: false,
            confirm,
        }))
    };
    assert_eq!(commit(false).unwrap_err().code, ErrorCode::ConfirmationRequired);
    assert_eq!(w.read("a.txt").unwrap(), b"a0\n");
    let r = commit(true).unwrap();
    assert_eq!(r.files_deleted, ["a.txt"]);
}
