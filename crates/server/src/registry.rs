//! The sessions the server keeps open: one [`SessionHandle`] per session, opened on demand by id
//! through the [`Service`] (its writer lease taken; a session another process writes is `busy`,
//! and read without the lease instead where a request only reads), and kept until the server
//! stops, so a turn started by one request goes on after it answered and every tab on the session
//! shares one actor and one event stream.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use retrace_control::{Service, SessionHandle, SessionReader};
use retrace_protocol::{Error, ErrorCode, ModelSpec};
use tokio::sync::Mutex;

/// Turns a `model` string of a request into a model (the binary resolves endpoints and key
/// variables from its config).
pub type ModelResolver = Arc<dyn Fn(&str) -> Result<ModelSpec, Error> + Send + Sync>;

/// The server's open sessions.
pub struct Registry {
    service: Service,
    /// The workspace of new sessions when a request names none.
    workspace: PathBuf,
    /// The model every session gets when it opens (`None`: the service's).
    model: Option<ModelSpec>,
    /// `model` was asked for: it wins over a session's recorded model.
    model_wins: bool,
    resolve: ModelResolver,
    open: Mutex<HashMap<String, SessionHandle>>,
    /// Set when the server stops: no session opens after that.
    closing: AtomicBool,
}

impl Registry {
    /// A registry over `service`.
    pub fn new(
        service: Service,
        workspace: PathBuf,
        model: Option<ModelSpec>,
        resolve: ModelResolver,
    ) -> Registry {
        Registry {
            service,
            workspace,
            model,
            model_wins: false,
            resolve,
            open: Mutex::new(HashMap::new()),
            closing: AtomicBool::new(false),
        }
    }

    /// The service.
    pub fn service(&self) -> &Service {
        &self.service
    }

    /// The workspace of new sessions.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The model new sessions get (`serve --model`, else the configured one), if any.
    pub fn default_model(&self) -> Option<&ModelSpec> {
        self.model.as_ref()
    }

    /// A `model` string of a request as a model (endpoints and key variables from the config).
    pub fn resolve(&self, model: &str) -> Result<ModelSpec, Error> {
        (self.resolve)(model)
    }

    /// Session `id`: the handle kept, or the session opened now.
    pub async fn get(&self, id: &str) -> Result<SessionHandle, Error> {
        let mut open = self.open.lock().await;
        self.not_closing()?;
        if let Some(h) = open.get(id) {
            return Ok(h.clone());
        }
        let h = self.service.open(id, None).await?;
        self.give_model(&h).await;
        open.insert(id.to_string(), h.clone());
        let now = h.session_id().to_string();
        if now != id {
            open.insert(now, h.clone());
        }
        Ok(h)
    }

    /// What a request that only reads gets when opening session `id` failed with `failed`: when
    /// another process holds the session (`busy`), `f` of it opened for reading only (no lease),
    /// on a blocking thread; when its log cannot be read that way, or the opening failed for
    /// another reason, `failed` itself.
    pub async fn read_held<T: Send + 'static>(
        &self,
        id: &str,
        failed: Error,
        f: impl FnOnce(&SessionReader) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        if failed.code != ErrorCode::Busy {
            return Err(failed);
        }
        let (service, id) = (self.service.clone(), id.to_string());
        tokio::task::spawn_blocking(move || match service.reader(&id) {
            Ok(reader) => f(&reader),
            Err(_) => Err(failed),
        })
        .await
        .map_err(|e| Error::new(ErrorCode::Internal, format!("reading the session failed: {e}")))?
    }

    /// Makes the server's model win over the one a session's log records (it was asked for).
    pub fn model_wins(mut self, wins: bool) -> Registry {
        self.model_wins = wins;
        self
    }

    /// A new session on `workspace` (else the server's), with `model` (else the server's). A
    /// model asked for is resolved and opened before the session is created: one that cannot be
    /// used is an error that leaves nothing behind.
    pub async fn create(
        &self,
        workspace: Option<&Path>,
        model: Option<&str>,
        backend: Option<retrace_protocol::CheckpointBackend>,
    ) -> Result<SessionHandle, Error> {
        let model = model.map(|m| (self.resolve)(m)).transpose()?;
        let ws = workspace.unwrap_or(&self.workspace);
        if !ws.is_dir() {
            return Err(Error::new(
                ErrorCode::Usage,
                format!("the workspace `{}` is not a directory", ws.display()),
            ));
        }
        let mut open = self.open.lock().await;
        self.not_closing()?;
        let h = match &model {
            Some(spec) => self.service.create_with(ws, Some(spec), backend).await?,
            None => {
                let h = self.service.create_with(ws, None, backend).await?;
                self.give_model(&h).await;
                h
            }
        };
        open.insert(h.session_id().to_string(), h.clone());
        Ok(h)
    }

    /// Forks session `id` into a new workspace (`Service::fork_into_workspace`); the new session
    /// is kept open like any other, for the page that opens it next.
    pub async fn fork_into_workspace(
        &self,
        id: &str,
        req: retrace_protocol::WorkspaceForkRequest,
    ) -> Result<retrace_protocol::WorkspaceFork, Error> {
        let source = self.get(id).await?;
        let (made, answer) = self.service.fork_into_workspace(&source, req).await?;
        let mut open = self.open.lock().await;
        self.not_closing()?;
        open.insert(made.session_id().to_string(), made);
        Ok(answer)
    }

    /// Gives a session the server's model when it was asked for (`serve --model`), else its own
    /// (the one its log records), else the server's, if it has one (a model that cannot be used
    /// now fails the turns, with `model`, instead of the opening).
    async fn give_model(&self, h: &SessionHandle) {
        if let (true, Some(spec)) = (self.model_wins, &self.model) {
            let _ = h.set_model(spec.clone()).await;
            return;
        }
        if let Ok(Some(own)) = h.recorded_model().await {
            // The log records no key variable: the server's resolver gives the provider's, and
            // a key goes only to an endpoint configured for it (never to a URL the log names).
            let configured = (self.resolve)(&own.to_string()).unwrap_or_else(|_| {
                let mut bare = own.clone();
                bare.base_url = None;
                bare.api_key_env = None;
                bare
            });
            let reopened = retrace_control::reopen_recorded_model(&own, configured);
            if let Some(notice) = &reopened.notice {
                eprintln!("retrace: session {}: {notice}", h.session_id());
            }
            if h.set_model(reopened.spec).await.is_ok() {
                return;
            }
        }
        if let Some(spec) = &self.model {
            let _ = h.set_model(spec.clone()).await;
        }
    }

    fn not_closing(&self) -> Result<(), Error> {
        if self.closing.load(Ordering::SeqCst) {
            return Err(Error::new(ErrorCode::Refused, "the server is stopping"));
        }
        Ok(())
    }

    /// Closes every session (running turns are cancelled, each keeps what ran) and releases every
    /// lease; no session opens after this.
    pub async fn shutdown(&self) {
        let mut open = self.open.lock().await;
        self.closing.store(true, Ordering::SeqCst);
        self.service.shutdown().await;
        open.clear();
    }
}
