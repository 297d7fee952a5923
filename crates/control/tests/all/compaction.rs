//! Long sessions (SPEC §7 `compact`, `set_plan_mode`, `create_like`): automatic compaction when
//! the reported usage crosses the budget, one compaction and one retry after a "context too long"
//! error, a manual compaction that keeps the original head, code and conversation rewinds across
//! a compaction, and plan mode refusing a write the model sends anyway. The model is the mock
//! OpenAI server, strict about the history it is sent.

use crate::support::{self, until_finished, users, World};
use retrace_control::SessionHandle;
use retrace_protocol::{
    CommitRewind, CompactRequest, ErrorCode, Event, ForkRequest, HeadKind, ModelSpec, OnConflict,
    PrepareRewind, Provider, RewindScope, Role, SwitchRequest,
};
use retrace_testkit::mock_openai::{sse, MockServer, Reply};
use serde_json::{json, Value};

fn mock_model(server: &MockServer) -> ModelSpec {
    ModelSpec {
        base_url: Some(server.base_url()),
        ..ModelSpec::new(Provider::OpenAi, "mock")
    }
}

/// A reply that writes `path` and reports `prompt_tokens` of usage.
fn write_reply(id: &str, path: &str, content: &str, prompt_tokens: u64) -> Reply {
    let args = json!({"path": path, "content": content}).to_string();
    Reply::body(sse::body(
        &[
            sse::tool_call_start(0, id, "write_file"),
            sse::tool_call_args(0, &args),
            sse::finish_with_usage("tool_calls", prompt_tokens, 10),
        ],
        true,
    ))
}

/// A text reply that reports `prompt_tokens` of usage.
fn text_reply(text: &str, prompt_tokens: u64) -> Reply {
    Reply::body(sse::body(
        &[
            sse::content(text),
            sse::finish_with_usage("stop", prompt_tokens, 10),
        ],
        true,
    ))
}

/// Runs one turn on `h` (whose model is set); returns whether it finished and its events.
fn turn(w: &World, h: &SessionHandle, prompt: &str) -> (bool, Vec<Event>) {
    w.run(async {
        let mut sub = h.subscribe(None);
        let accepted = h.send(prompt).await.unwrap();
        let (outcome, events) = until_finished(&mut sub, accepted.turn).await;
        (outcome.ok, events.into_iter().map(|n| n.event).collect())
    })
}

/// The text of every message of a recorded request.
fn contents(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect()
}

fn is_summary_request(body: &Value) -> bool {
    body["tools"].as_array().is_none_or(|t| t.is_empty())
        && contents(body)
            .last()
            .is_some_and(|c| c.starts_with(retrace_model::SUMMARY_PROMPT))
}

fn compacted(events: &[Event]) -> Vec<(bool, u64, u64)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Compacted {
                automatic,
                before_tokens,
                after_tokens,
                ..
            } => Some((*automatic, *before_tokens, *after_tokens)),
            _ => None,
        })
        .collect()
}

/// Prepares and commits (in place) a rewind of `scope` to `turn`.
fn rewind(
    w: &World,
    h: &SessionHandle,
    turn: u64,
    scope: RewindScope,
) -> Result<retrace_protocol::RewindResult, retrace_protocol::Error> {
    let plan = w.run(h.prepare_rewind(PrepareRewind { turn, scope }))?;
    w.run(h.commit_rewind(CommitRewind {
        plan_id: plan.plan_id,
        confirm: false,
        on_conflict: OnConflict::Refuse,
        in_place: true,
    }))
}

