//! [`SessionHandle`]: what a frontend holds. Cloneable and cheap; every method takes and returns
//! `retrace-protocol` types. Requests queue on the session's actor and are answered in order;
//! [`SessionHandle::cancel`] and [`SessionHandle::approve`] act at once, even while the actor is
//! busy. Dropping the last handle of a session closes it (see [`crate::actor`]). A handle knows
//! nothing of the service that opened it: a new session like this one is the service's
//! [`Service::create_like`](crate::Service::create_like), called by a frontend that holds both.

use std::path::Path;
use std::sync::Arc;

use retrace_checkpoint::CommitOptions;
use retrace_protocol::{
    ApprovalAnswer, ApprovalDecision, CheckpointListing, CommitRevert, CommitRewind, CompactRequest, Error,
    ErrorCode, ForkRequest, HeadEntry, HeadRef, ModelSpec, OnConflict, PlanFileDiff, PrepareRevert,
    PrepareRewind, RedoRequest, RewindPlan, RewindResult, SessionId, SessionSnapshot, SessionStatus,
    SummarizeRequest, SwitchRequest, TranscriptEntry, TurnAccepted, TurnResults, UndoRequest,
};
use tokio::sync::{mpsc, oneshot};

use crate::actor::{Actor, Command};
use crate::bus::Subscription;
use crate::core::PlanFor;
use crate::error::Result;
use crate::shared::Shared;

/// A handle to one open session.
#[derive(Clone)]
pub struct SessionHandle {
    pub(crate) tx: mpsc::Sender<Command>,
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for SessionHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionHandle")
            .field("session", &self.shared.session_id())
            .finish_non_exhaustive()
    }
}

fn closed() -> Error {
    Error::new(ErrorCode::Refused, "the session is closed; open it again")
}

