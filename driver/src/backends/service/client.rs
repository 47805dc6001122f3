//! The client side: [`ServiceClient`] asks a service for its keys, a public key, its status or
//! its metrics, and opens a key as a [`crate::engine::Engine`] that `BackendSpec::Service` runs
//! under a [`crate::api::Decryptor`]: the caller's thread sends the submissions ([`Submitter`]),
//! a reader thread takes the results in order.

use super::key_id;
use super::protocol::{encode_submit, KeyInfo, Request, RequestError, Response, MAX_BATCH, VERSION};
use crate::engine::{Engine, Event, Job, JobSink};
use ecrt_golden::PublicKey;
use std::io::{BufReader, BufWriter, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long [`ServiceClient::connect`] waits for the service to accept and answer each request.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// A connection to a service, before a key is opened.
pub struct ServiceClient {
    socket: PathBuf,
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    /// How long a request waits for its answer (`None`: as long as it takes).
    timeout: Option<Duration>,
    /// What the service calls itself.
    pub service: String,
}

/// Why talking to the service failed.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("no ecrt service at {socket}: {cause} (is `ecrt serve --socket {socket}` running?)")]
    Connect { socket: String, cause: std::io::Error },
    #[error("the ecrt service at {socket} closed the connection")]
    Closed { socket: String },
    #[error("talking to the ecrt service at {socket}: {cause}")]
    Io { socket: String, cause: std::io::Error },
    #[error("the ecrt service at {socket} refused: {error}")]
    Refused { socket: String, error: RequestError },
    #[error(
        "the ecrt service at {socket} did not {what} within {seconds} s (is it stopped, overloaded or out of file descriptors?)"
    )]
    Timeout { socket: String, what: &'static str, seconds: f64 },
    #[error("the ecrt service at {socket} answered {what} unexpectedly")]
    Unexpected { socket: String, what: &'static str },
    #[error("the ecrt service's key {key_id} is not this public key (its modulus differs)")]
    WrongKey { key_id: String },
}

fn kind_of(response: &Response) -> &'static str {
    match response {
        Response::Welcome { .. } => "Welcome",
        Response::Keys(_) => "a key list",
        Response::PublicKey { .. } => "a public key",
        Response::Opened { .. } => "Opened",
        Response::Results(_) => "results",
        Response::Status(_) => "a status",
        Response::Metrics(_) => "metrics",
        Response::Error(_) => "an error",
    }
}

impl ServiceClient {
    /// Connects and agrees on the protocol version, waiting at most [`DEFAULT_TIMEOUT`] for each
    /// step.
    pub fn connect(socket: &Path) -> Result<Self, ServiceError> {
        Self::connect_within(socket, Some(DEFAULT_TIMEOUT))
    }

    /// Connects and agrees on the protocol version; the connection, and each request until a
    /// key is open, waits at most `timeout` (`None`: as long as it takes).
    pub fn connect_within(socket: &Path, timeout: Option<Duration>) -> Result<Self, ServiceError> {
        let name = socket.display().to_string();
        let io = |cause| ServiceError::Io { socket: name.clone(), cause };
        let stream = connect_by(socket, timeout.map(|t| Instant::now() + t)).map_err(|cause| {
            if cause.kind() == std::io::ErrorKind::TimedOut {
                ServiceError::Timeout { socket: name.clone(), what: "accept the connection", seconds: seconds(timeout) }
            } else {
                ServiceError::Connect { socket: name.clone(), cause }
            }
        })?;
        stream.set_read_timeout(timeout).map_err(io)?;
        stream.set_write_timeout(timeout).map_err(io)?;
        let writer = stream.try_clone().map_err(io)?;
        let mut client = ServiceClient {
            socket: socket.to_path_buf(),
            reader: BufReader::new(stream),
            writer,
            timeout,
            service: String::new(),
        };
        match client.ask(Request::Hello { version: VERSION }, "answer Hello")? {
            Response::Welcome { service, .. } => client.service = service,
            other => return Err(client.unexpected(&other)),
        }
        Ok(client)
    }

    fn name(&self) -> String {
        self.socket.display().to_string()
    }

    fn unexpected(&self, response: &Response) -> ServiceError {
        match response {
            Response::Error(error) => ServiceError::Refused { socket: self.name(), error: error.clone() },
            other => ServiceError::Unexpected { socket: self.name(), what: kind_of(other) },
        }
    }

