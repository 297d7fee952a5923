//! `retrace rewind | undo | revert | fork | summarize | heads | switch` (SPEC §11): each acts in place
//! on the session's own workspace, through the controller. They render plans and results and map
//! error codes; the controller decides.

use std::path::Path;
use std::process::ExitCode;

use retrace_protocol::{
    CommitRevert, CommitRewind, CompactRequest, ErrorCode, FileAction, ForkRequest, HeadRef, OnConflict,
    PrepareRevert, PrepareRewind, RewindPlan, RewindResult, RewindScope, SummarizeDirection,
    SummarizeRequest, SwitchRequest, UndoRequest,
};

use crate::common::{print_json, say_new_session, service_options, with_service, CmdResult, Failure};
use crate::config::Config;
use crate::output::{first_line, shown_path, shown_text};

fn print_plan(plan: &RewindPlan, json: bool, confirmed: bool) -> Result<(), Failure> {
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
        first_line(&plan.prompt, 70)
    );
    if let Some(r) = &plan.disabled_reason {
        println!("  not available: {}", shown_path(r));
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
            .map(|c| format!("  ({})", c.reason.as_str()))
            .unwrap_or_default();
        println!("  {what} {}{conflict}", shown_path(&f.path));
    }
    for g in &plan.gaps {
        let detail = g.detail.as_deref().or(g.path.as_deref()).unwrap_or("");
        println!(
            "  ! turn {} {}: {}",
            g.turn,
            g.reason.as_str(),
            shown_path(detail)
        );
    }
    if plan.requires_confirmation && !confirmed {
        println!("  Some changes since this turn were not tracked; confirm with --yes.");
    }
    Ok(())
}

/// Prints a result; `asked` is the session the command named (an old flat log keeps the
/// transaction of a restore, so its undo is asked of it).
fn print_result(r: &RewindResult, asked: &str, json: bool) -> Result<(), Failure> {
    if json {
        return print_json(r);
    }
    if r.conversation_forked {
        println!("conversation rewound: now on head {}", r.head_id);
    }
    // A conflicted file that was written anyway (`--on-conflict overwrite`) says so where it is
    // listed as written; only the others were left alone.
    let over = |f: &str| {
        r.conflicts
            .iter()
            .find(|c| c.path == f)
            .map(|c| c.reason.as_str())
    };
    for f in &r.files_written {
        match over(f) {
            Some(why) => println!("  restored {}  (over a {why} conflict)", shown_path(f)),
            None => println!("  restored {}", shown_path(f)),
        }
    }
    for f in &r.files_deleted {
        match over(f) {
            Some(why) => println!("  deleted  {}  (over a {why} conflict)", shown_path(f)),
            None => println!("  deleted  {}", shown_path(f)),
        }
    }
    let done = |p: &String| r.files_written.contains(p) || r.files_deleted.contains(p);
    for c in r.conflicts.iter().filter(|c| !done(&c.path)) {
        println!("  left alone ({}) {}", c.reason.as_str(), shown_path(&c.path));
    }
    let nothing_changed = r.files_written.is_empty() && r.files_deleted.is_empty() && r.error.is_none();
    if nothing_changed && r.conflicts.is_empty() && !r.conversation_forked {
        println!("  nothing to restore: every file is already as it was");
    } else if nothing_changed && !r.conflicts.is_empty() {
        // Every file there was to restore was skipped: say so, not just list them.
        println!("  no file changed: every file to restore was left alone");
    }
    if let Some(tx) = &r.transaction_id {
        let undo = match (r.undo_available, r.session_id.as_str() == asked) {
            (false, _) => String::new(),
            (true, true) => " — `retrace undo` takes it back".to_string(),
            (true, false) => format!(
                " — `retrace undo --session {}` takes it back (the restore is kept with the old log)",
                shown_path(asked)
            ),
        };
        println!("transaction {tx}{undo}");
    }
    if let Some(e) = &r.error {
        eprintln!("retrace: {}", shown_path(e));
    }
    if !r.prompt.is_empty() && r.conversation_forked {
        println!("prompt of that turn: {}", shown_text(&r.prompt));
    }
    Ok(())
}

