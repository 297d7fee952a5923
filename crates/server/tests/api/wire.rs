//! The checks that need the wire: the page's cookie of two servers on two ports, and requests
//! written by hand (two Host headers, a target naming another host).

use reqwest::header::{AUTHORIZATION, COOKIE, SET_COOKIE};

use crate::http::{raw, raw_status, Live};
use crate::support::TOKEN;

/// Opens `live`'s page with the token as a browser would (no redirect followed): the
/// `NAME=VALUE` of the cookie it sets.
async fn open_page(live: &Live) -> String {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let res = client.get(&live.url).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 303);
    assert_eq!(res.headers()["location"], "/");
    let cookie = res.headers()[SET_COOKIE].to_str().unwrap();
    assert!(cookie.contains("Path=/api"), "{cookie}");
    cookie.split(';').next().unwrap().to_string()
}

async fn sessions_with(live: &Live, cookie: &str) -> u16 {
    let res = live
        .client
        .get(format!("{}/api/sessions", live.base))
        .header(COOKIE, cookie)
        .send()
        .await
        .unwrap();
    res.status().as_u16()
}

/// Found by review: the cookie carried the token to every port of 127.0.0.1, and two servers
/// overwrote each other's cookie (the first tab then got 401).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_two_ports_each_take_their_own_cookie_only() {
    // The same token on both: what the cookie carries must still differ.
    let (a, b) = (Live::start(vec![]).await, Live::start(vec![]).await);
    let (ca, cb) = (open_page(&a).await, open_page(&b).await);
    let name = |c: &str| c.split_once('=').unwrap().0.to_string();
    assert_eq!(name(&ca), format!("retrace_{}", a.addr.port()));
    assert_eq!(name(&cb), format!("retrace_{}", b.addr.port()));
    for c in [&ca, &cb] {
        assert!(!c.contains(TOKEN), "the cookie carries the token: {c}");
    }
    // A browser sends both cookies of 127.0.0.1 to both ports: each server takes its own.
    let both = format!("{ca}; {cb}");
    assert_eq!(sessions_with(&a, &both).await, 200);
    assert_eq!(sessions_with(&b, &both).await, 200);
    assert_eq!(sessions_with(&a, &ca).await, 200);
    assert_eq!(sessions_with(&a, &cb).await, 401, "b's cookie opens a");
    assert_eq!(sessions_with(&b, &ca).await, 401, "a's cookie opens b");
    // b's key under a's name.
    let (_, kb) = cb.split_once('=').unwrap();
    let forged = format!("{}={kb}", name(&ca));
    assert_eq!(sessions_with(&a, &forged).await, 401);
    // The bearer token still opens both.
    for live in [&a, &b] {
        let res = live
            .client
            .get(format!("{}/api/sessions", live.base))
            .header(AUTHORIZATION, format!("Bearer {TOKEN}"))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 200);
    }
    a.stop().await;
    b.stop().await;
}

/// Found by review: a second Host header, or a request target naming another host, passed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hosts_or_a_foreign_target_are_refused_on_the_wire() {
    let live = Live::start(vec![]).await;
    let host = format!("127.0.0.1:{}", live.addr.port());
    let auth = format!("Authorization: Bearer {TOKEN}\r\nConnection: close\r\n");
    let get = |target: &str, hosts: &[&str]| {
        let mut r = format!("GET {target} HTTP/1.1\r\n");
        for h in hosts {
            r.push_str(&format!("Host: {h}\r\n"));
        }
        r.push_str(&auth);
        r.push_str("\r\n");
        r
    };
    let cases = [
        (get("/api/sessions", &[&host]), 200),
        (get("/api/sessions", &[&host, &host]), 403),
        (get("/api/sessions", &[&host, "evil.example"]), 403),
        (get("/api/sessions", &["evil.example", &host]), 403),
        (get("http://evil.example/api/sessions", &[&host]), 403),
        (
            get(&format!("http://evil.example:{}/", live.addr.port()), &[&host]),
            403,
        ),
        (get(&format!("http://{host}/api/sessions"), &[&host]), 200),
        (
            get(
                &format!("http://localhost:{}/api/sessions", live.addr.port()),
                &[&host],
            ),
            200,
        ),
    ];
    for (request, want) in cases {
        let answer = raw(live.addr, &request).await;
        assert_eq!(raw_status(&answer), want, "{request}\n{answer}");
        if want == 403 {
            assert!(answer.contains("\"refused\""), "{answer}");
        }
    }
    live.stop().await;
}
