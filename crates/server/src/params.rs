//! [`Param`]: a path parameter (a session id, a call id) whose bad bytes are a JSON `usage` error
//! like every other bad input of the API, not axum's plain-text rejection.

use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// The path parameters of a route, as `T`.
pub struct Param<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for Param<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(v)) => Ok(Param(v)),
            Err(e) => Err(ApiError::usage(format!(
                "the address is not valid: {}; percent-encode the id as UTF-8",
                e.body_text()
            ))),
        }
    }
}
