//! A watchdog that stops every server's process group when Retrace ends without stopping them
//! (SIGKILL, a crash): the parent-death signal reaches a server's own process only, so what the
//! server started (a wrapper's child, a worker) would outlive it.
//!
//! One small `sh` per Retrace process, in a session of its own (Ctrl-C and a closed terminal do
//! not reach it), reads lines from a pipe whose writing end only Retrace holds (close-on-exec:
//! no server inherits it): `+G` when the group `G` starts, `-G` when it has been stopped. When
//! the pipe reaches its end — Retrace is gone, however it ended — it kills every group still
//! listed and exits.
//!
//! Each server leads a session of its own, whose id is its group's: the watchdog kills the group
//! and, where `pkill` is installed, every process still in that session (one that moved to a
//! group of its own with `setpgid`).
//!
//! What it trades away: a process that left its server's session (`setsid`) is not killed (a stop
//! while Retrace runs finds it through `/proc`; after Retrace is gone nothing does); a watchdog killed by hand is started again at the next call or server start,
//! told every group still listed.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;

/// The watchdog's script: keeps the listed groups; kills them (and their sessions) at the end of
/// its input.
const SCRIPT: &str = r#"groups=""
while IFS= read -r line; do
  case "$line" in
    +*) groups="$groups ${line#+}" ;;
    -*) g="${line#-}"; kept=""
        for x in $groups; do [ "$x" = "$g" ] || kept="$kept $x"; done
        groups="$kept" ;;
  esac
done
for g in $groups; do
  kill -KILL "-$g" 2>/dev/null
  command -v pkill >/dev/null 2>&1 && pkill -KILL -s "$g" 2>/dev/null
done
"#;

/// The running watchdog and the groups it was told of (to tell a new one, should it be gone).
struct Watchdog {
    process: Option<(Child, ChildStdin)>,
    groups: Vec<i32>,
}

static WATCHDOG: Mutex<Watchdog> = Mutex::new(Watchdog {
    process: None,
    groups: Vec::new(),
});

/// Starts the watchdog in a session of its own.
#[allow(unsafe_code)]
fn start() -> std::io::Result<(Child, ChildStdin)> {
    let mut command = Command::new("/bin/sh");
    command
        .args(["-c", SCRIPT, "retrace-mcp-watchdog"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: the hook runs in the child between fork and exec and only calls `setsid`, which
    // is async-signal-safe, allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(|| nix::unistd::setsid().map(drop).map_err(std::io::Error::from));
    }
    let mut child = command.spawn()?;
    let stdin = child
        .stdin
        .take()
        .ok_or_else(|| std::io::Error::other("the watchdog's stdin was not opened"))?;
    Ok((child, stdin))
}

/// Sends `line` to the watchdog, starting it (or starting it again, with every group it should
/// know of) when it is not running. Best effort: without `/bin/sh` servers run unwatched.
fn tell(dog: &mut Watchdog, line: &str) {
    if let Some((child, stdin)) = dog.process.as_mut() {
        let alive = matches!(child.try_wait(), Ok(None));
        if alive && stdin.write_all(line.as_bytes()).is_ok() {
            return;
        }
    }
    // Gone: a new one is told every group listed (`line` among them).
    if let Some((mut child, stdin)) = dog.process.take() {
        drop(stdin);
        let _ = child.kill();
        let _ = child.wait();
    }
    let Ok((child, mut stdin)) = start() else {
        return;
    };
    let all: String = dog.groups.iter().map(|g| format!("+{g}\n")).collect();
    if stdin.write_all(all.as_bytes()).is_ok() {
        dog.process = Some((child, stdin));
    }
}

/// Lists `group` with the watchdog: it is killed if Retrace ends before [`unwatch`] is called.
pub(crate) fn watch(group: i32) {
    if let Ok(mut dog) = WATCHDOG.lock() {
        dog.groups.push(group);
        tell(&mut dog, &format!("+{group}\n"));
    }
}

/// Starts the watchdog again if it is gone (killed by hand) while groups are listed: checked at
/// every call, so a later SIGKILL of Retrace still takes the servers with it.
pub(crate) fn ensure() {
    if let Ok(mut dog) = WATCHDOG.lock() {
        let gone = match dog.process.as_mut() {
            Some((child, _)) => !matches!(child.try_wait(), Ok(None)),
            None => true,
        };
        if gone && !dog.groups.is_empty() {
            tell(&mut dog, "");
        }
    }
}

/// Takes `group` off the watchdog's list (once it has been stopped: its id may be reused).
pub(crate) fn unwatch(group: i32) {
    if let Ok(mut dog) = WATCHDOG.lock() {
        let before = dog.groups.len();
        dog.groups.retain(|g| *g != group);
        if dog.groups.len() != before && dog.process.is_some() {
            tell(&mut dog, &format!("-{group}\n"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A `sleep` in a group of its own; returns its group id.
    #[allow(unsafe_code)]
    fn sleeper() -> Child {
        let mut c = Command::new("sleep");
        c.arg("60");
        unsafe {
            c.pre_exec(|| nix::unistd::setsid().map(drop).map_err(std::io::Error::from));
        }
        c.spawn().unwrap()
    }

    fn ended(child: &mut Child, within: Duration) -> bool {
        let t = Instant::now();
        while t.elapsed() < within {
            if child.try_wait().unwrap().is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[test]
    fn the_script_kills_the_groups_still_listed_at_the_end_of_its_input() {
        let mut listed = sleeper();
        let mut taken_off = sleeper();
        let (mut dog, mut stdin) = start().unwrap();
        let (a, b) = (listed.id(), taken_off.id());
        stdin.write_all(format!("+{a}\n+{b}\n-{b}\n").as_bytes()).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        assert!(!ended(&mut listed, Duration::from_millis(100)));
        drop(stdin);
        assert!(
            ended(&mut listed, Duration::from_secs(5)),
            "a listed group survived"
        );
        assert!(ended(&mut dog, Duration::from_secs(5)));
        assert!(
            !ended(&mut taken_off, Duration::from_millis(200)),
            "a group taken off was killed"
        );
        let _ = taken_off.kill();
        let _ = taken_off.wait();
    }
}
