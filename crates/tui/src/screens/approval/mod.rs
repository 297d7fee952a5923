//! The approval box: a shell command waiting for an answer (`bash = "ask"`), on top of every other
//! screen. Keys typed ahead never answer it: until its box has been on the screen for
//! [`APPROVAL_GUARD`] (and while keys keep coming), what is typed goes to the input. A command
//! must have been seen whole before it can be allowed. How the box looks is in `layout`.

mod layout;

use std::time::{Duration, Instant};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use retrace_protocol::ApprovalDecision;

use crate::app::App;
use crate::effect::Effect;
use crate::screens::{ctrl, Screen};
use crate::view::Theme;
pub(crate) use layout::draw;

/// An approval takes no answer until its box has been on the screen this long, and not until
/// this long after the last key it held back: keys typed ahead for the input never answer it.
pub const APPROVAL_GUARD: Duration = Duration::from_millis(500);

/// A shell command waiting for an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    /// The tool call.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The command line.
    pub command: String,
    /// What running it means for rewinds, as the controller words it.
    pub note: Option<String>,
    /// Word prefixes that may be allowed for the session instead of the exact command.
    pub prefixes: Vec<String>,
}

/// One choice of an approval box: its answer, the prefix it allows (for a session rule), its
/// label and its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The answer.
    pub decision: ApprovalDecision,
    /// With `Session`: the words it allows commands to start with (else the exact command).
    pub prefix: Option<String>,
    /// What the button says.
    pub label: String,
    /// The key that picks it.
    pub key: char,
}

/// What an approval asks about: it words the box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asks {
    /// A shell command (allowed for the session: the exact command, or a prefix).
    Shell,
    /// A call of an MCP tool (allowed for the session: every call of the tool).
    McpTool,
    /// A request for an MCP server's resources (allowed for the session: the same request).
    McpResources,
}

impl Approval {
    /// What it asks about.
    pub(crate) fn asks(&self) -> Asks {
        match self.tool.as_str() {
            t if t.starts_with("mcp__") => Asks::McpTool,
            "list_mcp_resources" | "read_mcp_resource" => Asks::McpResources,
            _ => Asks::Shell,
        }
    }

    /// The box's choices in their order on the screen (←/→ move between them): once, this
    /// command for the session, each offered prefix for the session, deny.
    pub fn choices(&self) -> Vec<Choice> {
        let mut out = vec![
            Choice {
                decision: ApprovalDecision::Once,
                prefix: None,
                label: "Allow once".into(),
                key: 'y',
            },
            Choice {
                decision: ApprovalDecision::Session,
                prefix: None,
                label: match self.asks() {
                    Asks::McpTool => "Allow this tool for the session (any input)".into(),
                    Asks::McpResources => "Allow this exact request for the session".into(),
                    Asks::Shell => "Allow this exact command for the session".into(),
                },
                key: 'a',
            },
        ];
        for p in self.prefixes.iter().take(1) {
            out.push(Choice {
                decision: ApprovalDecision::Session,
                prefix: Some(p.clone()),
                label: prefix_label(&format!("{} …", crate::escape::line(p))),
                key: 'p',
            });
        }
        out.push(Choice {
            decision: ApprovalDecision::Deny,
            prefix: None,
            label: "Deny".into(),
            key: 'n',
        });
        out
    }
}

/// The label of the choice that allows every simple command starting with a prefix: `words` is
/// the prefix, escaped, and " …".
pub(crate) fn prefix_label(words: &str) -> String {
    format!("Allow `{words}` for the session")
}

/// The approvals waiting and the state of the box that shows the first one.
#[derive(Debug, Clone, Default)]
pub(crate) struct Approvals {
    /// Oldest first; the box shows the first.
    pub(crate) waiting: Vec<Approval>,
    /// How far the first approval's command is scrolled.
    pub(crate) scroll: usize,
    /// Why a key in the box did nothing (shown in the box, gone with the approval).
    pub(crate) hint: Option<String>,
    /// The first approval's call and when its box was first drawn (see [`App::on_drawn`]).
    pub(crate) shown: Option<(String, Instant)>,
    /// When the box last held back a key (typing ahead goes to the input).
    pub(crate) typed: Option<Instant>,
    /// The highlighted choice (an index into the first approval's [`Approval::choices`]), if any.
    pub(crate) choice: Option<usize>,
}

