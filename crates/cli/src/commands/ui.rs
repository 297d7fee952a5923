//! `retrace` with no command: the terminal UI (`retrace-tui`) on a new session of the workspace,
//! the latest one (`--continue`) or a given one (`--session`); and `retrace demo` on a terminal.

use std::io::IsTerminal;
use std::process::ExitCode;

use retrace_control::Service;
use retrace_protocol::{BashPolicy, ModelSpec};
use retrace_tui::{ModelProblem, RunOptions, TuiError};

use super::args::{ModelArgs, SessionArgs};
use crate::common::{load_config, service_options, with_service};
use crate::config::BashSetting;
use crate::failure::{CmdResult, Failure};
use crate::model::recorded_model;

/// What `retrace` (no command) takes: flattened into the command line's top level.
#[derive(Debug, clap::Args)]
#[command(
    mut_arg("session", |a| a
        .value_name("SESSION")
        .help("Open this session in the terminal UI (its own workspace is used)")),
    mut_arg("continue_latest", |a| a
        .help("Open the latest session of the workspace (found from any subdirectory of it)")),
    mut_arg("workspace", |a| a.help("The workspace (default: the current directory)")),
)]
pub struct UiArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub backend: crate::commands::args::BackendArgs,
}

/// Whether both ends of the terminal are one, and it can draw a screen (not `TERM=dumb`).
pub fn on_a_terminal() -> bool {
    std::io::stdin().is_terminal()
        && std::io::stdout().is_terminal()
        && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

fn tui_failure(e: TuiError) -> Failure {
    match e {
        TuiError::Session(e) => e.into(),
        other => Failure {
            code: 1,
            error: anyhow::anyhow!("the terminal UI failed: {other}"),
        },
    }
}

/// `retrace [--session ID | --continue] [--model M] [--base-url U] [--workspace DIR]`.
pub fn run(a: UiArgs) -> CmdResult {
    let asked = a.session.whole_id()?;
    let cfg = load_config()?;
    if !on_a_terminal() {
        return Err(Failure::usage(
            "the terminal UI needs a terminal on standard input and output that can draw a screen (not TERM=dumb); in scripts use `retrace exec PROMPT` (see `retrace --help`)",
        ));
    }
    let spec = a.model.spec(&cfg)?;
    // The session opens without a model, which is set next: a model that cannot be used (no key)
    // is said on the UI's first screen, with what to do, instead of keeping the UI closed.
    let mut opts = service_options(&cfg, None, false)?;
    opts.backend = a.backend.backend(&cfg);
    // Someone is there to ask: shell commands are asked about unless the config says otherwise.
    opts.bash = match cfg.permissions.bash {
        Some(BashSetting::Allow) => BashPolicy::Allow,
        Some(BashSetting::Deny) => BashPolicy::Deny,
        Some(BashSetting::Ask) | None => BashPolicy::Ask,
    };
    opts.can_ask = true;
    // A resumed session keeps its own model unless one is given.
    let own_model = a.session.resumes() && !a.model.given();
    with_service(opts, async |svc: &Service| {
        let h = a.session.open_or_create(svc, asked.as_deref()).await?;
        let (spec, notice) = match h.recorded_model().await? {
            Some(own) if own_model => {
                let r = recorded_model(&cfg, &own);
                (r.spec, r.notice)
            }
            _ => (spec.clone(), None),
        };
        let mut run = RunOptions {
            model: Some(spec.clone()),
            ..RunOptions::default()
        };
        run.first_message = notice;
        if let Err(e) = h.set_model(spec.clone()).await {
            // The first screen explains it: the key to export, `retrace config`, `/model demo`.
            run.model_problem = Some(ModelProblem {
                model: spec.to_string(),
                reason: e.message,
                key_env: missing_key(&spec),
            });
        }
        let ended = retrace_tui::run(svc.clone(), h, run).await.map_err(tui_failure)?;
        // A session left with nothing in it (opened, and quit without a prompt) is not kept:
        // it would only be listed as "(no prompt yet)". One with anything in it always stays.
        svc.wait_closed().await;
        let mut kept = true;
        for id in &ended.shown {
            let discarded = svc.discard_if_empty(id).await.unwrap_or(false);
            if discarded && *id == ended.session_id {
                kept = false;
            }
        }
        if kept {
            resume_hint(&ended);
        }
        Ok(exit_code(&ended))
    })
}

/// After the UI: how to come back to the session. The terminal may be gone (a closed window):
/// then there is no one to tell, and that is no error.
fn resume_hint(ended: &retrace_tui::Ended) {
    use std::io::Write;
    let _ = writeln!(
        std::io::stdout(),
        "resume it with `retrace --session {}`",
        ended.session_id
    );
}

/// How `retrace` exits after the UI: 0, or 128 + the signal that ended it (the shell's rule).
fn exit_code(ended: &retrace_tui::Ended) -> ExitCode {
    match ended.signal {
        Some(sig) => ExitCode::from(128u8.saturating_add(sig)),
        None => ExitCode::SUCCESS,
    }
}

/// The variable `spec`'s key is read from, when it is not set (what the first screen tells to
/// export).
fn missing_key(spec: &ModelSpec) -> Option<String> {
    let var = spec
        .api_key_env
        .clone()
        .or_else(|| spec.provider.api_key_env().map(str::to_string))
        .filter(|v| !v.is_empty())?;
    let set = crate::common::env(&var).is_some_and(|k| !k.trim().is_empty());
    (!set).then_some(var)
}

/// `retrace demo` on a terminal: the UI on a scratch workspace with the demo model.
pub fn demo() -> CmdResult {
    let (_tmp, ws, opts) = super::demo::scratch()?;
    with_service(opts, async |svc: &Service| {
        let h = svc.create(&ws).await?;
        let ended = retrace_tui::run(svc.clone(), h, RunOptions::default())
            .await
            .map_err(tui_failure)?;
        // Nothing to resume: the scratch workspace and its session go with this process.
        use std::io::Write;
        let _ = writeln!(
            std::io::stdout(),
            "the demo's scratch workspace and session are deleted now; run `retrace` in a project to keep a session you can resume"
        );
        Ok(exit_code(&ended))
    })
}
