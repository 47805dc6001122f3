//! What the service's threads share: the keys, the scheduler, the clients' result channels, the
//! devices' states and the counters, behind one lock; and the status and metrics made from them.

use super::access::{Access, Peer};
use super::limits::{ClientLimits, LogLimiter};
use super::scheduler::{ClientId, Scheduler};
use ecrt_driver::backends::service::status::{
    ClientStatus, Counters, DeviceStatus, KeyStatus, LimitsStatus, ServiceStatus,
};
use ecrt_driver::item::ItemError;
use ecrt_golden::{PrivateKey, PublicKey};
use num_bigint::BigUint;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A key the service decrypts under.
pub struct LoadedKey {
    pub id: String,
    pub key: PrivateKey,
    pub access: Access,
}

impl LoadedKey {
    pub fn public(&self) -> &PublicKey {
        self.key.public()
    }
}

/// One item's outcome on its way to a client: its position in the client's stream and result.
pub type Outcome = (u64, Result<BigUint, ItemError>);

/// A connection that opened a key.
pub struct ClientSlot {
    pub key: usize,
    pub peer: Peer,
    /// Where the result writer takes outcomes, a batch at a time.
    pub results: Sender<Vec<Outcome>>,
    /// Outcomes delivered and not yet handed to the writer (see [`State::flush`]).
    outbox: Vec<Outcome>,
    /// Items accepted and not yet written back: bounded by the credit.
    pub unanswered: usize,
    pub submitted: u64,
    /// The connection failed (or was closed mid-batch): its work is dropped.
    pub gone: bool,
}

/// A device as the status shows it.
pub struct DeviceState {
    pub name: String,
    pub backend: &'static str,
    pub key: Option<usize>,
    pub up: bool,
    pub error: Option<String>,
    pub in_flight: usize,
    pub completed: u64,
    pub failures: u64,
    pub key_switches: u64,
    busy: Duration,
    busy_since: Option<Instant>,
}

impl DeviceState {
    pub fn new(name: String) -> Self {
        DeviceState {
            name,
            backend: "",
            key: None,
            up: false,
            error: None,
            in_flight: 0,
            completed: 0,
            failures: 0,
            key_switches: 0,
            busy: Duration::ZERO,
            busy_since: None,
        }
    }

    /// Records the items in flight; the device is busy while there are any.
    pub fn set_in_flight(&mut self, n: usize, now: Instant) {
        match (self.busy_since, n > 0) {
            (None, true) => self.busy_since = Some(now),
            (Some(since), false) => {
                self.busy += now - since;
                self.busy_since = None;
            }
            _ => {}
        }
        self.in_flight = n;
    }

    pub fn busy(&self, now: Instant) -> Duration {
        self.busy + self.busy_since.map_or(Duration::ZERO, |since| now - since)
    }

    /// Items answered per second of busy time, once the device has worked long enough to tell.
    pub fn rate(&self, now: Instant) -> Option<f64> {
        let busy = self.busy(now).as_secs_f64();
        (busy > 0.01 && self.completed > 0).then(|| self.completed as f64 / busy)
    }
}

pub struct State {
    pub scheduler: Scheduler,
    pub clients: HashMap<ClientId, ClientSlot>,
    pub devices: Vec<DeviceState>,
    /// Counts since the service started, as the status shows them.
    pub counters: Counters,
    /// Plaintexts delivered, per key.
    pub decryptions_per_key: Vec<u64>,
    /// Clients with outcomes in their outbox.
    dirty: Vec<ClientId>,
}

impl ClientSlot {
    pub fn new(key: usize, peer: Peer, results: Sender<Vec<Outcome>>) -> Self {
        ClientSlot { key, peer, results, outbox: Vec::new(), unanswered: 0, submitted: 0, gone: false }
    }
}

impl State {
    pub fn new(scheduler: Scheduler, devices: Vec<DeviceState>, keys: usize) -> Self {
        State {
            scheduler,
            clients: HashMap::new(),
            devices,
            counters: Counters::default(),
            decryptions_per_key: vec![0; keys],
            dirty: Vec::new(),
        }
    }

    /// Queues an item's outcome for its client, if it is still there; [`State::flush`] sends it.
    pub fn deliver(&mut self, client: ClientId, seq: u64, result: Result<BigUint, ItemError>) {
        let Some(slot) = self.clients.get_mut(&client) else { return };
        match &result {
            Ok(_) => {
                self.decryptions_per_key[slot.key] += 1;
                self.counters.decryptions += 1;
            }
            Err(e) => *self.counters.errors.entry(error_kind(e).to_string()).or_default() += 1,
        }
        if slot.outbox.is_empty() {
            self.dirty.push(client);
        }
        slot.outbox.push((seq, result));
    }

    /// Hands each client's delivered outcomes to its writer, one batch each: a writer wakes once
    /// per batch, not once per item.
    pub fn flush(&mut self) {
        for client in self.dirty.drain(..) {
            if let Some(slot) = self.clients.get_mut(&client) {
                let _ = slot.results.send(std::mem::take(&mut slot.outbox));
            }
        }
    }

    /// Why no device can take work, when none is up.
    pub fn no_device_reason(&self) -> Option<String> {
        if self.devices.iter().any(|d| d.up || d.error.is_none()) {
            return None;
        }
        let reasons: Vec<String> =
            self.devices.iter().map(|d| format!("{}: {}", d.name, d.error.as_deref().unwrap_or("down"))).collect();
        Some(format!("no working device ({})", reasons.join("; ")))
    }
}

