//! Rewind (SPEC §5.3): prepare a plan that changes nothing, then commit it — code, conversation or
//! both — and undo the last rewind (§5.5). Every rewind writes a manifest so undo can find it.

use std::time::{Duration, Instant};

use retrace_checkpoint::{CheckpointError, CommitOptions, PlanKind, RestorePlan};
use retrace_protocol::{ConflictReason, Coverage, Event, OnConflict, RewindPlan, RewindResult, RewindScope};
use retrace_session::{Boundary, ForkSpec, HeadId, HeadKind};
use serde_json::json;

use crate::controller::Controller;
use crate::error::{ControlError, Result};

/// How long a plan stays valid.
pub const PLAN_TTL: Duration = Duration::from_secs(600);

/// A plan kept between prepare and commit.
#[derive(Debug)]
pub(crate) struct PendingPlan {
    pub(crate) plan: RewindPlan,
    pub(crate) code: Option<RestorePlan>,
    pub(crate) head: HeadId,
    pub(crate) boundary: Option<Boundary>,
    pub(crate) revision: u64,
    pub(crate) generation: u64,
    pub(crate) made: Instant,
}

fn scope_name(s: RewindScope) -> &'static str {
    match s {
        RewindScope::Code => "code",
        RewindScope::Conversation => "conversation",
        RewindScope::Both => "both",
    }
}

/// Maps store errors of a commit to the controller's refusal kinds.
pub(crate) fn commit_error(e: CheckpointError) -> ControlError {
    match e {
        CheckpointError::Refused { .. }
        | CheckpointError::UndoRefused { .. }
        | CheckpointError::UndoUnavailable { .. }
        | CheckpointError::NotOffered { .. } => ControlError::Refused(e.to_string()),
        CheckpointError::ConfirmationRequired => ControlError::Confirmation(e.to_string()),
        CheckpointError::StalePlan { .. } => ControlError::Stale(e.to_string()),
        other => ControlError::Checkpoint(other),
    }
}

impl Controller {
    fn refuse_while_running(&self) -> Result<()> {
        if self.running {
            return Err(ControlError::Refused(
                "cannot rewind while a turn is running".into(),
            ));
        }
        Ok(())
    }

