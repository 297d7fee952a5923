//! Opening what a fork into a new workspace made (SPEC §5.1): the new session, with the source's
//! model and backend, as a new actor of this service. The files and the session are made on the
//! source's actor (`Core::fork_into_workspace`).

use std::path::Path;
use std::sync::Arc;

use retrace_model::{open_model, ModelOptions};
use retrace_protocol::{Error, WorkspaceFork, WorkspaceForkRequest};

use super::{agents, blocking, Service};
use crate::bus::EventBus;
use crate::core::Core;
use crate::error::ControlError;
use crate::handle::SessionHandle;

impl Service {
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
