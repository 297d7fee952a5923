//! The `exec` flags of daily use (issue 14, SPEC §11.1): `--continue` picks the latest session of
//! the workspace from any subdirectory, the prompt comes from an argument, `-`, a pipe or
//! `--prompt-file`, and `--max-steps` bounds the model requests of a turn.

use crate::support;

use std::io::Write;
use std::process::Stdio;

use serde_json::{json, Value};

struct Env {
    tmp: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("ws/sub")).unwrap();
        Env { tmp }
    }

    /// A script of `responses`, as a `--model` value.
    fn script(&self, name: &str, responses: Value) -> String {
        let p = self.tmp.path().join(name);
        std::fs::write(&p, json!({ "responses": responses }).to_string()).unwrap();
        format!("script:{}", p.display())
    }

    /// `exec --json ARGS` in `dir` (relative to the scratch directory) with `stdin`; the result
    /// line and the exit code.
    fn exec(&self, dir: &str, args: &[&str], stdin: Option<&str>) -> (Value, Option<i32>, String) {
        let mut c = support::isolated_retrace(self.tmp.path());
        c.current_dir(self.tmp.path().join(dir))
            .arg("exec")
            .arg("--json")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if stdin.is_some() {
            c.stdin(Stdio::piped());
        }
        let mut child = c.spawn().unwrap();
        if let Some(text) = stdin {
            child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
        }
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        let last = stdout
            .lines()
            .last()
            .map(|l| serde_json::from_str(l).unwrap())
            .unwrap_or(Value::Null);
        (last, out.status.code(), String::from_utf8(out.stderr).unwrap())
    }

    /// The user messages of a session.
    fn prompts(&self, id: &str) -> Vec<String> {
        let out = support::isolated_retrace(self.tmp.path())
            .args(["transcript", "--json", "--session", id])
            .output()
            .unwrap();
        let msgs: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        msgs.iter()
            .filter(|m| m["role"] == "user")
            .map(|m| m["content"].as_str().unwrap().to_string())
            .collect()
    }
}

