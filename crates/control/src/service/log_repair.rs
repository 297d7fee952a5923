//! Repairing a session log with lines that cannot be read (`retrace fsck --session ID --repair`):
//! under the session's writer lease, every line that does not replay as written moves, byte for
//! byte, into `<id>.damaged-<n>` beside the log (`retrace_session::SessionOptions::repair`).

use retrace_protocol::{Error, LogRepair, MovedLogLine};
use retrace_session::SessionOptions;

use super::{blocking, Service};
use crate::error::ControlError;
use crate::view::session_id;

impl Service {
    /// Repairs session `id`'s log. Refused (`busy`) while a process, this one included, has the
    /// session open for writing; a sound log is left as it is (`moved` empty).
    pub async fn repair_log(&self, id: &str) -> std::result::Result<LogRepair, Error> {
        let sid = session_id(id)?;
        let _g = self.inner.opening.lock().await;
        self.refuse_open(&sid)?;
        let dir = self.inner.data.sessions_dir();
        let done = blocking("repairing the log", move || {
            let r = SessionOptions::default().repair(&dir, &sid)?;
            Ok(LogRepair {
                session_id: sid,
                log_path: r.log.to_string_lossy().into_owned(),
                moved: r
                    .moved
                    .into_iter()
                    .map(|m| MovedLogLine {
                        line: m.line as u64,
                        reason: m.reason,
                    })
                    .collect(),
                moved_to: r.moved_to.map(|p| p.to_string_lossy().into_owned()),
                lines_kept: r.lines_kept as u64,
                placeholders: r.placeholders as u64,
            })
        })
        .await;
        done.map_err(|e: ControlError| e.into())
    }
}
