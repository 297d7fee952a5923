//! Writing to a session: turns, messages, notes, forks, selection, retirement.
//!
//! Every write first applies its entries to the in-memory index, which checks them, then appends
//! them to the log in one `write`. The user message of a turn, notes, forks, selections,
//! retirements and summaries are fsynced at once; other messages are fsynced at [`Session::end_turn`]
//! (SPEC §1.5: the conversation is durable at turn boundaries; a crash mid-turn may lose its tail).
//! If the `write` or fsync fails the session is poisoned: the index may be ahead of the file, so
//! further writes are refused until the session is reopened.

use crate::entry::{
    Entry, ForkEntry, HeadEvent, HeadKind, MessageEntry, NoteEntry, Role, TokenUsage, ToolCall, TurnEntry,
};
use crate::error::{Result, SessionError};
use crate::ids::{HeadId, MessageId, SessionId};
use crate::log;
use crate::record::StoredOutcome;
use crate::session::Session;
use crate::view::Boundary;
use retrace_protocol::ToolRecord;

/// A message to append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMessage {
    /// Its id; `None` draws a new one.
    pub id: Option<MessageId>,
    /// Who wrote it.
    pub role: Role,
    /// The text.
    pub content: String,
    /// Tool calls of an assistant message.
    pub tool_calls: Vec<ToolCall>,
    /// For a tool result: the call it answers.
    pub tool_call_id: Option<String>,
    /// For an assistant message: the tokens of the request that produced it.
    pub usage: Option<TokenUsage>,
    /// For an assistant message: the reasoning streamed before it.
    pub reasoning: Option<String>,
    /// For a tool result: how the call ended and what it changed.
    pub outcome: Option<retrace_protocol::ToolRecord>,
}

impl NewMessage {
    /// A message with a new id, no tool calls.
    pub fn new(role: Role, content: impl Into<String>) -> NewMessage {
        NewMessage {
            id: None,
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            usage: None,
            reasoning: None,
            outcome: None,
        }
    }
}

impl From<&retrace_protocol::ChatMessage> for NewMessage {
    /// A message with a new id.
    fn from(m: &retrace_protocol::ChatMessage) -> NewMessage {
        NewMessage {
            id: None,
            role: m.role,
            content: m.content.clone(),
            tool_calls: m.tool_calls.clone(),
            tool_call_id: m.tool_call_id.clone(),
            usage: None,
            reasoning: None,
            outcome: None,
        }
    }
}

/// What starting a turn needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnStart {
    /// The turn number: at least [`Session::next_turn`] (the caller also consults the sidecar).
    pub turn: u64,
    /// The head it runs on.
    pub head: HeadId,
    /// The user message's id, when the caller drew it already (with [`Session::new_message_id`]) to
    /// record it in the checkpoint first.
    pub message_id: Option<MessageId>,
    /// The user's prompt.
    pub content: String,
}

/// How to fork.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForkSpec {
    /// `fork`, `rewind` or `summary` (not `main`).
    pub kind: HeadKind,
    /// A name for the head (unique in the session).
    pub name: Option<String>,
    /// Select the new head in the same append.
    pub select: bool,
}

impl Default for ForkSpec {
    fn default() -> Self {
        ForkSpec {
            kind: HeadKind::Fork,
            name: None,
            select: false,
        }
    }
}

/// A message was appended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    /// Its id.
    pub message_id: MessageId,
    /// The session it went to.
    pub session_id: SessionId,
    /// Set when this write turned a format-1 log into the new session `session_id`.
    pub migrated_from: Option<SessionId>,
}

/// A turn started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnStarted {
    /// The turn number.
    pub turn: u64,
    /// The head it runs on.
    pub head: HeadId,
    /// Its user message.
    pub message_id: MessageId,
    /// Its boundary on `head`.
    pub boundary: Boundary,
    /// The session it went to.
    pub session_id: SessionId,
    /// Set when this write turned a format-1 log into the new session `session_id`.
    pub migrated_from: Option<SessionId>,
}

/// A head was created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewHead {
    /// The new head.
    pub head: HeadId,
    /// The session it is in.
    pub session_id: SessionId,
    /// Set when this write turned a format-1 log into the new session `session_id` (whose `main` is
    /// then the new head).
    pub migrated_from: Option<SessionId>,
}