#[test]
fn usage_past_the_threshold_compacts_before_the_next_request() {
    let w = World::with(None, |o| {
        o.context_window = Some(10_000);
        o.compact_at = 0.8;
    });
    let server = w
        .run(MockServer::start_strict(vec![
            write_reply("c1", "a.txt", "zero\n", 1_000),
            text_reply("done zero", 1_200),
            write_reply("c2", "a.txt", "one\n", 5_000),
            // The server says the last request was 9,000 tokens: past 80 % of 10,000.
            text_reply("done one", 9_000),
            text_reply("SUMMARY: a.txt was written twice; it now says one.", 9_100),
            text_reply("done two", 300),
        ]))
        .unwrap();
    let h = w.open();
    w.run(h.set_model(mock_model(&server))).unwrap();
    assert!(turn(&w, &h, "first prompt").0);
    assert!(turn(&w, &h, "second prompt").0);
    let main = w.head(&h);
    let main_before = w.transcript(&h, Some(main.as_str()));
    let (ok, events) = turn(&w, &h, "third prompt");
    assert!(ok, "{events:?}");
    assert_eq!(server.rejected(), 0, "the strict server accepted every history");

    let reqs = server.requests();
    assert_eq!(reqs.len(), 6);
    let summary_req = reqs[4].json();
    assert!(is_summary_request(&summary_req), "{summary_req}");
    let folded = contents(&summary_req).join("\n");
    assert!(folded.contains("first prompt") && folded.contains("second prompt"));
    assert!(
        !folded.contains("third prompt"),
        "the current turn is kept, not folded"
    );
    // The request after it carries the summary instead of the old messages.
    let after = contents(&reqs[5].json()).join("\n");
    assert!(after.contains("SUMMARY: a.txt was written twice"), "{after}");
    assert!(after.contains("third prompt"));
    assert!(
        !after.contains("first prompt") && !after.contains("second prompt"),
        "{after}"
    );

    let c = compacted(&events);
    assert_eq!(c.len(), 1, "{events:?}");
    let (automatic, before, after_tokens) = c[0];
    assert!(automatic);
    assert!(before >= 9_000, "{before}");
    assert!(after_tokens < before, "{after_tokens} < {before}");

    // The summary head is selected and the turn went on there; the original head is intact.
    let now = w.head(&h);
    assert_ne!(now, main);
    let heads = w.heads(&h);
    let s = heads.iter().find(|x| x.id == now).unwrap();
    assert_eq!(s.kind, HeadKind::Summary);
    assert_eq!(s.parent_head.as_ref(), Some(&main));
    let original = w.transcript(&h, Some(main.as_str()));
    assert_eq!(
        original.len(),
        main_before.len() + 1,
        "the original head kept everything (and the third prompt, written before the compaction)"
    );
    let t = w.transcript(&h, None);
    assert_eq!(
        users(&t).iter().map(|(_, c)| c.as_str()).collect::<Vec<_>>(),
        [
            "SUMMARY: a.txt was written twice; it now says one.",
            "third prompt"
        ]
    );
    assert_eq!(t.last().unwrap().content, "done two");
    w.run(w.svc.shutdown());
}

#[test]
fn a_context_too_long_error_compacts_once_and_retries_once() {
    let w = World::new();
    let too_long = || {
        Reply::error(
            400,
            "This model's maximum context length is 65536 tokens. However, you requested 70000 tokens.",
        )
    };
    let server = w
        .run(MockServer::start_strict(vec![
            text_reply("one", 100),
            text_reply("two", 200),
            // Turn 2: too long → a compaction → the same step again, which fits.
            too_long(),
            text_reply("SUMMARY ONE", 50),
            text_reply("three", 100),
            // Turn 3: too long → a compaction → still too long: the turn fails, no third try.
            too_long(),
            text_reply("SUMMARY TWO", 50),
            too_long(),
        ]))
        .unwrap();
    let h = w.open();
    w.run(h.set_model(mock_model(&server))).unwrap();
    assert!(turn(&w, &h, "p0").0);
    assert!(turn(&w, &h, "p1").0);
    let (ok, events) = turn(&w, &h, "p2");
    assert!(ok, "{events:?}");
    assert_eq!(server.request_count(), 5);
    assert_eq!(compacted(&events).len(), 1);
    assert!(compacted(&events)[0].0, "automatic");
    // Whole messages compared: the system prompt names a temp dir, which may hold "p0".
    let retried = contents(&server.requests()[4].json());
    assert!(
        retried.iter().any(|c| c == "SUMMARY ONE") && !retried.iter().any(|c| c == "p0"),
        "{retried:?}"
    );

    let (ok, events) = turn(&w, &h, "p3");
    assert!(!ok, "a second too-long request fails the turn");
    assert_eq!(
        server.request_count(),
        8,
        "one compaction and one retry, never a loop"
    );
    assert_eq!(server.replies_left(), 0);
    let finished = events.iter().rev().find_map(|e| match e {
        Event::TurnFinished { error, .. } => error.clone(),
        _ => None,
    });
    assert!(finished.unwrap().contains("maximum context length"));
    assert_eq!(server.rejected(), 0);
    w.run(w.svc.shutdown());
}

