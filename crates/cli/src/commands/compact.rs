//! `retrace compact`: the selected head compacted now (SPEC §7): the model summarizes everything
//! before its latest turn into a new selected summary head.

use std::process::ExitCode;

use retrace_protocol::CompactRequest;

use super::args::{ModelArgs, SessionArgs};
use crate::common::{load_config_without_mcp, service_options, with_service};
use crate::failure::CmdResult;
use crate::model::summary_model;
use crate::plan_text::print_head;

/// Compact the selected head now: the model summarizes everything before its latest turn
/// into a new selected summary head; the original head stays a version.
#[derive(Debug, clap::Args)]
#[command(
    mut_arg("model", |a| a.help("The model that writes the summary")),
    mut_arg("base_url", |a| a.help("An OpenAI-compatible endpoint")),
)]
pub struct CompactArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Compacts the selected head now; the new summary head is selected.
pub fn run(a: CompactArgs) -> CmdResult {
    let s = a.session.pick()?;
    let cfg = load_config_without_mcp()?;
    let spec = a.model.spec(&cfg)?;
    with_service(service_options(&cfg, None, false)?, async |svc| {
        let h = svc.open(&s.id, s.workspace.as_deref()).await?;
        let spec = summary_model(&cfg, &h, spec, a.model.given()).await?;
        let signals = tokio::spawn(crate::signals::cancel_on_signals(
            h.clone(),
            "the compaction",
            None,
        ));
        let head = h.compact(CompactRequest { model: Some(spec) }).await;
        signals.abort();
        let head = head?;
        print_head(&s.id, &head, h.workspace(), a.json)?;
        Ok(ExitCode::SUCCESS)
    })
}
