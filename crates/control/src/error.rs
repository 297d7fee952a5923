//! The controller's errors, and their one mapping to `retrace-protocol`'s [`Error`]: a code, a
//! message that names no frontend's flags, and structured details. Frontends branch on the code;
//! nothing parses the message.

use retrace_checkpoint::CheckpointError;
use retrace_model::ModelError;
use retrace_protocol::{Error, ErrorCode, ErrorDetails, Missing};
use retrace_session::SessionError;

/// Errors inside the controller; every one leaves it as a protocol [`Error`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum ControlError {
    /// The checkpoint store failed or refused.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// The session log failed or refused.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The model could not be set up.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The git backend's object store failed.
    #[error(transparent)]
    GitStore(#[from] retrace_gitstore::GitStoreError),
    /// Already classified.
    #[error("{0}")]
    Coded(Error),
}

/// Result alias of the controller.
pub(crate) type Result<T, E = ControlError> = std::result::Result<T, E>;

impl From<Error> for ControlError {
    fn from(e: Error) -> ControlError {
        ControlError::Coded(e)
    }
}

/// An error of `code` with `message`, as a [`ControlError`].
pub(crate) fn coded(code: ErrorCode, message: impl Into<String>) -> ControlError {
    ControlError::Coded(Error::new(code, message))
}

impl From<ControlError> for Error {
    fn from(e: ControlError) -> Error {
        let message = e.to_string();
        match e {
            ControlError::Coded(e) => e,
            ControlError::Checkpoint(c) => checkpoint(c, message),
            ControlError::Session(s) => session(s, message),
            ControlError::Model(_) => Error::new(ErrorCode::Model, message),
            ControlError::GitStore(g) => match g {
                retrace_gitstore::GitStoreError::BadObject { .. } => Error::new(ErrorCode::Corrupt, message),
                _ => Error::new(ErrorCode::Io, message),
            },
        }
    }
}

fn checkpoint(e: CheckpointError, message: String) -> Error {
    use CheckpointError as C;
    let code = match &e {
        C::Io { .. } | C::Stuck { .. } => ErrorCode::Io,
        C::Path(_) | C::NotAFile { .. } => ErrorCode::Usage,
        C::NoTurn => ErrorCode::Internal,
        C::RecordTooLarge { .. } | C::Corrupt { .. } => ErrorCode::Corrupt,
        C::UnknownTurn(n) => return Error::not_found(Missing::Turn, n.to_string(), message),
        C::UnknownFile { path, .. } => return Error::not_found(Missing::File, path.clone(), message),
        C::UnknownVersion { version, .. } => {
            return Error::not_found(Missing::Version, version.to_string(), message)
        }
        C::MissingPayload { .. }
        | C::NotOffered { .. }
        | C::UndoUnavailable { .. }
        | C::RedoUnavailable { .. }
        | C::TransactionTooLarge { .. }
        | C::TurnTooLarge { .. } => ErrorCode::Refused,
        C::StalePlan { .. } | C::PlanMoved { .. } => ErrorCode::StalePlan,
        C::ConfirmationRequired => ErrorCode::ConfirmationRequired,
        C::Refused { conflicts } | C::Changed { conflicts } | C::RedoRefused { conflicts } => {
            return Error::new(ErrorCode::Conflict, message).with_details(ErrorDetails::Conflicts {
                conflicts: conflicts.clone(),
            })
        }
        C::ExternalChange { .. } => {
            // The file that moved, typed, as a check would report it.
            return Error::new(ErrorCode::Conflict, message).with_details(ErrorDetails::Conflicts {
                conflicts: crate::core::moved_files(&e),
            });
        }
        C::UndoRefused { paths } => {
            return Error::new(ErrorCode::Refused, message)
                .with_details(ErrorDetails::Paths { paths: paths.clone() })
        }
    };
    Error::new(code, message)
}

fn session(e: SessionError, message: String) -> Error {
    use SessionError as S;
    let code = match &e {
        S::Io { .. } | S::Poisoned { .. } => ErrorCode::Io,
        S::NoSuchSession { id, .. } => return Error::not_found(Missing::Session, id.as_str(), message),
        S::UnknownHead(h) => return Error::not_found(Missing::Head, h.clone(), message),
        S::UnknownTurn(n) => return Error::not_found(Missing::Turn, n.to_string(), message),
        S::UnknownMessage(m) => return Error::not_found(Missing::Message, m.as_str(), message),
        S::WorkspaceUnknown(path) => {
            return Error::new(ErrorCode::Usage, message).with_details(ErrorDetails::WorkspaceUnknown {
                log_path: path.to_string_lossy().into_owned(),
            })
        }
        S::InvalidSessionId(_)
        | S::NameTaken(_)
        | S::EmptyName
        | S::BadName { .. }
        | S::NonUtf8Workspace(_) => ErrorCode::Usage,
        S::Corrupt { .. } | S::UnsupportedFormat { .. } | S::Unrepairable { .. } => ErrorCode::Corrupt,
        S::Damaged { id, damage } => {
            return Error::new(ErrorCode::Corrupt, message).with_details(ErrorDetails::DamagedLog {
                session_id: id.as_str().to_string(),
                log_path: damage.path.to_string_lossy().into_owned(),
                line: damage.line as u64,
            })
        }
        S::Held { holder, .. } => {
            return Error::new(ErrorCode::Busy, message).with_details(ErrorDetails::Holder {
                holder: holder.clone(),
            })
        }
        S::HeadRetired(_)
        | S::RetireSelected(_)
        | S::NotOnHead { .. }
        | S::TurnNotVisible { .. }
        | S::NothingToSummarize => ErrorCode::Refused,
        S::ReadOnly(_)
        | S::Inconsistent(_)
        | S::ForkKindMain
        | S::DuplicateMessage(_)
        | S::TurnReused { .. }
        | S::Clock(_)
        | S::Encode(_) => ErrorCode::Internal,
    };
    Error::new(code, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_things_are_not_found_wherever_they_come_from() {
        let cases: [ControlError; 4] = [
            CheckpointError::UnknownTurn(7).into(),
            SessionError::UnknownTurn(7).into(),
            SessionError::UnknownHead("x".into()).into(),
            SessionError::NoSuchSession {
                id: "s".into(),
                path: "/d/s.jsonl".into(),
            }
            .into(),
        ];
        for c in cases {
            let e: Error = c.into();
            assert_eq!(e.code, ErrorCode::NotFound, "{e:?}");
            assert!(matches!(e.details, Some(ErrorDetails::NotFound { .. })), "{e:?}");
        }
    }

    #[test]
    fn a_held_lease_is_busy_with_its_holder() {
        let e: Error = ControlError::from(SessionError::Held {
            id: "s".into(),
            path: "/d/s.lease".into(),
            holder: "pid 1 on box".into(),
        })
        .into();
        assert_eq!(e.code, ErrorCode::Busy);
        assert!(e.message.contains("pid 1 on box"));
        assert_eq!(
            e.details,
            Some(ErrorDetails::Holder {
                holder: "pid 1 on box".into()
            })
        );
    }
}
