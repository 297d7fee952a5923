//! The flags several commands share, each set one `#[derive(clap::Args)]` struct that a command
//! flattens: which session ([`SessionArgs`], `S` in SPEC §11.1) and which model ([`ModelArgs`]).
//! A command whose flag means something narrower there (`exec`'s `--session` continues the
//! session) rewords the flag's help with `#[command(mut_arg(...))]` on its own struct; the flag
//! and its parsing stay these.

use std::path::{Path, PathBuf};

use retrace_control::{Service, SessionHandle};
use retrace_protocol::ModelSpec;

use crate::common::workspace_arg;
use crate::config::Config;
use crate::failure::Failure;

/// `--session ID | -c [--workspace DIR]`: the session a command works on.
#[derive(Debug, clap::Args)]
pub struct SessionArgs {
    /// The session: its id or any unambiguous prefix of it.
    #[arg(long, value_name = "ID", conflicts_with = "continue_latest")]
    pub session: Option<String>,
    /// The latest session of the workspace (found from any subdirectory of it).
    #[arg(short = 'c', long = "continue")]
    pub continue_latest: bool,
    /// With --session: must be the session's own workspace; with -c: the workspace whose latest
    /// session (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

/// The session picked, and the workspace to hold it to (the `--workspace` given with `--session`;
/// none with `--continue`, which found the session from it).
pub struct Picked {
    pub id: String,
    pub workspace: Option<PathBuf>,
}

impl SessionArgs {
    /// Whether a session to resume was named (`--session` or `-c`); without, a command that can
    /// starts a new one.
    pub fn resumes(&self) -> bool {
        self.session.is_some() || self.continue_latest
    }

    /// The whole id of the session named and the workspace to hold it to (reading file names
    /// only: no lease, no log). Naming none is a usage error.
    pub fn pick(&self) -> Result<Picked, Failure> {
        let service = crate::common::reading()?;
        match (self.session.as_deref(), self.continue_latest) {
            (Some(given), _) => Ok(Picked {
                id: service.resolve_session(given)?.as_str().to_string(),
                workspace: self.workspace.clone(),
            }),
            (None, true) => Ok(Picked {
                id: service
                    .latest_session(&workspace_arg(self.workspace.as_deref())?)?
                    .as_str()
                    .to_string(),
                workspace: None,
            }),
            (None, false) => Err(Failure::usage(
                "which session? give --session ID (or a prefix of it), or -c for the latest session of the workspace",
            )),
        }
    }

    /// As [`SessionArgs::pick`], for a command that only reads: a `--workspace` given with
    /// `--session` must be the session's own (the commands that write have the controller check
    /// it when they open).
    pub fn pick_to_read(&self) -> Result<Picked, Failure> {
        let picked = self.pick()?;
        if let (Some(_), Some(ws)) = (&self.session, &self.workspace) {
            let ws = workspace_arg(Some(ws))?;
            let service = crate::common::reading()?;
            let own = crate::common::runtime()?
                .block_on(service.sessions(None))?
                .into_iter()
                .find(|s| s.id.as_str() == picked.id)
                .and_then(|s| s.workspace);
            let canonical = std::fs::canonicalize(&ws).unwrap_or(ws);
            if let Some(own) = own.filter(|o| Path::new(o) != canonical) {
                return Err(Failure::usage(format!(
                    "session {} belongs to the workspace `{own}`, not `{}`",
                    picked.id,
                    canonical.display()
                )));
            }
        }
        Ok(picked)
    }

    /// The whole id of the session `--session` names (its id or an unambiguous prefix), if it is
    /// given; for the commands that also start or continue a session.
    pub fn whole_id(&self) -> Result<Option<String>, Failure> {
        let Some(given) = self.session.as_deref() else {
            return Ok(None);
        };
        let id = crate::common::reading()?.resolve_session(given)?;
        Ok(Some(id.as_str().to_string()))
    }

    /// Opens the session `--session` named (its `whole_id`), the latest of the workspace (`-c`),
    /// or else a new session in the workspace.
    pub async fn open_or_create(
        &self,
        svc: &Service,
        whole_id: Option<&str>,
    ) -> Result<SessionHandle, Failure> {
        let ws = self.workspace.as_deref();
        Ok(match (whole_id, self.continue_latest) {
            (Some(id), _) => svc.open(id, ws).await?,
            (None, true) => svc.open_latest(&workspace_arg(ws)?).await?,
            (None, false) => svc.create(&workspace_arg(ws)?).await?,
        })
    }
}

/// `--model M [--base-url U]`: the model a command uses, and where its requests go.
#[derive(Debug, clap::Args)]
pub struct ModelArgs {
    /// The model: `deepseek:NAME` (default provider), `openai:NAME`, `script:FILE` or `demo`.
    #[arg(long)]
    pub model: Option<String>,
    /// An OpenAI-compatible endpoint (requests go to `<URL>/chat/completions`).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
}

impl ModelArgs {
    /// Whether the command line chose the model (`--model` or `--base-url`): then it wins over
    /// the model a session recorded.
    pub fn given(&self) -> bool {
        self.model.is_some() || self.base_url.is_some()
    }

    /// The model these flags name under `cfg`, and where its requests go.
    pub fn spec(&self, cfg: &Config) -> Result<ModelSpec, Failure> {
        crate::model::model_spec(cfg, self.model.as_deref(), self.base_url.as_deref())
    }
}

/// `--backend snapshot|git`: where a new session keeps what its turns change.
#[derive(Debug, clap::Args)]
pub struct BackendArgs {
    /// The checkpoint backend of a new session: `snapshot` (the edit tools' changes; a shell
    /// command is a coverage gap) or `git` (shell commands' changes too, through a private git
    /// object store). Default: `[checkpoints] backend`, else `snapshot`. A resumed session keeps its
    /// own.
    #[arg(long, value_name = "BACKEND", value_parser = ["snapshot", "git"])]
    pub backend: Option<String>,
}

impl BackendArgs {
    /// The backend for new sessions: the flag, else the config, else `snapshot`.
    pub fn backend(&self, cfg: &Config) -> retrace_protocol::CheckpointBackend {
        self.backend
            .as_deref()
            .and_then(retrace_protocol::CheckpointBackend::parse)
            .or(cfg.checkpoints.backend.map(|b| b.into()))
            .unwrap_or_default()
    }
}
