//! The friendly API: open a backend, load a key, submit ciphertexts, receive plaintexts in order.
//!
//! ```no_run
//! use ecrt_driver::api::{BackendSpec, Decryptor, Options};
//! # fn main() -> anyhow::Result<()> {
//! # let key: ecrt_golden::PrivateKey = unimplemented!();
//! # let ciphertexts: Vec<num_bigint::BigUint> = vec![];
//! let spec = BackendSpec::Xdma { device: "/dev/xdma0".into() };
//! let mut decryptor = Decryptor::open(&spec, &key, Options::default())?;
//! for c in ciphertexts {
//!     decryptor.submit(c); // blocks while the in-flight queue is full
//!     while let Some(done) = decryptor.try_next() {
//!         println!("{}: {:?}", done.ticket, done.result);
//!     }
//! }
//! for done in decryptor.close() {
//!     println!("{}: {:?}", done.ticket, done.result);
//! }
//! # Ok(()) }
//! ```
//!
//! Every submitted ciphertext gets exactly one [`Completion`], in submission order: its plaintext
//! or an [`ItemError`]. A backend that fails (a lost device, a stall longer than the timeout)
//! fails the items it held with that reason and refuses later ones; nothing is dropped silently.

use crate::engine::{Engine, Event, Job};
pub use crate::item::{Completion, ItemError};
use ecrt_golden::{PrivateKey, PublicKey};
use num_bigint::BigUint;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

pub use crate::backends::BackendSpec;

/// How a [`Decryptor`] paces its backend.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Most ciphertexts handed to the backend and not yet answered; `submit` blocks beyond it.
    pub queue_depth: usize,
    /// With items outstanding, the longest wait for the next result before the backend is
    /// declared stalled (`None`: wait forever).
    pub timeout: Option<Duration>,
}

impl Options {
    /// Refuses a queue depth outside 1 to [`MAX_QUEUE_DEPTH`].
    pub fn check(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            (1..=MAX_QUEUE_DEPTH).contains(&self.queue_depth),
            "the queue depth must be 1 to {MAX_QUEUE_DEPTH}, not {}",
            self.queue_depth
        );
        Ok(())
    }
}

/// The longest stall timeout in seconds: beyond a day, 0 (no timeout) says what is meant, and far
/// larger values would overflow a deadline.
pub const MAX_TIMEOUT_SECONDS: f64 = 86_400.0;

/// [`Options::timeout`] from seconds as a user gives them: 0 waits forever, up to
/// [`MAX_TIMEOUT_SECONDS`]; anything else (negative, NaN, too long) is refused.
pub fn timeout_from_seconds(seconds: f64) -> Result<Option<Duration>, String> {
    if (0.0..=MAX_TIMEOUT_SECONDS).contains(&seconds) {
        Ok((seconds > 0.0).then(|| Duration::from_secs_f64(seconds)))
    } else {
        Err(format!("expected 0 (wait forever) or a number of seconds up to {MAX_TIMEOUT_SECONDS}"))
    }
}

impl Default for Options {
    fn default() -> Self {
        Options { queue_depth: 256, timeout: Some(Duration::from_secs(30)) }
    }
}

/// The largest queue depth (a bound on the decryptor's own bookkeeping; the XDMA backend keeps
/// far fewer at the card, one per core, so its 16-bit tags stay distinct).
pub const MAX_QUEUE_DEPTH: usize = 1 << 15;
/// Submissions handed to the backend together (one wake-up of its thread per batch).
const SEND_BATCH: usize = 64;
/// The longest a submission waits for its batch to fill while the caller only polls.
const SEND_DELAY: Duration = Duration::from_micros(50);

/// A key loaded into a backend, with a bounded queue of ciphertexts in flight.
pub struct Decryptor {
    engine: Engine,
    public: PublicKey,
    options: Options,
    next_ticket: u64,
    next_out: u64,
    /// One slot per ticket from `next_out` on: answered, or still waiting for its answer.
    slots: VecDeque<Option<Result<BigUint, ItemError>>>,
    /// Slots waiting: submitted and not answered (handed to the engine, or about to be).
    outstanding: usize,
    /// Submitted and not yet handed to the engine, and since when.
    unsent: Vec<Job>,
    unsent_since: Instant,
    /// Completions that `decrypt_all` met before its own, kept for `wait_next`.
    held: VecDeque<Completion>,
    /// Why the engine stopped, once it has.
    failure: Option<String>,
    last_progress: Instant,
}

impl Decryptor {
    /// Opens the backend and loads `key` into it. Errors (no device, a bitstream for another
    /// key size, a busy stream node, a failed build) say what to do; they never show the key.
    pub fn open(spec: &BackendSpec, key: &PrivateKey, options: Options) -> anyhow::Result<Self> {
        options.check()?;
        // The service holds the private key: connecting needs only the public one.
        if let BackendSpec::Service { socket } = spec {
            return Decryptor::connect(socket, key.public(), options);
        }
        let engine = crate::backends::open_engine(spec, key)?;
        Decryptor::with_engine(engine, key.public().clone(), options)
    }

