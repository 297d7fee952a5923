//! The state of one open session, owned by its actor: the session log (with its writer lease), the
//! checkpoint store, the prepared plans. Synchronous; the actor and a running turn share it behind
//! one mutex and never hold the lock across an `await`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use retrace_agent::{TurnEnd, TurnReport};
use retrace_checkpoint::{BeginTurn, CheckpointStore, StoreOptions};
use retrace_protocol::{
    ChatMessage, CheckpointListing, ErrorCode, ErrorDetails, Event, HeadEntry, Item, ItemBody,
    RetentionLimits, SessionId, TranscriptEntry, TurnAccepted, TurnOutcome,
};
use retrace_session::{Session, SessionOptions, TurnStart};

use crate::bus::EventBus;
use crate::error::{coded, ControlError, Result};
use crate::items::build::stored_checkpoint;
use crate::items::LiveTurn;
use crate::paths::DataRoot;
use crate::rewind::PendingPlan;
use crate::view::{checkpoints_for, heads_of, listing, log_problems, sound, transcript_of};

/// One open session.
pub(crate) struct Core {
    pub(crate) data: DataRoot,
    pub(crate) session: Session,
    pub(crate) store: CheckpointStore,
    pub(crate) workspace: PathBuf,
    pub(crate) retention: RetentionLimits,
    pub(crate) bus: Arc<EventBus>,
    pub(crate) plans: HashMap<String, PendingPlan>,
    pub(crate) plan_counter: u64,
    /// The running turn's items that the log does not hold yet (the answer being streamed).
    pub(crate) live: Option<LiveTurn>,
}

/// The longest prompt a turn takes. A turn's checkpoint record holds its prompt twice (the record
/// and its compatibility marker), and records over 16 MiB are never read back.
pub const MAX_PROMPT_BYTES: usize = 4 << 20;

/// The length the prompt limit counts: the bytes without one final line end (`\n` or `\r\n`,
/// which a file or a pipe usually ends with), so a file of exactly the limit and a newline fits.
pub fn counted_prompt_len(prompt: &[u8]) -> usize {
    let mut n = prompt.len();
    if prompt.ends_with(b"\n") {
        n -= 1;
        if prompt[..n].ends_with(b"\r") {
            n -= 1;
        }
    }
    n
}

/// Refuses a prompt with nothing in it, or too long for its checkpoint. Frontends may ask before
/// they create a session.
pub fn check_prompt(prompt: &str) -> Result<(), retrace_protocol::Error> {
    if prompt.trim().is_empty() {
        return Err(retrace_protocol::Error::new(
            ErrorCode::Usage,
            "the prompt is empty; say what the agent should do",
        ));
    }
    if counted_prompt_len(prompt.as_bytes()) > MAX_PROMPT_BYTES {
        return Err(retrace_protocol::Error::new(
            ErrorCode::Usage,
            format!(
                "the prompt is {} bytes; the limit is {} MiB: put the material in a file of the workspace and ask the agent to read it",
                counted_prompt_len(prompt.as_bytes()),
                MAX_PROMPT_BYTES >> 20
            ),
        ));
    }
    Ok(())
}

fn store_options(session: &Session, retention: RetentionLimits) -> StoreOptions {
    StoreOptions {
        session_id: Some(session.id().as_str().to_string()),
        limits: retention,
        ..StoreOptions::default()
    }
}

/// The canonical form of a workspace directory, or a usage error naming it.
pub(crate) fn canonical_workspace(workspace: &Path) -> Result<PathBuf> {
    let root = std::fs::canonicalize(workspace).map_err(|e| {
        coded(
            ErrorCode::Usage,
            format!("the workspace `{}` cannot be used: {e}", workspace.display()),
        )
    })?;
    if !root.is_dir() {
        return Err(coded(
            ErrorCode::Usage,
            format!("the workspace `{}` is not a directory", workspace.display()),
        ));
    }
    if root.parent().is_none() {
        return Err(coded(
            ErrorCode::Usage,
            format!(
                "the workspace `{}` is the file system's root, which cannot be a workspace (the agent could edit any file of the machine); run it in your project",
                workspace.display()
            ),
        ));
    }
    if root.components().any(|c| c.as_os_str() == ".git") {
        return Err(coded(
            ErrorCode::Usage,
            format!(
                "the workspace `{}` is inside a `.git` directory, which tools never touch; run it in the repository's working tree",
                workspace.display()
            ),
        ));
    }
    Ok(root)
}

