//! The session log against damage from outside, through the real binary and the script model: a
//! lease file removed while its session is held lets no second writer in (the log itself is
//! locked), and a line in the middle of a log that cannot be read keeps the files restorable,
//! is named by `fsck` (file and line), and is moved aside by `fsck --repair`, after which the
//! session is usable again (SPEC §6, docs/FORMATS.md "Session log").

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::Stdio;

use serde_json::{json, Value};

use crate::support;
use crate::support::world::{turn_of, write, World as Env};

/// A running `exec` whose shell command waits for a file; dropping it releases and reaps it.
struct Holder {
    child: std::process::Child,
    release: PathBuf,
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.release, b"");
        if std::thread::panicking() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

#[test]
fn a_removed_lease_file_lets_no_second_writer_in() {
    let env = Env::new();
    let id = env.exec(None, "zero", turn_of(vec![write("a.txt", "a0\n")]));
    let release = env.tmp.path().join("release");
    let wait = format!(
        "while [ ! -e '{}' ]; do sleep 0.02; done; echo released",
        release.display()
    );
    let model = env.script(turn_of(vec![json!({
        "name": "bash",
        "arguments": {"command": wait, "timeout_ms": 60_000}
    })]));
    let mut holder = Holder {
        child: env
            .command()
            .args(env.exec_args(Some(&id), &model, "hold"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
        release: release.clone(),
    };
    let mut lines = BufReader::new(holder.child.stdout.take().unwrap()).lines();
    loop {
        let line = lines.next().expect("the holder ended early").unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["type"] == "tool_call" && v["name"] == "bash" {
            break;
        }
    }

    // A clean-up of lock files that look stale removes the held lease.
    std::fs::remove_file(env.sessions_dir().join(format!("{id}.lease"))).unwrap();
    let pid = format!("pid {}", holder.child.id());
    let model = env.script(json!([{"content": "never"}]));
    let second = env.exec_args(Some(&id), &model, "intruder");
    let second: Vec<&str> = second.iter().map(String::as_str).collect();
    let writers: [&[&str]; 4] = [
        &second,
        &["rewind", "--session", &id, "--turn", "0", "--scope", "code"],
        &["fsck", "--session", &id, "--repair"],
        &["sessions", "delete", &id],
    ];
    for args in writers {
        let (_, stderr) = env.code(args, 1);
        assert!(stderr.contains("held by another writer"), "{args:?}: {stderr}");
        assert!(stderr.contains(&pid), "{args:?} names the holder: {stderr}");
    }
    assert_eq!(
        env.read("a.txt").as_deref(),
        Some("a0\n"),
        "the rewind wrote nothing"
    );

    std::fs::write(&release, b"").unwrap();
    let rest: Vec<Value> = lines
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    assert!(holder.child.wait().unwrap().success());
    assert_eq!(rest.last().unwrap()["ok"], true);

    // Only the holder wrote: the session reads whole, and the next writer gets in.
    let fsck = env.json_code(&["fsck", "--session", &id], 0);
    assert_eq!(fsck["ok"], true, "{fsck}");
    let t = env.json_code(&["transcript", "--session", &id], 0);
    let users: Vec<&str> = t
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(users, ["zero", "hold"]);
    env.exec(Some(&id), "after", json!([{"content": "fine"}]));
}

#[test]
fn a_damaged_middle_line_keeps_the_files_restorable_and_is_repaired() {
    let env = Env::new();
    let id = env.exec(None, "zero", turn_of(vec![write("a.txt", "a0\n")]));
    env.exec(Some(&id), "one", turn_of(vec![write("a.txt", "a1\n")]));
    env.exec(Some(&id), "two", turn_of(vec![write("b.txt", "b2\n")]));
    let log = env.log(&id);
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    // Damage the user message of turn 1, in the middle of the log.
    let at = lines
        .iter()
        .position(|l| l.contains("\"role\":\"user\"") && l.contains("\"content\":\"one\""))
        .unwrap();
    let line = at + 1;
    let bad = format!("{}\u{0}garbage", &lines[at][..30]);
    lines[at] = bad.clone();
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let named = format!("line {line}");
    let log_shown = log.display().to_string();

    // The conversation refuses, naming the file and the line.
    for args in [
        &["transcript", "--session", &id][..],
        &["heads", "--session", &id][..],
    ] {
        let (_, stderr) = env.code(args, 1);
        assert!(
            stderr.contains(&log_shown) && stderr.contains(&named),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("--repair"), "{args:?} says what to do: {stderr}");
    }
    let model = env.script(json!([{"content": "never"}]));
    let args = env.exec_args(Some(&id), &model, "blocked");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (_, stderr) = env.code(&args, 1);
    assert!(stderr.contains(&named), "{stderr}");

    // fsck names the line and fails.
    let (stdout, _) = env.code(&["fsck", "--session", &id], 1);
    assert!(stdout.contains(&log_shown) && stdout.contains(&named), "{stdout}");
    let report = env.json_code(&["fsck", "--session", &id], 1);
    assert_eq!(report["ok"], false);
    let problem = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["path"] == log_shown.as_str())
        .unwrap_or_else(|| panic!("the log is named: {report}"));
    assert_eq!(problem["severity"], "error");
    assert!(problem["problem"].as_str().unwrap().contains(&named), "{problem}");

    // The checkpoints and a code rewind work from the checkpoint store alone.
    let cks = env.json_code(&["checkpoints", "--session", &id], 0);
    let cks = cks.as_array().unwrap();
    assert_eq!(cks.len(), 3);
    assert!(
        cks.iter().all(|c| c["can_restore_conversation"] == false),
        "{cks:?}"
    );
    let (_, stderr) = env.code(
        &[
            "rewind",
            "--session",
            &id,
            "--turn",
            "1",
            "--scope",
            "conversation",
        ],
        3,
    );
    assert!(stderr.contains(&named), "{stderr}");
    env.code(&["rewind", "--session", &id, "--turn", "1", "--scope", "code"], 0);
    assert_eq!(env.read("a.txt").as_deref(), Some("a0\n"));
    assert_eq!(env.read("b.txt"), None);
    env.code(&["undo", "--session", &id], 0);
    assert_eq!(env.read("a.txt").as_deref(), Some("a1\n"));
    assert_eq!(env.read("b.txt").as_deref(), Some("b2\n"));
    env.code(&["rewind", "--session", &id, "--turn", "1", "--scope", "code"], 0);

    // One command repairs it: the bad line (and what depends on it) moves beside the log.
    let r = env.json_code(&["fsck", "--session", &id, "--repair"], 0);
    assert_eq!(r["ok"], true, "{r}");
    let repair = &r["repair"];
    assert_eq!(repair["moved"][0]["line"], line as u64, "{r}");
    let moved_to = PathBuf::from(repair["moved_to"].as_str().unwrap());
    assert_eq!(moved_to, env.sessions_dir().join(format!("{id}.damaged-1")));
    let kept = std::fs::read(&moved_to).unwrap();
    assert!(
        kept.starts_with(format!("{bad}\n").as_bytes()),
        "the bad bytes are kept"
    );
    assert!(!std::fs::read_to_string(&log).unwrap().contains("garbage"));
    let (stdout, _) = env.code(&["fsck", "--session", &id, "--repair"], 0);
    assert!(stdout.contains("nothing to repair"), "{stdout}");

    // Usable again: the conversation reads — what came after the bad line too, a note standing
    // for the lost message — and the next turn runs with a new number.
    assert_eq!(repair["placeholders"], 1, "{r}");
    let t = env.json_code(&["transcript", "--session", &id], 0);
    let t = t.as_array().unwrap();
    let users: Vec<&str> = t
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(users, ["zero", "two"]);
    assert!(
        t.iter()
            .any(|m| m["role"] == "system" && m["content"].as_str().unwrap().contains("could not be read")),
        "{t:?}"
    );
    env.json_code(&["heads", "--session", &id], 0);
    env.exec(Some(&id), "three", json!([{"content": "fine"}]));
    let cks = env.json_code(&["checkpoints", "--session", &id], 0);
    let turns: Vec<u64> = cks
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["turn"].as_u64().unwrap())
        .collect();
    assert_eq!(turns, [0, 1, 2, 3]);
    assert!(moved_to.exists(), "never deleted");
    // Until the whole session is deleted.
    env.code(&["sessions", "delete", &id], 0);
    assert!(!moved_to.exists() && !log.exists());
}