#[test]
fn compact_keeps_the_original_head_and_rewinds_cross_it() {
    let w = World::new();
    let h = w.open();
    w.turn(&h, "first", vec![support::write("a.txt", "A0\n")]);
    w.turn(
        &h,
        "second",
        vec![support::write("a.txt", "A1\n"), support::write("b.txt", "B1\n")],
    );
    w.turn(&h, "third", vec![support::write("a.txt", "A2\n")]);
    let main = w.head(&h);
    let before = w.transcript(&h, None);

    // Nothing is compacted while a head has one turn; here the model writes the summary.
    w.run(h.set_model(w.script(json!([{"content": "  SUMMARY OF FIRST AND SECOND  "}]))))
        .unwrap();
    let mut rec = w.record(&h);
    let made = w.run(h.compact(CompactRequest::default())).unwrap();
    let events = w.recorded(&h, &mut rec);
    assert_eq!(compacted(&events).len(), 1, "{events:?}");
    assert!(!compacted(&events)[0].0, "asked for, not automatic");
    assert_eq!(w.head(&h), made.head_id, "the summary head is selected");
    let t = w.transcript(&h, None);
    assert_eq!(t[0].content, "SUMMARY OF FIRST AND SECOND");
    assert_eq!(t[0].role, Role::User);
    assert_eq!(
        users(&t)[1..]
            .iter()
            .map(|(n, c)| (*n, c.as_str()))
            .collect::<Vec<_>>(),
        [(Some(2), "third")]
    );
    // The original head stays, listed and unchanged.
    let heads = w.heads(&h);
    assert!(heads.iter().any(|x| x.id == main && !x.retired));
    assert_eq!(w.transcript(&h, Some(main.as_str())), before);

    // Checkpoints run on: every turn is still listed; the folded ones can rewind the
    // conversation too (from the original head).
    let listing = w.run(h.checkpoints()).unwrap();
    let turns: Vec<(u64, Option<bool>, Option<bool>)> = listing
        .entries
        .iter()
        .map(|c| (c.turn, c.visible, c.can_restore_conversation))
        .collect();
    assert_eq!(
        turns,
        [
            (0, Some(false), Some(true)),
            (1, Some(false), Some(true)),
            (2, Some(true), Some(true))
        ]
    );

    // A code rewind to before turn 1, a turn before the compaction: the files as they were then.
    let r = rewind(&w, &h, 1, RewindScope::Code).unwrap();
    assert!(r.ok, "{r:?}");
    assert_eq!(w.read("a.txt").unwrap(), b"A0\n");
    assert_eq!(w.read("b.txt"), None);
    assert_eq!(w.head(&h), made.head_id, "a code rewind leaves the conversation");

    // A conversation rewind to before turn 1 forks from the original head, before turn 1.
    let r = rewind(&w, &h, 1, RewindScope::Conversation).unwrap();
    assert!(r.conversation_forked);
    let forked = w.heads(&h);
    let f = forked.iter().find(|x| x.id == r.head_id).unwrap();
    assert_eq!(f.parent_head.as_ref(), Some(&main));
    assert_eq!(users(&w.transcript(&h, None)), [(Some(0), "first".to_string())]);
    w.run(w.svc.shutdown());
}

#[test]
fn compact_with_nothing_before_the_latest_turn_is_refused() {
    let w = World::new();
    let h = w.open();
    let err = w.run(h.compact(CompactRequest::default())).unwrap_err();
    assert_eq!(err.code, ErrorCode::Refused, "{err:?}");
    w.turn(&h, "only", vec![]);
    w.run(h.set_model(w.script(json!([{"content": "never used"}]))))
        .unwrap();
    let err = w.run(h.compact(CompactRequest::default())).unwrap_err();
    assert_eq!(err.code, ErrorCode::Refused, "{err:?}");
    assert!(err.message.contains("nothing to compact"), "{err:?}");
    assert_eq!(w.heads(&h).len(), 1);
    w.run(w.svc.shutdown());
}

