//! The transcript: items applied by id, answers in pieces, the UI's own lines placed and kept.

use retrace_protocol::{Event, Item, ItemBody, ToolCallItem, ToolStatus};

use super::*;

fn text(id: &str, t: &str) -> Item {
    Item {
        id: id.into(),
        turn: Some(0),
        body: ItemBody::AssistantText {
            text: t.into(),
            reasoning: None,
        },
    }
}

fn tool(id: &str, status: ToolStatus) -> Item {
    Item {
        id: id.into(),
        turn: Some(0),
        body: ItemBody::ToolCall(Box::new(ToolCallItem {
            call_id: "c".into(),
            tool: "bash".into(),
            title: "Run ls".into(),
            target: Some("ls".into()),
            arguments: serde_json::json!({"command": "ls"}),
            status,
            output: String::new(),
            output_truncated: false,
            changes: Vec::new(),
            gaps: Vec::new(),
            exit_code: None,
        })),
    }
}

fn prompt(id: &str) -> Item {
    Item {
        id: id.into(),
        turn: Some(0),
        body: ItemBody::UserPrompt { text: id.into() },
    }
}

/// What is shown, one word per entry.
fn shown(t: &Transcript) -> Vec<String> {
    t.entries()
        .iter()
        .map(|s| match &s.entry {
            Entry::Prompt { text } => format!("prompt {text}"),
            Entry::Text { text } => format!("text {text}"),
            Entry::Reasoning { text } => format!("reasoning {text}"),
            Entry::Tool { call, .. } => format!("tool {}", call.status.as_str()),
            Entry::Notice { text } => format!("notice {text}"),
            Entry::Restore { text } => format!("⎌ {text}"),
            Entry::Note { text } => format!("note {text}"),
            other => format!("{other:?}"),
        })
        .collect()
}

#[test]
fn pieces_are_cut_after_a_blank_line_and_never_move() {
    let para = "x".repeat(100) + "\n" + &"y".repeat(100) + "\n\n";
    let text: String = para.repeat(100);
    let all = pieces(&text);
    assert!(all.len() >= 2);
    assert_eq!(all.concat(), text);
    for p in &all[..all.len() - 1] {
        assert!(
            p.len() > STREAM_PIECE && p.ends_with("\n\n"),
            "{:?}",
            &p[p.len() - 5..]
        );
    }
    let longer = text.clone() + &para.repeat(50);
    assert_eq!(pieces(&longer)[..all.len() - 1], all[..all.len() - 1]);
    assert!(pieces("").is_empty());
}

#[test]
fn pieces_never_cut_a_code_block_nor_an_indented_continuation() {
    let block = format!("```\n{}```\n", "let x = 1;\n\n".repeat(2000));
    let text = format!("intro\n\n{block}\nafter\n\n{}", "z\n\n".repeat(5000));
    let all = pieces(&text);
    assert_eq!(all.concat(), text);
    assert!(all[0].ends_with("```\n\n"), "{:?}", &all[0][all[0].len() - 20..]);
    assert!(all.len() >= 2);
    // A blank line followed by an indented line (a list item going on) is no place to cut.
    let item = format!("- {}\n\n  more of the item\n\n", "w ".repeat(50));
    let list = item.repeat(200);
    for p in pieces(&list) {
        assert!(p.starts_with("- "), "{:?}", &p[..10]);
    }
    // Without blank lines, a piece ends at a line break past four times the size.
    let lines = "l\n".repeat(4 * STREAM_PIECE);
    let all = pieces(&lines);
    assert!(all.len() >= 2 && all[0].len() >= 4 * STREAM_PIECE && all[0].ends_with('\n'));
}

#[test]
fn an_item_changes_in_place_and_keeps_what_did_not_change() {
    let mut t = Transcript::from_items(vec![prompt("p"), text("a", "one"), prompt("q")]);
    let before: Vec<u64> = t.entries().iter().map(|s| s.revision).collect();
    t.apply(&Event::ReasoningDelta {
        text: "hm".into(),
        item_id: Some("a".into()),
    });
    assert_eq!(shown(&t), ["prompt p", "reasoning hm", "text one", "prompt q"]);
    assert_eq!(t.entries()[0].revision, before[0]);
    assert_eq!(t.entries()[3].revision, before[2]);
    // The same item again changes nothing.
    let now: Vec<u64> = t.entries().iter().map(|s| s.revision).collect();
    t.apply(&Event::ItemCompleted {
        item: Item {
            body: ItemBody::AssistantText {
                text: "one".into(),
                reasoning: Some("hm".into()),
            },
            ..text("a", "")
        },
    });
    assert_eq!(now, t.entries().iter().map(|s| s.revision).collect::<Vec<_>>());
    // An empty answer still has its place (a delta fills it where it is).
    t.apply(&Event::ItemStarted { item: text("b", "") });
    assert_eq!(t.entries().len(), 5);
    t.apply(&Event::AssistantDelta {
        text: "two".into(),
        item_id: Some("b".into()),
    });
    assert_eq!(shown(&t).last().map(String::as_str), Some("text two"));
}

