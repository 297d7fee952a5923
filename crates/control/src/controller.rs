//! The controller of one open session: it holds the writer lease, the checkpoint store and the agent.

use std::path::{Path, PathBuf};

use retrace_agent::{Agent, AgentConfig, TurnEnd};
use retrace_checkpoint::{BeginTurn, CheckpointStore, Limits, StoreOptions};
use retrace_model::{CancellationToken, ChatModel};
use retrace_protocol::{CheckpointEntry, Event, HeadEntry, TranscriptEntry};
use retrace_session::{Session, SessionOptions, TurnStart};
use retrace_tools::Workspace;

use crate::error::{ControlError, Result};
use crate::paths::DataRoot;
use crate::seam::{history_of, LogSink, StoreSeam};
use crate::view::{checkpoints_for, heads_of, session_id, transcript_of};

/// How to set up a controller.
#[derive(Debug, Clone, Default)]
pub struct ControllerOptions {
    /// Retention limits of the checkpoint store.
    pub limits: Limits,
    /// How turns run (shell policy, step limit).
    pub agent: AgentConfig,
}

/// What a turn did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnReport {
    /// The session (a new one when an old flat log was upgraded).
    pub session_id: String,
    /// The head the turn ran on.
    pub head_id: String,
    /// The turn number.
    pub turn: u64,
    /// False when the turn ended in an error.
    pub ok: bool,
    /// Why it failed.
    pub error: Option<String>,
}

/// The one API for every frontend (SPEC §7), for one session opened for writing.
pub struct Controller {
    pub(crate) data: DataRoot,
    pub(crate) session: Session,
    pub(crate) store: CheckpointStore,
    pub(crate) agent: Option<Agent>,
    workspace: PathBuf,
    opts: ControllerOptions,
    pub(crate) running: bool,
    pub(crate) plans: std::collections::HashMap<String, crate::rewind::PendingPlan>,
    pub(crate) plan_counter: u64,
}

impl std::fmt::Debug for Controller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller")
            .field("session", &self.session.id())
            .field("workspace", &self.workspace)
            .finish_non_exhaustive()
    }
}

fn store_options(session: &Session, opts: &ControllerOptions) -> StoreOptions {
    StoreOptions {
        session_id: Some(session.id().as_str().to_string()),
        limits: opts.limits,
        ..StoreOptions::default()
    }
}

impl Controller {
    /// Starts a new session on `workspace`.
    pub fn create(
        data: &DataRoot,
        workspace: &Path,
        model: Option<Box<dyn ChatModel>>,
        opts: ControllerOptions,
    ) -> Result<Controller> {
        let root = std::fs::canonicalize(workspace).map_err(|e| {
            ControlError::Usage(format!(
                "the workspace `{}` cannot be used: {e}",
                workspace.display()
            ))
        })?;
        let session = Session::create(&data.sessions_dir(), &root)?;
        Self::assemble(data, session, root, model, opts)
    }

    /// Opens session `id` for writing (takes its lease). With `workspace`, it must be the session's.
    pub fn open(
        data: &DataRoot,
        id: &str,
        workspace: Option<&Path>,
        model: Option<Box<dyn ChatModel>>,
        opts: ControllerOptions,
    ) -> Result<Controller> {
        let sid = session_id(id)?;
        let mut sopts = SessionOptions::default();
        if let Some(w) = workspace {
            sopts.legacy_workspace = Some(w.to_path_buf());
        }
        let session = sopts.open_writer(&data.sessions_dir(), &sid)?;
        let recorded = session.workspace().map(PathBuf::from);
        let root = match (recorded, workspace) {
            (Some(r), Some(w)) => {
                let w = std::fs::canonicalize(w).unwrap_or_else(|_| w.to_path_buf());
                if w != r {
                    return Err(ControlError::Usage(format!(
                        "session {id} belongs to the workspace `{}`, not `{}`; drop --workspace or pick another session",
                        r.display(),
                        w.display()
                    )));
                }
                r
            }
            (Some(r), None) => r,
            (None, Some(w)) => std::fs::canonicalize(w).unwrap_or_else(|_| w.to_path_buf()),
            (None, None) => std::env::current_dir()
                .map_err(|e| ControlError::Usage(format!("no workspace: {e}; pass --workspace")))?,
        };
        if !root.is_dir() {
            return Err(ControlError::Usage(format!(
                "the workspace `{}` of session {id} does not exist any more",
                root.display()
            )));
        }
        Self::assemble(data, session, root, model, opts)
    }

    fn assemble(
        data: &DataRoot,
        session: Session,
        root: PathBuf,
        model: Option<Box<dyn ChatModel>>,
        opts: ControllerOptions,
    ) -> Result<Controller> {
        let store =
            CheckpointStore::open(&data.sidecar(session.id()), &root, store_options(&session, &opts))?;
        let ws = Workspace::new(&root).map_err(|e| ControlError::Usage(e.to_string()))?;
        let agent = model.map(|m| Agent::new(ws, m, opts.agent.clone()));
        Ok(Controller {
            data: data.clone(),
            session,
            store,
            agent,
            workspace: root,
            opts,
            running: false,
            plans: std::collections::HashMap::new(),
            plan_counter: 0,
        })
    }

