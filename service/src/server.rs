//! The service: a Unix socket, a thread per connection (and one writing its results), a thread
//! per device. [`Service::start`] returns once the socket listens; [`Service::stop`] drains the
//! work accepted so far, answers it, and closes.
//!
//! A connection is admitted or refused by the acceptor itself, from the peer's credentials,
//! before it costs a thread or a buffer: a peer no allow-list admits, one connection beyond
//! `max_clients`, or beyond its UID's share, is answered with an error and closed at once.

use super::access::{Access, Peer};
use super::device::{self, Device, DevicePacing};
use super::limits::{check_credit, ClientLimits, DeadlineStream};
use super::metrics_http::{MetricsEndpoint, MetricsServer};
use super::scheduler::{ClientId, Scheduler, WorkItem};
use super::socket::{SocketAccess, SocketFile};
use super::state::{ClientSlot, DeviceState, LoadedKey, Outcome, Shared, State};
use anyhow::{ensure, Context};
use ecrt_driver::backends::service::key_id;
use ecrt_driver::backends::service::protocol::{
    encode_results, KeyInfo, Request, RequestError, Response, MAX_BATCH, VERSION,
};
use ecrt_driver::item::ItemError;
use ecrt_golden::PrivateKey;
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Write};
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
    /// Connections, per UID and in all, and the deadlines a client must meet.
    pub limits: ClientLimits,
    /// UIDs that may see the status and metrics without being on a key's allow-list (root and
    /// the service's own user always may).
    pub status_uids: Vec<u32>,
    /// Longest a key's work waits while every device holds another key.
    pub key_switch_wait: Duration,
    /// Where to serve the metrics over HTTP, if anywhere.
    pub metrics: Option<MetricsEndpoint>,
}

/// An open connection: a handle on its socket (to close it on stop), its thread and its user.
struct Open {
    stream: UnixStream,
    thread: JoinHandle<()>,
    uid: u32,
}

type Connections = Arc<Mutex<HashMap<ClientId, Open>>>;

/// A running service.
pub struct Service {
    shared: Arc<Shared>,
    socket: PathBuf,
    socket_file: SocketFile,
    acceptor: Option<JoinHandle<()>>,
    devices: Vec<JoinHandle<()>>,
    connections: Connections,
    metrics: Option<MetricsServer>,
}

