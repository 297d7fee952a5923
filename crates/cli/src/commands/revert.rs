//! `retrace revert PATH`: one file back to its state before the session first touched it (SPEC
//! §5.6), or with `--version V` to any version of its history (§5.8), in place.

use std::path::PathBuf;
use std::process::ExitCode;

use retrace_protocol::{CommitRevert, OnConflict, PrepareRevert};

use super::args::SessionArgs;
use crate::common::{load_config_without_mcp, say_new_session, service_options, with_service};
use crate::failure::CmdResult;
use crate::plan_text::{print_plan, print_result, refused, Hints};

/// Revert one file to its state before the session first touched it.
#[derive(Debug, clap::Args)]
pub struct RevertArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// The file (relative to the workspace).
    pub path: PathBuf,
    /// Restore this version of the file's history instead (see `retrace history`).
    #[arg(long, value_name = "V")]
    pub version: Option<u32>,
    /// Replace the file even if it changed since Retrace wrote it (undoable).
    #[arg(long)]
    pub overwrite: bool,
    /// Prepare and print the plan only (with the file's diff).
    #[arg(long)]
    pub dry_run: bool,
    /// Confirm a revert that spans untracked changes (a shell command in a turn that touched it).
    #[arg(long)]
    pub yes: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Reverts one file to its state before the session first touched it.
pub fn run(a: RevertArgs) -> CmdResult {
    let s = a.session.pick()?;
    let cfg = load_config_without_mcp()?;
    with_service(service_options(&cfg, None, false)?, async |svc| {
        let h = svc.open(&s.id, s.workspace.as_deref()).await?;
        let plan = h
            .prepare_revert(PrepareRevert {
                path: a.path.clone(),
                version: a.version,
            })
            .await?;
        if a.dry_run {
            let chosen = match a.overwrite {
                true => OnConflict::Overwrite,
                false => OnConflict::Refuse,
            };
            print_plan(&plan, a.json, a.yes, chosen)?;
            return Ok(ExitCode::SUCCESS);
        }
        let result = h
            .commit_revert(CommitRevert {
                plan_id: plan.plan_id.clone(),
                overwrite: a.overwrite,
                confirm: a.yes,
            })
            .await
            .map_err(|e| {
                let hints = Hints {
                    conflict: "; --overwrite replaces it (undoable)",
                    confirm: "; run again with --yes",
                };
                refused(&plan, e, a.json, a.yes, &hints)
            })?;
        print_result(&result, &s.id, a.json)?;
        say_new_session(&s.id, &result.session_id, h.workspace(), a.json);
        Ok(ExitCode::SUCCESS)
    })
}
