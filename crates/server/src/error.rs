//! The server's errors: [`ServerError`] for starting and running it, and [`ApiError`], what an
//! `/api` request answers when it fails: `{"error": {code, message, details}}` with the status of
//! the one table, [`status_of`].

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use retrace_protocol::{Error, ErrorCode};

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
    /// The host is not a loopback address and remote access was not allowed.
    #[error("{host} is not a loopback address: the API would be reachable from other machines (allow it explicitly to do so)")]
    RemoteNotAllowed {
        /// The host as given.
        host: String,
    },
    /// The host is neither an IP address nor `localhost`.
    #[error("cannot listen on `{host}`: give an IP address or `localhost`")]
    BadHost {
        /// The host as given.
        host: String,
    },
    /// The token is unusable.
    #[error("the API token must be 16 to 256 visible ASCII characters")]
    BadToken,
    /// No random token could be made.
    #[error("cannot read random bytes for the API token: {0}")]
    Random(String),
}

/// The HTTP status of each error code: the one table (docs/API.md repeats it).
pub fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::Usage => StatusCode::BAD_REQUEST,
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        // The request is sound but the session's state refuses it now.
        ErrorCode::Busy
        | ErrorCode::TurnRunning
        | ErrorCode::Refused
        | ErrorCode::Conflict
        | ErrorCode::StalePlan
        | ErrorCode::Cancelled => StatusCode::CONFLICT,
        ErrorCode::ConfirmationRequired => StatusCode::PRECONDITION_REQUIRED,
        // The model is an upstream server (or could not be set up to reach one).
        ErrorCode::Model => StatusCode::BAD_GATEWAY,
        ErrorCode::Io | ErrorCode::Corrupt | ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// A failed API request: the controller's error, or one of the server's own with its status.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The error as the body carries it.
    pub error: Error,
}

impl ApiError {
    /// A `usage` error (400).
    pub fn usage(message: impl Into<String>) -> ApiError {
        Error::new(ErrorCode::Usage, message).into()
    }

    /// An error with a status of the server's own (401, 403, 404 for a route, 405, 413).
    pub fn with_status(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            error: Error::new(code, message),
        }
    }
}

impl From<Error> for ApiError {
    fn from(error: Error) -> ApiError {
        ApiError {
            status: status_of(error.code),
            error,
        }
    }
}

#[derive(serde::Serialize)]
struct Body<'a> {
    error: &'a Error,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(Body { error: &self.error })).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_status() {
        let want = |c: ErrorCode| match c.as_str() {
            "usage" => 400,
            "not_found" => 404,
            "busy" | "turn_running" | "refused" | "conflict" | "stale_plan" | "cancelled" => 409,
            "confirmation_required" => 428,
            "model" => 502,
            "io" | "corrupt" | "internal" => 500,
            other => panic!("no status decided for `{other}`"),
        };
        for c in ErrorCode::ALL {
            assert_eq!(status_of(c).as_u16(), want(c), "{c}");
        }
    }
}
