//! The git backend (`--backend git`) through the real binary and the script model: a shell
//! command's creations, `sed -i` edits, deletions, renames and mode changes are captured as the
//! call's changes and a code rewind restores them byte for byte with modes; a hand edit after them
//! is a conflict; the workspace's own `.git` is byte-identical after a whole session; ignored
//! directories are not walked.

use crate::support;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

/// Path → (bytes, permission bits) of the regular files under `dir`, `skip` (a first component)
/// left out.
pub(crate) fn tree(dir: &Path, skip: &[&str]) -> BTreeMap<String, (Vec<u8>, u32)> {
    fn go(root: &Path, dir: &Path, skip: &[&str], out: &mut BTreeMap<String, (Vec<u8>, u32)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if skip
                .iter()
                .any(|s| rel == *s || rel.starts_with(&format!("{s}/")))
            {
                continue;
            }
            let ty = e.file_type().unwrap();
            if ty.is_dir() {
                go(root, &p, skip, out);
            } else if ty.is_file() {
                let mode = e.metadata().unwrap().permissions().mode() & 0o7777;
                out.insert(rel, (std::fs::read(&p).unwrap(), mode));
            }
        }
    }
    let mut out = BTreeMap::new();
    go(dir, dir, skip, &mut out);
    out
}

/// Runs `git ARGS` in `ws` (asserting success); its standard output.
pub(crate) fn git(ws: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(ws)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The paths of every tool call's changes in a transcript's items, in order.
pub(crate) fn changed_paths(items: &Value) -> Vec<String> {
    items
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["kind"] == "tool_call")
        .flat_map(|i| i["changes"].as_array().cloned().unwrap_or_default())
        .map(|c| c["path"].as_str().unwrap().to_string())
        .collect()
}

pub(crate) struct World {
    pub(crate) tmp: tempfile::TempDir,
    pub(crate) ws: std::path::PathBuf,
}

