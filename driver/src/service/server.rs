//! The service: a Unix socket, a thread per connection (and one writing its results), a thread
//! per device. [`Service::start`] returns once the socket listens; [`Service::stop`] drains the
//! work accepted so far, answers it, and closes.

use super::access::{self, Access, Peer};
use super::device::{self, Device, DevicePacing};
use super::protocol::{encode_results, KeyInfo, Request, RequestError, Response, MAX_BATCH, VERSION};
use super::scheduler::{ClientId, Scheduler, WorkItem};
use super::state::{ClientSlot, DeviceState, LoadedKey, Outcome, Shared, State};
use crate::item::ItemError;
use anyhow::{bail, ensure, Context};
use ecrt_golden::PrivateKey;
use std::collections::{HashMap, VecDeque};
use std::io::{BufReader, Write};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A key for the service, with who may decrypt under it.
pub struct ServiceKey {
    pub key: PrivateKey,
    pub access: Access,
}

/// Everything `ecrt serve` is configured with.
pub struct ServiceConfig {
    pub socket: PathBuf,
    /// The socket file's mode (who may connect), e.g. 0o660.
    pub socket_mode: u32,
    /// The socket file's group, if not the service user's.
    pub socket_group: Option<u32>,
    pub keys: Vec<ServiceKey>,
    pub devices: Vec<Device>,
    pub pacing: DevicePacing,
    /// Items the service holds per client (accepted, not yet answered); beyond it, it stops reading.
    pub client_credit: usize,
    /// Connections served at once; one more is answered with an error and closed.
    pub max_clients: usize,
    /// Longest a key's work waits while every device holds another key.
    pub key_switch_wait: Duration,
    /// Where to serve the metrics over HTTP (loopback only).
    pub metrics: Option<std::net::SocketAddr>,
}

/// The open connections: a handle on each socket (to close it on stop) and its thread.
type Connections = Arc<Mutex<HashMap<ClientId, (UnixStream, JoinHandle<()>)>>>;

/// A running service.
pub struct Service {
    shared: Arc<Shared>,
    socket: PathBuf,
    acceptor: Option<JoinHandle<()>>,
    devices: Vec<JoinHandle<()>>,
    connections: Connections,
    metrics: Option<std::net::SocketAddr>,
}

