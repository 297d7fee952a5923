//! `retrace heads`: the heads of a session; read-only, no lease needed.

use std::process::ExitCode;

use super::args::SessionArgs;
use crate::common::{print_json, reader};
use crate::failure::CmdResult;
use retrace_protocol::words;

use crate::output::shown_text;

/// List the heads of a session.
#[derive(Debug, clap::Args)]
pub struct HeadsArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Lists the heads, the selected one marked `*`, each by its title (as every frontend names it).
pub fn run(a: HeadsArgs) -> CmdResult {
    let heads = reader(&a.session.pick_to_read()?.id)?.heads()?;
    if a.json {
        print_json(&heads)?;
        return Ok(ExitCode::SUCCESS);
    }
    for h in &heads {
        let mark = if h.selected { "*" } else { " " };
        let retired = if h.retired { " (retired)" } else { "" };
        // The title every frontend shows (its name, else what it is and its turn's prompt).
        let title = if h.title.is_empty() {
            h.kind.as_str()
        } else {
            &h.title
        };
        println!(
            "{mark} {}  {} — {}, {}{retired}",
            h.id,
            shown_text(title),
            words::count(h.message_count, "message"),
            words::count(h.turns, "turn"),
        );
    }
    Ok(ExitCode::SUCCESS)
}