#[test]
fn a_damaged_log_refuses_every_change_to_the_conversation_before_any_model_is_asked() {
    let env = Env::new();
    let id = env.exec(None, "zero", turn_of(vec![write("a.txt", "a0\n")]));
    env.exec(Some(&id), "one", json!([{"content": "fine"}]));
    let log = env.log(&id);
    let mut lines: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    lines[3] = "not json".to_string();
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let before = std::fs::read(&log).unwrap();
    // A script that would fail the test if it were used: it has no response.
    let model = env.script(json!([]));
    let writers: [&[&str]; 5] = [
        &[
            "summarize",
            "--session",
            &id,
            "--turn",
            "1",
            "--from",
            "--model",
            &model,
        ],
        &["compact", "--session", &id, "--model", &model],
        &["fork", "--session", &id, "--turn", "1"],
        &["switch", "--session", &id, "main"],
        &["rewind", "--session", &id, "--turn", "1", "--scope", "both"],
    ];
    for args in writers {
        let out = env.run(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(stderr.contains("line 4"), "{args:?} names the line: {stderr}");
    }
    assert_eq!(std::fs::read(&log).unwrap(), before, "nothing was written");
    assert_eq!(
        env.read("a.txt").as_deref(),
        Some("a0\n"),
        "the refused rewind wrote no file"
    );
}

/// The lines of `log`, and a rewrite of it.
fn log_lines(log: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn rewrite(log: &std::path::Path, lines: &[String]) {
    std::fs::write(log, lines.join("\n") + "\n").unwrap();
}

/// A lost assistant message that made tool calls whose results survive: the repair moves the call
/// and its results aside (notes in their places), keeps the rest of the conversation, and a strict
/// model server accepts the next turn's history (no orphan result, no unanswered call).
#[test]
fn a_lost_call_keeps_the_rest_of_the_conversation_and_a_strict_server_takes_the_next_turn() {
    use retrace_testkit::mock_openai::{orphan_tool_results, sse, unanswered_tool_calls, MockServer, Reply};
    let env = Env::new();
    let id = env.exec(None, "zero", turn_of(vec![write("a.txt", "a0\n")]));
    env.exec(
        Some(&id),
        "one",
        turn_of(vec![write("a.txt", "a1\n"), write("b.txt", "b1\n")]),
    );
    env.exec(Some(&id), "two", turn_of(vec![write("c.txt", "c2\n")]));
    let log = env.log(&id);
    let original = log_lines(&log);
    let at = original
        .iter()
        .position(|l| l.contains("\"tool_calls\"") && l.contains("b.txt"))
        .unwrap();
    for damage in ["cut", "control", "parent"] {
        let mut lines = original.clone();
        match damage {
            "cut" => lines[at] = lines[at][..lines[at].len() / 2].to_string(),
            "control" => lines[at] = lines[at].replacen("working", "work\u{1}ing", 1),
            _ => {
                let mut v: Value = serde_json::from_str(&lines[at + 1]).unwrap();
                v["parent"] = "nope".into();
                lines[at + 1] = v.to_string();
            }
        }
        rewrite(&log, &lines);
        let report = env.json_code(&["fsck", "--session", &id], 1);
        assert_eq!(report["ok"], false, "{damage}: {report}");
        if damage == "parent" {
            // The repair says what it did, the placeholder included (never "nothing to repair").
            let (out, _) = env.code(&["fsck", "--session", &id, "--repair"], 0);
            assert!(
                out.contains("placeholder") && !out.contains("nothing to repair"),
                "{out}"
            );
        }
        let r = env.json_code(&["fsck", "--session", &id, "--repair"], 0);
        assert_eq!(r["ok"], true, "{damage}: {r}");
        let moved = r["repair"]["moved"].as_array().unwrap().len();
        assert!(moved <= 3, "{damage}: only the call and its results move: {r}");
        let t = env.json_code(&["transcript", "--session", &id], 0);
        let users: Vec<&str> = t
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| m["content"].as_str().unwrap())
            .collect();
        assert_eq!(users, ["zero", "one", "two"], "{damage}");
        // Every moved byte is beside the log.
        if let Some(to) = r["repair"]["moved_to"].as_str() {
            let aside = std::fs::read_to_string(to).unwrap();
            assert!(aside.contains(&lines[at]) || damage == "parent", "{damage}");
            std::fs::remove_file(to).unwrap();
        }

        let rt = support::mock_runtime();
        let reply = Reply::body(sse::body(&[sse::content("ok"), sse::finish("stop")], true));
        let server = rt.block_on(MockServer::start_strict(vec![reply])).unwrap();
        let out = support::isolated_retrace(env.tmp.path())
            .env("OPENAI_API_KEY", "k")
            .args([
                "exec",
                "--json",
                "--session",
                &id,
                "--model",
                "openai:mock",
                "--base-url",
            ])
            .arg(server.base_url())
            .arg("three")
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{damage}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(server.rejected(), 0, "{damage}");
        let body = server.requests()[0].json();
        assert!(orphan_tool_results(&body).is_empty(), "{damage}: {body}");
        assert!(unanswered_tool_calls(&body).is_empty(), "{damage}: {body}");
        drop(server);
        drop(rt);
        rewrite(&log, &original);
    }
}

/// A turn number out of order (or the largest there is) and a `retire` of the selected head:
/// `fsck` names the line, the repair moves that line (not the valid ones after it), and a turn
/// runs again. Never a panic.
#[test]
fn a_bad_turn_number_or_a_retired_selected_head_is_found_and_moved() {
    let env = Env::new();
    let id = env.exec(None, "zero", json!([{"content": "a"}]));
    env.exec(Some(&id), "one", json!([{"content": "b"}]));
    env.exec(Some(&id), "two", json!([{"content": "c"}]));
    let log = env.log(&id);
    let original = log_lines(&log);
    let turn1 = original
        .iter()
        .position(|l| l.contains("\"type\":\"turn\"") && l.contains("\"turn\":1"))
        .unwrap();
    let retire = r#"{"type":"retire","head":"main","at":"2026-01-01T00:00:00Z"}"#.to_string();
    let cases: Vec<(Vec<String>, usize)> = vec![
        {
            let mut l = original.clone();
            l[turn1] = l[turn1].replace("\"turn\":1", "\"turn\":7");
            (l, turn1 + 1)
        },
        {
            let mut l = original.clone();
            l[turn1] = l[turn1].replace("\"turn\":1", "\"turn\":18446744073709551615");
            (l, turn1 + 1)
        },
        {
            let mut l = original.clone();
            l.insert(turn1 + 2, retire.clone());
            (l, turn1 + 3)
        },
    ];
    // The last turn at the largest number a next turn can follow: fsck says no turn can start,
    // and exec fails clearly (never a panic, never a session fsck calls sound that cannot run).
    let turn2 = original
        .iter()
        .position(|l| l.contains("\"type\":\"turn\"") && l.contains("\"turn\":2"))
        .unwrap();
    let mut lines = original.clone();
    lines[turn2] = lines[turn2].replace("\"turn\":2", "\"turn\":18446744073709551614");
    rewrite(&log, &lines);
    let (stdout, _) = env.code(&["fsck", "--session", &id], 1);
    assert!(stdout.contains("no new turn can start"), "{stdout}");
    let model = env.script(json!([{"content": "never"}]));
    let args = env.exec_args(Some(&id), &model, "blocked");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (_, stderr) = env.code(&args, 1);
    assert!(stderr.contains("no new turn can start"), "{stderr}");
    rewrite(&log, &original);
    for (n, (lines, bad_line)) in cases.into_iter().enumerate() {
        rewrite(&log, &lines);
        let (stdout, stderr) = env.code(&["fsck", "--session", &id], 1);
        assert!(!stderr.contains("panicked"), "{stderr}");
        // The out-of-order number is named (the first line that does not replay may be the
        // valid one after it).
        let named = format!("line {bad_line}");
        assert!(
            stdout.contains(&named) || (n == 0 && stdout.contains("after turn 7")),
            "case {n}: {stdout}"
        );
        let r = env.json_code(&["fsck", "--session", &id, "--repair"], 0);
        let moved: Vec<u64> = r["repair"]["moved"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["line"].as_u64().unwrap())
            .collect();
        assert_eq!(moved, [bad_line as u64], "case {n}: {r}");
        env.json_code(&["fsck", "--session", &id], 0);
        env.exec(Some(&id), "three", json!([{"content": "d"}]));
        std::fs::remove_file(r["repair"]["moved_to"].as_str().unwrap()).unwrap();
        rewrite(&log, &original);
    }
}

/// A damaged `main` fork line (line 2) is written again by the repair; a stale directory and a
/// symlink on the `<id>.damaged-<n>` names are skipped, never followed.
#[test]
fn a_lost_main_line_is_rebuilt_and_taken_damaged_names_are_skipped() {
    let env = Env::new();
    let id = env.exec(None, "zero", json!([{"content": "a"}]));
    let log = env.log(&id);
    let mut lines = log_lines(&log);
    lines[1] = "{\"type\":\"fork\",\"head\"".to_string();
    rewrite(&log, &lines);
    let outside = env.tmp.path().join("outside.txt");
    std::fs::write(&outside, "mine\n").unwrap();
    std::os::unix::fs::symlink(&outside, env.sessions_dir().join(format!("{id}.damaged-1"))).unwrap();
    std::fs::create_dir(env.sessions_dir().join(format!("{id}.damaged-2"))).unwrap();
    let (stdout, _) = env.code(&["fsck", "--session", &id], 1);
    assert!(stdout.contains("line 2"), "{stdout}");
    let r = env.json_code(&["fsck", "--session", &id, "--repair"], 0);
    assert_eq!(r["ok"], true, "{r}");
    let to = PathBuf::from(r["repair"]["moved_to"].as_str().unwrap());
    assert_eq!(to, env.sessions_dir().join(format!("{id}.damaged-3")));
    assert_eq!(std::fs::read_to_string(&to).unwrap(), format!("{}\n", lines[1]));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "mine\n");
    env.exec(Some(&id), "one", json!([{"content": "b"}]));
    let t = env.json_code(&["transcript", "--session", &id], 0);
    assert_eq!(t.as_array().unwrap().len(), 4, "{t}");
}

