//! The chat transcript as the UI shows it: built from a head's stored messages
//! ([`TranscriptEntry`]) and extended by live events as a turn runs.
//!
//! Each item carries a revision: a number taken from one process-wide counter whenever the item
//! is added or changed. The view keeps every item's wrapped rows keyed by it, so a revision must
//! never come back for other content: the counter only goes up, and it is shared by every
//! transcript, so a transcript that replaces another (a head change) has none of its numbers.

use std::sync::atomic::{AtomicU64, Ordering};

use retrace_protocol::{Role, TranscriptEntry};

/// One thing shown in the chat.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// A turn's prompt (or a summary standing in for earlier messages, with no turn).
    User {
        /// The turn it opened.
        turn: Option<u64>,
        /// The prompt.
        text: String,
        /// Files whose before-images the turn captured so far (live turns only).
        captured: usize,
    },
    /// The model's answer (streamed or stored).
    Assistant {
        /// The text.
        text: String,
    },
    /// The model's reasoning, shown dimmed and folded.
    Reasoning {
        /// The text.
        text: String,
    },
    /// A tool call, one line with its target.
    Tool {
        /// The call id.
        id: String,
        /// The tool.
        name: String,
        /// What it works on: a path, a command line, or the raw arguments.
        target: String,
        /// `None` while it runs; then whether it succeeded.
        ok: Option<bool>,
        /// Lines of its output (for the fold marker).
        output_lines: usize,
        /// Its arguments as the model gave them (JSON text), for its diff.
        arguments: String,
        /// Its output, at most [`OUTPUT_KEPT`] bytes (what the details show).
        output: String,
    },
    /// A note from Retrace (a code-only restore, a notice).
    System {
        /// The text.
        text: String,
    },
    /// An error.
    Error {
        /// The text.
        text: String,
    },
}

/// The size after which a streamed answer continues in a new item (see
/// [`Transcript::assistant_delta`]).
pub const STREAM_PIECE: usize = 8 * 1024;

/// How much of a tool's output the transcript keeps to show (the details fold it further).
pub const OUTPUT_KEPT: usize = 64 * 1024;

/// At most `max` bytes of `s`, cut on a character boundary.
fn head(s: &str, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// The transcript: items oldest first, each with its revision.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    items: Vec<Item>,
    /// `revisions[i]` changes whenever `items[i]` does (module doc).
    revisions: Vec<u64>,
}

/// The next revision; never 0, never the same twice in a process.
fn next_revision() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// What a tool call works on, from its JSON arguments: `path`, else `command`, else the raw text.
pub fn tool_target(arguments: &str) -> String {
    if let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(arguments) {
        for key in ["path", "file_path", "command", "pattern"] {
            if let Some(serde_json::Value::String(s)) = map.get(key) {
                return s.clone();
            }
        }
    }
    arguments.to_string()
}

impl Transcript {
    /// The items, oldest first.
    pub fn items(&self) -> &[Item] {
        &self.items
    }

    /// Each item's revision, in the order of [`Transcript::items`]: a number that changes whenever
    /// the item does, and that no other item content, in any transcript of this process, ever had.
    pub fn revisions(&self) -> &[u64] {
        &self.revisions
    }

    /// A transcript of a head's stored messages (system prompts are not shown; Retrace's notes are).
    pub fn from_entries(entries: &[TranscriptEntry]) -> Transcript {
        let mut t = Transcript::default();
        for (i, e) in entries.iter().enumerate() {
            match e.role {
                Role::System => {
                    // The first system message is the model's instructions; later ones are notes.
                    if i > 0 {
                        t.push(Item::System {
                            text: e.content.clone(),
                        });
                    }
                }
                Role::User => t.push(Item::User {
                    turn: e.turn,
                    text: e.content.clone(),
                    captured: 0,
                }),
                Role::Assistant => {
                    if !e.content.is_empty() {
                        t.push(Item::Assistant {
                            text: e.content.clone(),
                        });
                    }
                    for call in e.tool_calls.iter().flatten() {
                        t.push(Item::Tool {
                            id: call.id.clone(),
                            name: call.name.clone(),
                            target: tool_target(&call.arguments),
                            ok: None,
                            output_lines: 0,
                            arguments: call.arguments.clone(),
                            output: String::new(),
                        });
                    }
                }
                Role::Tool => {
                    if let Some(id) = &e.tool_call_id {
                        // The log keeps no flag: a failed call's result is `error: …` (the agent's
                        // one form for failures, denials and cancels).
                        let ok = !e.content.starts_with("error:");
                        t.tool_result(id, Some(ok), &e.content);
                    }
                }
            }
        }
        t
    }

    /// Adds an item.
    pub fn push(&mut self, item: Item) {
        self.items.push(item);
        self.revisions.push(next_revision());
    }

    /// Marks item `index` changed.
    fn touch(&mut self, index: usize) {
        if let Some(r) = self.revisions.get_mut(index) {
            *r = next_revision();
        }
    }

    /// Appends streamed answer text, continuing the last answer when it is the newest item.
    ///
    /// A long answer is kept as several items, cut after a line break once the newest one passes
    /// [`STREAM_PIECE`] bytes: a frame then wraps again only the piece that grows, not the whole
    /// answer (each piece draws as the same lines the whole would).
    pub fn assistant_delta(&mut self, delta: &str) {
        if let Some(Item::Assistant { text }) = self.items.last_mut() {
            text.push_str(delta);
            let rest = if text.len() > STREAM_PIECE {
                text.rfind('\n').map(|at| text.split_off(at + 1))
            } else {
                None
            };
            self.touch(self.items.len() - 1);
            if let Some(rest) = rest {
                self.push(Item::Assistant { text: rest });
            }
        } else {
            self.push(Item::Assistant {
                text: delta.to_string(),
            });
        }
    }

    /// Appends streamed reasoning, continuing the last reasoning when it is the newest item.
    pub fn reasoning_delta(&mut self, delta: &str) {
        if let Some(Item::Reasoning { text }) = self.items.last_mut() {
            text.push_str(delta);
            self.touch(self.items.len() - 1);
        } else {
            self.push(Item::Reasoning {
                text: delta.to_string(),
            });
        }
    }

    /// Records a tool's result on its call (`ok: None` for stored results, whose success is unknown).
    pub fn tool_result(&mut self, call_id: &str, ok: Option<bool>, content: &str) {
        for (i, item) in self.items.iter_mut().enumerate().rev() {
            if let Item::Tool {
                id,
                ok: slot,
                output_lines,
                output,
                ..
            } = item
            {
                if id == call_id {
                    *slot = ok.or(Some(true));
                    *output_lines = content.lines().count();
                    *output = head(content, OUTPUT_KEPT);
                    self.touch(i);
                    return;
                }
            }
        }
    }

    /// Counts files captured for the newest user item of `turn`.
    pub fn captured(&mut self, turn: u64, paths: usize) {
        for (i, item) in self.items.iter_mut().enumerate().rev() {
            if let Item::User {
                turn: Some(t),
                captured,
                ..
            } = item
            {
                if *t == turn {
                    *captured += paths;
                    self.touch(i);
                    return;
                }
            }
        }
    }
}
