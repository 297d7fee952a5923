//! One actor per open session: a task that owns the session's [`Core`] (log, lease, store, plans)
//! and its agent, and runs the requests of every handle one at a time.
//!
//! A request is a closure run on the actor with `&mut Actor`; its answer goes back on a oneshot
//! channel. A turn or a summary is a *job*: the actor starts it (the turn's checkpoint and user
//! message are written before the request is answered), spawns the rest as a task that shares the
//! core through its mutex, and keeps taking requests meanwhile — reads are answered, writes get
//! `turn_running`. Cancel and approval answers do not queue behind anything (see
//! [`crate::shared`]).
//!
//! Nothing wedges: when the last handle is dropped the actor cancels a running job (the turn stops,
//! keeps what ran and answers every tool call), waits for it, closes the event stream and drops the
//! core, which releases the writer lease.
//!
//! A turn's job is [`crate::turn`]; a summary's is [`summary_job`].

use std::sync::{Arc, Mutex, MutexGuard};

use retrace_agent::Agent;
use retrace_model::CancellationToken;
use retrace_protocol::{
    ErrorCode, ErrorDetails, JobKind, ModelSpec, RunningJob, SessionSnapshot, SessionStatus, TurnAccepted,
};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::core::Core;
use crate::error::{coded, Result};
use crate::shared::{lock, Running, Shared};
use crate::turn::run_turn;

mod summary_job;

/// A request, run on the actor.
pub(crate) type Command = Box<dyn FnOnce(&mut Actor) + Send>;

/// What a finished job gives back: the agent, if it took it.
type JobEnd = Option<Box<Agent>>;

/// Opens a model and the agent around it.
pub(crate) type AgentFactory = Arc<dyn Fn(&ModelSpec) -> Result<Agent> + Send + Sync>;

/// The owner of one open session.
pub(crate) struct Actor {
    core: Arc<Mutex<Core>>,
    shared: Arc<Shared>,
    agent: Option<Agent>,
    /// The session's MCP servers (one set for the session, whichever model its agent has).
    mcp: Option<Arc<retrace_agent::McpServers>>,
    model: Option<String>,
    /// The spec of the model in use (a new session like this one gets it too).
    spec: Option<ModelSpec>,
    factory: AgentFactory,
    job: Option<JoinHandle<JobEnd>>,
    closing: bool,
}

/// Waits for the running job, or forever when there is none.
async fn wait_job(
    job: &mut Option<JoinHandle<JobEnd>>,
) -> std::result::Result<JobEnd, tokio::task::JoinError> {
    match job {
        Some(j) => j.await,
        None => std::future::pending().await,
    }
}

impl Actor {
    pub(crate) fn new(
        core: Core,
        shared: Arc<Shared>,
        agent: Option<Agent>,
        spec: Option<ModelSpec>,
        factory: AgentFactory,
    ) -> Actor {
        let mut core = core;
        let spec = agent.as_ref().and(spec);
        core.use_model(spec.clone(), false);
        Actor {
            core: Arc::new(Mutex::new(core)),
            shared,
            model: agent.as_ref().map(Agent::model_name),
            spec,
            mcp: agent.as_ref().and_then(|a| a.mcp().cloned()),
            agent,
            factory,
            job: None,
            closing: false,
        }
    }

    /// Runs requests until every handle is gone (or [`Actor::close`]), then finishes.
    pub(crate) async fn run(mut self, mut rx: mpsc::Receiver<Command>, exited: watch::Sender<bool>) {
        enum Next {
            Done(std::result::Result<JobEnd, tokio::task::JoinError>),
            Request(Option<Command>),
        }
        loop {
            if self.closing && self.job.is_none() {
                break;
            }
            let next = tokio::select! {
                end = wait_job(&mut self.job) => Next::Done(end),
                cmd = rx.recv() => Next::Request(cmd),
            };
            match next {
                Next::Done(end) => self.job_done(end),
                Next::Request(Some(cmd)) => {
                    if self.job.is_some() && self.shared.is_finishing() {
                        // Whoever sent this may have seen the job's end: put the job away first.
                        let end = wait_job(&mut self.job).await;
                        self.job_done(end);
                    }
                    cmd(&mut self);
                }
                Next::Request(None) => {
                    // No frontend remains: stop what runs rather than edit files nobody watches.
                    self.close();
                    if self.job.is_none() {
                        break;
                    }
                    let end = wait_job(&mut self.job).await;
                    self.job_done(end);
                    break;
                }
            }
        }
        rx.close();
        self.shared.bus.close();
        // The core (and with it the writer lease) goes with the actor.
        drop(self);
        let _ = exited.send(true);
    }

    /// Stops taking work: cancels a running job; the actor ends once it finished.
    pub(crate) fn close(&mut self) {
        self.closing = true;
        self.shared.cancel();
    }

    fn job_done(&mut self, end: std::result::Result<JobEnd, tokio::task::JoinError>) {
        self.job = None;
        let running = self.shared.running();
        self.shared.set_running(None);
        match end {
            Ok(Some(agent)) => self.agent = Some(*agent),
            Ok(None) => {}
            Err(e) => {
                // A job that panicked lost its agent; end its turn's bookkeeping so the session
                // stays usable.
                self.model = None;
                self.spec = None;
                self.core().use_model(None, true);
                if let Some(RunningJob {
                    kind: JobKind::Turn,
                    turn,
                }) = running.map(|r| r.job)
                {
                    self.core().finish_turn(
                        turn,
                        retrace_agent::TurnReport {
                            end: retrace_agent::TurnEnd::Failed(format!("internal error: {e}")),
                            usage: None,
                        },
                    );
                }
            }
        }
    }

