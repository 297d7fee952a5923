//! `retrace sessions` and `retrace transcript`: read-only, no lease needed.

use std::path::Path;
use std::process::ExitCode;

use retrace_control::{Service, ServiceOptions, SessionReader};

use crate::common::{data_root, print_json, workspace_arg, CmdResult, Failure};
use crate::output::{first_line, shown_path, tokens};

/// A service for reading only (no runtime needed: nothing is opened for writing).
fn reading() -> Result<Service, Failure> {
    Ok(Service::new(ServiceOptions::new(data_root()?.root())))
}

/// Session `id`, opened for reading.
pub fn reader(id: &str) -> Result<SessionReader, Failure> {
    Ok(reading()?.reader(id)?)
}

/// Lists the sessions of the workspace, newest first.
pub fn list(workspace: Option<&Path>, json: bool) -> CmdResult {
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
    for s in &current {
        println!(
            "{}  {}  heads: {}  turns: {}",
            s.id,
            s.created_at.as_deref().unwrap_or("-"),
            s.heads,
            s.turns
        );
    }
    if !old.is_empty() {
        println!(
            "old (format-1) logs, which record no workspace; a change to one goes to a new session of the directory it is run in:"
        );
    }
    for s in &old {
        println!(
            "{}  (workspace unknown)  heads: {}  turns: {}",
            s.id, s.heads, s.turns
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints a head's items (`--items`): what every frontend shows, tool calls with their status
/// and diffs, checkpoints, notes.
pub fn items(id: &str, head: Option<&str>, json: bool) -> CmdResult {
    let items = reader(id)?.items(head)?;
    if json {
        print_json(&items)?;
        return Ok(ExitCode::SUCCESS);
    }
    for i in &items {
        print!("{}", crate::item_text::item(i));
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints a head's messages.
pub fn transcript(id: &str, head: Option<&str>, json: bool) -> CmdResult {
    let msgs = reader(id)?.transcript(head)?;
    if json {
        print_json(&msgs)?;
        return Ok(ExitCode::SUCCESS);
    }
    for m in &msgs {
        let turn = m.turn.map(|t| format!(" (turn {t})")).unwrap_or_default();
        println!("[{}]{turn} {}", m.role.as_str(), first_line(&m.content, 200));
        for c in m.tool_calls.iter().flatten() {
            println!("    → {} {}", shown_path(&c.name), first_line(&c.arguments, 120));
        }
        if let Some(u) = &m.usage {
            println!("    {}", tokens(u));
        }
    }
    Ok(ExitCode::SUCCESS)
}
