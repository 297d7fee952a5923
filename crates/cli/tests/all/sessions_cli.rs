//! `retrace sessions delete ID` and `retrace sessions prune --older-than AGE` (issue 14): the log,
//! the lease and the whole sidecar go (SPEC §2); a session a process writes is refused (delete)
//! or kept (prune); the same bad input gets the same exit code as elsewhere.

use crate::support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Output, Stdio};
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};

struct Env {
    tmp: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        for ws in ["ws", "other"] {
            std::fs::create_dir(tmp.path().join(ws)).unwrap();
        }
        Env { tmp }
    }

    fn run(&self, dir: &str, args: &[&str]) -> Output {
        support::isolated_retrace(self.tmp.path())
            .current_dir(self.tmp.path().join(dir))
            .args(args)
            .output()
            .unwrap()
    }

    fn json(&self, dir: &str, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.run(dir, &all);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// A new session of `dir` with one demo turn; its id.
    fn session(&self, dir: &str) -> String {
        let out = self.run(dir, &["exec", "--json", "--model", "demo", "start"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let last: Value =
            serde_json::from_str(String::from_utf8(out.stdout).unwrap().lines().last().unwrap()).unwrap();
        last["session_id"].as_str().unwrap().to_string()
    }

    fn sessions_dir(&self) -> PathBuf {
        self.tmp.path().join("home/sessions")
    }

    fn files_of(&self, id: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.sessions_dir())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(id))
            .collect();
        names.sort();
        names
    }

    fn ids(&self, dir: &str) -> Vec<String> {
        self.json(dir, &["sessions"])
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_string())
            .collect()
    }

    /// Makes session `id` look last used `days` ago.
    fn age(&self, id: &str, days: u64) {
        let log = std::fs::File::options()
            .write(true)
            .open(self.sessions_dir().join(format!("{id}.jsonl")))
            .unwrap();
        log.set_modified(SystemTime::now() - Duration::from_secs(days * 86_400))
            .unwrap();
    }
}

#[test]
fn delete_removes_the_log_the_diffs_the_lease_and_the_whole_sidecar() {
    let env = Env::new();
    let a = env.session("ws");
    let b = env.session("ws");
    assert_eq!(
        env.files_of(&a),
        [
            format!("{a}.ckpt"),
            format!("{a}.diffs"),
            format!("{a}.jsonl"),
            format!("{a}.lease")
        ]
    );
    std::fs::write(env.sessions_dir().join(format!("{a}.torn-1")), "{\"torn").unwrap();
    let r = env.json("ws", &["sessions", "delete", &a]);
    assert_eq!(r["id"], a.as_str());
    assert!(r["bytes"].as_u64().unwrap() > 0, "{r}");
    assert!(r["workspace"].as_str().unwrap().ends_with("/ws"), "{r}");
    assert!(env.files_of(&a).is_empty(), "{:?}", env.files_of(&a));
    assert_eq!(env.ids("ws"), [b.as_str()]);
    // The other session is whole and usable.
    assert_eq!(env.run("ws", &["fsck", "--session", &b]).status.code(), Some(0));

    // Unknown and malformed ids: exit 2, as in every command; nothing else touched.
    let out = env.run("ws", &["sessions", "delete", &a]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(&a));
    let out = env.run("ws", &["sessions", "delete", "../../etc"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(env.ids("ws"), [b.as_str()]);
    // Human output names what went.
    let out = env.run("ws", &["sessions", "delete", &b]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with(&format!("deleted {b}")));
}

/// A session whose turn is running in another process: delete is refused naming the holder,
/// prune keeps it; nothing of it is removed.
#[test]
fn a_session_being_written_is_refused_and_kept() {
    let env = Env::new();
    let script = env.tmp.path().join("script.json");
    std::fs::write(
        &script,
        json!({"responses": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "echo started; sleep 30"}}]},
            {"content": "done"}
        ]})
        .to_string(),
    )
    .unwrap();
    let mut child = support::isolated_retrace(env.tmp.path())
        .current_dir(env.tmp.path().join("ws"))
        .args(["exec", "--json", "--allow-bash", "--model"])
        .arg(format!("script:{}", script.display()))
        .arg("wait")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut id = String::new();
    for l in lines.by_ref() {
        let v: Value = serde_json::from_str(&l.unwrap()).unwrap();
        if let Some(s) = v["session_id"].as_str() {
            id = s.to_string();
        }
        if v["type"] == "tool_call" {
            break;
        }
    }
    assert!(!id.is_empty());
    let before = env.files_of(&id);
    let out = env.run("ws", &["sessions", "delete", &id]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("pid"), "{stderr}");
    env.age(&id, 60);
    let report = env.json("ws", &["sessions", "prune", "--older-than", "30d"]);
    assert_eq!(report["held"], json!([id]));
    assert_eq!(report["removed"], json!([]));
    assert_eq!(env.files_of(&id), before);
    // SIGTERM cancels the turn and kills its shell; then the session can go.
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    child.wait().unwrap();
    env.age(&id, 60); // cancelling wrote to the log
    let report = env.json("ws", &["sessions", "prune", "--older-than", "30d"]);
    assert_eq!(report["removed"][0]["id"], id.as_str());
    assert!(env.files_of(&id).is_empty());
}

