//! The metrics over HTTP, for a Prometheus server to scrape: `GET /metrics`, on a TCP address the
//! operator names or on a Unix socket (`unix:PATH`). Just enough HTTP/1.1 for that: one request
//! per connection, each on a thread of its own (a few at once), bounded in size and in time as a
//! whole, so that a slow client never holds up a scrape.
//!
//! On a Unix socket, the socket file has the service socket's mode and group, and the peer must
//! be one the service admits (`Shared::admits`); anyone who reaches a TCP address reads it.

use super::access::Peer;
use super::socket::{SocketAccess, SocketFile};
use super::state::Shared;
use anyhow::Context;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Requests answered at once; one more is closed unanswered.
const MAX_REQUESTS: usize = 4;
/// The whole of a request, from its connection to the last byte of its answer.
const REQUEST_TIME: Duration = Duration::from_secs(2);
/// The longest request head read.
const MAX_HEAD_BYTES: usize = 8192;

/// Where the metrics are served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MetricsEndpoint {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

impl FromStr for MetricsEndpoint {
    type Err = String;

    /// `HOST:PORT` (e.g. `127.0.0.1:9464`), or `unix:PATH`.
    fn from_str(text: &str) -> Result<Self, String> {
        match text.strip_prefix("unix:") {
            Some("") => Err("unix: needs the socket's path, e.g. unix:/run/ecrt/metrics.sock".into()),
            Some(path) => Ok(MetricsEndpoint::Unix(path.into())),
            None => text.parse().map(MetricsEndpoint::Tcp).map_err(|_| {
                format!("the metrics endpoint is HOST:PORT (e.g. 127.0.0.1:9464) or unix:PATH, not {text:?}")
            }),
        }
    }
}

/// A running metrics endpoint.
pub struct MetricsServer {
    endpoint: MetricsEndpoint,
    socket_file: Option<SocketFile>,
}

impl MetricsServer {
    /// Serves the metrics at `endpoint` (TCP port 0 picks a free port); a Unix socket gets `access`.
    pub fn start(endpoint: MetricsEndpoint, shared: Arc<Shared>, access: SocketAccess) -> anyhow::Result<Self> {
        let busy = Arc::new(AtomicUsize::new(0));
        let spawn = |name: &str, body: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new().name(name.into()).spawn(body).context("cannot start the metrics thread")
        };
        match endpoint {
            MetricsEndpoint::Tcp(address) => {
                let listener =
                    TcpListener::bind(address).with_context(|| format!("cannot serve the metrics at {address}"))?;
                let address = listener.local_addr()?;
                tracing::info!(%address, "metrics at http://{address}/metrics");
                spawn("metrics", Box::new(move || serve_tcp(listener, shared, busy)))?;
                Ok(MetricsServer { endpoint: MetricsEndpoint::Tcp(address), socket_file: None })
            }
            MetricsEndpoint::Unix(path) => {
                let (listener, file) = SocketFile::bind(&path, access)?;
                tracing::info!(socket = %path.display(), "metrics at unix:{}", path.display());
                spawn("metrics", Box::new(move || serve_unix(listener, shared, busy)))?;
                Ok(MetricsServer { endpoint: MetricsEndpoint::Unix(path), socket_file: Some(file) })
            }
        }
    }

    pub fn tcp_address(&self) -> Option<SocketAddr> {
        match self.endpoint {
            MetricsEndpoint::Tcp(address) => Some(address),
            MetricsEndpoint::Unix(_) => None,
        }
    }

    /// Wakes the listening thread, which sees the service stopping, and removes the socket file.
    pub fn stop(self) {
        match &self.endpoint {
            MetricsEndpoint::Tcp(address) => drop(TcpStream::connect(address)),
            MetricsEndpoint::Unix(path) => drop(UnixStream::connect(path)),
        }
        if let Some(file) = self.socket_file {
            file.remove();
        }
    }
}

/// A stream whose reads and writes can be bounded in time.
trait Timed: Read + Write + Send + 'static {
    fn set_timeouts(&self, left: Duration) -> std::io::Result<()>;
}

impl Timed for TcpStream {
    fn set_timeouts(&self, left: Duration) -> std::io::Result<()> {
        self.set_read_timeout(Some(left))?;
        self.set_write_timeout(Some(left))
    }
}

impl Timed for UnixStream {
    fn set_timeouts(&self, left: Duration) -> std::io::Result<()> {
        self.set_read_timeout(Some(left))?;
        self.set_write_timeout(Some(left))
    }
}

fn serve_tcp(listener: TcpListener, shared: Arc<Shared>, busy: Arc<AtomicUsize>) {
    for stream in listener.incoming().flatten() {
        if shared.stopping() {
            break;
        }
        dispatch(stream, &shared, &busy, true);
    }
}

fn serve_unix(listener: UnixListener, shared: Arc<Shared>, busy: Arc<AtomicUsize>) {
    for stream in listener.incoming().flatten() {
        if shared.stopping() {
            break;
        }
        let admitted = Peer::of(&stream).is_ok_and(|peer| shared.admits(&peer));
        dispatch(stream, &shared, &busy, admitted);
    }
}

/// Answers the request on a thread of its own, unless [`MAX_REQUESTS`] are being answered.
fn dispatch(stream: impl Timed, shared: &Arc<Shared>, busy: &Arc<AtomicUsize>, admitted: bool) {
    if busy.fetch_add(1, Ordering::SeqCst) >= MAX_REQUESTS {
        busy.fetch_sub(1, Ordering::SeqCst);
        return;
    }
    let (shared, done) = (shared.clone(), busy.clone());
    let answered = std::thread::Builder::new().name("metrics request".into()).spawn(move || {
        let _ = answer(stream, &shared, admitted);
        done.fetch_sub(1, Ordering::SeqCst);
    });
    if answered.is_err() {
        busy.fetch_sub(1, Ordering::SeqCst);
    }
}

fn answer(mut stream: impl Timed, shared: &Shared, admitted: bool) -> std::io::Result<()> {
    let deadline = Instant::now() + REQUEST_TIME;
    let left = || {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            Err(std::io::Error::from(std::io::ErrorKind::TimedOut))
        } else {
            Ok(left)
        }
    };
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD_BYTES {
        stream.set_timeouts(left()?)?;
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let request_line = String::from_utf8_lossy(&head).lines().next().unwrap_or_default().to_string();
    let (status, content_type, body) = match request_line.split_whitespace().take(2).collect::<Vec<_>>()[..] {
        _ if !admitted => ("403 Forbidden", "text/plain", "this user may not read the ecrt service's metrics\n".into()),
        ["GET", "/metrics"] => ("200 OK", "text/plain; version=0.0.4", shared.metrics()),
        ["GET", _] => ("404 Not Found", "text/plain", "the metrics are at /metrics\n".to_string()),
        _ => ("400 Bad Request", "text/plain", "GET /metrics\n".to_string()),
    };
    stream.set_timeouts(left()?)?;
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_an_address_or_a_unix_socket() {
        assert_eq!("127.0.0.1:9464".parse(), Ok(MetricsEndpoint::Tcp("127.0.0.1:9464".parse().unwrap())));
        assert_eq!("unix:/run/m.sock".parse(), Ok(MetricsEndpoint::Unix("/run/m.sock".into())));
        assert!("unix:".parse::<MetricsEndpoint>().is_err());
        assert!("localhost".parse::<MetricsEndpoint>().unwrap_err().contains("HOST:PORT"));
    }
}
