//! [`Service`]: lists, creates and opens sessions, and keeps one actor per open session so that
//! every frontend of a process (the CLI, the terminal UI, the HTTP server) shares it.
//!
//! The service holds no strong reference to an actor: a session stays open exactly as long as a
//! handle to it exists. Opening a session that is still closing (its last handle just went, its
//! turn is being cancelled) waits for it to finish, so the lease is free again. Calls go one way:
//! a handle never reaches back to the service, so a new session like an open one is
//! [`Service::create_like`], called by a frontend that holds both.
//!
//! Beside opening: how a session's agent is set up ([`agents`]), naming a session by a prefix of
//! its id ([`resolve`]), deleting and pruning sessions ([`delete`]), opening
//! what a fork into a new workspace made ([`fork_workspace`]), repairing a log
//! ([`log_repair`]).

use std::path::Path;
use std::sync::{Arc, Mutex, Weak};

use retrace_agent::Agent;
use retrace_model::{open_model, ModelOptions};
use retrace_protocol::{CheckpointBackend, Error, ErrorCode, ModelSpec, SessionEntry, SessionId};
use tokio::sync::{mpsc, watch};

use crate::actor::Actor;
use crate::bus::EventBus;
use crate::core::{canonical_workspace, Core};
use crate::error::{coded, ControlError, Result};
use crate::handle::SessionHandle;
use crate::options::ServiceOptions;
use crate::paths::DataRoot;
use crate::session_list::sessions;
use crate::shared::{lock, Shared};
use crate::view::{session_id, SessionReader};

mod agents;
mod delete;
mod fork_workspace;
mod log_repair;
mod resolve;

pub use delete::PruneRequest;

/// Requests a handle may queue before `send` waits.
const QUEUE: usize = 64;

/// One actor the service started.
struct Entry {
    /// The id it was opened under (an old flat log keeps its id here after a write moved the
    /// session to a new one, so opening the old id again finds this actor).
    opened_as: SessionId,
    shared: Weak<Shared>,
    tx: mpsc::WeakSender<crate::actor::Command>,
    exited: watch::Receiver<bool>,
}

struct Inner {
    opts: ServiceOptions,
    data: DataRoot,
    actors: Mutex<Vec<Entry>>,
    /// Opening is serialised, so two requests for one session start one actor.
    opening: tokio::sync::Mutex<()>,
}

/// Opens sessions and hands out [`SessionHandle`]s. Cloneable; clones share the open sessions.
/// Needs a multi-threaded tokio runtime (tools run on its workers).
#[derive(Clone)]
pub struct Service {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("opts", &self.inner.opts)
            .finish_non_exhaustive()
    }
}

/// What is needed to open a session: an existing handle, or an actor to wait for first.
enum Found {
    Open(SessionHandle),
    Closing(watch::Receiver<bool>),
    Nothing,
}

impl Service {
    /// A service on `opts.data_root`.
    pub fn new(opts: ServiceOptions) -> Service {
        let data = DataRoot::at(&opts.data_root);
        Service {
            inner: Arc::new(Inner {
                opts,
                data,
                actors: Mutex::new(Vec::new()),
                opening: tokio::sync::Mutex::new(()),
            }),
        }
    }

    /// The data root.
    pub fn data_root(&self) -> &Path {
        self.inner.data.root()
    }

    /// The configured MCP servers of a session on `workspace`, each started now (and stopped
    /// again before this returns) to list its tools: what `retrace mcp list` shows.
    pub async fn mcp_status(
        &self,
        workspace: &Path,
    ) -> std::result::Result<Vec<retrace_protocol::McpServerStatus>, Error> {
        let ws = agents::workspace_of(workspace, &self.inner.opts)?;
        let servers = agents::mcp_servers(&self.inner.opts, ws.root(), ws.hidden_env().to_vec());
        Ok(servers.status().await)
    }

    /// [`Service::mcp_status`], and what the config names that the servers do not list (a
    /// misspelt tool in `tool_permissions` or `read_only_tools`), in words.
    pub async fn mcp_list(
        &self,
        workspace: &Path,
    ) -> std::result::Result<(Vec<retrace_protocol::McpServerStatus>, Vec<String>), Error> {
        let ws = agents::workspace_of(workspace, &self.inner.opts)?;
        let servers = agents::mcp_servers(&self.inner.opts, ws.root(), ws.hidden_env().to_vec());
        let status = servers.status().await;
        Ok((status, servers.config_notices()))
    }

    /// The sessions of `workspace` (found from the workspace or any directory under it; all
    /// sessions when `None`), newest first, then every old flat log (format 1, workspace unknown).
    /// Needs no lease; the directory is read on a blocking thread.
    pub async fn sessions(&self, workspace: Option<&Path>) -> std::result::Result<Vec<SessionEntry>, Error> {
        let (data, workspace) = (self.inner.data.clone(), workspace.map(Path::to_path_buf));
        Ok(blocking("listing the sessions", move || {
            sessions(&data, workspace.as_deref())
        })
        .await?)
    }

