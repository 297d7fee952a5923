//! Rewind (SPEC §5.3): prepare a plan that changes nothing, then commit it — code, conversation or
//! both — and undo the last rewind (§5.5); single-file revert (§5.6) is a code plan too.
//!
//! Decided once: a plan carries its blockers (why a commit with the default choices would not go
//! ahead), computed here; [`gate`] checks the same conditions against the user's choices before
//! anything is written, using the store's one decision ([`RestorePlan::check_commit`]) for the
//! files; the store's commit then holds the files to the previewed plan (`external_change` for
//! anything that moved since). Frontends render plans and map error codes; they decide nothing.

use std::time::{Duration, Instant};

use retrace_checkpoint::{CheckpointError, CommitOptions, RestorePlan};
use retrace_protocol::{
    Coverage, ErrorCode, Event, HeadId, Missing, PlanBlocker, RewindPlan, RewindResult, RewindScope,
};
use retrace_session::{Boundary, ForkSpec, HeadKind};

use crate::core::Core;
use crate::error::{coded, ControlError, Result};
use crate::record::RewindRecord;

/// How long a plan stays valid.
pub const PLAN_TTL: Duration = Duration::from_secs(600);

/// Plans kept at once per session; preparing another drops the oldest.
const MAX_PLANS: usize = 32;

/// Which commit a plan is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlanFor {
    /// `prepare_rewind` → `commit_rewind`.
    Rewind,
    /// `prepare_revert` → `commit_revert`.
    Revert,
}

/// A plan kept between prepare and commit.
#[derive(Debug)]
pub(crate) struct PendingPlan {
    pub(crate) plan_for: PlanFor,
    pub(crate) plan: RewindPlan,
    pub(crate) code: Option<RestorePlan>,
    pub(crate) head: HeadId,
    /// The head a conversation rewind forks from: `head`, or for a turn folded by a compaction,
    /// the head it was folded from.
    pub(crate) source: HeadId,
    pub(crate) boundary: Option<Boundary>,
    pub(crate) revision: u64,
    pub(crate) generation: u64,
    pub(crate) made: Instant,
}

/// What a plan is made of, before it gets an id and its blockers.
struct Draft {
    plan_for: PlanFor,
    turn: u64,
    scope: RewindScope,
    code: Option<RestorePlan>,
    /// Why an asked-for half is not offered.
    unavailable: Vec<String>,
    can_files: bool,
    can_conversation: bool,
    /// Where the conversation half forks from (`None`: the selected head).
    source: Option<HeadId>,
    boundary: Option<Boundary>,
    /// The choices a commit makes when the user says nothing.
    default_choice: CommitOptions,
}

/// Checks a plan against the user's choices: an unavailable half is `refused`; then the files'
/// conflicts under `refuse` (`conflict`) and a missing confirmation (`confirmation_required`), as
/// the store decides them. Nothing is written when it fails.
fn gate(p: &PendingPlan, choice: CommitOptions) -> Result<()> {
    if let Some(PlanBlocker::Unavailable { reason }) = p.plan.blockers.first() {
        return Err(coded(
            ErrorCode::Refused,
            format!(
                "a rewind of {} to turn {} is not available: {reason}",
                match p.plan.scope {
                    RewindScope::Code => "the code",
                    RewindScope::Conversation => "the conversation",
                    RewindScope::Both => "the code and the conversation",
                },
                p.plan.turn
            ),
        ));
    }
    if let Some(code) = &p.code {
        code.check_commit(choice)?;
    }
    Ok(())
}

impl Core {
    /// A plan id unique across sessions: the session id's random tail, the workspace generation
    /// and a counter.
    fn new_plan_id(&mut self) -> String {
        self.plan_counter += 1;
        let sid = self.session.id().as_str();
        let tail = &sid[sid.len().saturating_sub(12)..];
        format!("plan-{tail}-{}-{}", self.store.mutation_seq(), self.plan_counter)
    }

    /// The prompt of `turn`: from its checkpoint, else from its user message.
    fn prompt_of(&self, turn: u64) -> String {
        if let Some(t) = self.store.turn(turn) {
            return t.prompt.clone();
        }
        self.session
            .turns()
            .into_iter()
            .find(|t| t.turn == turn)
            .and_then(|t| self.session.message(&t.message_id).map(|m| m.content.clone()))
            .unwrap_or_default()
    }

