//! Credentials go only where they belong (issue 14 item 4): each provider has its own endpoint and
//! key variable; `[model]`'s belong to the configured model's provider only; a key is sent only to
//! the base URL configured for it; shell commands never see a key. The mock servers are strict and
//! accept one bearer key each, as real providers do.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use retrace_testkit::mock_openai::{sse, MockServer, Reply};
use serde_json::{json, Value};

struct Env {
    tmp: tempfile::TempDir,
    ws: PathBuf,
}

impl Env {
    fn new(config: &str) -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        std::fs::create_dir_all(tmp.path().join("xdg/retrace")).unwrap();
        std::fs::write(tmp.path().join("xdg/retrace/config.toml"), config).unwrap();
        Env { tmp, ws }
    }

    /// `retrace` with three keys in its environment: the proxy's, DeepSeek's and OpenAI's.
    fn command(&self) -> Command {
        let mut c = support::isolated_retrace(self.tmp.path());
        c.current_dir(&self.ws)
            .env("PROXY_KEY", "proxy-key")
            .env("DEEPSEEK_API_KEY", "deepseek-key")
            .env("OPENAI_API_KEY", "openai-key");
        c
    }

    fn exec(&self, args: &[&str]) -> Output {
        self.command()
            .args(["exec", "--json"])
            .args(args)
            .arg("hello")
            .output()
            .unwrap()
    }

    fn config_json(&self, args: &[&str]) -> Value {
        let out = self
            .command()
            .args(["config", "--json"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

fn done() -> Reply {
    Reply::body(sse::body(&[sse::content("hi"), sse::finish("stop")], true))
}

fn assert_ok(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn bearer(server: &MockServer) -> Vec<String> {
    server
        .requests()
        .iter()
        .map(|r| r.header("authorization").unwrap_or("").to_string())
        .collect()
}

#[test]
fn each_key_reaches_only_the_endpoint_configured_for_it() {
    let rt = support::mock_runtime();
    let proxy = rt
        .block_on(MockServer::start_strict_with_key("proxy-key", vec![done()]))
        .unwrap();
    let openai = rt
        .block_on(MockServer::start_strict_with_key(
            "openai-key",
            vec![done(), done()],
        ))
        .unwrap();
    let env = Env::new(&format!(
        "[model]\nname = \"deepseek-chat\"\nbase_url = \"{}\"\napi_key_env = \"PROXY_KEY\"\n\n[model.openai]\nbase_url = \"{}\"\n",
        proxy.base_url(),
        openai.base_url()
    ));

    // The configured model goes to its proxy with the proxy's key.
    assert_ok(&env.exec(&[]));
    assert_eq!(bearer(&proxy), ["Bearer proxy-key"]);

    // Another provider goes to its own endpoint with its own key: never the proxy, never its key.
    assert_ok(&env.exec(&["--model", "openai:gpt-4o"]));
    assert_eq!(bearer(&openai), ["Bearer openai-key"]);
    assert_eq!(proxy.request_count(), 1);

    // `--base-url` goes with the model of the same command line and that provider's own key.
    assert_ok(&env.exec(&["--model", "openai:gpt-4o", "--base-url", &openai.base_url()]));
    assert_eq!(bearer(&openai), ["Bearer openai-key", "Bearer openai-key"]);
    assert_eq!(proxy.rejected() + openai.rejected(), 0);
}

#[test]
fn a_proxy_for_one_provider_is_not_used_by_another() {
    let env = Env::new(
        "[model]\nname = \"deepseek-chat\"\nbase_url = \"http://127.0.0.1:9/deepseek-proxy\"\napi_key_env = \"PROXY_KEY\"\n",
    );
    let shown = env.config_json(&["--model", "openai:gpt-4o"]);
    assert_eq!(shown["model"]["base_url"], "https://api.openai.com/v1");
    assert_eq!(shown["model"]["api_key_env"], "OPENAI_API_KEY");
    assert_eq!(shown["model"]["api_key_set"], true);
    let shown = env.config_json(&[]);
    assert_eq!(shown["model"]["base_url"], "http://127.0.0.1:9/deepseek-proxy");
    assert_eq!(shown["model"]["api_key_env"], "PROXY_KEY");
    // The same provider, another model: still the proxy and its key.
    let shown = env.config_json(&["--model", "deepseek:deepseek-reasoner"]);
    assert_eq!(shown["model"]["api_key_env"], "PROXY_KEY");
    // The human form names the endpoint and the variable, never the key.
    let out = env
        .command()
        .args(["config", "--model", "openai:gpt-4o"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("https://api.openai.com/v1/chat/completions"),
        "{text}"
    );
    assert!(text.contains("$OPENAI_API_KEY"), "{text}");
    assert!(!text.contains("openai-key"), "{text}");
}

#[test]
fn a_wrong_key_is_refused_by_the_strict_server_and_the_turn_fails() {
    // The check the other tests rely on: a key that is not the endpoint's own gets 401.
    let rt = support::mock_runtime();
    let server = rt
        .block_on(MockServer::start_strict_with_key("right", vec![done()]))
        .unwrap();
    let env = Env::new("");
    let out = env.exec(&["--model", "openai:gpt-4o", "--base-url", &server.base_url()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(server.rejected(), 1);
    // The failure names the variable to check, in the JSON events and on standard error.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("OPENAI_API_KEY"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the turn failed") && stderr.contains("OPENAI_API_KEY"),
        "{stderr}"
    );
}

#[test]
fn shell_commands_do_not_see_api_keys() {
    let env = Env::new("[model]\napi_key_env = \"PROXY_KEY\"\n[model.openai]\napi_key_env = \"OA_KEY\"\n");
    let script = env.tmp.path().join("script.json");
    std::fs::write(
        &script,
        json!({"responses": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "env > env.txt"}}]},
            {"content": "done"}
        ]})
        .to_string(),
    )
    .unwrap();
    let out = env
        .command()
        .env("OA_KEY", "oa-secret")
        .env("VISIBLE_VAR", "seen")
        .args(["exec", "--json", "--allow-bash", "--model"])
        .arg(format!("script:{}", script.display()))
        .arg("print the environment")
        .output()
        .unwrap();
    assert_ok(&out);
    let seen = std::fs::read_to_string(env.ws.join("env.txt")).unwrap();
    assert!(seen.contains("VISIBLE_VAR=seen"), "{seen}");
    for secret in ["proxy-key", "deepseek-key", "openai-key", "oa-secret"] {
        assert!(!seen.contains(secret), "{secret} reached the shell:\n{seen}");
    }
}

#[test]
fn the_example_config_is_printed_and_accepted() {
    let env = Env::new("");
    let out = env.command().args(["config", "--example"]).output().unwrap();
    assert_ok(&out);
    let example = String::from_utf8(out.stdout).unwrap();
    for key in [
        "[model.openai]",
        "api_key_env",
        "max_file_bytes",
        "bash =",
        "git =",
        "RETRACE_BASH",
    ] {
        assert!(example.contains(key), "{key}");
    }
    // The printed file is a config Retrace accepts as it is.
    let path: &Path = &env.tmp.path().join("xdg/retrace/config.toml");
    std::fs::write(path, &example).unwrap();
    let shown = env.config_json(&[]);
    assert_eq!(shown["config_file_exists"], true);
    assert_eq!(shown["checkpoints"]["max_turns"], 100);
    assert_eq!(shown["permissions"]["git"], "deny");
}

/// Found by attack: `RETRACE_MODEL` of another provider took `[model]`'s proxy (with OpenAI's key),
/// and an empty `api_key_env` sent the provider's own key to a local server.
#[test]
fn the_environment_and_an_empty_key_variable_pair_nothing_wrongly() {
    let rt = support::mock_runtime();
    let proxy = rt
        .block_on(MockServer::start_strict_with_key("proxy-key", vec![done()]))
        .unwrap();
    let openai = rt
        .block_on(MockServer::start_strict_with_key("openai-key", vec![done()]))
        .unwrap();
    let env = Env::new(&format!(
        "[model]\nname = \"deepseek-chat\"\nbase_url = \"{}\"\napi_key_env = \"PROXY_KEY\"\n",
        proxy.base_url()
    ));
    let out = env
        .command()
        .env("RETRACE_MODEL", "openai:gpt-4o")
        .env("RETRACE_BASE_URL", openai.base_url())
        .args(["exec", "--json", "hello"])
        .output()
        .unwrap();
    assert_ok(&out);
    assert_eq!(bearer(&openai), ["Bearer openai-key"]);
    assert_eq!(proxy.request_count(), 0);

    let local = rt.block_on(MockServer::start(vec![done()])).unwrap();
    let env = Env::new(&format!(
        "[model]\nbase_url = \"{}\"\napi_key_env = \"\"\n",
        local.base_url()
    ));
    assert_ok(&env.exec(&[]));
    assert_eq!(
        bearer(&local),
        [""],
        "no key at all goes to a server configured without one"
    );
}

/// Found by attack: a shell command read the keys from `/proc/$PPID/environ`, the environment
/// `retrace` itself started with. Run as an unprivileged user (root reads any process's memory).
#[test]
fn shell_commands_cannot_read_the_keys_from_retrace_itself() {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::fs::PermissionsExt;
    let as_root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
    if as_root && Command::new("setpriv").arg("--help").output().is_err() {
        eprintln!("skipped: running as root without setpriv to drop privileges");
        return;
    }
    let env = Env::new("");
    for d in [
        env.tmp.path().to_path_buf(),
        env.ws.clone(),
        env.tmp.path().join("xdg"),
        env.tmp.path().join("xdg/retrace"),
    ] {
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let script = env.tmp.path().join("script.json");
    std::fs::write(
        &script,
        json!({"responses": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "cat /proc/$PPID/environ > leak.txt 2>&1; tr '\\0' '\\n' < /proc/$PPID/cmdline >> leak.txt"}}]},
            {"content": "done"}
        ]})
        .to_string(),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut c = env.command();
    if as_root {
        let program = c.get_program().to_owned();
        let mut wrapped = Command::new("setpriv");
        wrapped
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(program);
        for (k, v) in c.get_envs() {
            match v {
                Some(v) => wrapped.env(k, v),
                None => wrapped.env_remove(k),
            };
        }
        wrapped.current_dir(&env.ws).stdin(std::process::Stdio::null());
        c = wrapped;
    }
    let out = c
        .args(["exec", "--json", "--allow-bash", "--model"])
        .arg(format!("script:{}", script.display()))
        .arg("read the parent's environment")
        .output()
        .unwrap();
    assert_ok(&out);
    let leak = std::fs::read_to_string(env.ws.join("leak.txt")).unwrap();
    assert!(
        leak.contains("exec"),
        "the command line is still readable: {leak}"
    );
    for secret in ["proxy-key", "deepseek-key", "openai-key"] {
        assert!(!leak.contains(secret), "{secret} reached the shell:\n{leak}");
    }
}

/// Found by attack: a gateway that echoes the `Authorization` header in its error made the key
/// appear in events, the result line and standard error. It is masked wherever it is said.
#[test]
fn a_key_echoed_by_the_server_is_masked() {
    let rt = support::mock_runtime();
    let server = rt
        .block_on(MockServer::start(vec![Reply::error(
            401,
            "bad credentials: Authorization: Bearer sk-SECRETKEY123",
        )]))
        .unwrap();
    let env = Env::new("");
    let out = env
        .command()
        .env("OPENAI_API_KEY", "sk-SECRETKEY123")
        .args(["exec", "--json", "--model", "openai:gpt-4o", "--base-url"])
        .arg(server.base_url())
        .arg("hello")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all.contains("SECRETKEY"), "{all}");
    assert!(all.contains("sk-…23"), "{all}");
}