impl Session {
    /// A new message id, for callers that must know it before the message is written.
    pub fn new_message_id(&self) -> MessageId {
        crate::ids::message_of(self.opts.uuid())
    }

    /// Starts a turn: appends the user message and the `turn` line in one write, and fsyncs.
    /// On a format-1 log, first makes the new session ([`Session::upgrade`]).
    pub fn start_turn(&mut self, t: TurnStart) -> Result<TurnStarted> {
        let next = self.next_turn();
        if t.turn < next {
            return Err(SessionError::TurnReused { turn: t.turn, next });
        }
        let (h, migrated_from) = self.prepare_write(&t.head)?;
        let id = self.fresh_message_id(t.message_id)?;
        let parent = self.tip_id(h);
        let boundary = Boundary {
            index: self.index.heads[h].len,
            before: parent.clone(),
        };
        let at = self.opts.now()?;
        let message = Entry::Message(MessageEntry {
            id: id.clone(),
            parent,
            head: t.head.clone(),
            role: Role::User,
            content: t.content,
            tool_calls: Vec::new(),
            tool_call_id: None,
            usage: None,
            reasoning: None,
            outcome: None,
            at: at.clone(),
        });
        let turn = Entry::Turn(TurnEntry {
            turn: t.turn,
            head: t.head.clone(),
            message_id: id.clone(),
            at,
        });
        self.commit(vec![message, turn], true)?;
        Ok(TurnStarted {
            turn: t.turn,
            head: t.head,
            message_id: id,
            boundary,
            session_id: self.id.clone(),
            migrated_from,
        })
    }

    /// Appends a message to `head` (not fsynced: see [`Session::end_turn`]).
    pub fn append(&mut self, head: &HeadId, msg: NewMessage) -> Result<Appended> {
        let (h, migrated_from) = self.prepare_write(head)?;
        let id = self.fresh_message_id(msg.id)?;
        let outcome = msg.outcome.map(|r| self.keep_diffs_apart(&id, r));
        let entry = Entry::Message(MessageEntry {
            id: id.clone(),
            parent: self.tip_id(h),
            head: head.clone(),
            role: msg.role,
            content: msg.content,
            tool_calls: msg.tool_calls,
            tool_call_id: msg.tool_call_id,
            usage: msg.usage,
            reasoning: msg.reasoning,
            outcome,
            at: self.opts.now()?,
        });
        self.commit(vec![entry], false)?;
        Ok(Appended {
            message_id: id,
            session_id: self.id.clone(),
            migrated_from,
        })
    }

    /// The outcome of tool message `id` as the log stores it: its diffs written to `<id>.diffs`
    /// and left out of the log line, or kept in the line when that file cannot be written.
    fn keep_diffs_apart(&mut self, id: &MessageId, mut record: ToolRecord) -> StoredOutcome {
        if record.changes.iter().all(|c| c.diff.is_empty()) {
            return StoredOutcome::new(&record, false);
        }
        let texts: Vec<String> = record.changes.iter().map(|c| c.diff.clone()).collect();
        let path = crate::diffs::diffs_path(&self.dir, &self.id);
        let written = match self.writer.as_mut() {
            Some(w) => w.diffs.append(&path, id.as_str(), &texts),
            None => return StoredOutcome::new(&record, false),
        };
        match written {
            Ok(()) => {
                for c in &mut record.changes {
                    c.diff.clear();
                }
                StoredOutcome::new(&record, true)
            }
            Err(e) => {
                self.warnings.push(format!(
                    "cannot write `{}` ({e}): the diffs stay in the log",
                    path.display()
                ));
                StoredOutcome::new(&record, false)
            }
        }
    }

    /// Ends a turn: fsyncs what was appended since the last fsync.
    pub fn end_turn(&mut self) -> Result<()> {
        self.check_writable()?;
        let fs = self.opts.fs.clone();
        let Some(log) = self.writer.as_mut().and_then(|w| w.log.as_mut()) else {
            return Ok(()); // a format-1 log: nothing was written
        };
        let synced = log.sync(&fs);
        if let Err(e) = &synced {
            self.poisoned = Some(e.to_string());
        }
        synced
    }

