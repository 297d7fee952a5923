//! Which model a command uses and where its requests go (SPEC §10): the model given with
//! `--model`/`--base-url`, else the environment's, the config's or the default; a resumed
//! session's recorded model, run with the key its config gives it.

use std::path::Path;

use retrace_control::SessionHandle;
use retrace_protocol::{ModelSpec, Provider};

use crate::config::Config;
use crate::failure::Failure;

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

/// Gives a resumed session the model its log records (else `default`); one that cannot be used
/// is an error that names it and says how to choose another.
pub async fn keep_own_model(
    h: &SessionHandle,
    default: ModelSpec,
    cfg: &Config,
) -> Result<(), retrace_protocol::Error> {
    let Some(own) = h.recorded_model().await? else {
        return h.set_model(default).await;
    };
    let reopened = recorded_model(cfg, &own);
    if let Some(notice) = &reopened.notice {
        crate::output::say(&format!("retrace: {notice}"));
    }
    let own = reopened.spec;
    h.set_model(own.clone()).await.map_err(|e| {
        retrace_protocol::Error::new(
            e.code,
            format!(
                "this session's model `{own}` cannot be used: {}; give --model to choose another",
                e.message
            ),
        )
    })
}

/// The model that writes a summary: the one given (`--model`/`--base-url`), else the session's
/// own (the one its log records, as `exec --session` reopens it), else the configured one.
pub async fn summary_model(
    cfg: &Config,
    h: &SessionHandle,
    configured: ModelSpec,
    given: bool,
) -> Result<ModelSpec, Failure> {
    if given {
        return Ok(configured);
    }
    let Some(own) = h.recorded_model().await? else {
        return Ok(configured);
    };
    let reopened = recorded_model(cfg, &own);
    if let Some(notice) = &reopened.notice {
        crate::output::say(&format!("retrace: {notice}"));
    }
    Ok(reopened.spec)
}
