//! Opening and creating sessions, and everything a reader can ask of one.

use std::fs;
use std::path::{Path, PathBuf};

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::entry::{Entry, ForkEntry, ForkedFrom, HeadKind, Header, Role, FORMAT};
use crate::error::{IoContext, Result, SessionError};
use crate::ids::{HeadId, MessageId, SessionId};
use crate::index::Index;
use crate::lease::Lease;
use crate::log::{self, Appender, Loaded, RawLog};
use crate::options::SessionOptions;
use crate::repair::LogDamage;
use crate::view::{Boundary, HeadInfo, Message, TurnInfo, TurnOnHead};

/// The writer's side of an open session.
#[derive(Debug)]
pub(crate) struct Writer {
    /// Held for as long as the session is open.
    pub(crate) _lease: Lease,
    /// The append handle; `None` for a format-1 log, which is never written.
    pub(crate) log: Option<Appender>,
    /// The append handle of `<id>.diffs`, opened at the first diff kept there.
    pub(crate) diffs: crate::diffs::DiffsWriter,
}

/// An open session: its log replayed into memory, and for a writer the lease and an append handle.
#[derive(Debug)]
pub struct Session {
    pub(crate) dir: PathBuf,
    pub(crate) id: SessionId,
    pub(crate) path: PathBuf,
    /// `None` for a format-1 log.
    pub(crate) header: Option<Header>,
    pub(crate) index: Index,
    pub(crate) writer: Option<Writer>,
    pub(crate) opts: SessionOptions,
    pub(crate) warnings: Vec<String>,
    pub(crate) migrated_from: Option<SessionId>,
    pub(crate) poisoned: Option<String>,
    /// The first line of the log that could not be read (opened tolerantly); no write is taken.
    pub(crate) damage: Option<LogDamage>,
}

impl SessionOptions {
    /// Creates a new session for `workspace` in the sessions directory `dir` (created 0700 if
    /// missing), holding its writer lease. Its log starts with the header and the `main` head, written
    /// atomically: a crash leaves no log or a whole one.
    pub fn create(&self, dir: &Path, workspace: &Path) -> Result<Session> {
        let ws = fs::canonicalize(workspace).at("resolve the workspace", workspace)?;
        let ws = ws
            .to_str()
            .ok_or_else(|| SessionError::NonUtf8Workspace(ws.clone()))?
            .to_string();
        self.create_session(dir, ws, None, Vec::new(), None)
    }

    /// Writes a new log (header, `main`, then `entries`) and opens it as a writer.
    pub(crate) fn create_session(
        &self,
        dir: &Path,
        workspace: String,
        forked_from: Option<ForkedFrom>,
        entries: Vec<Entry>,
        main_name: Option<String>,
    ) -> Result<Session> {
        self.fs
            .create_dir_all(dir)
            .at("create the sessions directory", dir)?;
        let id = crate::ids::session_of(self.uuid());
        let mut lease = Lease::acquire(dir, &id)?;
        let path = log::log_path(dir, &id);
        if path.exists() {
            return Err(SessionError::Io {
                op: "create",
                path,
                source: std::io::ErrorKind::AlreadyExists.into(),
            });
        }
        let now = self.now()?;
        let header = Header {
            id: id.clone(),
            workspace,
            created_at: now.clone(),
            format: FORMAT,
            forked_from,
            backend: self.backend,
        };
        let main = Entry::Fork(ForkEntry {
            head: HeadId::main(),
            kind: HeadKind::Main,
            from: None,
            parent_head: None,
            name: main_name,
            at: now,
        });
        let mut all = vec![Entry::Session(header.clone()), main];
        all.extend(entries);
        let bytes = log::encode(&all)?;
        let mut index = Index::default();
        for (n, e) in all.into_iter().enumerate().skip(1) {
            index.apply(e).map_err(|detail| SessionError::Corrupt {
                path: path.clone(),
                line: n + 1,
                detail,
            })?;
        }
        self.fs.write_atomic(&path, &bytes).at("create the log", &path)?;
        lease.lock_log(&id, &path)?;
        let log = Appender::open(&path, bytes.len() as u64)?;
        Ok(Session {
            dir: dir.to_path_buf(),
            id,
            path,
            header: Some(header),
            index,
            writer: Some(Writer {
                diffs: Default::default(),
                _lease: lease,
                log: Some(log),
            }),
            opts: self.clone(),
            warnings: Vec::new(),
            migrated_from: None,
            poisoned: None,
            damage: None,
        })
    }

