//! Owning the real terminal: raw mode, the alternate screen, bracketed paste and wheel reports on
//! entry, and
//! restored on every way out — a normal return, an error (the guard's `Drop`) and a panic of the
//! UI's thread (a hook installed once, which restores before the default hook prints the
//! message). A panic of another thread while the UI is up (a task the runtime catches) leaves the
//! UI as it is: its message is held and printed once the terminal is restored.

use std::io::{self, Stdout};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};
use std::thread::ThreadId;

use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{DisableBracketedPaste, EnableBracketedPaste};
use ratatui::crossterm::style::Print;
use ratatui::crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
use ratatui::crossterm::{cursor, execute};
use ratatui::Terminal;

use crate::error::TuiError;

/// Whether the terminal is in the UI's state now (what the panic hook has to undo).
static ACTIVE: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();
/// The thread that entered the terminal: a panic there ends the UI.
static UI_THREAD: Mutex<Option<ThreadId>> = Mutex::new(None);
/// Panic messages of other threads while the UI was up (a panic there does not end it: printed
/// then, they would land in the middle of its screen), printed once the terminal is restored.
static HELD: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Whether the panic being reported happens away from the UI's thread while the UI is up.
fn away_from_the_ui() -> bool {
    let ui = UI_THREAD.lock().ok().and_then(|t| *t);
    ACTIVE.load(Ordering::SeqCst) && ui.is_some_and(|t| t != std::thread::current().id())
}

fn io_err(op: &'static str) -> impl FnOnce(io::Error) -> TuiError {
    move |source| TuiError::Terminal { op, source }
}

/// Mouse reports for buttons and the wheel only (xterm mode 1000) in SGR encoding (1006): no
/// motion events, so moving the mouse wakes nothing. Text is still selected with Shift+drag.
const MOUSE_ON: &str = "\x1b[?1000h\x1b[?1006h";
/// See [`MOUSE_ON`].
const MOUSE_OFF: &str = "\x1b[?1006l\x1b[?1000l";

/// Puts the terminal back as it was; safe to call more than once.
pub fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = terminal::disable_raw_mode();
        let _ = execute!(
            io::stdout(),
            Print(MOUSE_OFF),
            DisableBracketedPaste,
            LeaveAlternateScreen,
            cursor::Show
        );
        let held = HELD
            .lock()
            .map(|mut h| std::mem::take(&mut *h))
            .unwrap_or_default();
        for message in held {
            eprintln!("{message}");
        }
    }
}

/// The terminal in the UI's state; restored when dropped.
pub struct TerminalGuard {
    /// The ratatui terminal drawing on stdout.
    pub terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl TerminalGuard {
    /// Enters raw mode and the alternate screen, and installs the panic hook (once per process).
    pub fn enter() -> Result<TerminalGuard, TuiError> {
        HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                if away_from_the_ui() {
                    let name = std::thread::current().name().unwrap_or("unnamed").to_string();
                    if let Ok(mut held) = HELD.lock() {
                        held.push(format!("thread '{name}' {info}"));
                    }
                    return;
                }
                restore();
                previous(info);
            }));
        });
        terminal::enable_raw_mode().map_err(io_err("enter raw mode"))?;
        if let Ok(mut t) = UI_THREAD.lock() {
            *t = Some(std::thread::current().id());
        }
        ACTIVE.store(true, Ordering::SeqCst);
        if let Err(e) = execute!(
            io::stdout(),
            EnterAlternateScreen,
            EnableBracketedPaste,
            Print(MOUSE_ON)
        ) {
            restore();
            return Err(io_err("enter the alternate screen")(e));
        }
        match Terminal::new(CrosstermBackend::new(io::stdout())) {
            Ok(terminal) => Ok(TerminalGuard { terminal }),
            Err(e) => {
                restore();
                Err(io_err("open the terminal")(e))
            }
        }
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}
