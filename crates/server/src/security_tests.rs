use super::*;
use axum::http::HeaderValue;

fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
    let mut h = HeaderMap::new();
    for (k, v) in pairs {
        h.append(k.clone(), HeaderValue::from_str(v).unwrap());
    }
    h
}

fn guard(host: &str, port: u16) -> Guard {
    Guard::new("t".repeat(32), host, port).unwrap()
}

fn host_ok(g: &Guard, pairs: &[(header::HeaderName, &str)], uri: &str) -> bool {
    g.wrong_host(&headers(pairs), &uri.parse().unwrap()).is_none()
}

/// The key the page's cookie carries.
fn key(g: &Guard) -> String {
    let c = g.cookie();
    let (_, rest) = c.split_once('=').unwrap();
    rest.split(';').next().unwrap().to_string()
}

#[test]
fn hosts_must_name_this_server_with_its_port() {
    let g = guard("127.0.0.1", 8080);
    for ok in ["127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080", "[::1]:8080"] {
        assert!(host_ok(&g, &[(header::HOST, ok)], "/"), "{ok}");
    }
    for bad in ["evil.example:8080", "127.0.0.1:8081", "localhost", "127.0.0.1"] {
        assert!(!host_ok(&g, &[(header::HOST, bad)], "/"), "{bad}");
    }
    assert!(!host_ok(&g, &[], "/"));
    let g = guard("192.0.2.7", 9);
    assert!(host_ok(&g, &[(header::HOST, "192.0.2.7:9")], "/"));
}

#[test]
fn one_host_only_and_the_target_may_not_name_another() {
    let g = guard("127.0.0.1", 8080);
    let good = || (header::HOST, "127.0.0.1:8080");
    assert!(!host_ok(&g, &[good(), good()], "/"));
    assert!(!host_ok(&g, &[good(), (header::HOST, "evil.example")], "/"));
    for bad in [
        "http://evil.example/api/sessions",
        "http://127.0.0.1:8081/api/sessions",
        "http://x@127.0.0.1:8080/api/sessions",
    ] {
        assert!(!host_ok(&g, &[good()], bad), "{bad}");
    }
    assert!(host_ok(&g, &[good()], "http://localhost:8080/api/sessions"));
    assert!(host_ok(&g, &[good()], "/api/sessions"));
}

#[test]
fn origins_must_be_this_server() {
    let g = guard("127.0.0.1", 8080);
    assert!(g.origin_ok(&HeaderMap::new()));
    assert!(g.origin_ok(&headers(&[(header::ORIGIN, "http://localhost:8080")])));
    assert!(!g.origin_ok(&headers(&[
        (header::ORIGIN, "http://localhost:8080"),
        (header::ORIGIN, "http://evil.example"),
    ])));
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
fn the_token_comes_as_a_bearer_and_the_page_key_as_the_cookie() {
    let t = "a".repeat(32);
    let g = Guard::new(t.clone(), "127.0.0.1", 1).unwrap();
    let k = key(&g);
    assert_eq!(k.len(), 32);
    assert_ne!(k, t, "the cookie does not carry the token");
    assert_eq!(
        g.authorized(&headers(&[(header::AUTHORIZATION, &format!("Bearer {t}"))])),
        Auth::Bearer
    );
    assert_eq!(
        g.authorized(&headers(&[(header::AUTHORIZATION, &format!("bearer {t}"))])),
        Auth::Bearer,
        "the scheme is case-insensitive"
    );
    assert_eq!(
        g.authorized(&headers(&[(header::COOKIE, &format!("x=1; retrace_1={k}"))])),
        Auth::Cookie
    );
    assert_eq!(
        g.authorized(&headers(&[(header::AUTHORIZATION, "Bearer aaa")])),
        Auth::None
    );
    assert_eq!(
        g.authorized(&headers(&[(header::COOKIE, &format!("retrace_1={t}"))])),
        Auth::None
    );
    assert_eq!(
        g.authorized(&headers(&[(header::COOKIE, &format!("retrace_2={k}"))])),
        Auth::None
    );
    assert_eq!(
        g.authorized(&headers(&[(header::AUTHORIZATION, &format!("Bearer {k}"))])),
        Auth::None
    );
    assert_eq!(g.authorized(&HeaderMap::new()), Auth::None);
    let c = g.cookie();
    assert!(c.starts_with("retrace_1="), "{c}");
    for part in ["HttpOnly", "SameSite=Strict", "Path=/api"] {
        assert!(c.split("; ").any(|p| p == part), "{c}");
    }
}

#[test]
fn each_guard_has_its_own_key() {
    let (a, b) = (guard("127.0.0.1", 1), guard("127.0.0.1", 1));
    assert_ne!(key(&a), key(&b));
    let ka = format!("retrace_1={}", key(&a));
    assert_eq!(b.authorized(&headers(&[(header::COOKIE, &ka)])), Auth::None);
}

#[test]
fn a_cookie_sent_from_another_origin_is_told_apart() {
    for ok in ["same-origin", "none"] {
        assert!(!from_another_origin(&headers(&[(
            header::HeaderName::from_static("sec-fetch-site"),
            ok
        )])));
    }
    assert!(!from_another_origin(&HeaderMap::new()));
    for bad in ["same-site", "cross-site", "x"] {
        assert!(from_another_origin(&headers(&[(
            header::HeaderName::from_static("sec-fetch-site"),
            bad
        )])));
    }
}
