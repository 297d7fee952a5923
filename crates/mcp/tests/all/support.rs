//! Where the npm servers are, and servers configured for a test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use retrace_mcp::McpServers;
use retrace_protocol::{McpPermission, McpServerConfig};

/// The directory `npm ci` installs the test servers into.
pub fn modules() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers/node_modules/@modelcontextprotocol");
    assert!(
        dir.join("server-everything/dist/index.js").exists(),
        "the MCP test servers are not installed: run `npm ci` in crates/mcp/tests/servers (.ci/run does)"
    );
    dir
}

/// The everything server's entry point.
pub fn everything() -> String {
    modules()
        .join("server-everything/dist/index.js")
        .display()
        .to_string()
}

/// A stdio config running `node SCRIPT ARGS`.
pub fn node(script: &str, args: &[&str]) -> McpServerConfig {
    let mut all = vec![script.to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    McpServerConfig {
        command: Some("node".into()),
        args: all,
        ..Default::default()
    }
}

/// Servers on the workspace `root`.
pub fn servers(root: &Path, configs: Vec<(&str, McpServerConfig)>) -> McpServers {
    let configs: BTreeMap<String, McpServerConfig> =
        configs.into_iter().map(|(n, c)| (n.to_string(), c)).collect();
    McpServers::new(
        configs,
        root.to_path_buf(),
        Vec::new(),
        Arc::new(|k| std::env::var(k).ok()),
        McpPermission::Allow,
    )
}

/// A JSON object.
pub fn args(v: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    v.as_object().cloned().unwrap()
}

/// Whether a process with this id is alive (a zombie counts as gone).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Waits up to two seconds for `pid` to be gone.
pub fn gone_soon(pid: u32) -> bool {
    for _ in 0..100 {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

/// A runtime as the controller has one.
pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The hostile server (`tests/hostile/server.js`) listing the tools of `kinds`, with more of its
/// variables in `env` (its header says which).
pub fn hostile(kinds: &str, env: &[(&str, &str)]) -> McpServerConfig {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/server.js");
    let mut vars: BTreeMap<String, String> =
        env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    vars.insert("HOSTILE_TOOLS".into(), kinds.into());
    McpServerConfig {
        command: Some("node".into()),
        args: vec![script.display().to_string()],
        env: vars,
        ..Default::default()
    }
}
