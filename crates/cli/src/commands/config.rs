//! `retrace config`: what is in effect (which file, which model goes where with which key
//! variable, the permissions, the retention), and `--example`, a commented file with every key.

use std::process::ExitCode;

use retrace_protocol::{
    BashPolicy, McpPermission, McpServerConfig, ModelSpec, Price, Prices, RetentionLimits,
};
use serde_json::json;

use super::args::ModelArgs;
use crate::common::{env, load_config, print_json, service_options};
use crate::config::Config;
use crate::failure::CmdResult;
use crate::output::{human_bytes, shown_path};

/// The example config, every key with its default and what it does.
pub const EXAMPLE: &str = include_str!("../config.example.toml");

/// Show the settings in effect (config file, model endpoint and key variable, permissions).
#[derive(Debug, clap::Args)]
#[command(
    mut_arg("model", |a| a.help("Show where this model's requests would go")),
    mut_arg("base_url", |a| a.help("As `exec --base-url`")),
)]
pub struct ConfigArgs {
    /// Print a config file with every key explained, instead.
    #[arg(long, conflicts_with_all = ["model", "base_url", "json"])]
    pub example: bool,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `retrace config [--model M] [--base-url U]`, or `--example`.
pub fn run(a: ConfigArgs) -> CmdResult {
    if a.example {
        return example();
    }
    show(&load_config()?, &a.model, a.json)
}

/// `retrace config --example`.
fn example() -> CmdResult {
    print!("{EXAMPLE}");
    Ok(ExitCode::SUCCESS)
}

/// Where `spec`'s requests go and which variable holds its key, defaults filled in. `None` for
/// the script and demo models, which send nothing.
fn endpoint(spec: &ModelSpec) -> Option<(String, String)> {
    let url = spec
        .base_url
        .clone()
        .or_else(|| spec.provider.default_base_url().map(str::to_string))?;
    let var = spec
        .api_key_env
        .clone()
        .or_else(|| spec.provider.api_key_env().map(str::to_string))?;
    Some((url, var))
}

/// `retrace config [--model M] [--base-url U]`: the settings a command given the same flags uses.
fn show(cfg: &Config, model: &ModelArgs, json: bool) -> CmdResult {
    let spec = model.spec(cfg)?;
    let opts = service_options(cfg, None, false)?;
    let file = cfg.path.as_ref().map(|p| p.display().to_string());
    let exists = cfg.path.as_ref().is_some_and(|p| p.is_file());
    let endpoint = endpoint(&spec);
    let configured_bash = match cfg.permissions.bash {
        Some(crate::config::BashSetting::Allow) => "allow",
        Some(crate::config::BashSetting::Deny) => "deny",
        Some(crate::config::BashSetting::Ask) | None => "ask",
    };
    let headless_bash = match opts.bash {
        BashPolicy::Allow => "allow",
        BashPolicy::Ask | BashPolicy::Deny => "deny",
    };
    let name = retrace_protocol::price::model_name(&spec.to_string()).to_string();
    let price_configured = cfg.prices.contains_key(&name);
    let price = Prices {
        configured: cfg.prices.clone(),
    }
    .of(&spec.to_string());
    let window = opts
        .context_window
        .unwrap_or_else(|| retrace_control::default_context_window(&spec));
    let RetentionLimits {
        max_turns,
        max_bytes,
        max_file_bytes,
    } = opts.retention;
    let backend: retrace_protocol::CheckpointBackend =
        cfg.checkpoints.backend.map(Into::into).unwrap_or_default();
    if json {
        let value = json!({
            "config_file": file,
            "config_file_exists": exists,
            "data_root": opts.data_root,
            "model": {
                "spec": spec.to_string(),
                "provider": spec.provider.prefix(),
                "base_url": endpoint.as_ref().map(|e| &e.0),
                "api_key_env": endpoint.as_ref().map(|e| &e.1),
                "api_key_set": endpoint.as_ref().map(|e| env(&e.1).is_some_and(|k| !k.trim().is_empty())),
                "price": price,
                "price_configured": price_configured,
            },
            "permissions": {"bash": configured_bash, "headless_bash": headless_bash, "git": if opts.allow_git { "allow" } else { "deny" }, "mcp": mcp_word(opts.mcp)},
            "mcp_servers": cfg.mcp_servers.iter().map(|(name, c)| mcp_json(name, c)).collect::<Vec<_>>(),
            "checkpoints": {"max_turns": max_turns, "max_bytes": max_bytes, "max_file_bytes": max_file_bytes, "backend": backend.as_str()},
            "context": {"context_window": window, "context_window_configured": opts.context_window.is_some(), "compact_at": opts.compact_at},
        });
        print_json(&value)?;
        return Ok(ExitCode::SUCCESS);
    }
    let file_line = match (&file, exists) {
        (Some(f), true) => shown_path(f),
        (Some(f), false) => format!("{} (not there: defaults)", shown_path(f)),
        (None, _) => "none (HOME is not set)".to_string(),
    };
    println!("config file   {file_line}");
    println!(
        "data root     {}",
        shown_path(&opts.data_root.display().to_string())
    );
    println!("model         {}", shown_path(&spec.to_string()));
    if let Some((url, var)) = &endpoint {
        let set = if env(var).is_some_and(|k| !k.trim().is_empty()) {
            "set"
        } else {
            "not set"
        };
        println!(
            "  endpoint    {}/chat/completions",
            shown_path(url.trim_end_matches('/'))
        );
        if var.is_empty() {
            println!("  key         none (api_key_env is empty)");
        } else {
            println!(
                "  key         ${} ({set}; sent only to this endpoint)",
                shown_path(var)
            );
        }
    }
    if endpoint.is_some() {
        println!(
            "price         {}",
            price_line(price.as_ref(), price_configured, &name)
        );
    }
    println!(
        "context       {window} tokens{}; compacted past {:.0}%",
        if opts.context_window.is_some() {
            " ([model] context_window)"
        } else {
            " (the model's known window)"
        },
        opts.compact_at * 100.0
    );
    println!("bash          {configured_bash} (headless exec: {headless_bash} unless --allow-bash)");
    println!("git           {}", if opts.allow_git { "allow" } else { "deny" });
    println!(
        "mcp           {} (headless exec: what would be asked is refused)",
        mcp_word(opts.mcp)
    );
    for (name, c) in &cfg.mcp_servers {
        println!("  {}", mcp_line(name, c));
    }
    println!(
        "checkpoints   {max_turns} turns, {} in all, files up to {}",
        human_bytes(max_bytes),
        human_bytes(max_file_bytes)
    );
    println!("backend       {backend} (new sessions; a session keeps its own)");
    println!("(`retrace config --example` prints a config file with every key explained)");
    Ok(ExitCode::SUCCESS)
}

/// A permission's word.
fn mcp_word(p: McpPermission) -> &'static str {
    match p {
        McpPermission::Ask => "ask",
        McpPermission::Allow => "allow",
        McpPermission::Deny => "deny",
    }
}