    /// Appends a system note for the model to `head` (projected as a `system` message, never a
    /// turn), and fsyncs.
    pub fn note(&mut self, head: &HeadId, content: impl Into<String>) -> Result<Appended> {
        let (h, migrated_from) = self.prepare_write(head)?;
        let id = self.new_message_id();
        let entry = Entry::Note(NoteEntry {
            id: id.clone(),
            parent: self.tip_id(h),
            head: head.clone(),
            content: content.into(),
            at: self.opts.now()?,
        });
        self.commit(vec![entry], true)?;
        Ok(Appended {
            message_id: id,
            session_id: self.id.clone(),
            migrated_from,
        })
    }

    /// Forks a new head whose path is `head`'s path up to and including `from` (`None`: the empty
    /// path). O(1) in the number of messages: one line is appended, nothing is copied. On a format-1
    /// log the new head is `main` of a new session holding just those messages.
    pub fn fork(&mut self, head: &HeadId, from: Option<&MessageId>, spec: ForkSpec) -> Result<NewHead> {
        self.check_writable()?;
        if spec.kind == HeadKind::Main {
            return Err(SessionError::ForkKindMain);
        }
        self.check_name(spec.name.as_deref())?;
        let h = self.head_ix(head)?;
        let keep = match from {
            None => 0,
            Some(m) => {
                let ix = self
                    .index
                    .msg_ix(m.as_str())
                    .ok_or_else(|| SessionError::UnknownMessage(m.clone()))?;
                let p = self
                    .index
                    .position(h, ix)
                    .ok_or_else(|| SessionError::NotOnHead {
                        message: m.clone(),
                        head: head.clone(),
                    })?;
                p + 1
            }
        };
        if self.header.is_none() {
            let old = self.migrate(keep, spec.name)?;
            return Ok(NewHead {
                head: HeadId::main(),
                session_id: self.id.clone(),
                migrated_from: Some(old),
            });
        }
        let id = self.new_head_id();
        let at = self.opts.now()?;
        let mut entries = vec![Entry::Fork(ForkEntry {
            head: id.clone(),
            kind: spec.kind,
            from: from.cloned(),
            parent_head: Some(head.clone()),
            name: spec.name,
            at: at.clone(),
        })];
        if spec.select {
            entries.push(Entry::Select(HeadEvent { head: id.clone(), at }));
        }
        self.commit(entries, true)?;
        Ok(NewHead {
            head: id,
            session_id: self.id.clone(),
            migrated_from: None,
        })
    }

    /// Selects `head` (`/switch`). Selecting the selected head writes nothing; a retired head cannot
    /// be selected.
    pub fn select(&mut self, head: &HeadId) -> Result<()> {
        self.check_writable()?;
        let h = self.live_head(head)?;
        if self.index.selected == Some(h) {
            return Ok(());
        }
        let entry = Entry::Select(HeadEvent {
            head: head.clone(),
            at: self.opts.now()?,
        });
        self.commit(vec![entry], true)
    }

    /// Turns plan mode on or off (SPEC §7 `set_plan_mode`). Setting what is in effect writes
    /// nothing.
    pub fn set_plan_mode(&mut self, on: bool) -> Result<()> {
        self.check_writable()?;
        if self.index.plan_mode == on {
            return Ok(());
        }
        self.upgrade()?;
        let entry = Entry::PlanMode(crate::entry::PlanModeEntry {
            on,
            at: self.opts.now()?,
        });
        self.commit(vec![entry], true)
    }

    /// Records the model the next turn runs with (`spec` as `--model` takes it, and its base URL
    /// if other than the provider's). The model in effect writes nothing.
    pub fn record_model(&mut self, spec: &str, base_url: Option<&str>) -> Result<()> {
        self.check_writable()?;
        let same = self
            .index
            .model
            .as_ref()
            .is_some_and(|m| m.spec == spec && m.base_url.as_deref() == base_url);
        if same {
            return Ok(());
        }
        self.upgrade()?;
        let entry = Entry::Model(crate::entry::ModelEntry {
            spec: spec.to_string(),
            base_url: base_url.map(str::to_string),
            at: self.opts.now()?,
        });
        self.commit(vec![entry], false)
    }

