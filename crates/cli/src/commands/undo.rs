//! `retrace undo`: takes back the last rewind (SPEC §5.5), in place.

use std::process::ExitCode;

use retrace_control::SessionHandle;
use retrace_protocol::{HeadId, RedoRequest, UndoRequest};

use super::args::SessionArgs;
use crate::common::{load_config_without_mcp, say_new_session, service_options, with_service};
use crate::failure::CmdResult;
use crate::output::shown_text;
use crate::plan_text::print_result_with;

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
    let cfg = load_config_without_mcp()?;
    with_service(service_options(&cfg, None, false)?, async |svc| {
        let h = svc.open(&s.id, s.workspace.as_deref()).await?;
        let before = h.status().await?.head_id;
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
        // An undo or a redo of a restore of the conversation selects another head: say which.
        let conversation = if result.head_id != before && !json {
            let state = match walk {
                Walk::Undo => "back as it was",
                Walk::Redo => "restored again",
            };
            Some(format!(
                "conversation {state}: now on {}",
                head_named(&h, &result.head_id).await?
            ))
        } else {
            None
        };
        print_result_with(&result, &s.id, json, conversation.as_deref(), None)?;
        say_new_session(&s.id, &result.session_id, h.workspace(), json);
        Ok(ExitCode::SUCCESS)
    })
}

/// Head `id` as the user knows it: its title (what every frontend calls it) and its id.
pub(super) async fn head_named(h: &SessionHandle, id: &HeadId) -> Result<String, retrace_protocol::Error> {
    let heads = h.heads().await?;
    let title = heads
        .iter()
        .find(|x| &x.id == id)
        .map(|x| x.title.as_str())
        .unwrap_or_default();
    Ok(if title.is_empty() || title == id.as_str() {
        id.to_string()
    } else {
        format!("{} ({id})", shown_text(title))
    })
}
