//! Prompts queued while a turn runs (SPEC §9.1): Enter then keeps the prompt, shown above the
//! input as "⏳ queued: …", and sends it when the turn (or summary) ends well; a second one is
//! added to it. Up on an empty input takes it back to edit, Esc removes it (the next Esc cancels
//! the turn). When the turn fails or is cancelled, it comes back into the input instead of being
//! sent.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;
use unicode_width::UnicodeWidthStr;

use crate::app::App;
use crate::effect::Effect;
use crate::escape;
use crate::input::Draft;
use crate::view::wrap::fit;
use crate::view::Theme;

impl App {
    /// The prompt queued to be sent when the running turn ends, if any.
    pub fn queued(&self) -> Option<&Draft> {
        self.chat.queued.as_ref()
    }

    /// Enter while a turn runs: the input's prompt is queued (after one already there).
    pub(super) fn queue_input(&mut self) {
        let draft = self.input.take_draft();
        self.chat.queued = Some(match self.chat.queued.take() {
            Some(q) => q.joined("\n", &draft),
            None => draft,
        });
        self.message = None;
    }

    /// Up on an empty input: the queued prompt comes back to edit (Enter queues it again).
    pub(super) fn unqueue_to_input(&mut self) -> bool {
        match self.chat.queued.take() {
            Some(q) => {
                self.input.restore(q);
                true
            }
            None => false,
        }
    }

    /// Esc with a prompt queued: it is removed (the turn keeps running).
    pub(super) fn drop_queued(&mut self) -> bool {
        if self.chat.queued.take().is_some() {
            self.message = Some("queued prompt removed (Esc again cancels the turn)".to_string());
            return true;
        }
        false
    }

    /// A turn or summary ended (`ok`: it finished well): the queued prompt is sent, or, when it
    /// did not finish, put back into the input before anything typed since.
    pub(crate) fn after_job(&mut self, ok: bool) -> Vec<Effect> {
        if self.status.running {
            return Vec::new();
        }
        let Some(queued) = self.chat.queued.take() else {
            return Vec::new();
        };
        if !ok {
            let typed = self.input.take_draft();
            self.input.restore(queued.joined("\n", &typed));
            self.message =
                Some("the turn did not finish: the queued prompt is back in the input".to_string());
            return Vec::new();
        }
        self.input.remember(&queued);
        self.chat.scroll = 0;
        vec![Effect::Send(queued.whole().into_owned())]
    }
}

/// The rows the queued prompt takes above the input (0 or 1).
pub(crate) fn rows(app: &App) -> u16 {
    u16::from(app.queued().is_some())
}

/// Draws the queued prompt's row: its first line (folds as their labels) and how many follow.
pub(crate) fn draw(frame: &mut Frame, area: Rect, app: &App, t: Theme) {
    let Some(q) = app.queued() else {
        return;
    };
    let (first, more) = q.first_line();
    let more = match more {
        0 => String::new(),
        1 => " (+1 line)".to_string(),
        n => format!(" (+{n} lines)"),
    };
    let width = usize::from(area.width);
    let lead = "⏳ queued: ";
    let rest = width.saturating_sub(UnicodeWidthStr::width(lead) + 1 + more.chars().count());
    let line = Line::from(vec![
        Span::styled(lead, t.accent()),
        Span::styled(fit(&escape::line(&first), rest), t.text()),
        Span::styled(more, t.dim()),
    ]);
    frame.render_widget(Paragraph::new(line), area);
}
