//! The chat transcript: the session's items (the controller's view, `retrace_control::ItemList`:
//! a snapshot's items, then changed by the events numbered after it) as the entries the chat
//! draws, and the lines only this UI says (a notice, an error, a summary being written).
//!
//! Each item becomes one or more entries: a prompt, a checkpoint, a tool call, a note are one
//! each; an answer is its reasoning, then its text in pieces (a long answer is cut after a line
//! break once a piece passes [`STREAM_PIECE`] bytes, so that a frame wraps again only the piece
//! that grows while it streams). The UI's own lines are placed after the item that was last when
//! they came, and kept while that item is. What a restore, an undo or a redo did
//! ([`Entry::Restore`]) is placed once the items it left are shown: after the last of them, on
//! the head it left selected, and shown whenever that head is (the note the session keeps of a
//! code restore, which says the same, then gives it its place: the note is not shown twice).
//!
//! Each entry carries a revision: a number taken from one process-wide counter whenever the entry
//! is added or changed. The view keeps every entry's wrapped rows keyed by it, so a revision must
//! never come back for other content: the counter only goes up, and it is shared by every
//! transcript, so a transcript that replaces another (a reload) has none of its numbers.

use std::sync::atomic::{AtomicU64, Ordering};

use retrace_control::{Applied, ItemList};
use retrace_protocol::{CheckpointItem, Event, Item, ItemBody, NoteKind, ToolCallItem, ToolStatus};

/// One thing drawn in the chat.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// The prompt that opened a turn.
    Prompt {
        /// The prompt.
        text: String,
    },
    /// A turn's checkpoint.
    Checkpoint {
        /// The turn.
        turn: u64,
        /// What it holds.
        checkpoint: CheckpointItem,
    },
    /// The model's reasoning before an answer, shown dimmed and folded.
    Reasoning {
        /// The text.
        text: String,
    },
    /// A piece of an answer (the whole answer when it is short; empty while none has streamed).
    Text {
        /// The text.
        text: String,
    },
    /// A tool call.
    Tool {
        /// The call as the controller shows it.
        call: Box<ToolCallItem>,
        /// The spinner's frame while it runs.
        frame: usize,
    },
    /// A note of the conversation (a restore, a compaction), in full.
    Note {
        /// The text.
        text: String,
    },
    /// Something this UI was told that the conversation does not keep (a retried request).
    Notice {
        /// The text.
        text: String,
    },
    /// What a restore, an undo or a redo did ("restored code to before turn 1: 1 file written"):
    /// it stays in the transcript (and the scrollback printed on quitting), at the end of the
    /// conversation shown after it, whichever head that is.
    Restore {
        /// The text.
        text: String,
    },
    /// What `/status` found: lines of a label and its value.
    Info {
        /// The rows, label then value.
        rows: Vec<(String, String)>,
    },
    /// An error this UI was told (a failed turn).
    Error {
        /// The text.
        text: String,
    },
}

/// The size after which an answer continues in a new entry (see the module documentation).
pub const STREAM_PIECE: usize = 8 * 1024;

/// What an entry shows.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    /// A part of the item with this id.
    Item(String),
    /// The UI's own line with this number.
    Local(u64),
}

/// An entry as the transcript holds it.
#[derive(Debug, Clone)]
pub struct Shown {
    /// What is drawn.
    pub entry: Entry,
    /// Changes whenever `entry` does (module documentation).
    pub revision: u64,
    source: Source,
}

/// A line of the UI's own, after the item `anchor` (`None`: before every item).
#[derive(Debug, Clone)]
struct Local {
    number: u64,
    anchor: Option<String>,
    /// The head it belongs to (a restore's line): shown only on it, kept while another is.
    /// `None`: any head, the line going with its anchor.
    head: Option<String>,
    /// A restore's line waiting for the snapshot of its head: shown last until then.
    waiting: bool,
    entry: Entry,
}

