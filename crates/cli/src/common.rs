//! What every command shares: the environment, the config, the data root, the service and its
//! runtime, JSON output.

use std::path::{Path, PathBuf};

use retrace_control::{DataRoot, Service, ServiceOptions, SessionReader};
use retrace_protocol::{BashPolicy, ModelSpec, Provider, RetentionLimits, SessionId};

use crate::config::{BashSetting, Config};
use crate::failure::Failure;

/// The config file and the environment's settings; a config that cannot be read, or whose
/// `[mcp_servers.NAME]` tables are not valid, is a usage error (exit 2). For the commands that
/// start MCP servers (or show the config).
pub fn load_config() -> Result<Config, Failure> {
    let cfg = crate::config::load(&env).map_err(|e| Failure { code: 2, error: e })?;
    match &cfg.mcp_problem {
        Some(why) => Err(Failure::usage(why.clone())),
        None => Ok(cfg),
    }
}

/// The config as [`load_config`] reads it, for a command that starts no MCP server (a restore,
/// an undo, a fork, a summary): a server table that is not valid is said as a warning and the
/// servers left out, so that a typo there never stands between a user and their files.
pub fn load_config_without_mcp() -> Result<Config, Failure> {
    let mut cfg = crate::config::load(&env).map_err(|e| Failure { code: 2, error: e })?;
    if let Some(why) = cfg.mcp_problem.take() {
        crate::output::say(&format!(
            "retrace: warning: {why} (this command starts no MCP server, so it goes on)"
        ));
        cfg.mcp_servers.clear();
    }
    Ok(cfg)
}

/// Reads a process environment variable.
pub fn env(k: &str) -> Option<String> {
    std::env::var(k).ok()
}

/// The data root from the environment.
pub fn data_root() -> Result<DataRoot, Failure> {
    Ok(DataRoot::from_env(env)?)
}

/// The workspace: `--workspace`, else the current directory.
pub fn workspace_arg(w: Option<&Path>) -> Result<PathBuf, Failure> {
    match w {
        Some(p) => {
            if !p.is_dir() {
                return Err(Failure::usage(format!(
                    "--workspace `{}` is not a directory",
                    p.display()
                )));
            }
            Ok(p.to_path_buf())
        }
        None => std::env::current_dir()
            .map_err(|e| Failure::usage(format!("cannot read the current directory: {e}"))),
    }
}

/// A service for reading only (no runtime needed: nothing is opened for writing).
pub fn reading() -> Result<Service, Failure> {
    Ok(Service::new(ServiceOptions::new(data_root()?.root())))
}

/// Session `id`, opened for reading (no lease: another process may write it meanwhile).
pub fn reader(id: &str) -> Result<SessionReader, Failure> {
    Ok(reading()?.reader(id)?)
}

/// Every variable that holds an API key, for the shell tool to drop from its environment: the
/// providers' own and every `api_key_env` of the config.
pub fn key_variables(cfg: &Config) -> Vec<String> {
    let mut vars: Vec<String> = [Provider::DeepSeek, Provider::OpenAi]
        .iter()
        .filter_map(|p| p.api_key_env().map(str::to_string))
        .collect();
    for v in [
        &cfg.model.api_key_env,
        &cfg.model.deepseek.api_key_env,
        &cfg.model.openai.api_key_env,
    ]
    .into_iter()
    .flatten()
    {
        let v = v.trim();
        if !v.is_empty() && !vars.iter().any(|known| known == v) {
            vars.push(v.to_string());
        }
    }
    vars
}

/// Service options from the config: retention, and the shell policy of a headless run, where
/// nobody can be asked: denied unless `--allow-bash` or the config says `allow`.
pub fn service_options(
    cfg: &Config,
    model: Option<ModelSpec>,
    allow_bash: bool,
) -> Result<ServiceOptions, Failure> {
    let mut retention = RetentionLimits::default();
    if let Some(n) = cfg.checkpoints.max_turns {
        retention.max_turns = n;
    }
    if let Some(b) = cfg.checkpoints.max_bytes {
        retention.max_bytes = b.0;
    }
    if let Some(b) = cfg.checkpoints.max_file_bytes {
        retention.max_file_bytes = b.0;
    }
    let mut opts = ServiceOptions::new(data_root()?.root());
    opts.model = model;
    opts.retention = retention;
    opts.bash = if allow_bash || cfg.permissions.bash == Some(BashSetting::Allow) {
        BashPolicy::Allow
    } else {
        BashPolicy::Deny
    };
    opts.allow_git = cfg.permissions.git == Some(crate::config::GitSetting::Allow);
    opts.mcp_servers = cfg.mcp_servers.clone();
    opts.mcp = cfg.permissions.mcp.unwrap_or_default();
    // Nobody is there to ask: an MCP call that would be asked about is refused, saying why.
    opts.can_ask = false;
    opts.hidden_env = key_variables(cfg);
    opts.context_window = cfg.model.context_window;
    opts.prices = retrace_protocol::Prices {
        configured: cfg.prices.clone(),
    };
    if let Some(c) = cfg.model.compact_at {
        opts.compact_at = c;
    }
    if let Some(path) = &cfg.path {
        // The config decides what the tools may do: the tools never touch it (SPEC §8).
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            opts.off_limits.push((
                dir.to_path_buf(),
                "the directory of Retrace's config file".to_string(),
            ));
        }
        opts.off_limits
            .push((path.clone(), "Retrace's config file".to_string()));
    }
    Ok(opts)
}

/// A runtime for the controller (it needs a multi-threaded one).
pub fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

/// Runs `f` with a service on a runtime, then closes every session it opened (releasing leases)
/// before the runtime goes.
pub fn with_service<T>(
    opts: ServiceOptions,
    f: impl AsyncFnOnce(&Service) -> Result<T, Failure>,
) -> Result<T, Failure> {
    let rt = runtime()?;
    rt.block_on(async {
        let service = Service::new(opts);
        let out = f(&service).await;
        service.shutdown().await;
        out
    })
}

/// Prints a value as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(v: &T) -> Result<(), Failure> {
    println!(
        "{}",
        serde_json::to_string_pretty(v).map_err(anyhow::Error::from)?
    );
    Ok(())
}

/// After a write to an old flat log (format 1), which session now holds the change and what to
/// use next (SPEC §6): the old log stays as it was. Human output says it on stdout; with `--json`,
/// where the result's `session_id` says it, a note goes to stderr.
pub fn say_new_session(asked: &str, now: &SessionId, workspace: &Path, json: bool) {
    if now.as_str() == asked {
        return;
    }
    let text = format!(
        "session {asked} is an old (format-1) log and stays as it was; this change went to the new session {now} (workspace {}): use --session {now} from now on",
        crate::output::shown_path(&workspace.display().to_string())
    );
    if json {
        eprintln!("retrace: note: {text}");
    } else {
        println!("{text}");
    }
}
