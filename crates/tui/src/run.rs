//! The runtime: owns the terminal, and moves keys to the session's [`Driver`] (from a reader
//! thread, crossterm's blocking `poll`/`read`) and frames to the screen: at most one per 16 ms,
//! and only after something happened (a tick redraws only while the spinner turns, so an idle UI
//! draws nothing). Nothing here decides what a key means. When the user quits, the conversation
//! is printed to the normal screen, so that it stays in the terminal's scrollback.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{self, Event as TermEvent};
use retrace_control::{Service, SessionHandle};
use retrace_protocol::ModelSpec;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;

use crate::app::AppOptions;
use crate::driver::Driver;
use crate::error::TuiError;
use crate::status::ModelProblem;
use crate::terminal::TerminalGuard;
use crate::view;

/// The shortest time between two frames (about 60 a second).
const FRAME: Duration = Duration::from_millis(16);

/// How the UI runs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// No colours (`NO_COLOR` set).
    pub no_color: bool,
    /// How often the spinner moves while a turn runs.
    pub tick: Duration,
    /// A message shown on the first screen (why the model cannot answer yet, and what to do).
    pub first_message: Option<String>,
    /// The model given to sessions opened from `/sessions` (`/model` changes it).
    pub model: Option<ModelSpec>,
    /// Why the model asked for cannot answer (the first screen explains what to do).
    pub model_problem: Option<ModelProblem>,
    /// Whether the conversation is printed to the normal screen after the user quits.
    pub scrollback: bool,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
            tick: Duration::from_millis(120),
            first_message: None,
            model: None,
            model_problem: None,
            scrollback: true,
        }
    }
}