    /// Turns a draft into a plan the user sees, and keeps it for the commit.
    fn pend(&mut self, d: Draft) -> RewindPlan {
        let mut blockers = Vec::new();
        if !d.unavailable.is_empty() {
            blockers.push(PlanBlocker::Unavailable {
                reason: d.unavailable.join("; "),
            });
        }
        if let Some(code) = &d.code {
            blockers.extend(code.blockers(d.default_choice));
        }
        let coverage = match &d.code {
            Some(c) => c.plan.coverage,
            None => self.store.turn(d.turn).map_or(Coverage::None, |t| t.coverage()),
        };
        let expires = time::OffsetDateTime::now_utc() + PLAN_TTL;
        let plan = RewindPlan {
            plan_id: self.new_plan_id(),
            turn: d.turn,
            scope: d.scope,
            prompt: self.prompt_of(d.turn),
            can_files: d.can_files,
            can_conversation: d.can_conversation,
            disabled_reason: (!d.unavailable.is_empty()).then(|| d.unavailable.join("; ")),
            requires_confirmation: d.code.as_ref().is_some_and(|c| c.plan.requires_confirmation),
            coverage,
            gaps: d.code.as_ref().map(|c| c.plan.gaps.clone()).unwrap_or_default(),
            files: d.code.as_ref().map(|c| c.plan.files.clone()).unwrap_or_default(),
            conflicts: d
                .code
                .as_ref()
                .map(|c| c.plan.conflicts.clone())
                .unwrap_or_default(),
            expires_at: expires
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default(),
            blockers,
            choices: d.code.as_ref().map(|c| c.choices()).unwrap_or_default(),
        };
        if self.plans.len() >= MAX_PLANS {
            let oldest = self
                .plans
                .iter()
                .min_by_key(|(_, p)| p.made)
                .map(|(id, _)| id.clone());
            if let Some(id) = oldest {
                self.plans.remove(&id);
            }
        }
        self.plans.insert(
            plan.plan_id.clone(),
            PendingPlan {
                plan_for: d.plan_for,
                plan: plan.clone(),
                code: d.code,
                head: self.session.selected().clone(),
                source: d.source.unwrap_or_else(|| self.session.selected().clone()),
                boundary: d.boundary,
                revision: self.session.revision(),
                generation: self.store.mutation_seq(),
                made: Instant::now(),
            },
        );
        plan
    }

    /// Prepares a rewind to `turn`. Changes nothing; the plan is single-use and expires after ten
    /// minutes or as soon as the session or the workspace changes.
    pub(crate) fn prepare_rewind(&mut self, turn: u64, scope: RewindScope) -> Result<RewindPlan> {
        let known = self.store.turn(turn).is_some() || self.session.turns().iter().any(|t| t.turn == turn);
        if !known {
            return Err(retrace_protocol::Error::not_found(
                Missing::Turn,
                turn.to_string(),
                format!("there is no turn {turn} in this session"),
            )
            .into());
        }
        // A log with a bad line offers no conversation (its files are still offered).
        let damage = self.session.damage().cloned();
        let (source, boundary) = match (&damage, self.conversation_source(turn)) {
            (None, Some((h, b))) => (Some(h), Some(b)),
            _ => (None, None),
        };
        let wants_files = scope != RewindScope::Conversation;
        let wants_conv = scope != RewindScope::Code;
        let mut unavailable = Vec::new();
        if wants_conv && boundary.is_none() {
            unavailable.push(match &damage {
                Some(d) => crate::view::damage_reason(d),
                None => "not on this head".to_string(),
            });
        }
        let code = if wants_files {
            match self.store.plan_restore(turn) {
                Ok(p) => Some(p),
                Err(CheckpointError::NotOffered { why, .. }) => {
                    unavailable.push(why);
                    None
                }
                Err(CheckpointError::UnknownTurn(_)) => {
                    unavailable.push(format!("turn {turn} has no checkpoint"));
                    None
                }
                Err(e) => return Err(e.into()),
            }
        } else {
            None
        };
        let can_files = if wants_files {
            code.is_some()
        } else {
            self.store.turn(turn).is_some()
        };
        Ok(self.pend(Draft {
            plan_for: PlanFor::Rewind,
            turn,
            scope,
            code,
            unavailable,
            can_files,
            can_conversation: boundary.is_some(),
            source,
            boundary,
            default_choice: CommitOptions::default(),
        }))
    }