    /// Retires `head`: it stays readable and can be forked from, but is no longer offered. Refused
    /// for the selected head and for a head already retired.
    pub fn retire(&mut self, head: &HeadId) -> Result<()> {
        self.check_writable()?;
        let h = self.head_ix(head)?;
        if self.index.selected == Some(h) {
            return Err(SessionError::RetireSelected(head.clone()));
        }
        if self.index.heads[h].retired {
            return Err(SessionError::HeadRetired(head.clone()));
        }
        let entry = Entry::Retire(HeadEvent {
            head: head.clone(),
            at: self.opts.now()?,
        });
        self.commit(vec![entry], true)
    }

    // ----- helpers -------------------------------------------------------------------------

    /// Checks that `head` can be written to, then makes a format-1 session writable. Returns the
    /// head's index (in the new session, if one was made) and the old session id if it was.
    fn prepare_write(&mut self, head: &HeadId) -> Result<(usize, Option<SessionId>)> {
        self.check_writable()?;
        self.live_head(head)?;
        let migrated_from = self.upgrade()?;
        Ok((self.live_head(head)?, migrated_from))
    }

    pub(crate) fn check_writable(&self) -> Result<()> {
        if let Some(damage) = &self.damage {
            return Err(SessionError::Damaged {
                id: self.id.clone(),
                damage: damage.clone(),
            });
        }
        if let Some(reason) = &self.poisoned {
            return Err(SessionError::Poisoned {
                id: self.id.clone(),
                reason: reason.clone(),
            });
        }
        if self.writer.is_none() {
            return Err(SessionError::ReadOnly(self.id.clone()));
        }
        Ok(())
    }

    /// The head's index, refusing a retired head.
    pub(crate) fn live_head(&self, head: &HeadId) -> Result<usize> {
        let h = self.head_ix(head)?;
        if self.index.heads[h].retired {
            return Err(SessionError::HeadRetired(head.clone()));
        }
        Ok(h)
    }

    pub(crate) fn tip_id(&self, h: usize) -> Option<MessageId> {
        self.index.tip(h).map(|m| self.index.nodes[m].msg.id.clone())
    }

    fn fresh_message_id(&self, id: Option<MessageId>) -> Result<MessageId> {
        let id = id.unwrap_or_else(|| self.new_message_id());
        if self.index.msg_ix(id.as_str()).is_some() {
            return Err(SessionError::DuplicateMessage(id));
        }
        Ok(id)
    }

    pub(crate) fn check_name(&self, name: Option<&str>) -> Result<()> {
        match name {
            Some(n) if n.trim().is_empty() => Err(SessionError::EmptyName),
            Some(n) => {
                if let Some(why) = crate::names::name_problem(n) {
                    return Err(SessionError::BadName {
                        shown: crate::names::shown(n),
                        why,
                    });
                }
                if self.index.name_taken(n) {
                    return Err(SessionError::NameTaken(n.to_string()));
                }
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// A head id not used as an id or a name: short, or long after repeated collisions.
    pub(crate) fn new_head_id(&self) -> HeadId {
        for _ in 0..8 {
            let id = crate::ids::short_head(self.opts.uuid());
            if !self.index.name_taken(id.as_str()) {
                return id;
            }
        }
        crate::ids::long_head(self.opts.uuid())
    }

    /// Applies `entries` to the index, then appends them in one write (fsynced when `sync`).
    pub(crate) fn commit(&mut self, entries: Vec<Entry>, sync: bool) -> Result<()> {
        self.check_writable()?;
        if self.writer.as_ref().and_then(|w| w.log.as_ref()).is_none() {
            return Err(SessionError::ReadOnly(self.id.clone()));
        }
        let buf = log::encode(&entries)?;
        for (i, e) in entries.into_iter().enumerate() {
            if let Err(detail) = self.index.apply(e) {
                if i > 0 {
                    self.poisoned = Some(format!("an entry was refused: {detail}"));
                }
                return Err(SessionError::Inconsistent(detail));
            }
        }
        let fs = self.opts.fs.clone();
        let appended = match self.writer.as_mut().and_then(|w| w.log.as_mut()) {
            Some(log) => log.append(&fs, &buf, sync),
            None => Err(SessionError::ReadOnly(self.id.clone())),
        };
        if let Err(e) = &appended {
            self.poisoned = Some(e.to_string());
        }
        appended
    }
}