impl SessionHandle {
    /// Runs `f` on the actor and returns its answer.
    async fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Actor) -> Result<T> + Send + 'static,
    ) -> Result<T, Error> {
        self.call_with(move |actor, reply| {
            let out = f(actor).map_err(Error::from);
            actor.sync_session_id();
            let _ = reply.send(out);
        })
        .await
    }

    /// Runs `f` on the actor, which answers on the channel it is given (now or from a job).
    async fn call_with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Actor, oneshot::Sender<Result<T, Error>>) + Send + 'static,
    ) -> Result<T, Error> {
        let (reply, answer) = oneshot::channel();
        self.tx
            .send(Box::new(move |actor: &mut Actor| f(actor, reply)))
            .await
            .map_err(|_| closed())?;
        answer.await.map_err(|_| closed())?
    }

    /// The session's id (a write to an old flat log moves it to a new one).
    pub fn session_id(&self) -> SessionId {
        self.shared.session_id()
    }

    /// The workspace root.
    pub fn workspace(&self) -> &Path {
        &self.shared.workspace
    }

    /// The checkpoint backend the session was created with (and keeps).
    pub fn backend(&self) -> retrace_protocol::CheckpointBackend {
        self.shared.backend
    }

    /// The session's events: those numbered after `after` first (or `lagged` when they are no
    /// longer held), then the live stream; with `None`, the live stream only.
    pub fn subscribe(&self, after: Option<u64>) -> Subscription {
        self.shared.bus.subscribe(after)
    }

    /// What the session is doing: its head, the running turn, the model, the newest event.
    pub async fn status(&self) -> Result<SessionStatus, Error> {
        self.call(|a| Ok(a.status())).await
    }

    /// The session at one instant: status, the selected head's items, heads, pending approvals,
    /// and `last_event_seq`. Render it, then the events of `subscribe(Some(last_event_seq))`:
    /// they create, extend and replace items by id.
    pub async fn snapshot(&self) -> Result<SessionSnapshot, Error> {
        self.call(|a| a.snapshot()).await
    }

    /// Starts a turn. Answers once its checkpoint and user message exist (`turn_started` is
    /// published); the turn then runs, and `turn_finished` says how it ended.
    pub async fn send(&self, prompt: impl Into<String>) -> Result<TurnAccepted, Error> {
        let prompt = prompt.into();
        self.call(move |a| a.start_turn(&prompt)).await
    }

    /// Cancels the running turn (or summary): it stops, keeps what ran and answers every tool
    /// call. False when nothing runs.
    pub fn cancel(&self) -> bool {
        self.shared.cancel()
    }

    /// Answers the `approval_requested` event of tool call `call_id`.
    pub fn approve(&self, call_id: &str, decision: ApprovalDecision) -> Result<(), Error> {
        self.shared.answer(call_id, ApprovalAnswer::new(decision))
    }

    /// Answers an approval with a session rule: `answer.prefix` (one the approval offered)
    /// allows every simple command starting with those words for the rest of the session.
    pub fn answer_approval(&self, call_id: &str, answer: ApprovalAnswer) -> Result<(), Error> {
        self.shared.answer(call_id, answer)
    }

    /// Replaces the session's model for the next turns.
    pub async fn set_model(&self, spec: ModelSpec) -> Result<(), Error> {
        self.call(move |a| a.set_model(&spec)).await
    }

    /// The model the session's log records (that of its latest turn), which a resumed session
    /// keeps unless another is chosen; `None` for a session that records none (or whose record
    /// no longer parses).
    pub async fn recorded_model(&self) -> Result<Option<ModelSpec>, Error> {
        self.call(|a| Ok(a.core().recorded_model())).await
    }

    /// The checkpoint list of SPEC §7, seen from the selected head, with what the sidecar costs.
    pub async fn checkpoints(&self) -> Result<CheckpointListing, Error> {
        self.call(|a| {
            let mut list = a.core().checkpoints()?;
            // While a job runs every action is refused (`turn_running`): the listing says so.
            if let Err(busy) = a.idle() {
                let why = busy.to_string();
                for a in list.entries.iter_mut().flat_map(|e| e.actions.iter_mut()) {
                    a.available = false;
                    a.reason = Some(why.clone());
                }
            }
            Ok(list)
        })
        .await
    }

    /// The heads.
    pub async fn heads(&self) -> Result<Vec<HeadEntry>, Error> {
        self.call(|a| a.core().heads()).await
    }

    /// The messages of `head` (id or name), or of the selected head.
    pub async fn transcript(&self, head: Option<String>) -> Result<Vec<TranscriptEntry>, Error> {
        self.call(move |a| a.core().transcript(head.as_deref())).await
    }

    /// Every version of `path` (relative to the workspace) the session knows (SPEC §5.8). Reads
    /// only; allowed while a turn runs.
    pub async fn file_history(
        &self,
        path: std::path::PathBuf,
    ) -> Result<retrace_protocol::FileHistory, Error> {
        self.call(move |a| a.core().file_history(&path)).await
    }

    /// The results of retained turn `turn`: each file it changed with its diff, its shell
    /// commands, its coverage (SPEC §5.7). Reads only; allowed while a turn runs.
    pub async fn turn_results(&self, turn: u64) -> Result<TurnResults, Error> {
        self.call(move |a| a.core().turn_results(turn)).await
    }

    /// Prepares a rewind; changes nothing. The plan says what a commit would do and what blocks it.
    pub async fn prepare_rewind(&self, req: PrepareRewind) -> Result<RewindPlan, Error> {
        self.call(move |a| {
            a.idle()?;
            a.core().prepare_rewind(req.turn, req.scope)
        })
        .await
    }

    /// Commits a prepared rewind with the user's choices.
    pub async fn commit_rewind(&self, req: CommitRewind) -> Result<RewindResult, Error> {
        self.call(move |a| {
            a.idle()?;
            let choice = CommitOptions {
                confirm: req.confirm,
                on_conflict: req.on_conflict,
            };
            a.core()
                .commit_plan(&req.plan_id, PlanFor::Rewind, choice, req.in_place)
        })
        .await
    }

    /// The whole diff of one file of a prepared rewind or revert, never cut (a plan file's `diff`
    /// is cut past its cap or the plan's budget: `diff_truncated`, `diff_deferred`). Changes
    /// nothing; the plan stays valid. `not_found` for a path the plan does not have,
    /// `stale_plan` for a plan gone or a file that changed since the plan was made.
    pub async fn plan_file_diff(
        &self,
        plan_id: impl Into<String>,
        path: impl Into<String>,
    ) -> Result<PlanFileDiff, Error> {
        let (plan_id, path) = (plan_id.into(), path.into());
        self.call(move |a| a.core().plan_file_diff(&plan_id, &path)).await
    }

    /// Undoes the last rewind.
    pub async fn undo(&self, req: UndoRequest) -> Result<RewindResult, Error> {
        self.call(move |a| {
            a.idle()?;
            a.core().undo(req.transaction_id.as_deref())
        })
        .await
    }

    /// Applies the newest undone rewind again (SPEC §5.5).
    pub async fn redo(&self, req: RedoRequest) -> Result<RewindResult, Error> {
        self.call(move |a| {
            a.idle()?;
            a.core().redo(req.transaction_id.as_deref())
        })
        .await
    }

    /// Prepares the revert of one file to its state before the session first touched it.
    pub async fn prepare_revert(&self, req: PrepareRevert) -> Result<RewindPlan, Error> {
        self.call(move |a| {
            a.idle()?;
            a.core().prepare_revert(&req.path, req.version)
        })
        .await
    }

    /// Commits a prepared file revert.
    pub async fn commit_revert(&self, req: CommitRevert) -> Result<RewindResult, Error> {
        self.call(move |a| {
            a.idle()?;
            let choice = CommitOptions {
                confirm: req.confirm,
                on_conflict: if req.overwrite {
                    OnConflict::Overwrite
                } else {
                    OnConflict::Refuse
                },
            };
            a.core().commit_plan(&req.plan_id, PlanFor::Revert, choice, false)
        })
        .await
    }

    /// A new head that ends just before a turn; code untouched.
    pub async fn fork(&self, req: ForkRequest) -> Result<HeadRef, Error> {
        self.call(move |a| {
            a.idle()?;
            a.core().fork(req.turn, req.name, req.select)
        })
        .await
    }

    /// The files and the new session of a fork into a new workspace (`Service::fork_into_workspace`
    /// opens it): made on the actor, so that nothing in the session moves meanwhile.
    pub(crate) async fn fork_into_workspace(
        &self,
        turn: u64,
        dir: std::path::PathBuf,
        name: Option<String>,
        ws: retrace_tools::Workspace,
    ) -> Result<(retrace_session::Session, retrace_protocol::WorkspaceFork), Error> {
        self.call(move |a| {
            a.idle()?;
            a.core().fork_into_workspace(turn, &dir, name, &ws)
        })
        .await
    }

    /// Summarizes from or up to a turn into a new selected head (the model writes it).
    pub async fn summarize(&self, req: SummarizeRequest) -> Result<HeadRef, Error> {
        self.call_with(move |a, reply| a.start_summary(req, reply)).await
    }

    /// Compacts the selected head now: the model summarizes everything before its latest turn
    /// into a new selected `summary` head; the original head stays a version (SPEC §7 `compact`).
    /// Refused when there is nothing to summarize.
    pub async fn compact(&self, req: CompactRequest) -> Result<HeadRef, Error> {
        self.call_with(move |a, reply| a.start_compact(req, reply)).await
    }

    /// Turns plan mode on or off for the session (recorded in its log). While on, the model is
    /// offered only the read tools and any other call is refused unrun. It applies from the next
    /// turn; a turn running now keeps the tools it started with.
    pub async fn set_plan_mode(&self, on: bool) -> Result<(), Error> {
        self.call(move |a| a.core().set_plan_mode(on)).await
    }

    /// The session's MCP servers (SPEC §8.1), each started if it was not yet: status, tools and
    /// prompts, as `retrace mcp list` shows them; empty when none is configured.
    pub async fn mcp_status(&self) -> Result<Vec<retrace_protocol::McpServerStatus>, Error> {
        let mcp = self.call(|a| Ok(a.mcp())).await?;
        Ok(match mcp {
            Some(m) => m.status().await,
            None => Vec::new(),
        })
    }

    /// The text of the prompt `name` of the MCP server `server` with `args` (its messages, one
    /// after the other): what the terminal UI's `/SERVER:PROMPT` puts in the input.
    pub async fn mcp_prompt(
        &self,
        server: &str,
        name: &str,
        args: serde_json::Map<String, serde_json::Value>,
    ) -> Result<String, Error> {
        let mcp = self.call(|a| Ok(a.mcp())).await?;
        let Some(mcp) = mcp else {
            return Err(Error::new(
                retrace_protocol::ErrorCode::NotFound,
                "no MCP server is configured (`[mcp_servers.NAME]` in the config)",
            ));
        };
        mcp.get_prompt(server, name, args).await.map_err(|e| {
            let code = match e {
                retrace_agent::McpError::NoServer(_) => retrace_protocol::ErrorCode::NotFound,
                _ => retrace_protocol::ErrorCode::Refused,
            };
            Error::new(code, e.to_string())
        })
    }

    /// The spec of the model the session runs with (a new session like it gets it too); `None`
    /// when it has none.
    pub(crate) async fn model_spec(&self) -> Result<Option<ModelSpec>, Error> {
        self.call(|a| Ok(a.spec().cloned())).await
    }

    /// Selects a head (id or name).
    pub async fn switch(&self, req: SwitchRequest) -> Result<HeadRef, Error> {
        self.call(move |a| {
            a.idle()?;
            a.core().switch_head(&req.head)
        })
        .await
    }

    /// Retires a head (refused for the selected one).
    pub async fn retire(&self, head: String) -> Result<(), Error> {
        self.call(move |a| {
            a.idle()?;
            a.core().retire_head(&head)
        })
        .await
    }
}
