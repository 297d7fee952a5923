//! `retrace fork`: a new head that ends just before a turn, selected; the code is untouched. With
//! `--worktree DIR`, a new session in a new workspace instead: its conversation ends just before
//! the turn, and its files are the workspace's as they stood when the turn started.

use std::path::PathBuf;
use std::process::ExitCode;

use retrace_protocol::{ForkRequest, WorkspaceFork, WorkspaceForkRequest};

use super::args::SessionArgs;
use crate::common::{load_config_without_mcp, print_json, service_options, with_service};
use crate::failure::{CmdResult, Failure};
use crate::output::shown_path;
use crate::plan_text::print_head;

/// A new head that ends just before a turn (selected); code untouched. With --worktree, a new
/// session in a new workspace holding the files as they stood when the turn started.
#[derive(Debug, clap::Args)]
pub struct ForkArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// The turn.
    #[arg(long)]
    pub turn: u64,
    /// A name for the head (with --worktree: the new session's head).
    #[arg(long)]
    pub name: Option<String>,
    /// Fork into a new workspace in DIR (absent or empty): a `git worktree` of the workspace's
    /// repository (detached at HEAD) or a copy, with the files as they stood when the turn
    /// started, and a new session there whose conversation ends just before the turn. The
    /// workspace and the session are not changed.
    #[arg(long, value_name = "DIR")]
    pub worktree: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// A new head ending just before the turn; selected. Or, with --worktree, a new session in a new
/// workspace.
pub fn run(a: ForkArgs) -> CmdResult {
    let s = a.session.pick()?;
    let cfg = load_config_without_mcp()?;
    if let Some(dir) = &a.worktree {
        let req = WorkspaceForkRequest {
            turn: a.turn,
            worktree: worktree_arg(dir)?,
            name: a.name.clone(),
        };
        let made = with_service(service_options(&cfg, None, false)?, async |svc| {
            let stop = tokio::spawn(crate::signals::stop_fork_on_signals()?);
            let made = svc
                .fork_into_workspace_reading(&s.id, s.workspace.as_deref(), req)
                .await
                .map_err(named);
            stop.abort();
            Ok(made?)
        })?;
        print_forked(&made, a.json)?;
        return Ok(ExitCode::SUCCESS);
    }
    with_service(service_options(&cfg, None, false)?, async |svc| {
        let h = svc.open(&s.id, s.workspace.as_deref()).await?;
        let head = h
            .fork(ForkRequest {
                turn: a.turn,
                name: a.name.clone(),
                select: true,
            })
            .await?;
        print_head(&s.id, &head, h.workspace(), a.json)?;
        Ok(ExitCode::SUCCESS)
    })
}

/// `--worktree DIR` as the absolute path the controller takes: UTF-8 (a session's workspace must
/// be), not empty.
fn worktree_arg(dir: &std::path::Path) -> Result<String, Failure> {
    if dir.as_os_str().is_empty() {
        return Err(Failure::usage(
            "--worktree: the value is empty; name a new or empty directory",
        ));
    }
    let Some(text) = dir.to_str() else {
        return Err(Failure::usage(format!(
            "--worktree `{}`: not valid UTF-8, which a session's workspace must be",
            shown_path(&dir.to_string_lossy())
        )));
    };
    if text.contains('\0') {
        return Err(Failure::usage("--worktree: the value holds a NUL byte"));
    }
    let abs = std::path::absolute(dir)
        .map_err(|e| Failure::usage(format!("--worktree `{}`: {e}", shown_path(text))))?;
    Ok(abs.to_string_lossy().into_owned())
}

/// An error about the directory named: said as `--worktree`'s.
fn named(mut e: retrace_protocol::Error) -> retrace_protocol::Error {
    if matches!(e.details, Some(retrace_protocol::ErrorDetails::Worktree { .. })) {
        e.message = format!("--worktree: {}", e.message);
    }
    e
}

/// What a fork into a new workspace made: the new session, where, and what it left.
fn print_forked(made: &WorkspaceFork, json: bool) -> Result<(), Failure> {
    if json {
        return print_json(made);
    }
    let how = if made.git_worktree {
        "a git worktree, detached at HEAD"
    } else {
        "a copy of the workspace"
    };
    println!(
        "new session {} in {} ({how}), forked from {} at turn {}",
        made.session_id,
        shown_path(&made.workspace),
        made.source_session_id,
        made.turn
    );
    println!(
        "files put back as they stood when turn {} started: {}",
        made.turn, made.files_restored
    );
    for s in &made.skipped {
        let path = s.path.as_deref().map(shown_path).unwrap_or_else(|| "-".into());
        println!("  skipped {path}: {}", shown_path(&s.says));
    }
    println!(
        "continue there: retrace --session {} (or `retrace -c` in {})",
        made.session_id,
        shown_path(&made.workspace)
    );
    Ok(())
}