/// The canonical form of a directory a new session may work on: a workspace (see
/// [`canonical_workspace`]) outside Retrace's data directory; else a usage error naming it.
pub(crate) fn new_workspace(data: &DataRoot, workspace: &Path) -> Result<PathBuf> {
    let root = canonical_workspace(workspace)?;
    let data_root = std::fs::canonicalize(data.root()).unwrap_or_else(|_| data.root().to_path_buf());
    if root.starts_with(&data_root) {
        return Err(coded(
            ErrorCode::Usage,
            format!(
                "`{}` is inside Retrace's data directory `{}`, which cannot be a workspace (every edit there would be refused); run it in your project",
                root.display(),
                data_root.display()
            ),
        ));
    }
    Ok(root)
}

/// The workspace of an old flat log, which records none (SPEC §6): the one given, else the current
/// directory — never a directory inside the data root, where a code restore would write among the
/// sessions.
fn format1_workspace(data: &DataRoot, session: &Session, here: std::io::Result<PathBuf>) -> Result<PathBuf> {
    let unknown = |why: String| {
        let log = session.log_path().to_string_lossy().into_owned();
        ControlError::Coded(
            retrace_protocol::Error::new(
                ErrorCode::Usage,
                format!(
                    "session {} is an old (format-1) log, which records no workspace, and {why}; a change to it goes to a new session of the workspace the log belongs to, so name that directory",
                    session.id()
                ),
            )
            .with_details(ErrorDetails::WorkspaceUnknown { log_path: log }),
        )
    };
    let root = here.map_err(|e| unknown(format!("the current directory cannot be read ({e})")))?;
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    let data_root = std::fs::canonicalize(data.root()).unwrap_or_else(|_| data.root().to_path_buf());
    if root.starts_with(&data_root) {
        return Err(unknown(format!(
            "`{}` is inside Retrace's data directory `{}`, which cannot be a workspace",
            root.display(),
            data_root.display()
        )));
    }
    Ok(root)
}

impl Core {
    /// Starts a new session on `workspace`.
    pub(crate) fn create(
        data: &DataRoot,
        workspace: &Path,
        retention: RetentionLimits,
        bus: Arc<EventBus>,
    ) -> Result<Core> {
        let root = new_workspace(data, workspace)?;
        let session = Session::create(&data.sessions_dir(), &root)?;
        Core::assemble(data, session, root, retention, bus)
    }

    /// Opens session `id` for writing (takes its lease). A given `workspace` must be the session's;
    /// an old flat log, which records none, takes it (else the current directory) when first
    /// written (SPEC §6).
    pub(crate) fn open(
        data: &DataRoot,
        id: &SessionId,
        workspace: Option<&Path>,
        retention: RetentionLimits,
        bus: Arc<EventBus>,
    ) -> Result<Core> {
        let given = match workspace {
            Some(w) => Some(canonical_workspace(w)?),
            None => None,
        };
        // Only an old flat log needs the current directory: a session that records its workspace
        // opens from anywhere, a deleted directory included.
        let here = match &given {
            Some(w) => Ok(w.clone()),
            None => std::env::current_dir(),
        };
        let sopts = SessionOptions {
            legacy_workspace: here.as_ref().ok().cloned(),
            ..SessionOptions::default()
        };
        // A log with a bad line opens too (it takes no write): its files can still be restored.
        let session = sopts.open_writer_tolerant(&data.sessions_dir(), id)?;
        let root = match (session.workspace().map(PathBuf::from), given) {
            (Some(recorded), Some(w)) if recorded != w => {
                return Err(coded(
                    ErrorCode::Usage,
                    format!(
                        "session {id} belongs to the workspace `{}`, not `{}`",
                        recorded.display(),
                        w.display()
                    ),
                ))
            }
            (Some(recorded), _) => recorded,
            (None, _) => format1_workspace(data, &session, here)?,
        };
        if !root.is_dir() {
            return Err(coded(
                ErrorCode::Usage,
                format!(
                    "the workspace `{}` of session {id} does not exist any more",
                    root.display()
                ),
            ));
        }
        // Resolved once, when the session began (SPEC §2): a workspace directory swapped for a
        // symlink since (or moved under one) would lead every write somewhere else.
        match std::fs::canonicalize(&root) {
            Ok(now) if now == root => {}
            Ok(now) => {
                return Err(coded(
                    ErrorCode::Usage,
                    format!(
                        "the workspace `{}` of session {id} now leads to `{}` (a symlink in its place or above it); Retrace does not follow it: put the directory back",
                        root.display(),
                        now.display()
                    ),
                ))
            }
            Err(e) => {
                return Err(coded(
                    ErrorCode::Usage,
                    format!("the workspace `{}` of session {id} cannot be used: {e}", root.display()),
                ))
            }
        }
        Core::assemble(data, session, root, retention, bus)
    }

