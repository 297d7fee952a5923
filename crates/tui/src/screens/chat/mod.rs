//! The chat: the transcript (scrolled by whole rows), the input box under it and what their keys
//! do (SPEC §9.1). The time a key arrived is passed in, so the double-Esc and double-Ctrl-C
//! windows are deterministic in tests. Slash commands are in `commands`, the drawing in `draw`
//! (its kept rows in `layout`) and `input_box`.

mod commands;
pub(crate) mod detail;
pub(crate) mod draw;
mod editing;
pub(crate) mod input_box;
pub(crate) mod layout;
pub(crate) mod palette;
pub(crate) mod queue;
pub(crate) mod welcome;

use std::time::{Duration, Instant};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use retrace_protocol::ModelSpec;

use crate::app::App;
use crate::effect::Effect;
use crate::input::Draft;
use crate::screens::ctrl;
use crate::screens::picker::Purpose;

/// Esc twice within this opens the rewind picker.
pub const DOUBLE_ESC: Duration = Duration::from_millis(600);
/// Ctrl-C twice within this (on an empty, idle input) quits.
pub const DOUBLE_CTRL_C: Duration = Duration::from_millis(2000);
/// Transcript rows one notch of the mouse wheel scrolls.
const WHEEL_ROWS: usize = 3;

/// The chat's own state (the transcript and the input are the app's: every screen shows them).
#[derive(Debug, Clone, Default)]
pub(crate) struct Chat {
    /// Transcript rows scrolled up from the bottom.
    pub(crate) scroll: usize,
    /// How far the transcript could scroll at the last frame (the view finds it; scrolling
    /// stops there instead of counting on past the top).
    pub(crate) scroll_limit: usize,
    /// Whether tool calls show their diff or output, and reasoning its text (Ctrl-O).
    pub(crate) details: bool,
    /// Bumped whenever something other than the transcript changes how its items are drawn (see
    /// [`App::view_generation`]).
    pub(crate) view_generation: u64,
    pub(crate) last_esc: Option<Instant>,
    pub(crate) last_ctrl_c: Option<Instant>,
    /// The `/` palette's selection and whether Esc closed it.
    pub(crate) palette: palette::Palette,
    /// The model configured for this UI (`--model` or the config), which `/model` lists first.
    pub(crate) configured_model: Option<ModelSpec>,
    /// The prompt to send when the running turn ends.
    pub(crate) queued: Option<Draft>,
    /// The MCP servers' prompts the palette lists (`/SERVER:PROMPT` and what it is for).
    pub(crate) mcp_prompts: Vec<(String, String)>,
    /// Whether they were asked for (at the palette's first showing).
    pub(crate) mcp_asked: bool,
}

impl Chat {
    /// Scrolls the transcript up (`up`) or down by `rows`, never past its top as last drawn.
    pub(crate) fn scroll_by(&mut self, rows: usize, up: bool) {
        self.scroll = if up {
            self.scroll.saturating_add(rows).min(self.scroll_limit)
        } else {
            self.scroll.saturating_sub(rows)
        };
    }
}

impl App {
    /// The wheel on the chat: scrolls the transcript.
    pub(crate) fn chat_wheel(&mut self, up: bool) {
        self.chat.scroll_by(WHEEL_ROWS, up);
    }

    pub(crate) fn chat_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Effect> {
        let esc = key.code == KeyCode::Esc;
        let last_esc = if esc { self.chat.last_esc.take() } else { None };
        if !esc {
            self.chat.last_esc = None;
        }
        let is_ctrl_c = ctrl(&key, 'c');
        let last_ctrl_c = if is_ctrl_c {
            self.chat.last_ctrl_c.take()
        } else {
            None
        };
        if !is_ctrl_c {
            self.chat.last_ctrl_c = None;
        }
        let before = self.input.revision();
        let mut effects = self.chat_key_at(key, now, last_esc, last_ctrl_c);
        // The palette's first showing asks for the MCP servers' prompts (starting the servers).
        if !self.chat.mcp_asked && self.input.shown().starts_with('/') {
            self.chat.mcp_asked = true;
            effects.push(Effect::LoadMcp { show: false });
        }
        // The palette filters again from its first row whenever the text changes, and opens
        // again once the input is emptied.
        if self.input.revision() != before {
            self.chat.palette.selected = self.palette_start();
        }
        if self.input.is_empty() {
            self.chat.palette.closed = false;
        }
        effects
    }

    fn chat_key_at(
        &mut self,
        key: KeyEvent,
        now: Instant,
        last_esc: Option<Instant>,
        last_ctrl_c: Option<Instant>,
    ) -> Vec<Effect> {
        if let Some(effects) = self.palette_key(&key) {
            return effects;
        }
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Esc => {
                // A draft is cleared first, then a queued prompt removed, even while a turn runs:
                // the key that cancels a turn (and kills its shell) must not also be the one that
                // clears text.
                if !self.input.is_empty() {
                    self.input.clear();
                    return Vec::new();
                }
                if self.drop_queued() {
                    return Vec::new();
                }
                if self.status.running {
                    return vec![Effect::Cancel];
                }
                if last_esc.is_some_and(|t| now.saturating_duration_since(t) <= DOUBLE_ESC) {
                    return self.open_picker(Purpose::Rewind);
                }
                self.chat.last_esc = Some(now);
                Vec::new()
            }
            _ if ctrl(&key, 'c') => {
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
                self.chat.last_ctrl_c = Some(now);
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
                self.chat.details = !self.chat.details;
                self.chat.view_generation += 1; // every item renders differently now
                self.chat.scroll = 0;
                Vec::new()
            }
            KeyCode::Enter if alt || shift => {
                self.input.insert('\n');
                Vec::new()
            }
            KeyCode::Enter => self.submit(),
            KeyCode::Tab => {
                self.complete();
                Vec::new()
            }
            KeyCode::BackTab => self.set_plan_mode(None),
            KeyCode::Up if self.input.is_empty() && self.unqueue_to_input() => Vec::new(),
            KeyCode::Up if self.input.browsing_history() => {
                self.input.history_prev();
                Vec::new()
            }
            KeyCode::Down if self.input.browsing_history() => {
                self.input.history_next();
                Vec::new()
            }
            // Between the rows the input box shows (a long line wraps), as the box is wide.
            KeyCode::Up => {
                self.input.up_row(self.input_width());
                Vec::new()
            }
            KeyCode::Down => {
                self.input.down_row(self.input_width());
                Vec::new()
            }
            KeyCode::PageUp | KeyCode::PageDown => {
                // A page is the chat's height less two rows kept for context.
                let page = usize::from(self.viewport.1.saturating_sub(8)).max(1);
                self.chat.scroll_by(page, key.code == KeyCode::PageUp);
                Vec::new()
            }
            _ => {
                self.edit_key(&key);
                Vec::new()
            }
        }
    }

    /// The input box's width inside its borders, as the view lays it out.
    pub(crate) fn input_width(&self) -> usize {
        usize::from(self.viewport.0.saturating_sub(2)).max(1)
    }

    fn quit(&mut self) -> Vec<Effect> {
        self.quit = true;
        vec![Effect::Quit]
    }
}
