//! A conversation rewind must end with the chat on the new head's items, whatever the order in
//! which its events, its answer and the snapshots the UI asks for arrive, and however the loop
//! that feeds the UI is interrupted.
//!
//! Found in a real terminal: now and then, after a conversation rewind, the status said "rewound
//! to turn 1: the conversation only" while the chat kept the old head's answer. The terminal loop
//! races [`Driver::next`] against keys, ticks and frames; a `next` dropped while it waited for
//! more events of its batch lost the snapshot request those events had made, and the app, still
//! waiting for that snapshot, asked for no other.

use std::time::{Duration, Instant};

use retrace_control::Service;
use retrace_protocol::{
    CommitRewind, Event, HeadId, Item, ItemBody, OnConflict, PrepareRewind, RewindScope, SessionSnapshot,
};
use retrace_tui::{App, AppOptions, Driver, Effect};
use serde_json::json;

use crate::fixtures::Clock;
use crate::fixtures::{answer, app, prompt, result, snapshot_of};
use crate::whole_flow::{idle_after, scripted, send, until, Scripted};

/// Polls `fut` once and drops it, as a `select!` does when another branch is ready first.
fn poll_once_and_drop<F: std::future::Future>(fut: F) {
    let mut fut = std::pin::pin!(fut);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let _ = fut.as_mut().poll(&mut cx);
}

fn shows_text(items: &[Item], text: &str) -> bool {
    items
        .iter()
        .any(|i| matches!(&i.body, ItemBody::AssistantText { text: t, .. } if t == text))
}

#[test]
fn a_next_dropped_after_the_rewind_events_still_reloads_the_chat() {
    let Scripted { _tmp, ws, rt, opts } = scripted(
        json!([{"content": "wrote one"}, {"content": "wrote two"}]),
        |_| {},
    );
    rt.block_on(async {
        let svc = Service::new(opts);
        let handle = svc.create(&ws).await.unwrap();
        let watch = handle.clone();
        let mut ui = Driver::open(svc.clone(), handle, AppOptions { no_color: true }, None)
            .await
            .unwrap();
        let clock = Clock::new();
        send(&mut ui, &clock, 0, "first");
        until(&mut ui, "turn 0", |u| idle_after(u, "wrote one")).await;
        send(&mut ui, &clock, 1_000, "second");
        until(&mut ui, "turn 1", |u| idle_after(u, "wrote two")).await;
        ui.settle(Duration::from_millis(100)).await;

        // The conversation goes back to before turn 1: `rewound` and `head_changed` are published.
        let plan = watch
            .prepare_rewind(PrepareRewind {
                turn: 1,
                scope: RewindScope::Conversation,
            })
            .await
            .unwrap();
        watch
            .commit_rewind(CommitRewind {
                plan_id: plan.plan_id,
                confirm: true,
                on_conflict: OnConflict::default(),
                in_place: true,
            })
            .await
            .unwrap();

        // The loop takes the events, and is interrupted before `next` returns.
        poll_once_and_drop(ui.next());
        let start = Instant::now();
        let snap = loop {
            ui.settle(Duration::from_millis(100)).await;
            let snap = watch.snapshot().await.unwrap();
            if ui.app().transcript().items() == snap.items.as_slice()
                || start.elapsed() > Duration::from_secs(5)
            {
                break snap;
            }
        };
        assert!(!shows_text(&snap.items, "wrote two"));
        assert_eq!(ui.app().transcript().items(), snap.items.as_slice());
        assert_eq!(ui.app().status().head, snap.head_id.to_string());
    });
}

/// The model of one session: what the controller has published and would answer, what the UI
/// has been delivered and what it asked for.
#[derive(Clone)]
struct World {
    app: App,
    /// Every event published, numbered from 11.
    published: Vec<Event>,
    rewound: bool,
    /// The next event the UI's subscription delivers.
    cursor: u64,
    /// Snapshot requests: `None` until the controller takes it.
    snapshots: Vec<Option<SessionSnapshot>>,
    /// The rewind's answer, once committed and not yet delivered.
    result: Option<retrace_protocol::RewindResult>,
}