impl Approvals {
    /// Whether none waits.
    pub(crate) fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// Forgets every waiting approval (a turn ended, another session opened).
    pub(crate) fn clear(&mut self) {
        self.waiting.clear();
    }

    /// An approval was asked for (again, when its event comes again after a snapshot: once).
    pub(crate) fn request(&mut self, approval: Approval) {
        if self.waiting.iter().any(|a| a.call_id == approval.call_id) {
            return;
        }
        if self.waiting.is_empty() {
            // A new box, though its call id may repeat one answered before (some servers
            // number calls per response): its guard starts when it is drawn.
            self.shown = None;
            self.choice = None;
        }
        self.waiting.push(approval);
    }

    /// The approvals a snapshot says wait: those no longer waiting go, the others stay as they
    /// are (their box keeps its scroll and guard), new ones are added.
    pub(crate) fn sync(&mut self, pending: Vec<Approval>) {
        self.waiting
            .retain(|a| pending.iter().any(|p| p.call_id == a.call_id));
        for p in pending {
            self.request(p);
        }
    }

    /// The approval of `call_id` was answered (here or elsewhere).
    pub(crate) fn resolved(&mut self, call_id: &str) {
        self.waiting.retain(|a| a.call_id != call_id);
    }
}

impl App {
    /// The approvals waiting, oldest first.
    pub fn approvals(&self) -> &[Approval] {
        &self.approvals.waiting
    }

    /// How far the first approval's command is scrolled.
    pub fn approval_scroll(&self) -> usize {
        self.approvals.scroll
    }

    /// Why the last key in the approval box did nothing, if it did nothing.
    pub fn approval_hint(&self) -> Option<&str> {
        self.approvals.hint.as_deref()
    }

    /// The highlighted choice of the approval box, if one is.
    pub fn approval_choice(&self) -> Option<usize> {
        self.approvals.choice
    }

    /// Whether the approval box takes an answer from a key pressed at `now`: its box has been
    /// drawn for [`APPROVAL_GUARD`], and no key was held back within it.
    pub fn approval_ready(&self, now: Instant) -> bool {
        let a = &self.approvals;
        let first = a.waiting.first().map(|a| a.call_id.as_str());
        let shown = matches!(&a.shown, Some((id, at))
            if Some(id.as_str()) == first && now.saturating_duration_since(*at) >= APPROVAL_GUARD);
        shown
            && a.typed
                .is_none_or(|t| now.saturating_duration_since(t) >= APPROVAL_GUARD)
    }

    /// A frame was drawn at `now`: the approval box on it (if any, and readable) starts its guard
    /// time. The runtime calls this after each draw; tests call it to say what was seen when.
    pub fn on_drawn(&mut self, now: Instant) {
        let Some(first) = self.approvals.waiting.first() else {
            self.approvals.shown = None;
            return;
        };
        if self.screen() != Screen::Approval || self.too_small() {
            return;
        }
        if self
            .approvals
            .shown
            .as_ref()
            .is_none_or(|(id, _)| *id != first.call_id)
        {
            self.approvals.shown = Some((first.call_id.clone(), now));
            self.approvals.choice = None;
        }
    }

    /// How many lines of the first approval's command are below what shows.
    fn approval_below(&self) -> (usize, usize) {
        let Some(a) = self.approvals.waiting.first() else {
            return (0, 0);
        };
        let (w, h) = (self.viewport.0, crate::view::overlay_height(self, self.viewport));
        let (body, shown) = layout::approval_layout(a, None, w, h, Theme::new(true));
        let max_scroll = body.len().saturating_sub(shown);
        (max_scroll.saturating_sub(self.approvals.scroll), max_scroll)
    }

