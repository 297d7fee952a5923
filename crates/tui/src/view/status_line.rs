//! The status line, one row under the input box: `PLAN` when plan mode is on, then what runs, the
//! model, how much of its context window the conversation takes, the tokens of this UI's turns
//! and what they cost (when the model's price is known), the turn, and the head when it is not
//! the main one. What does not fit is left out from the end of that list (the head first), so
//! that at 80 columns the row is whole; only a model's name longer than the row is cut, with
//! "…". The session id, the workspace and the log are in `/status`.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;
use unicode_width::UnicodeWidthStr;

use crate::app::App;
use crate::escape;
use crate::status::{dollars, tokens};
use crate::view::wrap::fit;
use crate::view::Theme;

/// Between two parts.
const SEP: &str = " · ";
/// The plan-mode badge (reversed, so it shows without colours too).
const PLAN: &str = " PLAN ";

/// The model as the status line names it: without the endpoint (`/status` shows it).
pub(crate) fn model_label(model: Option<&str>) -> String {
    match model {
        Some(m) => escape::line(m.split(" at ").next().unwrap_or(m)),
        None => "no model".to_string(),
    }
}

/// The parts of the line, most needed first.
fn parts(app: &App) -> Vec<String> {
    let s = app.status();
    let mut parts = Vec::new();
    let mut now = Vec::new();
    if s.running {
        const FRAMES: [&str; 4] = ["⠋", "⠙", "⠹", "⠸"];
        now.push(FRAMES[s.spinner % FRAMES.len()].to_string());
    }
    if s.compacting {
        now.push("compacting".to_string());
    }
    now.push(model_label(s.model.as_deref()));
    parts.push(now.join(" "));
    if let (Some(used), Some(model)) = (s.context_tokens, s.model.as_deref()) {
        let window = app.meter().window(model).max(1);
        let percent = (used.saturating_mul(100) / window).min(999);
        parts.push(format!("{percent}% context"));
    }
    if s.usage.prompt_tokens > 0 || s.usage.completion_tokens > 0 {
        parts.push(format!(
            "{} in {} out",
            tokens(s.usage.prompt_tokens),
            tokens(s.usage.completion_tokens)
        ));
        if !s.unpriced {
            parts.push(dollars(s.cost));
        }
    }
    if let Some(turn) = s.turn {
        parts.push(format!("turn {turn}"));
    }
    match app.head_name() {
        Some(name) => parts.push(format!("head {}", escape::first_line(name, 24))),
        None if s.head != retrace_protocol::MAIN_HEAD => {
            parts.push(format!("head {}", escape::short(&s.head, 14)));
        }
        None => {}
    }
    parts
}

/// The status line at `width` cells.
pub(crate) fn line(app: &App, width: usize, t: Theme) -> Line<'static> {
    let mut spans = Vec::new();
    let mut rest = width;
    if app.status().plan_mode && width >= PLAN.len() {
        spans.push(Span::styled(PLAN, t.plan()));
        spans.push(Span::raw(" "));
        rest = width.saturating_sub(PLAN.len() + 1);
    }
    let mut parts = parts(app);
    while parts.len() > 1 && parts.join(SEP).width() > rest {
        parts.pop();
    }
    spans.push(Span::styled(fit(&parts.join(SEP), rest), t.dim()));
    Line::from(spans)
}

/// Draws the status line.
pub(crate) fn draw(frame: &mut Frame, area: Rect, app: &App, t: Theme) {
    frame.render_widget(Paragraph::new(line(app, usize::from(area.width), t)), area);
}
