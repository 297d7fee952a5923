//! The status line, one row under the input box: `PLAN` when plan mode is on, then what runs, the
//! model, how much of its context window the conversation takes, the tokens of the session's
//! turns and what they cost (when the model's price is known: the controller's tally, in its
//! words), the turn, and the head when it is not
//! the main one. What does not fit is shortened or left out, never silently: a long model's name
//! is cut in its middle first, then the head and the turn are left out, then the cost, the tokens
//! and the context; a line that left something out ends in "…". The session id, the workspace and the log are in `/status`.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;
use unicode_width::UnicodeWidthStr;

use crate::app::App;
use crate::escape;
use crate::view::wrap::fit;
use crate::view::Theme;

/// Between two parts.
const SEP: &str = " · ";
/// The plan-mode badge (reversed, so it shows without colours too).
const PLAN: &str = " PLAN ";

/// The model as the status line names it: without the endpoint (`/status` shows it).
pub(crate) fn model_label(model: Option<&str>) -> String {
    match model {
        Some(m) => escape::line(m),
        None => "no model".to_string(),
    }
}

/// The line's parts: what runs, the model, the parts kept as long as they fit at all (context,
/// tokens, cost), and those left out first (turn, head).
struct Parts {
    now: Vec<String>,
    model: String,
    kept: Vec<String>,
    extra: Vec<String>,
}

fn parts(app: &App) -> Parts {
    let s = app.status();
    let mut now = Vec::new();
    if s.running {
        const FRAMES: [&str; 4] = ["⠋", "⠙", "⠹", "⠸"];
        now.push(FRAMES[s.spinner % FRAMES.len()].to_string());
    }
    if s.compacting {
        now.push("compacting".to_string());
    }
    // The session's tally in the controller's words: context, tokens, cost (each when known).
    let kept = s.usage.says.clone();
    let mut extra = Vec::new();
    if let Some(turn) = s.turn {
        extra.push(format!("turn {turn}"));
    }
    match app.head_name() {
        Some(name) => extra.push(format!("head {}", escape::first_line(name, 24))),
        None if s.head != retrace_protocol::MAIN_HEAD => {
            extra.push(format!("head {}", escape::short(&s.head, 14)));
        }
        None => {}
    }
    Parts {
        now,
        model: model_label(s.model_name()),
        kept,
        extra,
    }
}

/// A model's name is shortened to this many cells before the turn or the head is left out…
const MODEL_SHORT: usize = 16;
/// …and to this many before the context, the tokens or the cost are.
const MODEL_SHORTEST: usize = 10;

/// `model` in at most `max` cells: whole when it fits, else cut in the middle with "…", keeping
/// a provider's prefix (`deepseek:`, `script:`) when there is room, and the end (a model's
/// variant, a script's file name).
fn short_model(model: &str, max: usize) -> String {
    if model.width() <= max {
        return model.to_string();
    }
    let (head, rest) = match model.split_once(':') {
        Some((p, rest)) if p.width() + 1 + 1 + 6 <= max => (format!("{p}:"), rest),
        _ => (String::new(), model),
    };
    let room = max.saturating_sub(head.width() + 1);
    let mut tail: Vec<char> = Vec::new();
    let mut used = 0;
    for c in rest.chars().rev() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > room {
            break;
        }
        tail.push(c);
        used += w;
    }
    let tail: String = tail.into_iter().rev().collect();
    format!("{head}…{tail}")
}

/// The line's text (without the plan badge) in `width` cells. The model's name is shortened
/// first; then the head and the turn are left out, then the cost, the tokens and the context;
/// whatever is left out leaves a "…" at the end.
fn text(p: &Parts, width: usize) -> String {
    let lead: String = p.now.iter().map(|n| format!("{n} ")).collect();
    let join = |model: &str, rest: &[String], cut: bool| {
        let mut all = vec![format!("{lead}{model}")];
        all.extend(rest.iter().cloned());
        if cut {
            all.push("…".to_string());
        }
        all.join(SEP)
    };
    let full = p.model.width();
    let mut tries: Vec<(Vec<String>, bool, usize)> = Vec::new();
    for k in (0..=p.extra.len()).rev() {
        let mut rest = p.kept.clone();
        rest.extend(p.extra[..k].iter().cloned());
        tries.push((rest, k < p.extra.len(), full.min(MODEL_SHORT)));
    }
    for k in (0..=p.kept.len()).rev() {
        let cut = k < p.kept.len() || !p.extra.is_empty();
        tries.push((p.kept[..k].to_vec(), cut, full.min(MODEL_SHORTEST)));
    }
    for (rest, cut, shortest) in tries {
        let others = join("", &rest, cut).width();
        if others + shortest <= width {
            let model = short_model(&p.model, width - others);
            return join(&model, &rest, cut);
        }
    }
    fit(&join(&p.model, &[], false), width)
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
    spans.push(Span::styled(text(&parts(app), rest), t.dim()));
    Line::from(spans)
}

/// Draws the status line.
pub(crate) fn draw(frame: &mut Frame, area: Rect, app: &App, t: Theme) {
    frame.render_widget(Paragraph::new(line(app, usize::from(area.width), t)), area);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(model: &str) -> Parts {
        Parts {
            now: Vec::new(),
            model: model.to_string(),
            kept: vec!["48% context".into(), "30.0k in 2.0k out".into(), "$0.0103".into()],
            extra: vec!["turn 0".into()],
        }
    }

    #[test]
    fn the_model_is_shortened_before_anything_is_left_out() {
        let p = parts("script:/work/trial-out/scripts/p.json");
        assert_eq!(
            text(&p, 200),
            "script:/work/trial-out/scripts/p.json · 48% context · 30.0k in 2.0k out · $0.0103 · turn 0"
        );
        let at = |w: usize| {
            let t = text(&p, w);
            assert!(t.width() <= w, "{t:?} is wider than {w}");
            t
        };
        assert_eq!(
            at(73),
            "script:…ripts/p.json · 48% context · 30.0k in 2.0k out · $0.0103 · turn 0"
        );
        // Then the turn goes, and says so.
        assert_eq!(
            at(60),
            "…ipts/p.json · 48% context · 30.0k in 2.0k out · $0.0103 · …"
        );
        // Then the cost, the tokens, the context, from the end; the model gets what is left.
        assert_eq!(at(40), "script:…scripts/p.json · 48% context · …");
        for w in 1..100 {
            at(w);
        }
    }

    #[test]
    fn a_short_name_stays_whole() {
        assert_eq!(short_model("demo", 4), "demo");
        assert_eq!(short_model("deepseek:deepseek-chat", 16), "deepseek:…k-chat");
        assert_eq!(short_model("abcdefghijklmnop", 10), "…hijklmnop");
        assert_eq!(short_model("script:/a/long/path/p.json", 11), "…ath/p.json");
    }
}