impl Service {
    /// Binds the socket and starts the devices. A stale socket file (nobody listening) is
    /// replaced; a live one is refused.
    pub fn start(config: ServiceConfig) -> anyhow::Result<Service> {
        ensure!(!config.keys.is_empty(), "the service needs at least one key (--key)");
        ensure!(!config.devices.is_empty(), "the service needs at least one device");
        check_credit(config.client_credit)?;
        config.limits.check()?;
        let keys: Vec<LoadedKey> = config
            .keys
            .into_iter()
            .map(|k| LoadedKey { id: key_id(k.key.public().n()), key: k.key, access: k.access })
            .collect();
        for (i, key) in keys.iter().enumerate() {
            ensure!(!keys[..i].iter().any(|k| k.id == key.id), "the key {} is given twice", key.id);
        }
        let socket_access = SocketAccess { mode: config.socket_mode, group: config.socket_group };
        let (listener, socket_file) = SocketFile::bind(&config.socket, socket_access)?;
        let devices = config.devices.iter().map(|d| DeviceState::new(d.name.clone())).collect();
        let scheduler = Scheduler::new(keys.len(), config.devices.len(), config.key_switch_wait);
        let state = State::new(scheduler, devices, keys.len());
        let shared = Arc::new(Shared::new(
            keys,
            state,
            config.socket.display().to_string(),
            config.client_credit,
            config.limits,
            config.status_uids,
        ));
        let mut service = Service {
            shared: shared.clone(),
            socket: config.socket,
            socket_file,
            acceptor: None,
            devices: Vec::new(),
            connections: Default::default(),
            metrics: None,
        };
        // On an error from here on, dropping `service` stops what started and removes the socket.
        if let Some(endpoint) = config.metrics {
            service.metrics = Some(MetricsServer::start(endpoint, shared.clone(), socket_access)?);
        }
        for key in &shared.keys {
            tracing::info!(key = %key.id, bits = key.public().bits(), restricted = !key.access.is_open(), "key loaded");
        }
        for (index, device) in config.devices.into_iter().enumerate() {
            let (shared, pacing) = (shared.clone(), config.pacing);
            let thread = std::thread::Builder::new()
                .name(format!("device {index}"))
                .spawn(move || device::run(shared, index, device, pacing))
                .context("cannot start a device thread")?;
            service.devices.push(thread);
        }
        let acceptor = {
            let (shared, connections) = (shared.clone(), service.connections.clone());
            std::thread::Builder::new()
                .name("accept".into())
                .spawn(move || accept(listener, shared, connections))
                .context("cannot start the thread that accepts connections")?
        };
        service.acceptor = Some(acceptor);
        tracing::info!(socket = %service.socket.display(), "listening");
        Ok(service)
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Where the metrics are served over TCP, if they are.
    pub fn metrics_address(&self) -> Option<std::net::SocketAddr> {
        self.metrics.as_ref().and_then(MetricsServer::tcp_address)
    }

    /// The status `ecrt status` shows.
    pub fn status(&self) -> ecrt_driver::backends::service::ServiceStatus {
        self.shared.status()
    }

    /// Stops accepting connections and work (the socket file goes at once), finishes and
    /// answers the work accepted so far, and closes every connection.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if self.shared.stopping() {
            return;
        }
        tracing::info!("stopping: draining the work in flight");
        {
            // Under the lock: a thread that checked `stopping` is already waiting, and is woken.
            let _state = self.shared.lock();
            self.shared.stopping.store(true, Ordering::SeqCst);
        }
        self.shared.work.notify_all();
        self.shared.space.notify_all();
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
        self.socket_file.remove();
        for device in self.devices.drain(..) {
            let _ = device.join();
        }
        // Every accepted item is answered now; give the writers a moment to send the answers.
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline && self.shared.lock().clients.values().any(|c| c.unanswered > 0 && !c.gone) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let connections: Vec<_> = self.connections.lock().expect("connections").drain().collect();
        for (_, open) in connections {
            let _ = open.stream.shutdown(std::net::Shutdown::Both);
            let _ = open.thread.join();
        }
        if let Some(metrics) = self.metrics.take() {
            metrics.stop();
        }
        tracing::info!("stopped");
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn accept(listener: UnixListener, shared: Arc<Shared>, connections: Connections) {
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
        let accepted = Instant::now();
        let Ok(peer) = Peer::of(&stream) else { continue };
        if let Some(refusal) = admission(&shared, &connections, &peer) {
            answer_and_close(stream, refusal);
            continue;
        }
        let _ = stream.set_nonblocking(false);
        let id = NEXT_CLIENT.fetch_add(1, Ordering::Relaxed);
        shared.lock().counters.connections += 1;
        let Ok(handle) = stream.try_clone() else { continue };
        let uid = peer.uid;
        let thread = {
            let (shared, connections, stream) = (shared.clone(), connections.clone(), handle);
            std::thread::Builder::new().name(format!("client {id}")).spawn(move || {
                Connection::serve(shared, stream, id, peer, accepted);
                connections.lock().expect("connections").remove(&id);
            })
        };
        match thread {
            Ok(thread) => {
                connections.lock().expect("connections").insert(id, Open { stream, thread, uid });
            }
            Err(e) => {
                tracing::error!(uid, "cannot start a thread for a connection: {e}");
                shared.lock().counters.turned_away += 1;
                answer_and_close(
                    stream,
                    RequestError::Unavailable(format!(
                        "the service cannot start a thread for this connection ({e}): try again later"
                    )),
                );
            }
        }
    }
}

