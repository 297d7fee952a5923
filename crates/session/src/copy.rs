//! A new session holding part of another's conversation: a fork into a new workspace (SPEC §5.1).
//!
//! The new session's header records `forked_from: {session_id, format, messages, turn, head,
//! directory, git_worktree, made}`; its `main` holds copies of the head's path up to the fork point
//! (new ids, the same roles, contents and tool calls, and a `turn` line with the old number for
//! each user message that opened a turn), as a format-1 log's successor does (`migrate.rs`). The
//! source is only read: its log is not written and its lease is not needed.

use std::fs;
use std::path::Path;

use crate::entry::{ForkedFrom, MadeDir};
use crate::error::{IoContext, Result, SessionError};
use crate::ids::{HeadId, MessageId};
use crate::options::SessionOptions;
use crate::session::Session;

/// What a session forked into a new workspace is made with.
#[derive(Debug, Clone)]
pub struct SessionCopy {
    /// The new session's workspace (it must exist).
    pub workspace: std::path::PathBuf,
    /// The turn the fork is made at.
    pub turn: u64,
    /// The directory made for it (the workspace, or the worktree it is inside).
    pub directory: String,
    /// Whether `directory` is a `git worktree` of the source's repository.
    pub git_worktree: bool,
    /// What identifies `directory` as the one the fork made.
    pub made: Option<MadeDir>,
    /// A name for the new session's `main`.
    pub name: Option<String>,
}

impl Session {
    /// Creates a new session in the sessions directory `dir` with `opts` (its backend among
    /// them), holding `head`'s path up to and including `upto` (`None`: nothing), and opens it as
    /// a writer. This session is not changed.
    pub fn copy_into_new(
        &self,
        dir: &Path,
        opts: &SessionOptions,
        head: &HeadId,
        upto: Option<&MessageId>,
        copy: SessionCopy,
    ) -> Result<Session> {
        let h = self.head_ix(head)?;
        if let Some(n) = copy.name.as_deref() {
            if n.trim().is_empty() {
                return Err(SessionError::EmptyName);
            }
            if let Some(why) = crate::names::name_problem(n) {
                return Err(SessionError::BadName {
                    shown: crate::names::shown(n),
                    why,
                });
            }
        }
        let keep = match upto {
            None => 0,
            Some(m) => {
                let ix = self
                    .index
                    .msg_ix(m.as_str())
                    .ok_or_else(|| SessionError::UnknownMessage(m.clone()))?;
                self.index
                    .position(h, ix)
                    .ok_or_else(|| SessionError::NotOnHead {
                        message: m.clone(),
                        head: head.clone(),
                    })?
                    + 1
            }
        };
        let ws = fs::canonicalize(&copy.workspace).at("resolve the workspace", &copy.workspace)?;
        let ws = ws
            .to_str()
            .ok_or_else(|| SessionError::NonUtf8Workspace(ws.clone()))?
            .to_string();
        let entries = self.copied_path(h, keep)?;
        let forked = ForkedFrom {
            session_id: self.id.clone(),
            format: self.format(),
            messages: keep,
            turn: Some(copy.turn),
            head: Some(head.clone()),
            directory: Some(copy.directory),
            git_worktree: copy.git_worktree,
            made: copy.made,
        };
        opts.create_session(dir, ws, Some(forked), entries, copy.name)
    }
}
