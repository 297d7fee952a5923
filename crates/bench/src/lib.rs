//! `retrace-bench`: Retrace's checkpoints against shadow-git checkpoints, measured side by side on
//! this machine (TESTING.md "Benchmarks" 1–6; issue 7).
//!
//! Users choose between file-snapshot checkpoints (Claude Code, Retrace) and shadow-git
//! checkpoints (Cline, Roo Code, Gemini CLI, opencode). This harness runs both in one process on
//! identical generated trees: the shadow-git side exactly as those tools do it ([`shadow`]), twice
//! (git's defaults, and `core.fsync=all` for a like-for-like durability comparison); Retrace's side
//! through the real store with fsync on ([`ours`]), and `retrace exec` for the whole turn. Every
//! rewind is checked on both sides against a manifest of path → SHA-256 and mode ([`tree`]).
//!
//! The binary prints one line per scenario and tree size ([`report`]); `BENCHMARKS.md` explains
//! the figures.

pub mod gitmode;
pub mod gitmode_exec;
pub mod measure;
pub mod mem;
pub mod ours;
pub mod report;
pub mod scenarios;
pub mod shadow;
pub mod tree;
