//! Starting a stdio server: a session of its own (`setsid`: its own process group, so a stop
//! kills everything it started, and no controlling terminal, so it never writes over the terminal
//! UI), its
//! stderr kept (its last lines explain a failure), and, where `setpriv` is installed, a parent-death
//! signal, so that a server never outlives a Retrace that was killed outright (SIGKILL). Servers
//! are forked from one thread that lives as long as the process, since the parent-death signal
//! fires when the thread that forked the child ends.
//!
//! A stop kills the group and, found through `/proc` just before, every descendant of the server
//! that left it (`setsid`) while its parent still ran.
//!
//! The parent-death signal reaches the server's own process only; the rest of its group (what a
//! wrapper such as `sh -c` or `npx` started) is killed after a SIGKILL of Retrace by the
//! watchdog (`watchdog.rs`), which also stands in for `setpriv` where it is not installed.
//!
//! What it trades away: a process that left the group and whose parent had already exited (a
//! daemon's double fork) is no descendant any more and survives a stop, and after a SIGKILL of
//! Retrace every process that left the group survives. Only a cgroup (or a subreaper that reaps
//! and kills what it adopts) would hold them all; Retrace uses neither.

use std::collections::VecDeque;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

/// How much of a server's stderr is kept, in bytes.
const STDERR_TAIL: usize = 4096;

/// Where `setpriv` (util-linux) is looked for.
const SETPRIV: [&str; 2] = ["/usr/bin/setpriv", "/bin/setpriv"];

/// A running stdio server: its process (leader of its group) and what it printed on stderr.
pub(crate) struct ServerProcess {
    child: Option<Child>,
    group: Option<i32>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    /// Set once its stderr reached its end (everything it printed there is kept).
    stderr_done: Arc<std::sync::atomic::AtomicBool>,
    /// Values its stderr is never quoted with (those of its `env`: a server may print them).
    secrets: Vec<String>,
}

/// Makes the server lead a session of its own (and so a process group whose id is its pid),
/// with no controlling terminal: nothing it runs writes over the terminal UI or waits to read
/// from it.
#[allow(unsafe_code)]
fn in_own_session(command: &mut Command) {
    // SAFETY: the hook runs in the child between fork and exec and only calls `setsid`, which
    // is async-signal-safe, allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(|| nix::unistd::setsid().map(drop).map_err(std::io::Error::from));
    }
}

impl ServerProcess {
    /// Starts `command` (already given its program, arguments, directory and environment) with
    /// piped stdin and stdout; returns the process and its pipes.
    pub(crate) fn start(mut command: Command) -> std::io::Result<(ServerProcess, ChildStdout, ChildStdin)> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        in_own_session(&mut command);
        let mut child = spawn_on_keeper(command)?;
        let group = i32::try_from(child.id()).ok();
        if let (Some(g), Ok(mut r)) = (group, RUNNING.lock()) {
            r.push(g);
        }
        if let Some(g) = group {
            crate::watchdog::watch(g);
        }
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let stderr_done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        if let Some(mut err) = child.stderr.take() {
            let tail = stderr.clone();
            let done = stderr_done.clone();
            let _ = std::thread::Builder::new()
                .name("mcp-stderr".into())
                .spawn(move || {
                    let mut buf = [0u8; 4096];
                    while let Ok(n) = err.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        if let Ok(mut t) = tail.lock() {
                            t.extend(&buf[..n]);
                            let over = t.len().saturating_sub(STDERR_TAIL);
                            t.drain(..over);
                        }
                    }
                    done.store(true, std::sync::atomic::Ordering::SeqCst);
                });
        }
        let (stdout, stdin) = match (child.stdout.take(), child.stdin.take()) {
            (Some(o), Some(i)) => (o, i),
            _ => return Err(std::io::Error::other("the server's pipes were not opened")),
        };
        let process = ServerProcess {
            child: Some(child),
            group,
            stderr,
            stderr_done,
            secrets: Vec::new(),
        };
        Ok((process, stdout, stdin))
    }

    /// How it ended, when it did ("exited with status 1", "killed by signal 9").
    pub(crate) fn exited(&mut self) -> Option<String> {
        let status = self.child.as_mut()?.try_wait().ok()??;
        Some(
            match (
                status.code(),
                std::os::unix::process::ExitStatusExt::signal(&status),
            ) {
                (Some(c), _) => format!("exited with status {c}"),
                (None, Some(s)) => format!("killed by signal {s}"),
                (None, None) => "exited".to_string(),
            },
        )
    }

    /// The last lines it printed on stderr, on one line each, for an error message; empty when
    /// it printed nothing.
    pub(crate) fn stderr_tail(&self) -> String {
        // A server that exited may still have its last words in the pipe: a moment for them.
        for _ in 0..40 {
            if self.stderr_done.load(std::sync::atomic::Ordering::SeqCst) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let bytes: Vec<u8> = match self.stderr.lock() {
            Ok(t) => t.iter().copied().collect(),
            Err(_) => return String::new(),
        };
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        for secret in &self.secrets {
            text = text.replace(secret.as_str(), "…");
        }
        let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        let last = &lines[lines.len().saturating_sub(3)..];
        // Each line cut on its own: one long line does not push the last (the error) out.
        let cut = |l: &&str| match l.chars().count() > 200 {
            true => format!("{}…", l.chars().take(199).collect::<String>()),
            false => l.to_string(),
        };
        last.iter().map(cut).collect::<Vec<_>>().join(" | ")
    }

    /// Never quotes `secrets` from its stderr (each is shown as `…`): the values of its `env`,
    /// which a failing server may print.
    pub(crate) fn hide(&mut self, secrets: impl IntoIterator<Item = String>) {
        // A short value would hide ordinary words; those of four characters and more are hidden.
        self.secrets
            .extend(secrets.into_iter().filter(|s| s.chars().count() >= 4));
    }

    /// Kills its process group and waits (up to two seconds) for its leader to end, so that
    /// nothing it was doing writes any more once this returns.
    pub(crate) async fn kill_and_wait(&mut self) {
        if let Some(g) = self.group {
            kill_tree(g);
        }
        let Some(child) = self.child.as_mut() else {
            return;
        };
        let _ = child.kill();
        for _ in 0..200 {
            if !matches!(child.try_wait(), Ok(None)) {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    /// The process id of the group's leader.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if let Some(g) = self.group {
            kill_tree(g);
            if let Ok(mut r) = RUNNING.lock() {
                r.retain(|x| *x != g);
            }
            crate::watchdog::unwatch(g);
        }
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            // Reaped off the caller's thread: the kill is immediate, the wait need not be.
            if child.try_wait().ok().flatten().is_none() {
                let _ = std::thread::Builder::new()
                    .name("mcp-reap".into())
                    .spawn(move || child.wait());
            }
        }
    }
}

