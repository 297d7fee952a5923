//! The `/` palette (SPEC §9.1): while the input holds a command's name being typed (`/`, `/he`),
//! a list above it shows the commands that match, each with its one line from
//! [`command::COMMANDS`]; after `/model ` it lists the models to choose from
//! ([`retrace_protocol::model_choices`]). Up/Down move, Tab completes, Enter runs the command
//! (or completes it when it needs an argument) or uses the model, Esc closes the list until the
//! input is emptied.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;
use retrace_protocol::{ModelChoice, ModelSpec};

use crate::app::App;
use crate::command::{self, COMMANDS};
use crate::effect::Effect;
use crate::escape;
use crate::screens::Screen;
use crate::view::boxed::{more_sign, row};
use crate::view::wrap::fit;
use crate::view::Theme;

/// The palette's own state (what it lists follows from the input).
#[derive(Debug, Clone, Default)]
pub(crate) struct Palette {
    /// The selected row.
    pub(crate) selected: usize,
    /// Closed with Esc: it stays closed until the input is emptied.
    pub(crate) closed: bool,
}

/// A row of the palette.
#[derive(Debug, Clone)]
pub(crate) enum Row {
    /// A command: its usage and description.
    Command(&'static str, &'static str),
    /// A model to choose.
    Model(ModelChoice),
    /// An MCP server's prompt: `/SERVER:PROMPT` and what it is for.
    Prompt(String, String),
}

/// What the palette lists now.
#[derive(Debug, Clone)]
pub(crate) struct Listed {
    /// Commands or models.
    pub(crate) models: bool,
    /// The rows, at least one.
    pub(crate) rows: Vec<Row>,
}

/// The commands whose name matches `typed` (without its `/`): those it starts first, then those
/// that contain it, in the table's order.
fn commands(typed: &str) -> Vec<Row> {
    let name = |usage: &'static str| &command::name(usage)[1..];
    let starts = COMMANDS.iter().filter(|(u, _)| name(u).starts_with(typed));
    let contains = COMMANDS
        .iter()
        .filter(|(u, _)| !name(u).starts_with(typed) && name(u).contains(typed));
    starts.chain(contains).map(|(u, d)| Row::Command(u, d)).collect()
}

impl App {
    /// Sets the model configured for this UI (`--model` or the config): `/model` lists it first,
    /// with its provider's models.
    pub fn set_configured_model(&mut self, model: Option<&ModelSpec>) {
        self.chat.configured_model = model.cloned();
    }

    /// The models `/model` lists: the configured one saying what it lacks when the UI was told
    /// its key is missing ([`App::set_model_problem`]).
    fn models(&self) -> Vec<ModelChoice> {
        let configured = self.chat.configured_model.as_ref();
        let missing_key = self
            .model_problem
            .as_ref()
            .filter(|p| configured.is_some_and(|c| c.to_string() == p.model))
            .and_then(|p| p.key_env.as_deref());
        retrace_protocol::model_choices(configured, missing_key)
    }

    /// What the palette lists now, if it shows.
    pub(crate) fn palette(&self) -> Option<Listed> {
        if self.screen() != Screen::Chat || self.chat.palette.closed || self.input.recalled() {
            return None;
        }
        let typed = self.input.shown().strip_prefix('/')?;
        let listed = match typed.split_once(char::is_whitespace) {
            None if typed.contains(['/', '.']) => return None, // a path, not a command
            None => {
                let mut rows = commands(typed);
                rows.extend(
                    self.chat
                        .mcp_prompts
                        .iter()
                        .filter(|(name, _)| name[1..].contains(typed))
                        .map(|(name, about)| Row::Prompt(name.clone(), about.clone())),
                );
                Listed { models: false, rows }
            }
            Some(("model", arg)) if !arg.trim_start().contains(char::is_whitespace) => {
                let arg = arg.trim_start().to_lowercase();
                let rows = self
                    .models()
                    .into_iter()
                    .filter(|m| m.value.to_lowercase().contains(&arg))
                    .map(Row::Model)
                    .collect();
                Listed { models: true, rows }
            }
            Some(_) => return None,
        };
        (!listed.rows.is_empty()).then_some(listed)
    }

    /// A key while the palette shows; `None` when it is not one of the palette's (it edits the
    /// input, which filters the list again).
    pub(super) fn palette_key(&mut self, key: &KeyEvent) -> Option<Vec<Effect>> {
        if !key.modifiers.is_empty() && key.code != KeyCode::BackTab {
            return None;
        }
        let listed = self.palette()?;
        let n = listed.rows.len();
        let selected = self.chat.palette.selected.min(n - 1);
        let chosen = listed.rows.get(selected).cloned()?;
        match key.code {
            KeyCode::Up => self.chat.palette.selected = (selected + n - 1) % n,
            KeyCode::Down => self.chat.palette.selected = (selected + 1) % n,
            KeyCode::Esc => self.chat.palette.closed = true,
            KeyCode::Tab => self.complete_row(&chosen),
            KeyCode::Enter => return Some(self.choose_row(chosen)),
            _ => return None,
        }
        Some(Vec::new())
    }

