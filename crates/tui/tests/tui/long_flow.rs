//! Long sessions through the Driver on a real controller with the script model: two turns,
//! `/compact` (the script writes the summary): the transcript shows the summary (a compaction
//! note) and the last turn, `/heads` still lists the original head; Shift+Tab turns plan mode on (the UI and the
//! controller agree) and a turn's write is refused, nothing written; `/new` opens a new, empty
//! session and the old one stays listed.

use std::time::Duration;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use retrace_control::Service;
use retrace_protocol::{ItemBody, NoteKind, ToolStatus};
use retrace_tui::{AppOptions, Driver, Mode, Screen};
use serde_json::json;

use crate::fixtures::{key, Clock};
use crate::whole_flow::{idle_after, scripted, send, until, Scripted};

fn users(ui: &Driver) -> Vec<String> {
    ui.app()
        .transcript()
        .items()
        .iter()
        .filter_map(|i| match &i.body {
            ItemBody::UserPrompt { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn compact_plan_mode_and_a_new_session() {
    let Scripted { _tmp, ws, rt, opts } = scripted(
        json!([
            {"content": "answer one"},
            {"content": "answer two"},
            {"content": "SUMMARY OF THE FIRST TURN"},
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "plan.txt", "content": "x\n"}}]},
            {"content": "could not write"}
        ]),
        |_| {},
    );
    rt.block_on(async {
        let svc = Service::new(opts);
        let handle = svc.create(&ws).await.unwrap();
        let mut ui = Driver::open(svc.clone(), handle.clone(), AppOptions { no_color: true }, None)
            .await
            .unwrap();
        let clock = Clock::new();
        let first_session = ui.session_id();

        send(&mut ui, &clock, 0, "first");
        until(&mut ui, "turn 0", |u| idle_after(u, "answer one")).await;
        send(&mut ui, &clock, 1_000, "second");
        until(&mut ui, "turn 1", |u| idle_after(u, "answer two")).await;
        let original = ui.app().status().head.clone();

        // /compact: the summary, then the last turn; the status line says how much smaller.
        send(&mut ui, &clock, 2_000, "/compact");
        let summarized = |u: &Driver| {
            u.app().transcript().items().first().is_some_and(|i| {
                matches!(&i.body, ItemBody::Note(n)
                    if n.note == NoteKind::Compaction && n.text.contains("SUMMARY OF THE FIRST TURN"))
            })
        };
        until(&mut ui, "the compaction", |u| {
            !u.app().status().running
                && !u.app().status().compacting
                && u.app().status().head != original
                && summarized(u)
                && u.app().message().is_some_and(|m| m.starts_with("compacted: "))
        })
        .await;
        ui.settle(Duration::from_millis(100)).await;
        assert_eq!(users(&ui), ["second"]);
        let items = ui.app().transcript().items();
        assert!(
            items
                .iter()
                .any(|i| matches!(&i.body, ItemBody::AssistantText { text, .. } if text == "answer two")),
            "{items:?}"
        );
        assert!(
            ui.app()
                .message()
                .is_some_and(|m| m.starts_with("compacted: about ")),
            "{:?}",
            ui.app().message()
        );
        assert_eq!(
            handle.status().await.unwrap().head_id.as_str(),
            ui.app().status().head
        );

        // /heads lists the original head beside the summary head.
        send(&mut ui, &clock, 3_000, "/heads");
        until(&mut ui, "the heads", |u| u.app().screen() == Screen::Heads).await;
        let Mode::Heads(tree) = ui.app().mode() else {
            panic!("{:?}", ui.app().mode())
        };
        assert!(tree.rows.iter().any(|r| r.head.id.as_str() == original));
        ui.key(key(KeyCode::Esc), clock.at(3_100));
        assert_eq!(ui.app().screen(), Screen::Chat);

        // Shift+Tab: plan mode on, in the UI and in the controller.
        ui.key(
            KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT),
            clock.at(4_000),
        );
        until(&mut ui, "plan mode", |u| u.app().status().plan_mode).await;
        assert!(handle.status().await.unwrap().plan_mode);

        // A turn whose model writes anyway: refused, nothing written.
        send(&mut ui, &clock, 5_000, "write plan.txt");
        until(&mut ui, "the planning turn", |u| idle_after(u, "could not write")).await;
        assert!(!ws.join("plan.txt").exists());
        assert!(ui
            .app()
            .transcript()
            .items()
            .iter()
            .any(|i| matches!(&i.body, ItemBody::ToolCall(c)
                if c.tool == "write_file" && c.status == ToolStatus::Denied)));
        assert!(ui.app().status().plan_mode, "still on");

        // /new: another session, empty; the first stays listed.
        send(&mut ui, &clock, 6_000, "/new");
        until(&mut ui, "the new session", |u| u.session_id() != first_session).await;
        assert!(ui.app().transcript().items().is_empty());
        assert_eq!(ui.app().status().session, ui.session_id());
        assert!(
            !ui.app().status().plan_mode,
            "a new session starts out of plan mode"
        );
        let listed: Vec<String> = svc
            .sessions(Some(&ws))
            .await
            .unwrap()
            .into_iter()
            .map(|s| s.id.to_string())
            .collect();
        assert!(listed.contains(&first_session), "{listed:?}");
        assert!(listed.contains(&ui.session_id()), "{listed:?}");
        svc.shutdown().await;
    });
}
