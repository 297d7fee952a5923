//! [`Server`]: binds the address, makes the token and the page's key, serves the application
//! (through [`crate::listen`]'s accept loop, within [`ConnectionLimits`]) until told to stop, then
//! closes every session (running turns cancelled cleanly, leases released) before it returns.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use retrace_control::Service;
use retrace_protocol::ModelSpec;
use tokio::net::TcpListener;

use crate::error::ServerError;
use crate::listen::ConnectionLimits;
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
    /// Whether `model` was asked for (`serve --model`/`--base-url`): it then wins over the model
    /// a session's log records; otherwise a session keeps its own and `model` is the fallback.
    pub model_wins: bool,
    /// Turns a request's `model` into a model.
    pub resolve: ModelResolver,
    /// The connection cap and the header read timeout (`ConnectionLimits::default()`).
    pub limits: ConnectionLimits,
}

/// A bound server, not yet serving.
pub struct Server {
    listener: TcpListener,
    addr: SocketAddr,
    url_host: String,
    token: String,
    registry: Arc<Registry>,
    guard: Arc<Guard>,
    limits: ConnectionLimits,
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
        let guard = Arc::new(Guard::new(token.clone(), &url_host, addr.port())?);
        let registry = Arc::new(
            Registry::new(service, opts.workspace, opts.model, opts.resolve).model_wins(opts.model_wins),
        );
        Ok(Server {
            listener,
            addr,
            url_host,
            token,
            registry,
            guard,
            limits: opts.limits,
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
            query_value(&self.token)
        )
    }

    /// Serves until `stop` completes; then closes every session (cancelling running turns, which
    /// end cleanly and release their leases), stops accepting, lets open connections finish
    /// (event streams end with their sessions) for at most `DRAIN`, and returns.
    pub async fn run(self, stop: impl Future<Output = ()> + Send + 'static) {
        let app = crate::app::router(self.registry.clone(), self.guard.clone());
        let connections = crate::listen::serve(self.listener, app, self.limits);
        stop.await;
        self.registry.shutdown().await;
        connections.drain(DRAIN).await;
        // A session opened by a request that raced the stop is closed too.
        self.registry.shutdown().await;
    }
}

/// `value` as a query value: every byte but letters, digits and `-._~` percent-encoded (a
/// `RETRACE_TOKEN` may hold `+`, `&`, `#` or `%`).
fn query_value(value: &str) -> String {
    value
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
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
    fn tokens_are_percent_encoded_in_the_address() {
        assert_eq!(query_value("abc-1.2_3~"), "abc-1.2_3~");
        assert_eq!(query_value("a+b&c#d%e"), "a%2Bb%26c%23d%25e");
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
