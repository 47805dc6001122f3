//! What sits between a [`crate::api::Decryptor`] and a backend's work: jobs go in through a
//! [`JobSink`] (a channel to the backend's threads, or a writer on the caller's own thread),
//! events come out of a channel, both in batches so that a thread is woken once per batch rather
//! than once per item. The decryptor keeps the order, the bounds and the timeouts.

use crate::item::ItemError;
use num_bigint::BigUint;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A decryption engine with a private key loaded.
pub trait Backend: Sync {
    /// The backend's name, as `--backend` spells it.
    fn name(&self) -> &'static str;
    /// Decrypts ciphertexts already checked against the public key (0 < c < n², gcd(c, n) = 1),
    /// one result per input, in order. An item's error is reported in its place; an error that
    /// stops the whole batch is returned as such.
    fn decrypt_batch(&self, ciphertexts: &[BigUint]) -> anyhow::Result<Vec<Result<BigUint, String>>>;
}

/// One ciphertext for the backend, already checked against the public key.
pub struct Job {
    pub ticket: u64,
    pub ciphertext: BigUint,
}

/// What the backend's threads report.
pub enum Event {
    /// One item's outcome.
    Done(u64, Result<BigUint, ItemError>),
    /// The backend cannot go on; what it held is lost.
    Failed(String),
}

/// Where an engine's jobs go: a channel to the backend's threads, or a writer on the caller's
/// own thread (the service client's).
pub trait JobSink: Send {
    /// Passes `jobs` on; `false` when the backend has stopped.
    fn send(&mut self, jobs: Vec<Job>) -> bool;
}

/// Jobs handed to a worker thread.
impl JobSink for Sender<Vec<Job>> {
    fn send(&mut self, jobs: Vec<Job>) -> bool {
        Sender::send(self, jobs).is_ok()
    }
}

/// Results a backend's reader has taken in and holds until it has a batch worth a wake-up: the
/// engine takes them itself when its caller looks without waiting or its wait runs out.
#[derive(Clone, Default)]
pub struct HeldResults(Arc<Held>);

struct Held {
    events: Mutex<Vec<Event>>,
    /// Whether `events` may be non-empty: a caller that polls often looks here, not at the lock.
    any: AtomicBool,
    /// Half the caller's queue depth: holding more would leave it waiting with room to fill.
    caller_batch: AtomicUsize,
}

impl Default for Held {
    fn default() -> Self {
        Held { events: Mutex::default(), any: AtomicBool::new(false), caller_batch: AtomicUsize::new(usize::MAX) }
    }
}

impl HeldResults {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Event>> {
        self.0.events.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The most results worth holding for a caller that keeps `depth` items in flight.
    pub fn set_caller_queue_depth(&self, depth: usize) {
        self.0.caller_batch.store(depth.div_ceil(2).max(1), Ordering::Relaxed);
    }

    /// Results worth handing over together, at most `batch`.
    pub fn batch(&self, batch: usize) -> usize {
        batch.min(self.0.caller_batch.load(Ordering::Relaxed))
    }

    /// Adds `events`; returns how many are held now.
    pub fn hold(&self, events: Vec<Event>) -> usize {
        let mut held = self.lock();
        held.extend(events);
        self.0.any.store(!held.is_empty(), Ordering::Release);
        held.len()
    }

    fn take_all(&self) -> Vec<Event> {
        let mut held = self.lock();
        self.0.any.store(false, Ordering::Release);
        std::mem::take(&mut *held)
    }

    /// Sends what is held, if anything, waking the caller.
    pub fn hand_over(&self, events: &Sender<Vec<Event>>) {
        let batch = self.take_all();
        if !batch.is_empty() {
            let _ = events.send(batch);
        }
    }

    fn take(&self) -> Option<Vec<Event>> {
        if !self.0.any.load(Ordering::Acquire) {
            return None;
        }
        let batch = self.take_all();
        (!batch.is_empty()).then_some(batch)
    }
}

/// Something to do when the engine stops, besides closing the job channel (e.g. waking a reader).
pub type StopHook = Box<dyn FnMut() + Send>;

/// A running backend.
pub struct Engine {
    name: &'static str,
    description: String,
    jobs: Option<Box<dyn JobSink>>,
    events: Receiver<Vec<Event>>,
    held: Option<HeldResults>,
    threads: Vec<JoinHandle<()>>,
    on_stop: Option<StopHook>,
    /// How long `shutdown` waits for a thread that may be blocked in a device call.
    join_grace: Duration,
    /// What opening the backend found and had to do first.
    opened: OpenReport,
}

/// What opening a backend found and had to do before it could decrypt, whatever the backend.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenReport {
    /// Results an earlier host left unread on the device, read and dropped (a card taken over
    /// from a process that died mid-batch).
    pub dropped_results: usize,
    /// What the caller may want to tell its user, in words, when there is anything to tell.
    pub notice: Option<String>,
}

