//! What every command shares: the environment, the service, the runtime, exit codes, hints.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use retrace_control::{DataRoot, Service, ServiceOptions};
use retrace_protocol::{
    BashPolicy, ErrorCode, ErrorDetails, Missing, ModelSpec, Provider, RetentionLimits, SessionId,
};

use crate::config::{BashSetting, Config};
use crate::exit::exit_code;

/// An error with the exit code of the CLI contract (SPEC §11).
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub error: anyhow::Error,
}

impl Failure {
    /// Exit 2.
    pub fn usage(msg: impl Into<String>) -> Failure {
        Failure::hinted(retrace_protocol::Error::new(ErrorCode::Usage, msg.into()), "")
    }

    /// An error of the controller, with a hint in the CLI's own words appended.
    pub fn hinted(e: retrace_protocol::Error, hint: &str) -> Failure {
        Failure {
            code: exit_code(e.code),
            error: anyhow::Error::new(Coded {
                error: e,
                hint: hint.to_string(),
                plan: None,
            }),
        }
    }

    /// A refused plan: with `--json`, printed as the failure's one document (SPEC §11).
    pub fn with_plan(self, plan: &impl serde::Serialize) -> Failure {
        let Failure { code, error } = self;
        let error = match error.downcast::<Coded>() {
            Ok(mut c) => {
                c.plan = serde_json::to_value(plan).ok();
                anyhow::Error::new(c)
            }
            Err(other) => other,
        };
        Failure { code, error }
    }

    /// The failure as `--json` prints it: `{ok: false, error: {code, message, details}}`, or a
    /// refused plan with `ok: false` and `error` (SPEC §11).
    pub fn json(&self, message: &str) -> serde_json::Value {
        let coded = self.error.chain().find_map(|e| e.downcast_ref::<Coded>());
        let code = match coded {
            Some(c) => c.error.code.as_str(),
            None => match self.code {
                2 => ErrorCode::Usage.as_str(),
                3 => ErrorCode::Refused.as_str(),
                4 => ErrorCode::ConfirmationRequired.as_str(),
                _ if self
                    .error
                    .chain()
                    .any(|e| e.downcast_ref::<std::io::Error>().is_some()) =>
                {
                    ErrorCode::Io.as_str()
                }
                _ => ErrorCode::Internal.as_str(),
            },
        };
        let error = serde_json::json!({
            "code": code,
            "message": message,
            "details": coded.and_then(|c| c.error.details.as_ref()),
        });
        match coded.and_then(|c| c.plan.clone()) {
            Some(serde_json::Value::Object(mut plan)) => {
                plan.insert("ok".to_string(), false.into());
                plan.insert("error".to_string(), error);
                serde_json::Value::Object(plan)
            }
            _ => serde_json::json!({ "ok": false, "error": error }),
        }
    }
}

/// An error of the controller (or a usage error of the CLI) inside a [`Failure`]: its code and
/// details for `--json`, the CLI's hint, and the plan a refused commit refused.
#[derive(Debug)]
pub struct Coded {
    error: retrace_protocol::Error,
    hint: String,
    plan: Option<serde_json::Value>,
}

impl std::fmt::Display for Coded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.error.message, self.hint)
    }
}

impl std::error::Error for Coded {}

/// The CLI's words for what to do about an error of `code`.
fn hint(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::Model => " (--model picks the model: deepseek:NAME, openai:NAME, demo or script:FILE)",
        ErrorCode::StalePlan => " (run the command again)",
        ErrorCode::TurnRunning => " (wait for the turn, or stop it with Ctrl-C)",
        _ => "",
    }
}

impl From<retrace_protocol::Error> for Failure {
    fn from(e: retrace_protocol::Error) -> Failure {
        let h = match &e.details {
            Some(ErrorDetails::WorkspaceUnknown { .. }) => {
                " (run the command in that workspace, or give it with --workspace DIR)".to_string()
            }
            Some(ErrorDetails::NotFound {
                what: Missing::Session,
                ..
            }) => " (`retrace sessions` lists the sessions of the workspace; -c takes its latest)".to_string(),
            Some(ErrorDetails::DamagedLog { session_id, .. }) => format!(
                " (`retrace fsck --session {session_id} --repair` moves them into a file beside the log; `retrace rewind --scope code` works meanwhile)"
            ),
            // The model's own words already list the choices: say them once.
            _ if e.code == ErrorCode::Model && e.message.contains("script:FILE") => String::new(),
            _ => hint(e.code).to_string(),
        };
        Failure::hinted(e, &h)
    }
}