    /// The session's state.
    pub(crate) fn core(&self) -> MutexGuard<'_, Core> {
        lock(&self.core)
    }

    /// The spec of the model in use.
    pub(crate) fn spec(&self) -> Option<&ModelSpec> {
        self.spec.as_ref()
    }

    /// Tells the handles the session's id (a write to an old flat log moves it to a new one); done
    /// before a request is answered, so whoever reads the answer sees the new id.
    pub(crate) fn sync_session_id(&self) {
        sync_session_id(&self.core, &self.shared);
    }

    /// The one guard of every write: refused while a turn or a summary runs.
    pub(crate) fn idle(&self) -> Result<()> {
        match self.shared.running() {
            None => Ok(()),
            Some(r) => {
                let what = match r.job.kind {
                    JobKind::Turn => format!("turn {} is running", r.job.turn),
                    JobKind::Summary => "a summary is being written".to_string(),
                };
                Err(retrace_protocol::Error::new(
                    ErrorCode::TurnRunning,
                    format!("{what}; wait for it to finish or cancel it"),
                )
                .with_details(ErrorDetails::Running { job: r.job })
                .into())
            }
        }
    }

    /// What a new job needs: no job running, and the session not closing.
    fn may_start_job(&self) -> Result<()> {
        self.idle()?;
        if self.closing {
            return Err(coded(ErrorCode::Refused, "the session is closing"));
        }
        Ok(())
    }

    fn no_model() -> crate::error::ControlError {
        coded(
            ErrorCode::Model,
            "no model is set up for this session; choose one",
        )
    }

    /// Replaces the session's model (the next turn uses it).
    pub(crate) fn set_model(&mut self, spec: &ModelSpec) -> Result<()> {
        self.idle()?;
        let mut agent = (self.factory)(spec)?;
        // The servers the session started stay: the new agent uses them.
        match &self.mcp {
            Some(mcp) => agent = agent.with_mcp(mcp.clone()),
            None => self.mcp = agent.mcp().cloned(),
        }
        self.model = Some(agent.model_name());
        self.spec = Some(spec.clone());
        self.agent = Some(agent);
        // Its price and window: the tally says them.
        self.core().use_model(Some(spec.clone()), true);
        Ok(())
    }

    /// The session's MCP servers, if any is configured.
    pub(crate) fn mcp(&self) -> Option<Arc<retrace_agent::McpServers>> {
        self.mcp.clone()
    }

    /// What the session is doing.
    pub(crate) fn status(&self) -> SessionStatus {
        self.status_of(&self.core())
    }

    fn status_of(&self, core: &Core) -> SessionStatus {
        let mut status = core.status(
            self.shared.running().map(|r| r.job),
            self.model.clone(),
            self.spec.as_ref(),
        );
        // A job that has begun reporting its end may have its last event (`turn_finished`,
        // `summary_finished`) counted in `last_event_seq` already, read just above: a frontend
        // that takes this status drops that event as seen, so the job must not read as running
        // (read after the number: the job marks itself finishing before it publishes its end).
        if self.shared.is_finishing() {
            status.running = None;
        }
        status
    }

    /// The session at one instant: its status, the selected head's items (with the answer being
    /// streamed), heads and pending approvals, and the number of the newest event they include.
    /// Taken with the core locked, under which every event that changes an item is published.
    pub(crate) fn snapshot(&self) -> Result<SessionSnapshot> {
        let core = self.core();
        // The number first: an approval asked or answered after it is still delivered as an event.
        let status = self.status_of(&core);
        let pending_approvals = self.shared.pending_approvals();
        core.snapshot(status, pending_approvals)
    }

    /// Starts a turn: its checkpoint and user message are written before this returns; the agent
    /// then runs as a job.
    pub(crate) fn start_turn(&mut self, prompt: &str) -> Result<TurnAccepted> {
        self.may_start_job()?;
        if self.agent.is_none() {
            return Err(Self::no_model());
        }
        if let Some(spec) = &self.spec {
            // The model this turn runs with is the one a resumed session keeps (nothing is
            // written for a prompt the turn refuses).
            crate::core::check_prompt(prompt)?;
            self.core().record_model(spec)?;
        }
        let (accepted, history) = self.core().begin_turn(prompt)?;
        let Some(mut agent) = self.agent.take() else {
            return Err(Self::no_model());
        };
        agent.set_plan_mode(self.core().plan_mode());
        agent.set_logged_count(self.core().logged_count(&accepted.head_id));
        let cancel = CancellationToken::new();
        self.shared.set_running(Some(Running {
            job: RunningJob {
                kind: JobKind::Turn,
                turn: accepted.turn,
            },
            cancel: cancel.clone(),
        }));
        let turn = run_turn(
            self.core.clone(),
            self.shared.clone(),
            agent,
            accepted.turn,
            accepted.head_id.clone(),
            history,
            cancel,
        );
        self.job = Some(tokio::spawn(async move { Some(Box::new(turn.await)) }));
        Ok(accepted)
    }
}

fn sync_session_id(core: &Mutex<Core>, shared: &Shared) {
    let id = lock(core).session_id().clone();
    shared.set_session_id(id);
}