/// Why `peer` is not served now, if it is not: no allow-list admits it, or the service or the
/// peer's UID has all the connections it may have. Counted and logged (at most a line a second).
fn admission(shared: &Shared, connections: &Connections, peer: &Peer) -> Option<RequestError> {
    let limits = &shared.limits;
    let refusal = if !shared.admits(peer) {
        shared.lock().counters.refused_connections += 1;
        RequestError::Denied(format!("UID {} (GID {}) may not use this ecrt service", peer.uid, peer.gid))
    } else {
        let (serving, of_uid) = {
            let mut connections = connections.lock().expect("connections");
            // A thread that ended before its entry went in left the entry behind: drop those first.
            connections.retain(|_, open| !open.thread.is_finished());
            (connections.len(), connections.values().filter(|open| open.uid == peer.uid).count())
        };
        let why = if serving >= limits.max_clients {
            format!(
                "the service serves {} clients at once and all are connected: try again when one has finished",
                limits.max_clients
            )
        } else if of_uid >= limits.max_clients_per_uid.min(limits.max_clients) {
            format!(
                "UID {} has {} connections open, the most one user may have: try again when one has finished",
                peer.uid, limits.max_clients_per_uid
            )
        } else {
            return None;
        };
        shared.lock().counters.turned_away += 1;
        RequestError::Unavailable(why)
    };
    if let Some(left_out) = shared.log_limiter().allow(Instant::now()) {
        tracing::warn!(uid = peer.uid, gid = peer.gid, pid = peer.pid, left_out, "connection refused: {refusal}");
    }
    Some(refusal)
}

