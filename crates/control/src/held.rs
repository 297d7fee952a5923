//! Sessions another process holds (another `retrace serve`, a terminal UI): who holds one, decided
//! here for every frontend, and what a reader shows of it — the session at one instant, as a
//! snapshot a frontend renders read-only (nothing of it can be changed from here).

use std::path::Path;

use retrace_protocol::{Error, SessionHolder, SessionId, SessionSnapshot, SessionStatus};

use crate::view::{heads_of, sound, SessionReader};

/// The other process that holds session `id`'s writer lease (its log and lease under `dir`), if
/// any: never this process, whose own open sessions are not held "elsewhere".
pub(crate) fn held_elsewhere(dir: &Path, id: &SessionId) -> Option<SessionHolder> {
    let h = retrace_session::Lease::holder(dir, id).ok().flatten()?;
    if h.is_this_process() {
        return None;
    }
    // A lease whose file was removed says so in words, not as a time.
    let since = h
        .started_at
        .starts_with(|c: char| c.is_ascii_digit())
        .then(|| h.started_at.clone());
    let same_host = h.is_this_host();
    Some(SessionHolder::new(h.pid, h.host, same_host, since))
}

impl SessionReader {
    /// The other process that holds this session, if any ([`held_elsewhere`]).
    pub fn held_by(&self) -> Option<SessionHolder> {
        held_elsewhere(&self.sessions_dir, self.session.id())
    }

    /// The model the log records (that of its latest turn), when its record parses.
    pub(crate) fn recorded_model(&self) -> Option<retrace_protocol::ModelSpec> {
        self.session.model().and_then(|m| {
            let mut spec = retrace_protocol::ModelSpec::parse(&m.spec).ok()?;
            spec.base_url = m.base_url.clone();
            Some(spec)
        })
    }

    /// The session's status as its log records it: its workspace, selected head, recorded model
    /// and plan mode; nothing runs here and no event is numbered (`last_event_seq` 0).
    pub fn status(&self) -> SessionStatus {
        SessionStatus {
            session_id: self.session.id().clone(),
            workspace: self.session.workspace().unwrap_or_default().to_string(),
            head_id: self.session.selected().clone(),
            running: None,
            model: self.session.model().map(|m| m.spec.clone()),
            model_spec: self.session.model().map(|m| m.spec.clone()),
            plan_mode: self.session.plan_mode(),
            backend: self.session.backend(),
            last_event_seq: 0,
        }
    }

    /// The session at one instant, as a frontend shows one it cannot change: its status, the
    /// selected head's items, the heads and the context its conversation took; no approval can
    /// be answered here, and there is no event stream to follow (`last_event_seq` 0). Refused
    /// while the log has a line that cannot be read.
    pub fn snapshot(&self) -> Result<SessionSnapshot, Error> {
        sound(&self.session)?;
        let head = self.session.selected().clone();
        let items = self.items(None)?;
        let context_tokens = self
            .session
            .last_usage(&head)
            .map_err(crate::error::ControlError::from)?
            .map(|u| u.prompt_tokens.saturating_add(u.completion_tokens));
        Ok(SessionSnapshot {
            status: self.status(),
            items,
            heads: heads_of(&self.session),
            usage: self.tally.usage(&self.session, &head)?,
            head_id: head,
            pending_approvals: Vec::new(),
            context_tokens,
            last_event_seq: 0,
        })
    }
}
