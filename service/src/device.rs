//! One thread per device: it takes work from the scheduler, keeps the device's queue full, hands
//! results to their clients, and switches keys when the scheduler says so. A device that fails
//! has its unanswered items retried on another device (or failed, when none is left), and is
//! reopened after a pause.

use super::scheduler::{Take, WorkItem};
use super::state::{Shared, State};
use ecrt_driver::api::{BackendSpec, Decryptor, Options};
use ecrt_driver::item::{Completion, ItemError};
use ecrt_golden::PrivateKey;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The backend a device opens for a key (the Verilator model's configuration depends on the key's
/// size), or why it cannot.
pub type SpecForKey = Arc<dyn Fn(&PrivateKey) -> anyhow::Result<BackendSpec> + Send + Sync>;

/// A device the service drives.
#[derive(Clone)]
pub struct Device {
    /// How status and metrics name it (the device path, or the backend).
    pub name: String,
    pub spec: SpecForKey,
}

/// How the device threads pace their devices.
#[derive(Clone, Copy, Debug)]
pub struct DevicePacing {
    /// Most items at one device.
    pub max_in_flight: usize,
    /// A device that answers nothing for this long, with items in flight, has failed.
    pub timeout: Option<Duration>,
    /// How long a failed device rests before it is opened again.
    pub retry_after: Duration,
}

/// A device's queue is kept about this long: long enough to hide the host's latency, short
/// enough that a slow device (the RTL model) does not hoard work the others could do.
const QUEUE_TIME: Duration = Duration::from_millis(50);
/// The queue depth of a device whose speed is not yet known.
const START_DEPTH: usize = 4;
/// How long a device with work in flight waits for a result before it looks for new work.
const POLL: Duration = Duration::from_millis(1);
/// The shortest pause that lets a device's results gather (a sleep costs a wake-up too).
const MIN_PAUSE: Duration = Duration::from_micros(100);

struct Held {
    key: usize,
    decryptor: Decryptor,
    /// The decryptor's tickets of the items at the device.
    in_flight: HashMap<u64, WorkItem>,
}

/// Runs device `index` until the service stops and its work is done.
pub fn run(shared: Arc<Shared>, index: usize, device: Device, pacing: DevicePacing) {
    let mut held: Option<Held> = None;
    let mut last_key = 0;
    loop {
        if held.is_none() && shared.lock().devices[index].error.is_some() {
            // Failed: open it again (with the key it last held) until it works or the service stops.
            if shared.stopping() {
                break;
            }
            held = open(&shared, index, &device, last_key, &pacing);
            if held.is_none() {
                rest(&shared, pacing.retry_after);
            }
            continue;
        }
        let (rate, share) = {
            let (state, now) = (shared.lock(), Instant::now());
            (state.devices[index].rate(now), rate_share(&state, index, now))
        };
        let depth = queue_depth(rate, pacing.max_in_flight).min(share.unwrap_or(usize::MAX));
        let idle = held.as_ref().is_none_or(|h| h.in_flight.is_empty());
        let room = depth.saturating_sub(held.as_ref().map_or(0, |h| h.in_flight.len()));
        // Refilled a quarter of the queue at a time: each refill wakes the device's threads.
        let refill = idle || room >= (depth / 4).max(1);
        let take = if refill { next_work(&shared, index, room, idle) } else { None };
        let took_items = matches!(take, Some(Take::Items(_)));
        match take {
            Some(Take::Items(items)) if items.is_empty() && idle => {
                // Its share is nothing: the faster devices will be done first. Wait for more work.
                drop(shared.wait(&shared.work, shared.lock()));
                continue;
            }
            Some(Take::Items(items)) => {
                let held = held.as_mut().expect("items come only for a held key");
                for item in items {
                    let ticket = held.decryptor.submit(item.ciphertext.clone());
                    held.in_flight.insert(ticket, item);
                }
                let mut state = shared.lock();
                state.devices[index].set_in_flight(held.in_flight.len(), Instant::now());
            }
            Some(Take::Switch(key)) if idle => {
                if let Some(previous) = held.take() {
                    previous.decryptor.close();
                }
                last_key = key;
                held = open(&shared, index, &device, key, &pacing);
                if held.is_none() {
                    rest(&shared, pacing.retry_after);
                }
                continue;
            }
            Some(Take::Switch(_) | Take::Idle) => {}
            None if idle && shared.stopping() && shared.lock().scheduler.total_queued() == 0 => break,
            None => {}
        }
        let Some(h) = held.as_mut() else { continue };
        if h.in_flight.is_empty() {
            continue;
        }
        let mut done: Vec<Completion> = if took_items {
            Vec::new()
        } else if let Some(pause) = batching_pause(rate, h.in_flight.len(), depth) {
            // A deep queue at a fast device: waking for each handful of results costs more than
            // the results. Sleep while a batch gathers (the XDMA backend's reader holds what it
            // reads for this thread to take), then take them together.
            h.decryptor.flush();
            std::thread::sleep(pause);
            Vec::new()
        } else {
            h.decryptor.wait_next_for(POLL).into_iter().collect()
        };
        h.decryptor.poll(); // a device that went silent is found out on every path
        done.extend(std::iter::from_fn(|| h.decryptor.try_next()));
        let failure = h.decryptor.failure().map(str::to_string);
        route(&shared, index, &device.name, h, done, failure.is_some());
        if let Some(reason) = failure {
            held = None;
            fail_device(&shared, index, reason);
            rest(&shared, pacing.retry_after);
        }
    }
    if let Some(h) = held {
        h.decryptor.close();
    }
    let mut state = shared.lock();
    state.devices[index].up = false;
    state.scheduler.set_device_key(index, None, Instant::now());
}

/// The scheduler's next work for the device. While the device is idle and nothing is queued, it
/// waits (briefly, so that a stop is noticed) for work and returns `None`: the caller then sizes
/// its share again for the work that came (sized while nothing was queued, the share was none).
fn next_work(shared: &Shared, index: usize, room: usize, idle: bool) -> Option<Take> {
    let mut state = shared.lock();
    match state.scheduler.take(index, room, Instant::now()) {
        Take::Idle if idle && !shared.stopping() => {
            drop(shared.wait(&shared.work, state));
            None
        }
        Take::Idle if shared.stopping() => None,
        take => Some(take),
    }
}

/// Items device `index` should hold at most: its share, by measured rate, of its key's work
/// (queued, and in flight at every device holding the key), so that it is done about when the
/// others are. A device too slow to finish one item before the others have drained the rest
/// gets none (its share rounds down): an item there would hold its client's in-order results
/// back longer than the whole queue takes elsewhere. The fastest device's share rounds up, so
/// that the last items always have a taker. `None` while a rate is not known yet.
fn rate_share(state: &State, index: usize, now: Instant) -> Option<usize> {
    let device = &state.devices[index];
    let (key, rate) = (device.key?, device.rate(now)?);
    let (mut total_rate, mut fastest, mut in_flight) = (0.0, 0.0f64, 0);
    for other in state.devices.iter().filter(|d| d.up && d.key == Some(key)) {
        let other_rate = other.rate(now)?;
        (total_rate, fastest, in_flight) =
            (total_rate + other_rate, fastest.max(other_rate), in_flight + other.in_flight);
    }
    let share = rate / total_rate * (state.scheduler.queued(key) + in_flight) as f64;
    Some(if rate >= fastest { share.ceil() } else { share.floor() } as usize)
}

/// The device's queue depth: [`QUEUE_TIME`] at its measured `rate`, within [`START_DEPTH`] and `max`.
fn queue_depth(rate: Option<f64>, max: usize) -> usize {
    let depth = rate.map_or(START_DEPTH, |rate| (rate * QUEUE_TIME.as_secs_f64()) as usize);
    depth.clamp(START_DEPTH.min(max), max)
}

/// How long to let results gather before taking them: the time the device takes to answer half
/// of what it holds (at most a quarter of its queue) at its measured rate, within [`MIN_PAUSE`]
/// and [`POLL`]. `None` when it holds a few items only, or its rate is not known yet.
fn batching_pause(rate: Option<f64>, in_flight: usize, depth: usize) -> Option<Duration> {
    let rate = rate.filter(|_| in_flight >= START_DEPTH)?;
    let batch = (in_flight / 2).min(depth / 4).max(1);
    Some(Duration::from_secs_f64(batch as f64 / rate).clamp(MIN_PAUSE, POLL))
}

/// Opens the device with key `key`; on failure records why and returns `None`.
fn open(shared: &Shared, index: usize, device: &Device, key: usize, pacing: &DevicePacing) -> Option<Held> {
    let private = &shared.keys[key].key;
    let options = Options { queue_depth: pacing.max_in_flight, timeout: pacing.timeout };
    let opened = (device.spec)(private).and_then(|spec| Decryptor::open(&spec, private, options));
    let mut state = shared.lock();
    let status = &mut state.devices[index];
    match opened {
        Ok(decryptor) => {
            tracing::info!(device = %device.name, key = %shared.keys[key].id, "key loaded ({})", decryptor.description());
            status.backend = decryptor.backend_name();
            status.up = true;
            status.error = None;
            status.key = Some(key);
            status.key_switches += 1;
            state.scheduler.set_device_key(index, Some(key), Instant::now());
            Some(Held { key, decryptor, in_flight: HashMap::new() })
        }
        Err(e) => {
            let reason = format!("{e:#}");
            tracing::error!(device = %device.name, "cannot open the device: {reason}");
            drop(state);
            fail_device(shared, index, reason);
            None
        }
    }
}

/// Hands completions to their clients. When the device failed, the items it lost are queued
/// again for another device (an item tries each device at most once), or fail when no other
/// device works.
fn route(shared: &Shared, index: usize, name: &str, held: &mut Held, done: Vec<Completion>, failed: bool) {
    let mut state = shared.lock();
    // Another device can take the items unless it has failed (one not opened yet will be).
    let others_up = state.devices.iter().enumerate().any(|(d, s)| d != index && (s.up || s.error.is_none()));
    let devices = state.devices.len();
    for completion in done {
        let Some(mut item) = held.in_flight.remove(&completion.ticket) else { continue };
        match completion.result {
            Err(ItemError::Lost(_) | ItemError::Timeout(_))
                if failed
                    && others_up
                    && usize::from(item.attempts) + 1 < devices
                    && state.clients.contains_key(&item.client) =>
            {
                item.attempts = item.attempts.saturating_add(1);
                state.counters.retries += 1;
                state.scheduler.push(held.key, item, true);
            }
            Err(ItemError::Lost(reason)) => {
                let why = ItemError::Lost(format!("device {name} failed: {reason}"));
                state.devices[index].completed += 1;
                state.deliver(item.client, item.seq, Err(why));
            }
            result => {
                state.devices[index].completed += 1;
                state.deliver(item.client, item.seq, result);
            }
        }
    }
    if failed {
        // A failed decryptor answers everything it held; should anything remain, it is not lost silently.
        for (_, item) in held.in_flight.drain() {
            state.deliver(item.client, item.seq, Err(ItemError::Lost(format!("device {name} failed"))));
        }
        shared.work.notify_all();
    }
    state.devices[index].set_in_flight(held.in_flight.len(), Instant::now());
    state.flush();
}

/// Marks the device failed; with no device left, every queued item fails rather than waits.
fn fail_device(shared: &Shared, index: usize, reason: String) {
    let mut state = shared.lock();
    let device = &mut state.devices[index];
    tracing::error!(device = %device.name, "device failed: {reason}");
    device.up = false;
    device.failures += 1;
    device.error = Some(reason);
    device.set_in_flight(0, Instant::now());
    state.scheduler.set_device_key(index, None, Instant::now());
    if let Some(why) = state.no_device_reason() {
        for (_, item) in state.scheduler.drain_all() {
            state.deliver(item.client, item.seq, Err(ItemError::Lost(why.clone())));
        }
        state.flush();
    }
}

/// Sleeps `pause`, waking early when the service stops.
fn rest(shared: &Shared, pause: Duration) {
    let until = Instant::now() + pause;
    while Instant::now() < until && !shared.stopping() {
        std::thread::sleep(Duration::from_millis(20).min(until - Instant::now()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::Scheduler;
    use crate::state::DeviceState;
    use num_bigint::BigUint;

    /// A device holding `key` that answered `rate` items in its one busy second.
    fn device(key: usize, rate: u64, start: Instant) -> DeviceState {
        let mut d = DeviceState::new(String::new());
        (d.key, d.up, d.completed) = (Some(key), true, rate);
        d.set_in_flight(1, start);
        d.set_in_flight(0, start + Duration::from_secs(1));
        d
    }

    fn state(devices: Vec<DeviceState>, queued_for_key_0: u64, start: Instant) -> State {
        let mut scheduler = Scheduler::new(2, devices.len(), Duration::from_millis(20));
        for seq in 0..queued_for_key_0 {
            let item = WorkItem { client: 1, seq, ciphertext: BigUint::from(seq), attempts: 0, queued_at: start };
            scheduler.push(0, item, false);
        }
        State::new(scheduler, devices, 2)
    }

    #[test]
    fn a_device_holds_its_share_of_the_work_by_rate() {
        let start = Instant::now();
        let now = start + Duration::from_secs(2);
        let fast_and_slow =
            state(vec![device(0, 50_000, start), device(0, 50_000, start), device(0, 2, start)], 1000, start);
        assert_eq!(rate_share(&fast_and_slow, 0, now), Some(500), "half, less the slow one's sliver, rounded up");
        assert_eq!(rate_share(&fast_and_slow, 2, now), Some(0), "done before the slow one would finish one");
        // The last item has a taker: each of the fastest devices, not the slow one.
        let last = state(vec![device(0, 50_000, start), device(0, 50_000, start), device(0, 2, start)], 1, start);
        assert_eq!([0, 1, 2].map(|d| rate_share(&last, d, now)), [Some(1), Some(1), Some(0)]);
        // The fast devices hold the other key: the slow one is all key 0 has.
        let alone = state(vec![device(1, 50_000, start), device(1, 50_000, start), device(0, 2, start)], 1000, start);
        assert_eq!(rate_share(&alone, 2, now), Some(1000));
        // A rate not known yet (nothing answered): no share is computed.
        let mut new = device(0, 0, start);
        new.completed = 0;
        let unknown = state(vec![device(0, 50_000, start), new], 1000, start);
        assert_eq!(rate_share(&unknown, 0, now), None);
    }
}
