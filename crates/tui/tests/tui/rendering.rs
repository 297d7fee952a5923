//! How the transcript draws an answer's markdown, on the whole screen (insta snapshots).

use insta::assert_snapshot;
use retrace_protocol::{Event, ItemBody, ToolStatus};
use retrace_tui::App;

use crate::fixtures::*;

/// An answer as a model writes one: a heading, a list, code, a table, a quote.
pub const MARKDOWN: &str = "## Plan\n\nHere is **the plan** for `calc/ops.py`:\n\n1. Read the file\n2. Add `mul`\n   - with a *test*\n3. Run the tests\n\n```python\ndef mul(a, b):\n    return a * b\n```\n\n| op | done |\n|---|:-:|\n| add | ✓ |\n| mul | – |\n\n> Every edit can be taken back.\n\nSee [the docs](https://example.com/calc).";

/// The app with one turn whose answer is `text`, streamed in `chunks` bytes at a time.
fn answered(text: &str, chunks: usize) -> App {
    let mut app = app();
    app.on_snapshot(snapshot_of(
        vec![prompt("m1", 0, "plan the mul change")],
        "main",
        1,
    ));
    app.feed(Event::ItemStarted {
        item: answer("m2", 0, ""),
    });
    for chunk in text.as_bytes().chunks(chunks) {
        app.feed(Event::AssistantDelta {
            item_id: Some("m2".into()),
            text: String::from_utf8_lossy(chunk).into_owned(),
        });
    }
    app
}

#[test]
fn an_answer_in_markdown() {
    let app = answered(MARKDOWN, 1000);
    let screen = rows(&app, 80, 34).join("\n");
    assert!(!screen.contains("**") && !screen.contains("```") && !screen.contains("##"));
    assert_snapshot!("markdown_answer", screen);
}

#[test]
fn streaming_keeps_paragraph_breaks_and_shows_an_unfinished_fence_as_code() {
    let cut = MARKDOWN.find("    return").unwrap();
    // Streamed a few bytes at a time (the way deltas come): draws as the same text whole.
    let app = answered(&MARKDOWN[..cut], 3);
    let screen = rows(&app, 80, 20).join("\n");
    assert_eq!(screen, rows(&answered(&MARKDOWN[..cut], 1000), 80, 20).join("\n"));
    assert_snapshot!("markdown_streaming", screen);
}

#[test]
fn a_denied_command_says_so_plainly() {
    let mut app = app();
    let mut snap = snapshot_of(
        vec![
            prompt("p0", 0, "run main"),
            checkpoint(0, &[]),
            tool(
                "t0",
                0,
                "bash",
                "Run python3 main.py --verbose",
                ToolStatus::Denied,
                "error: the user declined to run this command: python3 main.py --verbose",
            ),
            tool(
                "t1",
                0,
                "delete_file",
                "Delete gone.txt",
                ToolStatus::Failed,
                "error: file not found: `gone.txt`",
            ),
            tool(
                "t2",
                0,
                "bash",
                "Run sleep 9",
                ToolStatus::Cancelled,
                "error: cancelled by the user before it ran",
            ),
        ],
        "main",
        1,
    );
    snap.status.model = Some("demo".into());
    app.on_snapshot(snap);
    let screen = rows(&app, 80, 24).join("\n");
    assert!(
        screen.contains("⏺ Run python3 main.py --verbose ⊘ denied\n")
            || screen.contains("⏺ Run python3 main.py --verbose ⊘ denied "),
        "{screen}"
    );
    assert!(!screen.contains("error:"), "{screen}");
    assert!(!screen.contains("declined"), "{screen}");
    assert!(
        screen.contains("✗ failed: file not found: `gone.txt`"),
        "{screen}"
    );
    assert!(screen.contains("⊘ cancelled: before it ran"), "{screen}");
}

/// An edit's row shows its changes, not a count of what it told the model ("(8 lines of
/// output)" read as if editing printed something); a command's output is still counted.
#[test]
fn an_edit_counts_no_output() {
    let mut app = app();
    let edit = with_changes(
        tool(
            "e",
            0,
            "edit_file",
            "Edited calc/ops.py",
            ToolStatus::Ok,
            "a\nb\nc\nd\ne\nf\ng\nh",
        ),
        vec![change(
            retrace_protocol::ChangeAction::Modify,
            "calc/ops.py",
            "@@ -1 +1,2 @@\n a\n+b\n",
        )],
    );
    let moved = with_changes(
        tool(
            "m",
            0,
            "move_file",
            "Moved main.py → app.py",
            ToolStatus::Ok,
            "moved",
        ),
        vec![change(retrace_protocol::ChangeAction::Move, "app.py", "")],
    );
    let run = tool("r", 0, "bash", "Ran ls", ToolStatus::Ok, "one\ntwo");
    app.on_snapshot(snapshot_of(
        vec![prompt("p", 0, "go"), edit, moved, run],
        "main",
        1,
    ));
    let screen = rows(&app, 80, 24).join("\n");
    assert!(screen.contains("Edited calc/ops.py +1 −0 ✓"), "{screen}");
    assert!(screen.contains("(2 lines of output)"), "{screen}");
    assert_eq!(screen.matches("of output").count(), 1, "{screen}");
}

/// Found by a new-user trial: a shell command that exited 1 showed a green ✓. A command that ran
/// but exited with a code other than 0 reads as failed, with its code.
#[test]
fn a_command_that_exited_non_zero_reads_as_failed_with_its_code() {
    let mut app = app();
    let mut failed = tool(
        "t1",
        0,
        "bash",
        "Ran python3 main.py",
        ToolStatus::Ok,
        "Traceback\n[exit code 1]",
    );
    if let ItemBody::ToolCall(c) = &mut failed.body {
        c.exit_code = Some(1);
    }
    let mut passed = tool("t2", 0, "bash", "Ran true", ToolStatus::Ok, "[exit code 0]");
    if let ItemBody::ToolCall(c) = &mut passed.body {
        c.exit_code = Some(0);
    }
    app.on_snapshot(snapshot_of(
        vec![prompt("p0", 0, "run it"), failed, passed],
        "main",
        0,
    ));
    let screen = rows(&app, 100, 20).join("\n");
    let line = |needle: &str| {
        screen
            .lines()
            .find(|l| l.contains(needle))
            .unwrap_or_default()
            .to_string()
    };
    assert!(line("python3 main.py").contains("✗ exit 1"), "{screen}");
    assert!(line("Ran true").contains('✓'), "{screen}");
}
