//! Token, Host and Origin checks, and the page: through the router.

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use serde_json::Value;

use crate::support::{Env, HOST, TOKEN};

fn req(path: &str, headers: &[(&str, &str)]) -> Request<Body> {
    let mut b = Request::builder().uri(path);
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(Body::empty()).unwrap()
}

fn code(bytes: &[u8]) -> String {
    let v: Value = serde_json::from_slice(bytes).unwrap();
    v["error"]["code"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_needs_the_token_as_a_bearer_or_the_cookie() {
    let env = Env::new(vec![]);
    let (s, _, b) = env.send(req("/api/sessions", &[("host", HOST)])).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    assert_eq!(code(&b), "refused");
    let (s, _, _) = env
        .send(req(
            "/api/sessions",
            &[
                ("host", HOST),
                ("authorization", "Bearer 0123456789abcdef0123456789abcdeX"),
            ],
        ))
        .await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    let (s, _, _) = env
        .send(req(
            "/api/nothing",
            &[("host", HOST), ("authorization", "Basic abc")],
        ))
        .await;
    assert_eq!(
        s,
        StatusCode::UNAUTHORIZED,
        "unknown routes are not told apart without the token"
    );
    let bearer = format!("Bearer {TOKEN}");
    let (s, _, _) = env
        .send(req(
            "/api/sessions",
            &[("host", HOST), ("authorization", &bearer)],
        ))
        .await;
    assert_eq!(s, StatusCode::OK);
    let key = page_cookie(&env, "/").await;
    let cookie = format!("other=1; {key}");
    let (s, _, _) = env
        .send(req("/api/sessions", &[("host", HOST), ("cookie", &cookie)]))
        .await;
    assert_eq!(s, StatusCode::OK);
    // Browsers send the cookie to every port of the host; what another port's page sends says
    // so in Sec-Fetch-Site (a plain GET carries no Origin).
    for (site, want) in [
        ("same-origin", StatusCode::OK),
        ("none", StatusCode::OK),
        ("same-site", StatusCode::FORBIDDEN),
        ("cross-site", StatusCode::FORBIDDEN),
    ] {
        let (s, _, _) = env
            .send(req(
                "/api/sessions",
                &[("host", HOST), ("cookie", &cookie), ("sec-fetch-site", site)],
            ))
            .await;
        assert_eq!(s, want, "{site}");
    }
    // The cookie carries the page's key, never the token; the token is no cookie value.
    assert!(!key.contains(TOKEN), "{key}");
    for bad in [
        format!("retrace_4000={TOKEN}"),
        format!("retrace_token={TOKEN}"),
        key.replace("retrace_4000", "retrace_4001"),
    ] {
        let (s, _, _) = env
            .send(req("/api/sessions", &[("host", HOST), ("cookie", &bad)]))
            .await;
        assert_eq!(s, StatusCode::UNAUTHORIZED, "{bad}");
    }
    // The key is no bearer.
    let (_, value) = key.split_once('=').unwrap();
    let (s, _, _) = env
        .send(req(
            "/api/sessions",
            &[("host", HOST), ("authorization", &format!("Bearer {value}"))],
        ))
        .await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
}

/// Opens the page with the token (and `then`'s query); the `NAME=VALUE` of the cookie it sets.
async fn page_cookie(env: &Env, then: &str) -> String {
    let sep = if then.contains('?') { '&' } else { '?' };
    let (s, h, _) = env
        .send(req(&format!("{then}{sep}token={TOKEN}"), &[("host", HOST)]))
        .await;
    assert_eq!(s, StatusCode::SEE_OTHER);
    let cookie = h[header::SET_COOKIE].to_str().unwrap();
    cookie.split(';').next().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_hosts_and_origins_are_refused() {
    let env = Env::new(vec![]);
    let bearer = format!("Bearer {TOKEN}");
    for host in ["evil.example:4000", "127.0.0.1:4001", "evil.example"] {
        for path in ["/api/sessions", "/", "/assets/app.js"] {
            let (s, _, b) = env
                .send(req(path, &[("host", host), ("authorization", &bearer)]))
                .await;
            assert_eq!(s, StatusCode::FORBIDDEN, "{host} {path}");
            assert_eq!(code(&b), "refused");
        }
    }
    for host in ["localhost:4000", "[::1]:4000", "127.0.0.1:4000"] {
        let (s, _, _) = env
            .send(req(
                "/api/sessions",
                &[("host", host), ("authorization", &bearer)],
            ))
            .await;
        assert_eq!(s, StatusCode::OK, "{host}");
    }
    for origin in [
        "http://evil.example",
        "http://localhost:4001",
        "https://127.0.0.1:4000",
        "null",
    ] {
        let (s, _, _) = env
            .send(req(
                "/api/sessions",
                &[("host", HOST), ("authorization", &bearer), ("origin", origin)],
            ))
            .await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{origin}");
    }
    let (s, _, _) = env
        .send(req(
            "/api/sessions",
            &[
                ("host", HOST),
                ("authorization", &bearer),
                ("origin", "http://localhost:4000"),
            ],
        ))
        .await;
    assert_eq!(s, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_needs_no_token_and_trades_one_in_the_url_for_a_cookie() {
    let env = Env::new(vec![]);
    let (s, h, b) = env.send(req("/", &[("host", HOST)])).await;
    assert_eq!(s, StatusCode::OK);
    assert!(h[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/html"));
    assert_eq!(h[header::CONTENT_SECURITY_POLICY], "default-src 'self'");
    assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    assert_eq!(h[header::REFERRER_POLICY], "no-referrer");
    assert!(String::from_utf8(b).unwrap().contains("/assets/app.js"));

    let (s, h, _) = env
        .send(req(&format!("/?token={TOKEN}"), &[("host", HOST)]))
        .await;
    assert_eq!(s, StatusCode::SEE_OTHER);
    assert_eq!(h[header::LOCATION], "/");
    let cookie = h[header::SET_COOKIE].to_str().unwrap();
    assert_eq!(
        h[header::CACHE_CONTROL],
        "no-store",
        "the answer that sets the key is not kept"
    );
    let mut parts = cookie.split("; ");
    let (name, value) = parts.next().unwrap().split_once('=').unwrap();
    assert_eq!(name, "retrace_4000", "named after the port: {cookie}");
    assert!(
        value.len() == 32 && value.bytes().all(|b| b.is_ascii_hexdigit()) && value != TOKEN,
        "{cookie}"
    );
    let mut attributes: Vec<&str> = parts.collect();
    attributes.sort_unstable();
    assert_eq!(
        attributes,
        ["HttpOnly", "Path=/api", "SameSite=Strict"],
        "{cookie}"
    );

    // Found by attack: a shared link's session was dropped with the token.
    let id = "0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41";
    let (s, h, _) = env
        .send(req(&format!("/?token={TOKEN}&session={id}"), &[("host", HOST)]))
        .await;
    assert_eq!(s, StatusCode::SEE_OTHER);
    assert_eq!(h[header::LOCATION], format!("/?session={id}").as_str());
    let (_, h, _) = env
        .send(req(
            &format!("/?token={TOKEN}&session=%22%3E%3Cx"),
            &[("host", HOST)],
        ))
        .await;
    assert_eq!(h[header::LOCATION], "/");

    let (s, h, _) = env.send(req("/?token=wrong", &[("host", HOST)])).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    assert!(h.get(header::SET_COOKIE).is_none());

    let (s, h, _) = env.send(req("/assets/app.js", &[("host", HOST)])).await;
    assert_eq!(s, StatusCode::OK);
    assert!(h[header::CONTENT_TYPE]
        .to_str()
        .unwrap()
        .starts_with("text/javascript"));
    assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    let (s, _, _) = env.send(req("/assets/../Cargo.toml", &[("host", HOST)])).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (s, _, _) = env.send(req("/nothing", &[("host", HOST)])).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
}

/// The page is ES modules (`<script type="module">`): each one it can import is served as
/// JavaScript (a module of another type is refused under `nosniff`) with the policy that allows
/// scripts from the server itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_module_of_the_page_is_served_as_javascript_from_self() {
    let env = Env::new(vec![]);
    let (_, _, page) = env.send(req("/", &[("host", HOST)])).await;
    assert!(String::from_utf8(page)
        .unwrap()
        .contains(r#"<script type="module" src="/assets/app.js">"#));
    let modules: Vec<&str> = retrace_web::FILES
        .iter()
        .map(|(p, _)| *p)
        .filter(|p| p.ends_with(".js"))
        .collect();
    assert!(modules.len() > 1, "{modules:?}");
    for m in modules {
        let (s, h, b) = env.send(req(&format!("/assets/{m}"), &[("host", HOST)])).await;
        assert_eq!(s, StatusCode::OK, "{m}");
        assert_eq!(h[header::CONTENT_TYPE], "text/javascript; charset=utf-8", "{m}");
        assert_eq!(h[header::CONTENT_SECURITY_POLICY], "default-src 'self'", "{m}");
        assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff", "{m}");
        assert_eq!(b, retrace_web::asset(m).unwrap().bytes, "{m}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_answers_are_neither_sniffed_nor_stored() {
    use tower::ServiceExt;
    let env = Env::new(vec![]);
    let id = env.create().await;
    let bearer = format!("Bearer {TOKEN}");
    let ok = &[("host", HOST), ("authorization", bearer.as_str())];
    let cases: Vec<(Request<Body>, StatusCode)> = vec![
        (req("/api/sessions", ok), StatusCode::OK),
        (req(&format!("/api/sessions/{id}"), ok), StatusCode::OK),
        (req("/api/nothing", ok), StatusCode::NOT_FOUND),
        (req("/api/sessions", &[("host", HOST)]), StatusCode::UNAUTHORIZED),
        (
            req("/api/sessions", &[("host", "evil.example")]),
            StatusCode::FORBIDDEN,
        ),
        (req("/", &[("host", "evil.example")]), StatusCode::FORBIDDEN),
        (req(&format!("/api/sessions/{id}/events"), ok), StatusCode::OK),
    ];
    for (r, want) in cases {
        let what = r.uri().to_string();
        // Headers only: the event stream does not end.
        let res = env.app.clone().oneshot(r).await.unwrap();
        assert_eq!(res.status(), want, "{what}");
        let h = res.headers();
        assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff", "{what}");
        assert_eq!(h[header::CACHE_CONTROL], "no-store", "{what}");
    }
    let (_, h, _) = env.send(req("/assets/app.js", &[("host", HOST)])).await;
    assert_eq!(
        h[header::CACHE_CONTROL],
        "no-cache",
        "the page's files may be revalidated"
    );
}
