//! What the terminal UI's benchmarks share: deterministic text (prompts, answers of a few
//! paragraphs, tool outputs of hundreds of lines) and a 1,000-message conversation built from it.
#![allow(dead_code)]

use ratatui::backend::TestBackend;
use ratatui::Terminal;
use retrace_protocol::{Event, HeadId, SessionId};
use retrace_tui::view::{self, ViewState};
use retrace_tui::{App, AppOptions, StatusInfo};

/// Turns in the conversation: each is four messages (prompt, answer with a tool call, the tool's
/// result, final answer), so 250 turns are 1,000 messages and 1,000 transcript items.
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
    }
}

/// The events of one finished turn: prompt, an answer with a `read_file` call, its long result,
/// the final answer.
pub fn turn_events(rng: &mut Rng, turn: u64) -> Vec<Event> {
    let id = format!("call_{turn}");
    vec![
        Event::TurnStarted {
            session_id: SessionId::new("0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41"),
            head_id: HeadId::main(),
            turn,
            prompt: prompt(rng),
        },
        Event::AssistantDelta {
            item_id: None,
            text: answer(rng),
        },
        Event::ToolCall {
            id: id.clone(),
            name: "read_file".into(),
            arguments: format!(r#"{{"path":"src/module_{turn}.rs"}}"#),
        },
        Event::ToolResult {
            id,
            name: "read_file".into(),
            ok: true,
            content: tool_output(rng),
        },
        Event::AssistantDelta {
            item_id: None,
            text: answer(rng),
        },
        Event::TurnFinished {
            turn,
            ok: true,
            error: None,
            usage: None,
        },
    ]
}

/// An app showing a finished 1,000-message conversation (colours on, as on most terminals).
pub fn conversation() -> App {
    let mut app = App::new(status(), AppOptions { no_color: false });
    let mut rng = Rng::new(7);
    for turn in 1..=TURNS as u64 {
        for e in turn_events(&mut rng, turn) {
            app.on_event(e);
        }
    }
    app
}

/// A terminal of `w`×`h` cells that keeps nothing but its buffer.
pub fn terminal(w: u16, h: u16) -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(w, h)).unwrap()
}

/// Draws one frame of `app` with the view state `state` (what it keeps between frames).
pub fn frame(t: &mut Terminal<TestBackend>, app: &App, state: &mut ViewState) {
    t.draw(|f| view::draw(f, app, state)).unwrap();
}

/// The same kind of conversation as stored messages (what `on_transcript` gets on opening).
pub fn entries() -> Vec<retrace_protocol::TranscriptEntry> {
    use retrace_protocol::{MessageId, Role, ToolCall, TranscriptEntry};
    let entry = |n: &mut usize, role: Role, content: String| {
        *n += 1;
        TranscriptEntry {
            id: MessageId::new(format!("m{n}")),
            role,
            content,
            tool_calls: None,
            tool_call_id: None,
            turn: None,
            usage: None,
        }
    };
    let mut rng = Rng::new(7);
    let mut n = 0;
    let mut out = Vec::new();
    for turn in 1..=TURNS as u64 {
        let id = format!("call_{turn}");
        let mut user = entry(&mut n, Role::User, prompt(&mut rng));
        user.turn = Some(turn);
        out.push(user);
        let mut call = entry(&mut n, Role::Assistant, answer(&mut rng));
        call.tool_calls = Some(vec![ToolCall {
            id: id.clone(),
            name: "read_file".into(),
            arguments: format!(r#"{{"path":"src/module_{turn}.rs"}}"#),
        }]);
        out.push(call);
        let mut result = entry(&mut n, Role::Tool, tool_output(&mut rng));
        result.tool_call_id = Some(id);
        out.push(result);
        out.push(entry(&mut n, Role::Assistant, answer(&mut rng)));
    }
    out
}
