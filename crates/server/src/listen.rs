//! The accept loop: each connection is served by hyper's HTTP/1 with a header read timeout, and
//! at most [`ConnectionLimits::max_connections`] are open at once (docs/API.md "Connections").
//!
//! `axum::serve` has neither: a client that opens connections and sends half a request on each
//! keeps every one of them (and a file descriptor) for as long as it likes. Here a connection
//! holds one permit of a semaphore from its accept to its close; at the cap the loop stops
//! accepting (the kernel's backlog holds new connections, then refuses them) until one closes.
//!
//! The timeout is hyper's `header_read_timeout` (hyper 1.12, `proto/h1/conn.rs`): it runs while
//! the head of a request is awaited, which is from the connection's start and again from the end
//! of each answer, so a keep-alive connection left idle is closed by it too. It does not run
//! while an answer is written: an event stream, which has sent its request, lives on. A request
//! body that arrives slowly is not timed out (the cap bounds how many can). A write of an answer
//! that waits for the client to read longer than `write_timeout` fails, and the connection closes
//! ([`crate::stall`]): a client that pipelines requests and never reads cannot keep its slot.
//!
//! Stopping: the loop stops accepting (the listener is closed), every connection is asked to
//! finish the answer it is writing and close, and [`Connections::drain`] waits until every
//! permit is back (every connection closed) or the time given ran out.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};

use crate::stall::WriteDeadline;

/// Limits on the server's connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// The most connections open at once (at least 1). At the cap, no connection is accepted
    /// until one closes.
    pub max_connections: usize,
    /// How long a client may take to send a request's headers, counted from the connection's
    /// start or from the end of the previous answer (so an idle keep-alive connection is closed
    /// after it too). The connection is closed without an answer.
    pub header_timeout: Duration,
    /// How long a write of an answer may wait for the client to read (a client that reads
    /// nothing while the server writes is closed after it; a reading client is never cut).
    pub write_timeout: Duration,
}

impl ConnectionLimits {
    /// 256 connections.
    pub const MAX_CONNECTIONS: usize = 256;
    /// 10 seconds.
    pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
    /// 30 seconds.
    pub const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
}

impl Default for ConnectionLimits {
    fn default() -> ConnectionLimits {
        ConnectionLimits {
            max_connections: ConnectionLimits::MAX_CONNECTIONS,
            header_timeout: ConnectionLimits::HEADER_TIMEOUT,
            write_timeout: ConnectionLimits::WRITE_TIMEOUT,
        }
    }
}

/// The connections of a running accept loop.
pub(crate) struct Connections {
    permits: Arc<Semaphore>,
    /// How many permits there are (all of them back: no connection is open).
    cap: u32,
    /// Set to true when the server stops.
    stop: watch::Sender<bool>,
    accepting: tokio::task::JoinHandle<()>,
}

/// Accepts connections on `listener` and serves `app` on each, within `limits`, until
/// [`Connections::drain`].
pub(crate) fn serve(listener: TcpListener, app: Router, limits: ConnectionLimits) -> Connections {
    let cap = u32::try_from(limits.max_connections.max(1)).unwrap_or(u32::MAX);
    let permits = Arc::new(Semaphore::new(cap as usize));
    let (stop, stopped) = watch::channel(false);
    let accepting = tokio::spawn(accept(listener, app, limits, permits.clone(), stopped));
    Connections {
        permits,
        cap,
        stop,
        accepting,
    }
}

impl Connections {
    /// Stops accepting, asks every open connection to finish its answer and close, and waits
    /// until all have closed or `within` has passed.
    pub(crate) async fn drain(self, within: Duration) {
        self.stop.send_replace(true);
        let _ = self.accepting.await;
        let _ = tokio::time::timeout(within, self.permits.acquire_many(self.cap)).await;
    }
}

/// Resolves once the server stops (or its sender is gone).
async fn stopped(rx: &mut watch::Receiver<bool>) {
    let _ = rx.wait_for(|stop| *stop).await;
}

async fn accept(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    permits: Arc<Semaphore>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        // A permit first: at the cap, nothing is accepted until a connection closes.
        let permit = tokio::select! {
            p = permits.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => return,
            },
            () = stopped(&mut stop) => return,
        };
        let tcp = tokio::select! {
            r = listener.accept() => match r {
                Ok((tcp, _)) => tcp,
                Err(e) => {
                    // Out of file descriptors or the like: wait a little rather than spin.
                    if !is_connection_error(&e) {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    continue;
                }
            },
            () = stopped(&mut stop) => return,
        };
        tokio::spawn(connection(tcp, app.clone(), limits, stop.clone(), permit));
    }
}

/// An error of one connection (the next accept may succeed at once).
fn is_connection_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}

/// Serves one connection until it closes; `_permit` goes back then.
async fn connection(
    tcp: TcpStream,
    app: Router,
    limits: ConnectionLimits,
    mut stop: watch::Receiver<bool>,
    _permit: OwnedSemaphorePermit,
) {
    // Events are small writes that must not wait for the previous one's acknowledgement.
    let _ = tcp.set_nodelay(true);
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let io = TokioIo::new(WriteDeadline::new(tcp, limits.write_timeout));
    let conn = builder.serve_connection(io, TowerToHyperService::new(app));
    let mut conn = std::pin::pin!(conn);
    tokio::select! {
        // An error here is the client's (it went away, sent garbage, or was too slow).
        _ = conn.as_mut() => {}
        () = stopped(&mut stop) => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}
