//! The sessions of a workspace as every frontend lists them: from their logs' first lines, newest
//! first, with their first prompts, turns, last use and where they came from. Reading needs no
//! lease (SPEC §6).

use std::collections::BTreeMap;
use std::path::Path;

use retrace_protocol::{SessionEntry, SessionId};
use retrace_session::{list_sessions, Session, SessionListing};

use crate::error::Result;
use crate::paths::DataRoot;
use crate::view::{first_line, open_for_reading};

/// The session logs of `workspace` (a session is listed from its workspace and any directory
/// under it; all when `None`), newest first, from their first lines only. Old flat logs (format 1)
/// record no workspace, so they could be any workspace's: they are listed for every workspace,
/// after its sessions (SPEC §6).
pub(crate) fn listed(data: &DataRoot, workspace: Option<&Path>) -> Result<Vec<SessionListing>> {
    let all = list_sessions(&data.sessions_dir(), None)?.sessions;
    Ok(of_workspace(all, workspace))
}

/// The sessions of `all` (oldest first) that [`listed`] keeps for `workspace`, newest first.
fn of_workspace(all: Vec<SessionListing>, workspace: Option<&Path>) -> Vec<SessionListing> {
    let here = workspace.map(|w| std::fs::canonicalize(w).unwrap_or_else(|_| w.to_path_buf()));
    all.into_iter()
        .rev()
        .filter(|s| match (&here, &s.workspace) {
            (Some(here), Some(w)) => here.starts_with(w),
            _ => true,
        })
        .collect()
}

/// Where a listed session came from, as listings show it.
fn origin(f: &retrace_session::ForkedFrom) -> retrace_protocol::SessionOrigin {
    retrace_protocol::SessionOrigin {
        session_id: f.session_id.clone(),
        turn: f.turn,
        directory: f.directory.clone(),
        git_worktree: f.git_worktree,
    }
}

/// The sessions of `workspace` as listings show them (see [`listed`]), with their head and turn
/// counts, first prompt and last use.
pub(crate) fn sessions(data: &DataRoot, workspace: Option<&Path>) -> Result<Vec<SessionEntry>> {
    let dir = data.sessions_dir();
    let all = list_sessions(&dir, None)?.sessions;
    // Each session's forks into new workspaces (whatever workspace they are in), oldest first.
    let mut forks: BTreeMap<SessionId, Vec<SessionId>> = BTreeMap::new();
    for s in &all {
        if let Some(f) = s.forked_from.as_ref().filter(|f| f.directory.is_some()) {
            forks.entry(f.session_id.clone()).or_default().push(s.id.clone());
        }
    }
    let (mut current, mut old) = (Vec::new(), Vec::new());
    for s in of_workspace(all, workspace) {
        // Only an old flat log needs its sidecar to count its turns.
        let opened = match s.format {
            1 => open_for_reading(data, &s.id, false).map(|(open, _)| open),
            _ => Session::open_reader(&dir, &s.id).map_err(Into::into),
        };
        let (heads, turns, first_prompt) = match opened {
            Ok(open) => {
                let turns = open.turns();
                let first = turns
                    .first()
                    .and_then(|t| open.message(&t.message_id))
                    .map(|m| first_line(&m.content));
                (open.heads().len(), turns.len(), first)
            }
            Err(_) => (0, 0, None),
        };
        let last_used_at = std::fs::metadata(&s.log_path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| {
                time::OffsetDateTime::from(t)
                    .format(&time::format_description::well_known::Rfc3339)
                    .ok()
            });
        let entry = SessionEntry {
            id: s.id.clone(),
            format: s.format,
            workspace: s.workspace,
            created_at: s.created_at,
            log_path: s.log_path.to_string_lossy().into_owned(),
            checkpoint_dir: data.sidecar(&s.id).to_string_lossy().into_owned(),
            heads,
            turns,
            first_prompt,
            last_used_at,
            forked_from: s.forked_from.as_ref().map(origin),
            forks: forks.remove(&s.id).unwrap_or_default(),
        };
        match entry.workspace {
            Some(_) => current.push(entry),
            None => old.push(entry),
        }
    }
    // Format-1 logs have no creation time: by id, so the order is the same every time.
    old.sort_by(|a, b| a.id.cmp(&b.id));
    current.extend(old);
    Ok(current)
}
