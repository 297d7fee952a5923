//! The web UI's files from `retrace-web`: `/` is its `index.html`, `/assets/{path}` its other
//! files. They need no token; opening `/?token=TOKEN` sets the token cookie and redirects to `/`,
//! so the token leaves the address bar (and the history). Every answer carries the security
//! headers: `Content-Security-Policy: default-src 'self'`, `X-Content-Type-Options: nosniff`,
//! `Referrer-Policy: no-referrer`.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::security::Guard;

/// The routes of the page and its files.
pub fn routes(guard: Arc<Guard>) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/index.html", get(page))
        .route("/assets/{*path}", get(file))
        .with_state(guard)
}

/// Adds the security headers to a static answer.
pub fn secure(mut res: Response) -> Response {
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'self'"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    res
}

/// A plain-text answer (not the API's JSON: these are pages).
pub fn text(status: StatusCode, body: &'static str) -> Response {
    secure(
        (
            status,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            body,
        )
            .into_response(),
    )
}

fn serve(path: &str) -> Response {
    match retrace_web::asset(path) {
        Some(a) => secure(
            (
                [
                    (header::CONTENT_TYPE, a.content_type),
                    (header::CACHE_CONTROL, "no-cache"),
                ],
                a.bytes,
            )
                .into_response(),
        ),
        None => text(StatusCode::NOT_FOUND, "not found\n"),
    }
}

async fn page(
    State(guard): State<Arc<Guard>>,
    q: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Response {
    let mut query = q.map(|Query(m)| m).unwrap_or_default();
    let token = query.remove("token");
    match token {
        None => serve("index.html"),
        Some(t) if guard.token_matches(&t) => {
            let cookie = guard.cookie();
            // The token leaves the address; a shared link's session stays in it.
            let location = match query.get("session") {
                Some(id) if id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') => {
                    format!("/?session={id}")
                }
                _ => "/".to_string(),
            };
            let mut res = (StatusCode::SEE_OTHER, [(header::LOCATION, location)]).into_response();
            if let Ok(v) = HeaderValue::from_str(&cookie) {
                res.headers_mut().insert(header::SET_COOKIE, v);
            }
            // An answer that sets the key must never be kept by a cache.
            let mut res = secure(res);
            res.headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            res
        }
        Some(_) => text(
            StatusCode::UNAUTHORIZED,
            "this token is not the server's: open the address `retrace serve` printed\n",
        ),
    }
}

async fn file(Path(path): Path<String>) -> Response {
    serve(&path)
}
