//! The metrics over HTTP, for a Prometheus server to scrape: `GET /metrics` on a loopback
//! address. Just enough HTTP/1.1 for that: one request per connection, bounded in size and time.

use super::state::Shared;
use anyhow::{ensure, Context};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

/// Serves the metrics at `address` (a loopback address: the metrics name keys and devices);
/// returns the address bound (port 0 picks a free port).
pub fn start(address: SocketAddr, shared: Arc<Shared>) -> anyhow::Result<SocketAddr> {
    ensure!(address.ip().is_loopback(), "the metrics listen on a loopback address only, not {address}");
    let listener = TcpListener::bind(address).with_context(|| format!("cannot serve the metrics at {address}"))?;
    let address = listener.local_addr()?;
    tracing::info!(%address, "metrics at http://{address}/metrics");
    std::thread::Builder::new().name("metrics".into()).spawn(move || {
        for stream in listener.incoming().flatten() {
            if shared.stopping() {
                break;
            }
            let _ = answer(stream, &shared);
        }
    })?;
    Ok(address)
}

fn answer(mut stream: TcpStream, shared: &Shared) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 8192 {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let request_line = String::from_utf8_lossy(&head).lines().next().unwrap_or_default().to_string();
    let (status, content_type, body) = match request_line.split_whitespace().take(2).collect::<Vec<_>>()[..] {
        ["GET", "/metrics"] => ("200 OK", "text/plain; version=0.0.4", shared.metrics()),
        ["GET", _] => ("404 Not Found", "text/plain", "the metrics are at /metrics\n".to_string()),
        _ => ("400 Bad Request", "text/plain", "GET /metrics\n".to_string()),
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}
