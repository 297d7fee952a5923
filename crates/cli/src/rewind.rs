//! `retrace rewind | undo | revert | fork | summarize | heads | switch` (SPEC §11): each acts in place
//! on the session's own workspace, through the controller.

use std::path::Path;
use std::process::ExitCode;

use retrace_control::{ControlError, Controller, SessionView, SummarizeWhich};
use retrace_protocol::{
    ConflictReason, Event, FileAction, OnConflict, RewindPlan, RewindResult, RewindScope,
};

use crate::common::{controller_options, data_root, model, print_json, CmdResult, Failure};
use crate::config::Config;

fn open(cfg: &Config, session: &str, workspace: Option<&Path>) -> Result<Controller, Failure> {
    let data = data_root()?;
    Ok(Controller::open(
        &data,
        session,
        workspace,
        None,
        controller_options(cfg, false),
    )?)
}

fn ignore_events() -> impl FnMut(Event) {
    |_| {}
}

/// Maps a controller error to the CLI's exit codes.
fn fail(e: ControlError) -> Failure {
    let code = match &e {
        ControlError::Usage(_) => 2,
        ControlError::Refused(_) => 3,
        ControlError::Confirmation(_) => 4,
        _ => 1,
    };
    Failure {
        code,
        error: e.into(),
    }
}

fn print_plan(plan: &RewindPlan, json: bool) -> Result<(), Failure> {
    if json {
        return print_json(plan);
    }
    let scope = match plan.scope {
        RewindScope::Code => "code",
        RewindScope::Conversation => "conversation",
        RewindScope::Both => "code and conversation",
    };
    println!(
        "Rewind {scope} to turn {}: \"{}\"",
        plan.turn,
        crate::output::first_line(&plan.prompt, 70)
    );
    if let Some(r) = &plan.disabled_reason {
        println!("  not available: {r}");
    }
    for f in &plan.files {
        let what = match f.action {
            FileAction::Write => "write ",
            FileAction::Delete => "delete",
            FileAction::Unchanged => "same  ",
            FileAction::Skip => "SKIP  ",
        };
        let conflict = f
            .conflict
            .as_ref()
            .map(|c| {
                format!(
                    "  ({})",
                    serde_json::to_value(c.reason)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default()
                )
            })
            .unwrap_or_default();
        println!("  {what} {}{conflict}", f.path);
    }
    for g in &plan.gaps {
        let detail = g.detail.as_deref().or(g.path.as_deref()).unwrap_or("");
        println!("  ! turn {} {}: {detail}", g.turn, g.reason.as_str());
    }
    if plan.requires_confirmation {
        println!("  Some changes since this turn were not tracked; confirm with --yes.");
    }
    Ok(())
}

fn print_result(r: &RewindResult, json: bool) -> Result<(), Failure> {
    if json {
        return print_json(r);
    }
    if r.conversation_forked {
        println!("conversation rewound: now on head {}", r.head_id);
    }
    for f in &r.files_written {
        println!("  restored {f}");
    }
    for f in &r.files_deleted {
        println!("  deleted  {f}");
    }
    for c in &r.conflicts {
        println!("  left alone (conflict) {}", c.path);
    }
    if let Some(tx) = &r.transaction_id {
        println!(
            "transaction {tx}{}",
            if r.undo_available {
                " — `retrace undo` takes it back"
            } else {
                ""
            }
        );
    }
    if let Some(e) = &r.error {
        eprintln!("retrace: {e}");
    }
    if !r.prompt.is_empty() && r.conversation_forked {
        println!("prompt of that turn: {}", r.prompt);
    }
    Ok(())
}

/// The arguments of `rewind`.
pub struct RewindArgs<'a> {
    pub session: &'a str,
    pub workspace: Option<&'a Path>,
    pub turn: u64,
    pub scope: RewindScope,
    pub dry_run: bool,
    pub yes: bool,
    pub on_conflict: OnConflict,
    pub json: bool,
}

