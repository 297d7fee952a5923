//! `retrace undo`: takes back the last rewind (SPEC §5.5), in place.

use std::process::ExitCode;

use retrace_protocol::{RedoRequest, UndoRequest};

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
    walk(a.session, a.transaction, a.json, Walk::Undo)
}

/// Which way `undo` and `redo` walk the session's line of restores.
pub(super) enum Walk {
    Undo,
    Redo,
}

/// Undoes the last rewind, or applies the last undone one again, and prints the result.
pub(super) fn walk(session: SessionArgs, transaction: Option<String>, json: bool, walk: Walk) -> CmdResult {
    let s = session.pick()?;
    let cfg = load_config()?;
    with_service(service_options(&cfg, None, false)?, async |svc| {
        let h = svc.open(&s.id, s.workspace.as_deref()).await?;
        let result = match walk {
            Walk::Undo => {
                h.undo(UndoRequest {
                    transaction_id: transaction.clone(),
                })
                .await?
            }
            Walk::Redo => {
                h.redo(RedoRequest {
                    transaction_id: transaction.clone(),
                })
                .await?
            }
        };
        print_result(&result, &s.id, json)?;
        say_new_session(&s.id, &result.session_id, h.workspace(), json);
        Ok(ExitCode::SUCCESS)
    })
}