/// A checkpoint sidecar holding the largest turn number: `checkpoints` and `exec` give a clear
/// error or warning, never a panic, and `fsck` reports it.
#[test]
fn the_largest_turn_number_in_a_sidecar_is_reported_never_a_panic() {
    let env = Env::new();
    let id = env.exec(None, "zero", turn_of(vec![write("a.txt", "a0\n")]));
    let sidecar = env.sessions_dir().join(format!("{id}.ckpt"));
    assert!(sidecar.is_dir());
    let record = r#"{"schemaVersion":2,"turn":18446744073709551615,"time":"2026-01-01T00:00:00Z","prompt":"x","files":[]}"#;
    std::fs::write(sidecar.join("turn-18446744073709551615.json"), record).unwrap();
    let sidecar_arg = sidecar.display().to_string();
    for args in [
        &["checkpoints", "--session", &id][..],
        &["checkpoints", "--sidecar", &sidecar_arg][..],
        &["fsck", "--session", &id][..],
    ] {
        let out = env.run(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_ne!(out.status.code(), Some(101), "{args:?}: {stderr}");
    }
    let (stdout, _) = env.code(&["fsck", "--session", &id], 1);
    assert!(stdout.contains("no new turn can start"), "{stdout}");
    let model = env.script(json!([{"content": "never"}]));
    let args = env.exec_args(Some(&id), &model, "blocked");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = env.run(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr.contains("no new turn can start"), "{stderr}");
}

/// The lease removed AND the log replaced by a copy while a turn runs: a second writer gets in (the
/// copy is not locked), and the first one's turn ends with an error naming the log, writing nothing
/// more to the old file.
#[test]
fn a_log_replaced_under_a_running_turn_ends_that_turn_and_takes_no_more_lines() {
    let env = Env::new();
    let id = env.exec(None, "zero", turn_of(vec![write("a.txt", "a0\n")]));
    let release = env.tmp.path().join("release");
    let wait = format!(
        "while [ ! -e '{}' ]; do sleep 0.02; done; echo released",
        release.display()
    );
    let model = env.script(turn_of(vec![json!({
        "name": "bash",
        "arguments": {"command": wait, "timeout_ms": 60_000}
    })]));
    let mut holder = Holder {
        child: env
            .command()
            .args(env.exec_args(Some(&id), &model, "hold"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
        release: release.clone(),
    };
    let mut lines = BufReader::new(holder.child.stdout.take().unwrap()).lines();
    loop {
        let line = lines.next().expect("the holder ended early").unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["type"] == "tool_call" && v["name"] == "bash" {
            break;
        }
    }
    let log = env.log(&id);
    let old = env.tmp.path().join("old.jsonl");
    std::fs::remove_file(env.sessions_dir().join(format!("{id}.lease"))).unwrap();
    std::fs::rename(&log, &old).unwrap();
    std::fs::copy(&old, &log).unwrap();
    let old_bytes = std::fs::read(&old).unwrap();

    std::fs::write(&release, b"").unwrap();
    let rest: Vec<Value> = lines
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    let status = holder.child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut holder.child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.success(), "{rest:?}");
    let last = rest.last().unwrap();
    assert_eq!(last["ok"], false, "{last}");
    let shown = log.display().to_string();
    assert!(
        last.to_string().contains(&shown) || stderr.contains(&shown),
        "names the log: {last} {stderr}"
    );
    assert_eq!(
        std::fs::read(&old).unwrap(),
        old_bytes,
        "nothing more went to the old file"
    );
    env.exec(Some(&id), "after", json!([{"content": "fine"}]));
}

/// Found by a re-attack: a message whose parent names no line gets a placeholder and nothing is
/// moved; the repair said "nothing to repair" (and the note spoke of a file that was not made).
#[test]
fn a_repair_that_only_writes_a_placeholder_says_so() {
    let env = Env::new();
    let id = env.exec(None, "zero", turn_of(vec![write("a.txt", "a0\n")]));
    let log = env.log(&id);
    let mut lines = log_lines(&log);
    let at = lines
        .iter()
        .rposition(|l| l.contains("\"role\":\"assistant\"") && !l.contains("\"tool_calls\""))
        .unwrap();
    let mut v: Value = serde_json::from_str(&lines[at]).unwrap();
    v["parent"] = "0000aaaa-0000-7000-8000-000000000000".into();
    lines[at] = v.to_string();
    rewrite(&log, &lines);
    env.json_code(&["fsck", "--session", &id], 1);
    let (out, _) = env.code(&["fsck", "--session", &id, "--repair"], 0);
    assert!(
        out.contains("no line was moved") && out.contains("placeholder"),
        "{out}"
    );
    let t = env.json_code(&["transcript", "--session", &id], 0);
    let note = t
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "system")
        .unwrap();
    assert!(!note["content"].as_str().unwrap().contains("moved it"), "{note}");
}
