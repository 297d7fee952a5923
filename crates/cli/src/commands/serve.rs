//! `retrace serve`: the HTTP API and the web UI (`retrace-server`). Prints exactly
//! `retrace: listening on http://HOST:PORT/?token=TOKEN` as its first line, serves until SIGINT or
//! SIGTERM, then cancels running turns cleanly and releases every lease before it exits.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use retrace_control::Service;
use retrace_protocol::{BashPolicy, ErrorCode};
use retrace_server::{ServeOptions, Server};

use super::args::ModelArgs;
use crate::common::{env, load_config, runtime, service_options, workspace_arg};
use crate::config::BashSetting;
use crate::failure::{CmdResult, Failure};
use crate::model::model_spec;

/// The HTTP API and the web UI: open the address printed on the
/// first line. Runs until interrupted (SIGINT or SIGTERM).
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The address to listen on (an IP address or `localhost`).
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// The port (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Listen on an address that is not a loopback one (other machines can reach the API).
    #[arg(long)]
    pub allow_remote: bool,
    /// The workspace of new sessions (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub backend: crate::commands::args::BackendArgs,
}

fn server_failure(e: retrace_server::ServerError) -> Failure {
    let code = match e {
        retrace_server::ServerError::RemoteNotAllowed { .. }
        | retrace_server::ServerError::BadHost { .. }
        | retrace_server::ServerError::BadToken => 2,
        _ => 1,
    };
    let hint = match e {
        retrace_server::ServerError::RemoteNotAllowed { .. } => " (--allow-remote)",
        retrace_server::ServerError::BadToken => " (RETRACE_TOKEN)",
        _ => "",
    };
    Failure {
        code,
        error: anyhow::anyhow!("{e}{hint}"),
    }
}

/// `retrace serve [--host H] [--port P] [--allow-remote] [--workspace DIR] [--model M] [--base-url U]`.
pub fn run(a: ServeArgs) -> CmdResult {
    let cfg = &load_config()?;
    let workspace = workspace_arg(a.workspace.as_deref())?;
    let spec = a.model.spec(cfg)?;
    // Sessions open without a model, which is set next: one that cannot be used (no key) fails
    // the turns with `model`, which the page shows, instead of every request.
    let mut opts = service_options(cfg, None, false)?;
    opts.backend = a.backend.backend(cfg);
    // A person is at the page: shell commands are asked about unless the config says otherwise.
    opts.bash = match cfg.permissions.bash {
        Some(BashSetting::Allow) => BashPolicy::Allow,
        Some(BashSetting::Deny) => BashPolicy::Deny,
        Some(BashSetting::Ask) | None => BashPolicy::Ask,
    };
    opts.can_ask = true;
    let resolver_cfg = cfg.clone();
    let resolve: retrace_server::ModelResolver = Arc::new(move |m: &str| {
        model_spec(&resolver_cfg, Some(m), None)
            .map_err(|f| retrace_protocol::Error::new(ErrorCode::Usage, f.error.to_string()))
    });
    let serve = ServeOptions {
        host: a.host.clone(),
        port: a.port,
        allow_remote: a.allow_remote,
        token: env("RETRACE_TOKEN").filter(|t| !t.is_empty()),
        workspace,
        model: Some(spec),
        // `--model` (or `--base-url`) given: every session uses it; otherwise a session keeps
        // the model it recorded, and the configured default is the fallback.
        model_wins: a.model.given(),
        resolve,
        limits: Default::default(),
    };
    let rt = runtime()?;
    rt.block_on(async {
        // Handlers first: a signal that comes right after the first line must stop the server
        // cleanly, not kill it.
        let stop = crate::signals::stop_signals()?;
        let service = Service::new(opts);
        // A workspace no session could use (the file system's root, the data directory) is
        // refused now, as `exec` refuses it, not at the first session.
        service.check_workspace(&serve.workspace)?;
        let server = Server::bind(service, serve).await.map_err(server_failure)?;
        if !server.addr().ip().is_loopback() {
            eprintln!(
                "retrace: warning: listening on {}, which other machines can reach; the token travels in clear over plain HTTP",
                server.addr()
            );
        }
        let mut out = std::io::stdout().lock();
        writeln!(out, "retrace: listening on {}", server.url())?;
        out.flush()?;
        drop(out);
        server.run(stop).await;
        Ok(ExitCode::SUCCESS)
    })
}
