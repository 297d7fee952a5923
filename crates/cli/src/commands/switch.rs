//! `retrace switch HEAD`: selects a head by id or name.

use std::process::ExitCode;

use retrace_protocol::SwitchRequest;

use super::args::SessionArgs;
use crate::common::{load_config_without_mcp, service_options, with_service};
use crate::failure::CmdResult;
use crate::plan_text::print_head;

/// Select a head (id or name).
#[derive(Debug, clap::Args)]
pub struct SwitchArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// The head.
    pub head: String,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Selects the head.
pub fn run(a: SwitchArgs) -> CmdResult {
    let s = a.session.pick()?;
    let cfg = load_config_without_mcp()?;
    with_service(service_options(&cfg, None, false)?, async |svc| {
        let h = svc.open(&s.id, s.workspace.as_deref()).await?;
        let now = h.switch(SwitchRequest { head: a.head.clone() }).await?;
        print_head(&s.id, &now, h.workspace(), a.json)?;
        Ok(ExitCode::SUCCESS)
    })
}
