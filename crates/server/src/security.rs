//! Who may talk to the server (docs/API.md "Security"): a request with more than one `Host`
//! header, a `Host` that is not the server's own address, a request target naming another host
//! (`GET http://evil.example/… HTTP/1.1`) or an `Origin` that is not the server's own origin is
//! refused with 403 (DNS rebinding, cross-site requests); an `/api` request needs the token as
//! `Authorization: Bearer TOKEN`, or the page's cookie (401 otherwise).
//!
//! The cookie does not carry the token. Browsers send a cookie of `127.0.0.1` to every port of
//! it, so another local server would see it: the cookie carries a key of 128 random bits made
//! at each start instead, good for this server's life only, and is named after the port
//! (`retrace_PORT`) so that two servers' cookies live side by side. It is `Path=/api` (the page
//! and its files need none), `HttpOnly` and `SameSite=Strict`. The token and the key are
//! compared in constant time.
//!
//! Every `/api` answer, and every refusal, carries `X-Content-Type-Options: nosniff` and
//! `Cache-Control: no-store`.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use retrace_protocol::ErrorCode;
use subtle::ConstantTimeEq;

use crate::error::{ApiError, ServerError};

/// The server's address, its token and the page's key, as the checks need them.
#[derive(Debug, Clone)]
pub struct Guard {
    token: String,
    /// The value of the page's cookie: random, new at each start, not the token.
    page_key: String,
    /// The page's cookie's name: `retrace_PORT`.
    cookie_name: String,
    /// Every `Host` value accepted (`127.0.0.1:PORT`, `localhost:PORT`, `[::1]:PORT`, the bound
    /// host with its port).
    hosts: Vec<String>,
}

/// Whether `a` is `b`, in time that depends on their lengths only.
fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && bool::from(a.ct_eq(b))
}

impl Guard {
    /// The guard of a server bound to `host` (as written in URLs: `[::1]` for IPv6) and `port`,
    /// with a new random page key.
    pub fn new(token: impl Into<String>, host: &str, port: u16) -> Result<Guard, ServerError> {
        let mut hosts: Vec<String> = ["127.0.0.1", "localhost", "[::1]"]
            .iter()
            .map(|h| format!("{h}:{port}"))
            .collect();
        let own = format!("{}:{port}", host.to_ascii_lowercase());
        if !hosts.contains(&own) {
            hosts.push(own);
        }
        Ok(Guard {
            token: token.into(),
            page_key: crate::server::random_token()?,
            cookie_name: format!("retrace_{port}"),
            hosts,
        })
    }

    /// Whether `given` is the token (constant time in the token's bytes).
    pub fn token_matches(&self, given: &str) -> bool {
        same(given, &self.token)
    }

    /// The page's cookie's name, `retrace_PORT`.
    pub fn cookie_name(&self) -> &str {
        &self.cookie_name
    }

    /// The `Set-Cookie` value that gives the page its key.
    pub fn cookie(&self) -> String {
        format!(
            "{}={}; HttpOnly; SameSite=Strict; Path=/api",
            self.cookie_name, self.page_key
        )
    }

    /// Why the request's `Host` (or its target's authority) is not this server's, if it is not.
    fn wrong_host(&self, headers: &HeaderMap, uri: &Uri) -> Option<&'static str> {
        let mut all = headers.get_all(header::HOST).iter();
        let host = match (all.next(), all.next()) {
            (Some(h), None) => h,
            (None, _) => return Some("the request has no Host header"),
            (Some(_), Some(_)) => return Some("the request has more than one Host header"),
        };
        if !host.to_str().is_ok_and(|h| self.is_ours(h)) {
            return Some("the Host header is not this server's address");
        }
        // An absolute-form target (`GET http://HOST:PORT/… HTTP/1.1`) names its host too.
        if uri.authority().is_some_and(|a| !self.is_ours(a.as_str())) {
            return Some("the request target names a host that is not this server's address");
        }
        None
    }

    fn is_ours(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        self.hosts.contains(&host)
    }

    /// Every `Origin` value (a request may carry several) is this server's.
    fn origin_ok(&self, headers: &HeaderMap) -> bool {
        headers.get_all(header::ORIGIN).iter().all(|origin| {
            origin.to_str().is_ok_and(|o| {
                o.to_ascii_lowercase()
                    .strip_prefix("http://")
                    .is_some_and(|rest| self.is_ours(rest))
            })
        })
    }

    fn authorized(&self, headers: &HeaderMap) -> Auth {
        let bearer = headers
            .get_all(header::AUTHORIZATION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .filter_map(|v| {
                let (scheme, rest) = v.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then_some(rest)
            })
            .any(|t| self.token_matches(t.trim()));
        if bearer {
            Auth::Bearer
        } else if cookies(headers, &self.cookie_name)
            .iter()
            .any(|k| same(k, &self.page_key))
        {
            Auth::Cookie
        } else {
            Auth::None
        }
    }
}

/// How a request proved it may use the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Auth {
    Bearer,
    Cookie,
    None,
}

/// Whether the browser says the request came from another origin: browsers send the cookie to
/// every port of the host (the same *site*), and a plain GET from a page on another port carries
/// no `Origin`, but it does carry `Sec-Fetch-Site: same-site` (or `cross-site`).
fn from_another_origin(headers: &HeaderMap) -> bool {
    headers
        .get_all("sec-fetch-site")
        .iter()
        .any(|v| !matches!(v.to_str(), Ok("same-origin") | Ok("none")))
}

/// Every value of cookie `name` the request carries.
fn cookies<'a>(headers: &'a HeaderMap, name: &str) -> Vec<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(|(k, _)| *k == name)
        .map(|(_, v)| v)
        .collect()
}

fn is_api(path: &str) -> bool {
    path == "/api" || path.starts_with("/api/")
}

/// The middleware of every route: `Host` and `Origin` first, then the token under `/api`.
pub async fn check(State(guard): State<std::sync::Arc<Guard>>, req: Request, next: Next) -> Response {
    let headers = req.headers();
    if let Some(why) = guard.wrong_host(headers, req.uri()) {
        return refuse(StatusCode::FORBIDDEN, why);
    }
    if !guard.origin_ok(headers) {
        return refuse(StatusCode::FORBIDDEN, "the Origin is not this server's own");
    }
    if !is_api(req.uri().path()) {
        return next.run(req).await;
    }
    match guard.authorized(headers) {
        Auth::Bearer => {}
        Auth::Cookie if from_another_origin(headers) => {
            return refuse(
                StatusCode::FORBIDDEN,
                "the page's cookie is only taken from this server's own page (Sec-Fetch-Site)",
            );
        }
        Auth::Cookie => {}
        Auth::None => {
            return refuse(
                StatusCode::UNAUTHORIZED,
                "a valid token is required (Authorization: Bearer TOKEN, or open the address `retrace serve` printed)",
            );
        }
    }
    not_stored(next.run(req).await)
}

/// Adds the headers of an API answer: not to be sniffed as another type, nor stored by a cache.
fn not_stored(mut res: Response) -> Response {
    let h = res.headers_mut();
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

fn refuse(status: StatusCode, message: &str) -> Response {
    not_stored(ApiError::with_status(status, ErrorCode::Refused, message).into_response())
}

#[cfg(test)]
#[path = "security_tests.rs"]
mod tests;