/// An MCP server's config as `--json` shows it: never a variable's value (only the names of
/// `env` and of the token's variable).
fn mcp_json(name: &str, c: &McpServerConfig) -> serde_json::Value {
    json!({
        "name": name,
        "transport": if c.url.is_some() { "streamable_http" } else { "stdio" },
        "command": c.command,
        "args": c.args,
        "cwd": c.cwd,
        "env": c.env.keys().collect::<Vec<_>>(),
        "url": c.url.as_deref().map(retrace_protocol::mcp::shown_url),
        "bearer_token_env": c.bearer_token_env,
        "enabled": c.is_enabled(),
        "startup_timeout_ms": c.startup_timeout_ms.unwrap_or(retrace_protocol::DEFAULT_MCP_STARTUP_TIMEOUT_MS),
        "tool_timeout_ms": c.tool_timeout_ms.unwrap_or(retrace_protocol::DEFAULT_MCP_TOOL_TIMEOUT_MS),
        "permission": c.permission.map(mcp_word),
        "tool_permissions": c.tool_permissions.iter().map(|(t, p)| (t.clone(), mcp_word(*p))).collect::<std::collections::BTreeMap<_, _>>(),
        "read_only_tools": c.read_only_tools,
        "trust_read_only_hints": c.trust_read_only_hints == Some(true),
    })
}

