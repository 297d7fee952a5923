//! Read-only views: checkpoints with their visibility per head, heads, transcripts, sidecar
//! listings and fsck (session lists: `session_list`). Reading needs no lease (SPEC §6), so these
//! work while another process writes the session.

use std::collections::BTreeMap;
use std::path::Path;

use retrace_checkpoint::CheckpointStore;
use retrace_protocol::{
    ActionKind, CheckpointAction, CheckpointEntry, CheckpointListing, Error, ErrorCode, FsckProblem,
    FsckReport, HeadEntry, Item, SessionId, Severity, TranscriptEntry, TurnResults,
};
use retrace_session::{
    HeadId, HeadInfo, HeadKind, LogDamage, Session, SessionError, SessionOptions, SummaryMode,
};

use crate::error::{coded, Result};
use crate::paths::DataRoot;

/// Parses a session id given by a frontend.
pub(crate) fn session_id(id: &str) -> Result<SessionId> {
    // Longer ids cannot name a log (`<id>.jsonl`, `<id>.torn-…` must fit a file name).
    const MAX_ID: usize = 200;
    if id.len() > MAX_ID {
        let start: String = id.chars().take(40).collect();
        return Err(coded(
            ErrorCode::Usage,
            format!(
                "`{start}…` ({} bytes) is not a valid session id: ids are at most {MAX_ID} bytes",
                id.len()
            ),
        ));
    }
    let sid = SessionId::new(id);
    if !sid.is_file_safe() {
        return Err(coded(
            ErrorCode::Usage,
            format!("`{id}` is not a valid session id"),
        ));
    }
    Ok(sid)
}

/// Opens the sidecar of `session` read-only: against its workspace when it still exists.
fn open_store_read_only(data: &DataRoot, session: &Session) -> Result<CheckpointStore> {
    let dir = data.sidecar(session.id());
    let ws = session.workspace().map(Path::new).filter(|w| w.is_dir());
    Ok(match ws {
        Some(w) => CheckpointStore::open_read_only(&dir, w)?,
        None if dir.is_dir() => CheckpointStore::open_bare(&dir)?,
        None => CheckpointStore::open_read_only(&dir, Path::new("/"))?,
    })
}

/// Places the turns of an old flat log where its sidecar records them (`msgIndex`, SPEC §6); a
/// format-2 session is left as it is.
pub(crate) fn anchor_format1_turns(session: &mut Session, store: &CheckpointStore) -> Result<()> {
    if session.format() != 1 {
        return Ok(());
    }
    let starts: BTreeMap<u64, u64> = store
        .turns()
        .filter_map(|t| t.msg_index.map(|i| (t.number, i)))
        .collect();
    Ok(session.anchor_format1_turns(&starts)?)
}

/// Refuses, naming the file and the line, when the session's log has a line that cannot be read
/// (it was opened tolerantly): its conversation is not shown or changed until it is repaired.
pub(crate) fn sound(session: &Session) -> Result<()> {
    match session.damage() {
        Some(d) => Err(SessionError::Damaged {
            id: session.id().clone(),
            damage: d.clone(),
        }
        .into()),
        None => Ok(()),
    }
}

/// Why a damaged log offers no conversation, in words.
pub(crate) fn damage_reason(d: &LogDamage) -> String {
    format!("the session log cannot be read from {d}; repair it first")
}

/// The problems of the session's log, as fsck reports them: a line that cannot be read fails.
pub(crate) fn log_problems(session: &Session) -> Vec<FsckProblem> {
    if session.damage().is_none() && session.next_turn() == u64::MAX {
        // Its last turn took the largest number a turn can have: no turn can follow.
        return vec![FsckProblem {
            path: session.log_path().to_string_lossy().into_owned(),
            problem: format!(
                "its last turn number is {}, the largest a turn can have: no new turn can start (a damaged `turn` line; the session can be read, and its files restored)",
                u64::MAX - 1
            ),
            severity: Severity::Error,
            turn: None,
            file: None,
        }];
    }
    session
        .damage()
        .map(|d| FsckProblem {
            path: d.path.to_string_lossy().into_owned(),
            problem: format!(
                "line {} cannot be read: {}; the conversation takes no change until the log is repaired (the repair moves every line it cannot replay into a file beside the log)",
                d.line, d.detail
            ),
            severity: Severity::Error,
            turn: None,
            file: None,
        })
        .into_iter()
        .collect()
}