    /// Prepares the revert of one file to its state before the session first touched it (§5.6):
    /// the same checks as a restore, confirmation included (a shell command in a turn that touched
    /// the file may have changed it untracked).
    pub(crate) fn prepare_revert(&mut self, path: &std::path::Path) -> Result<RewindPlan> {
        let code = self.store.plan_file_revert(path).map_err(|e| match e {
            CheckpointError::UnknownFile { path, .. } => {
                ControlError::from(retrace_protocol::Error::not_found(
                    Missing::File,
                    path.clone(),
                    format!("this session never edited `{path}`, so there is nothing to revert"),
                ))
            }
            other => ControlError::from(other),
        })?;
        Ok(self.pend(Draft {
            plan_for: PlanFor::Revert,
            turn: code.plan.turn,
            scope: RewindScope::Code,
            code: Some(code),
            unavailable: Vec::new(),
            can_files: true,
            can_conversation: false,
            source: None,
            boundary: None,
            default_choice: CommitOptions::default(),
        }))
    }

    /// The pending plan `plan_id`, if it is still valid and for this kind of commit. A plan gone
    /// stale is forgotten.
    fn valid_plan(&mut self, plan_id: &str, plan_for: PlanFor) -> Result<&PendingPlan> {
        let stale = |why: &str| coded(ErrorCode::StalePlan, format!("stale_plan: {why}; preview again"));
        let Some(p) = self.plans.get(plan_id) else {
            return Err(stale(&format!("no plan `{plan_id}` (plans are single-use)")));
        };
        let why = if p.made.elapsed() > PLAN_TTL {
            Some("the plan expired after 10 minutes")
        } else if p.revision != self.session.revision() || p.generation != self.store.mutation_seq() {
            Some("the session or the workspace changed since the plan was made")
        } else {
            None
        };
        if let Some(why) = why {
            self.plans.remove(plan_id);
            return Err(stale(why));
        }
        if p.plan_for != plan_for {
            let (is, use_) = match p.plan_for {
                PlanFor::Rewind => ("a rewind", "commit it as a rewind"),
                PlanFor::Revert => ("a file revert", "commit it as a file revert"),
            };
            return Err(coded(
                ErrorCode::Usage,
                format!("plan `{plan_id}` is {is} plan; {use_}"),
            ));
        }
        self.plans
            .get(plan_id)
            .ok_or_else(|| stale(&format!("no plan `{plan_id}`")))
    }

