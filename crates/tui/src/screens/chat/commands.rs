//! What Enter and Tab do in the chat: a prompt is sent (queued while a turn runs), a slash
//! command (parsed in [`crate::command`]) runs, and Tab completes a command's name.

use retrace_protocol::{RedoRequest, SwitchRequest, UndoRequest};

use crate::app::{App, Awaiting};
use crate::command::{self, Command};
use crate::effect::Effect;
use crate::escape;
use crate::screens::picker::Purpose;
use crate::screens::Mode;

/// A prompt with a `/model` command typed after it (`explain main.py /model demo`): the prompt
/// (its trailing spaces dropped) and the command. Only `/model` after a space, with a model or
/// nothing after it, counts: it is what the no-model hint says to type.
fn trailing_model_command(text: &str) -> Option<(&str, Command)> {
    let at = text
        .rmatch_indices("/model")
        .map(|(i, _)| i)
        .find(|&i| text[..i].ends_with(char::is_whitespace) && !text[..i].trim().is_empty())?;
    match command::parse(&text[at..])? {
        cmd @ (Command::Model(_) | Command::Models) => Some((text[..at].trim_end(), cmd)),
        _ => None,
    }
}

impl App {
    /// Whether a request whose answer the UI waits for is in flight: another one must wait, or
    /// its answer would be taken for the first one's.
    pub(crate) fn waiting(&mut self) -> bool {
        if self.awaiting.is_some() {
            self.message = Some("wait: the last request has not been answered yet".to_string());
            return true;
        }
        false
    }

    pub(super) fn open_picker(&mut self, purpose: Purpose) -> Vec<Effect> {
        if self.waiting() {
            return Vec::new();
        }
        if self.status.running {
            self.message = Some(
                match purpose {
                    Purpose::Rewind => "cannot rewind while a turn is running",
                    Purpose::Fork(_) | Purpose::ForkWorkspace(_) => "cannot fork while a turn is running",
                }
                .to_string(),
            );
            return Vec::new();
        }
        self.awaiting = Some(Awaiting::Picker(purpose));
        vec![Effect::LoadCheckpoints]
    }

    /// Tab with the palette closed: completes a slash command's name: the whole name when one
    /// command starts with what is typed, else as far as they agree, and the candidates are
    /// listed.
    pub(super) fn complete(&mut self) {
        let typed = self.input.text().into_owned();
        let typed = typed.as_str();
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

    pub(super) fn submit(&mut self) -> Vec<Effect> {
        if self.input.text().trim().is_empty() {
            return Vec::new();
        }
        if let Some(cmd) = command::parse(&self.input.text()) {
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
        if self.status.model.is_none() {
            let text = self.input.text().into_owned();
            if let Some((prompt, cmd)) = trailing_model_command(&text) {
                // `explain main.py /model demo`: what the hint said to type, typed after the
                // waiting prompt. The command runs; the prompt before it waits, and comes back
                // alone into the input once a model can answer.
                self.held_prompt = Some(prompt.to_string());
                self.input.take();
                let effects = self.run_command(cmd);
                if self.input.is_empty() && effects.is_empty() {
                    // The command failed at once: the text stays to be fixed.
                    self.input.set(&text);
                }
                return effects;
            }
            // Kept in the input, and put back there once a model can answer if the input was
            // cleared meanwhile (to type `/model demo`).
            self.held_prompt = Some(text);
            self.message = Some(
                "no model can answer yet: add /model demo to the line and press Enter to try the demo; your prompt then comes back alone".to_string(),
            );
            return Vec::new();
        }
        if self.status.running {
            self.queue_input();
            return Vec::new();
        }
        self.message = None;
        self.chat.scroll = 0;
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
            Command::Redo => {
                if self.waiting() {
                    return Vec::new();
                }
                self.awaiting = Some(Awaiting::Redo);
                vec![Effect::Redo(RedoRequest::default())]
            }
            Command::Diff(turn) => self.open_diff(turn),
            Command::History(path) => self.open_history(path, None),
            Command::Heads => vec![Effect::LoadHeads],
            Command::Switch(head) => vec![Effect::Switch(SwitchRequest { head })],
            Command::Help => {
                self.mode = Mode::Help(0);
                Vec::new()
            }
            Command::Status => vec![Effect::LoadStatusReport],
            Command::Mcp => {
                self.message = Some("asking the MCP servers…".to_string());
                vec![Effect::LoadMcp { show: true }]
            }
            Command::McpPrompt { server, prompt, args } => {
                self.message = Some(format!(
                    "getting the prompt {}:{}…",
                    escape::line(&server),
                    escape::line(&prompt)
                ));
                vec![Effect::McpPrompt { server, prompt, args }]
            }
            Command::Quit => self.quit(),
            Command::Fork(name) => self.open_picker(Purpose::Fork(name)),
            Command::ForkWorkspace { turn: None, dir } => self.open_picker(Purpose::ForkWorkspace(dir)),
            Command::ForkWorkspace {
                turn: Some(turn),
                dir,
            } => self.fork_workspace(turn, dir),
            Command::Models => {
                self.input.set("/model ");
                self.chat.palette.closed = false;
                Vec::new()
            }
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
}