    /// Opens session `id` in `dir` for writing: takes the writer lease (or fails naming its holder),
    /// replays the log, and cuts a torn last line off it, keeping the bytes in `<id>.torn-<n>`. A
    /// format-1 log is opened too; it is never written (see [`Session::upgrade`]).
    pub fn open_writer(&self, dir: &Path, id: &SessionId) -> Result<Session> {
        self.open(dir, id, true, false)
    }

    /// Opens session `id` in `dir` for reading: no lease, nothing written; a torn last line is
    /// ignored with a warning.
    pub fn open_reader(&self, dir: &Path, id: &SessionId) -> Result<Session> {
        self.open(dir, id, false, false)
    }

    /// [`SessionOptions::open_writer`], but a format-2 log with a line that cannot be read opens
    /// too: [`Session::damage`] names the line, the session holds what came before it, nothing is
    /// cut or written, and every write is refused ([`SessionError::Damaged`]) until
    /// [`SessionOptions::repair`] has run. The lease is held all the same.
    pub fn open_writer_tolerant(&self, dir: &Path, id: &SessionId) -> Result<Session> {
        self.open(dir, id, true, true)
    }

    /// [`SessionOptions::open_reader`], tolerating a bad line as
    /// [`SessionOptions::open_writer_tolerant`] does.
    pub fn open_reader_tolerant(&self, dir: &Path, id: &SessionId) -> Result<Session> {
        self.open(dir, id, false, true)
    }

    fn open(&self, dir: &Path, id: &SessionId, write: bool, tolerate: bool) -> Result<Session> {
        if !id.is_file_safe() {
            return Err(SessionError::InvalidSessionId(id.to_string()));
        }
        let path = log::log_path(dir, id);
        let meta = match fs::metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(SessionError::NoSuchSession { id: id.clone(), path })
            }
            Err(e) => return Err(e).at("read", &path),
        };
        let lease = if write {
            Some(Lease::acquire(dir, id)?)
        } else {
            None
        };
        let raw = RawLog::read(&path)?;
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| OffsetDateTime::from(t).format(&Rfc3339).ok())
            .unwrap_or_default();
        let mut warnings = Vec::new();
        let mut damaged = None;
        let (header, index, log) = match log::load(&path, &raw, &mtime, tolerate)? {
            Loaded::V2 {
                header,
                index,
                damage,
            } => {
                if header.id != *id {
                    return Err(SessionError::Corrupt {
                        path,
                        line: 1,
                        detail: format!("the header names session `{}`", header.id),
                    });
                }
                if let Some(d) = damage {
                    // Said by every refusal (and fsck), not as a warning.
                    damaged = Some(d);
                } else if let Some(tail) = raw.torn() {
                    let w = if write {
                        let kept = log::cut_torn_tail(&self.fs, dir, id, &path, &raw)?;
                        format!(
                            "{}: cut off a torn last line ({} bytes without a newline); kept in {}",
                            path.display(),
                            tail.len(),
                            kept.display()
                        )
                    } else {
                        torn_warning(&path, tail.len())
                    };
                    self.warn(&w);
                    warnings.push(w);
                }
                let log = match write && damaged.is_none() {
                    true => Some(Appender::open(&path, raw.complete as u64)?),
                    false => None,
                };
                (Some(*header), index, log)
            }
            Loaded::V1 { index } => {
                if let Some(tail) = raw.torn() {
                    let w = torn_warning(&path, tail.len());
                    self.warn(&w);
                    warnings.push(w);
                }
                (None, index, None)
            }
        };
        Ok(Session {
            dir: dir.to_path_buf(),
            id: id.clone(),
            path,
            header,
            index,
            writer: lease.map(|l| Writer {
                _lease: l,
                log,
                diffs: Default::default(),
            }),
            opts: self.clone(),
            warnings,
            migrated_from: None,
            poisoned: None,
            damage: damaged,
        })
    }
}

fn torn_warning(path: &Path, len: usize) -> String {
    format!(
        "{}: ignoring a torn last line ({len} bytes without a newline)",
        path.display()
    )
}

