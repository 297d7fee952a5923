//! What the status line shows: the model, how full its context is, the tokens and what they
//! cost (the session's tally, counted by the controller: [`SessionUsage`]), the turn and the
//! head, and whether something runs.

use retrace_protocol::{SessionStatus, SessionUsage};

pub use retrace_protocol::tally::{dollars, tokens};

/// What the status line shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatusInfo {
    /// The model as labelled (`deepseek:deepseek-chat`, `demo`, `openai:gpt-4o at URL` with an
    /// endpoint of its own), if one is set up.
    pub model: Option<String>,
    /// The same model as `--model` takes it (no endpoint), when the controller said it.
    pub model_spec: Option<String>,
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
    /// The session's tally as the controller last said it (a snapshot's, then its `usage`
    /// events): tokens, cost, context, and their words.
    pub usage: SessionUsage,
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
    /// The model as the status line names it: without its endpoint (`/status` shows that).
    pub fn model_name(&self) -> Option<&str> {
        self.model_spec.as_deref().or(self.model.as_deref())
    }

    /// The endpoint of a model that has one of its own (what its label says after the model).
    pub fn model_endpoint(&self) -> Option<&str> {
        let label = self.model.as_deref()?;
        label
            .strip_prefix(self.model_spec.as_deref()?)?
            .strip_prefix(" at ")
    }

    /// The status of a freshly opened session.
    pub fn from_status(s: &SessionStatus) -> StatusInfo {
        StatusInfo {
            model: s.model.clone(),
            model_spec: s.model_spec.clone(),
            workspace: s.workspace.clone(),
            session: s.session_id.to_string(),
            head: s.head_id.to_string(),
            turn: s.running.map(|r| r.turn),
            usage: SessionUsage::default(),
            running: s.running.is_some(),
            spinner: 0,
            plan_mode: s.plan_mode,
            compacting: false,
            backend: s.backend,
        }
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