/// Session `id` and its checkpoint store, for reading; with `tolerant`, a log with a bad line
/// opens too ([`Session::damage`]).
pub(crate) fn open_for_reading(
    data: &DataRoot,
    id: &SessionId,
    tolerant: bool,
) -> Result<(Session, CheckpointStore)> {
    let dir = data.sessions_dir();
    let opts = SessionOptions::default();
    let mut session = match tolerant {
        true => opts.open_reader_tolerant(&dir, id)?,
        false => opts.open_reader(&dir, id)?,
    };
    let store = open_store_read_only(data, &session)?;
    anchor_format1_turns(&mut session, &store)?;
    Ok((session, store))
}

/// A session opened for reading, with its checkpoint store: no lease, nothing written.
pub struct SessionReader {
    pub(crate) session: Session,
    store: CheckpointStore,
    sidecar: String,
    /// Where the session's log and lease are.
    pub(crate) sessions_dir: std::path::PathBuf,
    /// What its tally needs besides the log (the service's prices, its recorded model).
    pub(crate) tally: crate::tally::Tally,
}

impl std::fmt::Debug for SessionReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionReader")
            .field("session", &self.session.id())
            .finish_non_exhaustive()
    }
}

impl SessionReader {
    pub(crate) fn open(data: &DataRoot, id: &str) -> Result<SessionReader> {
        let sid = session_id(id)?;
        let (session, store) = open_for_reading(data, &sid, true)?;
        let sidecar = data.sidecar(session.id()).to_string_lossy().into_owned();
        Ok(SessionReader {
            session,
            store,
            sidecar,
            sessions_dir: data.sessions_dir(),
            tally: crate::tally::Tally::default(),
        })
    }

    /// The session id.
    pub fn session_id(&self) -> &SessionId {
        self.session.id()
    }

    /// The checkpoint list of SPEC §7, seen from the selected head, with the sidecar's size.
    pub fn checkpoints(&self) -> Result<CheckpointListing, Error> {
        let entries = checkpoints_for(&self.session, &self.store, self.session.selected(), |t| {
            crate::core::conversation_source(&self.session, t).is_some()
        });
        let mut list = listing(entries, &self.store, &self.sidecar)?;
        list.problems.extend(log_problems(&self.session));
        // Another process writes the session: it refuses every action here (`busy`), so none
        // is offered.
        if let Ok(Some(h)) = retrace_session::Lease::holder(&self.sessions_dir, self.session.id()) {
            let why = format!("the session is in use by process {} on {}", h.pid, h.host);
            for a in list.entries.iter_mut().flat_map(|e| e.actions.iter_mut()) {
                a.available = false;
                a.reason = Some(why.clone());
            }
        }
        Ok(list)
    }

    /// Problems of the session's sidecar, and a line of its log that cannot be read.
    pub fn fsck(&self) -> FsckReport {
        let mut problems = log_problems(&self.session);
        problems.extend(self.store.fsck().problems);
        problems.extend(object_store_problems(self.store.dir()));
        FsckReport::from_problems(problems)
    }

    /// The heads; refused while the log has a line that cannot be read.
    pub fn heads(&self) -> Result<Vec<HeadEntry>, Error> {
        sound(&self.session)?;
        Ok(heads_of(&self.session))
    }

