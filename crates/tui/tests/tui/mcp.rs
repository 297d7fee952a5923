//! The MCP servers in the terminal UI: `/mcp` asks for them and lists them in the transcript
//! (tools, read-only ones marked, prompts, a failed server's reason); the palette's first
//! showing asks for their prompts quietly and lists them as `/SERVER:PROMPT`; Enter on one asks
//! for its text, which goes into the input.

use ratatui::crossterm::event::KeyCode;
use retrace_protocol::{McpPromptInfo, McpServerStatus, McpStatus, McpToolInfo};
use retrace_tui::Effect;

use crate::fixtures::*;

fn servers() -> Vec<McpServerStatus> {
    vec![
        McpServerStatus {
            server: "everything".into(),
            status: McpStatus::Ready,
            error: None,
            tools: vec![
                McpToolInfo {
                    name: "echo".into(),
                    description: "Echoes back the input".into(),
                    read_only: true,
                    vouched_read_only: true,
                    left_out: None,
                },
                McpToolInfo {
                    name: "toggle\u{1b}[2J".into(),
                    description: "changes things".into(),
                    read_only: true,
                    vouched_read_only: false,
                    left_out: None,
                },
                McpToolInfo {
                    name: "x".repeat(70),
                    description: "a long name".into(),
                    read_only: false,
                    vouched_read_only: false,
                    left_out: Some("its name is longer than 64".into()),
                },
            ],
            prompts: vec![McpPromptInfo {
                name: "simple-prompt".into(),
                description: "A prompt with no arguments".into(),
            }],
        },
        McpServerStatus {
            server: "mute".into(),
            status: McpStatus::Failed,
            error: Some("the MCP server `mute` did not start within 300 ms".into()),
            tools: Vec::new(),
            prompts: Vec::new(),
        },
    ]
}

#[test]
fn slash_mcp_lists_the_servers_in_the_transcript() {
    let mut app = app();
    let now = Clock::new().at(0);
    let effects = type_text(&mut app, "/mcp", now);
    assert!(
        effects.contains(&Effect::LoadMcp { show: false }),
        "the palette asks once: {effects:?}"
    );
    let effects = app.on_key(key(KeyCode::Esc), now);
    assert!(effects.is_empty());
    let effects = app.on_key(key(KeyCode::Enter), now);
    assert_eq!(effects, vec![Effect::LoadMcp { show: true }]);
    app.on_mcp(&servers(), true);
    let screen = render(&app, 100, 20).to_string();
    assert!(screen.contains("ready · 3 tools (1 left out)"), "{screen}");
    assert!(
        screen.contains("mcp__everything__echo (read-only)  Echoes back the input"),
        "{screen}"
    );
    assert!(
        screen
            .contains("mcp__everything__toggle\\u{1b}[2J (read-only by the server's word, not vouched for)"),
        "escaped, and the server's mark said for what it is: {screen}"
    );
    assert!(
        screen.contains("(left out: its name is longer than 64)"),
        "{screen}"
    );
    assert!(screen.contains("/everything:simple-prompt"), "{screen}");
    assert!(
        screen.contains("failed · the MCP server `mute` did not start within 300 ms"),
        "{screen}"
    );
}

#[test]
fn the_palette_lists_the_servers_prompts_and_enter_puts_one_in_the_input() {
    let mut app = app();
    let now = Clock::new().at(0);
    type_text(&mut app, "/", now);
    app.on_mcp(&servers(), false);
    type_text(&mut app, "simple", now);
    let screen = render(&app, 100, 20).to_string();
    assert!(screen.contains("/everything:simple-prompt"), "{screen}");
    assert!(screen.contains("A prompt with no arguments"), "{screen}");
    let effects = app.on_key(key(KeyCode::Enter), now);
    assert_eq!(
        effects,
        vec![Effect::McpPrompt {
            server: "everything".into(),
            prompt: "simple-prompt".into(),
            args: Vec::new()
        }]
    );
    app.on_mcp_prompt("This is a simple prompt without arguments.");
    assert_eq!(app.input().text(), "This is a simple prompt without arguments.");
    // Typed with arguments, it is run the same way.
    let mut app = crate::fixtures::app();
    type_text(&mut app, "/everything:args-prompt city=Paris", now);
    let effects = app.on_key(key(KeyCode::Enter), now);
    assert_eq!(app.message(), Some("getting the prompt everything:args-prompt…"));
    assert_eq!(
        effects,
        vec![Effect::McpPrompt {
            server: "everything".into(),
            prompt: "args-prompt".into(),
            args: vec![("city".into(), "Paris".into())]
        }]
    );
}

#[test]
fn an_mcp_call_is_approved_as_a_tool_for_the_session() {
    use retrace_protocol::{Event, HeadId, SessionId};
    let mut app = app();
    app.feed(Event::TurnStarted {
        session_id: SessionId::new("s"),
        head_id: HeadId::main(),
        turn: 0,
        prompt: "write".into(),
    });
    app.feed(Event::ApprovalRequested {
        note: Some("Retrace cannot take back what an MCP tool does outside the workspace".into()),
        prefixes: Vec::new(),
        call_id: "c1".into(),
        tool: "mcp__fs__write_file".into(),
        command: "mcp__fs__write_file {\"path\":\"a\"}".into(),
    });
    let screen = render(&app, 100, 24).to_string();
    assert!(screen.contains("Run this MCP tool call?"), "{screen}");
    assert!(
        screen.contains("mcp__fs__write_file {\"path\":\"a\"}"),
        "{screen}"
    );
    assert!(screen.contains("a this tool"), "{screen}");
}
