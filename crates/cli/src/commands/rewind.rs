//! `retrace rewind`: code, conversation or both back to a turn, in place on the session's own
//! workspace (SPEC §5.3): prepared, printed, then committed. The controller decides; this renders
//! the plan and the result and maps errors.

use std::process::ExitCode;

use retrace_protocol::{CommitRewind, OnConflict, PrepareRewind, RewindScope};

use super::args::SessionArgs;
use crate::common::{load_config_without_mcp, say_new_session, service_options, with_service};
use crate::failure::CmdResult;
use crate::plan_text::{print_plan, print_result_with, refused, Hints};

/// Rewind code, conversation or both to just before a turn (prepare, then commit in place).
#[derive(Debug, clap::Args)]
pub struct RewindArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// The turn to rewind to just before (its changes and everything after it are taken back).
    #[arg(long)]
    pub turn: u64,
    /// What to restore.
    #[arg(long, value_enum)]
    pub scope: ScopeArg,
    /// Prepare and print the plan only.
    #[arg(long)]
    pub dry_run: bool,
    /// Confirm a restore that spans untracked changes (shell commands, legacy records).
    #[arg(long)]
    pub yes: bool,
    /// What to do with files changed since Retrace wrote them.
    #[arg(long, value_enum, default_value = "refuse")]
    pub on_conflict: OnConflictArg,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `--scope`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ScopeArg {
    Code,
    Conversation,
    Both,
}

/// `--on-conflict`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum OnConflictArg {
    Refuse,
    Skip,
    Overwrite,
}

impl From<ScopeArg> for RewindScope {
    fn from(s: ScopeArg) -> RewindScope {
        match s {
            ScopeArg::Code => RewindScope::Code,
            ScopeArg::Conversation => RewindScope::Conversation,
            ScopeArg::Both => RewindScope::Both,
        }
    }
}

impl From<OnConflictArg> for OnConflict {
    fn from(c: OnConflictArg) -> OnConflict {
        match c {
            OnConflictArg::Refuse => OnConflict::Refuse,
            OnConflictArg::Skip => OnConflict::Skip,
            OnConflictArg::Overwrite => OnConflict::Overwrite,
        }
    }
}

/// Prepares, then commits in place (`--dry-run`: prepare only).
pub fn run(a: RewindArgs) -> CmdResult {
    let s = a.session.pick()?;
    let cfg = load_config_without_mcp()?;
    with_service(service_options(&cfg, None, false)?, async |svc| {
        let h = svc.open(&s.id, s.workspace.as_deref()).await?;
        let plan = h
            .prepare_rewind(PrepareRewind {
                turn: a.turn,
                scope: a.scope.into(),
            })
            .await?;
        if a.dry_run {
            print_plan(&plan, a.json, a.yes, a.on_conflict.into())?;
            return Ok(ExitCode::SUCCESS);
        }
        let result = h
            .commit_rewind(CommitRewind {
                plan_id: plan.plan_id.clone(),
                confirm: a.yes,
                on_conflict: a.on_conflict.into(),
                in_place: true,
            })
            .await
            .map_err(|e| {
                // When no choice writes anything (each file unsafe to write, or unreadable),
                // another `--on-conflict` is no way out: say what is.
                let stuck = !plan.choices.is_empty()
                    && !plan.choices.iter().any(|c| c.commits && c.unchanged.is_none());
                let conflict = match (stuck, a.scope) {
                    (false, _) => "; see the conflicts (--on-conflict skip or overwrite)",
                    (true, ScopeArg::Both) => {
                        "; no choice can write these files (see the conflicts); --scope conversation rewinds the conversation alone"
                    }
                    (true, _) => "; no choice can write these files (see the conflicts)",
                };
                let hints = Hints {
                    conflict,
                    confirm: "; run again with --yes",
                };
                refused(&plan, e, a.json, a.yes, &hints)
            })?;
        // A rewind of the conversation names the head it made as every frontend does.
        let conversation = if result.conversation_forked && !a.json {
            Some(format!(
                "conversation rewound: now on {}",
                super::undo::head_named(&h, &result.head_id).await?
            ))
        } else {
            None
        };
        let on_conflict: OnConflict = a.on_conflict.into();
        let unchanged = plan
            .choices
            .iter()
            .find(|c| c.on_conflict == on_conflict)
            .and_then(|c| c.unchanged.clone())
            .or_else(|| plan.unchanged.clone());
        print_result_with(
            &result,
            &s.id,
            a.json,
            conversation.as_deref(),
            unchanged.as_deref(),
        )?;
        say_new_session(&s.id, &result.session_id, h.workspace(), a.json);
        // A `both` rewind whose files were refused after its conversation half was made (files
        // changed between the preview and the commit): the result says ok and partial, the
        // conversation is restored, the files are not. Exit 3 (refused), as for any refused file
        // restore, so that a script never takes it for a full restore.
        Ok(if result.ok && result.partial {
            ExitCode::from(3)
        } else if result.ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        })
    })
}