    /// The items of `head` (id or name), or of the selected head, as a snapshot shows them;
    /// refused while the log has a line that cannot be read.
    pub fn items(&self, head: Option<&str>) -> Result<Vec<Item>, Error> {
        sound(&self.session)?;
        let head = match head {
            Some(h) => self
                .session
                .resolve_head(h)
                .map_err(crate::error::ControlError::from)?,
            None => self.session.selected().clone(),
        };
        let entries = checkpoints_for(&self.session, &self.store, &head, |_| false);
        let running = self.running_elsewhere();
        Ok(crate::items::items_of(
            &self.session,
            &head,
            running.as_ref(),
            &entries,
        )?)
    }

    /// The turn another process runs now, as far as a reader can tell: the session's last turn,
    /// while a process holds the session's lease (its unanswered calls are then running or
    /// waiting, not cancelled).
    fn running_elsewhere(&self) -> Option<crate::items::build::Running> {
        let held = retrace_session::Lease::holder(&self.sessions_dir, self.session.id())
            .ok()
            .flatten()
            .is_some();
        let last = self.session.turns().last().map(|t| t.turn)?;
        held.then_some(crate::items::build::Running {
            turn: last,
            started: crate::items::build::Started::FirstUnanswered,
        })
    }

    /// Every version of `path` (relative to the workspace) the session knows (SPEC §5.8).
    pub fn file_history(&self, path: &Path) -> Result<retrace_protocol::FileHistory, Error> {
        Ok(crate::results::file_history(&self.store, path)?)
    }

    /// The results of retained turn `turn`: each file it changed with its diff, its shell
    /// commands, its coverage (SPEC §5.7).
    pub fn turn_results(&self, turn: u64) -> Result<TurnResults, Error> {
        let session = self.session.damage().is_none().then_some(&self.session);
        Ok(crate::results::turn_results(session, &self.store, turn)?)
    }

    /// The messages of `head` (id or name), or of the selected head; refused while the log has a
    /// line that cannot be read.
    pub fn transcript(&self, head: Option<&str>) -> Result<Vec<TranscriptEntry>, Error> {
        sound(&self.session)?;
        Ok(transcript_of(&self.session, head)?)
    }
}

pub(crate) fn listing(
    entries: Vec<CheckpointEntry>,
    store: &CheckpointStore,
    sidecar: &str,
) -> Result<CheckpointListing> {
    Ok(CheckpointListing {
        entries,
        sidecar: sidecar.to_string(),
        total_bytes: store.total_size()?,
        next_turn: store.next_turn(),
        problems: store
            .load_problems()
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .cloned()
            .collect(),
    })
}

fn open_sidecar(dir: &Path) -> Result<CheckpointStore> {
    Ok(CheckpointStore::open_bare(dir)?)
}

/// Lists any sidecar directory, legacy ones too (read-only, no session needed).
pub fn read_sidecar(dir: &Path) -> Result<CheckpointListing, Error> {
    let store = open_sidecar(dir)?;
    let entries = store.list();
    Ok(listing(entries, &store, &dir.to_string_lossy())?)
}

/// Checks any sidecar directory (and the git backend's object store beside it, if any).
pub fn fsck_sidecar(dir: &Path) -> Result<FsckReport, Error> {
    let mut problems = open_sidecar(dir)?.fsck().problems;
    problems.extend(object_store_problems(dir));
    Ok(FsckReport::from_problems(problems))
}

/// The problems of the git backend's object store in the sidecar `dir` (`git/`), as fsck reports
/// them (paths relative to the sidecar).
fn object_store_problems(dir: &Path) -> Vec<retrace_protocol::FsckProblem> {
    retrace_gitstore::fsck(&dir.join("git"))
        .into_iter()
        .map(|p| retrace_protocol::FsckProblem {
            path: format!("git/{}", p.path),
            problem: p.problem,
            severity: if p.error {
                retrace_protocol::Severity::Error
            } else {
                retrace_protocol::Severity::Warning
            },
            turn: None,
            file: p.file,
        })
        .collect()
}

