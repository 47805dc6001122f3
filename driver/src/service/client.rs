//! The client side: [`ServiceClient`] asks a service for its keys, a public key, its status or
//! its metrics, and opens a key as a [`crate::engine::Engine`] that `BackendSpec::Service` runs
//! under a [`crate::api::Decryptor`]: the caller's thread sends the submissions ([`Submitter`]),
//! a reader thread takes the results in order.

use super::protocol::{encode_submit, KeyInfo, Request, RequestError, Response, MAX_BATCH, VERSION};
use super::server::key_id;
use crate::engine::{Engine, Event, Job, JobSink};
use ecrt_golden::PublicKey;
use std::io::{BufReader, BufWriter, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

/// A connection to a service, before a key is opened.
pub struct ServiceClient {
    socket: PathBuf,
    reader: BufReader<UnixStream>,
    writer: UnixStream,
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
    /// Connects and agrees on the protocol version.
    pub fn connect(socket: &Path) -> Result<Self, ServiceError> {
        let name = socket.display().to_string();
        let stream =
            UnixStream::connect(socket).map_err(|cause| ServiceError::Connect { socket: name.clone(), cause })?;
        let writer = stream.try_clone().map_err(|cause| ServiceError::Io { socket: name.clone(), cause })?;
        let mut client = ServiceClient {
            socket: socket.to_path_buf(),
            reader: BufReader::new(stream),
            writer,
            service: String::new(),
        };
        match client.ask(Request::Hello { version: VERSION })? {
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

    fn ask(&mut self, request: Request) -> Result<Response, ServiceError> {
        let name = self.name();
        self.writer.write_all(&request.encode()).map_err(|cause| ServiceError::Io { socket: name, cause })?;
        match Response::read(&mut self.reader) {
            Ok(Some(response)) => Ok(response),
            Ok(None) => Err(ServiceError::Closed { socket: self.name() }),
            Err(cause) => Err(ServiceError::Io { socket: self.name(), cause }),
        }
    }

    /// The service's keys.
    pub fn keys(&mut self) -> Result<Vec<KeyInfo>, ServiceError> {
        match self.ask(Request::Keys)? {
            Response::Keys(keys) => Ok(keys),
            other => Err(self.unexpected(&other)),
        }
    }

    /// The public key of the service's key `key_id`.
    pub fn public_key(&mut self, key_id: &str) -> Result<PublicKey, ServiceError> {
        match self.ask(Request::PublicKey { key_id: key_id.to_string() })? {
            Response::PublicKey { n } => PublicKey::new(n)
                .map_err(|_| ServiceError::Unexpected { socket: self.name(), what: "an unusable modulus" }),
            other => Err(self.unexpected(&other)),
        }
    }

    /// The service's status (JSON, as `ecrt status --json` prints it).
    pub fn status(&mut self) -> Result<serde_json::Value, ServiceError> {
        match self.ask(Request::Status)? {
            Response::Status(text) => serde_json::from_str(&text)
                .map_err(|_| ServiceError::Unexpected { socket: self.name(), what: "a status that is not JSON" }),
            other => Err(self.unexpected(&other)),
        }
    }

    /// The service's metrics, in Prometheus's text format.
    pub fn metrics(&mut self) -> Result<String, ServiceError> {
        match self.ask(Request::Metrics)? {
            Response::Metrics(text) => Ok(text),
            other => Err(self.unexpected(&other)),
        }
    }

    /// Opens the service's key for `public` (by its id) and returns the engine that decrypts
    /// under it, with the service's credit (items it holds for this client at most).
    pub fn open(mut self, public: &PublicKey) -> Result<(Engine, u32), ServiceError> {
        let key_id = key_id(public.n());
        let credit = match self.ask(Request::Open { key_id: key_id.clone() })? {
            Response::Opened { n, credit } if &n == public.n() => credit,
            Response::Opened { .. } => return Err(ServiceError::WrongKey { key_id }),
            other => return Err(self.unexpected(&other)),
        };
        let name = self.name();
        let (event_tx, events) = mpsc::channel();
        let (ticket_tx, ticket_rx) = mpsc::channel::<Vec<u64>>();
        let stopper = self.writer.try_clone().map_err(|cause| ServiceError::Io { socket: name.clone(), cause })?;
        let reader = {
            let (reader, name) = (self.reader, name.clone());
            std::thread::Builder::new()
                .name("ecrt service reader".into())
                .spawn(move || read_results(reader, ticket_rx, event_tx, &name))
                .expect("spawn the service reader")
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
            Ok(None) => break format!("the ecrt service at {name} closed the connection (it stopped or restarted)"),
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