    /// Sends `request` and reads the answer. A service that refuses a connection answers and
    /// closes it at once, maybe before the request arrives: its answer is read all the same.
    fn ask(&mut self, request: Request, what: &'static str) -> Result<Response, ServiceError> {
        let sent = self.writer.write_all(&request.encode());
        let failed = |client: &Self, cause: std::io::Error| match cause.kind() {
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
                ServiceError::Timeout { socket: client.name(), what, seconds: seconds(client.timeout) }
            }
            _ => ServiceError::Io { socket: client.name(), cause },
        };
        match Response::read(&mut self.reader) {
            Ok(Some(response)) => Ok(response),
            Ok(None) => Err(match sent {
                Err(cause) => failed(self, cause),
                Ok(()) => ServiceError::Closed { socket: self.name() },
            }),
            Err(cause) => Err(failed(self, sent.err().unwrap_or(cause))),
        }
    }

    /// The service's keys.
    pub fn keys(&mut self) -> Result<Vec<KeyInfo>, ServiceError> {
        match self.ask(Request::Keys, "answer Keys")? {
            Response::Keys(keys) => Ok(keys),
            other => Err(self.unexpected(&other)),
        }
    }

    /// The public key of the service's key `key_id`.
    pub fn public_key(&mut self, key_id: &str) -> Result<PublicKey, ServiceError> {
        match self.ask(Request::PublicKey { key_id: key_id.to_string() }, "send the public key")? {
            Response::PublicKey { n } => PublicKey::new(n)
                .map_err(|_| ServiceError::Unexpected { socket: self.name(), what: "an unusable modulus" }),
            other => Err(self.unexpected(&other)),
        }
    }

    /// The service's status (as `ecrt status` prints it).
    pub fn status(&mut self) -> Result<super::ServiceStatus, ServiceError> {
        match self.ask(Request::Status, "send its status")? {
            Response::Status(text) => serde_json::from_str(&text)
                .map_err(|_| ServiceError::Unexpected { socket: self.name(), what: "a status it cannot read" }),
            other => Err(self.unexpected(&other)),
        }
    }

    /// The service's metrics, in Prometheus's text format.
    pub fn metrics(&mut self) -> Result<String, ServiceError> {
        match self.ask(Request::Metrics, "send its metrics")? {
            Response::Metrics(text) => Ok(text),
            other => Err(self.unexpected(&other)),
        }
    }

    /// Opens the service's key for `public` (by its id) and returns the engine that decrypts
    /// under it, with the service's credit (items it holds for this client at most).
    pub fn open(mut self, public: &PublicKey) -> Result<(Engine, u32), ServiceError> {
        let key_id = key_id(public.n());
        let credit = match self.ask(Request::Open { key_id: key_id.clone() }, "open the key")? {
            Response::Opened { n, credit } if &n == public.n() => credit,
            Response::Opened { .. } => return Err(ServiceError::WrongKey { key_id }),
            other => return Err(self.unexpected(&other)),
        };
        let name = self.name();
        // From here on the reader waits for results as long as the decryptor lets it, and the
        // submitter's writes wait for credit.
        let io = |cause| ServiceError::Io { socket: name.clone(), cause };
        self.writer.set_read_timeout(None).map_err(io)?;
        self.writer.set_write_timeout(None).map_err(io)?;
        let (event_tx, events) = mpsc::channel();
        let (ticket_tx, ticket_rx) = mpsc::channel::<Vec<u64>>();
        let stopper = self.writer.try_clone().map_err(|cause| ServiceError::Io { socket: name.clone(), cause })?;
        let reader = {
            let (reader, name) = (self.reader, name.clone());
            std::thread::Builder::new()
                .name("ecrt service reader".into())
                .spawn(move || read_results(reader, ticket_rx, event_tx, &name))
                .map_err(io)?
        };
        let stop = Box::new(move || {
            let _ = stopper.shutdown(std::net::Shutdown::Both);
        });
        let description = format!("the ecrt service at {name} ({}), key {key_id}", self.service);
        let submitter =
            Submitter { out: BufWriter::with_capacity(256 << 10, self.writer), tickets: ticket_tx, broken: false };
        Ok((Engine::new("service", description, submitter, events, vec![reader], Some(stop)), credit))
    }
}