/// The checkpoint list with visibility and availability for `head` (SPEC §5.1, §7).
pub(crate) fn checkpoints_for(
    session: &Session,
    store: &CheckpointStore,
    head: &HeadId,
    folded: impl Fn(u64) -> bool,
) -> Vec<CheckpointEntry> {
    let on_head: BTreeMap<u64, bool> = session
        .turns_on(head)
        .map(|ts| ts.into_iter().map(|t| (t.info.turn, t.visible())).collect())
        .unwrap_or_default();
    let infos: BTreeMap<u64, (String, String)> = session
        .turns()
        .into_iter()
        .map(|t| {
            (
                t.turn,
                (t.head.as_str().to_string(), t.message_id.as_str().to_string()),
            )
        })
        .collect();
    let damage = session.damage().map(damage_reason);
    store
        .list()
        .into_iter()
        .map(|mut e| {
            // The store's reason is about the files; the conversation's is decided here.
            let code_reason = e.disabled_reason.clone();
            if let Some(why) = &damage {
                // Nothing of the conversation can be trusted: files only.
                e.visible = None;
                e.can_restore_conversation = Some(false);
                e.disabled_reason.get_or_insert_with(|| why.clone());
                e.actions = actions(session, head, &e, code_reason, Some(why.clone()), false);
                return e;
            }
            let visible = on_head.get(&e.turn).copied().unwrap_or(false);
            if let Some((h, m)) = infos.get(&e.turn) {
                e.head.get_or_insert_with(|| h.clone());
                e.message_id.get_or_insert_with(|| m.clone());
            }
            e.visible = Some(visible);
            let reachable = visible || folded(e.turn);
            e.can_restore_conversation = Some(reachable);
            if !reachable && e.disabled_reason.is_none() {
                e.disabled_reason = Some(NOT_ON_HEAD.into());
            }
            let conversation_reason = (!reachable).then(|| NOT_ON_HEAD.to_string());
            e.actions = actions(session, head, &e, code_reason, conversation_reason, visible);
            e
        })
        .collect()
}

/// Why a turn's conversation cannot be restored from the selected head.
const NOT_ON_HEAD: &str = "not on this head";

/// The actions of one checkpoint, in the order every frontend offers them, each with whether it
/// is available and why not: decided here once.
fn actions(
    session: &Session,
    head: &HeadId,
    e: &CheckpointEntry,
    code_reason: Option<String>,
    conversation_reason: Option<String>,
    visible: bool,
) -> Vec<CheckpointAction> {
    let code = match e.can_restore_code {
        Some(false) => Err(code_reason.unwrap_or_else(|| "the files cannot be restored".into())),
        _ => Ok(()),
    };
    let conversation = match conversation_reason {
        Some(why) => Err(why),
        None => Ok(()),
    };
    let summarize = |mode| match (&conversation, visible) {
        (Err(why), _) => Err(why.clone()),
        // A turn a compaction folded can be restored or forked from, not summarized again.
        (Ok(()), false) => Err("folded into a summary on this head".to_string()),
        (Ok(()), true) => session
            .can_summarize(head, e.turn, mode)
            .map_err(|err| match err {
                SessionError::TurnNotVisible { .. } | SessionError::NotOnHead { .. } => {
                    NOT_ON_HEAD.to_string()
                }
                other => other.to_string(),
            }),
    };
    ActionKind::ALL
        .into_iter()
        .map(|action| {
            let available = match action {
                ActionKind::RestoreBoth => code.clone().and(conversation.clone()),
                ActionKind::RestoreConversation | ActionKind::Fork => conversation.clone(),
                ActionKind::RestoreCode => code.clone(),
                ActionKind::SummarizeFrom => summarize(SummaryMode::From),
                ActionKind::SummarizeUpTo => summarize(SummaryMode::UpTo),
                // The files of the turn's start are the code restore's, the conversation a fork's.
                ActionKind::ForkWorkspace => code.clone().and(conversation.clone()),
            };
            CheckpointAction {
                action,
                label: action.label().to_string(),
                detail: action.detail().to_string(),
                available: available.is_ok(),
                reason: available.err(),
                preview: action.scope().is_some(),
            }
        })
        .collect()
}

