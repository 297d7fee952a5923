//! A whole flow through the UI's state machine and the real controller (no terminal): keys go to
//! a [`Driver`], which performs their requests on a real session with a script model; the files
//! are checked on disk. Two turns; Esc Esc Enter changes nothing; Esc Esc, turn 0, `3`, confirm:
//! the files are as before turn 0; `/undo` brings them back; then `2`, confirmed in its preview,
//! restores the conversation and refills the prompt, leaving the files alone.

use std::path::Path;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::KeyCode;
use retrace_control::{Service, ServiceOptions};
use retrace_protocol::{ItemBody, ModelSpec, RewindScope};
use retrace_tui::{AppOptions, Driver, Mode, Screen};
use serde_json::json;

use crate::fixtures::{key, Clock};

fn files(ws: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(ws)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Feeds events and answers to the app until `done` holds (20 s at most).
pub(crate) async fn until(ui: &mut Driver, what: &str, done: impl Fn(&Driver) -> bool) {
    let start = Instant::now();
    while !done(ui) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "waited for {what}; message: {:?}, screen: {:?}, running {}, compacting {}, head {}, first item {:?}",
            ui.app().message(),
            ui.app().screen(),
            ui.app().status().running,
            ui.app().status().compacting,
            ui.app().status().head,
            ui.app().transcript().items().first().map(|i| format!("{:?}", i.body).chars().take(200).collect::<String>())
        );
        let _ = tokio::time::timeout(Duration::from_millis(200), ui.next()).await;
    }
}

/// Types `text` and presses Enter at `at` ms.
pub(crate) fn send(ui: &mut Driver, clock: &Clock, at: u64, text: &str) {
    for c in text.chars() {
        ui.key(key(KeyCode::Char(c)), clock.at(at));
    }
    ui.key(key(KeyCode::Enter), clock.at(at));
}

pub(crate) fn idle_after(ui: &Driver, answer: &str) -> bool {
    !ui.app().status().running
        && ui
            .app()
            .transcript()
            .items()
            .iter()
            .any(|i| matches!(&i.body, ItemBody::AssistantText { text, .. } if text == answer))
}

/// A temp dir with a workspace (`ws`), a script model answering `responses`, a service over a
/// data root in it (tuned by `tune`) and a runtime for the service.
pub(crate) struct Scripted {
    pub(crate) _tmp: tempfile::TempDir,
    pub(crate) ws: std::path::PathBuf,
    pub(crate) rt: tokio::runtime::Runtime,
    pub(crate) opts: ServiceOptions,
}

pub(crate) fn scripted(responses: serde_json::Value, tune: impl FnOnce(&mut ServiceOptions)) -> Scripted {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let script = tmp.path().join("script.json");
    std::fs::write(&script, json!({ "responses": responses }).to_string()).unwrap();
    let mut opts = ServiceOptions::new(tmp.path().join("home"));
    opts.env = std::sync::Arc::new(|_| None);
    opts.model = Some(ModelSpec::script(script.to_string_lossy()));
    tune(&mut opts);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    Scripted {
        _tmp: tmp,
        ws,
        rt,
        opts,
    }
}

/// Esc, Esc 100 ms later at `at` ms; then waits for the picker.
async fn esc_esc(ui: &mut Driver, clock: &Clock, at: u64) {
    ui.key(key(KeyCode::Esc), clock.at(at));
    ui.key(key(KeyCode::Esc), clock.at(at + 100));
    until(ui, "the picker", |u| u.app().screen() == Screen::Picker).await;
}

