//! What a session's handles and its actor share without going through the actor's queue: the
//! event bus, the running job's cancel token, pending approvals. Cancel and approval answers must
//! reach a turn while the actor is busy, so they are plain shared state.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use retrace_model::CancellationToken;
use retrace_protocol::{
    ApprovalAnswer, ApprovalDecision, Error, ErrorCode, Missing, PendingApproval, RunningJob, SessionId,
};
use tokio::sync::oneshot;

use crate::allow::Allowed;
use crate::bus::EventBus;

/// Locks a mutex; a panic elsewhere while it was held does not make the data unusable here.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The job the actor is running: a turn or a summary.
#[derive(Debug, Clone)]
pub(crate) struct Running {
    /// What it is.
    pub(crate) job: RunningJob,
    /// Cancels it.
    pub(crate) cancel: CancellationToken,
}

/// Shared by a session's actor and every handle to it.
pub(crate) struct Shared {
    pub(crate) bus: Arc<EventBus>,
    pub(crate) workspace: PathBuf,
    /// The checkpoint backend the session was created with (it keeps it).
    pub(crate) backend: retrace_protocol::CheckpointBackend,
    session_id: Mutex<SessionId>,
    running: Mutex<Option<Running>>,
    /// Set by a job just before it reports its end (`turn_finished`, a summary's answer), so
    /// that a request sent by someone who saw that report waits for the job to be put away.
    finishing: AtomicBool,
    approvals: Mutex<HashMap<String, (PendingApproval, oneshot::Sender<ApprovalAnswer>)>>,
    allowed: Mutex<Allowed>,
}

impl Shared {
    pub(crate) fn new(
        bus: Arc<EventBus>,
        workspace: PathBuf,
        backend: retrace_protocol::CheckpointBackend,
        session_id: SessionId,
    ) -> Shared {
        Shared {
            bus,
            workspace,
            backend,
            session_id: Mutex::new(session_id),
            running: Mutex::new(None),
            finishing: AtomicBool::new(false),
            approvals: Mutex::new(HashMap::new()),
            allowed: Mutex::new(Allowed::default()),
        }
    }

    /// The session's id (it changes when a write upgrades an old flat log).
    pub(crate) fn session_id(&self) -> SessionId {
        lock(&self.session_id).clone()
    }

    pub(crate) fn set_session_id(&self, id: SessionId) {
        *lock(&self.session_id) = id;
    }

    /// The running job, if any.
    pub(crate) fn running(&self) -> Option<Running> {
        lock(&self.running).clone()
    }

    pub(crate) fn set_running(&self, r: Option<Running>) {
        // Under the lock `cancel` holds while it looks at both: it never sees the old job with the
        // flag already cleared (it would cancel a job that reported its end).
        let mut running = lock(&self.running);
        self.finishing.store(false, Ordering::SeqCst);
        *running = r;
    }

    /// The running job is about to report its end.
    pub(crate) fn mark_finishing(&self) {
        self.finishing.store(true, Ordering::SeqCst);
    }

    /// Whether the running job reported (or is reporting) its end.
    pub(crate) fn is_finishing(&self) -> bool {
        self.finishing.load(Ordering::SeqCst)
    }

    /// Cancels the running job; false when none runs (or it already reported its end).
    pub(crate) fn cancel(&self) -> bool {
        match lock(&self.running).as_ref() {
            Some(_) if self.is_finishing() => false,
            Some(r) => {
                r.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Registers a pending approval; its answer arrives on the receiver.
    pub(crate) fn await_approval(&self, request: PendingApproval) -> oneshot::Receiver<ApprovalAnswer> {
        let (tx, rx) = oneshot::channel();
        lock(&self.approvals).insert(request.call_id.clone(), (request, tx));
        rx
    }

    /// The approvals waiting for an answer, oldest call id first.
    pub(crate) fn pending_approvals(&self) -> Vec<PendingApproval> {
        let mut pending: Vec<PendingApproval> =
            lock(&self.approvals).values().map(|(p, _)| p.clone()).collect();
        pending.sort_by(|a, b| a.call_id.cmp(&b.call_id));
        pending
    }

    /// Forgets a pending approval (answered, or its wait ended).
    pub(crate) fn drop_approval(&self, call_id: &str) {
        lock(&self.approvals).remove(call_id);
    }

    /// Answers a pending approval. A `prefix` must be one the approval offered.
    pub(crate) fn answer(&self, call_id: &str, answer: ApprovalAnswer) -> Result<(), Error> {
        let mut approvals = lock(&self.approvals);
        let pending = approvals.get(call_id).ok_or_else(|| {
            Error::not_found(
                Missing::Approval,
                call_id,
                format!("no approval is pending for tool call `{call_id}`"),
            )
        })?;
        if let Some(p) = &answer.prefix {
            if answer.decision != ApprovalDecision::Session || !pending.0.prefixes.contains(p) {
                let offered = match pending.0.prefixes.is_empty() {
                    true => "none".to_string(),
                    false => pending.0.prefixes.join(", "),
                };
                return Err(Error::new(
                    ErrorCode::Usage,
                    format!(
                        "prefix `{p}` is not one this approval offers for the session (offered: {offered}); answer `session` without a prefix to allow the exact command"
                    ),
                ));
            }
        }
        let Some((_, tx)) = approvals.remove(call_id) else {
            return Err(Error::new(
                ErrorCode::Internal,
                "approval vanished while answered",
            ));
        };
        drop(approvals);
        tx.send(answer).map_err(|_| {
            Error::new(
                ErrorCode::Refused,
                format!("tool call `{call_id}` no longer waits for an answer"),
            )
        })
    }

    /// Whether the user allowed this command line for the rest of the session (it, or a prefix
    /// of its words: see [`crate::allow`]).
    pub(crate) fn is_allowed(&self, command: &str) -> bool {
        lock(&self.allowed).allows(command)
    }

    /// Remembers what an answer of `session` allows: the prefix picked, else the command line.
    pub(crate) fn allow(&self, command: &str, prefix: Option<&str>) {
        match prefix {
            Some(p) => lock(&self.allowed).allow_prefix(p),
            None => lock(&self.allowed).allow_exact(command),
        }
    }
}