    /// The other process that holds session `id` (another `retrace serve`, a terminal UI), if
    /// any: this process can read it ([`Service::reader`]), not change it. Never this process (a
    /// session it has open is not even looked at: its lease is not touched).
    pub fn held_by(&self, id: &SessionId) -> Option<retrace_protocol::SessionHolder> {
        if matches!(self.find(id), Found::Open(_) | Found::Closing(_)) {
            return None;
        }
        crate::held::held_elsewhere(&self.inner.data.sessions_dir(), id)
    }

    /// The session a frontend opens when none is named: the newest of `workspace` that no other
    /// process holds; `None` when there is none (a new one is started then).
    pub async fn newest_free(&self, workspace: &Path) -> std::result::Result<Option<SessionId>, Error> {
        let (service, workspace) = (self.clone(), workspace.to_path_buf());
        Ok(blocking("listing the sessions", move || {
            Ok(sessions(&service.inner.data, Some(&workspace))?
                .into_iter()
                // old flat logs record no workspace: never taken for this one's
                .filter(|e| e.workspace.is_some())
                .map(|e| e.id)
                .find(|id| service.held_by(id).is_none()))
        })
        .await?)
    }

    /// The logs of the data root `sessions` cannot list (unreadable, empty, not a session log), each
    /// as its path and the problem: a frontend warns about them, since a log that is never listed
    /// is never pruned either (`delete_session` removes one by its id).
    pub fn unlisted_sessions(&self) -> std::result::Result<Vec<(String, String)>, Error> {
        let list = retrace_session::list_sessions(&self.inner.data.sessions_dir(), None)
            .map_err(ControlError::from)?;
        Ok(list
            .problems
            .into_iter()
            .map(|p| (p.path.to_string_lossy().into_owned(), p.problem))
            .collect())
    }

    /// Session `id` opened for reading only: no lease, nothing written, works while another
    /// process writes it.
    pub fn reader(&self, id: &str) -> std::result::Result<SessionReader, Error> {
        let mut reader = SessionReader::open(&self.inner.data, id)?;
        // Its tally at this service's prices, with the model its log records.
        let mut tally = crate::tally::Tally::of(&self.inner.opts);
        tally.use_model(reader.recorded_model());
        reader.tally = tally;
        Ok(reader)
    }

    /// A new session on `workspace`. Its model (the service's) is opened first, so a missing key
    /// creates nothing.
    pub async fn create(&self, workspace: &Path) -> std::result::Result<SessionHandle, Error> {
        self.create_with_model(workspace, None).await
    }

    /// A new session on `workspace` with `model` (`None`: the service's). The model is opened
    /// first, so one that cannot be used (a missing key, a missing script) creates nothing.
    pub async fn create_with_model(
        &self,
        workspace: &Path,
        model: Option<&ModelSpec>,
    ) -> std::result::Result<SessionHandle, Error> {
        self.create_with(workspace, model, None).await
    }