#[test]
fn continue_from_a_subdirectory_and_prompts_from_stdin_and_files() {
    let env = Env::new();
    let done = env.script("done.json", json!([{"content": "ok"}]));
    let (first, code, err) = env.exec("ws", &["--model", &done, "first"], None);
    assert_eq!(code, Some(0), "{err}");
    let id = first["session_id"].as_str().unwrap();
    // `-c` from a subdirectory continues that session, the prompt piped in with `-`.
    let (r, code, err) = env.exec("ws/sub", &["-c", "--model", &done, "-"], Some("from a pipe\n"));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(r["session_id"], id);
    assert_eq!(r["turn"], 1);
    // No prompt argument, standard input a pipe: it is read too.
    let (r, code, err) = env.exec("ws", &["--continue", "--model", &done], Some("piped, no dash"));
    assert_eq!((code, r["session_id"].as_str()), (Some(0), Some(id)), "{err}");
    // A prompt file.
    let file = env.tmp.path().join("prompt.md");
    std::fs::write(&file, "from a file").unwrap();
    let (r, code, err) = env.exec(
        "ws",
        &[
            "--continue",
            "--model",
            &done,
            "--prompt-file",
            file.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!((code, r["turn"].as_u64()), (Some(0), Some(3)), "{err}");
    assert_eq!(
        env.prompts(id),
        ["first", "from a pipe\n", "piped, no dash", "from a file"]
    );
    // `--continue` where no session exists is a usage-level "not found".
    std::fs::create_dir(env.tmp.path().join("empty")).unwrap();
    let (_, code, err) = env.exec("empty", &["--continue", "--model", &done, "x"], None);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no session"), "{err}");
}

#[test]
fn max_steps_bounds_the_model_requests_of_a_turn() {
    let env = Env::new();
    let two = env.script(
        "two.json",
        json!([
            {"content": "", "tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]},
            {"content": "done"}
        ]),
    );
    let (r, code, _) = env.exec("ws", &["--model", &two, "--max-steps", "1", "go"], None);
    assert_eq!(code, Some(1));
    assert!(
        r["error"]["message"].as_str().unwrap().contains("limit of 1"),
        "{r}"
    );
    assert_eq!(r["error"]["code"], "model", "{r}");
    let (_, code, err) = env.exec("ws", &["--model", &two, "--max-steps", "0", "go"], None);
    assert_eq!(code, Some(2), "{err}");
}

/// The shell tool is offered to the model only when the shell may run.
#[test]
fn the_shell_is_not_offered_when_it_is_denied() {
    use retrace_testkit::mock_openai::{sse, MockServer, Reply};
    let env = Env::new();
    let rt = support::mock_runtime();
    let reply = || Reply::body(sse::body(&[sse::content("ok"), sse::finish("stop")], true));
    let server = rt
        .block_on(MockServer::start_strict_with_key("k", vec![reply(), reply()]))
        .unwrap();
    let base = server.base_url();
    for extra in [&[][..], &["--allow-bash"][..]] {
        let mut args = vec!["--model", "openai:mock", "--base-url", &base];
        args.extend_from_slice(extra);
        args.push("hi");
        let mut c = support::isolated_retrace(env.tmp.path());
        let out = c
            .current_dir(env.tmp.path().join("ws"))
            .env("OPENAI_API_KEY", "k")
            .arg("exec")
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let names = |i: usize| -> Vec<String> {
        server.requests()[i].json()["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(!names(0).contains(&"bash".to_string()), "{:?}", names(0));
    assert!(names(1).contains(&"bash".to_string()), "{:?}", names(1));
}

/// Project instructions (`AGENTS.md`, `RETRACE.md` at the workspace root) and the environment
/// (date, OS, workspace, git) are in the system prompt, read afresh each turn; an instruction file
/// that is a symlink leading outside the workspace is not read (a repository cannot make the agent
/// send a private file to the model).
#[test]
fn project_instructions_and_the_environment_are_in_the_system_prompt() {
    use retrace_testkit::mock_openai::{sse, MockServer, Reply};
    let env = Env::new();
    let ws = env.tmp.path().join("ws");
    std::fs::create_dir(ws.join(".git")).unwrap();
    std::fs::write(ws.join("AGENTS.md"), "Indent with tabs.\n").unwrap();
    std::fs::write(ws.join("RETRACE.md"), "Run make check before you finish.\n").unwrap();
    let rt = support::mock_runtime();
    let reply = || Reply::body(sse::body(&[sse::content("ok"), sse::finish("stop")], true));
    let server = rt
        .block_on(MockServer::start_strict_with_key("k", vec![reply(), reply()]))
        .unwrap();
    let run = || {
        let out = support::isolated_retrace(env.tmp.path())
            .current_dir(&ws)
            .env("OPENAI_API_KEY", "k")
            .args(["exec", "--json", "--model", "openai:mock", "--base-url"])
            .arg(server.base_url())
            .arg("hi")
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let system = |i: usize| -> String {
        let body = server.requests()[i].json();
        assert_eq!(body["messages"][0]["role"], "system");
        body["messages"][0]["content"].as_str().unwrap().to_string()
    };
    run();
    let s = system(0);
    assert!(s.contains("Indent with tabs."), "{s}");
    assert!(s.contains("Run make check before you finish."), "{s}");
    assert!(s.find("AGENTS.md") < s.find("RETRACE.md"), "{s}");
    let canonical = std::fs::canonicalize(&ws).unwrap();
    assert!(s.contains(&format!("Workspace: {}", canonical.display())), "{s}");
    assert!(s.contains("Git repository: yes"), "{s}");
    assert!(s.contains(std::env::consts::OS), "{s}");
    let date: String = s.split("Date (UTC): ").nth(1).unwrap().chars().take(10).collect();
    let shape: String = date
        .chars()
        .map(|c| if c.is_ascii_digit() { 'd' } else { c })
        .collect();
    assert_eq!(shape, "dddd-dd-dd", "{s}");

    // A symlink to a private file outside: named, not read.
    std::fs::write(env.tmp.path().join("private.txt"), "SECRET-TOKEN\n").unwrap();
    std::fs::remove_file(ws.join("AGENTS.md")).unwrap();
    std::os::unix::fs::symlink(env.tmp.path().join("private.txt"), ws.join("AGENTS.md")).unwrap();
    run();
    let s = system(1);
    assert!(!s.contains("SECRET-TOKEN"), "{s}");
    assert!(s.contains("AGENTS.md at the workspace root was not read"), "{s}");
    assert!(
        !s.contains("private.txt"),
        "where the symlink leads stays private: {s}"
    );
    assert!(s.contains("Run make check"), "{s}");
}