/// Which session a command names: `--session ID` (the whole id or an unambiguous prefix of it) or
/// `-c` / `--continue` (the latest session of `--workspace`, else of the current directory).
pub struct SessionPick<'a> {
    pub session: Option<&'a str>,
    pub continue_latest: bool,
    pub workspace: Option<&'a Path>,
}

/// The session picked, and the workspace to hold it to (the `--workspace` given with `--session`;
/// none with `--continue`, which found the session from it).
pub struct Picked {
    pub id: String,
    pub workspace: Option<PathBuf>,
}

/// Resolves a [`SessionPick`] to a whole session id (reading file names only: no lease, no log).
pub fn pick_session(p: &SessionPick<'_>) -> Result<Picked, Failure> {
    let service = Service::new(ServiceOptions::new(data_root()?.root()));
    match (p.session, p.continue_latest) {
        (Some(given), _) => Ok(Picked {
            id: service.resolve_session(given)?.as_str().to_string(),
            workspace: p.workspace.map(Path::to_path_buf),
        }),
        (None, true) => Ok(Picked {
            id: service
                .latest_session(&workspace_arg(p.workspace)?)?
                .as_str()
                .to_string(),
            workspace: None,
        }),
        (None, false) => Err(Failure::usage(
            "which session? give --session ID (or a prefix of it), or -c for the latest session of the workspace",
        )),
    }
}

/// The session `sessions delete` names: the one its id or prefix names, else the id as given (what
/// is left of a session without its log is still deleted by its whole id).
pub fn session_to_delete(given: &str) -> Result<String, Failure> {
    let service = Service::new(ServiceOptions::new(data_root()?.root()));
    match service.resolve_session(given) {
        Ok(id) => Ok(id.as_str().to_string()),
        Err(e) if e.code == ErrorCode::NotFound => Ok(given.to_string()),
        Err(e) => Err(e.into()),
    }
}

/// The whole id of the session `given` names (its id or an unambiguous prefix), if one is given.
pub fn whole_id(given: Option<&str>) -> Result<Option<String>, Failure> {
    given
        .map(|g| {
            pick_session(&SessionPick {
                session: Some(g),
                continue_latest: false,
                workspace: None,
            })
            .map(|p| p.id)
        })
        .transpose()
}

