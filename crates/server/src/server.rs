//! [`Server`]: binds the address, makes the token, serves the application until told to stop,
//! then closes every session (running turns cancelled cleanly, leases released) before it
//! returns.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use retrace_control::Service;
use retrace_protocol::ModelSpec;
use tokio::net::TcpListener;

use crate::error::ServerError;
use crate::registry::{ModelResolver, Registry};
use crate::security::Guard;

/// How long open connections may take to finish once the sessions are closed.
const DRAIN: Duration = Duration::from_secs(5);

/// How to serve.
#[derive(Clone)]
pub struct ServeOptions {
    /// The address to listen on: an IP address or `localhost` (default `127.0.0.1`).
    pub host: String,
    /// The port; 0 picks a free one.
    pub port: u16,
    /// Required for a host that is not a loopback address.
    pub allow_remote: bool,
    /// The token (`RETRACE_TOKEN`); `None`: a random one.
    pub token: Option<String>,
    /// The workspace of sessions created without one.
    pub workspace: PathBuf,
    /// The model sessions get when they open.
    pub model: Option<ModelSpec>,
    /// Turns a request's `model` into a model.
    pub resolve: ModelResolver,
}

/// A bound server, not yet serving.
pub struct Server {
    listener: TcpListener,
    addr: SocketAddr,
    url_host: String,
    token: String,
    registry: Arc<Registry>,
    guard: Arc<Guard>,
}

/// A token of 128 random bits from the OS, as 32 hex digits.
pub fn random_token() -> Result<String, ServerError> {
    let mut bytes = [0u8; 16];
    getrandom::getrandom(&mut bytes).map_err(|e| ServerError::Random(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn check_token(t: &str) -> Result<(), ServerError> {
    let ok = (16..=256).contains(&t.len())
        && t.bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b';' | b',' | b'"' | b'\\'));
    if ok {
        Ok(())
    } else {
        Err(ServerError::BadToken)
    }
}

/// The IP address of `host` and how URLs write it.
fn resolve_host(host: &str) -> Result<(IpAddr, String), ServerError> {
    if host.eq_ignore_ascii_case("localhost") {
        return Ok((IpAddr::V4(Ipv4Addr::LOCALHOST), "localhost".to_string()));
    }
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let ip: IpAddr = bare.parse().map_err(|_| ServerError::BadHost {
        host: host.to_string(),
    })?;
    let shown = match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    };
    Ok((ip, shown))
}

impl Server {
    /// Binds `opts.host:opts.port` for `service`'s sessions.
    pub async fn bind(service: Service, opts: ServeOptions) -> Result<Server, ServerError> {
        let (ip, url_host) = resolve_host(&opts.host)?;
        if !ip.is_loopback() && !opts.allow_remote {
            return Err(ServerError::RemoteNotAllowed { host: opts.host });
        }
        let token = match opts.token {
            Some(t) => {
                check_token(&t)?;
                t
            }
            None => random_token()?,
        };
        let want = SocketAddr::new(ip, opts.port);
        let listener = TcpListener::bind(want)
            .await
            .map_err(|source| ServerError::Bind {
                addr: want.to_string(),
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| ServerError::Bind {
            addr: want.to_string(),
            source,
        })?;
        let guard = Arc::new(Guard::new(token.clone(), &url_host, addr.port()));
        let registry = Arc::new(Registry::new(service, opts.workspace, opts.model, opts.resolve));
        Ok(Server {
            listener,
            addr,
            url_host,
            token,
            registry,
            guard,
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// `http://HOST:PORT/?token=TOKEN`: what opens the web UI.
    pub fn url(&self) -> String {
        format!(
            "http://{}:{}/?token={}",
            self.url_host,
            self.addr.port(),
            self.token
        )
    }

    /// Serves until `stop` completes; then closes every session (cancelling running turns, which
    /// end cleanly and release their leases), lets open connections finish (event streams end
    /// with their sessions) and returns.
    pub async fn run(self, stop: impl Future<Output = ()> + Send + 'static) -> Result<(), ServerError> {
        let app = crate::app::router(self.registry.clone(), self.guard.clone());
        let (drain_tx, drain_rx) = tokio::sync::oneshot::channel::<()>();
        let addr = self.addr;
        let server = axum::serve(self.listener, app).with_graceful_shutdown(async move {
            let _ = drain_rx.await;
        });
        let mut server = std::pin::pin!(std::future::IntoFuture::into_future(server));
        tokio::select! {
            r = &mut server => {
                self.registry.shutdown().await;
                return r.map_err(|source| ServerError::Serve { addr, source });
            }
            () = stop => {}
        }
        self.registry.shutdown().await;
        let _ = drain_tx.send(());
        let drained = tokio::time::timeout(DRAIN, &mut server).await;
        // A session opened by a request that raced the stop is closed too.
        self.registry.shutdown().await;
        match drained {
            Ok(r) => r.map_err(|source| ServerError::Serve { addr, source }),
            Err(_) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_long_enough() {
        let (a, b) = (random_token().unwrap(), random_token().unwrap());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
        check_token(&a).unwrap();
        assert!(check_token("short").is_err());
        assert!(check_token(&format!("{a};x")).is_err());
        assert!(check_token(&format!("{a} x")).is_err());
    }

    #[test]
    fn hosts_are_ip_addresses_or_localhost() {
        assert_eq!(resolve_host("127.0.0.1").unwrap().1, "127.0.0.1");
        assert_eq!(resolve_host("::1").unwrap().1, "[::1]");
        assert_eq!(resolve_host("[::1]").unwrap().1, "[::1]");
        assert_eq!(resolve_host("LocalHost").unwrap().1, "localhost");
        assert!(resolve_host("example.com").is_err());
    }
}