/// Prepares, then commits in place (`--dry-run`: prepare only). Exit codes: 3 refused (conflicts
/// with `refuse`, an unavailable action), then 4 confirmation required, in that precedence.
pub fn rewind(cfg: &Config, a: RewindArgs<'_>) -> CmdResult {
    let mut ctl = open(cfg, a.session, a.workspace)?;
    let plan = ctl.prepare_rewind(a.turn, a.scope).map_err(fail)?;
    if a.dry_run {
        print_plan(&plan, a.json)?;
        return Ok(ExitCode::SUCCESS);
    }
    let wants_files = a.scope != RewindScope::Conversation;
    let wants_conv = a.scope != RewindScope::Code;
    let unavailable = (wants_files && !plan.can_files) || (wants_conv && !plan.can_conversation);
    let blocking = wants_files
        && plan
            .conflicts
            .iter()
            .any(|c| c.reason != ConflictReason::PathUnsafe);
    if unavailable || (blocking && a.on_conflict == OnConflict::Refuse) {
        print_plan(&plan, a.json)?;
        let why = if unavailable {
            format!(
                "this rewind is not available: {}",
                plan.disabled_reason.clone().unwrap_or_default()
            )
        } else {
            "restore refused: files changed since Retrace wrote them; nothing was written (see the conflicts; --on-conflict skip or overwrite)".to_string()
        };
        eprintln!("retrace: {why}");
        return Ok(ExitCode::from(3));
    }
    if wants_files && plan.requires_confirmation && !a.yes {
        print_plan(&plan, a.json)?;
        eprintln!("retrace: confirmation required: the restore spans changes Retrace could not track; run again with --yes");
        return Ok(ExitCode::from(4));
    }
    let result = ctl
        .commit_rewind_in_place(&plan.plan_id, a.yes, a.on_conflict, &mut ignore_events())
        .map_err(fail)?;
    print_result(&result, a.json)?;
    Ok(if result.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Undoes the last rewind.
pub fn undo(
    cfg: &Config,
    session: &str,
    workspace: Option<&Path>,
    tx: Option<&str>,
    json: bool,
) -> CmdResult {
    let mut ctl = open(cfg, session, workspace)?;
    let result = ctl.undo_rewind(tx, &mut ignore_events()).map_err(fail)?;
    print_result(&result, json)?;
    Ok(ExitCode::SUCCESS)
}

/// Reverts one file to its state before the session first touched it.
pub fn revert(
    cfg: &Config,
    session: &str,
    workspace: Option<&Path>,
    path: &Path,
    overwrite: bool,
    json: bool,
) -> CmdResult {
    let mut ctl = open(cfg, session, workspace)?;
    let plan = ctl.prepare_file_revert(path).map_err(fail)?;
    let blocking = plan
        .conflicts
        .iter()
        .any(|c| c.reason != ConflictReason::PathUnsafe);
    if blocking && !overwrite {
        print_plan(&plan, json)?;
        eprintln!("retrace: revert refused: the file changed since Retrace wrote it; --overwrite replaces it (undoable)");
        return Ok(ExitCode::from(3));
    }
    let result = ctl
        .commit_file_revert(&plan.plan_id, overwrite, &mut ignore_events())
        .map_err(fail)?;
    print_result(&result, json)?;
    Ok(ExitCode::SUCCESS)
}

fn print_head(head_id: &str, json: bool) -> Result<(), Failure> {
    if json {
        print_json(&serde_json::json!({ "head_id": head_id }))
    } else {
        println!("now on head {head_id}");
        Ok(())
    }
}

/// A new head ending just before the turn; selected.
pub fn fork(
    cfg: &Config,
    session: &str,
    workspace: Option<&Path>,
    turn: u64,
    name: Option<String>,
    json: bool,
) -> CmdResult {
    let mut ctl = open(cfg, session, workspace)?;
    let head = ctl.fork(turn, name, true, &mut ignore_events()).map_err(fail)?;
    print_head(&head, json)?;
    Ok(ExitCode::SUCCESS)
}

/// The arguments of `summarize`.
pub struct SummarizeArgs<'a> {
    pub session: &'a str,
    pub workspace: Option<&'a Path>,
    pub turn: u64,
    pub which: SummarizeWhich,
    pub model: Option<&'a str>,
    pub base_url: Option<&'a str>,
    pub json: bool,
}

/// Summarize from or up to a turn; the new head is selected.
pub fn summarize(cfg: &Config, a: SummarizeArgs<'_>) -> CmdResult {
    let mut ctl = open(cfg, a.session, a.workspace)?;
    ctl.set_model(model(cfg, a.model, a.base_url)?).map_err(fail)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(anyhow::Error::from)?;
    let mut out = |_e: Event| {};
    let head = rt
        .block_on(ctl.summarize(a.turn, a.which, &mut out))
        .map_err(fail)?;
    print_head(&head, a.json)?;
    Ok(ExitCode::SUCCESS)
}

/// Lists the heads (read-only).
pub fn heads(session: &str, json: bool) -> CmdResult {
    let view = SessionView::open(&data_root()?, session).map_err(fail)?;
    let heads = view.heads();
    if json {
        print_json(&heads)?;
        return Ok(ExitCode::SUCCESS);
    }
    for h in &heads {
        let mark = if h.selected { "*" } else { " " };
        let retired = if h.retired { " (retired)" } else { "" };
        let name = h.name.as_deref().map(|n| format!(" \"{n}\"")).unwrap_or_default();
        let parent = h
            .parent_head
            .as_deref()
            .map(|p| format!(" from {p}"))
            .unwrap_or_default();
        println!(
            "{mark} {} {}{name}{parent} — {} messages, {} turns{retired}",
            h.id, h.kind, h.message_count, h.turns
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Selects a head by id or name.
pub fn switch(cfg: &Config, session: &str, workspace: Option<&Path>, head: &str, json: bool) -> CmdResult {
    let mut ctl = open(cfg, session, workspace)?;
    let id = ctl.switch_head(head, &mut ignore_events()).map_err(fail)?;
    print_head(&id, json)?;
    Ok(ExitCode::SUCCESS)
}