    /// Tab on a row: the input becomes its command (with a space for its argument) or model.
    fn complete_row(&mut self, row: &Row) {
        match row {
            Row::Command(usage, _) => {
                let name = command::name(usage);
                let space = if usage.len() > name.len() { " " } else { "" };
                self.input.set(&format!("{name}{space}"));
            }
            Row::Model(m) => match m.spec {
                Some(_) => self.input.set(&format!("/model {}", m.value)),
                None => self.input.set("/model script:"),
            },
            Row::Prompt(name, _) => self.input.set(&format!("{name} ")),
        }
        self.chat.palette.selected = 0;
    }

    /// The row the palette starts on when its text changed: the model in use when `/model`'s
    /// whole list opens (so Enter keeps it), else the first.
    pub(super) fn palette_start(&self) -> usize {
        if self.input.text() != "/model " {
            return 0;
        }
        let in_use = self.status.model_name();
        self.models()
            .iter()
            .position(|m| Some(m.value.as_str()) == in_use)
            .unwrap_or(0)
    }

    /// Enter on a row: a command that needs an argument is completed; another runs; a model is
    /// used; `script:FILE` is completed for its file to be typed.
    fn choose_row(&mut self, row: Row) -> Vec<Effect> {
        match row {
            Row::Command(usage, _) if command::needs_argument(usage) || command::name(usage) == "/model" => {
                self.complete_row(&row);
                Vec::new()
            }
            Row::Command(usage, _) => {
                self.input.set(command::name(usage));
                self.submit()
            }
            Row::Prompt(name, _) => {
                self.input.set(&name);
                self.submit()
            }
            Row::Model(ModelChoice { spec: Some(spec), .. }) => {
                self.input.take();
                self.message = Some(format!("switching to {spec}…"));
                vec![Effect::SetModel(spec)]
            }
            Row::Model(ModelChoice { spec: None, .. }) => {
                if self.input.shown().trim_end() == "/model script:" {
                    // Already there: Enter says what is missing.
                    self.submit()
                } else {
                    self.complete_row(&row);
                    Vec::new()
                }
            }
        }
    }
}

/// Draws the palette at the bottom of `area` (the rows above the input box), over what is there:
/// as many rows as fit, scrolled to keep the selected one in view, those cut off counted on its
/// bottom border.
pub(crate) fn draw(frame: &mut Frame, area: Rect, app: &App, t: Theme) {
    let Some(listed) = app.palette() else {
        return;
    };
    let n = listed.rows.len();
    let height = (n + 3).min(usize::from(area.height));
    if height < 3 || area.width < 10 {
        return;
    }
    let rect = Rect::new(
        area.x,
        area.y + area.height - height as u16,
        area.width,
        height as u16,
    );
    frame.render_widget(Clear, rect);
    let (title, keys) = if listed.models {
        (" Models ", "↑↓ move · Tab complete · Enter use it · Esc close")
    } else {
        (" Commands ", "↑↓ move · Tab complete · Enter run · Esc close")
    };
    let inner_w = usize::from(rect.width.saturating_sub(2));
    let list_h = height.saturating_sub(3);
    let selected = app.chat.palette.selected.min(n - 1);
    let first = (selected + 1).saturating_sub(list_h);
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.accent())
        .title(Line::styled(title, t.bold()));
    if let Some(more) = more_sign(first, n.saturating_sub(first + list_h)) {
        block = block.title_bottom(Line::styled(fit(&more, inner_w), t.dim()).right_aligned());
    }
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let name_w = listed
        .rows
        .iter()
        .map(|r| match r {
            Row::Command(u, _) => u.chars().count(),
            Row::Model(m) => m.value.chars().count(),
            Row::Prompt(n, _) => n.chars().count(),
        })
        .max()
        .unwrap_or(0)
        .min(inner_w / 2);
    let mut lines: Vec<Line<'static>> = listed
        .rows
        .iter()
        .enumerate()
        .skip(first)
        .take(list_h)
        .map(|(i, r)| {
            let (name, about) = match r {
                Row::Command(u, d) => (u.to_string(), d.to_string()),
                Row::Prompt(n, d) => (escape::line(n), escape::first_line(d, 200)),
                Row::Model(m) => {
                    // By its spec: a model with an endpoint of its own is labelled "SPEC at URL".
                    let current = app.status().model_name() == Some(m.value.as_str());
                    let note = if current {
                        format!("{} · in use", m.note)
                    } else {
                        m.note.clone()
                    };
                    (escape::line(&m.value), escape::line(&note))
                }
            };
            let name = fit(&name, name_w);
            let pad = name_w.saturating_sub(name.chars().count());
            let text = format!("{name}{}  {about}", " ".repeat(pad));
            row(fit(&text, inner_w.saturating_sub(2)), i == selected, t, t.text())
        })
        .collect();
    while lines.len() < list_h {
        lines.push(Line::raw(""));
    }
    lines.push(Line::styled(fit(keys, inner_w), t.dim()));
    frame.render_widget(Paragraph::new(lines), inner);
}