#[test]
fn plan_mode_offers_read_tools_and_refuses_a_write_sent_anyway() {
    let w = World::new();
    let write_args = json!({"path": "plan.txt", "content": "should not exist"}).to_string();
    let server = w
        .run(MockServer::start_strict(vec![
            Reply::body(sse::body(
                &[
                    sse::tool_call_start(0, "w1", "write_file"),
                    sse::tool_call_args(0, &write_args),
                    sse::finish("tool_calls"),
                ],
                true,
            )),
            text_reply("Plan: 1. create plan.txt", 10),
            text_reply("writing now", 10),
        ]))
        .unwrap();
    let h = w.open();
    w.run(h.set_model(mock_model(&server))).unwrap();
    let mut rec = w.record(&h);
    w.run(h.set_plan_mode(true)).unwrap();
    assert!(w.run(h.status()).unwrap().plan_mode);
    assert_eq!(w.recorded(&h, &mut rec), [Event::PlanMode { on: true }]);

    let (ok, events) = turn(&w, &h, "add plan.txt");
    assert!(ok);
    assert_eq!(w.read("plan.txt"), None, "nothing was written");
    let result = events
        .iter()
        .find_map(|e| match e {
            Event::ToolResult { id, ok, content, .. } if id == "w1" => Some((*ok, content.clone())),
            _ => None,
        })
        .unwrap();
    assert!(!result.0 && result.1.contains("plan mode is on"), "{result:?}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::CheckpointCaptured { .. })),
        "no before-image either: the tool never ran"
    );
    let first = server.requests()[0].json();
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read_file", "list_dir", "glob", "grep"]);
    assert!(contents(&first)[0].contains("Plan mode is on"));

    // Recorded in the log: another process sees it; turning it off offers every tool again.
    let id = h.session_id();
    w.run(w.svc.shutdown());
    drop(h);
    let h = w.run(w.svc.open(id.as_str(), None)).unwrap();
    assert!(w.run(h.status()).unwrap().plan_mode);
    w.run(h.set_plan_mode(false)).unwrap();
    w.run(h.set_model(mock_model(&server))).unwrap();
    assert!(turn(&w, &h, "go").0);
    let last = server.requests().last().unwrap().json();
    assert!(last["tools"].as_array().unwrap().len() > 4);
    assert!(!contents(&last)[0].contains("Plan mode is on"));
    w.run(w.svc.shutdown());
}

#[test]
fn create_like_opens_another_session_on_the_workspace_and_keeps_this_one() {
    let w = World::new();
    let h = w.open();
    w.turn(&h, "in the first session", vec![]);
    let model = w.script(json!([{"content": "fresh"}]));
    w.run(h.set_model(model)).unwrap();
    let n = w.run(w.svc.create_like(&h)).unwrap();
    assert_ne!(n.session_id(), h.session_id());
    assert_eq!(n.workspace(), h.workspace());
    let status = w.run(n.status()).unwrap();
    assert!(status.model.is_some(), "the model is carried over");
    assert!(w.transcript(&n, None).is_empty());
    let (ok, _) = turn(&w, &n, "hello");
    assert!(ok);
    // The first session is still open and listed.
    assert_eq!(users(&w.transcript(&h, None)).len(), 1);
    let listed = w.run(w.svc.sessions(Some(&w.ws))).unwrap();
    assert!(listed.iter().any(|s| s.id == h.session_id()));
    assert!(listed.iter().any(|s| s.id == n.session_id()));
    w.run(w.svc.shutdown());
}

#[test]
fn folded_turns_stay_reachable_through_later_rewinds_and_only_they_are_folded() {
    let w = World::new();
    let h = w.open();
    w.turn(&h, "first", vec![]);
    w.turn(&h, "second", vec![]);
    w.turn(&h, "third", vec![]);
    let main = w.head(&h);
    w.run(h.set_model(w.script(json!([{"content": "SUMMARY"}]))))
        .unwrap();
    let compacted = w.run(h.compact(CompactRequest::default())).unwrap().head_id;
    // A conversation rewind to the kept turn: a rewind head whose path still holds the summary.
    let r = rewind(&w, &h, 2, RewindScope::Conversation).unwrap();
    assert_eq!(w.transcript(&h, None)[0].content, "SUMMARY");
    assert_ne!(r.head_id, compacted);
    // Turn 0, folded by the compaction on this path, still forks from the full version.
    let r = rewind(&w, &h, 0, RewindScope::Conversation).unwrap();
    let heads = w.heads(&h);
    let made = heads.iter().find(|x| x.id == r.head_id).unwrap();
    assert_eq!(made.parent_head.as_ref(), Some(&main));
    // So does a fork.
    let switch = |head: &retrace_protocol::HeadId| {
        w.run(h.switch(SwitchRequest {
            head: head.to_string(),
        }))
        .unwrap()
    };
    switch(&compacted);
    let f = w
        .run(h.fork(ForkRequest {
            turn: 1,
            name: None,
            select: false,
        }))
        .unwrap();
    let heads = w.heads(&h);
    let fork = heads.iter().find(|x| x.id == f.head_id).unwrap();
    assert_eq!(fork.parent_head.as_ref(), Some(&main));

    // A turn added to the original head after the compaction was never folded.
    switch(&main);
    w.turn(&h, "later on main", vec![]);
    switch(&compacted);
    let listing = w.run(h.checkpoints()).unwrap();
    let by_turn = |t: u64| listing.entries.iter().find(|c| c.turn == t).unwrap().clone();
    assert_eq!(by_turn(0).can_restore_conversation, Some(true));
    assert_eq!(by_turn(3).can_restore_conversation, Some(false));
    assert_eq!(by_turn(3).disabled_reason.as_deref(), Some("not on this head"));
    let plan = w
        .run(h.prepare_rewind(PrepareRewind {
            turn: 3,
            scope: RewindScope::Conversation,
        }))
        .unwrap();
    assert!(!plan.can_conversation);
    w.run(w.svc.shutdown());
}

