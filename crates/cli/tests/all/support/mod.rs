//! What the CLI test modules share.

#[allow(dead_code)] // only the modules that drive sessions with the script model use it
pub mod world;

pub mod tmux;

use std::path::Path;
use std::process::{Command, Stdio};

/// `retrace` (the binary under test) run in `tmp`, with its data and config under `tmp` and nothing
/// inherited from the environment that could change its config, model or keys.
pub fn isolated_retrace(tmp: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_retrace"));
    c.current_dir(tmp)
        .env("RETRACE_HOME", tmp.join("home"))
        .env("XDG_CONFIG_HOME", tmp.join("xdg"))
        .env("HOME", tmp)
        .stdin(Stdio::null());
    for k in [
        "RETRACE_CONFIG",
        "RETRACE_MODEL",
        "RETRACE_BASE_URL",
        "RETRACE_BASH",
        "XDG_DATA_HOME",
        "DEEPSEEK_API_KEY",
        "OPENAI_API_KEY",
    ] {
        c.env_remove(k);
    }
    c
}

/// A runtime for the mock OpenAI-compatible server of `retrace_testkit` (one worker).
#[allow(dead_code)] // not every test module talks to a server
pub fn mock_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}