/// The heads as every frontend lists them, each with its title. Titles tell heads apart: a head
/// whose title (without a name of the user's) an earlier head already has gets its number among
/// them ("rewind before “fix it” (2)": a redo that made the undone rewind's head again, a second
/// rewind to the same turn).
pub(crate) fn heads_of(session: &Session) -> Vec<HeadEntry> {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    session
        .heads()
        .into_iter()
        .map(|h| {
            let mut title = head_title(session, &h);
            if h.name.is_none() {
                let n = seen.entry(title.clone()).or_insert(0);
                *n += 1;
                if *n > 1 {
                    title = format!("{title} ({n})");
                }
            }
            HeadEntry {
                id: h.id,
                kind: h.kind,
                name: h.name,
                parent_head: h.parent_head,
                fork_from: h.fork_from,
                selected: h.selected,
                retired: h.retired,
                message_count: h.message_count,
                turns: h.turns,
                last_activity: Some(h.last_activity),
                title,
            }
        })
        .collect()
}

/// What a head is called (see `HeadEntry::title`): the prompt of the turn it was made at is the
/// first turn of its parent after the message it forked from; a summary is named by the side of
/// that turn it replaced (as the actions that make it are: "Summarize from here", "Summarize up
/// to here"), and a summary up to a turn, which opens its path, by the turn that follows it.
fn head_title(session: &Session, h: &HeadInfo) -> String {
    if let Some(name) = &h.name {
        return name.clone();
    }
    let up_to = h.kind == HeadKind::Summary && session.summary_mode(&h.id) == Some(SummaryMode::UpTo);
    let what = match h.kind {
        HeadKind::Main => return "main".into(),
        HeadKind::Fork => "fork before",
        HeadKind::Rewind => "rewind before",
        HeadKind::Summary if up_to => "summary up to",
        HeadKind::Summary => "summary from",
    };
    let prompt = match up_to {
        // The summary opens the path; the turn it was made at comes right after it.
        true => session.project(&h.id).ok().and_then(|path| {
            path.get(1)
                .filter(|m| m.turn.is_some())
                .map(|m| first_line(&m.content))
        }),
        false => h.parent_head.as_ref().and_then(|parent| {
            let turns = session.turns_on(parent).ok()?;
            let at = turns
                .iter()
                .find(|t| t.boundary.as_ref().is_some_and(|b| b.before == h.fork_from))?;
            session
                .message(&at.info.message_id)
                .map(|m| first_line(&m.content))
        }),
    };
    match prompt {
        Some(p) => {
            let cut: String = p.chars().take(48).collect();
            let more = if cut.len() < p.len() { "…" } else { "" };
            format!("{what} “{cut}{more}”")
        }
        None => h.kind.as_str().to_string(),
    }
}

pub(crate) fn transcript_of(session: &Session, head: Option<&str>) -> Result<Vec<TranscriptEntry>> {
    let head = match head {
        Some(h) => session.resolve_head(h)?,
        None => session.selected().clone(),
    };
    Ok(session
        .project(&head)?
        .into_iter()
        .map(|m| TranscriptEntry {
            id: m.id.clone(),
            role: m.role,
            content: m.content.clone(),
            tool_calls: (!m.tool_calls.is_empty()).then(|| m.tool_calls.clone()),
            tool_call_id: m.tool_call_id.clone(),
            turn: m.turn,
            usage: m.usage,
        })
        .collect())
}

/// The first non-blank line of a prompt, cut to 200 characters (with "…" when cut).
pub(crate) fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    let mut out: String = line.chars().take(200).collect();
    if out.len() < line.len() {
        out.push('…');
    }
    out
}