impl Local {
    /// Whether it shows with the items of `head` (ids `ids`) in its place after its anchor.
    fn placed(&self, head: Option<&str>, ids: &std::collections::HashSet<&str>) -> bool {
        !self.waiting
            && (self.head.is_none() || self.head.as_deref() == head)
            && self.anchor.as_deref().is_none_or(|a| ids.contains(a))
    }
}

/// The transcript: the session's items and the UI's lines, as entries oldest first.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    list: ItemList,
    /// The head whose items are shown, when known.
    head: Option<String>,
    locals: Vec<Local>,
    next_local: u64,
    shown: Vec<Shown>,
    /// The spinner's frame, given to running tool calls.
    frame: usize,
}

/// The next revision; never 0, never the same twice in a process.
fn next_revision() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The pieces of an answer, each drawn as markdown on its own, so each ends where the text can be
/// cut without changing how it draws: after a blank line at or after [`STREAM_PIECE`] bytes,
/// once the next block has begun (its first character is not a space: no indented continuation)
/// and outside a fenced code block; a piece that found no such place by four times that size ends
/// at the first line break outside a fence. A cut depends only on the text before it and the
/// character after it, so text appended later never moves an earlier cut. The last piece holds
/// the rest.
fn pieces(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let cut = cut_of(rest).unwrap_or(rest.len());
        let (piece, after) = rest.split_at(cut);
        out.push(piece);
        rest = after;
    }
    out
}

/// Where the first piece of `text` ends (see [`pieces`]), if it ends before the text does.
fn cut_of(text: &str) -> Option<usize> {
    let mut fence: Option<(u8, usize)> = None; // the open fence's character and length
    let mut start = 0; // the current line's first byte
    while let Some(len) = text[start..].find('\n') {
        let line = &text[start..start + len];
        let end = start + len + 1;
        let trimmed = line.trim_start();
        let marks = |c: u8| trimmed.bytes().take_while(|&b| b == c).count();
        match fence {
            None => {
                for c in [b'`', b'~'] {
                    if marks(c) >= 3 {
                        fence = Some((c, marks(c)));
                    }
                }
            }
            Some((c, n)) => {
                if marks(c) >= n && trimmed.trim_end().bytes().all(|b| b == c) {
                    fence = None;
                }
            }
        }
        let is_blank = line.trim().is_empty();
        if fence.is_none() && end >= STREAM_PIECE {
            let next = text.as_bytes().get(end);
            if is_blank && next.is_some_and(|b| !b.is_ascii_whitespace()) {
                return Some(end);
            }
            if end >= 4 * STREAM_PIECE && next.is_some() {
                return Some(end);
            }
        }
        start = end;
    }
    None
}

/// Whether `item` is the note a code restore (or its undo or redo) left for the model, and one of
/// the lines after it (`after`) says what that restore did: the note is then not shown, the line
/// says it.
fn restore_said_after<'a>(item: &Item, mut after: impl Iterator<Item = &'a Entry>) -> bool {
    matches!(&item.body, ItemBody::Note(n) if n.note == NoteKind::Restore)
        && after.any(|e| matches!(e, Entry::Restore { .. }))
}

/// The entries of one item (always at least one, so that every item has a place, unless a line
/// after it says it: [`restore_said_after`]).
fn entries_of(item: &Item, frame: usize) -> Vec<Entry> {
    match &item.body {
        ItemBody::UserPrompt { text } => vec![Entry::Prompt { text: text.clone() }],
        ItemBody::Checkpoint(c) => vec![Entry::Checkpoint {
            turn: item.turn.unwrap_or_default(),
            checkpoint: c.clone(),
        }],
        ItemBody::AssistantText { text, reasoning } => {
            let mut out = Vec::new();
            if let Some(r) = reasoning.as_deref().filter(|r| !r.is_empty()) {
                out.push(Entry::Reasoning { text: r.to_string() });
            }
            out.extend(
                pieces(text)
                    .into_iter()
                    .map(|p| Entry::Text { text: p.to_string() }),
            );
            if out.is_empty() {
                out.push(Entry::Text { text: String::new() });
            }
            out
        }
        ItemBody::ToolCall(call) => vec![Entry::Tool {
            call: call.clone(),
            frame: if call.status == ToolStatus::Running {
                frame
            } else {
                0
            },
        }],
        ItemBody::Note(n) => vec![Entry::Note { text: n.text.clone() }],
    }
}

