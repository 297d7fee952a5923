//! The session's view as typed items: the live stream applied to a snapshot, a snapshot taken
//! after, and the items read back from disk by another process are the same, ids included.

use crate::support::{self, delete, mv, write, World};
use retrace_control::ItemList;
use retrace_protocol::{ChangeAction, ItemBody, ToolStatus};
use serde_json::json;

/// A tool call's title, status and changed paths.
type Shown = (String, ToolStatus, Vec<(String, ChangeAction)>);

fn tools(items: &[retrace_protocol::Item]) -> Vec<Shown> {
    items
        .iter()
        .filter_map(|i| match &i.body {
            ItemBody::ToolCall(t) => Some((
                t.title.clone(),
                t.status,
                t.changes.iter().map(|c| (c.path.clone(), c.action)).collect(),
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn live_events_a_snapshot_and_the_log_give_the_same_items() {
    let w = World::new();
    w.put("b.txt", b"one\n");
    let h = w.open();
    let before = w.run(h.snapshot()).unwrap();
    assert!(before.items.is_empty());
    let mut live = ItemList::new(before.items);
    let model = w.script(json!([
        {"content": "working", "reasoning": "let me think", "tool_calls": [
            write("a.txt", "new\n"),
            write("b.txt", "two\n"),
            mv("a.txt", "c.txt"),
            delete("missing.txt"),
        ]},
        {"content": "done"}
    ]));
    let mut sub = h.subscribe(Some(w.run(h.status()).unwrap().last_event_seq));
    let (accepted, outcome, _) = w.turn_with(&h, "make files", model);
    assert!(outcome.ok);
    let events = w.run(support::until_finished(&mut sub, accepted.turn)).1;
    for n in &events {
        live.apply(&n.event);
    }
    let after = w.run(h.snapshot()).unwrap();
    assert_eq!(live.items(), after.items.as_slice(), "live and snapshot differ");
    assert_eq!(after.last_event_seq, events.last().unwrap().seq);

    let kinds: Vec<&str> = after
        .items
        .iter()
        .map(|i| match &i.body {
            ItemBody::UserPrompt { .. } => "prompt",
            ItemBody::Checkpoint(_) => "checkpoint",
            ItemBody::AssistantText { .. } => "text",
            ItemBody::ToolCall(_) => "tool",
            ItemBody::Note(_) => "note",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "prompt",
            "checkpoint",
            "text",
            "tool",
            "tool",
            "tool",
            "tool",
            "text"
        ]
    );
    let statuses: Vec<ToolStatus> = tools(&after.items).into_iter().map(|t| t.1).collect();
    assert_eq!(
        statuses,
        [ToolStatus::Ok, ToolStatus::Ok, ToolStatus::Ok, ToolStatus::Failed]
    );
    let titles: Vec<String> = tools(&after.items).into_iter().map(|t| t.0).collect();
    assert_eq!(
        titles,
        [
            "Created a.txt",
            "Edited b.txt",
            "Moved a.txt → c.txt",
            "Delete missing.txt"
        ]
    );
    match &after.items[2].body {
        ItemBody::AssistantText { text, reasoning } => {
            assert_eq!(text, "working");
            assert_eq!(reasoning.as_deref(), Some("let me think"));
        }
        other => panic!("not text: {other:?}"),
    }
    match &after.items[1].body {
        ItemBody::Checkpoint(c) => {
            let mut files = c.files.clone();
            files.sort();
            assert_eq!(files, ["a.txt", "b.txt", "c.txt"]);
        }
        other => panic!("not a checkpoint: {other:?}"),
    }

    // Another process reads the same items from disk.
    let id = h.session_id();
    drop(h);
    let reader = w.svc.reader(id.as_str()).unwrap();
    assert_eq!(reader.items(None).unwrap(), after.items);
}

#[test]
fn a_restore_note_is_an_item_live_and_after() {
    let w = World::new();
    let h = w.open();
    w.turn(&h, "one", vec![write("a.txt", "1\n")]);
    let snap = w.run(h.snapshot()).unwrap();
    let mut live = ItemList::new(snap.items);
    let mut sub = h.subscribe(Some(snap.last_event_seq));
    w.run(async {
        let plan = h
            .prepare_rewind(retrace_protocol::PrepareRewind {
                turn: 0,
                scope: retrace_protocol::RewindScope::Code,
            })
            .await
            .unwrap();
        h.commit_rewind(retrace_protocol::CommitRewind {
            plan_id: plan.plan_id.clone(),
            on_conflict: Default::default(),
            confirm: true,
            in_place: true,
        })
        .await
        .unwrap();
    });
    let last = w.run(h.status()).unwrap().last_event_seq;
    w.run(async {
        loop {
            match sub.recv().await.unwrap() {
                retrace_protocol::Delivery::Event(n) => {
                    live.apply(&n.event);
                    if n.seq >= last {
                        break;
                    }
                }
                other => panic!("{other:?}"),
            }
        }
    });
    let after = w.run(h.snapshot()).unwrap();
    assert_eq!(live.items(), after.items.as_slice());
    let note = after.items.last().unwrap();
    match &note.body {
        ItemBody::Note(n) => {
            assert_eq!(n.note, retrace_protocol::NoteKind::Restore);
            // Named "before turn 0", as every frontend names the turn a restore goes back to, in
            // the user's words (the log's note is written for the model).
            assert_eq!(n.text, "Restored a.txt to before turn 0");
        }
        other => panic!("not a note: {other:?}"),
    }
}

#[test]
fn every_checkpoint_carries_its_actions_in_one_order_with_reasons() {
    use retrace_protocol::ActionKind;
    let w = World::new();
    let h = w.open();
    w.turn(&h, "one", vec![write("a.txt", "1\n")]);
    w.turn(&h, "two", vec![write("a.txt", "2\n")]);
    let list = w.run(h.checkpoints()).unwrap();
    let first = &list.entries[0];
    let kinds: Vec<ActionKind> = first.actions.iter().map(|a| a.action).collect();
    assert_eq!(kinds, ActionKind::ALL);
    let labels: Vec<&str> = first.actions.iter().map(|a| a.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "Restore code and conversation",
            "Restore conversation",
            "Restore code",
            "Fork from here",
            "Summarize from here",
            "Summarize up to here",
            "Fork into a new workspace"
        ]
    );
    let previewed: Vec<bool> = first.actions.iter().map(|a| a.preview).collect();
    assert_eq!(previewed, [true, true, true, false, false, false, false]);
    // Turn 0 has nothing before it to summarize; everything else is offered.
    let unavailable: Vec<ActionKind> = first
        .actions
        .iter()
        .filter(|a| !a.available)
        .map(|a| a.action)
        .collect();
    assert_eq!(unavailable, [ActionKind::SummarizeUpTo]);
    assert!(first.actions[5].reason.is_some());

    // After the conversation goes back before turn 1, turn 1 is not on the head: only its code
    // can be restored, and each unavailable action says why.
    w.run(async {
        let plan = h
            .prepare_rewind(retrace_protocol::PrepareRewind {
                turn: 1,
                scope: retrace_protocol::RewindScope::Conversation,
            })
            .await
            .unwrap();
        h.commit_rewind(retrace_protocol::CommitRewind {
            plan_id: plan.plan_id,
            on_conflict: Default::default(),
            confirm: true,
            in_place: true,
        })
        .await
        .unwrap();
    });
    let list = w.run(h.checkpoints()).unwrap();
    let second = list.entries.iter().find(|e| e.turn == 1).unwrap();
    for a in &second.actions {
        match a.action {
            ActionKind::RestoreCode => assert!(a.available, "{a:?}"),
            _ => {
                assert!(!a.available, "{a:?}");
                assert_eq!(a.reason.as_deref(), Some("not on this head"), "{a:?}");
            }
        }
    }
}

#[test]
fn a_conflicted_plan_says_what_each_choice_does_to_each_file() {
    use retrace_protocol::{FileAction, OnConflict, PlanBlocker};
    let w = World::new();
    let h = w.open();
    w.turn(&h, "one", vec![write("a.txt", "1\n"), write("b.txt", "1\n")]);
    w.put("a.txt", b"edited by hand\n");
    let plan = w
        .run(h.prepare_rewind(retrace_protocol::PrepareRewind {
            turn: 0,
            scope: retrace_protocol::RewindScope::Code,
        }))
        .unwrap();
    assert_eq!(plan.blockers, [PlanBlocker::Conflicts { count: 1 }]);
    type Choice = (OnConflict, bool, Vec<(String, FileAction)>);
    let choices: Vec<Choice> = plan
        .choices
        .iter()
        .map(|c| {
            (
                c.on_conflict,
                c.commits,
                c.files.iter().map(|f| (f.path.clone(), f.action)).collect(),
            )
        })
        .collect();
    let files = |a, b| vec![("a.txt".to_string(), a), ("b.txt".to_string(), b)];
    assert_eq!(
        choices,
        [
            (
                OnConflict::Refuse,
                false,
                files(FileAction::Skip, FileAction::Skip)
            ),
            (
                OnConflict::Skip,
                true,
                files(FileAction::Skip, FileAction::Delete)
            ),
            (
                OnConflict::Overwrite,
                true,
                files(FileAction::Delete, FileAction::Delete)
            ),
        ]
    );
    let labels: Vec<&str> = plan.choices.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "Restore nothing while files conflict",
            "Skip them (keep your changes)",
            "Overwrite them"
        ]
    );
    // Nothing conflicts: no choice to make.
    let w = World::new();
    let h = w.open();
    w.turn(&h, "one", vec![write("a.txt", "1\n")]);
    let plan = w
        .run(h.prepare_rewind(retrace_protocol::PrepareRewind {
            turn: 0,
            scope: retrace_protocol::RewindScope::Code,
        }))
        .unwrap();
    assert!(plan.choices.is_empty());
    assert!(plan.blockers.is_empty());
}

#[test]
fn a_revert_plan_offers_only_the_choices_its_commit_can_send() {
    use retrace_protocol::{OnConflict, PrepareRevert};
    let w = World::new();
    let h = w.open();
    w.turn(&h, "one", vec![write("a.txt", "1\n")]);
    w.put("a.txt", b"edited by hand\n");
    let plan = w
        .run(h.prepare_revert(PrepareRevert {
            path: "a.txt".into(),
            version: None,
        }))
        .unwrap();
    let offered: Vec<OnConflict> = plan.choices.iter().map(|c| c.on_conflict).collect();
    // Skipping the one file would restore nothing: that is cancelling, not a choice.
    assert_eq!(offered, [OnConflict::Refuse, OnConflict::Overwrite]);
}

#[test]
fn a_model_switch_is_a_note_before_the_turn_live_and_after() {
    let w = World::new();
    let h = w.open();
    w.turn(&h, "one", vec![write("a.txt", "1\n")]);
    let snap = w.run(h.snapshot()).unwrap();
    let mut live = ItemList::new(snap.items);
    let mut sub = h.subscribe(Some(snap.last_event_seq));
    // Each script is another model: the second turn runs with a new one.
    let (accepted, _, _) = w.turn_with(&h, "two", w.script(json!([{"content": "ok"}])));
    for n in w.run(support::until_finished(&mut sub, accepted.turn)).1 {
        live.apply(&n.event);
    }
    let after = w.run(h.snapshot()).unwrap();
    assert_eq!(live.items(), after.items.as_slice());
    let at = after
        .items
        .iter()
        .position(|i| i.id == "model-1")
        .expect("a model-switch note");
    match &after.items[at].body {
        ItemBody::Note(n) => {
            assert_eq!(n.note, retrace_protocol::NoteKind::ModelSwitch);
            assert!(n.text.starts_with("Switched the model to script:"), "{}", n.text);
        }
        other => panic!("not a note: {other:?}"),
    }
    assert!(matches!(after.items[at + 1].body, ItemBody::UserPrompt { .. }));
    assert!(
        !after.items.iter().any(|i| i.id == "model-0"),
        "a session's first model is no switch"
    );
}

fn status_of(items: &[retrace_protocol::Item]) -> Vec<(String, ToolStatus)> {
    items
        .iter()
        .filter_map(|i| match &i.body {
            ItemBody::ToolCall(t) => Some((t.title.clone(), t.status)),
            _ => None,
        })
        .collect()
}

#[test]
fn calls_that_repeat_an_id_are_each_their_own_item() {
    let w = World::new();
    let h = w.open();
    let model = w.script(json!([
        {"content": "x", "tool_calls": [
            {"id": "same", "name": "write_file", "arguments": {"path": "a.txt", "content": "1\n"}},
            {"id": "same", "name": "read_file", "arguments": {"path": "missing"}}
        ]},
        {"content": "done"}
    ]));
    let mut live = ItemList::new(w.run(h.snapshot()).unwrap().items);
    let mut sub = h.subscribe(Some(w.run(h.status()).unwrap().last_event_seq));
    let (accepted, _, _) = w.turn_with(&h, "go", model);
    for n in w.run(support::until_finished(&mut sub, accepted.turn)).1 {
        live.apply(&n.event);
    }
    let after = w.run(h.snapshot()).unwrap();
    assert_eq!(live.items(), after.items.as_slice());
    assert_eq!(
        status_of(&after.items),
        [
            ("Created a.txt".to_string(), ToolStatus::Ok),
            ("Read missing".to_string(), ToolStatus::Failed)
        ]
    );
    let id = h.session_id();
    drop(h);
    assert_eq!(
        w.svc.reader(id.as_str()).unwrap().items(None).unwrap(),
        after.items
    );
}

#[test]
fn mid_turn_a_call_not_started_is_not_shown_and_no_action_is_offered() {
    use retrace_protocol::{ApprovalDecision, BashPolicy, Event};
    let w = World::with(None, |o| o.bash = BashPolicy::Ask);
    let h = w.open();
    w.run(h.set_model(w.script(json!([
        {"content": "x", "tool_calls": [
            write("a.txt", "1\n"),
            {"id": "b", "name": "bash", "arguments": {"command": "echo hi"}},
            write("c.txt", "3\n")
        ]},
        {"content": "done"}
    ]))))
    .unwrap();
    let mut sub = h.subscribe(None);
    let accepted = w.run(h.send("go")).unwrap();
    w.run(support::until(&mut sub, |e| {
        matches!(e, Event::ApprovalRequested { .. })
    }));
    // The bash call waits for its answer: written, running, and the third not started.
    let snap = w.run(h.snapshot()).unwrap();
    assert_eq!(
        status_of(&snap.items),
        [
            ("Created a.txt".to_string(), ToolStatus::Ok),
            ("Run echo hi".to_string(), ToolStatus::Running)
        ]
    );
    assert_eq!(snap.pending_approvals.len(), 1);
    // Another process's reader tells the same (the session is held).
    let reader = w.svc.reader(h.session_id().as_str()).unwrap();
    assert_eq!(status_of(&reader.items(None).unwrap()), status_of(&snap.items));
    // Every action is refused while the turn runs, and says why.
    let list = w.run(h.checkpoints()).unwrap();
    let actions: Vec<_> = list.entries.iter().flat_map(|e| e.actions.iter()).collect();
    assert!(!actions.is_empty());
    for a in actions {
        assert!(!a.available, "{a:?}");
        assert!(
            a.reason.as_deref().unwrap_or("").contains("turn 0 is running"),
            "{a:?}"
        );
    }
    let reader_list = reader.checkpoints().unwrap();
    assert!(reader_list.entries[0].actions.iter().all(|a| !a.available));
    // The snapshot and the events after it make the final snapshot.
    let mut live = ItemList::new(snap.items.clone());
    let mut rest = h.subscribe(Some(snap.last_event_seq));
    h.approve("b", ApprovalDecision::Once).unwrap();
    for n in w.run(support::until_finished(&mut rest, accepted.turn)).1 {
        live.apply(&n.event);
    }
    let after = w.run(h.snapshot()).unwrap();
    assert_eq!(live.items(), after.items.as_slice());
    assert_eq!(status_of(&after.items).len(), 3);
}

#[test]
fn a_model_note_follows_the_head_not_the_log() {
    let w = World::new();
    let h = w.open();
    let a = w.script(json!([{"content": "a"}, {"content": "a"}, {"content": "a"}]));
    let b = w.script(json!([{"content": "b"}]));
    w.turn_with(&h, "zero", a.clone());
    w.turn_with(&h, "one", a.clone());
    w.run(h.fork(retrace_protocol::ForkRequest {
        turn: 1,
        name: Some("other".into()),
        select: true,
    }))
    .unwrap();
    w.turn_with(&h, "two", b);
    w.run(h.switch(retrace_protocol::SwitchRequest { head: "main".into() }))
        .unwrap();
    let snap = w.run(h.snapshot()).unwrap();
    let mut live = ItemList::new(snap.items);
    let mut sub = h.subscribe(Some(snap.last_event_seq));
    // Main ran only with `a`: its next turn with `a` again is no switch, whatever ran elsewhere.
    let (accepted, _, _) = w.turn_with(&h, "three", a);
    for n in w.run(support::until_finished(&mut sub, accepted.turn)).1 {
        live.apply(&n.event);
    }
    let after = w.run(h.snapshot()).unwrap();
    assert_eq!(live.items(), after.items.as_slice());
    let notes: Vec<&str> = after
        .items
        .iter()
        .filter(|i| i.id.starts_with("model-"))
        .map(|i| i.id.as_str())
        .collect();
    assert!(notes.is_empty(), "{notes:?}");
}

/// A summary says what it stands for by the side of its turn it replaced: from turn 0 on (where
/// it opens the conversation) the turns from there, up to a turn the earlier conversation; and
/// its head is titled so, by the prompt of the turn it was made at, for every frontend.
#[test]
fn a_summary_is_labelled_by_the_side_it_replaced() {
    use retrace_protocol::{SummarizeDirection, SummarizeRequest};
    for (turn, direction, label, title) in [
        (
            0,
            SummarizeDirection::From,
            "The turns from here on, summarized:",
            "summary from “zero”",
        ),
        (
            1,
            SummarizeDirection::From,
            "The turns from here on, summarized:",
            "summary from “one”",
        ),
        (
            1,
            SummarizeDirection::UpTo,
            "Earlier conversation summarized:",
            "summary up to “one”",
        ),
    ] {
        let w = World::new();
        let h = w.open();
        w.turn(&h, "zero", vec![write("a.txt", "a\n")]);
        w.turn(&h, "one", vec![write("b.txt", "b\n")]);
        let model = w.script(json!([{"content": "the summary"}]));
        w.run(h.summarize(SummarizeRequest {
            turn,
            direction,
            model: Some(model),
        }))
        .unwrap();
        let snap = w.run(h.snapshot()).unwrap();
        let notes: Vec<String> = snap
            .items
            .iter()
            .filter_map(|i| match &i.body {
                ItemBody::Note(n) => Some(n.text.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(notes, [format!("{label}\nthe summary")], "{turn} {direction:?}");
        let selected = snap.heads.iter().find(|x| x.selected).unwrap();
        assert_eq!(selected.title, title, "{turn} {direction:?}");
    }
}
