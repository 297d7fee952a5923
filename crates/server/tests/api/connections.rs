//! The accept loop's limits on a real socket: a request's headers must come within the header
//! timeout (an idle keep-alive connection is closed by it too, an event stream is not), and at
//! the connection cap the next connection is served only once one closes.

use std::time::{Duration, Instant};

use retrace_server::ConnectionLimits;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::http::{raw_status, Live, SseReader};
use crate::support::{writes, TOKEN};

fn limits(max_connections: usize, header_timeout: Duration) -> ConnectionLimits {
    ConnectionLimits {
        max_connections,
        header_timeout,
        write_timeout: ConnectionLimits::WRITE_TIMEOUT,
    }
}

/// A keep-alive `GET /api/sessions` of `live`.
fn list_request(live: &Live) -> String {
    format!(
        "GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {TOKEN}\r\n\r\n",
        live.addr.port()
    )
}

/// Reads one answer with a `Content-Length` off `tcp`.
async fn read_answer(tcp: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    loop {
        let text = String::from_utf8_lossy(&buf).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .expect("no Content-Length");
            if buf.len() >= end + 4 + length {
                return text;
            }
        }
        let mut chunk = [0u8; 4096];
        let n = tokio::time::timeout(Duration::from_secs(10), tcp.read(&mut chunk))
            .await
            .expect("no answer within 10 s")
            .unwrap();
        assert!(n > 0, "closed before the answer ended: {text}");
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Waits (at most 10 s) until the server closes `tcp`; how long that took. Nothing may come.
async fn closed(tcp: &mut TcpStream) -> Duration {
    let start = Instant::now();
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut rest))
        .await
        .expect("the connection is still open after 10 s");
    // A reset is a close too.
    if read.is_ok() {
        assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
    }
    start.elapsed()
}

/// Found by review: ~20k connections each sending half a request exhausted file descriptors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_a_request_is_closed_after_the_header_timeout() {
    let live = Live::start_with(vec![], limits(8, Duration::from_millis(400))).await;
    let mut tcp = TcpStream::connect(live.addr).await.unwrap();
    let half = format!(
        "GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n",
        live.addr.port()
    );
    tcp.write_all(half.as_bytes()).await.unwrap();
    let took = closed(&mut tcp).await;
    assert!(took >= Duration::from_millis(300), "closed too early: {took:?}");
    // A connection that sends nothing at all is closed too.
    let mut silent = TcpStream::connect(live.addr).await.unwrap();
    closed(&mut silent).await;
    live.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_keep_alive_connection_is_closed_after_the_header_timeout() {
    let live = Live::start_with(vec![], limits(8, Duration::from_millis(400))).await;
    let mut tcp = TcpStream::connect(live.addr).await.unwrap();
    for _ in 0..2 {
        // Requests that come in time are answered on the one connection.
        tcp.write_all(list_request(&live).as_bytes()).await.unwrap();
        assert_eq!(raw_status(&read_answer(&mut tcp).await), 200);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let took = closed(&mut tcp).await;
    assert!(took >= Duration::from_millis(200), "closed too early: {took:?}");
    live.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_stream_outlives_the_header_timeout() {
    let live = Live::start_with(writes("a.txt", "a\n"), limits(8, Duration::from_millis(300))).await;
    let id = live.create().await;
    let res = live
        .get(&format!("/api/sessions/{id}/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let mut events = SseReader::new(res);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (s, v) =
        Live::json(live.post(&format!("/api/sessions/{id}/messages"), json!({"prompt": "go"}))).await;
    assert_eq!(s, 202, "{v}");
    let frames = events.until_turn_finished().await;
    assert_eq!(frames[0].event.as_deref(), Some("turn_started"));
    drop(events);
    live.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_cap_the_next_connection_waits_until_one_closes() {
    let live = Live::start_with(vec![], limits(2, Duration::from_secs(30))).await;
    // Two connections, each answered once and kept open.
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut tcp = TcpStream::connect(live.addr).await.unwrap();
        tcp.write_all(list_request(&live).as_bytes()).await.unwrap();
        assert_eq!(raw_status(&read_answer(&mut tcp).await), 200);
        held.push(tcp);
    }
    // The third is not served while they are open.
    let mut third = TcpStream::connect(live.addr).await.unwrap();
    third.write_all(list_request(&live).as_bytes()).await.unwrap();
    let mut byte = [0u8; 1];
    let early = tokio::time::timeout(Duration::from_millis(700), third.read(&mut byte)).await;
    assert!(early.is_err(), "served beyond the cap: {early:?}");
    // One closes: the third is served.
    drop(held.remove(0));
    assert_eq!(raw_status(&read_answer(&mut third).await), 200);
    drop(third);
    drop(held);
    live.stop().await;
}

/// Found by attack: a client that pipelines requests for the page's script and never reads kept
/// its connection (and its slot under the cap) forever; the header timeout never ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_reads_loses_its_connection_and_its_slot() {
    let mut l = limits(1, Duration::from_secs(30));
    l.write_timeout = Duration::from_millis(500);
    let live = Live::start_with(vec![], l).await;
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stalled = socket.connect(live.addr).await.unwrap();
    // The page's largest file, asked for until the answers (8 MB) are more than the sockets hold.
    let (path, largest) = retrace_web::FILES
        .iter()
        .max_by_key(|(_, a)| a.bytes.len())
        .unwrap();
    let one = format!(
        "GET /assets/{path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n",
        live.addr.port()
    );
    let times = 8_000_000 / largest.bytes.len() + 1;
    stalled.write_all(one.repeat(times).as_bytes()).await.unwrap();
    // The only slot is taken; once the stalled writes time out, the next client is served.
    let start = Instant::now();
    let mut next = TcpStream::connect(live.addr).await.unwrap();
    next.write_all(list_request(&live).as_bytes()).await.unwrap();
    assert_eq!(raw_status(&read_answer(&mut next).await), 200);
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(300),
        "served before the stall ended: {took:?}"
    );
    drop(stalled);
    live.stop().await;
}
