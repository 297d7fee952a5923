//! `retrace undo`: takes back the last rewind (SPEC §5.5), in place.

use std::process::ExitCode;

use retrace_protocol::UndoRequest;

use super::args::SessionArgs;
use crate::common::{load_config, say_new_session, service_options, with_service};
use crate::failure::CmdResult;
use crate::plan_text::print_result;

/// Undo the last rewind.
#[derive(Debug, clap::Args)]
pub struct UndoArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// The transaction to undo (must be the last rewind).
    #[arg(long)]
    pub transaction: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Undoes the last rewind.
pub fn run(a: UndoArgs) -> CmdResult {
    let s = a.session.pick()?;
    let cfg = load_config()?;
    with_service(service_options(&cfg, None, false)?, async |svc| {
        let h = svc.open(&s.id, s.workspace.as_deref()).await?;
        let result = h
            .undo(UndoRequest {
                transaction_id: a.transaction.clone(),
            })
            .await?;
        print_result(&result, &s.id, a.json)?;
        say_new_session(&s.id, &result.session_id, h.workspace(), a.json);
        Ok(ExitCode::SUCCESS)
    })
}