#[test]
fn a_turn_too_long_alone_fails_with_the_way_out_and_the_next_turn_recovers() {
    let w = World::with(None, |o| {
        o.context_window = Some(10_000);
        o.compact_at = 0.8;
    });
    let too_long = || Reply::error(400, "This model's maximum context length is 10000 tokens.");
    let server = w
        .run(MockServer::start_strict(vec![
            text_reply("short answer", 2_000),
            // The huge prompt: the earlier turn is too small to be worth compacting, so the
            // request goes out, is too long, and the turn fails (no compaction could help).
            too_long(),
            // The next turn: the huge turn is now before it and is folded, cut to fit.
            text_reply("SUMMARY of a huge paste", 500),
            text_reply("fine now", 600),
        ]))
        .unwrap();
    let h = w.open();
    w.run(h.set_model(mock_model(&server))).unwrap();
    assert!(turn(&w, &h, "hello").0);
    let huge = format!("please read {}", "z".repeat(60_000));
    let (ok, events) = turn(&w, &h, &huge);
    assert!(!ok);
    let error = events
        .iter()
        .find_map(|e| match e {
            Event::TurnFinished { error, .. } => error.clone(),
            _ => None,
        })
        .unwrap();
    assert!(
        error.contains("rewind the conversation to before turn 1"),
        "{error}"
    );
    assert!(
        compacted(&events).is_empty(),
        "nothing worth compacting: {events:?}"
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::Notice { message, .. } if message.contains("would not help"))));
    assert_eq!(w.heads(&h).len(), 1, "no pointless head");

    let (ok, events) = turn(&w, &h, "next");
    assert!(ok, "{events:?}");
    assert_eq!(compacted(&events).len(), 1);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4);
    let summary = reqs[2].json();
    assert!(is_summary_request(&summary));
    let size: usize = contents(&summary).iter().map(String::len).sum();
    assert!(
        size < 8_000 * 4,
        "the summary request fits the window: {size} bytes"
    );
    assert_eq!(server.rejected(), 0);
    w.run(w.svc.shutdown());
}

/// A cancel (Ctrl-C, SIGINT, a closed terminal) that lands while a compaction's summary is being
/// written: the turn ends cancelled, no head is made, and the next turn's history is one a strict
/// server accepts.
#[test]
fn a_cancel_during_an_automatic_compaction_leaves_a_session_that_goes_on() {
    let w = World::with(None, |o| {
        o.context_window = Some(10_000);
        o.compact_at = 0.8;
    });
    let server = w
        .run(MockServer::start_strict(vec![
            text_reply("one", 2_000),
            text_reply("two", 9_000),
            // Turn 2 compacts first; its summary never comes.
            Reply::hang(vec![]),
            // Turn 3: the compaction is tried again, then the request.
            text_reply("SUMMARY", 100),
            text_reply("three", 500),
        ]))
        .unwrap();
    let h = w.open();
    w.run(h.set_model(mock_model(&server))).unwrap();
    assert!(turn(&w, &h, "p0").0);
    assert!(turn(&w, &h, "p1").0);
    let (outcome, events) = w.run(async {
        let mut sub = h.subscribe(None);
        let accepted = h.send("p2").await.unwrap();
        support::until(
            &mut sub,
            |e| matches!(e, Event::Notice { message, .. } if message.contains("summarizing")),
        )
        .await;
        while server.request_count() < 3 {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert!(h.cancel());
        until_finished(&mut sub, accepted.turn).await
    });
    assert!(!outcome.ok);
    assert_eq!(
        outcome.error.as_deref(),
        Some("cancelled by the user"),
        "{events:?}"
    );
    assert_eq!(w.heads(&h).len(), 1, "no head from a cancelled compaction");
    let (ok, events) = turn(&w, &h, "p3");
    assert!(ok, "{events:?}");
    assert_eq!(compacted(&events).len(), 1);
    assert_eq!(server.rejected(), 0, "every history was well formed");
    w.run(w.svc.shutdown());
}
