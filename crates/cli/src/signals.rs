//! What a command does on a signal: a running turn or summary is cancelled cleanly at the first
//! one (a second quits at once), a fork into a new workspace stops and removes what it made, and
//! `serve` stops at SIGINT or SIGTERM.

use retrace_control::SessionHandle;

use crate::failure::Failure;
use crate::output::say;

/// Cancels the turn on Ctrl-C, SIGTERM or SIGHUP, like Ctrl-C always did: the turn keeps what
/// ran, answers every tool call and kills the shell's process group. A second signal quits at
/// once, killing any shell command still running first; `last_line`, when given, is printed on
/// standard output before (`exec --json`'s closing `result` line).
pub async fn cancel_on_signals(h: SessionHandle, what: &'static str, last_line: Option<String>) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        return;
    };
    let name = tokio::select! {
        _ = int.recv() => "Ctrl-C",
        _ = term.recv() => "SIGTERM",
        _ = hup.recv() => "SIGHUP",
    };
    say(&format!(
        "\nretrace: cancelling {what} ({name}); a second signal (Ctrl-C, SIGTERM or SIGHUP) quits at once"
    ));
    h.cancel();
    tokio::select! {
        _ = int.recv() => {},
        _ = term.recv() => {},
        _ = hup.recv() => {},
    }
    say("retrace: quitting now; the conversation is repaired at the next turn");
    retrace_control::kill_running_shells();
    retrace_control::kill_running_mcp_servers();
    if let Some(line) = last_line {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
    std::process::exit(130);
}

/// Makes a fork into a new workspace stop on Ctrl-C, SIGTERM or SIGHUP and remove what it made,
/// as for an error (handlers installed now; the returned future runs them).
pub fn stop_fork_on_signals() -> Result<impl std::future::Future<Output = ()> + Send + 'static, Failure> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    Ok(async move {
        loop {
            let name = tokio::select! {
                _ = int.recv() => "Ctrl-C",
                _ = term.recv() => "SIGTERM",
                _ = hup.recv() => "SIGHUP",
            };
            say(&format!(
                "\nretrace: stopping the fork ({name}); what it made is being removed"
            ));
            retrace_control::stop_workspace_forks();
        }
    })
}

/// A future that completes at the first SIGINT, SIGTERM or SIGHUP with the signal's name
/// (handlers installed now).
pub fn quit_signals() -> Result<impl std::future::Future<Output = &'static str> + Send + 'static, Failure> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    Ok(async move {
        tokio::select! {
            _ = int.recv() => "Ctrl-C",
            _ = term.recv() => "SIGTERM",
            _ = hup.recv() => "SIGHUP",
        }
    })
}

/// A future that completes at the first SIGINT or SIGTERM (handlers installed now).
pub fn stop_signals() -> Result<impl std::future::Future<Output = ()> + Send + 'static, Failure> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
    })
}
