//! The session's tally (`SessionUsage`), counted once by the controller for every frontend's
//! status: the tokens of every counted request of the session (every head's), their cost at each
//! request's model's price (the demo and a script cost nothing; a model without a known price
//! leaves the cost unknown), the model in use's price and window, and how much of it the selected
//! head's conversation takes; in a snapshot, and in a `usage` event after each counted request, a
//! compaction and a model switch. The log is its source: the next process says the same.

use crate::support::{until_finished, World};
use retrace_control::{Service, SessionHandle};
use retrace_protocol::{
    price, CommitRewind, CompactRequest, Event, ModelSpec, OnConflict, PrepareRewind, Price, Provider,
    RewindScope, SessionUsage,
};
use retrace_testkit::mock_openai::{sse, MockServer, Reply};
use serde_json::json;

fn mock_model(server: &MockServer) -> ModelSpec {
    ModelSpec {
        base_url: Some(server.base_url()),
        ..ModelSpec::new(Provider::OpenAi, "mock")
    }
}

/// A text reply whose request the server counts at `prompt` and `answer` tokens.
fn counted(text: &str, prompt: u64, answer: u64) -> Reply {
    Reply::body(sse::body(
        &[sse::content(text), sse::finish_with_usage("stop", prompt, answer)],
        true,
    ))
}

/// One turn on `h` (its model set); the tallies its `usage` events said, in order.
fn turn(w: &World, h: &SessionHandle, prompt: &str) -> Vec<SessionUsage> {
    w.run(async {
        let mut sub = h.subscribe(None);
        let accepted = h.send(prompt).await.unwrap();
        let (outcome, events) = until_finished(&mut sub, accepted.turn).await;
        assert!(outcome.ok, "{:?}", outcome.error);
        events
            .into_iter()
            .filter_map(|n| match n.event {
                Event::Usage { usage } => Some(usage),
                _ => None,
            })
            .collect()
    })
}

const MOCK: Price = Price {
    input_per_mtok: 1.0,
    output_per_mtok: 2.0,
    cached_input_per_mtok: None,
};

fn priced(o: &mut retrace_control::ServiceOptions) {
    o.prices.configured.insert("mock".into(), MOCK);
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn the_tally_counts_every_request_of_the_session_at_its_price() {
    let w = World::with(None, priced);
    let server = w
        .run(MockServer::start(vec![
            counted("zero", 1_000, 10),
            counted("one", 3_000, 20),
            counted("two", 1_500, 15),
            counted("the summary", 500, 50),
        ]))
        .unwrap();
    let spec = mock_model(&server);
    let window = retrace_control::default_context_window(&spec);
    let h = w.open();
    w.run(h.set_model(spec)).unwrap();

    // each counted request: a `usage` event with the session's tally
    let said = turn(&w, &h, "zero");
    let last = said.last().expect("a usage event after the counted request");
    assert_eq!((last.input_tokens, last.output_tokens), (1_000, 10));
    assert!(close(last.cost_usd.unwrap(), 0.001_02), "{last:?}");
    assert_eq!(last.price, Some(MOCK));
    assert_eq!(last.context_tokens, Some(1_010));
    assert_eq!(last.context_window, Some(window));

    let said = turn(&w, &h, "one");
    let last = said.last().unwrap().clone();
    assert_eq!((last.input_tokens, last.output_tokens), (4_000, 30));
    assert!(close(last.cost_usd.unwrap(), 0.004_06), "{last:?}");
    assert_eq!(last.context_tokens, Some(3_020));
    let percent = 3_020 * 100 / window;
    assert_eq!(last.context_percent, Some(percent));
    assert_eq!(
        last.says,
        [
            format!("{percent}% context"),
            "4.0k in 30 out".into(),
            "$0.0041".into()
        ]
    );
    // the snapshot says the same
    let snap = w.run(h.snapshot()).unwrap();
    assert_eq!(snap.usage, last);

    // A rewind of the conversation: what was spent stays spent; the context is the new head's.
    let plan = w
        .run(h.prepare_rewind(PrepareRewind {
            turn: 1,
            scope: RewindScope::Conversation,
        }))
        .unwrap();
    w.run(h.commit_rewind(CommitRewind {
        plan_id: plan.plan_id,
        confirm: false,
        on_conflict: OnConflict::Refuse,
        in_place: true,
    }))
    .unwrap();
    let snap = w.run(h.snapshot()).unwrap();
    assert_eq!(snap.usage.input_tokens, 4_000);
    assert_eq!(snap.usage.context_tokens, Some(1_010));

    // A compaction: its estimate is the new head's context until a request on it is counted.
    let last = turn(&w, &h, "two").pop().unwrap();
    assert_eq!((last.input_tokens, last.context_tokens), (5_500, Some(1_515)));
    let mut sub = h.subscribe(None);
    let made = w.run(h.compact(CompactRequest::default())).unwrap();
    let events = w.run(async {
        let mut seen = Vec::new();
        while let Ok(Some(retrace_protocol::Delivery::Event(n))) =
            tokio::time::timeout(std::time::Duration::from_millis(500), sub.recv()).await
        {
            seen.push(n.event);
        }
        seen
    });
    let after = events
        .iter()
        .find_map(|e| match e {
            Event::Compacted { after_tokens, .. } => Some(*after_tokens),
            _ => None,
        })
        .expect("a compaction event");
    let told = events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::Usage { usage } => Some(usage.clone()),
            _ => None,
        })
        .expect("a usage event after the compaction");
    assert_eq!(told.context_tokens, Some(after), "{events:?}");
    assert_eq!(w.head(&h), made.head_id);
    assert_eq!(w.run(h.snapshot()).unwrap().usage.context_tokens, Some(after));
    // The summary's own request is counted too (found by the fourth new-user trial).
    assert_eq!((told.input_tokens, told.output_tokens), (6_000, 95), "{told:?}");

    // The next process counts the same from the log.
    let id = h.session_id().to_string();
    drop(h);
    w.run(w.svc.shutdown());
    let mut opts = w.options();
    priced(&mut opts);
    let next = Service::new(opts);
    let h = w.run(next.open(&id, None)).unwrap();
    let snap = w.run(h.snapshot()).unwrap();
    assert_eq!((snap.usage.input_tokens, snap.usage.output_tokens), (6_000, 95));
    assert!(close(snap.usage.cost_usd.unwrap(), 0.006_19), "{:?}", snap.usage);
    drop(h);
    w.run(next.shutdown());
}

