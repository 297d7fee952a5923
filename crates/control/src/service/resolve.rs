//! Naming a session the way people type it (SPEC §11): its whole id, any unambiguous prefix of it,
//! or "the latest session of this workspace". One place decides, for every frontend.

use std::path::Path;

use retrace_protocol::{Error, ErrorCode, Missing, SessionId};

use super::Service;
use crate::paths::DataRoot;
use crate::session_list::sessions;
use crate::view::session_id;

/// At most this many candidates are named in an ambiguous prefix's error.
const SHOWN_CANDIDATES: usize = 10;

impl Service {
    /// The session `given` names: the session whose id it is, else the one session whose id starts
    /// with it. No session: `not_found`; several: `usage`, naming them. Only file names are read, so
    /// a session whose log is damaged is found too.
    pub fn resolve_session(&self, given: &str) -> Result<SessionId, Error> {
        if given.is_empty() {
            return Err(Error::new(ErrorCode::Usage, "the session id is empty"));
        }
        let sid = session_id(given)?;
        let dir = self.inner.data.sessions_dir();
        if std::fs::symlink_metadata(self.inner.data.log(&sid)).is_ok() {
            return Ok(sid);
        }
        // UUID text is case-insensitive: `01A2…` names the session `01a2…`.
        let lower = given.to_ascii_lowercase();
        if lower != given {
            let sid = session_id(&lower)?;
            if std::fs::symlink_metadata(self.inner.data.log(&sid)).is_ok() {
                return Ok(sid);
            }
        }
        let mut found: Vec<String> = match std::fs::read_dir(&dir) {
            Ok(entries) => entries
                .filter_map(|e| e.ok())
                .filter_map(|e| {
                    let name = e.file_name().into_string().ok()?;
                    let stem = name.strip_suffix(".jsonl")?;
                    (!stem.starts_with('.') && stem.to_ascii_lowercase().starts_with(&lower))
                        .then(|| stem.to_string())
                })
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                return Err(Error::new(
                    ErrorCode::Io,
                    format!("cannot list the sessions in `{}`: {e}", dir.display()),
                ))
            }
        };
        found.sort();
        match found.len() {
            0 => Err(Error::not_found(
                Missing::Session,
                given,
                format!("no session {given}: no session id is or starts with it"),
            )),
            1 => Ok(SessionId::new(found.swap_remove(0))),
            n => {
                let mut shown = found[..n.min(SHOWN_CANDIDATES)].join(", ");
                if n > SHOWN_CANDIDATES {
                    shown.push_str(&format!(" and {} more", n - SHOWN_CANDIDATES));
                }
                Err(Error::new(
                    ErrorCode::Usage,
                    format!("the session id prefix {given} is ambiguous: {n} sessions start with it ({shown}); give more of the id"),
                ))
            }
        }
    }

    /// `sid` as its log is named: UUID text is case-insensitive, so an id in upper case whose log
    /// is not there names the session of its lower-case form when that one is.
    pub(super) fn as_stored(&self, sid: SessionId) -> SessionId {
        let data = &self.inner.data;
        let lower = sid.as_str().to_ascii_lowercase();
        if lower == sid.as_str() || std::fs::symlink_metadata(data.log(&sid)).is_ok() {
            return sid;
        }
        match session_id(&lower) {
            Ok(l) if std::fs::symlink_metadata(data.log(&l)).is_ok() => l,
            _ => sid,
        }
    }

    /// The canonical form of `workspace` if a new session may work on it (not the file system's
    /// root, nor inside `.git` or Retrace's data directory); else a `usage` error naming it. What
    /// creating a session checks, for a frontend to check at its start.
    pub fn check_workspace(&self, workspace: &Path) -> Result<std::path::PathBuf, Error> {
        Ok(crate::core::new_workspace(&self.inner.data, workspace)?)
    }

    /// The newest session of `workspace` (found from any directory under it); old flat logs, which
    /// record no workspace, are never taken for it.
    pub fn latest_session(&self, workspace: &Path) -> Result<SessionId, Error> {
        Ok(latest_of(&self.inner.data, workspace)?)
    }
}

/// The newest session of `workspace` in `data` (see [`Service::latest_session`]).
pub(super) fn latest_of(data: &DataRoot, workspace: &Path) -> crate::error::Result<SessionId> {
    sessions(data, Some(workspace))?
        .into_iter()
        .find(|s| s.workspace.is_some())
        .map(|s| s.id)
        .ok_or_else(|| {
            Error::not_found(
                Missing::Session,
                workspace.to_string_lossy(),
                format!("no session of `{}` yet", workspace.display()),
            )
            .into()
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::ServiceOptions;

    fn service_with(ids: &[&str]) -> (tempfile::TempDir, Service) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("sessions");
        std::fs::create_dir_all(&dir).unwrap();
        for id in ids {
            std::fs::write(dir.join(format!("{id}.jsonl")), "not even a header\n").unwrap();
        }
        std::fs::create_dir_all(dir.join("abc-9.ckpt")).unwrap();
        let svc = Service::new(ServiceOptions::new(tmp.path()));
        (tmp, svc)
    }

    #[test]
    fn whole_ids_and_unambiguous_prefixes_name_one_session() {
        let (_tmp, svc) = service_with(&["abc-1", "abc-12", "abd-2"]);
        assert_eq!(svc.resolve_session("abc-1").unwrap().as_str(), "abc-1");
        assert_eq!(svc.resolve_session("abd").unwrap().as_str(), "abd-2");
        assert_eq!(svc.resolve_session("abc-12").unwrap().as_str(), "abc-12");
        // Ids are case-insensitive (UUID text), whole or as a prefix.
        assert_eq!(svc.resolve_session("ABC-12").unwrap().as_str(), "abc-12");
        assert_eq!(svc.resolve_session("ABD").unwrap().as_str(), "abd-2");
    }

    #[test]
    fn an_ambiguous_prefix_names_the_candidates_and_an_unknown_one_is_not_found() {
        let (_tmp, svc) = service_with(&["abc-1", "abc-2", "abd-2"]);
        let e = svc.resolve_session("abc").unwrap_err();
        assert_eq!(e.code, ErrorCode::Usage);
        assert!(e.message.contains("abc-1, abc-2"), "{}", e.message);
        // A sidecar without a log is no session.
        let e = svc.resolve_session("abc-9").unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound);
        assert!(!e.message.contains("sessions/"), "{}", e.message);
        assert_eq!(svc.resolve_session("").unwrap_err().code, ErrorCode::Usage);
        assert_eq!(svc.resolve_session("../x").unwrap_err().code, ErrorCode::Usage);
    }
}
