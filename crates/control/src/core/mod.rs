//! The state of one open session, owned by its actor: the session log (with its writer lease), the
//! checkpoint store, the prepared plans and the running turn's items the log does not hold yet.
//! Synchronous; the actor and a running turn share it behind one mutex and never hold the lock
//! across an `await`.
//!
//! Its fields are its own. The log and the store change only in the modules below — opening
//! ([`open`]), a turn's start and end ([`turn`]), what a running turn writes ([`seam`]), rewind and
//! its plans ([`plans`], [`rewind`]), redo ([`redo`]), heads and summaries ([`heads`]), a fork into a
//! new workspace ([`fork_workspace`]), compaction and plan mode
//! ([`compaction`]), repairing unanswered calls ([`repair`]) — and every other module reaches the
//! core through its methods.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use retrace_checkpoint::CheckpointStore;
use retrace_protocol::{
    CheckpointListing, Event, HeadEntry, HeadId, Item, ItemBody, ModelSpec, PendingApproval, RetentionLimits,
    RunningJob, SessionId, SessionSnapshot, SessionStatus, SessionUsage, TranscriptEntry,
};
use retrace_session::Session;

use crate::bus::EventBus;
use crate::error::Result;
use crate::items::LiveTurn;
use crate::paths::DataRoot;
use crate::tally::Tally;
use crate::view::{checkpoints_for, heads_of, listing, log_problems, sound, transcript_of};

mod compaction;
mod fork_workspace;
mod git;
mod git_sight;
mod git_store;
mod heads;
mod open;
mod plans;
mod redo;
mod repair;
mod rewind;
mod seam;
mod turn;
mod walk;

pub(crate) use compaction::conversation_source;
pub(crate) use fork_workspace::ForkSource;
pub(crate) use open::{canonical_workspace, new_workspace};
pub(crate) use plans::PlanFor;
pub use plans::PLAN_TTL;
#[cfg(test)]
pub(crate) use repair::INTERRUPTED;
pub(crate) use rewind::moved_files;
pub use turn::{check_prompt, counted_prompt_len, MAX_PROMPT_BYTES};

/// One open session.
pub(crate) struct Core {
    data: DataRoot,
    session: Session,
    store: CheckpointStore,
    workspace: PathBuf,
    retention: RetentionLimits,
    bus: Arc<EventBus>,
    plans: HashMap<String, plans::PendingPlan>,
    plan_counter: u64,
    /// The running turn's items that the log does not hold yet (the answer being streamed).
    live: Option<LiveTurn>,
    /// The git backend's object store, when the session was created with it and it opened.
    git: Option<git_store::GitBackend>,
    /// The tools' view of the workspace, which the git backend walks (set when the session was
    /// created with it): a store that could not be opened is opened again from it.
    git_ws: Option<retrace_tools::Workspace>,
    /// The git backend's store while its first look (a full walk) runs in the background, from
    /// the session's opening: the first shell command waits for it.
    git_first: Option<std::thread::JoinHandle<Result<git_store::GitBackend>>>,
    /// What the session's tally needs besides the log (prices, the model in use).
    tally: Tally,
}

impl Core {
    /// The session's id (it changes when a write moves an old flat log to a new session).
    pub(crate) fn session_id(&self) -> &SessionId {
        self.session.id()
    }

    /// The workspace root.
    pub(crate) fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The selected head.
    pub(crate) fn selected_head(&self) -> &HeadId {
        self.session.selected()
    }

    /// Whether plan mode is on.
    pub(crate) fn plan_mode(&self) -> bool {
        self.session.plan_mode()
    }

    /// The model the log records (that of its latest turn); `None` when it records none or its
    /// record no longer parses.
    pub(crate) fn recorded_model(&self) -> Option<ModelSpec> {
        self.session.model().and_then(|m| {
            let mut spec = ModelSpec::parse(&m.spec).ok()?;
            spec.base_url = m.base_url.clone();
            Some(spec)
        })
    }

    /// What the session is doing, given the job running now and the model in use (its label and
    /// its spec).
    pub(crate) fn status(
        &self,
        running: Option<RunningJob>,
        model: Option<String>,
        spec: Option<&ModelSpec>,
    ) -> SessionStatus {
        SessionStatus {
            session_id: self.session.id().clone(),
            workspace: self.workspace.to_string_lossy().into_owned(),
            head_id: self.session.selected().clone(),
            running,
            model_spec: model.as_ref().and(spec).map(ModelSpec::to_string),
            model,
            plan_mode: self.session.plan_mode(),
            backend: self.session.backend(),
            last_event_seq: self.bus.last_seq(),
        }
    }