const FIRST: u64 = 11;

fn old_items() -> Vec<Item> {
    vec![
        prompt("p0", 0, "first"),
        answer("a0", 0, "wrote one"),
        prompt("p1", 1, "second"),
        answer("a1", 1, "wrote two"),
    ]
}

fn new_items() -> Vec<Item> {
    vec![prompt("p0", 0, "first"), answer("a0", 0, "wrote one")]
}

impl World {
    fn new() -> World {
        let mut app = app();
        app.on_snapshot(snapshot_of(old_items(), "main", FIRST - 1));
        World {
            app,
            // An undo before: it asks for a snapshot, which may be taken before or after the
            // rewind and come before or after its events.
            published: vec![Event::Undone {
                transaction_id: "tx0".into(),
                head_id: HeadId::new("main"),
            }],
            rewound: false,
            cursor: FIRST,
            snapshots: Vec::new(),
            result: None,
        }
    }

    fn last_seq(&self) -> u64 {
        FIRST + self.published.len() as u64 - 1
    }

    fn controller_snapshot(&self) -> SessionSnapshot {
        match self.rewound {
            true => snapshot_of(new_items(), "h2", self.last_seq()),
            false => snapshot_of(old_items(), "main", self.last_seq()),
        }
    }

    fn asked(&mut self, effects: Vec<Effect>) {
        for e in effects {
            if e == Effect::LoadSnapshot {
                self.snapshots.push(None);
            }
        }
    }

    /// Every world one step from here.
    fn steps(&self) -> Vec<(String, World)> {
        let mut out = Vec::new();
        if !self.rewound {
            let mut w = self.clone();
            w.rewound = true;
            w.published.push(Event::Rewound {
                scope: RewindScope::Conversation,
                turn: 1,
                head_id: HeadId::new("h2"),
                files_written: Vec::new(),
                files_deleted: Vec::new(),
                transaction_id: Some("tx1".into()),
                partial: false,
            });
            w.published.push(Event::HeadChanged {
                head_id: HeadId::new("h2"),
            });
            w.result = Some(result(RewindScope::Conversation, &[], &[]));
            out.push(("rewind".to_string(), w));
        }
        if self.cursor <= self.last_seq() {
            let mut w = self.clone();
            let event = w.published[(w.cursor - FIRST) as usize].clone();
            let effects = w.app.on_event(w.cursor, event);
            w.asked(effects);
            w.cursor += 1;
            out.push((format!("event {}", self.cursor), w));
        }
        for (i, s) in self.snapshots.iter().enumerate() {
            let mut w = self.clone();
            match s {
                None => {
                    w.snapshots[i] = Some(w.controller_snapshot());
                    out.push((format!("snapshot {i} taken"), w));
                }
                Some(snap) => {
                    // The driver subscribes again from the snapshot's number.
                    w.cursor = snap.last_event_seq + 1;
                    w.app.on_snapshot(snap.clone());
                    w.snapshots.remove(i);
                    out.push((format!("snapshot {i} answered"), w));
                }
            }
        }
        if let Some(r) = &self.result {
            let mut w = self.clone();
            w.app.on_result(r);
            w.result = None;
            out.push(("rewind answered".to_string(), w));
        }
        out
    }
}

fn explore(world: World, path: &mut Vec<String>, ends: &mut usize) {
    let steps = world.steps();
    if steps.is_empty() {
        *ends += 1;
        assert_eq!(
            world.app.transcript().items(),
            new_items().as_slice(),
            "after {path:?}"
        );
        assert_eq!(world.app.status().head, "h2", "after {path:?}");
        assert_eq!(world.app.last_event_seq(), world.last_seq(), "after {path:?}");
        return;
    }
    for (what, next) in steps {
        path.push(what);
        explore(next, path, ends);
        path.pop();
    }
}

#[test]
fn every_order_of_events_answers_and_snapshots_ends_on_the_new_head() {
    let mut ends = 0;
    explore(World::new(), &mut Vec::new(), &mut ends);
    assert!(ends > 100, "{ends} orders");
}