#[test]
fn prune_removes_old_sessions_of_the_workspace_oldest_first() {
    let env = Env::new();
    let old = env.session("ws");
    let older = env.session("ws");
    let fresh = env.session("ws");
    let elsewhere = env.session("other");
    env.age(&old, 40);
    env.age(&older, 50);
    env.age(&elsewhere, 90);

    // A dry run lists, oldest first, and removes nothing.
    let dry = env.json("ws", &["sessions", "prune", "--older-than", "30d", "--dry-run"]);
    assert_eq!(dry["dry_run"], true);
    let listed: Vec<&str> = dry["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [older.as_str(), old.as_str()]);
    assert_eq!(env.ids("ws").len(), 3);

    let out = env.run("ws", &["sessions", "prune", "--older-than", "30d"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("2 sessions deleted"), "{text}");
    assert_eq!(env.ids("ws"), [fresh.as_str()]);
    assert!(env.files_of(&old).is_empty() && env.files_of(&older).is_empty());
    // Another workspace's sessions stay unless --all.
    assert_eq!(env.ids("other"), [elsewhere.as_str()]);
    let all = env.json("ws", &["sessions", "prune", "--older-than", "30d", "--all"]);
    assert_eq!(all["removed"][0]["id"], elsewhere.as_str());
    assert!(env.ids("other").is_empty());
    assert_eq!(env.ids("ws"), [fresh]);

    // A bad age is a usage error naming the flag.
    let out = env.run("ws", &["sessions", "prune", "--older-than", "30"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--older-than"));
}

/// Found by attack: a lease file that is a symlink made `sessions delete` (and any write) empty
/// the file it points to. The lease is never opened through a symlink.
#[test]
fn a_symlinked_lease_never_touches_what_it_points_to() {
    let env = Env::new();
    let id = env.session("ws");
    let victim = env.tmp.path().join("victim.txt");
    std::fs::write(&victim, "precious\n").unwrap();
    let lease = env.sessions_dir().join(format!("{id}.lease"));
    std::fs::remove_file(&lease).unwrap();
    std::os::unix::fs::symlink(&victim, &lease).unwrap();
    for args in [
        vec!["sessions", "delete", id.as_str()],
        vec!["exec", "--session", id.as_str(), "--model", "demo", "more"],
        vec![
            "rewind",
            "--session",
            id.as_str(),
            "--turn",
            "0",
            "--scope",
            "code",
            "--yes",
        ],
    ] {
        let out = env.run("ws", &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(".lease"), "{args:?}: {stderr}");
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(env.sessions_dir().join(format!("{id}.jsonl")).exists());
}

/// Found by attack: a session whose log cannot be read was silently missing from `sessions` (and
/// so never pruned). It is named on standard error, and can be deleted by id.
#[test]
fn an_unreadable_log_is_named_and_can_be_deleted() {
    let env = Env::new();
    let id = env.session("ws");
    let log = env.sessions_dir().join(format!("{id}.jsonl"));
    std::fs::write(&log, "garbage\n").unwrap();
    let out = env.run("ws", &["sessions", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{id}.jsonl")) && stderr.contains("sessions delete"),
        "{stderr}"
    );
    env.json("ws", &["sessions", "delete", &id]);
    assert!(env.files_of(&id).is_empty());
}

#[test]
fn the_list_tells_sessions_apart_by_first_prompt_and_last_use() {
    let env = Env::new();
    let a = env.session("ws");
    env.age(&a, 3);
    let list = env.json("ws", &["sessions"]);
    assert_eq!(list[0]["first_prompt"], "start");
    assert!(list[0]["last_used_at"].as_str().unwrap().ends_with('Z'));
    let out = env.run("ws", &["sessions"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("{a}  3 days ago  1 turn  \"start\"")),
        "{text}"
    );
}
