//! What one client may hold of the service: connections (in all and per UID) and time (to say
//! Hello, between requests, to send a frame, to take what is written to it). Every limit bounds
//! something a careless or hostile local user could otherwise keep from the others: a thread, a
//! buffer, a slot.

use anyhow::ensure;
use std::io::{self, Read};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// The most items a client may be credited with: the credit travels as a `u32`, and each item
/// held costs the service about a kilobyte at 2048 bits.
pub const MAX_CLIENT_CREDIT: usize = 1 << 20;
/// The most connections a service serves at once (each costs a thread, two with a key open).
pub const MAX_CLIENTS: usize = 1 << 16;

/// The limits on clients, as `ecrt serve` is configured with them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientLimits {
    /// Connections served at once; one more is answered with an error and closed.
    pub max_clients: usize,
    /// Connections one UID may hold at once (`max_clients` if that is fewer).
    pub max_clients_per_uid: usize,
    /// From the connection to the end of `Hello`.
    pub handshake: Duration,
    /// Between two requests of a connection with no key open (`None`: no limit). A connection
    /// with a key open is an application that decrypts now and then: it is not timed out.
    pub idle: Option<Duration>,
    /// From a frame's first byte to its last.
    pub frame: Duration,
    /// Longest a write to a client may block: a client that reads nothing for this long is dropped.
    pub write: Duration,
}

impl Default for ClientLimits {
    fn default() -> Self {
        ClientLimits {
            max_clients: 256,
            max_clients_per_uid: 64,
            handshake: Duration::from_secs(5),
            idle: Some(Duration::from_secs(60)),
            frame: Duration::from_secs(10),
            write: Duration::from_secs(60),
        }
    }
}

impl ClientLimits {
    /// Refuses limits that would truncate or shut everyone out.
    pub fn check(&self) -> anyhow::Result<()> {
        ensure!(
            (1..=MAX_CLIENTS).contains(&self.max_clients),
            "the most clients (--max-clients) must be 1 to {MAX_CLIENTS}, not {}",
            self.max_clients
        );
        ensure!(self.max_clients_per_uid >= 1, "the most clients per UID (--max-clients-per-uid) must be positive");
        for (what, limit) in [("--handshake-timeout", self.handshake), ("--frame-timeout", self.frame)] {
            ensure!(!limit.is_zero(), "{what} must be positive");
        }
        ensure!(!self.write.is_zero(), "--write-timeout must be positive");
        Ok(())
    }
}

/// Refuses a client credit outside 1 to [`MAX_CLIENT_CREDIT`].
pub fn check_credit(credit: usize) -> anyhow::Result<()> {
    ensure!(
        (1..=MAX_CLIENT_CREDIT).contains(&credit),
        "the client queue (--client-queue) must hold 1 to {MAX_CLIENT_CREDIT} items, not {credit}"
    );
    Ok(())
}

/// A connection's socket as its reader sees it: no read waits past `deadline`, however the bytes
/// trickle in (a read timeout alone restarts with every byte).
pub struct DeadlineStream {
    stream: UnixStream,
    pub deadline: Option<Instant>,
}

impl DeadlineStream {
    pub fn new(stream: UnixStream) -> Self {
        DeadlineStream { stream, deadline: None }
    }

    pub fn get_ref(&self) -> &UnixStream {
        &self.stream
    }
}

impl Read for DeadlineStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = match self.deadline {
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(io::ErrorKind::TimedOut.into());
                }
                Some(left)
            }
            None => None,
        };
        self.stream.set_read_timeout(left)?;
        match self.stream.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Err(io::ErrorKind::TimedOut.into()),
            other => other,
        }
    }
}

/// At most one log line a second for events a hostile client can repeat at will (refused and
/// turned-away connections); the lines left out are counted into the next.
#[derive(Default)]
pub struct LogLimiter {
    last: Option<Instant>,
    left_out: u64,
}

impl LogLimiter {
    /// Whether to log now, with how many lines were left out since the last one.
    pub fn allow(&mut self, now: Instant) -> Option<u64> {
        if self.last.is_some_and(|last| now.duration_since(last) < Duration::from_secs(1)) {
            self.left_out += 1;
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.left_out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn limits_out_of_range_are_refused_clearly() {
        ClientLimits::default().check().unwrap();
        let per_uid = ClientLimits { max_clients_per_uid: 0, ..Default::default() };
        assert!(per_uid.check().unwrap_err().to_string().contains("--max-clients-per-uid"));
        let none = ClientLimits { max_clients: 0, ..Default::default() };
        assert!(none.check().unwrap_err().to_string().contains("--max-clients"));
        check_credit(4096).unwrap();
        for credit in [0, MAX_CLIENT_CREDIT + 1, 1 << 32] {
            let message = check_credit(credit).unwrap_err().to_string();
            assert!(message.contains("--client-queue") && message.contains(&credit.to_string()), "{message}");
        }
    }

    #[test]
    fn a_trickle_of_bytes_does_not_extend_the_deadline() {
        let (mut client, server) = UnixStream::pair().unwrap();
        let writer = std::thread::spawn(move || {
            for _ in 0..20 {
                if client.write_all(b"x").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let mut stream = DeadlineStream::new(server);
        let start = Instant::now();
        stream.deadline = Some(start + Duration::from_millis(300));
        let mut buf = [0u8; 64];
        let error = std::iter::repeat_with(|| stream.read(&mut buf)).find_map(Result::err).unwrap();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert!(start.elapsed() < Duration::from_millis(900), "{:?}", start.elapsed());
        drop(stream);
        writer.join().unwrap();
    }

    #[test]
    fn the_log_limiter_counts_what_it_leaves_out() {
        let mut limiter = LogLimiter::default();
        let t0 = Instant::now();
        assert_eq!(limiter.allow(t0), Some(0));
        assert_eq!(limiter.allow(t0 + Duration::from_millis(10)), None);
        assert_eq!(limiter.allow(t0 + Duration::from_millis(20)), None);
        assert_eq!(limiter.allow(t0 + Duration::from_secs(2)), Some(2));
    }
}