    /// Commits a plan. With `in_place` the new head (conversation, both) becomes the selected one,
    /// as the UIs and the CLI want; otherwise the current head stays selected.
    pub(crate) fn commit_plan(
        &mut self,
        plan_id: &str,
        plan_for: PlanFor,
        choice: CommitOptions,
        in_place: bool,
    ) -> Result<RewindResult> {
        // A commit the gate refuses leaves the plan as it was: the user may choose again.
        gate(self.valid_plan(plan_id, plan_for)?, choice)?;
        let Some(p) = self.plans.remove(plan_id) else {
            return Err(coded(
                ErrorCode::StalePlan,
                format!("stale_plan: no plan `{plan_id}`"),
            ));
        };
        let session_before = self.session.id().clone();
        let scope = p.plan.scope;
        let turn = p.plan.turn;
        let wants_files = scope != RewindScope::Conversation;
        let wants_conv = scope != RewindScope::Code;
        let mut result = RewindResult {
            ok: true,
            partial: false,
            conversation_forked: false,
            head_id: p.head.clone(),
            session_id: self.session.id().clone(),
            files_written: Vec::new(),
            files_deleted: Vec::new(),
            transaction_id: None,
            undo_available: false,
            conflicts: Vec::new(),
            prompt: p.plan.prompt.clone(),
            error: None,
        };
        // The conversation half first (SPEC §5.3): a new head that ends just before the turn.
        let mut record = RewindRecord {
            scope,
            turn,
            parent_head: p.head.clone(),
            new_head: None,
            base_messages: 0,
        };
        if wants_conv {
            let before = p.boundary.as_ref().and_then(|b| b.before.clone());
            let made = self.session.fork(
                &p.source,
                before.as_ref(),
                ForkSpec {
                    kind: HeadKind::Rewind,
                    name: None,
                    select: in_place,
                },
            )?;
            result.session_id = made.session_id.clone();
            record.base_messages = self
                .session
                .head(&made.head)
                .map(|h| h.message_count)
                .unwrap_or(0);
            result.head_id = made.head.clone();
            result.conversation_forked = true;
            record.new_head = Some(made.head);
        }
        let mut wrote_manifest = false;
        if let (true, Some(code)) = (wants_files, p.code.as_ref()) {
            match self.store.commit_tagged(code, choice, Some(record.to_extra())) {
                Ok(outcome) => {
                    wrote_manifest = outcome.transaction_id.is_some();
                    result.files_written = outcome.files_written;
                    result.files_deleted = outcome.files_deleted;
                    result.transaction_id = outcome.transaction_id;
                    result.conflicts = outcome.conflicts;
                }
                Err(e) if wants_conv => {
                    // The head is kept; the files failed in between (SPEC §5.3). The files that
                    // moved are in `conflicts`, typed, as a code-only commit reports them.
                    result.conflicts = moved_files(&e);
                    // What was asked for happened in part: the conversation was restored (the
                    // head is made and selected), the files were not. `ok` says the commit did
                    // something and left everything consistent; `partial` and `error` say what
                    // is missing (the reference reports this outcome the same way).
                    result.partial = true;
                    result.error = Some(e.to_string());
                }
                Err(e) => return Err(e.into()),
            }
            // A damaged log takes no note; the files are restored all the same.
            if scope == RewindScope::Code
                && result.transaction_id.is_some()
                && self.session.damage().is_none()
            {
                let mut files: Vec<String> = result.files_written.clone();
                files.extend(result.files_deleted.iter().cloned());
                let note = format!(
                    "Note from Retrace: the user restored these files to their state at the start of turn {turn}: {}. \
                     Edits made to them since then are no longer on disk.",
                    files.join(", ")
                );
                self.note(&p.head, note)?;
            }
        }
        if !wrote_manifest && record.new_head.is_some() {
            let m = self.store.record_rewind(turn, record.to_extra())?;
            result.transaction_id = Some(m.id);
        }
        // Whether `undo` would do something now: this transaction, or (nothing written) the rewind
        // before it, which stays the one undo takes back.
        result.undo_available = match (&result.transaction_id, self.store.undo_target()) {
            (Some(id), Some(u)) => &u.id == id,
            (None, Some(_)) => true,
            (_, None) => false,
        };
        // The note above may have been the write that moved an old flat log to a new session.
        result.session_id = self.session.id().clone();
        if self.session.id() != &session_before {
            // A format-1 log was upgraded into a new session (SPEC §6): the files were restored
            // from the old session's checkpoints, and that is where the transaction stays. The new
            // session has its own sidecar, which every later turn uses (as a new process would).
            // A restore of files is undone through the old log's id (`undo` on it writes to no
            // log); a conversation rewind is not undone there, as its heads are the new session's.
            self.reopen_store()?;
            if scope != RewindScope::Code {
                result.undo_available = false;
            }
        }
        self.plans.clear();
        self.bus.publish(Event::Rewound {
            scope,
            turn,
            head_id: result.head_id.clone(),
            files_written: result.files_written.clone(),
            files_deleted: result.files_deleted.clone(),
            transaction_id: result.transaction_id.clone(),
            partial: result.partial,
        });
        if in_place && record.new_head.is_some() {
            self.bus.publish(Event::HeadChanged {
                head_id: result.head_id.clone(),
            });
        }
        Ok(result)
    }

