//! `/status`: what the status line leaves out, as rows in the transcript: the session id (what
//! `retrace --session` takes), the head, the workspace, what its checkpoints cover (its backend),
//! the model and where its requests go, how full the context is, the tokens and their cost with
//! the price used, and the session's log file.

use retrace_protocol::{price, SessionEntry};

use crate::app::App;
use crate::status::{dollars, tokens};
use crate::transcript::Entry;
use crate::view::status_line::model_label;

/// Dollars a million tokens, as short as they are exact: `0.14`, `0.0028`, `2.5`.
fn per_mtok(d: f64) -> String {
    let s = format!("{d:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("${s}")
}

impl App {
    /// The rows `/status` shows; `sessions` are the workspace's (this one's log file is among
    /// them).
    pub(crate) fn status_rows(&self, sessions: &[SessionEntry]) -> Vec<(String, String)> {
        let s = &self.status;
        let mut rows = vec![("session".to_string(), s.session.clone())];
        // A session with nothing in it is not kept on quitting: nothing to resume.
        let listed = sessions.iter().find(|e| e.id.as_ref() == s.session);
        let empty = listed.is_some_and(|e| e.turns == 0 && e.heads <= 1 && e.forked_from.is_none());
        rows.push(match empty {
            true => (
                "resume".to_string(),
                "nothing yet: a session left without a prompt is not kept".to_string(),
            ),
            false => ("resume".to_string(), format!("retrace --session {}", s.session)),
        });
        rows.push((
            "head".to_string(),
            match self.head_name() {
                Some(name) => format!("{name} ({})", s.head),
                None => s.head.clone(),
            },
        ));
        rows.push(("workspace".to_string(), s.workspace.clone()));
        rows.push((
            "coverage".to_string(),
            match s.backend {
                retrace_protocol::CheckpointBackend::Snapshot => {
                    "snapshot backend: the edit tools' changes; a shell command's cannot be rewound"
                        .to_string()
                }
                retrace_protocol::CheckpointBackend::Git => {
                    "git backend: the edit tools' and shell commands' changes".to_string()
                }
            },
        ));
        rows.push(("model".to_string(), model_label(s.model_name())));
        if let Some(model) = s.model_name() {
            let endpoint = match s.model_endpoint() {
                Some(url) => url.to_string(),
                None if model == "demo" => "built in (answers without a network)".to_string(),
                None if model.starts_with("script:") => "a script (answers without a network)".to_string(),
                None => "the provider's own endpoint".to_string(),
            };
            rows.push(("endpoint".to_string(), endpoint));
            let u = &s.usage;
            let window = u.context_window.unwrap_or_default();
            rows.push((
                "context".to_string(),
                match (u.context_tokens, u.context_percent) {
                    (Some(used), Some(percent)) => format!(
                        "{} of the model's {}-token window ({percent}%)",
                        tokens(used),
                        tokens(window),
                    ),
                    _ => format!(
                        "a window of {} tokens; how much of it the conversation takes is measured at the next model request",
                        tokens(window)
                    ),
                },
            ));
        }
        let u = &s.usage;
        let cached = if u.cached_tokens > 0 {
            format!(" ({} from the cache)", tokens(u.cached_tokens))
        } else {
            String::new()
        };
        rows.push((
            "tokens".to_string(),
            format!(
                "{} in{cached}, {} out, in this session's turns",
                tokens(u.input_tokens),
                tokens(u.output_tokens)
            ),
        ));
        let model = s.model_name().unwrap_or("");
        let name = price::model_name(model).to_string();
        let cost = match u.price {
            None if s.model.is_none() => "nothing yet".to_string(),
            // The offline models answer here, for nothing (unless the config prices them).
            Some(p) if p == price::FREE && model == "demo" => {
                "nothing: the demo model answers without a network".to_string()
            }
            Some(p) if p == price::FREE && price::offline(&name) => {
                "nothing: a script answers without a network".to_string()
            }
            Some(p) => {
                let cached = p
                    .cached_input_per_mtok
                    .map(|c| format!(", {} cached", per_mtok(c)))
                    .unwrap_or_default();
                let total = match u.cost_usd {
                    Some(d) => dollars(d),
                    None => "unknown (an earlier model has no price)".to_string(),
                };
                format!(
                    "{total} at {name}'s {} in{cached}, {} out a million tokens",
                    per_mtok(p.input_per_mtok),
                    per_mtok(p.output_per_mtok)
                )
            }
            None => format!("unknown: no price for {name} (the config's [prices.\"{name}\"] sets one)"),
        };
        rows.push(("cost".to_string(), cost));
        if let Some(entry) = listed {
            rows.push(("log".to_string(), entry.log_path.clone()));
        }
        rows
    }

    /// The answer `/status` waited for: its rows go into the transcript.
    pub fn on_status_report(&mut self, sessions: &[SessionEntry]) {
        let rows = self.status_rows(sessions);
        self.transcript.push_local(Entry::Info { rows });
        self.chat.scroll = 0;
    }
}