/// An MCP server's config on one line: what runs (or where it is), never a variable's value.
fn mcp_line(name: &str, c: &McpServerConfig) -> String {
    let what = match (&c.command, &c.url) {
        (Some(cmd), _) => {
            let mut w = std::iter::once(cmd.as_str())
                .chain(c.args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" ");
            if !c.env.is_empty() {
                let names: Vec<&str> = c.env.keys().map(String::as_str).collect();
                w.push_str(&format!(" (env: {})", names.join(", ")));
            }
            if let Some(d) = &c.cwd {
                w.push_str(&format!(" in {}", d.display()));
            }
            w
        }
        (None, Some(url)) => match &c.bearer_token_env {
            Some(var) => format!("{} (token: ${var})", retrace_protocol::mcp::shown_url(url)),
            None => retrace_protocol::mcp::shown_url(url),
        },
        (None, None) => String::new(),
    };
    let mut line = format!("{}: {}", shown_path(name), shown_path(&what));
    if !c.is_enabled() {
        line.push_str(" — disabled");
    }
    if let Some(p) = c.permission {
        line.push_str(&format!(" — {}", mcp_word(p)));
    }
    for (t, p) in &c.tool_permissions {
        line.push_str(&format!(", {} {}", shown_path(t), mcp_word(*p)));
    }
    if !c.read_only_tools.is_empty() {
        let names: Vec<String> = c.read_only_tools.iter().map(|t| shown_path(t)).collect();
        line.push_str(&format!(" — read-only: {}", names.join(", ")));
    }
    if c.trust_read_only_hints == Some(true) {
        line.push_str(" — its read-only marks trusted");
    }
    line
}

