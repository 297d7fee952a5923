//! `retrace sessions` and `retrace transcript`: read-only, no lease needed.

use std::path::Path;
use std::process::ExitCode;

use retrace_control::{sessions, SessionView};

use crate::common::{data_root, print_json, workspace_arg, CmdResult};
use crate::output::first_line;

/// Lists the sessions of the workspace.
pub fn list(workspace: Option<&Path>, json: bool) -> CmdResult {
    let data = data_root()?;
    let ws = workspace_arg(workspace)?;
    let list = sessions(&data, Some(&ws))?;
    if json {
        print_json(&list)?;
        return Ok(ExitCode::SUCCESS);
    }
    if list.is_empty() {
        println!(
            "no sessions for {} (data in {})",
            ws.display(),
            data.root().display()
        );
    }
    for s in &list {
        println!(
            "{}  {}  heads: {}  turns: {}",
            s.id,
            s.created_at.as_deref().unwrap_or("(old log)"),
            s.heads,
            s.turns
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints a head's messages.
pub fn transcript(id: &str, head: Option<&str>, json: bool) -> CmdResult {
    let view = SessionView::open(&data_root()?, id)?;
    let msgs = view.transcript(head)?;
    if json {
        print_json(&msgs)?;
        return Ok(ExitCode::SUCCESS);
    }
    for m in &msgs {
        let turn = m.turn.map(|t| format!(" (turn {t})")).unwrap_or_default();
        println!("[{}]{turn} {}", m.role, first_line(&m.content, 200));
        for c in m.tool_calls.iter().flatten() {
            println!("    → {} {}", c.name, first_line(&c.arguments, 120));
        }
    }
    Ok(ExitCode::SUCCESS)
}