/// Runs the UI on an open session until the user quits; says which session it showed last. The
/// terminal is restored on every way out (return, error, panic, SIGTERM/SIGHUP/SIGINT); the
/// session stays open in the caller's hands.
pub async fn run(service: Service, handle: SessionHandle, opts: RunOptions) -> Result<Ended, TuiError> {
    let app_opts = AppOptions {
        no_color: opts.no_color,
    };
    let mut ui = Driver::open(service, handle, app_opts, opts.model.clone()).await?;
    if let Some(m) = &opts.first_message {
        ui.app_mut().say(m);
    }
    ui.app_mut().set_model_problem(opts.model_problem.clone());

    let mut guard = TerminalGuard::enter()?;
    // A session's warning (a torn log line, met while listing sessions) written to stderr would
    // land in the middle of the screen (found by a long trial: the screen then stayed garbled
    // until a resize): said in the status area instead while the UI is up.
    let (warn_tx, mut warn_rx) = mpsc::unbounded_channel::<String>();
    retrace_control::route_session_warnings(Some(Arc::new(move |w: &str| {
        let _ = warn_tx.send(w.to_string());
    })));
    let stop = Arc::new(AtomicBool::new(false));
    let (term_tx, mut term_rx) = mpsc::unbounded_channel();
    let reader = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                match event::poll(Duration::from_millis(50)) {
                    Ok(true) => match event::read() {
                        Ok(ev) => {
                            if term_tx.send(ev).is_err() {
                                break;
                            }
                        }
                        Err(_) => break,
                    },
                    Ok(false) => {}
                    Err(_) => break,
                }
            }
        })
    };
    let mut tick = tokio::time::interval(opts.tick);
    let mut term_signal = signal(SignalKind::terminate()).map_err(|source| TuiError::Terminal {
        op: "listen for SIGTERM",
        source,
    })?;
    let mut hup_signal = signal(SignalKind::hangup()).map_err(|source| TuiError::Terminal {
        op: "listen for SIGHUP",
        source,
    })?;
    // A SIGINT from outside (Ctrl-C itself is a key in raw mode) ends the UI like SIGTERM: the
    // terminal restored, the running turn cancelled by the caller, its shell killed.
    let mut int_signal = signal(SignalKind::interrupt()).map_err(|source| TuiError::Terminal {
        op: "listen for SIGINT",
        source,
    })?;
    // SIGQUIT (Ctrl-\ is a key in raw mode; this is `kill -QUIT`) ends it the same way instead of
    // leaving the terminal raw.
    let mut quit_signal = signal(SignalKind::quit()).map_err(|source| TuiError::Terminal {
        op: "listen for SIGQUIT",
        source,
    })?;
    let mut ended_by: Option<u8> = None;

    // A frame is drawn only after something that can change the screen (not on an idle tick),
    // and at most once per FRAME: a burst of events or keys costs one frame, not one each.
    let mut view_state = view::ViewState::new();
    let mut dirty = true;
    let mut last_draw: Option<Instant> = None;
    let result = loop {
        let due = last_draw.map(|t| t + FRAME);
        if dirty && due.is_none_or(|d| Instant::now() >= d) {
            if let Ok(size) = guard.terminal.size() {
                ui.app_mut().set_viewport(size.width, size.height);
            }
            if let Err(source) = guard.terminal.draw(|f| view::draw(f, ui.app(), &mut view_state)) {
                break Err(TuiError::Terminal { op: "draw", source });
            }
            // How far what it drew can scroll: the keys stop there.
            ui.app_mut().set_scroll_limits(view_state.scroll_limits());
            dirty = false;
            let drawn = Instant::now();
            // An approval box on this frame starts its guard time now (keys typed ahead of it
            // never answer it).
            ui.app_mut().on_drawn(drawn);
            last_draw = Some(drawn);
        }
        if ui.app().should_quit() {
            break Ok(());
        }
        let wake = tokio::time::Instant::from_std(due.unwrap_or_else(Instant::now));
        tokio::select! {
            ev = term_rx.recv() => {
                dirty = true;
                match ev {
                    Some(TermEvent::Key(key)) => ui.key(key, Instant::now()),
                    Some(TermEvent::Mouse(m)) => ui.mouse(m.kind),
                    Some(TermEvent::Paste(text)) => ui.paste(&text),
                    Some(_) => {} // a resize: the next draw lays out again
                    None => break Ok(()),
                }
            }
            open = ui.next() => {
                dirty = true;
                if !open {
                    break Ok(());
                }
            }
            Some(w) = warn_rx.recv() => {
                ui.app_mut().say(&format!("warning: {w}"));
                dirty = true;
            }
            _ = tick.tick() => dirty |= ui.app_mut().on_tick(),
            // A frame held back by the cap is drawn when its time comes.
            _ = tokio::time::sleep_until(wake), if dirty => {}
            _ = term_signal.recv() => { ended_by = Some(15); break Ok(()) }
            _ = hup_signal.recv() => { ended_by = Some(1); break Ok(()) }
            _ = int_signal.recv() => { ended_by = Some(2); break Ok(()) }
            _ = quit_signal.recv() => { ended_by = Some(3); break Ok(()) }
        }
    };
    stop.store(true, Ordering::SeqCst);
    retrace_control::route_session_warnings(None);
    drop(guard);
    // The user quit (no signal: the terminal is still there): the conversation stays on it.
    if result.is_ok() && ended_by.is_none() && opts.scrollback {
        let width = ratatui::crossterm::terminal::size().map_or(80, |(w, _)| usize::from(w));
        let _ = crate::scrollback::print(ui.app(), width, &mut std::io::stdout().lock());
    }
    drop(term_rx);
    // Not joined: when the terminal has gone (a hangup), crossterm's read never returns, so the
    // thread is left to end with the process, which the caller ends next.
    drop(reader);
    // A turn still running is cancelled (its shell killed) before the caller closes the session.
    if ui.app().status().running {
        ui.cancel();
    }
    result.map(|()| Ended {
        session_id: ui.session_id(),
        shown: ui.sessions_shown().to_vec(),
        signal: ended_by,
    })
}

/// How the UI ended.
#[derive(Debug, Clone)]
pub struct Ended {
    /// The session shown last (`/sessions` may have changed it): what `--session` resumes.
    pub session_id: String,
    /// Every session the UI showed (the last one among them), the first first: those left with
    /// nothing in them are not worth keeping (the caller discards them).
    pub shown: Vec<String>,
    /// The signal that ended the UI (SIGHUP 1, SIGINT 2, SIGQUIT 3, SIGTERM 15), if one did.
    pub signal: Option<u8>,
}