    /// A new session on `workspace` with `model` (`None`: the service's) and checkpoint `backend`
    /// (`None`: the service's), which it keeps. The model is opened first, so one that cannot be
    /// used creates nothing.
    pub async fn create_with(
        &self,
        workspace: &Path,
        model: Option<&ModelSpec>,
        backend: Option<CheckpointBackend>,
    ) -> std::result::Result<SessionHandle, Error> {
        let spec = model.or(self.inner.opts.model.as_ref()).cloned();
        let _g = self.inner.opening.lock().await;
        let model = match &spec {
            Some(spec) => Some(
                open_model(spec, &ModelOptions::default(), &*self.inner.opts.env)
                    .map_err(ControlError::from)?,
            ),
            None => None,
        };
        let (data, ws, retention) = (
            self.inner.data.clone(),
            workspace.to_path_buf(),
            self.inner.opts.retention,
        );
        let bus = Arc::new(EventBus::new(self.inner.opts.event_buffer));
        let b = bus.clone();
        let (opts, backend) = (
            self.inner.opts.clone(),
            backend.unwrap_or(self.inner.opts.backend),
        );
        let core = blocking("opening the session", move || {
            let mut core = Core::create(&data, &ws, backend, retention, b)?;
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
        Ok(self.start(core, bus, agent, spec))
    }

    /// A new session like the one `handle` holds: on its workspace, with its model (the
    /// service's when it has none). That session stays open, listed and resumable.
    pub async fn create_like(&self, handle: &SessionHandle) -> std::result::Result<SessionHandle, Error> {
        let spec = handle.model_spec().await?;
        let backend = handle.backend();
        self.create_with(handle.workspace(), spec.as_ref(), Some(backend))
            .await
    }

    /// Session `id`, opened for writing (its lease taken), or the handle of this process's open
    /// actor for it. A given `workspace` must be the session's own.
    pub async fn open(
        &self,
        id: &str,
        workspace: Option<&Path>,
    ) -> std::result::Result<SessionHandle, Error> {
        let sid = self.as_stored(session_id(id)?);
        let _g = loop {
            let g = self.inner.opening.lock().await;
            match self.find(&sid) {
                Found::Open(h) => {
                    if let Some(w) = workspace {
                        let w = canonical_workspace(w)?;
                        if w != h.workspace() {
                            return Err(coded(
                                ErrorCode::Usage,
                                format!(
                                    "session {id} belongs to the workspace `{}`, not `{}`",
                                    h.workspace().display(),
                                    w.display()
                                ),
                            )
                            .into());
                        }
                    }
                    return Ok(h);
                }
                Found::Closing(mut exited) => {
                    // Not while holding the opening lock: other sessions open meanwhile.
                    drop(g);
                    let _ = exited.wait_for(|done| *done).await;
                }
                Found::Nothing => break g,
            }
        };
        let (data, ws, retention) = (
            self.inner.data.clone(),
            workspace.map(Path::to_path_buf),
            self.inner.opts.retention,
        );
        let bus = Arc::new(EventBus::new(self.inner.opts.event_buffer));
        let b = bus.clone();
        let opts = self.inner.opts.clone();
        let core = blocking("opening the session", move || {
            let mut core = Core::open(&data, &sid, ws.as_deref(), retention, b)?;
            core.attach_git(agents::workspace_of(core.workspace(), &opts)?)?;
            Ok(core)
        })
        .await?;
        let spec = self.inner.opts.model.clone();
        let agent = match &spec {
            Some(spec) => Some(agents::factory(&self.inner.opts, core.workspace())(spec)?),
            None => None,
        };
        Ok(self.start(core, bus, agent, spec))
    }

    /// The newest session of `workspace` (found from any directory under it), opened for writing.
    /// Old flat logs, which record no workspace, are never taken for it.
    pub async fn open_latest(&self, workspace: &Path) -> std::result::Result<SessionHandle, Error> {
        let (data, workspace) = (self.inner.data.clone(), workspace.to_path_buf());
        let newest = blocking("listing the sessions", move || {
            resolve::latest_of(&data, &workspace)
        })
        .await?;
        self.open(newest.as_str(), None).await
    }

    /// Closes every open session: running turns are cancelled (each keeps what ran and answers
    /// every tool call), then every actor finishes and releases its lease.
    pub async fn shutdown(&self) {
        let closing: Vec<_> = {
            let actors = lock(&self.inner.actors);
            actors
                .iter()
                .map(|e| (e.tx.upgrade(), e.exited.clone()))
                .collect()
        };
        for (tx, _) in &closing {
            if let Some(tx) = tx {
                let _ = tx.send(Box::new(|a: &mut Actor| a.close())).await;
            }
        }
        for (_, mut exited) in closing {
            let _ = exited.wait_for(|done| *done).await;
        }
    }

    /// Waits until every session this service opened has closed by itself (its handles dropped,
    /// its work finished or cancelled).
    pub async fn wait_closed(&self) {
        let all: Vec<_> = lock(&self.inner.actors)
            .iter()
            .map(|e| e.exited.clone())
            .collect();
        for mut exited in all {
            let _ = exited.wait_for(|done| *done).await;
        }
    }

    /// What this service has of session `id`.
    fn find(&self, id: &SessionId) -> Found {
        let mut actors = lock(&self.inner.actors);
        actors.retain(|e| !*e.exited.borrow());
        for e in actors.iter() {
            let Some(shared) = e.shared.upgrade() else {
                continue;
            };
            if &shared.session_id() != id && &e.opened_as != id {
                continue;
            }
            return match e.tx.upgrade() {
                Some(tx) => Found::Open(SessionHandle { tx, shared }),
                None => Found::Closing(e.exited.clone()),
            };
        }
        Found::Nothing
    }

    fn start(
        &self,
        core: Core,
        bus: Arc<EventBus>,
        agent: Option<Agent>,
        spec: Option<ModelSpec>,
    ) -> SessionHandle {
        let mut core = core;
        core.set_tally(crate::tally::Tally::of(&self.inner.opts));
        let shared = Arc::new(Shared::new(
            bus,
            core.workspace().to_path_buf(),
            core.backend(),
            core.session_id().clone(),
        ));
        let (tx, rx) = mpsc::channel(QUEUE);
        let (exited_tx, exited) = watch::channel(false);
        let actor = Actor::new(
            core,
            shared.clone(),
            agent,
            spec,
            agents::factory(&self.inner.opts, &shared.workspace),
        );
        tokio::spawn(actor.run(rx, exited_tx));
        lock(&self.inner.actors).push(Entry {
            opened_as: shared.session_id(),
            shared: Arc::downgrade(&shared),
            tx: tx.downgrade(),
            exited,
        });
        SessionHandle { tx, shared }
    }
}

/// Runs blocking file-system work off the async workers; `what` names it if its task fails.
async fn blocking<T: Send + 'static>(
    what: &'static str,
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| coded(ErrorCode::Internal, format!("{what} failed: {e}")))?
}