    /// Connects to the service at `socket` and opens its key for `public` (found by its id),
    /// waiting at most the timeout of `options` for each step. The queue depth is capped at the
    /// service's credit for this client.
    pub fn connect(socket: &std::path::Path, public: &PublicKey, mut options: Options) -> anyhow::Result<Self> {
        options.check()?;
        let (engine, credit) =
            crate::backends::service::ServiceClient::connect_within(socket, options.timeout)?.open(public)?;
        options.queue_depth = options.queue_depth.min(credit.max(1) as usize);
        Decryptor::with_engine(engine, public.clone(), options)
    }

    /// A decryptor over a running engine.
    pub(crate) fn with_engine(engine: Engine, public: PublicKey, options: Options) -> anyhow::Result<Self> {
        options.check()?;
        engine.set_queue_depth(options.queue_depth);
        Ok(Decryptor {
            engine,
            public,
            options,
            next_ticket: 0,
            next_out: 0,
            slots: VecDeque::new(),
            outstanding: 0,
            unsent: Vec::with_capacity(SEND_BATCH),
            unsent_since: Instant::now(),
            held: VecDeque::new(),
            failure: None,
            last_progress: Instant::now(),
        })
    }

    /// The backend's name, as `--backend` spells it.
    pub fn backend_name(&self) -> &'static str {
        self.engine.name()
    }

    /// What the backend reports about itself (for XDMA: the probed configuration).
    pub fn description(&self) -> &str {
        self.engine.description()
    }

    /// What opening the backend found and had to do first (for a card, what an earlier process
    /// had left on it).
    pub fn open_report(&self) -> &crate::engine::OpenReport {
        self.engine.open_report()
    }

    /// Submits one ciphertext and returns its ticket. Blocks while `queue_depth` items are in
    /// flight (taking in their results meanwhile); an invalid ciphertext is answered at once.
    pub fn submit(&mut self, ciphertext: BigUint) -> u64 {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        if let Err(e) = check_range(&self.public, &ciphertext) {
            self.slots.push_back(Some(Err(ItemError::Invalid(e))));
            return ticket;
        }
        while self.failure.is_none() && self.outstanding >= self.options.queue_depth {
            self.pump(None);
        }
        if let Some(reason) = &self.failure {
            self.slots.push_back(Some(Err(ItemError::Lost(reason.clone()))));
            return ticket;
        }
        if self.outstanding == 0 {
            self.last_progress = Instant::now();
        }
        self.slots.push_back(None);
        self.outstanding += 1;
        if self.unsent.is_empty() {
            self.unsent_since = Instant::now();
        }
        self.unsent.push(Job { ticket, ciphertext });
        if self.unsent.len() >= SEND_BATCH {
            self.flush();
        }
        ticket
    }

    /// Hands the submissions not yet sent to the backend now, rather than when a batch fills or
    /// the caller next waits (for a caller about to sleep rather than wait).
    pub fn flush(&mut self) {
        if self.unsent.is_empty() || self.failure.is_some() {
            return;
        }
        let jobs = std::mem::replace(&mut self.unsent, Vec::with_capacity(SEND_BATCH));
        if let Err(reason) = self.engine.send(jobs) {
            self.fail(reason, None);
        }
    }

    /// The next completion in submission order, waiting for it; `None` once every submitted
    /// item has been returned.
    pub fn wait_next(&mut self) -> Option<Completion> {
        self.held.pop_front().or_else(|| self.next_in_order(None))
    }

    /// The next completion in submission order, waiting for it until `wake` (`None`: as long as
    /// it takes).
    fn next_in_order(&mut self, wake: Option<Instant>) -> Option<Completion> {
        loop {
            if let Some(done) = self.take_ready() {
                return Some(done);
            }
            if self.next_out == self.next_ticket || wake.is_some_and(|w| Instant::now() >= w) {
                return None;
            }
            self.pump(wake);
        }
    }

    /// The next completion in submission order, waiting at most `wait` for it: `None` when
    /// nothing is pending or nothing came in time (then [`Decryptor::pending`] tells which). For
    /// callers that must look up between waits, e.g. for an interrupt.
    pub fn wait_next_for(&mut self, wait: Duration) -> Option<Completion> {
        let wake = Instant::now() + wait;
        self.held.pop_front().or_else(|| self.next_in_order(Some(wake)))
    }

    /// Takes in what the backend has reported so far, without waiting, and declares it stalled
    /// if it has been silent beyond the timeout with items outstanding: for a caller that sleeps
    /// between looks at [`Decryptor::try_next`] instead of waiting in [`Decryptor::wait_next`].
    pub fn poll(&mut self) {
        self.pump(Some(Instant::now()));
    }

    /// The next completion in submission order if it is already known, without waiting.
    pub fn try_next(&mut self) -> Option<Completion> {
        self.held.pop_front().or_else(|| self.try_next_in_order())
    }

    fn try_next_in_order(&mut self) -> Option<Completion> {
        if !self.unsent.is_empty() && self.unsent_since.elapsed() >= SEND_DELAY {
            self.flush();
        }
        while self.failure.is_none() {
            match self.engine.try_recv() {
                Some(events) => self.absorb(events),
                None => break,
            }
        }
        self.take_ready()
    }

    /// Decrypts a batch: one result per ciphertext, in order, whatever happens to the others.
    /// Completions of earlier submissions not yet taken stay for `wait_next`.
    pub fn decrypt_all(&mut self, ciphertexts: impl IntoIterator<Item = BigUint>) -> Vec<Result<BigUint, ItemError>> {
        let first = self.next_ticket;
        let mut results = Vec::new();
        let mut take = |this: &mut Self, done: Completion| {
            if done.ticket < first {
                this.held.push_back(done);
            } else {
                results.push(done.result);
            }
        };
        for c in ciphertexts {
            self.submit(c);
            while let Some(done) = self.try_next_in_order() {
                take(self, done);
            }
        }
        while let Some(done) = self.next_in_order(None) {
            take(self, done);
        }
        results
    }

    /// Items submitted and not yet returned by `wait_next` or `try_next`.
    pub fn pending(&self) -> usize {
        (self.next_ticket - self.next_out) as usize + self.held.len()
    }

    /// Waits for every item in flight (within the timeout), stops the backend and returns the
    /// completions not yet taken: together with those already returned, one per submission.
    pub fn close(mut self) -> Vec<Completion> {
        let mut rest = Vec::new();
        while let Some(done) = self.wait_next() {
            rest.push(done);
        }
        self.engine.shutdown();
        rest
    }

    fn take_ready(&mut self) -> Option<Completion> {
        let result = self.slots.front_mut()?.take()?;
        self.slots.pop_front();
        let ticket = self.next_out;
        self.next_out += 1;
        Some(Completion { ticket, result })
    }

    /// Waits for the engine's next events, at most the stall timeout (and at most until `wake`),
    /// and takes them in.
    fn pump(&mut self, wake: Option<Instant>) {
        if self.failure.is_some() {
            return;
        }
        // About to wait: what was submitted must be on its way.
        self.flush();
        // A timeout too long to add to an Instant is as good as none.
        let stall_deadline = self.options.timeout.and_then(|t| self.last_progress.checked_add(t));
        let deadline = match (stall_deadline, wake) {
            (Some(stall), Some(wake)) => Some(stall.min(wake)),
            (stall, wake) => stall.or(wake),
        };
        match self.engine.recv(deadline) {
            Some(events) => self.absorb(events),
            None => {
                let stalled = stall_deadline.is_some_and(|stall| Instant::now() >= stall);
                if let (false, true, Some(timeout)) = (self.outstanding == 0, stalled, self.options.timeout) {
                    self.fail(ItemError::Timeout(timeout).to_string(), Some(timeout));
                }
            }
        }
    }

    fn absorb(&mut self, events: Vec<Event>) {
        for event in events {
            match event {
                Event::Done(ticket, result) => {
                    let slot = ticket.checked_sub(self.next_out).and_then(|k| self.slots.get_mut(k as usize));
                    if let Some(slot @ None) = slot {
                        *slot = Some(result);
                        self.outstanding -= 1;
                    }
                }
                Event::Failed(reason) => self.fail(reason, None),
            }
        }
        self.last_progress = Instant::now();
    }

    /// The engine stopped: every outstanding item fails with `reason` and later ones are refused.
    fn fail(&mut self, reason: String, timeout: Option<Duration>) {
        if self.failure.is_some() {
            return;
        }
        self.unsent.clear();
        for slot in self.slots.iter_mut().filter(|slot| slot.is_none()) {
            *slot = Some(Err(match timeout {
                Some(t) => ItemError::Timeout(t),
                None => ItemError::Lost(reason.clone()),
            }));
        }
        self.outstanding = 0;
        self.engine.shutdown();
        self.failure = Some(reason);
    }

    /// Why the backend stopped, if it has (later submissions fail with this reason).
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }
}

/// 0 < c < n². Whether gcd(c, n) = 1 is not checked per item: a gcd costs far more than the rest
/// of the host's work for one decryption, and a c sharing a factor with n would reveal the key to
/// whoever made it anyway. (`ecrt_golden::paillier::check_ciphertext` checks it, for callers that
/// want it; `ecrt decrypt` does.)
pub fn check_range(public: &PublicKey, c: &BigUint) -> Result<(), String> {
    if c.bits() == 0 || c >= public.n_squared() {
        let bits = public.n_squared().bits();
        return Err(format!("a ciphertext is an integer 0 < c < n² ({bits} bits), this one has {} bits", c.bits()));
    }
    Ok(())
}

impl Drop for Decryptor {
    fn drop(&mut self) {
        self.engine.shutdown();
    }
}
