//! Opening what a fork into a new workspace made (SPEC §5.1): the new session, with the source's
//! model and backend, as a new actor of this service. The files and the session are made on the
//! source's actor (`Core::fork_into_workspace`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use retrace_model::{open_model, ModelOptions};
use retrace_protocol::{Error, ErrorCode, ErrorDetails, WorkspaceFork, WorkspaceForkRequest};
use retrace_session::{Lease, SessionError};

use super::{agents, blocking, Service};
use crate::bus::EventBus;
use crate::core::{canonical_workspace, Core, ForkSource};
use crate::error::coded;
use crate::error::ControlError;
use crate::handle::SessionHandle;
use crate::view::{open_for_reading, session_id};

/// `usage` for a directory that names nothing: empty, or with a NUL byte.
fn check_given(given: &str) -> std::result::Result<(), Error> {
    let why = if given.is_empty() {
        "is empty"
    } else if given.contains('\0') {
        "holds a NUL byte"
    } else {
        return Ok(());
    };
    Err(Error::new(
        ErrorCode::Usage,
        format!("the directory named for the new workspace {why}; name a new or empty directory"),
    )
    .with_details(ErrorDetails::Worktree {
        path: given.to_string(),
    }))
}

impl Service {
    /// Forks session `id` (of `workspace`, when given) at `req.turn` into a new workspace as
    /// [`Service::fork_into_workspace`] does, reading the source only: its log and checkpoint
    /// store are read without its writer lease, so another process may hold it (a terminal UI,
    /// `serve`), even mid-turn — the files are then taken as they are at that moment, with the
    /// changes recorded so far from the turn on taken back. Nothing of the source is written.
    /// The new session is made and closed; returns what was made. An old flat log (format 1),
    /// which records no workspace, is opened as a writer instead.
    pub async fn fork_into_workspace_reading(
        &self,
        id: &str,
        workspace: Option<&Path>,
        req: WorkspaceForkRequest,
    ) -> std::result::Result<WorkspaceFork, Error> {
        check_given(&req.worktree)?;
        let sid = self.as_stored(session_id(id)?);
        let given = workspace.map(canonical_workspace).transpose()?;
        let (data, opts, r) = (self.inner.data.clone(), self.inner.opts.clone(), req.clone());
        let answer = blocking("forking into a new workspace", move || {
            // The source's writer lease, held while its files are read: a turn another process ran
            // meanwhile would leave a copy matching no turn's start. Nothing of the source is
            // written under it (the store and the log are opened for reading).
            let _lease = match Lease::acquire(&data.sessions_dir(), &sid) {
                Ok(l) => l,
                Err(SessionError::Held { holder, .. }) => {
                    return Err(coded(
                        ErrorCode::Busy,
                        format!(
                            "session {sid} is open in another Retrace ({holder}), which may change its files while they are copied; fork it from there (`/fork --worktree DIR` in its terminal UI, or \"Fork into a new workspace\" on its page), or close it and try again"
                        ),
                    ))
                }
                Err(e) => return Err(e.into()),
            };
            let (session, store) = open_for_reading(&data, &sid, false)?;
            let Some(root) = session.workspace().map(PathBuf::from) else {
                return Ok(None);
            };
            if let Some(w) = given.filter(|w| *w != root) {
                return Err(coded(
                    ErrorCode::Usage,
                    format!(
                        "session {sid} belongs to the workspace `{}`, not `{}`",
                        root.display(),
                        w.display()
                    ),
                ));
            }
            if std::fs::canonicalize(&root).ok().as_ref() != Some(&root) {
                return Err(coded(
                    ErrorCode::Usage,
                    format!(
                        "the workspace `{}` of session {sid} does not exist any more (or a symlink stands in its place)",
                        root.display()
                    ),
                ));
            }
            let ws = agents::workspace_of(&root, &opts)?;
            let source = ForkSource {
                session: &session,
                store: &store,
                data: &data,
                workspace: &root,
            };
            let dir = root.join(Path::new(&r.worktree));
            let (_new, answer) = source.fork_into_workspace(r.turn, &dir, r.name, &ws)?;
            Ok(Some(answer))
        })
        .await?;
        match answer {
            Some(a) => Ok(a),
            None => {
                let h = self.open(id, workspace).await?;
                Ok(self.fork_into_workspace(&h, req).await?.1)
            }
        }
    }

    /// Forks the session `source` holds at `req.turn` into a new workspace: a new session whose
    /// conversation ends just before the turn and whose workspace is the new directory
    /// `req.worktree` (absent or empty; a relative path is taken from the source workspace),
    /// holding the files as they stood when the turn started. Returns the new session, open, and
    /// what was made. The source session and workspace are not changed; the model is opened
    /// first, so one that cannot be used makes nothing.
    pub async fn fork_into_workspace(
        &self,
        source: &SessionHandle,
        req: WorkspaceForkRequest,
    ) -> std::result::Result<(SessionHandle, WorkspaceFork), Error> {
        check_given(&req.worktree)?;
        let spec = source
            .model_spec()
            .await?
            .or_else(|| self.inner.opts.model.clone());
        let model = match &spec {
            Some(spec) => Some(
                open_model(spec, &ModelOptions::default(), &*self.inner.opts.env)
                    .map_err(ControlError::from)?,
            ),
            None => None,
        };
        let dir = source.workspace().join(Path::new(&req.worktree));
        let ws = agents::workspace_of(source.workspace(), &self.inner.opts)?;
        let (session, answer) = source.fork_into_workspace(req.turn, dir, req.name, ws).await?;
        let _g = self.inner.opening.lock().await;
        let (data, retention, opts) = (
            self.inner.data.clone(),
            self.inner.opts.retention,
            self.inner.opts.clone(),
        );
        let root = std::path::PathBuf::from(&answer.workspace);
        let bus = Arc::new(EventBus::new(self.inner.opts.event_buffer));
        let b = bus.clone();
        let core = blocking("opening the new session", move || {
            let mut core = Core::adopt(&data, session, root, retention, b)?;
            core.attach_git(agents::workspace_of(core.workspace(), &opts)?)?;
            Ok(core)
        })
        .await?;
        let agent = match (model, &spec) {
            (Some(m), Some(spec)) => Some(agents::agent(
                &self.inner.opts,
                agents::workspace_of(core.workspace(), &self.inner.opts)?,
                m,
                spec,
            )),
            _ => None,
        };
        Ok((self.start(core, bus, agent, spec), answer))
    }
}
