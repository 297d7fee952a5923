//! What every command shares: the environment, the data root, the exit codes, model setup.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use retrace_agent::AgentConfig;
use retrace_checkpoint::Limits;
use retrace_control::{ControlError, ControllerOptions, DataRoot};
use retrace_model::{open_model, ChatModel, ModelOptions, ModelSpec};
use retrace_tools::BashPolicy;

use crate::config::{BashSetting, Config};

/// An error with the exit code of the CLI contract (SPEC §11): 1 error, 2 usage, 3 refused, 4
/// confirmation required.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub error: anyhow::Error,
}

impl Failure {
    /// Exit 2.
    pub fn usage(msg: impl Into<String>) -> Failure {
        Failure {
            code: 2,
            error: anyhow::anyhow!(msg.into()),
        }
    }
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(e: E) -> Failure {
        let error: anyhow::Error = e.into();
        let code = match error.downcast_ref::<ControlError>() {
            Some(ControlError::Usage(_)) => 2,
            Some(ControlError::Refused(_)) => 3,
            _ => 1,
        };
        Failure { code, error }
    }
}

/// The result of a command: an exit code, or a failure.
pub type CmdResult = Result<ExitCode, Failure>;

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

/// Opens the model named by `--model`, else `[model] name`, else DeepSeek's default model.
pub fn model(
    cfg: &Config,
    flag: Option<&str>,
    base_url: Option<&str>,
) -> Result<Box<dyn ChatModel>, Failure> {
    let spec = match flag.or(cfg.model.name.as_deref()) {
        Some(s) => ModelSpec::parse(s).map_err(|e| Failure::usage(e.to_string()))?,
        None => ModelSpec::default_remote(),
    };
    let opts = ModelOptions {
        base_url: base_url
            .map(str::to_string)
            .or_else(|| cfg.model.base_url.clone()),
        api_key_env: cfg.model.api_key_env.clone(),
        ..ModelOptions::default()
    };
    open_model(&spec, &opts, &env).map_err(|e| Failure {
        code: 1,
        error: anyhow::anyhow!(e),
    })
}

/// Controller options from the config; headless shells are denied unless `--allow-bash` or the
/// config says `allow` (there is nobody to ask).
pub fn controller_options(cfg: &Config, allow_bash: bool) -> ControllerOptions {
    let mut limits = Limits::default();
    if let Some(n) = cfg.checkpoints.max_turns {
        limits.max_turns = n;
    }
    if let Some(b) = cfg.checkpoints.max_bytes {
        limits.max_bytes = b.0;
    }
    if let Some(b) = cfg.checkpoints.max_file_bytes {
        limits.max_file_bytes = b.0;
    }
    let bash_policy = if allow_bash || cfg.permissions.bash == Some(BashSetting::Allow) {
        BashPolicy::Allow
    } else {
        BashPolicy::Deny
    };
    ControllerOptions {
        limits,
        agent: AgentConfig {
            bash_policy,
            ..AgentConfig::default()
        },
    }
}

/// Prints a value as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(v: &T) -> Result<(), Failure> {
    println!(
        "{}",
        serde_json::to_string_pretty(v).map_err(anyhow::Error::from)?
    );
    Ok(())
}
