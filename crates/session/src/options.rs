//! How a session is opened: the durable-write layer, the clock, the id source, where warnings go.

use std::path::PathBuf;
use std::sync::Arc;

use retrace_fsutil::Fs;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::{Result, SessionError};

/// The clock, injectable so tests are deterministic.
pub type Clock = Arc<dyn Fn() -> OffsetDateTime + Send + Sync>;

/// Where new ids come from: UUIDv7 by default; tests pass a seeded counter.
pub type IdSource = Arc<dyn Fn() -> Uuid + Send + Sync>;

/// Receives warnings (a torn last line); the default prints them on stderr, or hands them to the
/// process's sink ([`route_warnings`]).
pub type WarningSink = Arc<dyn Fn(&str) + Send + Sync>;

/// Where the default sink sends warnings while a frontend owns the terminal.
static ROUTED: std::sync::RwLock<Option<WarningSink>> = std::sync::RwLock::new(None);

/// Sends the warnings of every session opened with the default sink to `sink` from now on
/// (`None`: back to stderr). A terminal UI routes them into its own lines: a write to stderr while
/// it draws would land in the middle of its screen.
pub fn route_warnings(sink: Option<WarningSink>) {
    if let Ok(mut routed) = ROUTED.write() {
        *routed = sink;
    }
}

/// The default sink: the routed one, else stderr.
fn default_warning(w: &str) {
    let routed = ROUTED.read().ok().and_then(|r| r.clone());
    match routed {
        Some(sink) => sink(w),
        None => eprintln!("warning: {w}"),
    }
}

/// How to create or open sessions.
#[derive(Clone)]
pub struct SessionOptions {
    /// The durable-write layer (fsync on by default).
    pub fs: Fs,
    /// The clock.
    pub clock: Clock,
    /// The id source.
    pub ids: IdSource,
    /// Where warnings go.
    pub on_warning: WarningSink,
    /// The workspace recorded when a write to a format-1 log (which records none) creates its
    /// format-2 successor. Without it such a write fails with [`SessionError::WorkspaceUnknown`].
    pub legacy_workspace: Option<PathBuf>,
    /// The backend a session created with these options records in its header.
    pub backend: retrace_protocol::CheckpointBackend,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            fs: Fs::durable(),
            clock: Arc::new(OffsetDateTime::now_utc),
            ids: Arc::new(Uuid::now_v7),
            on_warning: Arc::new(default_warning),
            backend: retrace_protocol::CheckpointBackend::Snapshot,
            legacy_workspace: None,
        }
    }
}

impl std::fmt::Debug for SessionOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionOptions")
            .field("fs", &self.fs)
            .field("legacy_workspace", &self.legacy_workspace)
            .finish_non_exhaustive()
    }
}

impl SessionOptions {
    /// The clock's time as RFC 3339.
    pub(crate) fn now(&self) -> Result<String> {
        (self.clock)()
            .format(&Rfc3339)
            .map_err(|e| SessionError::Clock(e.to_string()))
    }

    /// A new UUID.
    pub(crate) fn uuid(&self) -> Uuid {
        (self.ids)()
    }

    /// Reports a warning.
    pub(crate) fn warn(&self, text: &str) {
        (self.on_warning)(text);
    }
}
