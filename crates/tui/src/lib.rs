//! Retrace's terminal UI (SPEC §9.1): a chat with a coding agent where Esc Esc opens a rewind
//! picker, every restore is previewed first, and every rewind can be undone.
//!
//! The design separates three things so each can be tested alone:
//! - [`App`] is a pure state machine: keys (with the time they arrived), session events and
//!   answers go in, [`Effect`]s (requests for the session handle, in protocol types) come out. It
//!   does no I/O and holds no clock, so a test drives a whole rewind flow with plain values.
//!   Each screen (the chat, the rewind picker, its menu, the preview, a turn's diff, a file's
//!   history, heads, sessions, help, an approval) is one module of [`screens`] with its state,
//!   its keys and its drawing; the app routes keys and answers to the screen on top.
//! - [`view::draw`] renders an `App` into a ratatui frame. It never decides anything and never
//!   panics at any size (below 40×10 it says the terminal is too small). Every string that came
//!   from the model, the workspace or a server is escaped first ([`escape`]). What drawing keeps
//!   between frames lives in a [`view::ViewState`] the runtime owns, not in the app.
//! - [`Driver`] links an `App` to its session: it turns effects into requests on the
//!   `SessionHandle` and feeds events and answers back. The app shows the session's view as
//!   typed items (docs/ARCHITECTURE.md "The session view"): a snapshot, then the events numbered
//!   after it, applied through `retrace_control::ItemList` ([`transcript`]); a head change, a
//!   rewind, an undo, a compaction or a lagged stream takes a new snapshot. [`run`] owns the terminal and moves keys
//!   to the driver (from a reader thread) and frames to the screen; the tests drive the same
//!   `Driver` without a terminal. The terminal is restored on every way out, a panic included.
//!
//! A frame costs what changed, not the size of the conversation: each transcript entry's wrapped
//! rows are kept between frames (in the view state, `screens::chat::layout`), keyed by the entry's
//! revision, the width, the colours, the details switch and [`App::view_generation`], and a frame
//! clones only the rows it shows; the runtime draws only after something happened (an idle UI
//! draws nothing). BENCHMARKS.md has the figures.
//!
//! What this trades away: the wrapped rows of the whole transcript stay in memory, and a resize
//! lays every entry out again (BENCHMARKS.md: 8–10 ms on 1,000 messages).

mod answers;
pub mod app;
pub mod command;
pub mod compaction;
pub mod driver;
pub mod effect;
pub mod error;
pub mod escape;
mod events;
pub mod input;
mod mcp;
mod plan_mode;
pub mod run;
pub mod screens;
pub mod scrollback;
pub mod status;
mod status_report;
mod terminal;
pub mod transcript;
pub mod view;

pub use app::{App, AppOptions};
pub use driver::Driver;
pub use effect::Effect;
pub use error::TuiError;
pub use run::{run, Ended, RunOptions};
pub use screens::approval::{Approval, APPROVAL_GUARD};
pub use screens::{Mode, Screen};
pub use status::{ModelProblem, StatusInfo};