/// The metric label of an item error's kind.
pub fn error_kind(error: &ItemError) -> &'static str {
    match error {
        ItemError::Invalid(_) => "invalid",
        ItemError::Status(_) => "status",
        ItemError::Corrupted(_) => "corrupted",
        ItemError::Backend(_) => "backend",
        ItemError::Timeout(_) => "timeout",
        ItemError::Lost(_) => "lost",
    }
}

/// Everything the service's threads share.
pub struct Shared {
    pub keys: Vec<LoadedKey>,
    pub state: Mutex<State>,
    /// Signalled when work is queued (devices wait on it).
    pub work: Condvar,
    /// Signalled when clients' results are written (readers waiting for credit wait on it).
    pub space: Condvar,
    pub stopping: AtomicBool,
    pub started: Instant,
    pub socket: String,
    pub credit: usize,
    pub limits: ClientLimits,
    /// UIDs admitted for the status and metrics alone.
    status_uids: Vec<u32>,
    /// The service's own user, which, like root, is always admitted.
    own_uid: u32,
    /// Log lines a client can cause, at most one a second.
    log_limiter: Mutex<LogLimiter>,
}

impl Shared {
    pub fn new(
        keys: Vec<LoadedKey>,
        state: State,
        socket: String,
        credit: usize,
        limits: ClientLimits,
        status_uids: Vec<u32>,
    ) -> Self {
        Shared {
            keys,
            state: Mutex::new(state),
            work: Condvar::new(),
            space: Condvar::new(),
            stopping: AtomicBool::new(false),
            started: Instant::now(),
            socket,
            credit,
            limits,
            status_uids,
            // SAFETY: geteuid cannot fail.
            own_uid: unsafe { libc::geteuid() },
            log_limiter: Mutex::new(LogLimiter::default()),
        }
    }

    /// Whether `peer` may use the service at all: a key's allow-list admits it (an open key
    /// admits everyone who can connect), or the status allow-list does, or it is root or the
    /// service's own user. Peers it does not admit are answered and closed at once, so they
    /// never see the status or hold a connection.
    pub fn admits(&self, peer: &Peer) -> bool {
        peer.uid == 0
            || peer.uid == self.own_uid
            || self.status_uids.contains(&peer.uid)
            || self.keys.iter().any(|key| key.access.allows(peer))
    }

    pub fn log_limiter(&self) -> MutexGuard<'_, LogLimiter> {
        self.log_limiter.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking thread must not take the service down with it: its state stays usable.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits on `condvar` (at most 100 ms, so that a stop is noticed) and takes the lock back.
    pub fn wait<'a>(&self, condvar: &Condvar, state: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        match condvar.wait_timeout(state, Duration::from_millis(100)) {
            Ok((state, _)) => state,
            Err(poisoned) => poisoned.into_inner().0,
        }
    }

    pub fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    pub fn key_index(&self, id: &str) -> Option<usize> {
        self.keys.iter().position(|k| k.id == id)
    }

    /// The status `ecrt status` shows.
    pub fn status(&self) -> ServiceStatus {
        let state = self.lock();
        let now = Instant::now();
        let key_name = |k: Option<usize>| k.map(|k| self.keys[k].id.clone());
        let keys = self
            .keys
            .iter()
            .enumerate()
            .map(|(k, key)| KeyStatus {
                id: key.id.clone(),
                bits: key.public().bits(),
                queued: state.scheduler.queued(k),
                clients: state.clients.values().filter(|c| c.key == k).count(),
                decryptions: state.decryptions_per_key[k],
                restricted: !key.access.is_open(),
            })
            .collect();
        let devices = state
            .devices
            .iter()
            .map(|d| DeviceStatus {
                name: d.name.clone(),
                backend: d.backend.to_string(),
                state: if d.up {
                    "up"
                } else if d.error.is_some() {
                    "failed"
                } else {
                    "starting"
                }
                .to_string(),
                key: key_name(d.key),
                in_flight: d.in_flight,
                completed: d.completed,
                busy_seconds: d.busy(now).as_secs_f64(),
                key_switches: d.key_switches,
                failures: d.failures,
                error: d.error.clone(),
            })
            .collect();
        let mut clients: Vec<_> = state
            .clients
            .iter()
            .map(|(id, c)| ClientStatus {
                id: *id,
                uid: c.peer.uid,
                pid: c.peer.pid,
                key: self.keys[c.key].id.clone(),
                submitted: c.submitted,
                unanswered: c.unanswered,
                queued: state.scheduler.queued_for(c.key, *id),
            })
            .collect();
        clients.sort_by_key(|c| c.id);
        ServiceStatus {
            service: concat!("ecrt ", env!("CARGO_PKG_VERSION")).to_string(),
            protocol: ecrt_driver::backends::service::protocol::VERSION,
            socket: self.socket.clone(),
            uptime_seconds: self.started.elapsed().as_secs_f64(),
            stopping: self.stopping(),
            credit: self.credit,
            limits: LimitsStatus {
                max_clients: self.limits.max_clients,
                max_clients_per_uid: self.limits.max_clients_per_uid,
                handshake_seconds: self.limits.handshake.as_secs_f64(),
                idle_seconds: self.limits.idle.map(|d| d.as_secs_f64()),
                frame_seconds: self.limits.frame.as_secs_f64(),
                write_seconds: self.limits.write.as_secs_f64(),
            },
            keys,
            devices,
            clients,
            counters: state.counters.clone(),
        }
    }

    /// The metrics in Prometheus's text exposition format.
    pub fn metrics(&self) -> String {
        self.status().prometheus()
    }
}
