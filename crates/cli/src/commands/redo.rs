//! `retrace redo`: applies the newest undone rewind again (SPEC §5.5), in place.

use super::args::SessionArgs;
use super::undo::{walk, Walk};
use crate::failure::CmdResult;

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
    walk(a.session, a.transaction, a.json, Walk::Redo)
}
