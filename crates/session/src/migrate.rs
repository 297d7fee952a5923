//! Writing to a format-1 log: the log is never touched; a new format-2 session takes the write.
//!
//! The new session's header records `forked_from: {session_id, format: 1, messages}`; its `main`
//! holds copies of the messages the write keeps (new ids, the same roles, contents and tool calls,
//! and a `turn` line with the old number for each user message that opened a turn). A turn, an
//! append or a note keeps every message; a fork or rewind keeps the path up to its fork point; a
//! summary keeps every message and is then made in the new session as usual. The old file stays
//! byte-identical; the caller learns the new id from the result's `session_id` and
//! `migrated_from`, or from [`Session::id`].

use std::fs;

use crate::entry::{Entry, ForkedFrom, MessageEntry, TurnEntry};
use crate::error::{IoContext, Result, SessionError};
use crate::ids::{HeadId, MessageId, SessionId};
use crate::session::Session;

impl Session {
    /// Makes a format-1 session writable: creates its format-2 successor holding every message
    /// and switches this `Session` to it (the new lease is held, the old one released). Returns
    /// the old id, or `None` for a format-2 session (nothing to do). The controller calls it before
    /// a turn's checkpoint is opened, so the checkpoint lands in the new session's sidecar.
    pub fn upgrade(&mut self) -> Result<Option<SessionId>> {
        if self.header.is_some() {
            return Ok(None);
        }
        let main = self.head_ix(&HeadId::main())?;
        let keep = self.index.heads[main].len;
        self.migrate(keep, None).map(Some)
    }

    /// Creates the successor of this format-1 session with the first `keep` messages of `main`,
    /// switches to it, and returns the old id.
    pub(crate) fn migrate(&mut self, keep: usize, name: Option<String>) -> Result<SessionId> {
        self.check_writable()?;
        let ws = self
            .opts
            .legacy_workspace
            .as_ref()
            .ok_or_else(|| SessionError::WorkspaceUnknown(self.path.clone()))?;
        let ws = fs::canonicalize(ws).at("resolve the workspace", ws)?;
        let ws = ws
            .to_str()
            .ok_or_else(|| SessionError::NonUtf8Workspace(ws.clone()))?
            .to_string();
        let main = self.head_ix(&HeadId::main())?;
        let entries = self.copied_path(main, keep)?;
        let forked = ForkedFrom {
            session_id: self.id.clone(),
            format: 1,
            messages: keep,
            turn: None,
            head: None,
            directory: None,
            git_worktree: false,
            made: None,
        };
        let next = self
            .opts
            .create_session(&self.dir, ws, Some(forked), entries, name)?;
        let old = std::mem::replace(self, next);
        self.migrated_from = Some(old.id.clone());
        Ok(old.id)
    }

    /// The first `keep` messages of head `h`'s path as the entries of a new session's `main`:
    /// new ids, the same roles, contents and tool calls, and a `turn` line with the old number
    /// for each user message that opened a turn.
    pub(crate) fn copied_path(&self, h: usize, keep: usize) -> Result<Vec<Entry>> {
        let at = self.opts.now()?;
        let mut entries = Vec::with_capacity(keep * 2);
        let mut parent: Option<MessageId> = None;
        for m in self.index.path(h).take(keep) {
            let msg = &self.index.nodes[m].msg;
            let id = self.new_message_id();
            entries.push(Entry::Message(MessageEntry {
                id: id.clone(),
                parent: parent.replace(id.clone()),
                head: HeadId::main(),
                role: msg.role,
                content: msg.content.clone(),
                tool_calls: msg.tool_calls.clone(),
                tool_call_id: msg.tool_call_id.clone(),
                usage: msg.usage,
                reasoning: msg.reasoning.clone(),
                outcome: msg.outcome.clone(),
                at: at.clone(),
            }));
            if let Some(turn) = msg.turn {
                entries.push(Entry::Turn(TurnEntry {
                    turn,
                    head: HeadId::main(),
                    message_id: id,
                    at: at.clone(),
                }));
            }
        }
        Ok(entries)
    }
}
