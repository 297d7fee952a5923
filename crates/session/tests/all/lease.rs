//! The writer lease against another process: the clear error while it lives, free once it is
//! SIGKILLed. The holder is this same test binary, re-executed to run only
//! [`child_holds_the_lease`] with the session named in its environment.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use retrace_session::{HeadId, NewMessage, Role, SessionError, SessionId, SessionOptions};

use crate::common::{contents, exchange, Env};

const DIR_VAR: &str = "RETRACE_TEST_LEASE_DIR";
const ID_VAR: &str = "RETRACE_TEST_LEASE_ID";

/// Not a test: the body of the child process. It takes the lease, says so, and waits to be killed
/// (giving up by itself after a minute, so it can never outlive a broken parent for long).
#[test]
#[ignore = "run by lease_held_by_a_child_is_refused_clearly_and_free_after_sigkill in a child process"]
fn child_holds_the_lease() {
    let (Ok(dir), Ok(id)) = (std::env::var(DIR_VAR), std::env::var(ID_VAR)) else {
        return;
    };
    let opts = SessionOptions::default();
    let _session = opts
        .open_writer(&PathBuf::from(dir), &SessionId::new(id))
        .unwrap();
    println!("LEASED {}", std::process::id());
    std::thread::sleep(Duration::from_secs(60));
}

#[test]
fn lease_held_by_a_child_is_refused_clearly_and_free_after_sigkill() {
    let env = Env::new();
    let mut s = env.create();
    let main = HeadId::main();
    exchange(&mut s, &main, "u0", "a0");
    let id = s.id().clone();
    drop(s);

    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "lease::child_holds_the_lease",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(DIR_VAR, &env.dir)
        .env(ID_VAR, id.as_str())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        let n = out.read_line(&mut line).unwrap();
        assert!(n > 0, "the child exited before taking the lease");
        // libtest may print the test's name on the same line first.
        if let Some(at) = line.find("LEASED ") {
            assert_eq!(line[at..].trim(), format!("LEASED {pid}"));
            break;
        }
    }

    // A second writer gets a clear error naming the holder; a reader needs no lease.
    let err = env.opts.open_writer(&env.dir, &id).unwrap_err();
    let SessionError::Held { holder, path, .. } = &err else {
        panic!("expected Held, got {err}");
    };
    assert!(holder.contains(&format!("pid {pid}")), "{err}");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    assert!(holder.contains(&format!("on host {}", host.trim())), "{err}");
    assert_eq!(path, &env.dir.join(format!("{id}.lease")));
    let text = err.to_string();
    assert!(
        text.contains("held by another writer") && text.contains(id.as_str()),
        "{text}"
    );
    assert_eq!(contents(&env.reader(&id), &main), ["u0", "a0"]);

    // SIGKILL frees it at once: no stale lease to break.
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(9));
    let mut s = env.opts.open_writer(&env.dir, &id).unwrap();
    s.append(&main, NewMessage::new(Role::User, "after")).unwrap();
    assert_eq!(contents(&s, &main), ["u0", "a0", "after"]);
}

#[test]
fn a_removed_lease_file_lets_no_second_writer_in() {
    let env = Env::new();
    let mut s = env.create();
    let main = HeadId::main();
    exchange(&mut s, &main, "u0", "a0");
    let id = s.id().clone();
    let lease = env.dir.join(format!("{id}.lease"));

    // A clean-up of lock files that look stale removes the held lease file.
    std::fs::remove_file(&lease).unwrap();
    let err = env.opts.open_writer(&env.dir, &id).unwrap_err();
    let SessionError::Held { holder, .. } = &err else {
        panic!("expected Held, got {err}");
    };
    // The log's lock names its holder (this process here).
    assert!(holder.contains(&format!("pid {}", std::process::id())), "{err}");
    assert!(holder.contains("lease file was removed"), "{err}");
    let found = retrace_session::Lease::holder(&env.dir, &id).unwrap();
    assert_eq!(found.map(|h| h.pid), Some(std::process::id()));
    // Also with no lease file at all (the refused writer above made a new, empty one).
    std::fs::remove_file(&lease).unwrap();
    let found = retrace_session::Lease::holder(&env.dir, &id).unwrap();
    assert_eq!(found.map(|h| h.pid), Some(std::process::id()));
    // A repair is a writer too.
    assert!(matches!(
        env.opts.repair(&env.dir, &id).unwrap_err(),
        SessionError::Held { .. }
    ));

    // The holder goes on writing; once it lets go, the next writer gets in (a new lease file).
    s.append(&main, NewMessage::new(Role::User, "still mine"))
        .unwrap();
    s.end_turn().unwrap();
    drop(s);
    let mut s = env.opts.open_writer(&env.dir, &id).unwrap();
    s.append(&main, NewMessage::new(Role::Assistant, "next")).unwrap();
    assert_eq!(contents(&s, &main), ["u0", "a0", "still mine", "next"]);
}

#[test]
fn a_log_replaced_under_its_writer_takes_no_more_lines() {
    let env = Env::new();
    let mut s = env.create();
    let main = HeadId::main();
    exchange(&mut s, &main, "u0", "a0");
    crate::common::turn(&mut s, &main, "u1");
    let id = s.id().clone();
    let log = s.log_path().to_path_buf();
    // The lease removed and the log replaced by a copy, while the writer is in a turn.
    std::fs::remove_file(env.dir.join(format!("{id}.lease"))).unwrap();
    let old = env.dir.join("old.jsonl");
    std::fs::rename(&log, &old).unwrap();
    std::fs::copy(&old, &log).unwrap();
    let old_bytes = std::fs::read(&old).unwrap();

    // A second writer gets in (the new file is not locked) ...
    let mut second = env.writer(&id);
    // ... and the first fails loudly, naming the log, and writes nothing more to the old file.
    let err = s
        .append(&main, NewMessage::new(Role::Assistant, "a1"))
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(&log.display().to_string()) && text.contains("replaced"),
        "{text}"
    );
    assert!(s.end_turn().is_err());
    assert!(s.note(&main, "n").is_err());
    assert_eq!(std::fs::read(&old).unwrap(), old_bytes);
    drop(s);
    exchange(&mut second, &main, "u2", "a2");
    assert_eq!(contents(&second, &main), ["u0", "a0", "u1", "u2", "a2"]);
}