impl Engine {
    /// An engine from its parts: the threads must end once `jobs` is dropped and `on_stop` ran.
    pub fn new(
        name: &'static str,
        description: String,
        jobs: impl JobSink + 'static,
        events: Receiver<Vec<Event>>,
        threads: Vec<JoinHandle<()>>,
        on_stop: Option<StopHook>,
    ) -> Self {
        Engine {
            name,
            description,
            jobs: Some(Box::new(jobs)),
            events,
            held: None,
            threads,
            on_stop,
            join_grace: Duration::from_millis(500),
            opened: OpenReport::default(),
        }
    }

    /// Records what opening the backend found.
    pub fn with_open_report(mut self, opened: OpenReport) -> Self {
        self.opened = opened;
        self
    }

    /// Lets the engine take what the backend's reader holds (see [`HeldResults`]).
    pub fn with_held(mut self, held: HeldResults) -> Self {
        self.held = Some(held);
        self
    }

    /// Tells the backend how many items its caller keeps in flight at most.
    pub fn set_queue_depth(&self, depth: usize) {
        if let Some(held) = &self.held {
            held.set_caller_queue_depth(depth);
        }
    }

    /// What opening the backend found and had to do first.
    pub fn open_report(&self) -> &OpenReport {
        &self.opened
    }

    /// A [`Backend`] on a worker thread that decrypts whatever has queued up, about `chunk`
    /// items per call.
    pub fn batched<B: Backend + Send + 'static>(backend: B, chunk: usize) -> std::io::Result<Self> {
        let (jobs, job_rx) = mpsc::channel::<Vec<Job>>();
        let (event_tx, events) = mpsc::channel();
        let name = backend.name();
        let worker = std::thread::Builder::new().name(format!("{name} backend")).spawn(move || {
            while let Ok(mut batch) = job_rx.recv() {
                while batch.len() < chunk {
                    match job_rx.try_recv() {
                        Ok(more) => batch.extend(more),
                        Err(_) => break,
                    }
                }
                let ciphertexts: Vec<BigUint> = batch.iter().map(|j| j.ciphertext.clone()).collect();
                let events = match backend.decrypt_batch(&ciphertexts) {
                    Ok(results) => batch
                        .iter()
                        .zip(results)
                        .map(|(job, result)| Event::Done(job.ticket, result.map_err(ItemError::Backend)))
                        .collect(),
                    Err(e) => vec![Event::Failed(format!("the {name} backend failed: {e:#}"))],
                };
                let failed = matches!(events.last(), Some(Event::Failed(_)));
                let _ = event_tx.send(events);
                if failed {
                    return;
                }
            }
        })?;
        Ok(Engine::new(name, format!("{name} backend"), jobs, events, vec![worker], None))
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn description(&self) -> &str {
        &self.description
    }

    /// Hands jobs to the backend; an error means the backend has stopped.
    pub fn send(&mut self, jobs: Vec<Job>) -> Result<(), String> {
        let sink = self.jobs.as_mut().ok_or_else(|| "the backend was shut down".to_string())?;
        if sink.send(jobs) {
            Ok(())
        } else {
            Err(format!("the {} backend stopped", self.name))
        }
    }

    /// What the backend's reader holds, if anything.
    fn take_held(&self) -> Option<Vec<Event>> {
        self.held.as_ref().and_then(HeldResults::take)
    }

    /// The next events, waiting until `deadline` (forever without one); `None` at the deadline.
    /// A backend whose threads all ended without a word reports that as a failure.
    pub fn recv(&mut self, deadline: Option<Instant>) -> Option<Vec<Event>> {
        let received = match deadline {
            Some(d) => self.events.recv_timeout(d.saturating_duration_since(Instant::now())),
            None => self.events.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match received {
            Ok(event) => Some(event),
            Err(RecvTimeoutError::Timeout) => self.take_held(),
            Err(RecvTimeoutError::Disconnected) => {
                Some(vec![Event::Failed(format!("the {} backend stopped", self.name))])
            }
        }
    }

    /// The next events if there are any, without waiting.
    pub fn try_recv(&mut self) -> Option<Vec<Event>> {
        match self.events.try_recv() {
            Ok(events) => Some(events),
            Err(mpsc::TryRecvError::Empty) => self.take_held(),
            Err(mpsc::TryRecvError::Disconnected) => {
                Some(vec![Event::Failed(format!("the {} backend stopped", self.name))])
            }
        }
    }

    /// Stops the threads: closes the job channel, runs the stop hook and joins every thread that
    /// ends within a short grace period (a thread blocked in a device call is left to finish it).
    pub fn shutdown(&mut self) {
        self.jobs = None;
        if let Some(mut hook) = self.on_stop.take() {
            hook();
        }
        let deadline = Instant::now() + self.join_grace;
        for thread in std::mem::take(&mut self.threads) {
            while !thread.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(2));
            }
            if thread.is_finished() {
                let _ = thread.join();
            }
        }
    }
}