impl Transcript {
    /// A transcript of a snapshot's items.
    pub fn from_items(items: Vec<Item>) -> Transcript {
        let mut t = Transcript::default();
        t.reset(items);
        t
    }

    /// The session's items, in order.
    pub fn items(&self) -> &[Item] {
        self.list.items()
    }

    /// What the chat draws, oldest first.
    pub fn entries(&self) -> &[Shown] {
        &self.shown
    }

    /// Shows a snapshot's items in place of the items shown (the head's, when `head` is given;
    /// else the head shown stays). The UI's own lines stay after the items they followed, when
    /// those are still shown; the others go, except what a restore did ([`Entry::Restore`]),
    /// kept for its head: a line waiting for its head's items is placed after the last of them.
    pub fn reset_on(&mut self, items: Vec<Item>, head: Option<&str>) {
        self.list = ItemList::new(items);
        if let Some(head) = head {
            self.head = Some(head.to_string());
        }
        let ids: std::collections::HashSet<&str> = self.list.items().iter().map(|i| i.id.as_str()).collect();
        let last = self.list.items().last().map(|i| i.id.clone());
        let shown_head = self.head.as_deref();
        for l in &mut self.locals {
            if l.waiting && l.head.as_deref() == shown_head && shown_head.is_some() {
                l.anchor = last.clone();
                l.waiting = false;
            }
        }
        self.locals
            .retain(|l| l.head.is_some() || l.anchor.as_deref().is_none_or(|a| ids.contains(a)));
        self.shown.clear();
        let frame = self.frame;
        let push = |shown: &mut Vec<Shown>, source: Source, entry: Entry| {
            shown.push(Shown {
                entry,
                revision: next_revision(),
                source,
            });
        };
        let placed: Vec<&Local> = self
            .locals
            .iter()
            .filter(|l| l.placed(shown_head, &ids))
            .collect();
        for l in placed.iter().filter(|l| l.anchor.is_none()) {
            push(&mut self.shown, Source::Local(l.number), l.entry.clone());
        }
        for item in self.list.items() {
            let after: Vec<&&Local> = placed
                .iter()
                .filter(|l| l.anchor.as_deref() == Some(&item.id))
                .collect();
            if !restore_said_after(item, after.iter().map(|l| &l.entry)) {
                for entry in entries_of(item, frame) {
                    push(&mut self.shown, Source::Item(item.id.clone()), entry);
                }
            }
            for l in after {
                push(&mut self.shown, Source::Local(l.number), l.entry.clone());
            }
        }
        for l in self.locals.iter().filter(|l| l.waiting) {
            push(&mut self.shown, Source::Local(l.number), l.entry.clone());
        }
    }

    /// [`Transcript::reset_on`] the head shown.
    pub fn reset(&mut self, items: Vec<Item>) {
        self.reset_on(items, None);
    }

    /// Forgets everything (another session is shown).
    pub fn clear(&mut self) {
        self.locals.clear();
        self.head = None;
        self.reset(Vec::new());
    }

    /// Applies an event numbered after the items shown; [`Applied::Reload`] asks for a new
    /// snapshot.
    pub fn apply(&mut self, event: &Event) -> Applied {
        let applied = self.list.apply(event);
        match &applied {
            Applied::Item(id) => self.refresh(id),
            Applied::Removed(id) => self.removed(id),
            Applied::Reload | Applied::Nothing => {}
        }
        applied
    }