    fn assemble(
        data: &DataRoot,
        session: Session,
        root: PathBuf,
        retention: RetentionLimits,
        bus: Arc<EventBus>,
    ) -> Result<Core> {
        let mut session = session;
        let store = CheckpointStore::open(
            &data.sidecar(session.id()),
            &root,
            store_options(&session, retention),
        )?;
        crate::view::anchor_format1_turns(&mut session, &store)?;
        Ok(Core {
            data: data.clone(),
            session,
            store,
            workspace: root,
            retention,
            bus,
            plans: HashMap::new(),
            plan_counter: 0,
            live: None,
        })
    }

    /// Opens the checkpoint store of the current session (after a format-1 log became a new one).
    pub(crate) fn reopen_store(&mut self) -> Result<()> {
        self.store = CheckpointStore::open(
            &self.data.sidecar(self.session.id()),
            &self.workspace,
            store_options(&self.session, self.retention),
        )?;
        Ok(())
    }

    /// Before a write to an old flat log: it becomes a new format-2 session (SPEC §6), with a
    /// sidecar of its own.
    pub(crate) fn upgrade_if_flat(&mut self) -> Result<()> {
        if self.session.format() == 1 && self.session.upgrade()?.is_some() {
            self.reopen_store()?;
        }
        Ok(())
    }

    /// Records the model the next turn runs with in the log (written only when it changed; an old
    /// flat log is moved to a new session first, as for any write).
    pub(crate) fn record_model(&mut self, spec: &retrace_protocol::ModelSpec) -> Result<()> {
        self.upgrade_if_flat()?;
        self.session
            .record_model(&spec.to_string(), spec.base_url.as_deref())?;
        Ok(())
    }

