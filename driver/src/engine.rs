//! The channel pair between a [`crate::api::Decryptor`] and the threads that do a backend's work:
//! jobs go in, events come out, both in batches so that a thread is woken once per batch rather
//! than once per item. The decryptor keeps the order, the bounds and the timeouts.

use crate::backend::Backend;
use crate::item::ItemError;
use crate::xdma::takeover::Takeover;
use num_bigint::BigUint;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

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

/// Something to do when the engine stops, besides closing the job channel (e.g. waking a reader).
pub type StopHook = Box<dyn FnMut() + Send>;

/// A running backend.
pub struct Engine {
    name: &'static str,
    description: String,
    jobs: Option<Sender<Vec<Job>>>,
    events: Receiver<Vec<Event>>,
    threads: Vec<JoinHandle<()>>,
    on_stop: Option<StopHook>,
    /// How long `shutdown` waits for a thread that may be blocked in a device call.
    join_grace: Duration,
    /// What opening a card found an earlier process had left (the XDMA backend).
    takeover: Option<Takeover>,
}

impl Engine {
    /// An engine from its parts: the threads must end once `jobs` closes and `on_stop` ran.
    pub fn new(
        name: &'static str,
        description: String,
        jobs: Sender<Vec<Job>>,
        events: Receiver<Vec<Event>>,
        threads: Vec<JoinHandle<()>>,
        on_stop: Option<StopHook>,
    ) -> Self {
        Engine {
            name,
            description,
            jobs: Some(jobs),
            events,
            threads,
            on_stop,
            join_grace: Duration::from_millis(500),
            takeover: None,
        }
    }

    /// Records what taking the card over found.
    pub fn with_takeover(mut self, takeover: Takeover) -> Self {
        self.takeover = Some(takeover);
        self
    }

    /// What taking the card over found, for a backend that takes one over (XDMA).
    pub fn takeover(&self) -> Option<&Takeover> {
        self.takeover.as_ref()
    }

    /// A [`Backend`] on a worker thread that decrypts whatever has queued up, about `chunk`
    /// items per call.
    pub fn batched<B: Backend + Send + 'static>(backend: B, chunk: usize) -> Self {
        let (jobs, job_rx) = mpsc::channel::<Vec<Job>>();
        let (event_tx, events) = mpsc::channel();
        let name = backend.name();
        let worker = std::thread::spawn(move || {
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
        });
        Engine::new(name, format!("{name} backend"), jobs, events, vec![worker], None)
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn description(&self) -> &str {
        &self.description
    }

    /// Hands jobs to the backend; an error means the backend has stopped.
    pub fn send(&mut self, jobs: Vec<Job>) -> Result<(), String> {
        let sender = self.jobs.as_ref().ok_or_else(|| "the backend was shut down".to_string())?;
        sender.send(jobs).map_err(|_| format!("the {} backend stopped", self.name))
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
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                Some(vec![Event::Failed(format!("the {} backend stopped", self.name))])
            }
        }
    }

    /// The next events if there are any, without waiting.
    pub fn try_recv(&mut self) -> Option<Vec<Event>> {
        match self.events.try_recv() {
            Ok(events) => Some(events),
            Err(mpsc::TryRecvError::Empty) => None,
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
