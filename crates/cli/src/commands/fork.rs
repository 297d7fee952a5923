//! `retrace fork`: a new head that ends just before a turn, selected; the code is untouched.

use std::process::ExitCode;

use retrace_protocol::ForkRequest;

use super::args::SessionArgs;
use crate::common::{load_config, service_options, with_service};
use crate::failure::CmdResult;
use crate::plan_text::print_head;

/// A new head that ends just before a turn (selected); code untouched.
#[derive(Debug, clap::Args)]
pub struct ForkArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// The turn.
    #[arg(long)]
    pub turn: u64,
    /// A name for the head.
    #[arg(long)]
    pub name: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// A new head ending just before the turn; selected.
pub fn run(a: ForkArgs) -> CmdResult {
    let s = a.session.pick()?;
    let cfg = load_config()?;
    with_service(service_options(&cfg, None, false)?, async |svc| {
        let h = svc.open(&s.id, s.workspace.as_deref()).await?;
        let head = h
            .fork(ForkRequest {
                turn: a.turn,
                name: a.name.clone(),
                select: true,
            })
            .await?;
        print_head(&s.id, &head, h.workspace(), a.json)?;
        Ok(ExitCode::SUCCESS)
    })
}
