//! Who may talk to the server (docs/API.md "Security"): a request whose `Host` is not the
//! server's own address, or whose `Origin` is not the server's own origin, is refused with 403
//! (DNS rebinding, cross-site requests); an `/api` request needs the token, as
//! `Authorization: Bearer TOKEN` or the cookie the page gets when it is opened with `?token=`
//! (401 otherwise). Tokens are compared in constant time.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use retrace_protocol::ErrorCode;
use subtle::ConstantTimeEq;

use crate::error::ApiError;

/// The cookie that carries the token for the page.
pub const COOKIE: &str = "retrace_token";

/// The server's address and token, as the checks need them.
#[derive(Debug, Clone)]
pub struct Guard {
    token: String,
    /// Every `Host` value accepted (`127.0.0.1:PORT`, `localhost:PORT`, `[::1]:PORT`, the bound
    /// host with its port).
    hosts: Vec<String>,
}

impl Guard {
    /// The guard of a server bound to `host` (as written in URLs: `[::1]` for IPv6) and `port`.
    pub fn new(token: impl Into<String>, host: &str, port: u16) -> Guard {
        let mut hosts: Vec<String> = ["127.0.0.1", "localhost", "[::1]"]
            .iter()
            .map(|h| format!("{h}:{port}"))
            .collect();
        let own = format!("{}:{port}", host.to_ascii_lowercase());
        if !hosts.contains(&own) {
            hosts.push(own);
        }
        Guard {
            token: token.into(),
            hosts,
        }
    }

    /// Whether `given` is the token (constant time in the token's bytes).
    pub fn token_matches(&self, given: &str) -> bool {
        let (a, b) = (given.as_bytes(), self.token.as_bytes());
        a.len() == b.len() && bool::from(a.ct_eq(b))
    }

    /// The `Set-Cookie` value that gives the page the token.
    pub fn cookie(&self) -> String {
        format!("{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/", self.token)
    }

    fn host_ok(&self, headers: &HeaderMap) -> bool {
        let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
            return false;
        };
        let host = host.to_ascii_lowercase();
        self.hosts.contains(&host)
    }

    fn origin_ok(&self, headers: &HeaderMap) -> bool {
        let Some(origin) = headers.get(header::ORIGIN) else {
            return true;
        };
        let Ok(origin) = origin.to_str() else {
            return false;
        };
        let origin = origin.to_ascii_lowercase();
        origin
            .strip_prefix("http://")
            .is_some_and(|rest| self.hosts.iter().any(|h| h == rest))
    }

    fn authorized(&self, headers: &HeaderMap) -> bool {
        let bearer = headers
            .get_all(header::AUTHORIZATION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .filter_map(|v| v.strip_prefix("Bearer "))
            .any(|t| self.token_matches(t.trim()));
        bearer || cookie_token(headers).iter().any(|t| self.token_matches(t))
    }
}

/// Every value of the token cookie the request carries.
fn cookie_token(headers: &HeaderMap) -> Vec<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(|(k, _)| *k == COOKIE)
        .map(|(_, v)| v)
        .collect()
}

/// The middleware of every route: `Host` and `Origin` first, then the token under `/api`.
pub async fn check(State(guard): State<std::sync::Arc<Guard>>, req: Request, next: Next) -> Response {
    let headers = req.headers();
    if !guard.host_ok(headers) {
        return refuse(
            StatusCode::FORBIDDEN,
            "the Host header is not this server's address",
        );
    }
    if !guard.origin_ok(headers) {
        return refuse(StatusCode::FORBIDDEN, "the Origin is not this server's own");
    }
    let path = req.uri().path();
    if (path == "/api" || path.starts_with("/api/")) && !guard.authorized(headers) {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "a valid token is required (Authorization: Bearer TOKEN)",
        );
    }
    next.run(req).await
}

fn refuse(status: StatusCode, message: &str) -> Response {
    ApiError::with_status(status, ErrorCode::Refused, message).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(k.clone(), HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn hosts_must_name_this_server_with_its_port() {
        let g = Guard::new("t".repeat(32), "127.0.0.1", 8080);
        for ok in ["127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080", "[::1]:8080"] {
            assert!(g.host_ok(&headers(&[(header::HOST, ok)])), "{ok}");
        }
        for bad in ["evil.example:8080", "127.0.0.1:8081", "localhost", "127.0.0.1"] {
            assert!(!g.host_ok(&headers(&[(header::HOST, bad)])), "{bad}");
        }
        assert!(!g.host_ok(&HeaderMap::new()));
        let g = Guard::new("t".repeat(32), "192.0.2.7", 9);
        assert!(g.host_ok(&headers(&[(header::HOST, "192.0.2.7:9")])));
    }

    #[test]
    fn origins_must_be_this_server() {
        let g = Guard::new("t".repeat(32), "127.0.0.1", 8080);
        assert!(g.origin_ok(&HeaderMap::new()));
        assert!(g.origin_ok(&headers(&[(header::ORIGIN, "http://localhost:8080")])));
        for bad in [
            "http://evil.example",
            "https://localhost:8080",
            "http://localhost:8081",
            "null",
        ] {
            assert!(!g.origin_ok(&headers(&[(header::ORIGIN, bad)])), "{bad}");
        }
    }

    #[test]
    fn the_token_comes_as_a_bearer_or_a_cookie() {
        let t = "a".repeat(32);
        let g = Guard::new(t.clone(), "127.0.0.1", 1);
        assert!(g.authorized(&headers(&[(header::AUTHORIZATION, &format!("Bearer {t}"))])));
        assert!(g.authorized(&headers(&[(header::COOKIE, &format!("x=1; {COOKIE}={t}"))])));
        assert!(!g.authorized(&headers(&[(header::AUTHORIZATION, "Bearer aaa")])));
        assert!(!g.authorized(&headers(&[(header::COOKIE, &format!("{COOKIE}=b"))])));
        assert!(!g.authorized(&HeaderMap::new()));
        assert!(g.cookie().contains("HttpOnly") && g.cookie().contains("SameSite=Strict"));
    }
}