/// A model's price in words, and where it comes from.
fn price_line(price: Option<&Price>, configured: bool, name: &str) -> String {
    let offline = retrace_protocol::price::offline(name);
    let name = shown_path(name);
    let Some(p) = price else {
        return format!(
            "unknown: costs are not shown (`[prices.\"{name}\"]` sets input_per_mtok and output_per_mtok)"
        );
    };
    if !configured && offline {
        return format!("nothing: it answers without a network (`[prices.\"{name}\"]` sets a price)");
    }
    let cached = p
        .cached_input_per_mtok
        .map(|c| format!(", ${c} cached in"))
        .unwrap_or_default();
    let from = if configured {
        format!("[prices.\"{name}\"]")
    } else {
        format!(
            "DeepSeek's published price of {}; `[prices.\"{name}\"]` sets another",
            retrace_protocol::price::DEFAULT_PRICES_AS_OF
        )
    };
    format!(
        "${} in{cached}, ${} out a million tokens ({from})",
        p.input_per_mtok, p.output_per_mtok
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::model_spec;

    /// Found by an attack: a password or a token in a server's URL was printed.
    #[test]
    fn a_urls_password_and_query_are_never_shown() {
        assert_eq!(
            retrace_protocol::mcp::shown_url("https://me:s3cret@host:8080/mcp?token=abc"),
            "https://…@host:8080/mcp?…"
        );
        assert_eq!(
            retrace_protocol::mcp::shown_url("http://127.0.0.1:9/mcp"),
            "http://127.0.0.1:9/mcp"
        );
        assert_eq!(retrace_protocol::mcp::shown_url("http://host"), "http://host");
        assert_eq!(
            retrace_protocol::mcp::shown_url("http://host#frag"),
            "http://host?…"
        );
    }

    /// The demo and a script cost nothing unless the config prices them; DeepSeek's price is
    /// the published one; another model's is unknown.
    #[test]
    fn a_price_says_where_it_comes_from() {
        let prices = Prices::default();
        let line = |name: &str| price_line(prices.of(name).as_ref(), false, name);
        assert!(
            line("demo").starts_with("nothing: it answers without a network"),
            "{}",
            line("demo")
        );
        assert!(
            line("script:/a.json").starts_with("nothing:"),
            "{}",
            line("script:/a.json")
        );
        assert!(line("deepseek-chat").contains("DeepSeek's published price"));
        assert!(line("gpt-4o").starts_with("unknown"));
        let mine = Price {
            input_per_mtok: 1.0,
            output_per_mtok: 2.0,
            cached_input_per_mtok: None,
        };
        assert!(price_line(Some(&mine), true, "script:/a.json").starts_with("$1 in, $2 out"));
    }

    #[test]
    fn the_example_is_a_valid_config_with_the_defaults() {
        let cfg: Config = toml::from_str(EXAMPLE).unwrap();
        assert_eq!(cfg.model.name.as_deref(), Some("deepseek-chat"));
        let d = RetentionLimits::default();
        assert_eq!(cfg.checkpoints.max_turns, Some(d.max_turns));
        assert_eq!(cfg.checkpoints.max_bytes.map(|b| b.0), Some(d.max_bytes));
        assert_eq!(
            cfg.checkpoints.max_file_bytes.map(|b| b.0),
            Some(d.max_file_bytes)
        );
    }

    #[test]
    fn every_key_variable_in_the_source_is_in_the_example() {
        for var in [
            "RETRACE_MODEL",
            "RETRACE_BASE_URL",
            "RETRACE_BASH",
            "RETRACE_CONFIG",
            "RETRACE_HOME",
        ] {
            assert!(EXAMPLE.contains(var), "{var}");
        }
    }

    fn cfg(text: &str) -> Config {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_key_goes_only_to_the_url_configured_for_it() {
        let c = cfg(
            "[model]\nname = \"deepseek-chat\"\nbase_url = \"http://proxy\"\napi_key_env = \"PROXY_KEY\"\n",
        );
        // The configured model: its own section.
        let s = model_spec(&c, None, None).unwrap();
        assert_eq!(endpoint(&s), Some(("http://proxy".into(), "PROXY_KEY".into())));
        // Another provider: none of [model]'s endpoint or key.
        let s = model_spec(&c, Some("openai:gpt-4o"), None).unwrap();
        assert_eq!(
            endpoint(&s),
            Some(("https://api.openai.com/v1".into(), "OPENAI_API_KEY".into()))
        );
        // The same provider, another model: the proxy and its key.
        let s = model_spec(&c, Some("deepseek:deepseek-reasoner"), None).unwrap();
        assert_eq!(endpoint(&s), Some(("http://proxy".into(), "PROXY_KEY".into())));
        // --base-url goes with the provider's own key variable, never [model]'s of another.
        let s = model_spec(&c, Some("openai:gpt-4o"), Some("http://other")).unwrap();
        assert_eq!(
            endpoint(&s),
            Some(("http://other".into(), "OPENAI_API_KEY".into()))
        );
        // A provider section wins for its provider.
        let c = cfg("[model]\nbase_url = \"http://proxy\"\n[model.openai]\nbase_url = \"http://oa\"\napi_key_env = \"OA\"\n");
        let s = model_spec(&c, Some("openai:gpt-4o"), None).unwrap();
        assert_eq!(endpoint(&s), Some(("http://oa".into(), "OA".into())));
        let s = model_spec(&c, None, None).unwrap();
        assert_eq!(
            endpoint(&s),
            Some(("http://proxy".into(), "DEEPSEEK_API_KEY".into()))
        );
        // No endpoint for the models that send nothing.
        assert_eq!(endpoint(&model_spec(&c, Some("demo"), None).unwrap()), None);
    }

    /// Found by attack: an endpoint and a key variable from different places were paired.
    #[test]
    fn an_endpoint_and_a_key_variable_come_from_the_same_place() {
        // A section's endpoint never takes [model]'s key variable.
        let c = cfg("[model]\nname = \"deepseek-chat\"\nbase_url = \"http://a\"\napi_key_env = \"A_KEY\"\n[model.deepseek]\nbase_url = \"http://b\"\n");
        let s = model_spec(&c, None, None).unwrap();
        assert_eq!(endpoint(&s), Some(("http://b".into(), "DEEPSEEK_API_KEY".into())));
        // A section's key variable (for the provider's own endpoint) never goes to [model]'s URL.
        let c = cfg("[model]\nbase_url = \"http://a\"\n[model.deepseek]\napi_key_env = \"OFFICIAL\"\n");
        let s = model_spec(&c, None, None).unwrap();
        assert_eq!(
            endpoint(&s),
            Some(("https://api.deepseek.com".into(), "OFFICIAL".into()))
        );
        // RETRACE_MODEL of another provider does not take [model]'s endpoint.
        let mut c = cfg("[model]\nname = \"deepseek-chat\"\nbase_url = \"http://ds-proxy\"\n");
        c.env_model = Some("openai:gpt-4o".into());
        let s = model_spec(&c, None, None).unwrap();
        assert_eq!(
            endpoint(&s),
            Some(("https://api.openai.com/v1".into(), "OPENAI_API_KEY".into()))
        );
        // RETRACE_BASE_URL belongs to RETRACE_MODEL's provider, with its own key variable.
        c.env_base_url = Some("http://oa-proxy".into());
        let s = model_spec(&c, None, None).unwrap();
        assert_eq!(
            endpoint(&s),
            Some(("http://oa-proxy".into(), "OPENAI_API_KEY".into()))
        );
        let s = model_spec(&c, Some("deepseek-chat"), None).unwrap();
        assert_eq!(
            endpoint(&s),
            Some(("http://ds-proxy".into(), "DEEPSEEK_API_KEY".into()))
        );
        // An empty key variable means no key.
        let c = cfg("[model]\nbase_url = \"http://localhost:8080\"\napi_key_env = \"\"\n");
        let s = model_spec(&c, None, None).unwrap();
        assert_eq!(
            endpoint(&s),
            Some(("http://localhost:8080".into(), String::new()))
        );
    }
}
