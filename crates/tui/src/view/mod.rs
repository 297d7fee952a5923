//! Rendering: [`draw`] puts an [`App`] on a ratatui frame. It decides nothing, escapes every
//! string it did not write itself, and never panics at any size. What it keeps between frames
//! (the transcript's wrapped rows) and what a frame finds out (how far things can scroll) live in
//! a [`ViewState`] the caller owns, never in the app. Each screen draws itself (`crate::screens`);
//! this module lays out the frame and draws what every screen shares: the message and status lines.

pub(crate) mod boxed;
pub mod diff;
pub mod markdown;
pub(crate) mod status_line;
mod theme;
pub(crate) mod wrap;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Clear, Paragraph};
use ratatui::Frame;

use crate::app::App;
use crate::escape;
use crate::screens::chat::layout::ChatLayout;
use crate::screens::{self, chat, Screen};
pub use theme::Theme;
use wrap::fit;

/// The smallest terminal the UI lays out; below it a single line says so.
pub const MIN_WIDTH: u16 = 40;
/// See [`MIN_WIDTH`].
pub const MIN_HEIGHT: u16 = 10;

/// What drawing keeps between frames and what the last frame found out: derived data only, never
/// a decision. One per screen being drawn on; a fresh one draws exactly what a kept one does.
#[derive(Debug, Default)]
pub struct ViewState {
    /// The transcript's rows as last drawn.
    pub(crate) chat: ChatLayout,
    /// What the last frame found.
    limits: ScrollLimits,
}

impl ViewState {
    /// A state that keeps nothing yet.
    pub fn new() -> ViewState {
        ViewState::default()
    }

    /// How far the last frame could scroll what it drew; the runtime gives it to the app
    /// ([`App::set_scroll_limits`]) so that scrolling stops there.
    pub fn scroll_limits(&self) -> ScrollLimits {
        self.limits
    }
}

/// How far a frame could scroll what it drew (`None`: that part was not drawn on it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScrollLimits {
    /// Rows of the transcript above the first one shown when scrolled to the bottom.
    pub chat: Option<usize>,
    /// The same for the scrolled box on top (the preview, the help).
    pub overlay: Option<usize>,
}

/// A box on top of the chat needs at least this many rows above the input box to be drawn
/// there; on a terminal with fewer it takes every row but the status line (the input box hidden
/// under it, never a piece of it showing).
const OVERLAY_MIN_ROWS: u16 = 8;

/// A message above the input box takes at most this many rows.
const MESSAGE_ROWS: usize = 3;

/// The message above the input box (what a request did, why a key did nothing), wrapped at
/// `width`: whole up to [`MESSAGE_ROWS`] rows, the last one ending in "…" past them.
fn message_rows(app: &App, width: u16) -> Vec<String> {
    let Some(m) = app.message() else {
        return Vec::new();
    };
    let width = usize::from(width);
    let spans = vec![(escape::line(m), ratatui::style::Style::default())];
    let mut rows: Vec<String> = wrap::wrap(&spans, width, 2)
        .iter()
        .map(|l| l.to_string())
        .collect();
    if rows.len() > MESSAGE_ROWS {
        rows.truncate(MESSAGE_ROWS);
        if let Some(last) = rows.last_mut() {
            *last = fit(&format!("{last}…"), width);
        }
    }
    rows
}

/// The frame's parts, top to bottom: the transcript, the message line, the queued prompt, the
/// input box and the status line.
fn areas(app: &App, area: Rect) -> [Rect; 5] {
    let input_rows = chat::input_box::row_count(app, area.width) as u16;
    let message_rows = message_rows(app, area.width).len() as u16;
    Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(message_rows),
        Constraint::Length(chat::queue::rows(app)),
        Constraint::Length(input_rows + 2),
        Constraint::Length(1),
    ])
    .areas(area)
}

/// Where the box on top of the chat (a preview, a menu, an approval…) is drawn in `area`, and
/// whether it hides the input box: the rows above the input box, so that the box and all it
/// shows stay clear of it; on a terminal too low for that, every row but the status line.
fn overlay(app: &App, area: Rect) -> (Rect, bool) {
    let [_, _, _, input, _] = areas(app, area);
    let above = Rect::new(area.x, area.y, area.width, input.y.saturating_sub(area.y));
    if above.height >= OVERLAY_MIN_ROWS {
        (above, false)
    } else {
        let rows = area.height.saturating_sub(1);
        (Rect::new(area.x, area.y, area.width, rows), true)
    }
}

/// How many rows the box on top of the chat may take in a terminal `w`×`h` (as [`draw`] lays it
/// out), for the keys that keep a row of it in view.
pub(crate) fn overlay_height(app: &App, (w, h): (u16, u16)) -> u16 {
    overlay(app, Rect::new(0, 0, w, h)).0.height
}

/// Draws the whole screen.
pub fn draw(frame: &mut Frame, app: &App, state: &mut ViewState) {
    state.limits = ScrollLimits::default();
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let msg = format!("terminal too small ({}×{}; need 40×10)", area.width, area.height);
        frame.render_widget(Paragraph::new(fit(&msg, usize::from(area.width))), area);
        return;
    }
    let t = Theme::new(app.no_color());
    let [body, message, queued, input, status] = areas(app, area);
    state.limits.chat = chat::draw::draw(frame, body, app, &mut state.chat);
    let said: Vec<Line> = message_rows(app, message.width)
        .into_iter()
        .map(|r| Line::styled(r, t.warn()))
        .collect();
    frame.render_widget(Paragraph::new(said), message);
    chat::queue::draw(frame, queued, app, t);
    chat::input_box::draw(frame, input, app, t);
    // The `/` palette, over the rows above the input box.
    let above = Rect::new(area.x, area.y, area.width, input.y.saturating_sub(area.y));
    chat::palette::draw(frame, above, app, t);
    status_line::draw(frame, status, app, t);
    if app.screen() == Screen::Chat {
        return;
    }
    let (on_top, hides_input) = overlay(app, area);
    if hides_input {
        frame.render_widget(Clear, on_top);
    }
    state.limits.overlay = screens::draw_on_top(frame, on_top, app, t);
}