    /// Undoes the last rewind (code, conversation or both), if nothing happened since.
    pub(crate) fn undo(&mut self, transaction: Option<&str>) -> Result<RewindResult> {
        if let Some(tx) = transaction {
            if !self.store.transactions().any(|m| m.id == tx) {
                return Err(retrace_protocol::Error::not_found(
                    Missing::Transaction,
                    tx,
                    format!("there is no transaction `{tx}` in this session"),
                )
                .into());
            }
        }
        let Some(target) = self.store.undo_target().cloned() else {
            return Err(coded(
                ErrorCode::Refused,
                "nothing to undo: undo is available right after a rewind, before any new turn or edit",
            ));
        };
        if let Some(tx) = transaction {
            if tx != target.id {
                return Err(coded(
                    ErrorCode::Refused,
                    format!(
                        "only the last rewind can be undone; that is transaction {}",
                        target.id
                    ),
                ));
            }
        }
        let record = RewindRecord::from_extra(target.extra.as_ref());
        let code_only = record.as_ref().is_none_or(|r| r.scope == RewindScope::Code);
        // An old flat log: its restore's conversation lives in the new session it became, so only
        // the files come back here, and nothing is written to a log (which would make yet another
        // session of it).
        let flat = self.session.format() == 1;
        if flat && !code_only {
            return Err(coded(
                ErrorCode::Refused,
                "this rewind of an old (format-1) log changed the conversation, which now lives in the new session it became; only a restore of files can be undone through the old log",
            ));
        }
        // A damaged log takes no change: only a restore of files is undone, without its note.
        if !code_only {
            crate::view::sound(&self.session)?;
        }
        let outcome = self.store.undo(&target.id)?;
        if code_only && outcome.transaction_id.is_some() && !flat && self.session.damage().is_none() {
            // The note the restore left would now be false: say the files are back.
            let mut files = outcome.files_written.clone();
            files.extend(outcome.files_deleted.iter().cloned());
            let head = self.session.selected().clone();
            self.note(
                &head,
                format!(
                    "Note from Retrace: the user undid that restore; these files are back as they were before it: {}.",
                    files.join(", ")
                ),
            )?;
        }
        if let Some(RewindRecord {
            parent_head,
            new_head: Some(new_head),
            base_messages,
            ..
        }) = record
        {
            if self.session.selected() == &new_head {
                self.session.select(&parent_head)?;
                self.bus.publish(Event::HeadChanged {
                    head_id: parent_head.clone(),
                });
            }
            let untouched = self
                .session
                .head(&new_head)
                .map(|h| h.message_count <= base_messages)
                .unwrap_or(false);
            if untouched && self.session.selected() != &new_head {
                self.session.retire(&new_head)?;
            }
        }
        self.plans.clear();
        self.bus.publish(Event::Undone {
            transaction_id: target.id.clone(),
            head_id: self.session.selected().clone(),
        });
        Ok(RewindResult {
            ok: true,
            partial: false,
            conversation_forked: false,
            head_id: self.session.selected().clone(),
            session_id: self.session.id().clone(),
            files_written: outcome.files_written,
            files_deleted: outcome.files_deleted,
            transaction_id: outcome.transaction_id,
            undo_available: false,
            conflicts: Vec::new(),
            prompt: target.turn.map(|t| self.prompt_of(t)).unwrap_or_default(),
            error: None,
        })
    }
}

/// The files a failed file commit names, each a typed conflict (docs/FORMATS.md: the files that
/// moved are in `conflicts`): those a check found, or the one a change caught while writing
/// (`external_change`, by its workspace path).
pub(crate) fn moved_files(e: &CheckpointError) -> Vec<retrace_protocol::Conflict> {
    match e {
        CheckpointError::Changed { conflicts } | CheckpointError::Refused { conflicts } => conflicts.clone(),
        CheckpointError::ExternalChange { path } => vec![retrace_protocol::Conflict {
            path: path.clone(),
            reason: retrace_protocol::ConflictReason::ExternalChange,
            checkpoint_sha256: None,
            last_owned_sha256: None,
            current_sha256: None,
            checkpoint_mode: None,
            current_mode: None,
        }],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod moved_tests {
    use super::*;

    #[test]
    fn a_change_caught_while_writing_is_a_typed_conflict() {
        let e = CheckpointError::ExternalChange { path: "d/f".into() };
        let moved = moved_files(&e);
        assert_eq!(moved.len(), 1);
        assert_eq!(moved[0].path, "d/f");
        assert_eq!(moved[0].reason, retrace_protocol::ConflictReason::ExternalChange);
    }
}
