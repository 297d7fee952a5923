//! `retrace heads`: the heads of a session; read-only, no lease needed.

use std::process::ExitCode;

use super::args::SessionArgs;
use crate::common::{print_json, reader};
use crate::failure::CmdResult;
use crate::output::shown_path;

/// List the heads of a session.
#[derive(Debug, clap::Args)]
pub struct HeadsArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Lists the heads, the selected one marked `*`.
pub fn run(a: HeadsArgs) -> CmdResult {
    let heads = reader(&a.session.pick_to_read()?.id)?.heads()?;
    if a.json {
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
