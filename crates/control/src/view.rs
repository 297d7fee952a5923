//! Read-only views of a session: checkpoints with their visibility per head, heads, transcripts.
//! Reading needs no lease (SPEC §6), so these work while another process writes the session.

use std::collections::BTreeMap;
use std::path::Path;

use retrace_checkpoint::CheckpointStore;
use retrace_protocol::{CheckpointEntry, HeadEntry, SessionEntry, TranscriptEntry, TranscriptToolCall};
use retrace_session::{list_sessions, HeadId, Session, SessionId};

use crate::error::{ControlError, Result};
use crate::paths::DataRoot;

/// A session opened for reading, with its checkpoint store.
pub struct SessionView {
    pub(crate) session: Session,
    pub(crate) store: CheckpointStore,
}

impl std::fmt::Debug for SessionView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionView")
            .field("session", &self.session.id())
            .finish_non_exhaustive()
    }
}

/// Parses a session id given on the command line.
pub fn session_id(id: &str) -> Result<SessionId> {
    let sid = SessionId::new(id);
    if !sid.is_file_safe() {
        return Err(ControlError::Usage(format!("`{id}` is not a valid session id")));
    }
    Ok(sid)
}

/// Opens the sidecar of `session` read-only: against its workspace when it still exists.
pub(crate) fn open_store_read_only(data: &DataRoot, session: &Session) -> Result<CheckpointStore> {
    let dir = data.sidecar(session.id());
    let ws = session.workspace().map(Path::new).filter(|w| w.is_dir());
    Ok(match ws {
        Some(w) => CheckpointStore::open_read_only(&dir, w)?,
        None if dir.is_dir() => CheckpointStore::open_bare(&dir)?,
        None => CheckpointStore::open_read_only(&dir, Path::new("/"))?,
    })
}

impl SessionView {
    /// Opens session `id` for reading.
    pub fn open(data: &DataRoot, id: &str) -> Result<SessionView> {
        let sid = session_id(id)?;
        let session = Session::open_reader(&data.sessions_dir(), &sid)?;
        let store = open_store_read_only(data, &session)?;
        Ok(SessionView { session, store })
    }

    /// The session.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The checkpoint store (read-only).
    pub fn store(&self) -> &CheckpointStore {
        &self.store
    }

    /// The checkpoint list of SPEC §7, seen from the selected head.
    pub fn checkpoints(&self) -> Vec<CheckpointEntry> {
        checkpoints_for(&self.session, &self.store, self.session.selected())
    }

    /// Problems of the session's sidecar (fsck --session).
    pub fn fsck(&self) -> retrace_protocol::FsckReport {
        self.store.fsck()
    }

    /// The heads.
    pub fn heads(&self) -> Vec<HeadEntry> {
        heads_of(&self.session)
    }

    /// The messages of `head` (id or name), or of the selected head.
    pub fn transcript(&self, head: Option<&str>) -> Result<Vec<TranscriptEntry>> {
        transcript_of(&self.session, head)
    }
}

/// The checkpoint list with visibility and availability for `head` (SPEC §5.1, §7).
pub(crate) fn checkpoints_for(
    session: &Session,
    store: &CheckpointStore,
    head: &HeadId,
) -> Vec<CheckpointEntry> {
    let on_head: BTreeMap<u64, bool> = session
        .turns_on(head)
        .map(|ts| ts.into_iter().map(|t| (t.info.turn, t.visible())).collect())
        .unwrap_or_default();
    let infos: BTreeMap<u64, (String, String)> = session
        .turns()
        .into_iter()
        .map(|t| {
            (
                t.turn,
                (t.head.as_str().to_string(), t.message_id.as_str().to_string()),
            )
        })
        .collect();
    store
        .list()
        .into_iter()
        .map(|mut e| {
            let visible = on_head.get(&e.turn).copied().unwrap_or(false);
            if let Some((h, m)) = infos.get(&e.turn) {
                e.head.get_or_insert_with(|| h.clone());
                e.message_id.get_or_insert_with(|| m.clone());
            }
            e.visible = Some(visible);
            e.can_restore_conversation = Some(visible);
            if !visible && e.disabled_reason.is_none() {
                e.disabled_reason = Some("not on this head".into());
            }
            e
        })
        .collect()
}

pub(crate) fn heads_of(session: &Session) -> Vec<HeadEntry> {
    session
        .heads()
        .into_iter()
        .map(|h| HeadEntry {
            id: h.id.as_str().to_string(),
            kind: serde_json::to_value(h.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            name: h.name,
            parent_head: h.parent_head.map(|p| p.as_str().to_string()),
            fork_from: h.fork_from.map(|m| m.as_str().to_string()),
            selected: h.selected,
            retired: h.retired,
            message_count: h.message_count,
            turns: h.turns,
            last_activity: Some(h.last_activity),
        })
        .collect()
}

pub(crate) fn transcript_of(session: &Session, head: Option<&str>) -> Result<Vec<TranscriptEntry>> {
    let head = match head {
        Some(h) => session.resolve_head(h)?,
        None => session.selected().clone(),
    };
    Ok(session
        .project(&head)?
        .into_iter()
        .map(|m| TranscriptEntry {
            id: m.id.as_str().to_string(),
            role: serde_json::to_value(m.role)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            content: m.content.clone(),
            tool_calls: (!m.tool_calls.is_empty()).then(|| {
                m.tool_calls
                    .iter()
                    .map(|c| TranscriptToolCall {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        arguments: c.arguments.clone(),
                    })
                    .collect()
            }),
            tool_call_id: m.tool_call_id.clone(),
            turn: m.turn,
        })
        .collect())
}

/// The sessions of `workspace` (all sessions when `None`), with their head and turn counts.
pub fn sessions(data: &DataRoot, workspace: Option<&Path>) -> Result<Vec<SessionEntry>> {
    let dir = data.sessions_dir();
    let list = list_sessions(&dir, workspace)?;
    let mut out = Vec::new();
    for s in list.sessions {
        let (heads, turns) = match Session::open_reader(&dir, &s.id) {
            Ok(open) => (open.heads().len(), open.turns().len()),
            Err(_) => (0, 0),
        };
        out.push(SessionEntry {
            id: s.id.as_str().to_string(),
            workspace: s.workspace,
            created_at: s.created_at,
            log_path: s.log_path.to_string_lossy().into_owned(),
            checkpoint_dir: data.sidecar(&s.id).to_string_lossy().into_owned(),
            heads,
            turns,
        });
    }
    Ok(out)
}