    /// Starts a turn: the checkpoint first (number, prompt, boundary, head), then the user message,
    /// then `turn_started`. Returns the turn and the head's conversation for the model.
    pub(crate) fn begin_turn(&mut self, prompt: &str) -> Result<(TurnAccepted, Vec<ChatMessage>)> {
        check_prompt(prompt)?;
        sound(&self.session)?;
        self.upgrade_if_flat()?;
        let head = self.session.selected().clone();
        // A turn stopped by a signal or a crash may have left tool calls unanswered.
        self.repair_head(&head)?;
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
            message_id: Some(message_id.clone()),
            content: prompt.to_string(),
        })?;
        self.live = Some(LiveTurn::new(turn));
        // A new turn moves the generation on: prepared plans are stale.
        self.plans.clear();
        let accepted = TurnAccepted {
            session_id: started.session_id.clone(),
            head_id: head.clone(),
            turn,
        };
        self.bus.publish(Event::TurnStarted {
            session_id: accepted.session_id.clone(),
            head_id: head.clone(),
            turn,
            prompt: prompt.to_string(),
        });
        self.bus.publish(Event::ItemStarted {
            item: Item {
                id: message_id.as_str().to_string(),
                turn: Some(turn),
                body: ItemBody::UserPrompt {
                    text: prompt.to_string(),
                },
            },
        });
        self.bus.publish(Event::ItemStarted {
            item: stored_checkpoint(&self.store, turn),
        });
        let history = self.history(&head)?;
        Ok((accepted, history))
    }

    /// A head's messages as the model sees them (notes are system messages, summaries user ones).
    pub(crate) fn history(&self, head: &retrace_protocol::HeadId) -> Result<Vec<ChatMessage>> {
        Ok(crate::repair::answer_every_call(
            self.session
                .project(head)?
                .into_iter()
                .map(|m| m.to_chat())
                .collect(),
        ))
    }

    /// What the log says a server counted last on the head's conversation (the messages before
    /// the answer, the request's tokens), when the history the model gets begins with those
    /// messages unchanged.
    pub(crate) fn logged_count(&self, head: &retrace_protocol::HeadId) -> Option<(usize, u64)> {
        let (messages, tokens) = self.session.last_counted(head).ok()??;
        let projected: Vec<ChatMessage> = self
            .session
            .project(head)
            .ok()?
            .into_iter()
            .take(messages)
            .map(|m| m.to_chat())
            .collect();
        // The repair of unanswered calls adds messages; a prefix it changed was not what the
        // server counted.
        let repaired = crate::repair::answer_every_call(projected.clone());
        (repaired == projected).then_some((messages, tokens))
    }

    /// Ends a turn: completes its checkpoint record, syncs the log, publishes `turn_finished`.
    pub(crate) fn finish_turn(&mut self, turn: u64, report: TurnReport) -> TurnOutcome {
        let TurnReport { end, usage } = report;
        self.plans.clear();
        if let Err(e) = self.store.finish_turn() {
            self.bus.publish(Event::Notice {
                message: format!("the turn's checkpoint record could not be completed: {e}"),
                retry: None,
            });
        }
        if let Some(streaming) = self.live.take().and_then(|mut l| l.take_streaming()) {
            // An answer cut off (a cancel, a failed request) is not in the conversation.
            self.bus.publish(Event::ItemRemoved {
                item_id: streaming.id.as_str().to_string(),
            });
        }
        self.bus.publish(Event::ItemCompleted {
            item: stored_checkpoint(&self.store, turn),
        });
        let ended = self.session.end_turn();
        let error = match (end, ended) {
            (TurnEnd::Failed(e), _) => Some(e),
            (TurnEnd::Cancelled, _) => Some("cancelled by the user".to_string()),
            (TurnEnd::Finished, Err(e)) => Some(format!("the conversation log could not be synced: {e}")),
            (TurnEnd::Finished, Ok(())) => None,
        };
        let outcome = TurnOutcome {
            turn,
            ok: error.is_none(),
            error,
            usage,
        };
        self.bus.publish(Event::TurnFinished {
            turn,
            ok: outcome.ok,
            error: outcome.error.clone(),
            usage,
        });
        outcome
    }

    /// The checkpoint list of SPEC §7, seen from the selected head, with the sidecar's size.
    pub(crate) fn checkpoints(&self) -> Result<CheckpointListing> {
        let entries = checkpoints_for(&self.session, &self.store, self.session.selected(), |t| {
            crate::compaction::conversation_source(&self.session, t).is_some()
        });
        let sidecar = self.data.sidecar(self.session.id());
        let mut list = listing(entries, &self.store, &sidecar.to_string_lossy())?;
        list.problems.extend(log_problems(&self.session));
        Ok(list)
    }

    /// The items of `head` as stored (the answer being streamed is not among them); `running`
    /// is the turn running now.
    pub(crate) fn items_of(
        &self,
        head: &retrace_protocol::HeadId,
        running: Option<u64>,
    ) -> Result<Vec<Item>> {
        let entries = checkpoints_for(&self.session, &self.store, head, |_| false);
        crate::items::items_of(&self.session, head, running, &entries)
    }

    /// Writes a note for the model on `head` and, when it is the selected head, shows it.
    pub(crate) fn note(&mut self, head: &retrace_protocol::HeadId, content: String) -> Result<()> {
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
}
