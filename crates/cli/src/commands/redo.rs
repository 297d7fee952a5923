//! `retrace redo`: applies the newest undone rewind again (SPEC §5.5), in place.

use std::process::ExitCode;

use retrace_protocol::RedoRequest;

use super::args::SessionArgs;
use crate::common::{load_config, say_new_session, service_options, with_service};
use crate::failure::CmdResult;
use crate::plan_text::print_result;

/// Redo the last undone rewind.
#[derive(Debug, clap::Args)]
pub struct RedoArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// The undone transaction to apply again (must be the last one undone).
    #[arg(long)]
    pub transaction: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Applies the newest undone rewind again.
pub fn run(a: RedoArgs) -> CmdResult {
    let s = a.session.pick()?;
    let cfg = load_config()?;
    with_service(service_options(&cfg, None, false)?, async |svc| {
        let h = svc.open(&s.id, s.workspace.as_deref()).await?;
        let result = h
            .redo(RedoRequest {
                transaction_id: a.transaction.clone(),
            })
            .await?;
        print_result(&result, &s.id, a.json)?;
        say_new_session(&s.id, &result.session_id, h.workspace(), a.json);
        Ok(ExitCode::SUCCESS)
    })
}