    fn new_plan_id(&mut self) -> String {
        self.plan_counter += 1;
        format!("plan-{}-{}", self.store.mutation_seq(), self.plan_counter)
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

    /// Prepares a rewind to `turn`. Changes nothing; the plan is single-use and expires after ten
    /// minutes or as soon as the session or the workspace changes.
    pub fn prepare_rewind(&mut self, turn: u64, scope: RewindScope) -> Result<RewindPlan> {
        self.refuse_while_running()?;
        let known = self.store.turn(turn).is_some() || self.session.turns().iter().any(|t| t.turn == turn);
        if !known {
            return Err(ControlError::Usage(format!(
                "there is no turn {turn} in this session"
            )));
        }
        let head = self.session.selected().clone();
        let boundary = self.session.boundary(&head, turn).ok();
        let wants_files = scope != RewindScope::Conversation;
        let wants_conv = scope != RewindScope::Code;
        let mut reasons = Vec::new();
        let can_conversation = boundary.is_some();
        if wants_conv && !can_conversation {
            reasons.push("not on this head".to_string());
        }
        let (code, can_files) = if wants_files {
            match self.store.plan_restore(turn) {
                Ok(p) => (Some(p), true),
                Err(CheckpointError::NotOffered { why, .. }) => {
                    reasons.push(why);
                    (None, false)
                }
                Err(CheckpointError::UnknownTurn(_)) => {
                    reasons.push(format!("turn {turn} has no checkpoint"));
                    (None, false)
                }
                Err(e) => return Err(e.into()),
            }
        } else {
            (None, self.store.turn(turn).is_some())
        };
        let coverage = match &code {
            Some(c) => c.plan.coverage,
            None => self.store.turn(turn).map_or(Coverage::None, |t| t.coverage()),
        };
        let expires = time::OffsetDateTime::now_utc() + PLAN_TTL;
        let plan = RewindPlan {
            plan_id: self.new_plan_id(),
            turn,
            scope,
            prompt: self.prompt_of(turn),
            can_files,
            can_conversation,
            disabled_reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
            requires_confirmation: wants_files && code.as_ref().is_some_and(|c| c.plan.requires_confirmation),
            coverage,
            gaps: code.as_ref().map(|c| c.plan.gaps.clone()).unwrap_or_default(),
            files: code.as_ref().map(|c| c.plan.files.clone()).unwrap_or_default(),
            conflicts: code
                .as_ref()
                .map(|c| c.plan.conflicts.clone())
                .unwrap_or_default(),
            expires_at: expires
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default(),
        };
        self.plans.insert(
            plan.plan_id.clone(),
            PendingPlan {
                plan: plan.clone(),
                code,
                head,
                boundary,
                revision: self.session.revision(),
                generation: self.store.mutation_seq(),
                made: Instant::now(),
            },
        );
        Ok(plan)
    }

    /// Takes a pending plan, checking it is still valid.
    fn take_plan(&mut self, plan_id: &str) -> Result<PendingPlan> {
        let p = self.plans.remove(plan_id).ok_or_else(|| {
            ControlError::Stale(format!(
                "stale_plan: no plan `{plan_id}` (plans are single-use); preview again"
            ))
        })?;
        if p.made.elapsed() > PLAN_TTL {
            return Err(ControlError::Stale(
                "stale_plan: the plan expired after 10 minutes; preview again".into(),
            ));
        }
        if p.revision != self.session.revision() || p.generation != self.store.mutation_seq() {
            return Err(ControlError::Stale(
                "stale_plan: the session or the workspace changed since the plan was made; preview again"
                    .into(),
            ));
        }
        Ok(p)
    }

    /// Commits a plan and leaves the controller on its current head; returns the new head's id.
    pub fn commit_rewind(
        &mut self,
        plan_id: &str,
        confirm: bool,
        on_conflict: OnConflict,
        out: &mut dyn FnMut(Event),
    ) -> Result<RewindResult> {
        self.commit_inner(plan_id, confirm, on_conflict, false, out)
    }

    /// Commits a plan and moves the controller onto the new head (what the UIs use).
    pub fn commit_rewind_in_place(
        &mut self,
        plan_id: &str,
        confirm: bool,
        on_conflict: OnConflict,
        out: &mut dyn FnMut(Event),
    ) -> Result<RewindResult> {
        self.commit_inner(plan_id, confirm, on_conflict, true, out)
    }

    fn commit_inner(
        &mut self,
        plan_id: &str,
        confirm: bool,
        on_conflict: OnConflict,
        in_place: bool,
        out: &mut dyn FnMut(Event),
    ) -> Result<RewindResult> {
        self.refuse_while_running()?;
        let p = self.take_plan(plan_id)?;
        let session_before = self.session.id().clone();
        let scope = p.plan.scope;
        let turn = p.plan.turn;
        let wants_files = scope != RewindScope::Conversation;
        let wants_conv = scope != RewindScope::Code;
        if (wants_files && !p.plan.can_files) || (wants_conv && !p.plan.can_conversation) {
            return Err(ControlError::Refused(format!(
                "the {} rewind to turn {turn} is not available: {}",
                scope_name(scope),
                p.plan.disabled_reason.clone().unwrap_or_default()
            )));
        }
        let blocking = p
            .plan
            .conflicts
            .iter()
            .any(|c| c.reason != ConflictReason::PathUnsafe);
        if wants_files && blocking && on_conflict == OnConflict::Refuse {
            return Err(ControlError::Refused(format!(
                "restore refused: {} conflicted file(s); nothing was written (use --on-conflict skip or overwrite)",
                p.plan.conflicts.len()
            )));
        }
        if wants_files && p.plan.requires_confirmation && !confirm {
            return Err(ControlError::Confirmation(
                "confirmation required: the restore spans changes Retrace could not track (shell commands, legacy or expired records)".into(),
            ));
        }
        let mut result = RewindResult {
            ok: true,
            partial: false,
            conversation_forked: false,
            head_id: p.head.as_str().to_string(),
            session_id: self.session.id().as_str().to_string(),
            files_written: Vec::new(),
            files_deleted: Vec::new(),
            transaction_id: None,
            undo_available: false,
            conflicts: Vec::new(),
            prompt: p.plan.prompt.clone(),
            error: None,
        };
        // The conversation half first (SPEC §5.3): a new head that ends just before the turn.
        let mut new_head: Option<HeadId> = None;
        let mut base_messages = 0usize;
        if wants_conv {
            let before = p.boundary.as_ref().and_then(|b| b.before.clone());
            let made = self.session.fork(
                &p.head,
                before.as_ref(),
                ForkSpec {
                    kind: HeadKind::Rewind,
                    name: None,
                    select: in_place,
                },
            )?;
            result.session_id = made.session_id.as_str().to_string();
            base_messages = self
                .session
                .head(&made.head)
                .map(|h| h.message_count)
                .unwrap_or(0);
            result.head_id = made.head.as_str().to_string();
            result.conversation_forked = true;
            new_head = Some(made.head);
        }
        let extra = json!({
            "scope": scope_name(scope),
            "turn": turn,
            "parent_head": p.head.as_str(),
            "new_head": new_head.as_ref().map(|h| h.as_str().to_string()),
            "base_messages": base_messages,
        });
        let mut wrote_manifest = false;
        if let (true, Some(code)) = (wants_files, p.code.as_ref()) {
            match self
                .store
                .commit_tagged(code, CommitOptions { confirm, on_conflict }, Some(extra.clone()))
            {
                Ok(outcome) => {
                    wrote_manifest = outcome.transaction_id.is_some();
                    result.files_written = outcome.files_written;
                    result.files_deleted = outcome.files_deleted;
                    result.transaction_id = outcome.transaction_id;
                    result.conflicts = outcome.conflicts;
                }
                Err(e) if wants_conv => {
                    // The head is kept; the files failed in between (SPEC §5.3).
                    result.partial = true;
                    result.ok = false;
                    result.error = Some(e.to_string());
                }
                Err(e) => return Err(commit_error(e)),
            }
            if scope == RewindScope::Code && result.transaction_id.is_some() {
                let mut files: Vec<String> = result.files_written.clone();
                files.extend(result.files_deleted.iter().cloned());
                let note = format!(
                    "Note from Retrace: the user restored these files to their state at the start of turn {turn}: {}. \
                     Edits made to them since then are no longer on disk.",
                    files.join(", ")
                );
                self.session.note(&p.head, note)?;
            }
        }
        if !wrote_manifest && (wants_conv || result.transaction_id.is_none()) && new_head.is_some() {
            let m = self.store.record_rewind(turn, extra)?;
            result.transaction_id = Some(m.id);
        }
        result.undo_available = result
            .transaction_id
            .as_ref()
            .is_some_and(|id| self.store.undo_target().is_some_and(|u| &u.id == id));
        if self.session.id() != &session_before {
            // A format-1 log was upgraded into a new session (SPEC §6): the files were restored
            // from the old session's checkpoints, and that is where the transaction stays. The new
            // session has its own sidecar, which every later turn uses (as a new process would);
            // undo, which looks there, has nothing to undo.
            self.reopen_store()?;
            result.undo_available = false;
        }
        self.plans.clear();
        out(Event::Rewound {
            scope,
            turn,
            head_id: result.head_id.clone(),
            files_written: result.files_written.clone(),
            files_deleted: result.files_deleted.clone(),
            transaction_id: result.transaction_id.clone(),
            partial: result.partial,
        });
        if in_place && new_head.is_some() {
            out(Event::HeadChanged {
                head_id: result.head_id.clone(),
            });
        }
        Ok(result)
    }

    /// Undoes the last rewind (code, conversation or both), if nothing happened since.
    pub fn undo_rewind(
        &mut self,
        transaction: Option<&str>,
        out: &mut dyn FnMut(Event),
    ) -> Result<RewindResult> {
        self.refuse_while_running()?;
        let Some(target) = self.store.undo_target().cloned() else {
            return Err(ControlError::Refused(
                "nothing to undo: undo is available right after a rewind, before any new turn or edit".into(),
            ));
        };
        if let Some(tx) = transaction {
            if tx != target.id {
                return Err(ControlError::Refused(format!(
                    "only the last rewind can be undone; that is transaction {}",
                    target.id
                )));
            }
        }
        let outcome = self.store.undo(&target.id).map_err(commit_error)?;
        let extra = target.extra.clone().unwrap_or_default();
        let parent = extra.get("parent_head").and_then(|v| v.as_str()).map(HeadId::new);
        let new_head = extra.get("new_head").and_then(|v| v.as_str()).map(HeadId::new);
        let base = extra.get("base_messages").and_then(|v| v.as_u64()).unwrap_or(0) as usize;
        if extra.get("scope").and_then(|v| v.as_str()) == Some("code") && outcome.transaction_id.is_some() {
            // The note the restore left would now be false: say the files are back.
            let mut files = outcome.files_written.clone();
            files.extend(outcome.files_deleted.iter().cloned());
            let head = self.session.selected().clone();
            self.session.note(
                &head,
                format!(
                    "Note from Retrace: the user undid that restore; these files are back as they were before it: {}.",
                    files.join(", ")
                ),
            )?;
        }
        if let (Some(parent), Some(new_head)) = (parent, new_head) {
            if self.session.selected() == &new_head {
                self.session.select(&parent)?;
                out(Event::HeadChanged {
                    head_id: parent.as_str().to_string(),
                });
            }
            let untouched = self
                .session
                .head(&new_head)
                .map(|h| h.message_count <= base)
                .unwrap_or(false);
            if untouched && self.session.selected() != &new_head {
                self.session.retire(&new_head)?;
            }
        }
        self.plans.clear();
        out(Event::Undone {
            transaction_id: target.id.clone(),
            head_id: self.session.selected().as_str().to_string(),
        });
        Ok(RewindResult {
            ok: true,
            partial: false,
            conversation_forked: false,
            head_id: self.session.selected().as_str().to_string(),
            session_id: self.session.id().as_str().to_string(),
            files_written: outcome.files_written,
            files_deleted: outcome.files_deleted,
            transaction_id: outcome.transaction_id,
            undo_available: false,
            conflicts: Vec::new(),
            prompt: target.turn.map(|t| self.prompt_of(t)).unwrap_or_default(),
            error: None,
        })
    }

    /// Prepares the revert of one file to its state before the session first touched it (§5.6).
    pub fn prepare_file_revert(&mut self, path: &std::path::Path) -> Result<RewindPlan> {
        self.refuse_while_running()?;
        let code = self.store.plan_file_revert(path).map_err(|e| match e {
            CheckpointError::UnknownFile { path, .. } => ControlError::Usage(format!(
                "this session never edited `{path}`, so there is nothing to revert"
            )),
            other => other.into(),
        })?;
        let expires = time::OffsetDateTime::now_utc() + PLAN_TTL;
        let plan = RewindPlan {
            plan_id: self.new_plan_id(),
            turn: code.plan.turn,
            scope: RewindScope::Code,
            prompt: self.prompt_of(code.plan.turn),
            can_files: true,
            can_conversation: false,
            disabled_reason: None,
            requires_confirmation: code.plan.requires_confirmation,
            coverage: code.plan.coverage,
            gaps: code.plan.gaps.clone(),
            files: code.plan.files.clone(),
            conflicts: code.plan.conflicts.clone(),
            expires_at: expires
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default(),
        };
        debug_assert!(matches!(code.kind, PlanKind::File(_)));
        self.plans.insert(
            plan.plan_id.clone(),
            PendingPlan {
                plan: plan.clone(),
                code: Some(code),
                head: self.session.selected().clone(),
                boundary: None,
                revision: self.session.revision(),
                generation: self.store.mutation_seq(),
                made: Instant::now(),
            },
        );
        Ok(plan)
    }

    /// Commits a file revert: `overwrite` replaces a file the user changed (undoable), otherwise the
    /// current content is kept and the revert refused.
    pub fn commit_file_revert(
        &mut self,
        plan_id: &str,
        overwrite: bool,
        out: &mut dyn FnMut(Event),
    ) -> Result<RewindResult> {
        let on_conflict = if overwrite {
            OnConflict::Overwrite
        } else {
            OnConflict::Refuse
        };
        self.commit_inner(plan_id, true, on_conflict, false, out)
    }
}
