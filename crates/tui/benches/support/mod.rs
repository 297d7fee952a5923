//! What the terminal UI's benchmarks share: deterministic text (prompts, answers of a few
//! paragraphs, tool outputs of hundreds of lines) and a 1,000-message conversation built from it.
#![allow(dead_code)]

use ratatui::backend::TestBackend;
use ratatui::Terminal;
use retrace_protocol::{
    CheckpointItem, Coverage, Event, HeadId, Item, ItemBody, SessionId, SessionSnapshot, SessionStatus,
    ToolCallItem, ToolStatus,
};
use retrace_tui::view::{self, ViewState};
use retrace_tui::{App, AppOptions, StatusInfo};

/// Turns in the conversation: each is four messages (prompt, answer with a tool call, the tool's
/// result, final answer), so 250 turns are 1,000 messages; each turn is five items (its
/// checkpoint too).
pub const TURNS: usize = 250;
/// Lines of each tool result.
pub const OUTPUT_LINES: usize = 300;

const WORDS: [&str; 16] = [
    "the",
    "checkpoint",
    "store",
    "writes",
    "a",
    "before-image",
    "of",
    "every",
    "file",
    "that",
    "turn",
    "changes,",
    "so",
    "rewind",
    "restores",
    "it.",
];

/// A small deterministic generator (xorshift), so every run draws the same text.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// `words` words of prose on one line.
pub fn sentence(rng: &mut Rng, words: usize) -> String {
    let mut s = String::new();
    for i in 0..words {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(WORDS[rng.below(WORDS.len())]);
    }
    s
}

/// A prompt: one or two sentences.
pub fn prompt(rng: &mut Rng) -> String {
    let n = 8 + rng.below(30);
    sentence(rng, n)
}

/// An answer of a few paragraphs (each a long line of 40–100 words, wrapped by the UI), with a
/// short list between them: about 2 KB.
pub fn answer(rng: &mut Rng) -> String {
    let mut parts = Vec::new();
    for _ in 0..3 + rng.below(2) {
        let n = 40 + rng.below(60);
        parts.push(sentence(rng, n));
        parts.push(String::new());
    }
    for i in 0..3 {
        let n = 5 + rng.below(10);
        parts.push(format!("{}. {}", i + 1, sentence(rng, n)));
    }
    parts.join("\n")
}

/// A tool's output: `OUTPUT_LINES` lines of code-like text with a tab now and then.
pub fn tool_output(rng: &mut Rng) -> String {
    let mut s = String::new();
    for i in 0..OUTPUT_LINES {
        let indent = if rng.below(4) == 0 { "\t" } else { "    " };
        let n = 3 + rng.below(12);
        s.push_str(&format!(
            "{:>4}\t{indent}let x{i} = {};\n",
            i + 1,
            sentence(rng, n)
        ));
    }
    s
}

pub fn status() -> StatusInfo {
    StatusInfo {
        model: Some("demo".into()),
        workspace: "/home/ada/project".into(),
        session: "0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41".into(),
        head: "main".into(),
        turn: None,
        usage: Default::default(),
        running: false,
        spinner: 0,
        plan_mode: false,
        compacting: false,
        ..StatusInfo::default()
    }
}

/// The items of one finished turn: prompt, its checkpoint, an answer with a `read_file` call, its
/// long result, the final answer.
pub fn turn_items(rng: &mut Rng, turn: u64) -> Vec<Item> {
    let at = |id: String, body: ItemBody| Item {
        id,
        turn: Some(turn),
        body,
    };
    vec![
        at(format!("p{turn}"), ItemBody::UserPrompt { text: prompt(rng) }),
        at(
            format!("checkpoint-{turn}"),
            ItemBody::Checkpoint(CheckpointItem {
                files: Vec::new(),
                gaps: Vec::new(),
                coverage: Coverage::None,
                retained: true,
            }),
        ),
        at(
            format!("a{turn}"),
            ItemBody::AssistantText {
                text: answer(rng),
                reasoning: None,
            },
        ),
        at(
            format!("a{turn}.0"),
            ItemBody::ToolCall(Box::new(ToolCallItem {
                call_id: format!("call_{turn}"),
                tool: "read_file".into(),
                title: format!("Read src/module_{turn}.rs"),
                target: Some(format!("src/module_{turn}.rs")),
                arguments: serde_json::json!({"path": format!("src/module_{turn}.rs")}),
                status: ToolStatus::Ok,
                output: tool_output(rng),
                output_truncated: false,
                changes: Vec::new(),
                gaps: Vec::new(),
                exit_code: None,
            })),
        ),
        at(
            format!("b{turn}"),
            ItemBody::AssistantText {
                text: answer(rng),
                reasoning: None,
            },
        ),
    ]
}

/// A snapshot of a finished 1,000-message conversation (what `on_snapshot` gets on opening).
pub fn snapshot() -> SessionSnapshot {
    let mut rng = Rng::new(7);
    let items = (1..=TURNS as u64)
        .flat_map(|turn| turn_items(&mut rng, turn))
        .collect();
    SessionSnapshot {
        status: SessionStatus {
            session_id: SessionId::new("0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41"),
            workspace: "/home/ada/project".into(),
            head_id: HeadId::main(),
            running: None,
            model: Some("demo".into()),
            model_spec: Some("demo".into()),
            plan_mode: false,
            backend: Default::default(),
            last_event_seq: 0,
        },
        items,
        heads: Vec::new(),
        head_id: HeadId::main(),
        pending_approvals: Vec::new(),
        context_tokens: None,
        usage: Default::default(),
        last_event_seq: 0,
    }
}

/// An app showing a finished 1,000-message conversation (colours on, as on most terminals).
pub fn conversation() -> App {
    let mut app = App::new(status(), AppOptions { no_color: false });
    app.on_snapshot(snapshot());
    app
}

/// Gives `app` the next event of its session.
pub fn feed(app: &mut App, event: Event) {
    let seq = app.last_event_seq() + 1;
    app.on_event(seq, event);
}

/// A terminal of `w`×`h` cells that keeps nothing but its buffer.
pub fn terminal(w: u16, h: u16) -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(w, h)).unwrap()
}

/// Draws one frame of `app` with the view state `state` (what it keeps between frames).
pub fn frame(t: &mut Terminal<TestBackend>, app: &App, state: &mut ViewState) {
    t.draw(|f| view::draw(f, app, state)).unwrap();
}