#[test]
fn two_turns_rewind_code_undo_then_rewind_the_conversation() {
    let Scripted { _tmp, ws, rt, opts } = scripted(
        json!([
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "one.txt", "content": "1\n"}}]},
            {"content": "wrote one"},
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "two.txt", "content": "2\n"}}]},
            {"content": "wrote two"}
        ]),
        |_| {},
    );
    std::fs::write(ws.join("keep.txt"), "kept\n").unwrap();
    rt.block_on(async {
        let svc = Service::new(opts);
        let handle = svc.create(&ws).await.unwrap();
        let watch = handle.clone();
        let mut ui = Driver::open(svc.clone(), handle, AppOptions { no_color: true }, None)
            .await
            .unwrap();
        let clock = Clock::new();
        let all = ["keep.txt", "one.txt", "two.txt"];
        // What the UI shows is the controller's view: the items a fresh snapshot has.
        let same_as_a_snapshot = |ui: &Driver, snap: retrace_protocol::SessionSnapshot| {
            assert_eq!(ui.app().transcript().items(), snap.items.as_slice());
        };

        send(&mut ui, &clock, 0, "first");
        until(&mut ui, "turn 0", |u| idle_after(u, "wrote one")).await;
        send(&mut ui, &clock, 1_000, "second");
        until(&mut ui, "turn 1", |u| idle_after(u, "wrote two")).await;
        assert_eq!(files(&ws), all);
        ui.settle(Duration::from_millis(100)).await;
        same_as_a_snapshot(&ui, watch.snapshot().await.unwrap());
        let head = ui.app().status().head.clone();
        let first_head = head.clone();

        // Esc Esc Enter: "(current)" is selected; nothing changes.
        esc_esc(&mut ui, &clock, 2_000).await;
        ui.key(key(KeyCode::Enter), clock.at(2_200));
        assert_eq!(ui.app().screen(), Screen::Chat);
        ui.settle(Duration::from_millis(100)).await;
        assert_eq!(files(&ws), all);
        assert_eq!(ui.app().status().head, head);

        // Esc Esc, Up Up (turn 0), Enter, 3 (restore code), Enter (confirm the preview).
        esc_esc(&mut ui, &clock, 3_000).await;
        ui.key(key(KeyCode::Up), clock.at(3_200));
        ui.key(key(KeyCode::Up), clock.at(3_300));
        ui.key(key(KeyCode::Enter), clock.at(3_400));
        assert!(matches!(ui.app().mode(), Mode::Menu(m) if m.entry.turn == 0));
        ui.key(key(KeyCode::Char('3')), clock.at(3_500));
        until(&mut ui, "the preview", |u| u.app().screen() == Screen::Preview).await;
        ui.key(key(KeyCode::Enter), clock.at(3_600));
        until(&mut ui, "the code rewind", |u| {
            u.app()
                .message()
                .is_some_and(|m| m.starts_with("rewound to before turn 0"))
        })
        .await;
        assert_eq!(files(&ws), ["keep.txt"]);
        assert_eq!(ui.app().status().head, head, "a code restore keeps the head");

        // /undo: the files are back.
        send(&mut ui, &clock, 4_000, "/undo");
        until(&mut ui, "the undo", |u| {
            u.app().message().is_some_and(|m| m.starts_with("undone"))
        })
        .await;
        assert_eq!(files(&ws), all);
        assert_eq!(std::fs::read_to_string(ws.join("two.txt")).unwrap(), "2\n");
        // The rewind's and the undo's notes are shown, as a snapshot has them.
        ui.settle(Duration::from_millis(100)).await;
        let snap = watch.snapshot().await.unwrap();
        let notes = snap
            .items
            .iter()
            .filter(|i| matches!(i.body, ItemBody::Note(_)))
            .count();
        assert_eq!(notes, 2, "{:?}", snap.items);
        same_as_a_snapshot(&ui, snap);

        // Esc Esc, turn 0, 2 (restore the conversation), Enter (its preview): a new head, the
        // prompt back in the input, the files untouched.
        esc_esc(&mut ui, &clock, 5_000).await;
        ui.key(key(KeyCode::Up), clock.at(5_200));
        ui.key(key(KeyCode::Up), clock.at(5_300));
        ui.key(key(KeyCode::Enter), clock.at(5_400));
        ui.key(key(KeyCode::Char('2')), clock.at(5_500));
        until(
            &mut ui,
            "the conversation's preview",
            |u| matches!(u.app().mode(), Mode::Preview(p) if p.plan.scope == RewindScope::Conversation),
        )
        .await;
        assert_eq!(ui.app().status().head, head, "nothing is committed before Enter");
        ui.key(key(KeyCode::Enter), clock.at(5_600));
        until(&mut ui, "the conversation rewind", |u| {
            u.app()
                .message()
                .is_some_and(|m| m.starts_with("rewound to before turn 0"))
        })
        .await;
        assert_eq!(ui.app().input().text(), "first");
        assert_ne!(
            ui.app().status().head,
            head,
            "a conversation rewind forks a new head"
        );
        until(&mut ui, "the new head's transcript", |u| {
            u.app()
                .transcript()
                .items()
                .iter()
                .all(|i| !matches!(i.body, ItemBody::UserPrompt { .. }))
        })
        .await;
        assert_eq!(files(&ws), all);
        // Found by the new-user trial: the status line still said "turn 1" here. The
        // conversation has no turn now, and the status line names none.
        assert_eq!(ui.app().status().turn, None);
        let status_row = |ui: &Driver| crate::fixtures::rows(ui.app(), 80, 24).pop().unwrap();
        assert!(!status_row(&ui).contains("turn"), "{}", status_row(&ui));

        // Esc clears the refilled prompt; Esc Esc Enter then changes nothing.
        let head = ui.app().status().head.clone();
        ui.key(key(KeyCode::Esc), clock.at(6_000));
        assert!(ui.app().input().is_empty());
        esc_esc(&mut ui, &clock, 7_000).await;
        ui.key(key(KeyCode::Enter), clock.at(7_200));
        ui.settle(Duration::from_millis(100)).await;
        assert_eq!(ui.app().status().head, head);
        assert_eq!(files(&ws), all);

        // /heads lists both heads; Enter on the old one switches back to it (its two turns).
        send(&mut ui, &clock, 8_000, "/heads");
        until(&mut ui, "the heads", |u| u.app().screen() == Screen::Heads).await;
        ui.key(key(KeyCode::Up), clock.at(8_100));
        ui.key(key(KeyCode::Enter), clock.at(8_200));
        until(&mut ui, "the first head", |u| {
            u.app().status().head == first_head && idle_after(u, "wrote two")
        })
        .await;
        assert!(status_row(&ui).contains("turn 1"), "{}", status_row(&ui));

        // /fork NAME, turn 1: a named head, selected, named on the status line.
        send(&mut ui, &clock, 9_000, "/fork just one");
        until(&mut ui, "the fork picker", |u| u.app().screen() == Screen::Picker).await;
        ui.key(key(KeyCode::Up), clock.at(9_100));
        ui.key(key(KeyCode::Enter), clock.at(9_200));
        // The answer names the head at once; its conversation comes with the snapshot after it.
        until(&mut ui, "the named fork", |u| {
            u.app().head_name() == Some("just one") && !idle_after(u, "wrote two")
        })
        .await;
        assert!(idle_after(&ui, "wrote one") && !idle_after(&ui, "wrote two"));
        assert_eq!(files(&ws), all);
        ui.settle(Duration::from_millis(100)).await;
        same_as_a_snapshot(&ui, watch.snapshot().await.unwrap());
        drop(ui);
        drop(watch);
        svc.shutdown().await;
    });
}

