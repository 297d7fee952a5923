//! Running one shell command: its own process group, a timeout, cancellation, and a byte cap on
//! what it prints.
//!
//! The command runs as `bash -c <command>` (or `sh -c` where there is no bash) in the workspace
//! root with stdin closed. It leads a session of its own (`setsid`), and so a new process group:
//! a timeout or a cancel kills the shell and everything it started (SIGKILL to the group), and it
//! has no controlling terminal, so nothing it runs can write over (or wait to read from) the
//! terminal the user watches Retrace in (`/dev/tty` cannot be opened: a password prompt fails at
//! once instead of stopping the command until its timeout). stdout and stderr are read by two
//! threads and kept in the order their chunks arrived.
//!
//! What it trades away: a process that leaves the group (`setsid`) survives a kill. A background
//! job that keeps the output pipes open after the shell exits is not waited for beyond a short
//! grace period; its reader threads finish when it closes them.

use std::collections::VecDeque;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use crate::error::{IoContext, Result};

/// Makes the command lead a session of its own (and so a process group whose id is its pid):
/// no controlling terminal.
#[allow(unsafe_code)]
fn in_own_session(command: &mut Command) {
    // SAFETY: the hook runs in the child between fork and exec and only calls `setsid`, which is
    // async-signal-safe, allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(|| nix::unistd::setsid().map(drop).map_err(std::io::Error::from));
    }
}

/// How often the wait loop checks the clock and the cancel flag.
const POLL: Duration = Duration::from_millis(20);
/// How long output is still collected after the shell exited (for background jobs' last words).
const GRACE: Duration = Duration::from_millis(200);

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// It exited with this code.
    Exited(i32),
    /// A signal killed it.
    Signalled(i32),
    /// It ran past its timeout and was killed.
    TimedOut,
    /// The cancel flag was set and it was killed.
    Cancelled,
}

/// A finished command.
#[derive(Debug)]
pub(crate) struct ShellRun {
    /// How it ended.
    pub ended: Ended,
    /// What it printed, capped.
    pub output: CappedOutput,
}