#[test]
fn the_uis_own_lines_follow_their_item_while_it_is_shown() {
    let mut t = Transcript::from_items(vec![prompt("p"), text("a", "one")]);
    t.push_local(Entry::Notice {
        text: "retried".into(),
    });
    t.apply(&Event::ItemStarted {
        item: text("b", "two"),
    });
    assert_eq!(shown(&t), ["prompt p", "text one", "notice retried", "text two"]);
    // A snapshot that still has `a` keeps the line after it…
    t.reset(vec![prompt("p"), text("a", "one"), text("b", "two")]);
    assert_eq!(shown(&t), ["prompt p", "text one", "notice retried", "text two"]);
    // … a line whose item is removed follows the item before it…
    t.apply(&Event::ItemRemoved { item_id: "a".into() });
    assert_eq!(shown(&t), ["prompt p", "notice retried", "text two"]);
    t.reset(vec![prompt("p"), text("b", "two")]);
    assert_eq!(shown(&t), ["prompt p", "notice retried", "text two"]);
    // … and a snapshot without its item drops it.
    t.reset(vec![prompt("q")]);
    assert_eq!(shown(&t), ["prompt q"]);
}

#[test]
fn the_spinner_moves_only_running_calls() {
    let mut t = Transcript::from_items(vec![
        prompt("p"),
        tool("done", ToolStatus::Ok),
        tool("running", ToolStatus::Running),
    ]);
    let before: Vec<u64> = t.entries().iter().map(|s| s.revision).collect();
    t.tick(3);
    let after: Vec<u64> = t.entries().iter().map(|s| s.revision).collect();
    assert_eq!(before[..2], after[..2]);
    assert_ne!(before[2], after[2]);
    assert!(matches!(t.entries()[2].entry, Entry::Tool { frame: 3, .. }));
    // A call that starts running later shows the same frame.
    t.apply(&Event::ItemStarted {
        item: tool("next", ToolStatus::Running),
    });
    assert!(matches!(t.entries()[3].entry, Entry::Tool { frame: 3, .. }));
}

fn restore_note(id: &str) -> Item {
    Item {
        id: id.into(),
        turn: None,
        body: ItemBody::Note(retrace_protocol::NoteItem {
            note: retrace_protocol::NoteKind::Restore,
            text: "Restored a.txt to before turn 1".into(),
        }),
    }
}

/// A restore's line waits for the items it left, then follows the last of them, on its head
/// only: the lines of every head never pile up at the end of another's.
#[test]
fn a_restores_line_follows_the_items_it_left_on_its_head() {
    let turn0 = || vec![prompt("p0"), text("a0", "zero")];
    let both = || vec![prompt("p0"), text("a0", "zero"), prompt("p1"), text("a1", "one")];
    let mut t = Transcript::default();
    t.reset_on(both(), Some("main"));
    // A restore of the conversation to before turn 1 made head h2: said before its snapshot…
    t.push_restore("restored to before turn 1".into(), "h2");
    assert_eq!(
        shown(&t),
        [
            "prompt p0",
            "text zero",
            "prompt p1",
            "text one",
            "⎌ restored to before turn 1"
        ]
    );
    // … placed after the last item of h2's.
    t.reset_on(turn0(), Some("h2"));
    assert_eq!(
        shown(&t),
        ["prompt p0", "text zero", "⎌ restored to before turn 1"]
    );
    // Undone, back on main: its line after the turn that came back; the restore's is h2's.
    t.push_restore("undid".into(), "main");
    t.reset_on(both(), Some("main"));
    assert_eq!(
        shown(&t),
        ["prompt p0", "text zero", "prompt p1", "text one", "⎌ undid"]
    );
    // A later turn comes after it.
    t.apply(&Event::ItemStarted { item: prompt("p2") });
    assert_eq!(shown(&t).last().map(String::as_str), Some("prompt p2"));
    // h2 again: its own line, and none of main's.
    t.reset_on(turn0(), Some("h2"));
    assert_eq!(
        shown(&t),
        ["prompt p0", "text zero", "⎌ restored to before turn 1"]
    );
    // A snapshot of another head than the line's leaves it waiting, last.
    t.push_restore("redid".into(), "h3");
    t.reset_on(turn0(), Some("h2"));
    assert_eq!(
        shown(&t),
        ["prompt p0", "text zero", "⎌ restored to before turn 1", "⎌ redid"]
    );
}

/// A code restore's note for the model says what its line says: the line takes its place.
#[test]
fn a_restore_is_said_once() {
    let mut t = Transcript::default();
    t.reset_on(vec![prompt("p0"), text("a0", "zero")], Some("main"));
    t.push_restore("restored code to before turn 0: 1 file written".into(), "main");
    t.reset_on(
        vec![prompt("p0"), text("a0", "zero"), restore_note("n1")],
        Some("main"),
    );
    assert_eq!(
        shown(&t),
        [
            "prompt p0",
            "text zero",
            "⎌ restored code to before turn 0: 1 file written"
        ]
    );
    // Without a line of this UI's (a session opened again), the note says it.
    let mut fresh = Transcript::default();
    fresh.reset_on(vec![prompt("p0"), restore_note("n1")], Some("main"));
    assert_eq!(
        shown(&fresh),
        ["prompt p0", "note Restored a.txt to before turn 1"]
    );
}
