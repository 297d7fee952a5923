//! What the status line shows: the model, the head, the turn, the tokens, the session, and
//! whether something runs.

use retrace_protocol::{SessionStatus, TokenUsage};

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
    /// The newest turn seen.
    pub turn: Option<u64>,
    /// Tokens counted over the turns of this UI.
    pub usage: TokenUsage,
    /// Whether a turn (or a summary) runs.
    pub running: bool,
    /// The spinner's frame, advanced by [`crate::App::on_tick`].
    pub spinner: usize,
    /// Whether plan mode is on (the model only reads; the status line says `PLAN`).
    pub plan_mode: bool,
    /// Whether a compaction asked for with `/compact` runs.
    pub compacting: bool,
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
            running: s.running.is_some(),
            spinner: 0,
            plan_mode: s.plan_mode,
            compacting: false,
        }
    }
}