/// As [`pick_session`], for a command that only reads: a `--workspace` given with `--session` must
/// be the session's own (the commands that write have the controller check it when they open).
pub fn pick_session_to_read(p: &SessionPick<'_>) -> Result<Picked, Failure> {
    let picked = pick_session(p)?;
    if let (Some(_), Some(ws)) = (p.session, p.workspace) {
        let ws = workspace_arg(Some(ws))?;
        let service = Service::new(ServiceOptions::new(data_root()?.root()));
        let own = runtime()?
            .block_on(service.sessions(None))?
            .into_iter()
            .find(|s| s.id.as_str() == picked.id)
            .and_then(|s| s.workspace);
        let canonical = std::fs::canonicalize(&ws).unwrap_or(ws);
        if let Some(own) = own.filter(|o| Path::new(o) != canonical) {
            return Err(Failure::usage(format!(
                "session {} belongs to the workspace `{own}`, not `{}`",
                picked.id,
                canonical.display()
            )));
        }
    }
    Ok(picked)
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

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Failure {
        Failure { code: 1, error }
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        Failure {
            code: 1,
            error: e.into(),
        }
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

/// The model named by `--model`, else `RETRACE_MODEL`, else `[model] name`, else DeepSeek's
/// default model, and where its requests go. Credentials go only where they belong (SPEC §10): an
/// endpoint and a key variable are used together only when they come from the same place, the
/// first of these that applies to the chosen model's provider:
/// 1. `--base-url`, with the provider's own key variable (`DEEPSEEK_API_KEY`, `OPENAI_API_KEY`);
/// 2. `RETRACE_BASE_URL`, when the provider is `RETRACE_MODEL`'s (or, without it, `[model]
///    name`'s), with the provider's own key variable;
/// 3. `[model.PROVIDER]` (`deepseek`, `openai`) when it sets either key: its `base_url` (else the
///    provider's own endpoint) with its `api_key_env` (else the provider's own variable);
/// 4. `[model]`'s `base_url` and `api_key_env`, when the provider is `[model] name`'s;
/// 5. the provider's own endpoint and variable.
///
/// So `--model openai:…` with a DeepSeek proxy in `[model]` goes to OpenAI with OpenAI's key. An
/// `api_key_env` set to `""` means no key at all (a local server).
pub fn model_spec(cfg: &Config, flag: Option<&str>, base_url: Option<&str>) -> Result<ModelSpec, Failure> {
    let parse = |s: &str| ModelSpec::parse(s).map_err(|e| Failure::usage(e.to_string()));
    let file = cfg.model.name.as_deref().map(parse).transpose()?;
    let from_env = cfg.env_model.as_deref().map(parse).transpose()?;
    let file_provider = file.as_ref().map_or(Provider::DeepSeek, |s| s.provider);
    let env_provider = from_env.as_ref().map_or(file_provider, |s| s.provider);
    let mut spec = match flag {
        Some(s) => {
            let spec = parse(s)?;
            check_script_arg(&spec)?;
            spec
        }
        None => from_env.or(file).unwrap_or_else(ModelSpec::default_remote),
    };
    if let Some(u) = base_url {
        check_base_url_arg(u)?;
    }
    let section = match spec.provider {
        Provider::DeepSeek => &cfg.model.deepseek,
        Provider::OpenAi => &cfg.model.openai,
        Provider::Script | Provider::Demo => return Ok(spec),
    };
    let url = |v: Option<&str>| v.map(str::trim).filter(|u| !u.is_empty()).map(str::to_string);
    let (base_url, key_env) = if let Some(u) = url(base_url) {
        (Some(u), None)
    } else if let Some(u) = url(cfg.env_base_url.as_deref()).filter(|_| spec.provider == env_provider) {
        (Some(u), None)
    } else if section.base_url.is_some() || section.api_key_env.is_some() {
        (url(section.base_url.as_deref()), section.api_key_env.clone())
    } else if spec.provider == file_provider {
        (url(cfg.model.base_url.as_deref()), cfg.model.api_key_env.clone())
    } else {
        (None, None)
    };
    spec.base_url = base_url;
    spec.api_key_env = key_env.map(|v| v.trim().to_string());
    Ok(spec)
}

/// A file named on the command line that is missing or unreadable is a usage error (exit 2), in
/// every command: `--model script:FILE` here, as `--prompt-file`, `--sidecar` and `--workspace`.
fn check_script_arg(spec: &ModelSpec) -> Result<(), Failure> {
    if spec.provider != Provider::Script {
        return Ok(());
    }
    let path = Path::new(&spec.name);
    let why = match std::fs::File::open(path) {
        Ok(f) => match f.metadata() {
            Ok(m) if m.is_file() => return Ok(()),
            Ok(_) => "not a file".to_string(),
            Err(e) => e.to_string(),
        },
        Err(e) => e.to_string(),
    };
    Err(Failure::usage(format!(
        "cannot read the script `{}` given with --model: {why}; give a readable script file (script:FILE) or another model",
        path.display()
    )))
}

/// `--base-url` must be an http(s) URL with a host: anything else is a usage error naming it.
fn check_base_url_arg(url: &str) -> Result<(), Failure> {
    let u = url.trim();
    let rest = u.strip_prefix("http://").or_else(|| u.strip_prefix("https://"));
    if rest.is_some_and(|r| !r.is_empty() && !r.starts_with('/')) {
        return Ok(());
    }
    Err(Failure::usage(format!(
        "--base-url `{url}` is not an http(s) URL: give the API root, e.g. https://api.openai.com/v1"
    )))
}

/// A session's recorded model `own` as `cfg` runs it (SPEC §10: a key only where the user sent
/// it): the log records no key variable, so the one the config gives the provider is used, and
/// only with the configured (or the provider's own) endpoint; a recorded base URL that is neither
/// is used without any key, with a notice saying so.
pub fn recorded_model(cfg: &Config, own: &ModelSpec) -> retrace_control::ReopenedModel {
    match model_spec(cfg, Some(&own.to_string()), None) {
        Ok(configured) => retrace_control::reopen_recorded_model(own, configured),
        Err(_) => {
            let mut bare = own.clone();
            bare.api_key_env = None;
            bare.base_url = None;
            retrace_control::reopen_recorded_model(own, bare)
        }
    }
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
    opts.hidden_env = key_variables(cfg);
    opts.context_window = cfg.model.context_window;
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
