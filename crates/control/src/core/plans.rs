//! Rewind plans (SPEC §5.3, §5.6): preparing a rewind or a file revert changes nothing and keeps a
//! plan for the commit, single-use, for ten minutes at most, and only while neither the session
//! nor the workspace changes.
//!
//! Decided once: a plan carries its blockers (why a commit with the default choices would not go
//! ahead), computed here; [`gate`] checks the same conditions against the user's choices before
//! anything is written, using the store's one decision ([`RestorePlan::check_commit`]) for the
//! files; the store's commit then holds the files to the previewed plan (`external_change` for
//! anything that moved since). Frontends render plans and map error codes; they decide nothing.

use std::time::{Duration, Instant};

use retrace_checkpoint::{CheckpointError, CommitOptions, RestorePlan};
use retrace_protocol::{
    Coverage, ErrorCode, HeadId, Missing, OnConflict, PlanBlocker, PlanFileDiff, RewindPlan, RewindScope,
};
use retrace_session::Boundary;

use super::Core;
use crate::error::{coded, ControlError, Result};

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
pub(super) struct PendingPlan {
    pub(super) plan_for: PlanFor,
    pub(super) plan: RewindPlan,
    pub(super) code: Option<RestorePlan>,
    pub(super) head: HeadId,
    /// The head a conversation rewind forks from: `head`, or for a turn folded by a compaction,
    /// the head it was folded from.
    pub(super) source: HeadId,
    pub(super) boundary: Option<Boundary>,
    pub(super) revision: u64,
    pub(super) generation: u64,
    pub(super) made: Instant,
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
pub(super) fn gate(p: &PendingPlan, choice: CommitOptions) -> Result<()> {
    if let Some(PlanBlocker::Unavailable { reason }) = p.plan.blockers.first() {
        return Err(coded(
            ErrorCode::Refused,
            format!(
                "a rewind of {} to before turn {} is not available: {reason}",
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
    pub(super) fn prompt_of(&self, turn: u64) -> String {
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

    /// The plan's one-line heading, decided here for every frontend.
    fn title_of(&self, d: &Draft) -> String {
        let kind = d.code.as_ref().map(|c| &c.kind);
        match kind {
            Some(retrace_checkpoint::PlanKind::File(p)) => {
                format!("Revert {} to before the session first touched it", p.to_lossy())
            }
            Some(retrace_checkpoint::PlanKind::Version(p, v)) => {
                format!("Restore {} to version {v} of its history", p.to_lossy())
            }
            _ => {
                let scope = match d.scope {
                    RewindScope::Code => "code",
                    RewindScope::Conversation => "conversation",
                    RewindScope::Both => "code and conversation",
                };
                let prompt = self.prompt_of(d.turn);
                let first = prompt.lines().next().unwrap_or_default();
                let cut: String = first.chars().take(70).collect();
                let ellipsis = if cut.len() < first.len() { "…" } else { "" };
                format!("Rewind {scope} to before turn {}: \"{cut}{ellipsis}\"", d.turn)
            }
        }
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
        let title = self.title_of(&d);
        let mut plan = RewindPlan {
            title,
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
            unchanged: None,
        };
        if d.plan_for == PlanFor::Revert {
            // A revert is one file: skipping it is restoring nothing, which is cancelling, and
            // its commit says only refuse or overwrite. Every frontend offers what is left.
            plan.choices.retain(|c| c.on_conflict != OnConflict::Skip);
        }
        // What would change nothing says so, for every frontend.
        plan.say_unchanged();
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
        // What is kept for the commit holds no diff text: a request for one file's diff reads it
        // again, and 32 plans of a few MiB each would otherwise stay in memory.
        let mut kept = plan.clone();
        let mut code = d.code;
        for f in kept
            .files
            .iter_mut()
            .chain(code.iter_mut().flat_map(|c| c.plan.files.iter_mut()))
        {
            f.diff.text = String::new();
        }
        self.plans.insert(
            plan.plan_id.clone(),
            PendingPlan {
                plan_for: d.plan_for,
                plan: kept,
                code,
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
    pub(crate) fn prepare_revert(
        &mut self,
        path: &std::path::Path,
        version: Option<u32>,
    ) -> Result<RewindPlan> {
        let planned = match version {
            Some(v) => self.store.plan_file_version(path, v),
            None => self.store.plan_file_revert(path),
        };
        let code = planned.map_err(|e| match e {
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

    /// The whole diff, never cut, of the file shown as `path` in pending plan `plan_id` (a
    /// rewind's or a revert's): what its plan file's `diff` shows, or would have past the plan's
    /// budget. The plan stays pending; a file that changed since it was made is `stale_plan`.
    pub(crate) fn plan_file_diff(&mut self, plan_id: &str, path: &str) -> Result<PlanFileDiff> {
        let plan_for = self.plans.get(plan_id).map_or(PlanFor::Rewind, |p| p.plan_for);
        self.valid_plan(plan_id, plan_for)?;
        let p = self.plans.get(plan_id);
        let code = p
            .filter(|p| p.plan.files.iter().any(|f| f.path == path))
            .and_then(|p| p.code.as_ref())
            .ok_or_else(|| {
                retrace_protocol::Error::not_found(
                    Missing::File,
                    path,
                    format!("plan `{plan_id}` has no file `{path}`"),
                )
            })?;
        Ok(self.store.plan_file_diff(code, path)?)
    }

    /// The pending plan `plan_id`, if it is still valid and for this kind of commit. A plan gone
    /// stale is forgotten.
    pub(super) fn valid_plan(&mut self, plan_id: &str, plan_for: PlanFor) -> Result<&PendingPlan> {
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
}
