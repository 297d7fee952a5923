//! A turn's results (SPEC §5.7): the store's diff of every file the turn changed, with the
//! turn's shell commands from the session log.

use retrace_checkpoint::CheckpointStore;
use retrace_protocol::{Role, ToolStatus, TurnCommand, TurnResults};
use retrace_session::{MessageKind, Session, StoredDiffs};

use crate::error::Result;

/// The results of retained turn `turn`; its commands when the session knows the turn.
pub(crate) fn turn_results(
    session: Option<&Session>,
    store: &CheckpointStore,
    turn: u64,
) -> Result<TurnResults> {
    let files = store.turn_files(turn)?;
    let Some(t) = store.turn(turn) else {
        return Err(retrace_checkpoint::CheckpointError::UnknownTurn(turn).into());
    };
    Ok(TurnResults {
        turn,
        prompt: t.prompt.clone(),
        coverage: t.coverage(),
        files,
        commands: session.map(|s| commands_of(s, turn)).unwrap_or_default(),
        gaps: t.gaps.clone(),
    })
}

/// Every version of `path` the session knows (SPEC §5.8); a path it never touched is `not_found`.
pub(crate) fn file_history(
    store: &CheckpointStore,
    path: &std::path::Path,
) -> Result<retrace_protocol::FileHistory> {
    let h = store.file_history(path)?;
    if h.versions
        .iter()
        .all(|v| v.origin == retrace_protocol::VersionOrigin::Now)
    {
        return Err(retrace_protocol::Error::not_found(
            retrace_protocol::Missing::File,
            h.path.clone(),
            format!("this session never touched `{}`, so it has no history", h.path),
        )
        .into());
    }
    Ok(h)
}

/// The shell commands turn `turn` ran, in order, with how each ended.
fn commands_of(session: &Session, turn: u64) -> Vec<TurnCommand> {
    let Some(info) = session.turns().into_iter().find(|t| t.turn == turn) else {
        return Vec::new();
    };
    let Ok(path) = session.project(&info.head) else {
        return Vec::new();
    };
    let Some(start) = path.iter().position(|m| m.id == info.message_id) else {
        return Vec::new();
    };
    let rest = &path[start + 1..];
    let end = rest
        .iter()
        .position(|m| m.kind == MessageKind::Message && m.role == Role::User)
        .unwrap_or(rest.len());
    let rest = &rest[..end];
    let none = StoredDiffs::default();
    let mut out = Vec::new();
    for m in rest.iter().filter(|m| m.role == Role::Assistant) {
        for call in m.tool_calls.iter().filter(|c| c.name == "bash") {
            let command = serde_json::from_str::<serde_json::Value>(&call.arguments)
                .ok()
                .and_then(|v| v.get("command")?.as_str().map(str::to_string))
                .unwrap_or_else(|| call.arguments.clone());
            let answer = rest
                .iter()
                .find(|r| r.role == Role::Tool && r.tool_call_id.as_deref() == Some(call.id.as_str()));
            let record = answer.and_then(|r| r.outcome.as_ref()?.record(r.id.as_str(), &none));
            let (status, exit_code, duration_ms) = match (&record, answer) {
                (Some(r), Some(a)) => (
                    r.status,
                    r.exit_code.or_else(|| exit_code_in(&a.content)),
                    r.duration_ms,
                ),
                (None, Some(a)) => (
                    crate::items::build::legacy_status(&a.content),
                    exit_code_in(&a.content),
                    None,
                ),
                (_, None) => (ToolStatus::Cancelled, None, None),
            };
            out.push(TurnCommand {
                command,
                exit_code,
                duration_ms,
                status,
            });
        }
    }
    out
}

/// The exit code a shell result's text ends with (`[exit code N]`, as the bash tool writes it).
fn exit_code_in(text: &str) -> Option<i32> {
    let last = text.trim_end().lines().last()?;
    last.strip_prefix("[exit code ")?.strip_suffix(']')?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exit_code_of_an_older_result_is_read_from_its_last_line() {
        assert_eq!(exit_code_in("out\n[exit code 3]"), Some(3));
        assert_eq!(exit_code_in("out\n[exit code -1]\n"), Some(-1));
        assert_eq!(exit_code_in("[killed by signal 9]"), None);
        assert_eq!(exit_code_in("error: timed out"), None);
    }
}