impl World {
    pub(crate) fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        for d in ["ws", "home", "xdg", "scripts"] {
            std::fs::create_dir(tmp.path().join(d)).unwrap();
        }
        let ws = std::fs::canonicalize(tmp.path().join("ws")).unwrap();
        World { tmp, ws }
    }

    pub(crate) fn put(&self, rel: &str, bytes: &[u8]) {
        let p = self.ws.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }

    pub(crate) fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = support::isolated_retrace(self.tmp.path())
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    pub(crate) fn json(&self, args: &[&str]) -> Value {
        let (code, out, err) = self.run(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"))
    }

    /// The model spec of a script whose turn runs `command` as one `bash` call, then answers.
    pub(crate) fn script(&self, name: &str, command: &str) -> String {
        let p = self.tmp.path().join(format!("scripts/{name}.json"));
        let doc = json!({"responses": [
            {"content": "working", "tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
            {"content": "done"}
        ]});
        std::fs::write(&p, doc.to_string()).unwrap();
        format!("script:{}", p.display())
    }

    /// `exec --json --backend git --allow-bash --model MODEL` of a new session of the workspace,
    /// started and not waited for (its stdout as `stdout` says).
    pub(crate) fn spawn_exec(&self, model: &str, stdout: std::process::Stdio) -> std::process::Child {
        let ws = self.ws.display().to_string();
        support::isolated_retrace(self.tmp.path())
            .args([
                "exec",
                "--json",
                "--backend",
                "git",
                "--allow-bash",
                "--model",
                model,
                "--workspace",
                &ws,
                "go",
            ])
            .stdout(stdout)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    }

    /// `rewind --turn TURN --scope code --json --yes` of session `id`: its JSON.
    pub(crate) fn rewind_code(&self, id: &str, turn: u64) -> Value {
        let turn = turn.to_string();
        self.json(&[
            "rewind",
            "--session",
            id,
            "--turn",
            &turn,
            "--scope",
            "code",
            "--json",
            "--yes",
        ])
    }

    /// One `exec --json --backend git --allow-bash` turn running `commands`; returns every line.
    pub(crate) fn exec(&self, session: Option<&str>, commands: &[&str]) -> Vec<Value> {
        let n = std::fs::read_dir(self.tmp.path().join("scripts"))
            .unwrap()
            .count();
        let script = self.tmp.path().join(format!("scripts/s{n}.json"));
        let calls: Vec<Value> = commands
            .iter()
            .map(|c| json!({"name": "bash", "arguments": {"command": c}}))
            .collect();
        let responses =
            json!({"responses": [{"content": "working", "tool_calls": calls}, {"content": "done"}]});
        std::fs::write(&script, responses.to_string()).unwrap();
        let model = format!("script:{}", script.display());
        let ws = self.ws.display().to_string();
        let mut args = vec![
            "exec",
            "--json",
            "--backend",
            "git",
            "--allow-bash",
            "--model",
            &model,
        ];
        match session {
            Some(id) => args.extend(["--session", id]),
            None => args.extend(["--workspace", &ws]),
        }
        args.push("run it");
        let (code, out, err) = self.run(&args);
        assert_eq!(code, 0, "{err}\n{out}");
        out.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }
}

#[test]
fn a_shell_commands_changes_rewind_byte_for_byte_and_the_workspaces_git_is_untouched() {
    let w = World::new();
    w.put("a.txt", b"one\ntwo\n");
    w.put("b.txt", b"bee\n");
    w.put("c.txt", b"doomed\n");
    w.put("run.sh", b"#!/bin/sh\necho hi\n");
    w.put(".gitignore", b"ignored/\n");
    w.put("ignored/big.txt", b"not walked\n");
    git(&w.ws, &["init", "-q"]);
    git(&w.ws, &["add", "a.txt", ".gitignore"]);
    git(&w.ws, &["commit", "-q", "-m", "first"]);
    git(&w.ws, &["add", "b.txt"]); // staged, not committed; c.txt and run.sh untracked
    let git_before = tree(&w.ws.join(".git"), &[]);
    let before = tree(&w.ws, &[".git", "ignored"]);
    // born well before the command: the moved file is told apart by its inode, not its age
    std::thread::sleep(std::time::Duration::from_millis(300));

    let lines = w.exec(
        None,
        &["sed -i 's/one/ONE/' a.txt && mkdir -p sub/deep && printf 'new\\n' > sub/deep/new.txt && rm c.txt && mv b.txt b2.txt && chmod 755 run.sh && echo x > ignored/x.txt"],
    );
    let result = lines.last().unwrap();
    assert_eq!(result["ok"], true, "{result}");
    let id = result["session_id"].as_str().unwrap().to_string();
    // the call's changes, as an edit tool's are shown
    let items = w.json(&["transcript", "--session", &id, "--items", "--json"]);
    let call = items
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["kind"] == "tool_call")
        .unwrap()
        .clone();
    let mut shown: Vec<(String, String)> = call["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["action"].as_str().unwrap().to_string(),
                c["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    shown.sort();
    assert_eq!(
        shown,
        [
            ("create".to_string(), "sub/deep/new.txt".to_string()),
            ("delete".into(), "c.txt".into()),
            ("modify".into(), "a.txt".into()),
            ("modify".into(), "run.sh".into()),
            ("move".into(), "b2.txt".into()),
        ],
        "{call}"
    );
    let a = call["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["path"] == "a.txt")
        .unwrap();
    assert_eq!(a["diff"], "@@ -1,2 +1,2 @@\n-one\n+ONE\n two\n");
    // the turn is covered: no shell gap
    let cps = w.json(&["checkpoints", "--session", &id, "--json"]);
    assert_eq!(cps[0]["coverage"], "complete", "{cps}");

    let r = w.json(&[
        "rewind",
        "--session",
        &id,
        "--turn",
        "0",
        "--scope",
        "code",
        "--json",
    ]);
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(
        tree(&w.ws, &[".git", "ignored"]),
        before,
        "the files as they were, modes too"
    );
    assert!(
        !w.ws.join("sub").exists(),
        "the directories the command made are gone"
    );
    assert!(
        w.ws.join("ignored/x.txt").exists(),
        "an ignored file is not covered"
    );
    assert_eq!(
        tree(&w.ws.join(".git"), &[]),
        git_before,
        "the workspace's own .git is untouched"
    );
}

#[test]
fn a_hand_edit_after_a_shell_command_is_a_conflict_never_overwritten() {
    let w = World::new();
    w.put("a.txt", b"one\n");
    let lines = w.exec(None, &["echo two > a.txt"]);
    let id = lines.last().unwrap()["session_id"].as_str().unwrap().to_string();
    w.put("a.txt", b"by hand\n");
    let (code, _, err) = w.run(&["rewind", "--session", &id, "--turn", "0", "--scope", "code"]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("a.txt"), "{err}");
    assert_eq!(std::fs::read(w.ws.join("a.txt")).unwrap(), b"by hand\n");
}

/// `exec --backend git` killed with SIGKILL at moments spread over its turn (the first full
/// snapshot of 2,000 files, the shell command writing 300 more, the refresh and capture after it):
/// each time `fsck` is clean, the next turn of the same session works and captures its own
/// command, and a rewind of that turn restores exactly what it changed.
#[test]
fn sigkill_during_snapshots_leaves_both_stores_consistent() {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    use std::time::{Duration, Instant};

    for (round, delay_ms) in [40u64, 400, 1200, 2000, 3000].into_iter().enumerate() {
        let w = World::new();
        for i in 0..2000 {
            w.put(
                &format!("src/d{}/f{i}.txt", i % 40),
                format!("file {i}\n").as_bytes(),
            );
        }
        w.put("a.txt", b"one\n");
        let script = w.tmp.path().join("scripts/kill.json");
        let command =
            "mkdir -p gen && for i in $(seq 1 300); do echo $i > gen/f$i; done && sed -i 's/one/ONE/' a.txt";
        let doc = json!({"responses": [
            {"content": "working", "tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
            {"content": "done"}
        ]});
        std::fs::write(&script, doc.to_string()).unwrap();
        let model = format!("script:{}", script.display());
        let ws = w.ws.display().to_string();
        let mut child = support::isolated_retrace(w.tmp.path())
            .args([
                "exec",
                "--json",
                "--backend",
                "git",
                "--allow-bash",
                "--model",
                &model,
                "--workspace",
                &ws,
                "go",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
        child.wait().unwrap();
        // the shell command (its own process group) finishes on its own
        std::thread::sleep(Duration::from_millis(300));
        let sessions = w.json(&["sessions", "--workspace", &ws, "--json"]);
        let Some(id) = sessions
            .as_array()
            .and_then(|s| s.first())
            .and_then(|s| s["id"].as_str().or(s["session_id"].as_str()))
            .map(str::to_string)
        else {
            // killed before the session was made: nothing to check
            continue;
        };
        let (code, out, err) = w.run(&["fsck", "--session", &id, "--json"]);
        assert_eq!(code, 0, "round {round} ({delay_ms} ms): fsck: {out}\n{err}");
        // the next turn works and captures its own command
        let had_f1 = std::fs::read(w.ws.join("gen/f1")).ok();
        let turns_before = w.json(&["checkpoints", "--session", &id, "--json"]);
        eprintln!(
            "round {round} ({delay_ms} ms): killed after {} turn(s) recorded, gen/f1 {}",
            turns_before.as_array().map_or(0, Vec::len),
            if had_f1.is_some() { "made" } else { "not made" }
        );
        let start = Instant::now();
        let lines = w.exec(Some(&id), &["echo next > next.txt && rm -f gen/f1"]);
        let r = lines.last().unwrap();
        assert_eq!(r["ok"], true, "round {round}: {r}");
        let turn = r["turn"].as_u64().unwrap();
        assert!(start.elapsed() < Duration::from_secs(30));
        let (code, out, err) = w.run(&[
            "rewind",
            "--session",
            &id,
            "--turn",
            &turn.to_string(),
            "--scope",
            "code",
            "--json",
        ]);
        assert_eq!(code, 0, "round {round}: rewind: {out}\n{err}");
        let after = tree(&w.ws, &[]);
        assert!(
            !after.contains_key("next.txt"),
            "round {round}: the turn's new file went"
        );
        // what the command deleted is back, exactly as it was (the killed command may have made it)
        assert_eq!(after.get("gen/f1").map(|f| f.0.clone()), had_f1, "round {round}");
        let (code, out, err) = w.run(&["fsck", "--session", &id, "--json"]);
        assert_eq!(code, 0, "round {round}: fsck after the rewind: {out}\n{err}");
    }
}

/// A damaged object of the store: `fsck` fails naming it and its file, what to do is said; the
/// next command that changes that file still runs, its before-image a gap naming why; with the
/// store deleted, fsck is clean and the next command is captured again.
#[test]
fn a_damaged_object_is_an_error_naming_it_and_costs_only_its_file() {
    let w = World::new();
    w.put("a.txt", b"one\n");
    w.put("b.txt", b"bee\n");
    let id = w.exec(None, &["echo made > c.txt"]).last().unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let store = w.tmp.path().join(format!("home/sessions/{id}.ckpt/git"));
    assert!(store.join("repo.git").is_dir(), "{}", store.display());
    // a.txt's blob replaced by b.txt's bytes (a valid object under the wrong name)
    let blob = |bytes: &[u8]| {
        let out = Command::new("git")
            .args(["hash-object", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        out.stdin.as_ref().unwrap().write_all(bytes).unwrap();
        let o = out.wait_with_output().unwrap();
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    };
    let (a, b) = (blob(b"one\n"), blob(b"bee\n"));
    let obj = |h: &str| store.join(format!("repo.git/objects/{}/{}", &h[..2], &h[2..]));
    std::fs::set_permissions(obj(&a), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::copy(obj(&b), obj(&a)).unwrap();
    let (code, out, _) = w.run(&["fsck", "--session", &id, "--json"]);
    assert_eq!(code, 1, "{out}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let p = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["path"].as_str().unwrap().contains(&a[2..]))
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(p["file"], "a.txt", "{p}");
    assert!(p["problem"].as_str().unwrap().contains("delete"), "{p}");
    // the next command changing a.txt runs; its before-image is a gap naming why
    let r = w.exec(Some(&id), &["echo two > a.txt && echo bee2 > b.txt"]);
    assert_eq!(r.last().unwrap()["ok"], true);
    let cps = w.json(&["checkpoints", "--session", &id, "--json"]);
    let last = cps.as_array().unwrap().last().unwrap();
    assert_eq!(last["coverage"], "partial", "{last}");
    // with the store gone, fsck is clean and the next command is captured again
    std::fs::remove_dir_all(&store).unwrap();
    let (code, out, err) = w.run(&["fsck", "--session", &id, "--json"]);
    assert_eq!(code, 0, "{out}\n{err}");
    w.exec(Some(&id), &["echo three > a.txt"]);
    let cps = w.json(&["checkpoints", "--session", &id, "--json"]);
    let last = cps.as_array().unwrap().last().unwrap();
    assert_eq!(last["coverage"], "complete", "{last}");
}

/// An ignored directory of 10,000 files costs nothing: never read, hashed, stored or watched
/// (the object store holds the few files the walk keeps), in the first snapshot or any turn.
#[test]
fn an_ignored_directory_of_ten_thousand_files_costs_nothing() {
    let w = World::new();
    w.put(".gitignore", b"node_modules/\n");
    w.put("a.txt", b"one\n");
    for i in 0..10_000 {
        w.put(
            &format!("node_modules/p{}/f{i}.js", i % 100),
            format!("// {i}\n").as_bytes(),
        );
    }
    let lines = w.exec(None, &["echo two > a.txt && echo y > node_modules/p1/new.js"]);
    let id = lines.last().unwrap()["session_id"].as_str().unwrap().to_string();
    w.exec(Some(&id), &["echo three > a.txt"]);
    let store = w.tmp.path().join(format!("home/sessions/{id}.ckpt/git"));
    let mut objects = 0;
    for d in std::fs::read_dir(store.join("repo.git/objects")).unwrap() {
        let d = d.unwrap();
        if d.file_name().len() == 2 {
            objects += std::fs::read_dir(d.path()).unwrap().count();
        }
    }
    assert!(objects < 10, "only the kept files' blobs: {objects}");
    let cache = std::fs::metadata(store.join("statcache")).unwrap().len();
    assert!(
        cache < 2_000,
        "the stat cache knows only the kept files: {cache} bytes"
    );
    // the ignored file the command made is not the command's change
    let items = w.json(&["transcript", "--session", &id, "--items", "--json"]);
    let changed = changed_paths(&items);
    assert_eq!(changed, ["a.txt", "a.txt"], "{items}");
}

/// A store that cannot be opened (a file in its place) keeps nothing else from working: the
/// session opens, rewinds and undoes; a shell command is refused unrun, naming the store and what
/// to do; once it is removed, the next command is captured again.
#[test]
fn an_unusable_store_refuses_shell_commands_only_and_says_what_to_do() {
    let w = World::new();
    w.put("a.txt", b"one\n");
    let id = w.exec(None, &["echo two > a.txt"]).last().unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let store = w.tmp.path().join(format!("home/sessions/{id}.ckpt/git"));
    std::fs::remove_dir_all(&store).unwrap();
    std::fs::write(&store, b"junk").unwrap();
    // a command is refused unrun, saying why and what to do
    let lines = w.exec(Some(&id), &["echo three > a.txt"]);
    let call = lines
        .iter()
        .find(|l| l["type"] == "tool_result")
        .cloned()
        .unwrap_or_default();
    let text = serde_json::to_string(&lines).unwrap();
    assert!(
        text.contains("cannot be used") && text.contains("remove it"),
        "{call}\n{text}"
    );
    assert_eq!(
        std::fs::read(w.ws.join("a.txt")).unwrap(),
        b"two\n",
        "the command did not run"
    );
    // rewinds and undo work
    let r = w.json(&[
        "rewind",
        "--session",
        &id,
        "--turn",
        "0",
        "--scope",
        "code",
        "--json",
    ]);
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(std::fs::read(w.ws.join("a.txt")).unwrap(), b"one\n");
    let u = w.json(&["undo", "--session", &id, "--json"]);
    assert_eq!(u["ok"], true, "{u}");
    // removed, the store is made again and the next command captured
    std::fs::remove_file(&store).unwrap();
    w.exec(Some(&id), &["echo four > a.txt"]);
    let cps = w.json(&["checkpoints", "--session", &id, "--json"]);
    let last = cps.as_array().unwrap().last().unwrap();
    assert_eq!(last["coverage"], "complete", "{last}");
    assert_eq!(last["paths"].as_array().map(Vec::len), Some(1), "{last}");
}

/// The session id the last line of an `exec --json` names.
pub(crate) fn session_of(lines: &[Value]) -> String {
    lines.last().unwrap()["session_id"].as_str().unwrap().to_string()
}

/// A file git's global excludes ignore is not the command's change, whether it was there before
/// (rewriting it) or not (making it): a rewind leaves both as they are and restores the rest.
#[test]
fn files_ignored_by_gits_global_excludes_are_never_the_commands_changes() {
    let w = World::new();
    std::fs::create_dir_all(w.tmp.path().join("xdg/git")).unwrap();
    std::fs::write(w.tmp.path().join("xdg/git/ignore"), "*.gx\n").unwrap();
    w.put("a.gx", b"1\n");
    w.put("sub/d.gx", b"1\n");
    w.put("b", b"1\n");
    let lines = w.exec(None, &["true"]);
    let id = lines.last().unwrap()["session_id"].as_str().unwrap().to_string();
    w.exec(
        Some(&id),
        &["echo 2 > a.gx; echo 2 > sub/d.gx; echo 2 > b; echo 2 > c.gx"],
    );
    let items = w.json(&["transcript", "--session", &id, "--items", "--json"]);
    let changed = changed_paths(&items);
    assert_eq!(changed, ["b"], "{items}");
    w.rewind_code(&id, 1);
    let after = tree(&w.ws, &[]);
    for ignored in ["a.gx", "sub/d.gx", "c.gx"] {
        assert_eq!(after[ignored].0, b"2\n", "{ignored} is ignored: left as it is");
    }
    assert_eq!(after["b"].0, b"1\n");
}

/// Git's global configuration a FIFO (which reading would block on forever): the walk refuses to
/// start, so a shell command is refused unrun, naming the file and what to do; nothing hangs.
#[test]
fn a_fifo_for_gits_global_configuration_refuses_the_command_and_never_hangs() {
    let w = World::new();
    let fifo = w.tmp.path().join(".gitconfig");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    w.put("a", b"1\n");
    let lines = w.exec(None, &["echo 2 > a"]);
    let call = lines
        .iter()
        .find(|l| l["type"] == "item_completed" && l["item"]["kind"] == "tool_call")
        .unwrap();
    assert_eq!(call["item"]["status"], "failed", "{call}");
    let output = call["item"]["output"].as_str().unwrap();
    assert!(
        output.contains(".gitconfig") && output.contains("not a regular file"),
        "{output}"
    );
    assert_eq!(std::fs::read(w.ws.join("a")).unwrap(), b"1\n", "never run");
}