#[test]
fn offline_models_cost_nothing_and_a_model_without_a_price_leaves_the_cost_unknown() {
    let w = World::new();
    let server = w
        .run(MockServer::start(vec![counted("hosted", 2_000, 100)]))
        .unwrap();
    let h = w.open();
    // a script reporting counts: priced at nothing
    let script =
        w.script(json!([{"content": "scripted", "usage": {"prompt_tokens": 500, "completion_tokens": 5}}]));
    w.run(h.set_model(script)).unwrap();
    let last = turn(&w, &h, "zero").pop().unwrap();
    assert_eq!(last.cost_usd, Some(0.0));
    assert_eq!(last.price, Some(price::FREE));
    assert_eq!(last.says.last().map(String::as_str), Some("$0.0000"));

    // a hosted model nobody priced: its requests leave the session's cost unknown
    w.run(h.set_model(mock_model(&server))).unwrap();
    let last = turn(&w, &h, "one").pop().unwrap();
    assert_eq!((last.input_tokens, last.output_tokens), (2_500, 105));
    assert_eq!((last.cost_usd, last.price), (None, None));
    assert!(!last.says.iter().any(|s| s.starts_with('$')), "{last:?}");

    // a model switch says the new model's price and window at once
    let mut sub = h.subscribe(None);
    w.run(h.set_model(ModelSpec::demo())).unwrap();
    let told = w.run(async {
        loop {
            match sub.recv().await {
                Some(retrace_protocol::Delivery::Event(n)) => {
                    if let Event::Usage { usage } = n.event {
                        break usage;
                    }
                }
                other => panic!("no usage event: {other:?}"),
            }
        }
    });
    assert_eq!(told.price, Some(price::FREE));
    assert_eq!(
        told.context_window,
        Some(retrace_control::default_context_window(&ModelSpec::demo()))
    );
    assert_eq!(told.cost_usd, None, "the hosted model's requests stay unpriced");
}

/// A fork into a new workspace starts with copies of its source's messages, counts included:
/// the new session's context is theirs, but what they cost was the source's, not its own.
#[test]
fn a_fork_into_a_new_workspace_spent_nothing_yet() {
    let w = World::new();
    let h = w.open();
    let script = w.script(json!([
        {"content": "zero", "usage": {"prompt_tokens": 700, "completion_tokens": 7}},
        {"content": "one", "usage": {"prompt_tokens": 900, "completion_tokens": 9}}
    ]));
    w.run(h.set_model(script)).unwrap();
    turn(&w, &h, "zero");
    turn(&w, &h, "one");
    let (fork, _) = w
        .run(w.svc.fork_into_workspace(
            &h,
            retrace_protocol::WorkspaceForkRequest {
                turn: 1,
                worktree: w.tmp.path().join("forked").to_string_lossy().into_owned(),
                name: None,
            },
        ))
        .unwrap();
    let usage = w.run(fork.snapshot()).unwrap().usage;
    assert_eq!((usage.input_tokens, usage.output_tokens), (0, 0), "{usage:?}");
    assert_eq!(usage.context_tokens, Some(707), "{usage:?}");
    assert_eq!(w.run(h.snapshot()).unwrap().usage.input_tokens, 1_600);
}