/// Sends each batch of jobs as `Submit` frames on the caller's thread, after telling the reader
/// their tickets. The service reads whatever a client sends within its credit, which the
/// decryptor's queue never exceeds, so a write does not wait on results.
struct Submitter {
    out: BufWriter<UnixStream>,
    tickets: mpsc::Sender<Vec<u64>>,
    /// The socket failed: the reader reports it (after the results still on their way), and the
    /// jobs sent since are answered by that failure.
    broken: bool,
}

impl JobSink for Submitter {
    /// Always `true`: a failed socket is reported by the reader (see `broken`).
    fn send(&mut self, jobs: Vec<Job>) -> bool {
        if self.broken {
            return true;
        }
        let mut send = || -> std::io::Result<()> {
            for chunk in jobs.chunks(MAX_BATCH) {
                if self.tickets.send(chunk.iter().map(|j| j.ticket).collect()).is_err() {
                    return Err(std::io::ErrorKind::BrokenPipe.into());
                }
                self.out.write_all(&encode_submit(chunk.iter().map(|j| &j.ciphertext)))?;
            }
            self.out.flush()
        };
        self.broken = send().is_err();
        true
    }
}

/// Pairs each result with the next ticket sent, in order.
fn read_results(
    mut reader: BufReader<UnixStream>,
    tickets: mpsc::Receiver<Vec<u64>>,
    events: mpsc::Sender<Vec<Event>>,
    name: &str,
) {
    let mut pending: std::collections::VecDeque<u64> = Default::default();
    let failure = loop {
        let results = match Response::read(&mut reader) {
            Ok(Some(Response::Results(results))) => results,
            Ok(Some(Response::Error(error))) => break format!("the ecrt service at {name} refused: {error}"),
            Ok(Some(_)) => break format!("the ecrt service at {name} answered out of turn"),
            // A service that dies with requests unread resets the connection rather than closing
            // it: the same event for the client.
            Ok(None) => break format!("the ecrt service at {name} closed the connection (it stopped or restarted)"),
            Err(e)
                if matches!(e.kind(), std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::ConnectionAborted) =>
            {
                break format!("the ecrt service at {name} closed the connection (it stopped or restarted)")
            }
            Err(e) => break format!("the ecrt service at {name} failed: {e}"),
        };
        let mut done = Vec::with_capacity(results.len());
        for result in results {
            if pending.is_empty() {
                pending.extend(tickets.try_iter().flatten());
            }
            if pending.is_empty() {
                // The writer tells the tickets before it sends: a result always has one.
                match tickets.recv() {
                    Ok(more) => pending.extend(more),
                    Err(_) => return,
                }
            }
            let ticket = pending.pop_front().expect("a ticket per result");
            done.push(Event::Done(ticket, result));
        }
        if events.send(done).is_err() {
            return;
        }
    };
    let _ = events.send(vec![Event::Failed(failure)]);
}

fn seconds(timeout: Option<Duration>) -> f64 {
    timeout.map_or(f64::INFINITY, |t| t.as_secs_f64())
}

/// Connects to `socket` without waiting in `connect(2)`: a service whose listen queue is full
/// (stopped, or out of file descriptors) makes it wait without end. Tried again until `deadline`.
fn connect_by(socket: &Path, deadline: Option<Instant>) -> std::io::Result<UnixStream> {
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: sockaddr_un is plain data; zeroed is a valid value.
    let mut address: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    address.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let path = socket.as_os_str().as_bytes();
    if path.len() >= address.sun_path.len() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "the socket's path is too long"));
    }
    for (to, from) in address.sun_path.iter_mut().zip(path) {
        *to = *from as libc::c_char;
    }
    let length = (std::mem::size_of::<libc::sa_family_t>() + path.len() + 1) as libc::socklen_t;
    loop {
        // SAFETY: socket(2) with constant arguments; the descriptor is owned at once.
        let fd =
            unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: fd is a new descriptor nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: address is a valid sockaddr_un of `length` bytes.
        let rc = unsafe { libc::connect(fd.as_raw_fd(), (&address as *const libc::sockaddr_un).cast(), length) };
        if rc == 0 {
            let stream = UnixStream::from(fd);
            stream.set_nonblocking(false)?;
            return Ok(stream);
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::WouldBlock {
            return Err(error);
        }
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