/// The key id clients ask for: the first 8 bytes of SHA-256 over n's big-endian bytes, in hex.
pub fn key_id(n: &num_bigint::BigUint) -> String {
    let digest = openssl::sha::sha256(&n.to_bytes_be());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

impl Service {
    /// Binds the socket and starts the devices. A stale socket file (nobody listening) is
    /// replaced; a live one is refused.
    pub fn start(config: ServiceConfig) -> anyhow::Result<Service> {
        ensure!(!config.keys.is_empty(), "the service needs at least one key (--key)");
        ensure!(!config.devices.is_empty(), "the service needs at least one device");
        ensure!(config.client_credit >= 1, "the client queue must hold at least one item");
        let keys: Vec<LoadedKey> = config
            .keys
            .into_iter()
            .map(|k| LoadedKey { id: key_id(k.key.public().n()), key: k.key, access: k.access })
            .collect();
        for (i, key) in keys.iter().enumerate() {
            ensure!(!keys[..i].iter().any(|k| k.id == key.id), "the key {} is given twice", key.id);
        }
        let listener = bind(&config.socket)?;
        access::set_socket_access(&config.socket, config.socket_mode, config.socket_group)?;
        let devices = config.devices.iter().map(|d| DeviceState::new(d.name.clone())).collect();
        let scheduler = Scheduler::new(keys.len(), config.devices.len(), config.key_switch_wait);
        let state = State::new(scheduler, devices, keys.len());
        let shared = Arc::new(Shared {
            keys,
            state: Mutex::new(state),
            work: Default::default(),
            space: Default::default(),
            stopping: Default::default(),
            started: Instant::now(),
            socket: config.socket.display().to_string(),
            credit: config.client_credit,
        });
        let metrics =
            match config.metrics.map(|address| super::metrics_http::start(address, shared.clone())).transpose() {
                Ok(metrics) => metrics,
                Err(e) => {
                    let _ = std::fs::remove_file(&config.socket);
                    return Err(e);
                }
            };
        for key in &shared.keys {
            tracing::info!(key = %key.id, bits = key.public().bits(), restricted = !key.access.is_open(), "key loaded");
        }
        let devices = config
            .devices
            .into_iter()
            .enumerate()
            .map(|(index, device)| {
                let shared = shared.clone();
                let pacing = config.pacing;
                std::thread::Builder::new()
                    .name(format!("device {index}"))
                    .spawn(move || device::run(shared, index, device, pacing))
                    .expect("spawn a device thread")
            })
            .collect();
        let connections: Connections = Default::default();
        let acceptor = {
            let (shared, connections, max_clients) = (shared.clone(), connections.clone(), config.max_clients);
            std::thread::Builder::new()
                .name("accept".into())
                .spawn(move || accept(listener, shared, connections, max_clients))
                .expect("spawn the acceptor")
        };
        tracing::info!(socket = %config.socket.display(), "listening");
        Ok(Service { shared, socket: config.socket, acceptor: Some(acceptor), devices, connections, metrics })
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Where the metrics are served over HTTP, if they are.
    pub fn metrics_address(&self) -> Option<std::net::SocketAddr> {
        self.metrics
    }

    /// The status `ecrt status` shows.
    pub fn status(&self) -> serde_json::Value {
        self.shared.status()
    }

    /// Stops accepting connections and work, finishes and answers the work accepted so far,
    /// closes every connection and removes the socket file.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        let Some(acceptor) = self.acceptor.take() else { return };
        tracing::info!("stopping: draining the work in flight");
        self.shared.stopping.store(true, Ordering::SeqCst);
        self.shared.work.notify_all();
        self.shared.space.notify_all();
        let _ = acceptor.join();
        for device in self.devices.drain(..) {
            let _ = device.join();
        }
        // Every accepted item is answered now; give the writers a moment to send the answers.
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline && self.shared.lock().clients.values().any(|c| c.unanswered > 0 && !c.gone) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let connections: Vec<_> = self.connections.lock().expect("connections").drain().collect();
        for (_, (stream, thread)) in connections {
            let _ = stream.shutdown(std::net::Shutdown::Both);
            let _ = thread.join();
        }
        if let Some(address) = self.metrics {
            let _ = std::net::TcpStream::connect(address); // wakes the metrics thread, which sees the stop
        }
        let _ = std::fs::remove_file(&self.socket);
        tracing::info!("stopped");
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Listens at `path`, replacing a stale socket file and refusing a live one or another file.
fn bind(path: &Path) -> anyhow::Result<UnixListener> {
    if let Ok(metadata) = std::fs::symlink_metadata(path) {
        ensure!(metadata.file_type().is_socket(), "{} exists and is not a socket", path.display());
        if UnixStream::connect(path).is_ok() {
            bail!("another service is listening at {}", path.display());
        }
        std::fs::remove_file(path).with_context(|| format!("cannot replace the stale socket {}", path.display()))?;
    }
    UnixListener::bind(path).with_context(|| format!("cannot listen at {}", path.display()))
}

fn accept(listener: UnixListener, shared: Arc<Shared>, connections: Connections, max_clients: usize) {
    static NEXT_CLIENT: AtomicU64 = AtomicU64::new(1);
    listener.set_nonblocking(true).expect("a nonblocking listener");
    while !shared.stopping() {
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
            Err(e) => {
                tracing::warn!("accept failed: {e}");
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
        };
        let _ = stream.set_nonblocking(false);
        // A thread that ended before its entry went in left the entry behind: drop those first.
        let serving = {
            let mut connections = connections.lock().expect("connections");
            connections.retain(|_, (_, t)| !t.is_finished());
            connections.len()
        };
        if serving >= max_clients {
            shared.lock().counters.turned_away += 1;
            // On a thread of its own, bounded by its read timeout: a client that never says
            // Hello cannot hold up the acceptor.
            let _ = std::thread::Builder::new().name("turn away".into()).spawn(move || turn_away(stream, max_clients));
            continue;
        }
        let id = NEXT_CLIENT.fetch_add(1, Ordering::Relaxed);
        shared.lock().counters.connections += 1;
        let Ok(handle) = stream.try_clone() else { continue };
        let thread = {
            let (shared, connections) = (shared.clone(), connections.clone());
            std::thread::Builder::new().name(format!("client {id}")).spawn(move || {
                Connection::serve(shared, stream, id);
                connections.lock().expect("connections").remove(&id);
            })
        };
        if let Ok(thread) = thread {
            connections.lock().expect("connections").insert(id, (handle, thread));
        }
    }
}

/// Answers a connection beyond `max_clients` with an error (after its Hello, so that the client
/// reads it rather than a reset) and closes it.
fn turn_away(stream: UnixStream, max_clients: usize) {
    let uid = Peer::of(&stream).map(|peer| peer.uid).ok();
    tracing::warn!(uid, "turned a connection away: {max_clients} clients are connected already");
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let Ok(read_half) = stream.try_clone() else { return };
    if let Ok(Some(Request::Hello { .. })) = Request::read(&mut BufReader::new(read_half)) {
        let error = RequestError::Unavailable(format!(
            "the service serves {max_clients} clients at once and all are connected: try again when one has finished"
        ));
        let _ = (&stream).write_all(&Response::Error(error).encode());
    }
}

/// One client's connection.
struct Connection {
    shared: Arc<Shared>,
    id: ClientId,
    peer: Peer,
    /// Frames are written whole under this lock: replies from this thread, results from the writer.
    out: Arc<Mutex<UnixStream>>,
    /// The key opened, and the thread writing its results.
    opened: Option<(usize, JoinHandle<()>)>,
    next_seq: u64,
}

impl Connection {
    fn serve(shared: Arc<Shared>, stream: UnixStream, id: ClientId) {
        let peer = match Peer::of(&stream) {
            Ok(peer) => peer,
            Err(e) => {
                tracing::warn!(client = id, "cannot read the peer's credentials: {e}");
                return;
            }
        };
        tracing::debug!(client = id, uid = peer.uid, pid = peer.pid, "connected");
        let Ok(read_half) = stream.try_clone() else { return };
        let mut reader = BufReader::with_capacity(64 << 10, read_half);
        let mut connection =
            Connection { shared, id, peer, out: Arc::new(Mutex::new(stream)), opened: None, next_seq: 0 };
        let clean_end = connection.converse(&mut reader);
        // An end of stream is a client done submitting (it may still read) or one that closed or died.
        let hung_up = peer_hung_up(reader.get_ref());
        connection.finish(clean_end && !hung_up);
    }

    fn reply(&self, response: Response) -> bool {
        let mut out = self.out.lock().expect("the connection's writer");
        out.write_all(&response.encode()).is_ok()
    }

    /// Answers requests until the client closes the connection (true) or it fails (false).
    fn converse(&mut self, reader: &mut BufReader<UnixStream>) -> bool {
        match Request::read(reader) {
            Ok(Some(Request::Hello { version })) if version == VERSION => {
                let service = format!("ecrt {} ({} keys)", env!("CARGO_PKG_VERSION"), self.shared.keys.len());
                if !self.reply(Response::Welcome { version: VERSION, service }) {
                    return false;
                }
            }
            Ok(Some(Request::Hello { version })) => {
                self.reply(Response::Error(RequestError::Version { service: VERSION, client: version }));
                return true;
            }
            Ok(None) => return true,
            _ => {
                self.reply(Response::Error(RequestError::Malformed("the first request must be Hello".into())));
                return false;
            }
        }
        loop {
            let request = match Request::read(reader) {
                Ok(Some(request)) => request,
                Ok(None) => return true,
                Err(e) => {
                    if e.kind() == std::io::ErrorKind::InvalidData {
                        tracing::warn!(client = self.id, uid = self.peer.uid, "malformed request: {e}");
                        self.reply(Response::Error(RequestError::Malformed(e.to_string())));
                    }
                    return false;
                }
            };
            let ok = match request {
                Request::Hello { .. } => {
                    self.reply(Response::Error(RequestError::Malformed("Hello was sent twice".into())))
                }
                Request::Keys => self.reply(Response::Keys(
                    self.shared
                        .keys
                        .iter()
                        .map(|k| KeyInfo { key_id: k.id.clone(), bits: k.public().bits() as u32 })
                        .collect(),
                )),
                Request::PublicKey { key_id } => self.reply(match self.shared.key_index(&key_id) {
                    Some(k) => Response::PublicKey { n: self.shared.keys[k].public().n().clone() },
                    None => Response::Error(RequestError::UnknownKey(key_id)),
                }),
                Request::Status => self.reply(Response::Status(self.shared.status().to_string())),
                Request::Metrics => self.reply(Response::Metrics(self.shared.metrics())),
                Request::Open { key_id } => self.open(&key_id),
                Request::Submit { ciphertexts } => self.submit(ciphertexts),
            };
            if !ok {
                return false;
            }
        }
    }

    fn open(&mut self, key_id: &str) -> bool {
        if self.opened.is_some() {
            return self.reply(Response::Error(RequestError::Malformed("a connection opens one key".into())));
        }
        let Some(key) = self.shared.key_index(key_id) else {
            return self.reply(Response::Error(RequestError::UnknownKey(key_id.to_string())));
        };
        if !self.shared.keys[key].access.allows(&self.peer) {
            self.shared.lock().counters.refusals += 1;
            tracing::warn!(
                client = self.id,
                uid = self.peer.uid,
                gid = self.peer.gid,
                pid = self.peer.pid,
                key = key_id,
                "refused: not on the key's allow-list"
            );
            return self.reply(Response::Error(RequestError::Denied(format!(
                "UID {} (GID {}) may not decrypt under key {key_id}",
                self.peer.uid, self.peer.gid
            ))));
        }
        let (results, outcomes) = mpsc::channel();
        self.shared.lock().clients.insert(self.id, ClientSlot::new(key, self.peer.clone(), results));
        let writer = {
            let (shared, out, id) = (self.shared.clone(), self.out.clone(), self.id);
            std::thread::Builder::new()
                .name(format!("client {id} results"))
                .spawn(move || write_results(shared, id, out, outcomes))
                .expect("spawn a result writer")
        };
        self.opened = Some((key, writer));
        tracing::info!(client = self.id, uid = self.peer.uid, pid = self.peer.pid, key = key_id, "key opened");
        let n = self.shared.keys[key].public().n().clone();
        self.reply(Response::Opened { n, credit: self.shared.credit as u32 })
    }

    /// Queues the ciphertexts, waiting for credit as it runs out: while it waits, nothing more is
    /// read from the client, whose writes then block (back-pressure).
    fn submit(&mut self, ciphertexts: Vec<num_bigint::BigUint>) -> bool {
        let Some((key, _)) = self.opened else {
            return self.reply(Response::Error(RequestError::Malformed("Open a key before submitting".into())));
        };
        debug_assert!(ciphertexts.len() <= MAX_BATCH);
        let shared = self.shared.clone();
        let public = shared.keys[key].public();
        let mut state = shared.lock();
        for ciphertext in ciphertexts {
            loop {
                let slot = state.clients.get(&self.id).expect("an open connection has a slot");
                if slot.gone {
                    return false;
                }
                if slot.unanswered < shared.credit {
                    break;
                }
                state.flush(); // the refusals of this frame count against the credit too
                state = shared.wait(&shared.space, state);
            }
            let seq = self.next_seq;
            self.next_seq += 1;
            let slot = state.clients.get_mut(&self.id).expect("an open connection has a slot");
            slot.unanswered += 1;
            slot.submitted += 1;
            let refusal = if shared.stopping() {
                Some(ItemError::Lost("the service is shutting down".into()))
            } else if let Err(why) = crate::api::check_range(public, &ciphertext) {
                Some(ItemError::Invalid(why))
            } else {
                state.no_device_reason().map(ItemError::Lost)
            };
            match refusal {
                Some(error) => state.deliver(self.id, seq, Err(error)),
                None => {
                    let item = WorkItem { client: self.id, seq, ciphertext, attempts: 0, queued_at: Instant::now() };
                    state.scheduler.push(key, item, false);
                }
            }
        }
        state.flush();
        drop(state);
        shared.work.notify_all();
        true
    }

    /// The client is done: after a clean end, its accepted work is still answered; after a
    /// failure, its queued work is dropped.
    fn finish(mut self, clean_end: bool) {
        let Some((key, writer)) = self.opened.take() else { return };
        {
            let mut state = self.shared.lock();
            if !clean_end {
                drop_client(&mut state, key, self.id);
            }
            while state.clients.get(&self.id).is_some_and(|c| c.unanswered > 0 && !c.gone) {
                state = self.shared.wait(&self.shared.space, state);
            }
            drop_client(&mut state, key, self.id);
            state.clients.remove(&self.id);
        }
        let _ = writer.join();
        tracing::debug!(client = self.id, "disconnected");
    }
}

/// Whether the peer closed its end entirely (not only its writing half).
fn peer_hung_up(stream: &UnixStream) -> bool {
    use std::os::unix::io::AsRawFd;
    let mut poll = libc::pollfd { fd: stream.as_raw_fd(), events: 0, revents: 0 };
    // SAFETY: poll reads and writes the one pollfd it is given.
    let ready = unsafe { libc::poll(&mut poll, 1, 0) };
    ready > 0 && poll.revents & libc::POLLHUP != 0
}

/// Marks a client gone and drops its queued work.
fn drop_client(state: &mut State, key: usize, id: ClientId) {
    let dropped = state.scheduler.remove_client(key, id);
    if let Some(slot) = state.clients.get_mut(&id) {
        if !slot.gone && slot.unanswered > 0 {
            tracing::info!(
                client = id,
                uid = slot.peer.uid,
                dropped,
                "client gone mid-batch: its queued work is dropped"
            );
        }
        slot.gone = true;
    }
}

/// Writes a client's results in submission order, as they come (several to a frame when
/// several are ready). A failed write means the client is gone: its work is dropped.
fn write_results(shared: Arc<Shared>, id: ClientId, out: Arc<Mutex<UnixStream>>, outcomes: Receiver<Vec<Outcome>>) {
    let mut next = 0u64;
    // Outcome of item `next + k` at index k, once it has come.
    let mut waiting: VecDeque<Option<Result<num_bigint::BigUint, ItemError>>> = VecDeque::new();
    loop {
        let first = match outcomes.recv_timeout(Duration::from_millis(200)) {
            Ok(outcome) => outcome,
            Err(RecvTimeoutError::Timeout) => {
                if shared.lock().clients.get(&id).is_none_or(|c| c.gone) {
                    return;
                }
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => return,
        };
        for (seq, result) in first.into_iter().chain(outcomes.try_iter().flatten()) {
            // Each item is delivered once, after every item before `next` was written.
            let Some(k) = seq.checked_sub(next).map(|k| k as usize) else { continue };
            if waiting.len() <= k {
                waiting.resize_with(k + 1, || None);
            }
            waiting[k] = Some(result);
        }
        let mut ready = Vec::new();
        while let Some(Some(_)) = waiting.front() {
            ready.extend(waiting.pop_front().flatten());
            next += 1;
        }
        if ready.is_empty() {
            continue;
        }
        let written = ready.chunks(MAX_BATCH).all(|chunk| {
            let frame = encode_results(chunk.iter());
            out.lock().expect("the connection's writer").write_all(&frame).is_ok()
        });
        let mut state = shared.lock();
        if written {
            if let Some(slot) = state.clients.get_mut(&id) {
                slot.unanswered -= ready.len();
            }
        } else if let Some(key) = state.clients.get(&id).map(|c| c.key) {
            drop_client(&mut state, key, id);
        }
        drop(state);
        shared.space.notify_all();
        if !written {
            return;
        }
    }
}