/// A refused commit: the plan it refused goes to stdout, the reason and what to do to stderr; with
/// `--json`, the plan is the failure's one document, with `ok: false` and `error` (SPEC §11). Any
/// other error is just an error.
fn refused(
    plan: &RewindPlan,
    e: retrace_protocol::Error,
    json: bool,
    confirmed: bool,
    hints: &Hints,
) -> Failure {
    let hint = match e.code {
        ErrorCode::Conflict => hints.conflict,
        ErrorCode::ConfirmationRequired => hints.confirm,
        _ => "",
    };
    if !matches!(
        e.code,
        ErrorCode::Refused | ErrorCode::Conflict | ErrorCode::ConfirmationRequired
    ) {
        return Failure::hinted(e, hint);
    }
    if json {
        return Failure::hinted(e, hint).with_plan(plan);
    }
    if let Err(f) = print_plan(plan, json, confirmed) {
        return f;
    }
    Failure::hinted(e, hint)
}

/// What to tell the user about a refused commit, in this command's flags.
struct Hints {
    conflict: &'static str,
    confirm: &'static str,
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

/// Prepares, then commits in place (`--dry-run`: prepare only).
pub fn rewind(cfg: &Config, a: RewindArgs<'_>) -> CmdResult {
    with_service(service_options(cfg, None, false)?, async |svc| {
        let h = svc.open(a.session, a.workspace).await?;
        let plan = h
            .prepare_rewind(PrepareRewind {
                turn: a.turn,
                scope: a.scope,
            })
            .await?;
        if a.dry_run {
            print_plan(&plan, a.json, a.yes)?;
            return Ok(ExitCode::SUCCESS);
        }
        let result = h
            .commit_rewind(CommitRewind {
                plan_id: plan.plan_id.clone(),
                confirm: a.yes,
                on_conflict: a.on_conflict,
                in_place: true,
            })
            .await
            .map_err(|e| {
                let hints = Hints {
                    conflict: "; see the conflicts (--on-conflict skip or overwrite)",
                    confirm: "; run again with --yes",
                };
                refused(&plan, e, a.json, a.yes, &hints)
            })?;
        print_result(&result, a.session, a.json)?;
        say_new_session(a.session, &result.session_id, h.workspace(), a.json);
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

/// Undoes the last rewind.
pub fn undo(
    cfg: &Config,
    session: &str,
    workspace: Option<&Path>,
    tx: Option<&str>,
    json: bool,
) -> CmdResult {
    with_service(service_options(cfg, None, false)?, async |svc| {
        let h = svc.open(session, workspace).await?;
        let result = h
            .undo(UndoRequest {
                transaction_id: tx.map(str::to_string),
            })
            .await?;
        print_result(&result, session, json)?;
        say_new_session(session, &result.session_id, h.workspace(), json);
        Ok(ExitCode::SUCCESS)
    })
}

/// The arguments of `revert`.
pub struct RevertArgs<'a> {
    pub session: &'a str,
    pub workspace: Option<&'a Path>,
    pub path: &'a Path,
    pub overwrite: bool,
    pub yes: bool,
    pub json: bool,
}

/// Reverts one file to its state before the session first touched it.
pub fn revert(cfg: &Config, a: RevertArgs<'_>) -> CmdResult {
    let RevertArgs {
        session,
        workspace,
        path,
        overwrite,
        yes,
        json,
    } = a;
    with_service(service_options(cfg, None, false)?, async |svc| {
        let h = svc.open(session, workspace).await?;
        let plan = h
            .prepare_revert(PrepareRevert {
                path: path.to_path_buf(),
            })
            .await?;
        let result = h
            .commit_revert(CommitRevert {
                plan_id: plan.plan_id.clone(),
                overwrite,
                confirm: yes,
            })
            .await
            .map_err(|e| {
                let hints = Hints {
                    conflict: "; --overwrite replaces it (undoable)",
                    confirm: "; run again with --yes",
                };
                refused(&plan, e, json, yes, &hints)
            })?;
        print_result(&result, session, json)?;
        say_new_session(session, &result.session_id, h.workspace(), json);
        Ok(ExitCode::SUCCESS)
    })
}

/// Prints `{head_id, session_id}`, and after a write to an old flat log, which session to use next.
fn print_head(asked: &str, head: &HeadRef, workspace: &Path, json: bool) -> Result<(), Failure> {
    if json {
        print_json(head)?;
    } else {
        println!("now on head {}", head.head_id);
    }
    say_new_session(asked, &head.session_id, workspace, json);
    Ok(())
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
    with_service(service_options(cfg, None, false)?, async |svc| {
        let h = svc.open(session, workspace).await?;
        let head = h
            .fork(ForkRequest {
                turn,
                name,
                select: true,
            })
            .await?;
        print_head(session, &head, h.workspace(), json)?;
        Ok(ExitCode::SUCCESS)
    })
}

/// The arguments of `summarize`.
pub struct SummarizeArgs<'a> {
    pub session: &'a str,
    pub workspace: Option<&'a Path>,
    pub turn: u64,
    pub direction: SummarizeDirection,
    pub model: Option<&'a str>,
    pub base_url: Option<&'a str>,
    pub json: bool,
}

/// Summarize from or up to a turn; the new head is selected. Whether there is anything to
/// summarize is checked before the model is needed.
pub fn summarize(cfg: &Config, a: SummarizeArgs<'_>) -> CmdResult {
    let spec = crate::common::model_spec(cfg, a.model, a.base_url)?;
    let given = a.model.is_some() || a.base_url.is_some();
    with_service(service_options(cfg, None, false)?, async |svc| {
        let h = svc.open(a.session, a.workspace).await?;
        let spec = summary_model(cfg, &h, spec, given).await?;
        let signals = tokio::spawn(crate::exec::cancel_on_signals(h.clone(), "the summary"));
        let head = h
            .summarize(SummarizeRequest {
                turn: a.turn,
                direction: a.direction,
                model: Some(spec),
            })
            .await;
        signals.abort();
        let head = head?;
        print_head(a.session, &head, h.workspace(), a.json)?;
        Ok(ExitCode::SUCCESS)
    })
}

/// The model that writes a summary: the one given (`--model`/`--base-url`), else the session's
/// own (the one its log records, as `exec --session` reopens it), else the configured one.
async fn summary_model(
    cfg: &Config,
    h: &retrace_control::SessionHandle,
    configured: retrace_protocol::ModelSpec,
    given: bool,
) -> Result<retrace_protocol::ModelSpec, Failure> {
    if given {
        return Ok(configured);
    }
    let Some(own) = h.recorded_model().await? else {
        return Ok(configured);
    };
    let reopened = crate::common::recorded_model(cfg, &own);
    if let Some(notice) = &reopened.notice {
        crate::exec::say(&format!("retrace: {notice}"));
    }
    Ok(reopened.spec)
}

/// Compacts the selected head now (SPEC §7 `compact`); the new summary head is selected.
pub fn compact(
    cfg: &Config,
    session: &str,
    workspace: Option<&Path>,
    model: Option<&str>,
    base_url: Option<&str>,
    json: bool,
) -> CmdResult {
    let spec = crate::common::model_spec(cfg, model, base_url)?;
    let given = model.is_some() || base_url.is_some();
    with_service(service_options(cfg, None, false)?, async |svc| {
        let h = svc.open(session, workspace).await?;
        let spec = summary_model(cfg, &h, spec, given).await?;
        let signals = tokio::spawn(crate::exec::cancel_on_signals(h.clone(), "the compaction"));
        let head = h.compact(CompactRequest { model: Some(spec) }).await;
        signals.abort();
        let head = head?;
        print_head(session, &head, h.workspace(), json)?;
        Ok(ExitCode::SUCCESS)
    })
}

/// Lists the heads (read-only).
pub fn heads(session: &str, json: bool) -> CmdResult {
    let reader = crate::sessions::reader(session)?;
    let heads = reader.heads()?;
    if json {
        print_json(&heads)?;
        return Ok(ExitCode::SUCCESS);
    }
    for h in &heads {
        let mark = if h.selected { "*" } else { " " };
        let retired = if h.retired { " (retired)" } else { "" };
        let name = h
            .name
            .as_deref()
            .map(|n| format!(" \"{}\"", shown_path(n)))
            .unwrap_or_default();
        let parent = h
            .parent_head
            .as_ref()
            .map(|p| format!(" from {p}"))
            .unwrap_or_default();
        println!(
            "{mark} {} {}{name}{parent} — {} messages, {} turns{retired}",
            h.id,
            h.kind.as_str(),
            h.message_count,
            h.turns
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Selects a head by id or name.
pub fn switch(cfg: &Config, session: &str, workspace: Option<&Path>, head: &str, json: bool) -> CmdResult {
    with_service(service_options(cfg, None, false)?, async |svc| {
        let h = svc.open(session, workspace).await?;
        let now = h
            .switch(SwitchRequest {
                head: head.to_string(),
            })
            .await?;
        print_head(session, &now, h.workspace(), json)?;
        Ok(ExitCode::SUCCESS)
    })
}