/// Answers a connection it will not serve with `error` and closes it, without a thread or a
/// buffer: the frame is small enough for the socket's own buffer, and a client reads it whether
/// or not its Hello was read.
fn answer_and_close(stream: UnixStream, error: RequestError) {
    let _ = stream.set_nonblocking(true);
    let _ = (&stream).write_all(&Response::Error(error).encode());
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

/// Why no request came.
enum ReadFailure {
    /// The deadline for the request's first byte passed (Hello's, or an idle connection's).
    Waited(Duration),
    /// A frame began but did not end within the frame deadline.
    Trickled,
    Malformed(String),
    /// The connection failed or was shut down.
    Gone,
}

impl Connection {
    fn serve(shared: Arc<Shared>, stream: UnixStream, id: ClientId, peer: Peer, accepted: Instant) {
        tracing::debug!(client = id, uid = peer.uid, pid = peer.pid, "connected");
        // A client that reads nothing for this long is dropped rather than waited on.
        let _ = stream.set_write_timeout(Some(shared.limits.write));
        let Ok(read_half) = stream.try_clone() else { return };
        let mut reader = BufReader::with_capacity(64 << 10, DeadlineStream::new(read_half));
        let mut connection =
            Connection { shared, id, peer, out: Arc::new(Mutex::new(stream)), opened: None, next_seq: 0 };
        let clean_end = connection.converse(&mut reader, accepted);
        // An end of stream is a client done submitting (it may still read) or one that closed or died.
        let hung_up = peer_hung_up(reader.get_ref().get_ref());
        let out = connection.out.clone();
        connection.finish(clean_end && !hung_up);
        // Closed now, whoever else holds a descriptor of it (the acceptor's handle, until it
        // sees this thread has ended).
        let _ = out.lock().expect("the connection's writer").shutdown(std::net::Shutdown::Both);
    }

    fn reply(&self, response: Response) -> bool {
        let mut out = self.out.lock().expect("the connection's writer");
        out.write_all(&response.encode()).is_ok()
    }

    /// The next request: its first byte by `first_byte` (`None`: no limit), and the whole frame
    /// within the frame deadline from there, and by `last_byte`.
    fn next_request(
        &self,
        reader: &mut BufReader<DeadlineStream>,
        first_byte: Option<Instant>,
        last_byte: Option<Instant>,
    ) -> Result<Option<Request>, ReadFailure> {
        let timed_out = |e: &std::io::Error| e.kind() == std::io::ErrorKind::TimedOut;
        if reader.buffer().is_empty() {
            let waited = Instant::now();
            reader.get_mut().deadline = first_byte;
            match reader.fill_buf() {
                Ok([]) => return Ok(None),
                Ok(_) => {}
                Err(e) if timed_out(&e) => return Err(ReadFailure::Waited(waited.elapsed())),
                Err(_) => return Err(ReadFailure::Gone),
            }
        }
        let frame_end = Instant::now() + self.shared.limits.frame;
        reader.get_mut().deadline = Some(last_byte.map_or(frame_end, |last| last.min(frame_end)));
        match Request::read(reader) {
            Ok(request) => Ok(request),
            Err(e) if timed_out(&e) => Err(ReadFailure::Trickled),
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => Err(ReadFailure::Malformed(e.to_string())),
            Err(_) => Err(ReadFailure::Gone),
        }
    }

    /// Answers why the connection is closed, counts it and logs it (at most a line a second).
    fn close_with(&self, failure: ReadFailure) {
        let error = match failure {
            ReadFailure::Gone => return,
            ReadFailure::Waited(waited) => RequestError::Unavailable(format!(
                "no request came for {:.0} s: the service closed the connection",
                waited.as_secs_f64()
            )),
            ReadFailure::Trickled => RequestError::Unavailable(format!(
                "a request took longer than {:.0} s to arrive: the service closed the connection",
                self.shared.limits.frame.as_secs_f64()
            )),
            ReadFailure::Malformed(why) => RequestError::Malformed(why),
        };
        if matches!(error, RequestError::Unavailable(_)) {
            self.shared.lock().counters.timed_out += 1;
            tracing::debug!(client = self.id, uid = self.peer.uid, "{error}");
        } else if let Some(left_out) = self.shared.log_limiter().allow(Instant::now()) {
            tracing::warn!(client = self.id, uid = self.peer.uid, left_out, "closed: {error}");
        }
        self.reply(Response::Error(error));
    }

    /// Answers requests until the client closes the connection (true) or it fails (false).
    fn converse(&mut self, reader: &mut BufReader<DeadlineStream>, accepted: Instant) -> bool {
        let hello_by = accepted + self.shared.limits.handshake;
        match self.next_request(reader, Some(hello_by), Some(hello_by)) {
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
            Ok(Some(_)) => {
                self.close_with(ReadFailure::Malformed("the first request must be Hello".into()));
                return false;
            }
            Err(failure) => {
                self.close_with(failure);
                return false;
            }
        }
        loop {
            // An application with a key open may idle between batches; a connection without one may not.
            let idle_until = match (&self.opened, self.shared.limits.idle) {
                (None, Some(idle)) => Some(Instant::now() + idle),
                _ => None,
            };
            let request = match self.next_request(reader, idle_until, None) {
                Ok(Some(request)) => request,
                Ok(None) => return true,
                Err(failure) => {
                    self.close_with(failure);
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
                Request::Status => {
                    let status = serde_json::to_string(&self.shared.status()).expect("a status serializes");
                    self.reply(Response::Status(status))
                }
                Request::Metrics => self.reply(Response::Metrics(self.shared.metrics())),
                Request::Open { key_id } => self.open(&key_id),
                Request::Submit { ciphertexts } => self.submit(ciphertexts),
            };
            if !ok {
                return false;
            }
        }
    }

    /// Opens a key for this connection. A refusal closes the connection: a client refused once
    /// is refused again, and each attempt would cost a log line.
    fn open(&mut self, key_id: &str) -> bool {
        if self.opened.is_some() {
            return self.reply(Response::Error(RequestError::Malformed("a connection opens one key".into())));
        }
        let Some(key) = self.shared.key_index(key_id) else {
            return self.reply(Response::Error(RequestError::UnknownKey(key_id.to_string())));
        };
        if !self.shared.keys[key].access.allows(&self.peer) {
            self.shared.lock().counters.refusals += 1;
            if let Some(left_out) = self.shared.log_limiter().allow(Instant::now()) {
                tracing::warn!(
                    client = self.id,
                    uid = self.peer.uid,
                    gid = self.peer.gid,
                    pid = self.peer.pid,
                    key = key_id,
                    left_out,
                    "refused: not on the key's allow-list"
                );
            }
            self.reply(Response::Error(RequestError::Denied(format!(
                "UID {} (GID {}) may not decrypt under key {key_id}",
                self.peer.uid, self.peer.gid
            ))));
            return false;
        }
        let (results, outcomes) = mpsc::channel();
        self.shared.lock().clients.insert(self.id, ClientSlot::new(key, self.peer.clone(), results));
        let writer = {
            let (shared, out, id) = (self.shared.clone(), self.out.clone(), self.id);
            std::thread::Builder::new()
                .name(format!("client {id} results"))
                .spawn(move || write_results(shared, id, out, outcomes))
        };
        let writer = match writer {
            Ok(writer) => writer,
            Err(e) => {
                self.shared.lock().clients.remove(&self.id);
                tracing::error!(client = self.id, uid = self.peer.uid, "cannot start a result writer: {e}");
                self.reply(Response::Error(RequestError::Unavailable(format!(
                    "the service cannot start a thread for this client ({e}): try again later"
                ))));
                return false;
            }
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
            } else if let Err(why) = ecrt_driver::api::check_range(public, &ciphertext) {
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