/// Found by attack: a UI whose event stream lagged (a model streaming faster than the UI drew)
/// could stay on "working…" for ever with the answer missing. Here the UI reads nothing while a
/// turn of many events runs on a 3-event buffer; when it reads again, it must show the finished
/// turn and its answer, and take the next prompt.
#[test]
fn a_lagged_stream_ends_on_the_finished_turn() {
    let calls: Vec<_> = (0..6)
        .map(|i| json!({"name": "write_file", "arguments": {"path": format!("f{i}.txt"), "content": "x\n"}}))
        .collect();
    let Scripted { _tmp, ws, rt, opts } = scripted(
        json!([
            {"tool_calls": calls},
            {"content": "all done"},
            {"content": "second answer"}
        ]),
        |o| o.event_buffer = 3,
    );
    rt.block_on(async {
        let svc = Service::new(opts);
        let handle = svc.create(&ws).await.unwrap();
        let watch = handle.clone();
        let mut ui = Driver::open(svc.clone(), handle, AppOptions { no_color: true }, None)
            .await
            .unwrap();
        let clock = Clock::new();
        send(&mut ui, &clock, 0, "go");
        // The UI reads nothing until the turn is over.
        let start = Instant::now();
        while watch.status().await.unwrap().running.is_some() || !ws.join("f5.txt").exists() {
            assert!(start.elapsed() < Duration::from_secs(20), "the turn never ended");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        until(&mut ui, "the finished turn", |u| idle_after(u, "all done")).await;
        ui.settle(Duration::from_millis(200)).await;
        assert!(!ui.app().status().running);
        // The lag was answered with a snapshot: every call shows, as the controller has it.
        let snap = watch.snapshot().await.unwrap();
        assert_eq!(ui.app().transcript().items(), snap.items.as_slice());
        let calls = snap
            .items
            .iter()
            .filter(|i| matches!(i.body, ItemBody::ToolCall(_)))
            .count();
        assert_eq!(calls, 6);
        send(&mut ui, &clock, 1_000, "again");
        until(&mut ui, "the second turn", |u| idle_after(u, "second answer")).await;
        drop(ui);
        drop(watch);
        svc.shutdown().await;
    });
}

/// Found by the new-user trial: a resumed session showed no context on its status line until
/// its next turn. The snapshot carries what the log last counted, and the status line shows it at
/// once, with the session's tokens and cost (the controller's tally).
#[test]
fn a_resumed_session_shows_its_context_at_once() {
    let Scripted { _tmp, ws, rt, opts } = scripted(
        json!([
            {"content": "answer one", "usage": {"prompt_tokens": 30000, "completion_tokens": 500}}
        ]),
        |_| {},
    );
    rt.block_on(async {
        let svc = Service::new(opts);
        let handle = svc.create(&ws).await.unwrap();
        let id = handle.session_id().to_string();
        let mut ui = Driver::open(svc.clone(), handle, AppOptions { no_color: true }, None)
            .await
            .unwrap();
        let clock = Clock::new();
        send(&mut ui, &clock, 0, "first");
        until(&mut ui, "turn 0", |u| idle_after(u, "answer one")).await;
        assert_eq!(ui.app().status().usage.context_tokens, Some(30_500));
        let live = crate::fixtures::rows(ui.app(), 80, 24).pop().unwrap();
        assert!(live.contains("% context"), "{live}");
        drop(ui);
        svc.wait_closed().await;

        // Opened again: the same context, before any event.
        let handle = svc.open(&id, None).await.unwrap();
        let ui = Driver::open(svc.clone(), handle, AppOptions { no_color: true }, None)
            .await
            .unwrap();
        assert_eq!(ui.app().status().usage.context_tokens, Some(30_500));
        let resumed = crate::fixtures::rows(ui.app(), 80, 24).pop().unwrap();
        let percent = |row: &str| {
            row.split(" · ")
                .find(|p| p.ends_with("% context"))
                .map(str::to_string)
        };
        assert_eq!(percent(&resumed), percent(&live), "{resumed}");
        // … and the session's tokens and cost, which the controller counts from the log: a
        // script costs nothing
        for row in [&live, &resumed] {
            assert!(row.contains("30.0k in 500 out · $0.0000"), "{row}");
        }
        drop(ui);
        svc.shutdown().await;
    });
}