impl Session {
    /// [`SessionOptions::create`] with the default options.
    pub fn create(dir: &Path, workspace: &Path) -> Result<Session> {
        SessionOptions::default().create(dir, workspace)
    }

    /// [`SessionOptions::open_writer`] with the default options.
    pub fn open_writer(dir: &Path, id: &SessionId) -> Result<Session> {
        SessionOptions::default().open_writer(dir, id)
    }

    /// [`SessionOptions::open_reader`] with the default options.
    pub fn open_reader(dir: &Path, id: &SessionId) -> Result<Session> {
        SessionOptions::default().open_reader(dir, id)
    }

    /// The session id. It changes when a write turns a format-1 log into a new session.
    pub fn id(&self) -> &SessionId {
        &self.id
    }

    /// The sessions directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The diffs of tool results kept apart from the log (`<id>.diffs`), read now; see
    /// [`StoredOutcome::record`](crate::StoredOutcome::record).
    pub fn stored_diffs(&self) -> crate::StoredDiffs {
        crate::StoredDiffs::read(&crate::diffs_path(&self.dir, &self.id))
    }

    /// The log file.
    pub fn log_path(&self) -> &Path {
        &self.path
    }

    /// The log's format: 2, or 1 for a flat legacy log.
    pub fn format(&self) -> u32 {
        if self.header.is_some() {
            FORMAT
        } else {
            1
        }
    }

    /// The header (`None` for a format-1 log).
    pub fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    /// The workspace recorded in the header (`None` for a format-1 log).
    pub fn workspace(&self) -> Option<&str> {
        self.header.as_ref().map(|h| h.workspace.as_str())
    }

    /// The backend the session was created with, as its header records (`snapshot` for an old
    /// log, which records none).
    pub fn backend(&self) -> retrace_protocol::CheckpointBackend {
        self.header.as_ref().map(|h| h.backend).unwrap_or_default()
    }

    /// The session this one was made from, as its header records.
    pub fn forked_from(&self) -> Option<&ForkedFrom> {
        self.header.as_ref().and_then(|h| h.forked_from.as_ref())
    }

    /// The format-1 session this open session was made from by a write, if one was.
    pub fn migrated_from(&self) -> Option<&SessionId> {
        self.migrated_from.as_ref()
    }

    /// Whether this session holds the writer lease.
    pub fn is_writer(&self) -> bool {
        self.writer.is_some()
    }

    /// Warnings raised while opening (a torn last line).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Entries after the header; every append bumps it, so a plan can be bound to it.
    pub fn revision(&self) -> u64 {
        self.index.entries
    }

    /// The model the last `model` line records (the model of the session's latest turn that
    /// recorded one), if any.
    pub fn model(&self) -> Option<&crate::entry::ModelEntry> {
        self.index.model.as_ref()
    }

    /// The model `turn` ran with (the last `model` line before it), when the log records one.
    pub fn turn_model(&self, turn: u64) -> Option<&crate::entry::ModelEntry> {
        self.index.turn_models.get(&turn)
    }

    /// Whether plan mode is on (the last `plan_mode` line; off when there is none).
    pub fn plan_mode(&self) -> bool {
        self.index.plan_mode
    }

    /// The selected head.
    pub fn selected(&self) -> &HeadId {
        &self.index.heads[self.index.selected.unwrap_or(0)].id
    }

    /// Every head, in creation order.
    pub fn heads(&self) -> Vec<HeadInfo> {
        (0..self.index.heads.len())
            .map(|h| self.index.head_info(h))
            .collect()
    }

    /// One head.
    pub fn head(&self, id: &HeadId) -> Result<HeadInfo> {
        Ok(self.index.head_info(self.head_ix(id)?))
    }

    /// The head with this id, or else with this name.
    pub fn resolve_head(&self, id_or_name: &str) -> Result<HeadId> {
        self.index
            .head_ix(id_or_name)
            .or_else(|| self.index.head_by_name(id_or_name))
            .map(|h| self.index.heads[h].id.clone())
            .ok_or_else(|| SessionError::UnknownHead(id_or_name.to_string()))
    }

    /// The head's conversation: the messages on its path, oldest first. O(path length).
    pub fn project(&self, head: &HeadId) -> Result<Vec<&Message>> {
        let h = self.head_ix(head)?;
        let mut out = Vec::with_capacity(self.index.heads[h].len);
        out.extend(self.index.path(h).map(|m| &self.index.nodes[m].msg));
        Ok(out)
    }

