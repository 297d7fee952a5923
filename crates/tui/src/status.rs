//! What the status line shows: the model, how full its context is, the tokens and what they
//! cost, the turn and the head, and whether something runs; and what the UI is told about models
//! to say so (their context windows and prices, [`Meter`]).

use retrace_protocol::{ModelSpec, Prices, SessionStatus, TokenUsage};

/// What the status line shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatusInfo {
    /// The model (`deepseek:deepseek-chat`, `demo`), if one is set up.
    pub model: Option<String>,
    /// The workspace root.
    pub workspace: String,
    /// The session id.
    pub session: String,
    /// The selected head.
    pub head: String,
    /// The newest turn of the conversation shown (of its items, or the one running), numbered as
    /// the checkpoints are; `None` before its first (a new session, or one rewound to before
    /// its first turn).
    pub turn: Option<u64>,
    /// Tokens counted over the turns of this UI.
    pub usage: TokenUsage,
    /// The tokens of the conversation at its last model request (its prompt and its answer: what
    /// the next request starts from; on opening, as the log counted it), or after a compaction;
    /// `None` until one is known, and for an empty conversation.
    pub context_tokens: Option<u64>,
    /// What the turns of this UI cost, in US dollars, over those whose model has a price.
    pub cost: f64,
    /// Whether a turn counted tokens of a model without a known price (then the cost is not
    /// shown: it would be too low).
    pub unpriced: bool,
    /// Whether a turn (or a summary) runs.
    pub running: bool,
    /// The spinner's frame, advanced by [`crate::App::on_tick`].
    pub spinner: usize,
    /// Whether plan mode is on (the model only reads; the status line says `PLAN`).
    pub plan_mode: bool,
    /// Whether a compaction asked for with `/compact` runs.
    pub compacting: bool,
    /// The checkpoint backend the session was created with (`/status` says it).
    pub backend: retrace_protocol::CheckpointBackend,
}

impl StatusInfo {
    /// The status of a freshly opened session.
    pub fn from_status(s: &SessionStatus) -> StatusInfo {
        StatusInfo {
            model: s.model.clone(),
            workspace: s.workspace.clone(),
            session: s.session_id.to_string(),
            head: s.head_id.to_string(),
            turn: s.running.map(|r| r.turn),
            usage: TokenUsage::default(),
            context_tokens: None,
            cost: 0.0,
            unpriced: false,
            running: s.running.is_some(),
            spinner: 0,
            plan_mode: s.plan_mode,
            compacting: false,
            backend: s.backend,
        }
    }
}

/// What the UI knows about models beyond their names: their prices (the config's, else the
/// known ones) and the context window the config sets for every model, if it does.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Meter {
    /// Prices by model name.
    pub prices: Prices,
    /// `[model] context_window`, when the config sets it.
    pub context_window: Option<u64>,
}

impl Meter {
    /// The context window of the model `label` names (`deepseek:deepseek-chat at URL`).
    pub fn window(&self, label: &str) -> u64 {
        self.context_window.unwrap_or_else(|| {
            let spec = label.split(" at ").next().unwrap_or(label);
            let spec = ModelSpec::parse(spec).unwrap_or_else(|_| ModelSpec::default_remote());
            retrace_control::default_context_window(&spec)
        })
    }
}

/// Why the model the UI was started with cannot answer yet: what the first screen explains.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelProblem {
    /// The model that was asked for (`deepseek:deepseek-chat`).
    pub model: String,
    /// Why it cannot answer (`DEEPSEEK_API_KEY is not set: …`).
    pub reason: String,
    /// The variable its key is read from, when a key is what is missing.
    pub key_env: Option<String>,
}

/// A count of tokens in a few characters: `950`, `12.3k`, `123k`, `1.2M`.
pub fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..100_000 => format!("{:.1}k", n as f64 / 1e3),
        100_000..1_000_000 => format!("{}k", n / 1_000),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// An amount of US dollars: four decimals below ten cents, two above.
pub fn dollars(d: f64) -> String {
    if d < 0.1 {
        format!("${d:.4}")
    } else {
        format!("${d:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_numbers() {
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(12_345), "12.3k");
        assert_eq!(tokens(123_456), "123k");
        assert_eq!(tokens(1_234_567), "1.2M");
        assert_eq!(dollars(0.00421), "$0.0042");
        assert_eq!(dollars(1.5), "$1.50");
    }

    #[test]
    fn windows_by_model_unless_configured() {
        let m = Meter::default();
        assert_eq!(m.window("deepseek:deepseek-chat at http://127.0.0.1:1"), 65_536);
        assert_eq!(m.window("openai:gpt-4o"), 128_000);
        let m = Meter {
            context_window: Some(10_000),
            ..Meter::default()
        };
        assert_eq!(m.window("openai:gpt-4o"), 10_000);
    }
}
