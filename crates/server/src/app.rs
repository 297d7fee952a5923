//! The whole HTTP application as one [`Router`]: the security checks around everything, the API,
//! the page and its files, and a 404 for the rest (JSON under `/api`). Tests drive it without a
//! socket (`tower::ServiceExt::oneshot`); [`crate::Server`] serves it.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Router;

use crate::assets::text;
use crate::registry::Registry;
use crate::security::{check, Guard};

/// The application over `registry`, guarded by `guard`.
pub fn router(registry: Arc<Registry>, guard: Arc<Guard>) -> Router {
    crate::api::routes(registry)
        .merge(crate::assets::routes(guard.clone()))
        .fallback(nothing)
        .layer(axum::middleware::from_fn_with_state(guard, check))
}

async fn nothing(req: Request) -> Response {
    let path = req.uri().path();
    if path == "/api" || path.starts_with("/api/") {
        crate::api::no_route().into_response()
    } else {
        text(StatusCode::NOT_FOUND, "not found\n")
    }
}