/// Why `program` cannot be run from `cwd` with `path` as `PATH`, if it cannot: checked before it
/// is started, so that the error names it (and not the wrapper that would have run it).
pub(crate) fn program_problem(program: &str, cwd: &Path, path: Option<&std::ffi::OsStr>) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let runnable =
        |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if program.contains('/') {
        let at = cwd.join(program);
        return match std::fs::metadata(&at) {
            Err(_) => Some(format!("the command `{program}` does not exist")),
            Ok(m) if m.is_dir() => Some(format!("the command `{program}` is a directory")),
            Ok(_) if !runnable(&at) => Some(format!("the command `{program}` is not executable")),
            Ok(_) => None,
        };
    }
    let found = path
        .map(std::env::split_paths)
        .into_iter()
        .flatten()
        .any(|dir| runnable(&cwd.join(dir).join(program)));
    (!found).then(|| format!("the command `{program}` was not found on PATH"))
}

/// The command line that starts `program` with `args`: through `setpriv --pdeathsig KILL` when it
/// is installed.
pub(crate) fn command_for(program: &str, args: &[String], cwd: &Path) -> Command {
    let mut c = match SETPRIV.into_iter().find(|p| Path::new(p).exists()) {
        Some(setpriv) => {
            let mut c = Command::new(setpriv);
            c.args(["--pdeathsig", "KILL", "--", program]);
            c
        }
        None => Command::new(program),
    };
    c.args(args).current_dir(cwd);
    c
}

/// Process groups of the servers running now, so that a process about to exit at once can kill
/// them ([`kill_running_servers`]).
static RUNNING: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Kills the process group of every MCP server running now (SIGKILL): for a process about to exit
/// without stopping its sessions.
pub fn kill_running_servers() {
    if let Ok(r) = RUNNING.lock() {
        for g in r.iter() {
            kill_tree(*g);
        }
    }
}

/// Kills (SIGKILL) the process group `leader` leads and every descendant of `leader`, those that
/// left the group included (found before anything is killed: once a parent dies, its children are
/// no longer known as its descendants).
fn kill_tree(leader: i32) {
    let descendants = descendants(leader);
    let _ = killpg(Pid::from_raw(leader), Signal::SIGKILL);
    for pid in descendants {
        let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
}

/// The descendants of `root`, from the parent of each process in `/proc` (none where it cannot be
/// read).
fn descendants(root: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut parent_of: Vec<(i32, i32)> = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        if let Some(ppid) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| parent_in_stat(&stat))
        {
            parent_of.push((pid, ppid));
        }
    }
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let p = found[i];
        found.extend(parent_of.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    found.remove(0);
    found
}

/// The parent's pid in a `/proc/PID/stat` line (the field after the state, which follows the
/// command's name in parentheses, itself possibly holding spaces and parentheses).
fn parent_in_stat(stat: &str) -> Option<i32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// A command to spawn and where its child goes.
type Job = (Command, mpsc::SyncSender<std::io::Result<Child>>);

/// The thread every server is forked from (it lives as long as the process).
static KEEPER: OnceLock<Option<Mutex<mpsc::Sender<Job>>>> = OnceLock::new();

/// Spawns `command` on the keeper thread (directly when that thread cannot be had).
fn spawn_on_keeper(mut command: Command) -> std::io::Result<Child> {
    let keeper = KEEPER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("mcp-spawner".into())
            .spawn(move || {
                for (mut c, back) in rx {
                    let _ = back.send(c.spawn());
                }
            })
            .ok()
            .map(|_| Mutex::new(tx))
    });
    let Some(tx) = keeper else {
        return command.spawn();
    };
    let (back, answer) = mpsc::sync_channel(1);
    let sent = match tx.lock() {
        Ok(tx) => tx.send((command, back)).map_err(|e| e.0 .0),
        Err(_) => return Err(std::io::Error::other("the spawner thread failed")),
    };
    if let Err(mut c) = sent {
        return c.spawn();
    }
    answer
        .recv()
        .unwrap_or_else(|_| Err(std::io::Error::other("the spawner thread ended")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_is_read_past_a_name_with_spaces_and_parentheses() {
        assert_eq!(parent_in_stat("42 (a) b) S 7 42 42 0"), Some(7));
        assert_eq!(parent_in_stat("garbage"), None);
        let me = std::process::id() as i32;
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
        assert!(parent_in_stat(&stat).is_some_and(|p| p != me));
    }
}