    /// The session at one instant, from its `status` (taken first, with the same lock held): the
    /// selected head's items with the answer being streamed, the heads, the pending approvals,
    /// and the context its conversation took at its last counted request.
    pub(crate) fn snapshot(
        &self,
        status: SessionStatus,
        pending_approvals: Vec<PendingApproval>,
    ) -> Result<SessionSnapshot> {
        sound(&self.session)?;
        let head = self.session.selected().clone();
        // The running turn is the one whose live state is kept (from its start to its end, under
        // this lock), with the call it has started.
        let running = self.live.as_ref().map(|l| l.running());
        let mut items = self.items_of(&head, running.as_ref())?;
        if let Some(item) = self.live.as_ref().and_then(|l| l.streaming_item()) {
            items.push(item);
        }
        let context_tokens = self
            .session
            .last_usage(&head)?
            .map(|u| u.prompt_tokens.saturating_add(u.completion_tokens));
        Ok(SessionSnapshot {
            last_event_seq: status.last_event_seq,
            heads: heads_of(&self.session),
            usage: self.tally.usage(&self.session, &head)?,
            head_id: head,
            items,
            pending_approvals,
            context_tokens,
            status,
        })
    }

    /// What the session's tally needs besides the log, given once when it opens.
    pub(crate) fn set_tally(&mut self, tally: Tally) {
        self.tally = tally;
    }

    /// The model in use from now (`None`: none): its price and window count in the tally,
    /// which the frontends are told when `tell`.
    pub(crate) fn use_model(&mut self, model: Option<ModelSpec>, tell: bool) {
        self.tally.use_model(model);
        if tell {
            self.publish_usage();
        }
    }

    /// The session's tally, its selected head's context (what every frontend's status shows).
    pub(crate) fn usage(&self) -> Result<SessionUsage> {
        self.tally.usage(&self.session, self.session.selected())
    }

    /// Tells the frontends the session's tally (after a counted request, a compaction, a model
    /// switch); when the log cannot say, the next snapshot will.
    pub(crate) fn publish_usage(&self) {
        if let Ok(usage) = self.usage() {
            self.bus.publish(Event::Usage { usage });
        }
    }

    /// A compaction made `head`, estimating its conversation at `tokens`: its context until a
    /// request on it is counted. The frontends are told.
    pub(crate) fn compacted(&mut self, head: HeadId, tokens: u64) {
        self.tally.compacted(head, tokens);
        self.publish_usage();
    }

    /// Records the model the next turn runs with in the log (written only when it changed; an old
    /// flat log is moved to a new session first, as for any write).
    pub(crate) fn record_model(&mut self, spec: &retrace_protocol::ModelSpec) -> Result<()> {
        self.upgrade_if_flat()?;
        self.session
            .record_model(&spec.to_string(), spec.base_url.as_deref())?;
        Ok(())
    }

    /// The checkpoint list of SPEC §7, seen from the selected head, with the sidecar's size.
    pub(crate) fn checkpoints(&self) -> Result<CheckpointListing> {
        let entries = checkpoints_for(&self.session, &self.store, self.session.selected(), |t| {
            conversation_source(&self.session, t).is_some()
        });
        let sidecar = self.data.sidecar(self.session.id());
        let mut list = listing(entries, &self.store, &sidecar.to_string_lossy())?;
        list.problems.extend(log_problems(&self.session));
        Ok(list)
    }

    /// The items of `head` as stored (the answer being streamed is not among them); `running`
    /// is the turn running now.
    fn items_of(&self, head: &HeadId, running: Option<&crate::items::build::Running>) -> Result<Vec<Item>> {
        let entries = checkpoints_for(&self.session, &self.store, head, |_| false);
        crate::items::items_of(&self.session, head, running, &entries)
    }

    /// Writes a note for the model on `head` and, when it is the selected head, shows it.
    pub(super) fn note(&mut self, head: &HeadId, content: String) -> Result<()> {
        let written = self.session.note(head, content.clone())?;
        if self.session.selected() == head {
            let (note, text) = crate::items::note_wording(&content);
            self.bus.publish(Event::ItemStarted {
                item: Item {
                    id: written.message_id.as_str().to_string(),
                    turn: None,
                    body: ItemBody::Note(retrace_protocol::NoteItem { note, text }),
                },
            });
        }
        Ok(())
    }

    /// The heads.
    pub(crate) fn heads(&self) -> Result<Vec<HeadEntry>> {
        sound(&self.session)?;
        Ok(heads_of(&self.session))
    }

    /// The messages of a head (id or name), or of the selected head.
    pub(crate) fn transcript(&self, head: Option<&str>) -> Result<Vec<TranscriptEntry>> {
        sound(&self.session)?;
        transcript_of(&self.session, head)
    }

    /// Every version of `path` the session knows (SPEC §5.8).
    pub(crate) fn file_history(&self, path: &std::path::Path) -> Result<retrace_protocol::FileHistory> {
        crate::results::file_history(&self.store, path)
    }

    /// The results of retained turn `turn` (SPEC §5.7).
    pub(crate) fn turn_results(&self, turn: u64) -> Result<retrace_protocol::TurnResults> {
        let session = self.session.damage().is_none().then_some(&self.session);
        crate::results::turn_results(session, &self.store, turn)
    }
}
