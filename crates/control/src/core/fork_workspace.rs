//! A fork into a new workspace (SPEC §5.1 "Fork into a new workspace"): a new session whose
//! conversation is the head's path up to just before a turn (as a fork makes it) and whose
//! workspace is a new directory holding the files as they stood when the turn started — the
//! source's files now (`workspace_copy`), with every change recorded from the turn on taken back
//! by the checkpoint store (`write_turn_start`). The source session and workspace are only read.

use std::path::Path;

use retrace_checkpoint::CheckpointError;
use retrace_protocol::{ErrorCode, HeadId, WorkspaceFork};
use retrace_session::{Session, SessionCopy, SessionOptions};
use retrace_tools::tree_walk::TreeWalk;
use retrace_tools::Workspace;

use super::Core;
use crate::error::{coded, ControlError, Result};
use crate::workspace_copy::{check_new_dir, make, repo_of, undo};

impl Core {
    /// Forks at `turn` into the new directory `dir` (absolute; absent or empty): makes the new
    /// workspace from `ws` (the tools' view of this one), writes the turn's start into it and
    /// creates the new session, opened as a writer. Whatever fails, nothing is left made.
    pub(crate) fn fork_into_workspace(
        &mut self,
        turn: u64,
        dir: &Path,
        name: Option<String>,
        ws: &Workspace,
    ) -> Result<(Session, WorkspaceFork)> {
        crate::view::sound(&self.session)?;
        let (head, boundary) = match self.conversation_source(turn) {
            Some(found) => found,
            None => {
                let head = self.session.selected().clone();
                let b = self
                    .session
                    .boundary(&head, turn)
                    .map_err(super::heads::not_on_head)?;
                (head, b)
            }
        };
        self.store.check_turn_start(turn).map_err(|e| match e {
            CheckpointError::UnknownTurn(_) => coded(
                ErrorCode::Refused,
                format!(
                    "the files as they stood when turn {turn} started are not known: it has no checkpoint (a turn copied from another session)"
                ),
            ),
            other => ControlError::from(other),
        })?;
        let repo = repo_of(&self.workspace)?;
        let outer = repo
            .as_ref()
            .map_or(self.workspace.as_path(), |r| r.top.as_path());
        let new = check_new_dir(dir, outer, self.data.root())?;
        let made = make(ws, repo.as_ref(), &new)?;
        let finished = (|| -> Result<(Session, retrace_checkpoint::TurnStartCopy)> {
            let walk = TreeWalk::new(ws);
            let source = self.workspace.clone();
            let done = self
                .store
                .write_turn_start(turn, &made.workspace, &|rel| made.excluded(&walk, &source, rel))?;
            let opts = SessionOptions {
                backend: self.session.backend(),
                ..SessionOptions::default()
            };
            let copy = SessionCopy {
                workspace: made.workspace.clone(),
                turn,
                directory: made.dir.to_string_lossy().into_owned(),
                git_worktree: made.git_worktree,
                name,
            };
            let session = self.session.copy_into_new(
                &self.data.sessions_dir(),
                &opts,
                &head,
                boundary.before.as_ref(),
                copy,
            )?;
            Ok((session, done))
        })();
        let (session, done) = match finished {
            Ok(f) => f,
            Err(e) => {
                undo(&new, made.git_worktree);
                return Err(e);
            }
        };
        let mut skipped = made.skipped;
        skipped.extend(done.skipped);
        let answer = WorkspaceFork {
            session_id: session.id().clone(),
            head_id: HeadId::main(),
            workspace: session.workspace().unwrap_or_default().to_string(),
            source_session_id: self.session.id().clone(),
            turn,
            git_worktree: made.git_worktree,
            files_restored: done.restored.len(),
            skipped,
        };
        Ok((session, answer))
    }
}