    /// The last request a server counted that the head's projection still begins with: the
    /// number of messages before the assistant message that request produced, and the request's
    /// `prompt_tokens` as the server reported them (recorded with the message). A message whose
    /// path was rewritten after it was logged (a summary that replaced the messages before it) is
    /// passed over: its count was of a request this path no longer begins with.
    pub fn last_counted(&self, head: &HeadId) -> Result<Option<(usize, u64)>> {
        Ok(self.last_usage_at(head)?.map(|(k, u)| (k, u.prompt_tokens)))
    }

    /// What the server counted for that same request ([`Session::last_counted`]), its prompt and
    /// its answer: how much of the model's context the head's conversation took at its last
    /// counted request. `None` when no request on the path was counted (or its count is of a
    /// prefix the path no longer has).
    pub fn last_usage(&self, head: &HeadId) -> Result<Option<retrace_protocol::TokenUsage>> {
        Ok(self.last_usage_at(head)?.map(|(_, u)| u))
    }

    /// The newest counted request whose prefix the head's path still has: the number of
    /// messages before its answer, and its usage.
    fn last_usage_at(&self, head: &HeadId) -> Result<Option<(usize, retrace_protocol::TokenUsage)>> {
        let h = self.head_ix(head)?;
        let mut newest_before = None::<usize>;
        let mut found = None;
        for (k, m) in self.index.path(h).enumerate() {
            let msg = &self.index.nodes[m].msg;
            let logged_after_its_prefix = newest_before.is_none_or(|n| n < m);
            if let (Role::Assistant, Some(u), true) = (msg.role, msg.usage, logged_after_its_prefix) {
                found = Some((k, u));
            }
            newest_before = Some(newest_before.map_or(m, |n| n.max(m)));
        }
        Ok(found)
    }

    /// A message by id.
    pub fn message(&self, id: &MessageId) -> Option<&Message> {
        self.index.msg_ix(id.as_str()).map(|m| &self.index.nodes[m].msg)
    }

    /// The last message on the head's path (`None` when the path is empty).
    pub fn tip(&self, head: &HeadId) -> Result<Option<&MessageId>> {
        let h = self.head_ix(head)?;
        Ok(self.index.tip(h).map(|m| &self.index.nodes[m].msg.id))
    }

    /// Every turn, in order.
    pub fn turns(&self) -> Vec<TurnInfo> {
        self.index.turns.iter().map(|t| self.index.turn_info(t)).collect()
    }

    /// Every turn with its boundary on `head` (`None` where the turn is not visible there).
    pub fn turns_on(&self, head: &HeadId) -> Result<Vec<TurnOnHead>> {
        let h = self.head_ix(head)?;
        Ok(self
            .index
            .turns
            .iter()
            .map(|t| TurnOnHead {
                info: self.index.turn_info(t),
                boundary: self.index.boundary(h, t.message),
            })
            .collect())
    }

    /// Where turn `turn` starts on `head`: the messages before its user message. Fails with
    /// [`SessionError::TurnNotVisible`] when the turn is not on this head.
    pub fn boundary(&self, head: &HeadId, turn: u64) -> Result<Boundary> {
        let h = self.head_ix(head)?;
        let m = self.turn_message(turn)?;
        self.index
            .boundary(h, m)
            .ok_or_else(|| SessionError::TurnNotVisible {
                turn,
                head: head.clone(),
            })
    }

    /// The smallest turn number not used yet (1 + the largest in the log, or 0). The caller takes
    /// the larger of this and what the checkpoint sidecar says.
    pub fn next_turn(&self) -> u64 {
        self.index.next_turn()
    }

    pub(crate) fn head_ix(&self, id: &HeadId) -> Result<usize> {
        self.index
            .head_ix(id.as_str())
            .ok_or_else(|| SessionError::UnknownHead(id.to_string()))
    }

    pub(crate) fn turn_message(&self, turn: u64) -> Result<usize> {
        self.index
            .turns
            .binary_search_by_key(&turn, |t| t.turn)
            .map(|i| self.index.turns[i].message)
            .map_err(|_| SessionError::UnknownTurn(turn))
    }
}
