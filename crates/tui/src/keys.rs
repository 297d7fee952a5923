//! What each key does, screen by screen (SPEC §9.1). The time a key arrived is passed in, so the
//! double-Esc and double-Ctrl-C windows are deterministic in tests.

use std::time::Instant;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};
use retrace_protocol::{
    ApprovalDecision, ForkRequest, OnConflict, PrepareRewind, SummarizeDirection, SummarizeRequest,
    SwitchRequest, UndoRequest,
};

use crate::app::{App, Awaiting, Mode, Screen, DOUBLE_CTRL_C, DOUBLE_ESC};
use crate::command::{self, Command};
use crate::effect::Effect;
use crate::escape;
use crate::rewind::{Action, Menu, Purpose};

/// Transcript rows one notch of the mouse wheel scrolls.
const WHEEL_ROWS: usize = 3;

fn ctrl(key: &KeyEvent, c: char) -> bool {
    key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char(c)
}

impl App {
    /// A key pressed at `now`. Returns the requests it makes.
    pub fn on_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Effect> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        match self.screen() {
            Screen::Chat => self.chat_key(key, now),
            Screen::Approval => self.approval_key(key, now),
            _ => self.overlay_key(key),
        }
    }

    /// A key on a screen above the chat (none of them depends on when it came).
    fn overlay_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let choosing = matches!(self.screen(), Screen::Picker | Screen::Menu | Screen::Preview);
        if choosing && self.too_small() && key.code != KeyCode::Esc {
            // Nothing is chosen on a screen too small to show the choice.
            return Vec::new();
        }
        match self.screen() {
            Screen::Chat => Vec::new(),
            Screen::Approval => {
                self.approval_scroll_key(key.code);
                Vec::new()
            }
            Screen::Picker => self.picker_key(key),
            Screen::Menu => self.menu_key(key),
            Screen::Preview => self.preview_key(key),
            Screen::Heads => self.heads_key(key),
            Screen::Sessions => self.sessions_key(key),
            Screen::Help => {
                let help_rows = self.overlay_limit.get();
                let Mode::Help(scroll) = &mut self.mode else {
                    return Vec::new();
                };
                match key.code {
                    KeyCode::Up | KeyCode::Char('k') => *scroll = scroll.saturating_sub(1),
                    KeyCode::Down | KeyCode::Char('j') => *scroll = (*scroll + 1).min(help_rows),
                    KeyCode::PageUp => *scroll = scroll.saturating_sub(10),
                    KeyCode::PageDown | KeyCode::Char(' ') => *scroll = (*scroll + 10).min(help_rows),
                    _ => {
                        if matches!(key.code, KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q'))
                            || ctrl(&key, 'c')
                        {
                            self.mode = Mode::Chat;
                        }
                    }
                }
                Vec::new()
            }
        }
    }

    /// A mouse report: the wheel scrolls the transcript, or moves through a list like Up/Down;
    /// nothing else of the mouse does anything (a click chooses nothing).
    pub fn on_mouse(&mut self, kind: MouseEventKind) -> Vec<Effect> {
        let up = match kind {
            MouseEventKind::ScrollUp => true,
            MouseEventKind::ScrollDown => false,
            _ => return Vec::new(),
        };
        match self.screen() {
            Screen::Chat => {
                self.scroll_by(WHEEL_ROWS, up);
                Vec::new()
            }
            Screen::Approval
            | Screen::Picker
            | Screen::Menu
            | Screen::Preview
            | Screen::Heads
            | Screen::Sessions
            | Screen::Help => {
                let code = if up { KeyCode::Up } else { KeyCode::Down };
                self.overlay_key(KeyEvent::new(code, KeyModifiers::NONE))
            }
        }
    }

    /// Pasted text (bracketed paste): typed into the input as it is, line breaks kept, so a
    /// pasted newline never sends a half prompt. Pasted under an approval box, it goes to the input too (it never answers the box).
    pub fn on_paste(&mut self, text: &str) {
        if !matches!(self.screen(), Screen::Chat | Screen::Approval) {
            return;
        }
        self.input
            .insert_str(&text.replace("\r\n", "\n").replace('\r', "\n"));
    }

    /// How many lines of the first approval's command are below what shows.
    fn approval_below(&self) -> (usize, usize) {
        let Some(a) = self.approvals.first() else {
            return (0, 0);
        };
        let (w, h) = self.viewport;
        let (body, shown) =
            crate::view::overlay::approval_layout(a, None, w, h, crate::view::Theme::new(true));
        let max_scroll = body.len().saturating_sub(shown);
        (max_scroll.saturating_sub(self.approval_scroll), max_scroll)
    }

    /// Scrolls the first approval's command; false if `code` is no scrolling key.
    fn approval_scroll_key(&mut self, code: KeyCode) -> bool {
        let (_, max_scroll) = self.approval_below();
        let page = usize::from(self.viewport.1.saturating_sub(8)).max(1);
        self.approval_scroll = match code {
            KeyCode::Down => (self.approval_scroll + 1).min(max_scroll),
            KeyCode::PageDown => (self.approval_scroll + page).min(max_scroll),
            KeyCode::Up => self.approval_scroll.saturating_sub(1),
            KeyCode::PageUp => self.approval_scroll.saturating_sub(page),
            _ => return false,
        };
        // A refusal to allow an unread command is stale once the box moved.
        self.approval_hint = None;
        true
    }

    /// A key in the approval box at `now`. Until the box has been seen for [`APPROVAL_GUARD`]
    /// (and for as long as keys keep coming within it), no key answers it: what is typed goes to
    /// the input, where it was meant to go. After that a choice is made with a key (`y`, `a`,
    /// `n`, Esc) or by highlighting one (←/→, Tab) and pressing Enter.
    ///
    /// [`APPROVAL_GUARD`]: crate::app::APPROVAL_GUARD
    fn approval_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Effect> {
        if ctrl(&key, 'c') {
            return vec![Effect::Cancel];
        }
        if self.approval_scroll_key(key.code) {
            return Vec::new();
        }
        if let KeyCode::Left | KeyCode::Right | KeyCode::Tab | KeyCode::BackTab = key.code {
            // Moving the highlight chooses nothing, so it needs no guard.
            let n = crate::view::overlay::APPROVAL_CHOICES.len();
            let back = matches!(key.code, KeyCode::Left | KeyCode::BackTab);
            self.approval_choice = Some(match (self.approval_choice, back) {
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
        let command_key = ready && plain && matches!(key.code, KeyCode::Char('y' | 'a' | 'n'));
        if !ready || (!command_key && !matches!(key.code, KeyCode::Enter | KeyCode::Esc)) {
            // Typed ahead (or typing on): the text goes to the input; the guard starts again.
            match key.code {
                KeyCode::Char(c) if plain => self.input.insert(c),
                KeyCode::Backspace => self.input.backspace(),
                _ => {}
            }
            self.approval_typed = Some(now);
            self.approval_hint = Some("typing went to the input · then ← → Enter, or y / a / n".into());
            return Vec::new();
        }
        let (below, _) = self.approval_below();
        let decision = match key.code {
            KeyCode::Char('y') => ApprovalDecision::Once,
            KeyCode::Char('a') => ApprovalDecision::Session,
            KeyCode::Char('n') | KeyCode::Esc => ApprovalDecision::Deny,
            KeyCode::Enter => match self.approval_choice {
                Some(i) => crate::view::overlay::APPROVAL_CHOICES[i].0,
                None => {
                    self.approval_hint = Some("choose with ← → first, or press y, a or n".into());
                    return Vec::new();
                }
            },
            _ => return Vec::new(),
        };
        if decision != ApprovalDecision::Deny && (below > 0 || self.too_small()) {
            self.approval_hint = Some(if self.too_small() {
                "make the terminal larger to read the whole command".to_string()
            } else {
                "read the whole command first".to_string()
            });
            return Vec::new();
        }
        if self.approvals.is_empty() {
            return Vec::new();
        }
        self.approval_scroll = 0;
        self.approval_hint = None;
        self.approval_choice = None;
        self.approval_typed = None;
        self.approval_shown = None;
        let a = self.approvals.remove(0);
        vec![Effect::Approve {
            call_id: a.call_id,
            decision,
        }]
    }

    fn chat_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Effect> {
        let esc = key.code == KeyCode::Esc;
        let last_esc = if esc { self.last_esc.take() } else { None };
        if !esc {
            self.last_esc = None;
        }
        let is_ctrl_c = ctrl(&key, 'c');
        let last_ctrl_c = if is_ctrl_c { self.last_ctrl_c.take() } else { None };
        if !is_ctrl_c {
            self.last_ctrl_c = None;
        }
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Esc => {
                // A draft is cleared first, even while a turn runs: the key that cancels a turn
                // (and kills its shell) must not also be the one that clears text.
                if !self.input.is_empty() {
                    self.input.clear();
                    return Vec::new();
                }
                if self.status.running {
                    return vec![Effect::Cancel];
                }
                if last_esc.is_some_and(|t| now.saturating_duration_since(t) <= DOUBLE_ESC) {
                    return self.open_picker(Purpose::Rewind);
                }
                self.last_esc = Some(now);
                Vec::new()
            }
            _ if is_ctrl_c => {
                if self.status.running {
                    return vec![Effect::Cancel];
                }
                if !self.input.is_empty() {
                    self.input.clear();
                    return Vec::new();
                }
                if last_ctrl_c.is_some_and(|t| now.saturating_duration_since(t) <= DOUBLE_CTRL_C) {
                    return self.quit();
                }
                self.last_ctrl_c = Some(now);
                self.message = Some("press Ctrl-C again to quit".to_string());
                Vec::new()
            }
            _ if ctrl(&key, 'd') => {
                if self.input.is_empty() {
                    return self.quit();
                }
                self.input.delete();
                Vec::new()
            }
            _ if ctrl(&key, 'j') => {
                self.input.insert('\n');
                Vec::new()
            }
            _ if ctrl(&key, 'o') => {
                self.details = !self.details;
                self.view_generation += 1; // every item renders differently now
                self.scroll = 0;
                Vec::new()
            }
            KeyCode::Enter if alt || shift => {
                self.input.insert('\n');
                Vec::new()
            }
            KeyCode::Enter => self.submit(),
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.input.insert(c);
                Vec::new()
            }
            KeyCode::Tab => {
                self.complete();
                Vec::new()
            }
            KeyCode::BackTab => self.set_plan_mode(None),
            KeyCode::Backspace => {
                self.input.backspace();
                Vec::new()
            }
            KeyCode::Delete => {
                self.input.delete();
                Vec::new()
            }
            KeyCode::Left => {
                self.input.left();
                Vec::new()
            }
            KeyCode::Right => {
                self.input.right();
                Vec::new()
            }
            KeyCode::Home => {
                self.input.home();
                Vec::new()
            }
            KeyCode::End => {
                self.input.end();
                Vec::new()
            }
            KeyCode::Up if self.input.browsing_history() => {
                self.input.history_prev();
                Vec::new()
            }
            KeyCode::Down if self.input.browsing_history() => {
                self.input.history_next();
                Vec::new()
            }
            KeyCode::Up => {
                self.input.up();
                Vec::new()
            }
            KeyCode::Down => {
                self.input.down();
                Vec::new()
            }
            KeyCode::PageUp | KeyCode::PageDown => {
                // A page is the chat's height less two rows kept for context.
                let page = usize::from(self.viewport.1.saturating_sub(8)).max(1);
                self.scroll_by(page, key.code == KeyCode::PageUp);
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn quit(&mut self) -> Vec<Effect> {
        self.quit = true;
        vec![Effect::Quit]
    }

    /// Whether a request whose answer the UI waits for is in flight: another one must wait, or
    /// its answer would be taken for the first one's.
    fn waiting(&mut self) -> bool {
        if self.awaiting.is_some() {
            self.message = Some("wait: the last request has not been answered yet".to_string());
            return true;
        }
        false
    }

    fn open_picker(&mut self, purpose: Purpose) -> Vec<Effect> {
        if self.waiting() {
            return Vec::new();
        }
        if self.status.running {
            self.message = Some(
                match purpose {
                    Purpose::Rewind => "cannot rewind while a turn is running",
                    Purpose::Fork(_) => "cannot fork while a turn is running",
                }
                .to_string(),
            );
            return Vec::new();
        }
        self.awaiting = Some(Awaiting::Picker(purpose));
        vec![Effect::LoadCheckpoints]
    }

    /// Tab: completes a slash command's name: the whole name when one command starts with what
    /// is typed, else as far as they agree, and the candidates are listed.
    fn complete(&mut self) {
        let typed = self.input.text();
        if !typed.starts_with('/') || typed.contains(char::is_whitespace) {
            return;
        }
        let names: Vec<&str> = command::COMMANDS
            .iter()
            .filter_map(|(usage, _)| usage.split_whitespace().next())
            .filter(|name| name.starts_with(typed))
            .collect();
        match names.as_slice() {
            [] => self.message = Some(format!("no command starts with {}", escape::line(typed))),
            [one] => {
                let mut done = one.to_string();
                done.push(' ');
                self.input.set(&done);
            }
            [first, rest @ ..] => {
                let mut common = first.to_string();
                for name in rest {
                    let same = common
                        .chars()
                        .zip(name.chars())
                        .take_while(|(a, b)| a == b)
                        .count();
                    common = common.chars().take(same).collect();
                }
                if common.len() > typed.len() {
                    self.input.set(&common);
                }
                self.message = Some(names.join("  "));
            }
        }
    }

    fn submit(&mut self) -> Vec<Effect> {
        if self.input.text().trim().is_empty() {
            return Vec::new();
        }
        if let Some(cmd) = command::parse(self.input.text()) {
            if let Command::Unknown(name) = &cmd {
                // Kept in the input: a typo is fixed, not typed again.
                self.message = Some(format!(
                    "unknown command /{} (/help lists them; a prompt that starts with / needs a space or a path)",
                    escape::line(name)
                ));
                return Vec::new();
            }
            self.input.take();
            return self.run_command(cmd);
        }
        if self.status.running {
            self.message = Some("a turn is running: wait for it, or Esc to cancel it".to_string());
            return Vec::new();
        }
        self.message = None;
        self.scroll = 0;
        vec![Effect::Send(self.input.take())]
    }

    fn run_command(&mut self, cmd: Command) -> Vec<Effect> {
        self.message = None;
        match cmd {
            Command::Rewind => self.open_picker(Purpose::Rewind),
            Command::Undo => {
                if self.waiting() {
                    return Vec::new();
                }
                self.awaiting = Some(Awaiting::Undo);
                vec![Effect::Undo(UndoRequest::default())]
            }
            Command::Heads => vec![Effect::LoadHeads],
            Command::Switch(head) => vec![Effect::Switch(SwitchRequest { head })],
            Command::Help => {
                self.mode = Mode::Help(0);
                Vec::new()
            }
            Command::Quit => self.quit(),
            Command::Fork(name) => self.open_picker(Purpose::Fork(name)),
            Command::Model(spec) => match retrace_protocol::ModelSpec::parse(&spec) {
                Ok(spec) => {
                    self.message = Some(format!("switching to {spec}…"));
                    vec![Effect::SetModel(spec)]
                }
                Err(e) => {
                    self.message = Some(e.to_string());
                    Vec::new()
                }
            },
            Command::Sessions => {
                if self.status.running {
                    self.message = Some(
                        "a turn is running: wait for it, or Esc to cancel it, then /sessions".to_string(),
                    );
                    return Vec::new();
                }
                vec![Effect::LoadSessions]
            }
            Command::Compact => self.compact(),
            Command::Plan(on) => self.set_plan_mode(on),
            Command::New => {
                if self.status.running {
                    self.message =
                        Some("a turn is running: wait for it, or Esc to cancel it, then /new".to_string());
                    return Vec::new();
                }
                self.message = Some("opening a new session…".to_string());
                vec![Effect::NewSession]
            }
            Command::Usage(usage) => {
                self.message = Some(format!("usage: {usage}"));
                Vec::new()
            }
            Command::Unknown(name) => {
                self.message = Some(format!(
                    "unknown command /{} (/help lists them)",
                    escape::line(&name)
                ));
                Vec::new()
            }
        }
    }

    fn heads_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Mode::Heads(tree) = &mut self.mode else {
            return Vec::new();
        };
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => tree.up(),
            KeyCode::Down | KeyCode::Char('j') => tree.down(),
            KeyCode::Esc | KeyCode::Char('q') => self.mode = Mode::Chat,
            _ if ctrl(&key, 'c') => self.mode = Mode::Chat,
            KeyCode::Enter => {
                let chosen = tree.current().filter(|h| !h.selected).map(|h| h.id.to_string());
                self.mode = Mode::Chat;
                if let Some(head) = chosen {
                    return vec![Effect::Switch(SwitchRequest { head })];
                }
            }
            _ => {}
        }
        Vec::new()
    }

    fn sessions_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Mode::Sessions(list) = &mut self.mode else {
            return Vec::new();
        };
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => list.up(),
            KeyCode::Down | KeyCode::Char('j') => list.down(),
            KeyCode::Esc | KeyCode::Char('q') => self.mode = Mode::Chat,
            _ if ctrl(&key, 'c') => self.mode = Mode::Chat,
            KeyCode::Enter => {
                let chosen = list.chosen().map(|e| e.id.to_string());
                self.mode = Mode::Chat;
                if let Some(id) = chosen {
                    if self.status.running {
                        self.message =
                            Some("a turn is running: wait for it, or Esc to cancel it".to_string());
                        return Vec::new();
                    }
                    self.message = Some(format!("opening session {}…", escape::line(&id)));
                    return vec![Effect::OpenSession(id)];
                }
            }
            _ => {}
        }
        Vec::new()
    }

    fn picker_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Mode::Picker(picker) = &mut self.mode else {
            return Vec::new();
        };
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => picker.up(),
            KeyCode::Down | KeyCode::Char('j') => picker.down(),
            KeyCode::Esc => self.mode = Mode::Chat,
            KeyCode::Enter => match (picker.chosen(), &picker.purpose) {
                (Some(entry), Purpose::Rewind) => {
                    let menu = Menu::new(entry.clone(), picker.clone());
                    self.mode = Mode::Menu(Box::new(menu));
                }
                (Some(entry), Purpose::Fork(name)) => {
                    if let Err(reason) = Action::Fork.availability(entry) {
                        self.message = Some(format!("cannot fork here: {}", escape::line(&reason)));
                        return Vec::new();
                    }
                    let req = ForkRequest {
                        turn: entry.turn,
                        name: name.clone(),
                        select: true,
                    };
                    self.mode = Mode::Chat;
                    return vec![Effect::Fork(req)];
                }
                (None, _) => self.mode = Mode::Chat,
            },
            _ if ctrl(&key, 'c') => self.mode = Mode::Chat,
            _ => {}
        }
        Vec::new()
    }

    fn menu_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Mode::Menu(menu) = &mut self.mode else {
            return Vec::new();
        };
        let action = match key.code {
            KeyCode::Up | KeyCode::Char('k') => {
                menu.highlighted = menu.highlighted.saturating_sub(1);
                return Vec::new();
            }
            KeyCode::Down | KeyCode::Char('j') => {
                menu.highlighted = (menu.highlighted + 1).min(Action::ALL.len() - 1);
                return Vec::new();
            }
            KeyCode::Esc => {
                self.mode = Mode::Picker(menu.picker.clone());
                return Vec::new();
            }
            _ if ctrl(&key, 'c') => {
                self.mode = Mode::Chat;
                return Vec::new();
            }
            KeyCode::Enter => menu.current(),
            KeyCode::Char(c) => match Action::from_key(c) {
                Some(a) => a,
                None => return Vec::new(),
            },
            _ => return Vec::new(),
        };
        let menu = menu.clone();
        self.choose(action, menu)
    }

    fn choose(&mut self, action: Action, menu: Box<Menu>) -> Vec<Effect> {
        if let Err(reason) = action.availability(&menu.entry) {
            self.message = Some(format!(
                "{}: unavailable ({})",
                action.label(),
                escape::line(&reason)
            ));
            return Vec::new();
        }
        let turn = menu.entry.turn;
        self.message = None;
        if self.waiting() {
            return Vec::new();
        }
        if let Some(scope) = action.scope() {
            self.awaiting = Some(Awaiting::Plan(Some(menu)));
            self.mode = Mode::Chat;
            return vec![Effect::PrepareRewind(PrepareRewind { turn, scope })];
        }
        self.mode = Mode::Chat;
        match action {
            Action::Fork => vec![Effect::Fork(ForkRequest {
                turn,
                name: None,
                select: true,
            })],
            Action::SummarizeFrom | Action::SummarizeUpTo => {
                let direction = if action == Action::SummarizeFrom {
                    SummarizeDirection::From
                } else {
                    SummarizeDirection::UpTo
                };
                vec![Effect::Summarize(SummarizeRequest {
                    turn,
                    direction,
                    model: None,
                })]
            }
            _ => Vec::new(),
        }
    }

    fn preview_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let limit = self.overlay_limit.get();
        let Mode::Preview(preview) = &mut self.mode else {
            return Vec::new();
        };
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => preview.scroll = preview.scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => preview.scroll = (preview.scroll + 1).min(limit),
            KeyCode::PageUp => preview.scroll = preview.scroll.saturating_sub(10),
            KeyCode::PageDown => preview.scroll = (preview.scroll + 10).min(limit),
            KeyCode::Esc => {
                self.mode = match preview.menu.take() {
                    Some(menu) => Mode::Menu(menu),
                    None => Mode::Chat,
                };
            }
            _ if ctrl(&key, 'c') => self.mode = Mode::Chat,
            KeyCode::Enter | KeyCode::Char('y') | KeyCode::Char('s') | KeyCode::Char('o') => {
                if let Some(reason) = preview.unavailable() {
                    preview.hint = Some(format!("cannot commit: {}", escape::line(reason)));
                    return Vec::new();
                }
                let conflicts = preview.conflicts();
                let choice = match key.code {
                    KeyCode::Char('s') if conflicts > 0 => OnConflict::Skip,
                    KeyCode::Char('o') if conflicts > 0 => OnConflict::Overwrite,
                    KeyCode::Char('s') | KeyCode::Char('o') => return Vec::new(),
                    _ if conflicts > 0 => {
                        preview.hint = Some(format!(
                            "{conflicts} conflicted: s skips them, o overwrites them (undoable)"
                        ));
                        return Vec::new();
                    }
                    _ => OnConflict::Refuse,
                };
                let preview = preview.clone();
                return self.commit(&preview, choice);
            }
            _ => {}
        }
        Vec::new()
    }
}
