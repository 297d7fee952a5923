//! The first screen of an empty session: a panel in the transcript's place that says what Retrace
//! is (every edit can be taken back: Esc Esc), the workspace and the model, and, when the model
//! asked for cannot answer (no API key), why and what to do: the variable to export, `retrace
//! config` to see where the key is read, `/model demo` to try without a key. Every line wraps
//! inside the panel; nothing is cut.

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Borders, Paragraph};
use ratatui::Frame;

use crate::app::App;
use crate::escape;
use crate::view::status_line::model_label;
use crate::view::wrap::{wrap, Spans};
use crate::view::Theme;

/// The panel's widest, borders included.
const MAX_WIDTH: usize = 78;

/// The panel's logical lines (escaped, styled) and the indent of their continuation rows.
fn lines(app: &App, t: Theme) -> Vec<(Spans, usize)> {
    let s = app.status();
    let mut out: Vec<(Spans, usize)> = vec![
        (
            vec![
                ("Retrace".to_string(), t.bold()),
                (" · every edit can be taken back: ".to_string(), t.text()),
                ("Esc Esc".to_string(), t.accent()),
            ],
            2,
        ),
        (Vec::new(), 0),
        (
            vec![
                ("workspace  ".to_string(), t.dim()),
                (escape::line(&s.workspace), t.text()),
            ],
            11,
        ),
    ];
    let problem = app.model_problem();
    let model = match (problem, s.model.as_deref()) {
        (Some(p), _) => vec![
            ("model      ".to_string(), t.dim()),
            (format!("{} cannot answer yet", escape::line(&p.model)), t.warn()),
        ],
        (None, _) => vec![
            ("model      ".to_string(), t.dim()),
            (model_label(app.status().model_name()), t.text()),
        ],
    };
    out.push((model, 11));
    out.push((Vec::new(), 0));
    let Some(p) = problem else {
        let hint = if s.model.is_some() {
            "Type a request and press Enter. Esc Esc opens the turns to go back to; /help lists the keys and commands."
        } else {
            "No model is set up: /model demo tries the built-in demo, /model NAME picks another (`retrace config` shows the settings)."
        };
        out.push((vec![(hint.to_string(), t.dim())], 0));
        return out;
    };
    let model = escape::line(&p.model);
    match &p.key_env {
        Some(var) => {
            let var = escape::line(var);
            out.push((
                vec![(
                    format!("{var} is not set. To use {model}, export your API key and start retrace again:"),
                    t.text(),
                )],
                0,
            ));
            out.push((vec![(format!("    export {var}=<your key>"), t.accent())], 4));
        }
        None => out.push((vec![(escape::line(&p.reason), t.text())], 0)),
    }
    out.push((
        vec![
            ("retrace config".to_string(), t.accent()),
            (
                " (in a shell) shows where the key is read and which config file is used.".to_string(),
                t.text(),
            ),
        ],
        0,
    ));
    out.push((
        vec![
            ("To try Retrace without a key now, type ".to_string(), t.text()),
            ("/model demo".to_string(), t.accent()),
            (
                " and press Enter. A prompt typed first waits: add /model demo after it, and the prompt comes back alone in the input."
                    .to_string(),
                t.text(),
            ),
        ],
        0,
    ));
    out
}

/// The panel's rows inside its borders, at `inner` cells.
pub(crate) fn rows(app: &App, inner: usize, t: Theme) -> Vec<Line<'static>> {
    lines(app, t)
        .iter()
        .flat_map(|(spans, indent)| wrap(spans, inner, *indent))
        .collect()
}

/// Draws the panel at the top of `area` (the transcript's place).
pub(crate) fn draw(frame: &mut Frame, area: Rect, app: &App, t: Theme) {
    let width = usize::from(area.width).min(MAX_WIDTH);
    let inner = width.saturating_sub(4).max(1);
    let rows = rows(app, inner, t);
    let height = (rows.len() + 2).min(usize::from(area.height));
    let panel = Rect {
        x: area.x,
        y: area.y,
        width: width as u16,
        height: height as u16,
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(t.dim())
        .padding(ratatui::widgets::Padding::horizontal(1));
    frame.render_widget(Paragraph::new(rows).block(block), panel);
}