    /// Adds a line of the UI's own after the last item.
    pub fn push_local(&mut self, entry: Entry) {
        let number = self.next_local;
        self.next_local += 1;
        self.locals.push(Local {
            number,
            anchor: self.list.items().last().map(|i| i.id.clone()),
            head: None,
            waiting: false,
            entry: entry.clone(),
        });
        self.shown.push(Shown {
            entry,
            revision: next_revision(),
            source: Source::Local(number),
        });
    }

    /// Adds what a restore, an undo or a redo did, which left head `head` selected: shown last
    /// until the next snapshot of that head, then after the last of its items, on that head.
    pub fn push_restore(&mut self, text: String, head: &str) {
        let number = self.next_local;
        self.next_local += 1;
        let entry = Entry::Restore { text };
        self.locals.push(Local {
            number,
            anchor: None,
            head: Some(head.to_string()),
            waiting: true,
            entry: entry.clone(),
        });
        self.shown.push(Shown {
            entry,
            revision: next_revision(),
            source: Source::Local(number),
        });
    }

    /// The spinner moved: running tool calls show its frame.
    pub fn tick(&mut self, frame: usize) {
        self.frame = frame;
        // Running calls are in the newest turn: after its prompt.
        for s in self.shown.iter_mut().rev() {
            match &mut s.entry {
                Entry::Prompt { .. } => break,
                Entry::Tool { call, frame: f } if call.status == ToolStatus::Running && *f != frame => {
                    *f = frame;
                    s.revision = next_revision();
                }
                _ => {}
            }
        }
    }

    /// The entries of item `id`: where they start and end (`None` when it has none shown).
    fn span_of(&self, id: &str) -> Option<(usize, usize)> {
        let is = |s: &Shown| matches!(&s.source, Source::Item(i) if i == id);
        let last = self.shown.iter().rposition(is)?;
        let first = self.shown[..last]
            .iter()
            .rposition(|s| !is(s))
            .map_or(0, |i| i + 1);
        Some((first, last + 1))
    }

    /// Item `id` was added or changed: its entries are made again, each keeping its revision
    /// when it did not change. A new item goes at the end, as in the list.
    fn refresh(&mut self, id: &str) {
        let Some(item) = self.list.get(id) else { return };
        let ids = std::collections::HashSet::from([id]);
        let after = self
            .locals
            .iter()
            .filter(|l| l.anchor.as_deref() == Some(id) && l.placed(self.head.as_deref(), &ids))
            .map(|l| &l.entry);
        let fresh = match restore_said_after(item, after) {
            true => Vec::new(),
            false => entries_of(item, self.frame),
        };
        let (start, end) = self.span_of(id).unwrap_or((self.shown.len(), self.shown.len()));
        let old: Vec<Shown> = self.shown.drain(start..end).collect();
        let made: Vec<Shown> = fresh
            .into_iter()
            .enumerate()
            .map(|(k, entry)| {
                let revision = match old.get(k) {
                    Some(o) if o.entry == entry => o.revision,
                    _ => next_revision(),
                };
                Shown {
                    entry,
                    revision,
                    source: Source::Item(id.to_string()),
                }
            })
            .collect();
        self.shown.splice(start..start, made);
    }

    /// Item `id` was removed: its entries go; the UI's lines after it now follow the item before.
    fn removed(&mut self, id: &str) {
        let Some((start, end)) = self.span_of(id) else {
            return;
        };
        self.shown.drain(start..end);
        let before = self.shown[..start].iter().rev().find_map(|s| match &s.source {
            Source::Item(i) => Some(i.clone()),
            Source::Local(_) => None,
        });
        for l in &mut self.locals {
            if l.anchor.as_deref() == Some(id) {
                l.anchor = before.clone();
            }
        }
    }
}

#[cfg(test)]
#[path = "transcript_tests.rs"]
mod tests;