/// Runs `command` in `cwd`, without the variables `hidden_env` names.
pub(crate) fn run_shell(
    cwd: &Path,
    hidden_env: &[String],
    command: &str,
    timeout: Duration,
    cap: usize,
    cancel: &AtomicBool,
) -> Result<ShellRun> {
    let shell = shell_program();
    if cancel.load(Ordering::SeqCst) {
        return Ok(ShellRun {
            ended: Ended::Cancelled,
            output: CappedOutput::new(cap),
        });
    }
    let mut command_line = Command::new(shell);
    for name in hidden_env {
        command_line.env_remove(name);
    }
    command_line
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    in_own_session(&mut command_line);
    let mut child = command_line.spawn().at("start shell", shell)?;
    let group = RunningGroup::register(&child);
    let rx = spawn_readers(&mut child);
    let mut output = CappedOutput::new(cap);
    let deadline = Instant::now() + timeout;
    let mut exited: Option<Instant> = None;
    let mut ended: Option<Ended> = None;
    // Once its output closed, the shell is usually exiting: it is looked at again at once, then
    // after 1, 2, 4 … ms (at most `POLL`), rather than a whole `POLL` later.
    let mut closed: Option<Duration> = None;
    loop {
        let wait = match exited {
            Some(t) => GRACE.saturating_sub(t.elapsed()).min(POLL),
            None => POLL,
        };
        match rx.recv_timeout(wait) {
            Ok(chunk) => output.push(&chunk),
            Err(RecvTimeoutError::Disconnected) if ended.is_some() => break,
            Err(RecvTimeoutError::Disconnected) => {
                if let Some(idle) = closed {
                    thread::sleep(idle);
                }
                closed = Some(closed.map_or(Duration::from_millis(1), |d| (d * 2).min(POLL)));
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
        if let Some(t) = exited {
            if t.elapsed() >= GRACE {
                break;
            }
            continue;
        }
        if let Some(status) = child.try_wait().at("wait for shell", shell)? {
            ended = Some(end_of(status));
            exited = Some(Instant::now());
            continue;
        }
        let stop = if cancel.load(Ordering::SeqCst) {
            Some(Ended::Cancelled)
        } else if Instant::now() >= deadline {
            Some(Ended::TimedOut)
        } else {
            None
        };
        if let Some(why) = stop {
            kill_group(&mut child);
            ended = Some(why);
            exited = Some(Instant::now());
        }
    }
    // Drain what is already queued.
    while let Ok(chunk) = rx.try_recv() {
        output.push(&chunk);
    }
    let ended = match ended {
        Some(e) => e,
        None => end_of(child.wait().at("wait for shell", shell)?),
    };
    drop(group);
    Ok(ShellRun { ended, output })
}

/// Process groups of the shell commands running now, so that a process about to exit at once (a
/// second Ctrl-C) can kill them instead of leaving them running (`kill_running_shells`).
static RUNNING: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

/// A shell command's process group, listed in [`RUNNING`] while it lives.
struct RunningGroup(Option<i32>);

impl RunningGroup {
    fn register(child: &Child) -> RunningGroup {
        let pid = i32::try_from(child.id()).ok();
        if let (Some(p), Ok(mut r)) = (pid, RUNNING.lock()) {
            r.push(p);
        }
        RunningGroup(pid)
    }
}

impl Drop for RunningGroup {
    fn drop(&mut self) {
        if let (Some(p), Ok(mut r)) = (self.0, RUNNING.lock()) {
            r.retain(|x| *x != p);
        }
    }
}

/// Kills the process group of every shell command running now (SIGKILL). For a process about to
/// exit without waiting for its turn to be cancelled: nothing it started keeps running.
pub fn kill_running_shells() {
    if let Ok(r) = RUNNING.lock() {
        for p in r.iter() {
            let _ = killpg(Pid::from_raw(*p), Signal::SIGKILL);
        }
    }
}

/// `bash` when installed, else `sh`.
fn shell_program() -> &'static str {
    ["/bin/bash", "/usr/bin/bash"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or("/bin/sh")
}

/// Kills the child's process group and reaps the child.
fn kill_group(child: &mut Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn end_of(status: ExitStatus) -> Ended {
    match (status.code(), status.signal()) {
        (Some(c), _) => Ended::Exited(c),
        (None, Some(s)) => Ended::Signalled(s),
        (None, None) => Ended::Exited(-1),
    }
}

/// Starts one reader thread per pipe; chunks arrive on the returned channel in arrival order.
fn spawn_readers(child: &mut Child) -> Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    let mut pipes: Vec<Box<dyn Read + Send>> = Vec::new();
    if let Some(out) = child.stdout.take() {
        pipes.push(Box::new(out));
    }
    if let Some(err) = child.stderr.take() {
        pipes.push(Box::new(err));
    }
    for mut pipe in pipes {
        let tx = tx.clone();
        thread::spawn(move || {
            let mut buf = vec![0u8; 8192];
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if tx.send(buf[..n].to_vec()).is_err() {
                            break;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        });
    }
    rx
}

/// Output kept within a byte cap: the first half and the last half of what was printed, with the
/// middle dropped (errors and summaries tend to come last).
#[derive(Debug)]
pub(crate) struct CappedOutput {
    cap: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl CappedOutput {
    /// An empty buffer keeping at most `cap` bytes.
    pub fn new(cap: usize) -> CappedOutput {
        CappedOutput {
            cap,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
        }
    }

    /// Appends `bytes`.
    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let head_cap = self.cap / 2;
        if self.head.len() < head_cap {
            let take = (head_cap - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        let tail_cap = self.cap - head_cap;
        if bytes.len() >= tail_cap {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - tail_cap..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(tail_cap);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    /// Bytes printed in all.
    #[cfg(test)]
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The kept text (invalid UTF-8 replaced), with a note where bytes were dropped.
    pub fn render(&self) -> String {
        let head = String::from_utf8_lossy(&self.head);
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let tail = String::from_utf8_lossy(&tail);
        let kept = (self.head.len() + self.tail.len()) as u64;
        if kept >= self.total {
            return format!("{head}{tail}");
        }
        format!(
            "{head}\n[… {} bytes omitted: output is capped at {} bytes …]\n{tail}",
            self.total - kept,
            self.cap
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_keeps_head_and_tail() {
        let mut o = CappedOutput::new(10);
        o.push(b"abc");
        assert_eq!(o.render(), "abc");
        o.push(b"defghij");
        assert_eq!(o.render(), "abcdefghij");
        o.push(b"KLMNOPQRSTUVWXYZ");
        assert_eq!(o.total(), 26);
        let r = o.render();
        assert!(r.starts_with("abcde\n[… 16 bytes omitted"), "{r}");
        assert!(r.ends_with("\nVWXYZ"), "{r}");
    }

    #[test]
    fn small_pushes_roll_the_tail() {
        let mut o = CappedOutput::new(4);
        for b in b"0123456789" {
            o.push(&[*b]);
        }
        assert!(o.render().starts_with("01\n"));
        assert!(o.render().ends_with("\n89"));
    }
}
