//! `retrace summarize`: the conversation from (or up to) a turn replaced by a summary the model
//! writes, on a new selected head (SPEC §5.1).

use std::process::ExitCode;

use retrace_protocol::{SummarizeDirection, SummarizeRequest};

use super::args::{ModelArgs, SessionArgs};
use crate::common::{load_config_without_mcp, service_options, with_service};
use crate::failure::CmdResult;
use crate::model::summary_model;
use crate::plan_text::print_head;

/// Replace the conversation from (or up to) a turn by a summary, on a new selected head.
#[derive(Debug, clap::Args)]
#[command(
    mut_arg("model", |a| a.help("The model that writes the summary")),
    mut_arg("base_url", |a| a.help("An OpenAI-compatible endpoint")),
)]
pub struct SummarizeArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// The turn.
    #[arg(long)]
    pub turn: u64,
    /// Summarize this turn and everything after it.
    #[arg(long, conflicts_with = "up_to", required_unless_present = "up_to")]
    pub from: bool,
    /// Summarize everything before this turn.
    #[arg(long)]
    pub up_to: bool,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Summarize from or up to a turn; the new head is selected. Whether there is anything to
/// summarize is checked before the model is needed.
pub fn run(a: SummarizeArgs) -> CmdResult {
    let s = a.session.pick()?;
    let cfg = load_config_without_mcp()?;
    let spec = a.model.spec(&cfg)?;
    let direction = if a.from {
        SummarizeDirection::From
    } else {
        SummarizeDirection::UpTo
    };
    with_service(service_options(&cfg, None, false)?, async |svc| {
        let h = svc.open(&s.id, s.workspace.as_deref()).await?;
        let spec = summary_model(&cfg, &h, spec, a.model.given()).await?;
        let signals = tokio::spawn(crate::signals::cancel_on_signals(h.clone(), "the summary", None));
        let head = h
            .summarize(SummarizeRequest {
                turn: a.turn,
                direction,
                model: Some(spec),
            })
            .await;
        signals.abort();
        let head = head?;
        print_head(&s.id, &head, h.workspace(), a.json)?;
        Ok(ExitCode::SUCCESS)
    })
}
