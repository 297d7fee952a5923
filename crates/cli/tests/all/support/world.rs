//! One test's private world for the CLI tests that drive sessions with the script model: the
//! workspace `ws/`, the data root `home/`, the config `xdg/`, and numbered script files.

use std::cell::Cell;
use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::{json, Value};
use tempfile::TempDir;

pub struct World {
    pub tmp: TempDir,
    pub ws: PathBuf,
    scripts: Cell<usize>,
}

impl World {
    pub fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        for d in ["ws", "home", "xdg", "scripts"] {
            std::fs::create_dir(tmp.path().join(d)).unwrap();
        }
        let ws = std::fs::canonicalize(tmp.path().join("ws")).unwrap();
        World {
            tmp,
            ws,
            scripts: Cell::new(0),
        }
    }

    /// `retrace`, isolated in this world.
    pub fn command(&self) -> Command {
        super::isolated_retrace(self.tmp.path())
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().unwrap()
    }

    /// Runs `args`, expecting exit `code`; returns (stdout, stderr).
    pub fn code(&self, args: &[&str], code: i32) -> (String, String) {
        let out = self.run(args);
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        );
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?}\nstdout: {stdout}\nstderr: {stderr}"
        );
        (stdout, stderr)
    }

    /// Runs `args` with `--json`, expecting exit `code`; stdout is one JSON document.
    pub fn json_code(&self, args: &[&str], code: i32) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        let (stdout, _) = self.code(&all, code);
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {stdout}"))
    }

    pub fn json(&self, args: &[&str]) -> Value {
        self.json_code(args, 0)
    }

    /// A script file (SPEC §11.2) as a `--model` value.
    pub fn script(&self, responses: Value) -> String {
        let n = self.scripts.get();
        self.scripts.set(n + 1);
        let path = self.tmp.path().join(format!("scripts/s{n}.json"));
        std::fs::write(&path, json!({ "responses": responses }).to_string()).unwrap();
        format!("script:{}", path.display())
    }

    /// The arguments of `exec --json` with `model` on a new session of the workspace (or
    /// `session`), shell commands allowed.
    pub fn exec_args(&self, session: Option<&str>, model: &str, prompt: &str) -> Vec<String> {
        let mut args: Vec<String> = vec!["exec".into(), "--json".into(), "--model".into(), model.into()];
        match session {
            Some(id) => args.extend(["--session".to_string(), id.to_string()]),
            None => args.extend(["--workspace".to_string(), self.ws.display().to_string()]),
        }
        args.extend(["--allow-bash".to_string(), prompt.to_string()]);
        args
    }

    /// One turn that must finish; returns the session id.
    pub fn exec(&self, session: Option<&str>, prompt: &str, responses: Value) -> String {
        let model = self.script(responses);
        let args = self.exec_args(session, &model, prompt);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (stdout, _) = self.code(&args, 0);
        let result: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
        assert_eq!(result["ok"], true, "{result}");
        result["session_id"].as_str().unwrap().to_string()
    }

    pub fn sessions_dir(&self) -> PathBuf {
        self.tmp.path().join("home/sessions")
    }

    pub fn log(&self, id: &str) -> PathBuf {
        self.sessions_dir().join(format!("{id}.jsonl"))
    }

    /// Writes the config the commands read (`$XDG_CONFIG_HOME/retrace/config.toml`).
    pub fn write_config(&self, text: &str) {
        let dir = self.tmp.path().join("xdg/retrace");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), text).unwrap();
    }

    /// One `exec --json` turn of the script model calling `calls` (extra flags first): every line
    /// it printed, and its result, which must say ok.
    pub fn exec_calls(&self, flags: &[&str], calls: Vec<Value>) -> (Vec<Value>, Value) {
        let model = self.script(json!([{"content": "", "tool_calls": calls}, {"content": "done"}]));
        let ws = self.ws.display().to_string();
        let mut args = vec!["exec", "--json", "--model", &model, "--workspace", &ws];
        args.extend(flags);
        args.push("go");
        let (stdout, stderr) = self.code(&args, 0);
        let lines: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let result = lines.last().unwrap().clone();
        assert_eq!(result["ok"], true, "{result}\n{stderr}");
        (lines, result)
    }

    pub fn put(&self, rel: &str, bytes: &[u8]) {
        std::fs::write(self.ws.join(rel), bytes).unwrap();
    }

    /// A workspace file as text (`None`: absent or not UTF-8).
    pub fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.ws.join(rel)).ok()
    }

    /// A workspace file's bytes (`None`: absent).
    pub fn bytes(&self, rel: &str) -> Option<Vec<u8>> {
        std::fs::read(self.ws.join(rel)).ok()
    }
}

/// A `write_file` call.
pub fn write(path: &str, content: &str) -> Value {
    json!({"name": "write_file", "arguments": {"path": path, "content": content}})
}

/// One turn of the script model: `calls`, then "done".
pub fn turn_of(calls: Vec<Value>) -> Value {
    json!([{"content": "working", "tool_calls": calls}, {"content": "done"}])
}
