//! A fork into a new workspace (SPEC §5.1 "Fork into a new workspace"): a new session whose
//! conversation is the head's path up to just before a turn (as a fork makes it) and whose
//! workspace is a new directory holding the files as they stood when the turn started — the
//! source's files now (`workspace_copy`), with every change recorded from the turn on taken back
//! by the checkpoint store (`write_turn_start`). The source session and workspace are only read.

use std::path::Path;

use retrace_checkpoint::{CheckpointError, CheckpointStore};
use retrace_protocol::{ErrorCode, HeadId, WorkspaceFork};
use retrace_session::{Session, SessionCopy, SessionOptions};
use retrace_tools::tree_walk::TreeWalk;
use retrace_tools::Workspace;

use super::Core;
use crate::error::{coded, ControlError, Result};
use crate::paths::DataRoot;
use crate::workspace_copy::{check_new_dir, check_stopping, make, repo_of};

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
        let source = ForkSource {
            session: &self.session,
            store: &self.store,
            data: &self.data,
            workspace: &self.workspace,
        };
        source.fork_into_workspace(turn, dir, name, ws)
    }
}

/// What a fork into a new workspace reads: the source session, its checkpoint store (opened
/// read-only, or the writer's), the data root and the source workspace (canonical).
pub(crate) struct ForkSource<'a> {
    pub(crate) session: &'a Session,
    pub(crate) store: &'a CheckpointStore,
    pub(crate) data: &'a DataRoot,
    pub(crate) workspace: &'a Path,
}

impl ForkSource<'_> {
    /// [`Core::fork_into_workspace`], from what it reads only: nothing of the source is written.
    pub(crate) fn fork_into_workspace(
        &self,
        turn: u64,
        dir: &Path,
        name: Option<String>,
        ws: &Workspace,
    ) -> Result<(Session, WorkspaceFork)> {
        crate::view::sound(self.session)?;
        let (head, boundary) = match super::compaction::conversation_source(self.session, turn) {
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
                    "the files as they stood when turn {turn} started are not known: the session has no checkpoint of that turn (a turn copied from another session has none, or its checkpoint files are missing)"
                ),
            ),
            other => ControlError::from(other),
        })?;
        let repo = repo_of(self.workspace)?;
        let new = check_new_dir(dir, self.workspace, repo.as_ref(), self.data.root())?;
        let made = make(ws, repo.as_ref(), &new)?;
        let finished = (|| -> Result<(Session, retrace_checkpoint::TurnStartCopy)> {
            let walk = TreeWalk::new(ws);
            let source = self.workspace.to_path_buf();
            check_stopping()?;
            let done = self
                .store
                .write_turn_start(turn, &made.workspace, &|rel| made.excluded(&walk, &source, rel))?;
            check_stopping()?;
            made.check_still_there()?;
            let opts = SessionOptions {
                backend: self.session.backend(),
                ..SessionOptions::default()
            };
            let copy = SessionCopy {
                workspace: made.workspace.clone(),
                turn,
                directory: made.dir.to_string_lossy().into_owned(),
                git_worktree: made.git_worktree,
                made: Some(made.identity.clone()),
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
                made.undo();
                return Err(e);
            }
        };
        made.finish();
        // What the copy left out but the turn's start wrote (or wants absent) is not left out.
        let settled: std::collections::BTreeSet<&str> = done.settled.iter().map(String::as_str).collect();
        let mut skipped: Vec<_> = made
            .skipped
            .into_iter()
            .filter(|s| !s.path.as_deref().is_some_and(|p| settled.contains(p)))
            .collect();
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