    /// Scrolls the first approval's command; false if `code` is no scrolling key.
    pub(crate) fn approval_scroll_key(&mut self, code: KeyCode) -> bool {
        let (_, max_scroll) = self.approval_below();
        let page = usize::from(self.viewport.1.saturating_sub(8)).max(1);
        let a = &mut self.approvals;
        a.scroll = match code {
            KeyCode::Down => (a.scroll + 1).min(max_scroll),
            KeyCode::PageDown => (a.scroll + page).min(max_scroll),
            KeyCode::Up => a.scroll.saturating_sub(1),
            KeyCode::PageUp => a.scroll.saturating_sub(page),
            _ => return false,
        };
        // A refusal to allow an unread command is stale once the box moved.
        a.hint = None;
        true
    }

    /// A key in the approval box at `now`. Until the box has been seen for [`APPROVAL_GUARD`]
    /// (and for as long as keys keep coming within it), no key answers it: what is typed goes to
    /// the input, where it was meant to go. After that a choice is made with a key (`y`, `a`,
    /// `n`, Esc) or by highlighting one (←/→, Tab) and pressing Enter.
    pub(crate) fn approval_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Effect> {
        if ctrl(&key, 'c') {
            return vec![Effect::Cancel];
        }
        if self.approval_scroll_key(key.code) {
            return Vec::new();
        }
        let choices = self
            .approvals
            .waiting
            .first()
            .map(Approval::choices)
            .unwrap_or_default();
        if let KeyCode::Left | KeyCode::Right | KeyCode::Tab | KeyCode::BackTab = key.code {
            // Moving the highlight chooses nothing, so it needs no guard.
            let n = choices.len().max(1);
            let back = matches!(key.code, KeyCode::Left | KeyCode::BackTab);
            self.approvals.choice = Some(match (self.approvals.choice, back) {
                (None, false) => 0,
                (None, true) => n - 1,
                (Some(i), false) => (i + 1) % n,
                (Some(i), true) => (i + n - 1) % n,
            });
            return Vec::new();
        }
        let ready = self.approval_ready(now);
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let command_key =
            ready && plain && matches!(key.code, KeyCode::Char(c) if choices.iter().any(|ch| ch.key == c));
        if !ready || (!command_key && !matches!(key.code, KeyCode::Enter | KeyCode::Esc)) {
            // Typed ahead (or typing on): the text goes to the input; the guard starts again.
            match key.code {
                KeyCode::Char(c) if plain => self.input.insert(c),
                KeyCode::Backspace => self.input.backspace(),
                _ => {}
            }
            self.approvals.typed = Some(now);
            self.approvals.hint = Some("typing went to the input · then ← → Enter, or y / a / n".into());
            return Vec::new();
        }
        let (below, _) = self.approval_below();
        let deny = choices
            .iter()
            .find(|c| c.decision == ApprovalDecision::Deny)
            .cloned();
        let picked = match key.code {
            KeyCode::Esc => deny,
            KeyCode::Char(c) => choices.iter().find(|ch| ch.key == c).cloned(),
            KeyCode::Enter => match self.approvals.choice {
                Some(i) => choices.get(i).cloned(),
                None => {
                    self.approvals.hint = Some("choose with ← → first, or press y, a or n".into());
                    return Vec::new();
                }
            },
            _ => None,
        };
        let Some(Choice { decision, prefix, .. }) = picked else {
            return Vec::new();
        };
        if decision != ApprovalDecision::Deny && (below > 0 || self.too_small()) {
            self.approvals.hint = Some(if self.too_small() {
                "make the terminal larger to read the whole command".to_string()
            } else {
                "read the whole command first".to_string()
            });
            return Vec::new();
        }
        if self.approvals.is_empty() {
            return Vec::new();
        }
        let a = &mut self.approvals;
        a.scroll = 0;
        a.hint = None;
        a.choice = None;
        a.typed = None;
        a.shown = None;
        let first = a.waiting.remove(0);
        match prefix {
            Some(prefix) => vec![Effect::AllowPrefix {
                call_id: first.call_id,
                prefix,
            }],
            None => vec![Effect::Approve {
                call_id: first.call_id,
                decision,
            }],
        }
    }
}
