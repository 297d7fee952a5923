//! `retrace transcript`: a head's messages, or its items as every frontend shows them; read-only,
//! no lease needed.

use std::process::ExitCode;

use super::args::SessionArgs;
use crate::common::{print_json, reader};
use crate::failure::CmdResult;
use crate::output::{first_line, shown_path, tokens};

/// Print a head's messages.
#[derive(Debug, clap::Args)]
pub struct TranscriptArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// The head (id or name; default: the selected one).
    #[arg(long)]
    pub head: Option<String>,
    /// Print the head's items (prompts, answers, tool calls with status and diffs,
    /// checkpoints, notes) as every frontend shows them, instead of its raw messages.
    #[arg(long)]
    pub items: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// The head's items with `--items`, else its messages.
pub fn run(a: TranscriptArgs) -> CmdResult {
    let id = a.session.pick_to_read()?.id;
    match a.items {
        true => items(&id, a.head.as_deref(), a.json),
        false => messages(&id, a.head.as_deref(), a.json),
    }
}

/// Prints a head's items (`--items`): what every frontend shows, tool calls with their status
/// and diffs, checkpoints, notes.
fn items(id: &str, head: Option<&str>, json: bool) -> CmdResult {
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
fn messages(id: &str, head: Option<&str>, json: bool) -> CmdResult {
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