    /// The session id.
    pub fn session_id(&self) -> &str {
        self.session.id().as_str()
    }

    /// The selected head.
    pub fn head_id(&self) -> &str {
        self.session.selected().as_str()
    }

    /// The workspace root.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The model in use, if one was given.
    pub fn model_name(&self) -> Option<String> {
        self.agent.as_ref().map(Agent::model_name)
    }

    /// Sets (or replaces) the model, e.g. for a summary with `--model`.
    pub fn set_model(&mut self, model: Box<dyn ChatModel>) -> Result<()> {
        let ws = Workspace::new(&self.workspace).map_err(|e| ControlError::Usage(e.to_string()))?;
        self.agent = Some(Agent::new(ws, model, self.opts.agent.clone()));
        Ok(())
    }

    /// Whether a turn is running.
    pub fn is_running(&self) -> bool {
        self.running
    }

    /// The checkpoint list of SPEC §7, seen from the selected head.
    pub fn checkpoints(&self) -> Vec<CheckpointEntry> {
        checkpoints_for(&self.session, &self.store, self.session.selected())
    }

    /// The heads.
    pub fn heads(&self) -> Vec<HeadEntry> {
        heads_of(&self.session)
    }

    /// The messages of a head (id or name), or of the selected head.
    pub fn transcript(&self, head: Option<&str>) -> Result<Vec<TranscriptEntry>> {
        transcript_of(&self.session, head)
    }

    /// Opens the checkpoint store of the current session (after a format-1 log became a new one).
    pub(crate) fn reopen_store(&mut self) -> Result<()> {
        self.store = CheckpointStore::open(
            &self.data.sidecar(self.session.id()),
            &self.workspace,
            store_options(&self.session, &self.opts),
        )?;
        Ok(())
    }

    /// Runs one turn: the checkpoint is opened first, then the user message is appended, then the
    /// agent runs. Events go to `out`; a shell command under the `ask` policy goes to `approve`.
    pub async fn send(
        &mut self,
        prompt: &str,
        out: &mut (dyn FnMut(Event) + Send),
        approve: &(dyn Fn(&str) -> bool + Sync),
        cancel: &CancellationToken,
    ) -> Result<TurnReport> {
        if self.running {
            return Err(ControlError::Refused("a turn is already running".into()));
        }
        if self.agent.is_none() {
            return Err(ControlError::Model(
                "no model is set up for this session; pass --model".into(),
            ));
        }
        // An old flat log becomes a new session before anything is written for the turn.
        if self.session.format() == 1 && self.session.upgrade()?.is_some() {
            self.reopen_store()?;
        }
        let head = self.session.selected().clone();
        let msg_index = self.session.project(&head)?.len() as u64;
        let message_id = self.session.new_message_id();
        let log_next = self.session.next_turn();
        let turn = self.store.begin_turn(BeginTurn {
            prompt: prompt.to_string(),
            msg_index,
            head: Some(head.as_str().to_string()),
            message_id: Some(message_id.as_str().to_string()),
            log_max_turn: log_next.checked_sub(1),
        })?;
        let started = self.session.start_turn(TurnStart {
            turn,
            head: head.clone(),
            message_id: Some(message_id),
            content: prompt.to_string(),
        })?;
        self.running = true;
        out(Event::TurnStarted {
            session_id: started.session_id.as_str().to_string(),
            head_id: head.as_str().to_string(),
            turn,
            prompt: prompt.to_string(),
        });
        let history = history_of(&self.session, &head)?;
        let end = {
            let mut seam = StoreSeam {
                store: &mut self.store,
            };
            let mut sink = LogSink {
                session: &mut self.session,
                head: head.clone(),
                out: &mut *out,
            };
            match self.agent.as_mut() {
                Some(agent) => {
                    agent
                        .run_turn(turn, history, &mut seam, &mut sink, approve, cancel)
                        .await
                }
                None => TurnEnd::Failed("no model".into()),
            }
        };
        // A new turn moved the generation on: prepared plans are stale.
        self.plans.clear();
        self.running = false;
        if let Err(e) = self.store.finish_turn() {
            out(Event::Notice {
                message: format!("the turn's checkpoint record could not be completed: {e}"),
            });
        }
        let ended = self.session.end_turn();
        let (ok, error) = match end {
            TurnEnd::Finished => (true, None),
            TurnEnd::Failed(e) => (false, Some(e)),
            TurnEnd::Cancelled => (false, Some("cancelled by the user".to_string())),
        };
        let error = match (error, ended) {
            (e @ Some(_), _) => e,
            (None, Err(e)) => Some(format!("the conversation log could not be synced: {e}")),
            (None, Ok(())) => None,
        };
        let ok = ok && error.is_none();
        out(Event::TurnFinished {
            turn,
            ok,
            error: error.clone(),
        });
        Ok(TurnReport {
            session_id: self.session.id().as_str().to_string(),
            head_id: head.as_str().to_string(),
            turn,
            ok,
            error,
        })
    }
}
