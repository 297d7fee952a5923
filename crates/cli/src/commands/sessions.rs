//! `retrace sessions`: list the sessions of the workspace (read-only, no lease needed); `delete ID`
//! and `prune --older-than AGE` remove sessions (log, lease, whole sidecar; SPEC §2). A session a
//! process writes is refused (delete, exit 1 naming the holder) or left alone (prune, listed as
//! held). A session forked into a new workspace keeps that directory unless asked to remove it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use retrace_control::{PruneRequest, Service, ServiceOptions};
use retrace_protocol::{words, ErrorCode, RemovedSession};
use time::format_description::well_known::Rfc3339;

use crate::common::{data_root, print_json, reading, with_service, workspace_arg};
use crate::failure::{CmdResult, Failure};
use crate::output::{first_line, human_bytes, shown_path};

/// List the sessions of the workspace (newest first); delete or prune them.
#[derive(Debug, clap::Args)]
pub struct SessionsArgs {
    #[command(subcommand)]
    pub action: Option<SessionsAction>,
    /// The workspace (default: the current directory).
    #[arg(long, value_name = "DIR", global = true)]
    pub workspace: Option<PathBuf>,
    /// Print JSON.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, clap::Subcommand)]
pub enum SessionsAction {
    /// Delete a session: its log, its lease and its whole checkpoint sidecar (refused while a
    /// process writes it). A session forked into a new workspace keeps that directory unless
    /// --remove-worktree is given (or, on a terminal, the question is answered yes).
    Delete {
        /// The session: its id or any unambiguous prefix of it.
        id: String,
        /// Also remove the directory a fork into a new workspace made for the session (`git
        /// worktree remove --force`, or the copy), with everything in it.
        #[arg(long)]
        remove_worktree: bool,
    },
    /// Delete the sessions of the workspace (or, with --all, of every workspace) whose log was
    /// last written longer ago than AGE; sessions a process writes are kept.
    Prune {
        /// An age: a number and a unit (s, m, h, d, w), like 30d.
        #[arg(long, value_name = "AGE")]
        older_than: String,
        /// Every session of the data directory, not only this workspace's.
        #[arg(long, conflicts_with = "workspace")]
        all: bool,
        /// List what would be deleted; delete nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

/// `sessions`, `sessions delete ID` or `sessions prune …`.
pub fn run(a: SessionsArgs) -> CmdResult {
    match a.action {
        None => list(a.workspace.as_deref(), a.json),
        Some(SessionsAction::Delete { id, remove_worktree }) => {
            delete(&session_to_delete(&id)?, remove_worktree, a.json)
        }
        Some(SessionsAction::Prune {
            older_than,
            all,
            dry_run,
        }) => prune(&older_than, all, a.workspace.as_deref(), dry_run, a.json),
    }
}

/// Lists the sessions of the workspace, newest first.
fn list(workspace: Option<&Path>, json: bool) -> CmdResult {
    let ws = workspace_arg(workspace)?;
    let service = reading()?;
    let list = crate::common::runtime()?.block_on(service.sessions(Some(&ws)))?;
    for (path, problem) in service.unlisted_sessions()? {
        eprintln!(
            "retrace: warning: {} is not listed: {} (`retrace sessions delete ID` removes it)",
            shown_path(&path),
            shown_path(&problem)
        );
    }
    if json {
        print_json(&list)?;
        return Ok(ExitCode::SUCCESS);
    }
    let (current, old): (Vec<_>, Vec<_>) = list.iter().partition(|s| s.workspace.is_some());
    if current.is_empty() {
        println!(
            "no sessions for {} (data in {})",
            shown_path(&ws.display().to_string()),
            shown_path(&service.data_root().display().to_string())
        );
    }
    let now = time::OffsetDateTime::now_utc();
    for s in &current {
        let used = s
            .last_used_at
            .as_deref()
            .or(s.created_at.as_deref())
            .and_then(|t| time::OffsetDateTime::parse(t, &Rfc3339).ok())
            .map(|t| words::ago((now - t).whole_seconds()))
            .unwrap_or_else(|| "-".into());
        let heads = match s.heads {
            0 | 1 => String::new(),
            n => format!(", {}", words::count(n, "head")),
        };
        let origin = match (&s.forked_from, s.forks.len()) {
            (Some(f), _) if f.turn.is_some() => format!(
                ", fork of {} at turn {}",
                f.session_id,
                f.turn.unwrap_or_default()
            ),
            (_, 0) => String::new(),
            (_, n) => format!(", forked into {}", words::count(n, "new workspace")),
        };
        let prompt = match &s.first_prompt {
            Some(p) => format!("  \"{}\"", first_line(p, 60)),
            None => "  (no prompt yet)".into(),
        };
        println!(
            "{}  {used}  {}{heads}{origin}{prompt}",
            s.id,
            words::count(s.turns, "turn"),
        );
    }
    if !old.is_empty() {
        println!(
            "old (format-1) logs, which record no workspace; a change to one goes to a new session of the directory it is run in:"
        );
    }
    for s in &old {
        println!(
            "{}  (workspace unknown)  {}, {}",
            s.id,
            words::count(s.turns, "turn"),
            words::count(s.heads, "head")
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The session `sessions delete` names: the one its id or prefix names, else the id as given (what
/// is left of a session without its log is still deleted by its whole id).
fn session_to_delete(given: &str) -> Result<String, Failure> {
    match reading()?.resolve_session(given) {
        Ok(id) => Ok(id.as_str().to_string()),
        Err(e) if e.code == ErrorCode::NotFound => Ok(given.to_string()),
        Err(e) => Err(e.into()),
    }
}

fn service_options() -> Result<ServiceOptions, Failure> {
    Ok(ServiceOptions::new(data_root()?.root()))
}

fn line(verb: &str, r: &RemovedSession) {
    let ws = r
        .workspace
        .as_deref()
        .map(shown_path)
        .unwrap_or_else(|| "(workspace unknown)".to_string());
    let used = r
        .last_used
        .as_deref()
        .map(|t| t.chars().take(19).collect::<String>())
        .unwrap_or_default();
    println!(
        "{verb} {}  {ws}  last used {used}  {}",
        r.id,
        human_bytes(r.bytes)
    );
}

/// `sessions delete ID [--remove-worktree]`.
fn delete(id: &str, remove_worktree: bool, json: bool) -> CmdResult {
    let remove = remove_worktree || (!json && asked_to_remove(id)?);
    let removed = with_service(service_options()?, async |svc: &Service| {
        svc.delete_session_with(id, remove)
            .await
            .map_err(|e| match e.code {
                ErrorCode::Refused => Failure::hinted(
                    e,
                    &format!(" (to delete the session and keep the directory: retrace sessions delete {id})"),
                ),
                _ => e.into(),
            })
    })?;
    if json {
        print_json(&removed)?;
    } else {
        line("deleted", &removed);
    }
    match (&removed.worktree, removed.worktree_removed) {
        (Some(dir), true) => {
            if !json {
                println!("removed its workspace {}", shown_path(dir));
            }
        }
        (Some(dir), false) if remove_worktree => eprintln!(
            "retrace: its workspace {} was gone already",
            shown_path(dir)
        ),
        (Some(dir), false) => eprintln!(
            "retrace: its workspace {} stays; remove it with `git worktree remove --force {}` (a git worktree) or delete the directory",
            shown_path(dir),
            shown_path(dir)
        ),
        (None, _) if remove_worktree => eprintln!(
            "retrace: session {} was not forked into a new workspace: there was no directory of its own to remove (its workspace stays)",
            removed.id
        ),
        (None, _) => {}
    }
    Ok(ExitCode::SUCCESS)
}

/// On a terminal, when the session was forked into a new workspace: whether the user wants that
/// directory removed too (asked, never assumed). Elsewhere: no.
fn asked_to_remove(id: &str) -> Result<bool, Failure> {
    use std::io::{BufRead, IsTerminal, Write};
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Ok(false);
    }
    let service = reading()?;
    let sessions = crate::common::runtime()?.block_on(service.sessions(None))?;
    let Some(dir) = sessions
        .into_iter()
        .find(|s| s.id.as_str() == id)
        .and_then(|s| s.forked_from)
        .and_then(|f| f.directory)
    else {
        return Ok(false);
    };
    eprint!(
        "session {id} was forked into {}; remove that directory too, with everything in it? [y/N] ",
        shown_path(&dir)
    );
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| Failure::usage(format!("cannot read the answer: {e}")))?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

/// `sessions prune --older-than AGE [--all] [--dry-run]`.
fn prune(older_than: &str, all: bool, workspace: Option<&Path>, dry_run: bool, json: bool) -> CmdResult {
    let age = parse_age(older_than).map_err(|e| Failure::usage(format!("--older-than: {e}")))?;
    let workspace = if all {
        None
    } else {
        Some(workspace_arg(workspace)?)
    };
    let req = PruneRequest {
        older_than: age,
        workspace,
        dry_run,
    };
    let report = with_service(service_options()?, async |svc: &Service| {
        Ok(svc.prune_sessions(req).await?)
    })?;
    if json {
        print_json(&report)?;
        return Ok(ExitCode::SUCCESS);
    }
    let verb = if dry_run { "would delete" } else { "deleted" };
    for r in &report.removed {
        line(verb, r);
    }
    for id in &report.held {
        println!("kept {id}  (a process is writing it)");
    }
    let bytes: u64 = report.removed.iter().map(|r| r.bytes).sum();
    let summary = if dry_run { "would be deleted" } else { "deleted" };
    println!(
        "{} {summary}, {}; {} held",
        retrace_protocol::words::count(report.removed.len(), "session"),
        human_bytes(bytes),
        report.held.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// `30d`, `12h`, `2w`, `90m`, `45s`: a number and one unit.
fn parse_age(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not an age (like 30d, 12h or 2w)"))?;
    let secs: u64 = match unit.trim() {
        "s" => 1,
        "m" | "min" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        "" => {
            return Err(format!(
                "`{s}` has no unit; write {n}d for days (s, m, h, d or w)"
            ))
        }
        other => return Err(format!("unknown unit `{other}` in `{s}` (use s, m, h, d or w)")),
    };
    n.checked_mul(secs)
        .map(Duration::from_secs)
        .ok_or_else(|| format!("`{s}` is too long"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages() {
        assert_eq!(parse_age("30d"), Ok(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_age("12h"), Ok(Duration::from_secs(12 * 3600)));
        assert_eq!(parse_age("0s"), Ok(Duration::ZERO));
        assert!(parse_age("30").unwrap_err().contains("no unit"));
        assert!(parse_age("3 fortnights").is_err());
        assert!(parse_age("d").is_err());
    }
}
