//! Which ciphertexts a device decrypts next. Clients of one key are served round-robin, a few
//! items each in turn, so that one client's huge batch does not starve a small one. A device holds
//! one key at a time: it stays on its key while that key has work, unless it has held the key for
//! `switch_wait` and another key's work has waited as long with no device holding it; then the
//! device drains and switches. Each key thus gets a device within about two `switch_wait`s.

use num_bigint::BigUint;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// A connection's number, unique for the service's lifetime.
pub type ClientId = u64;

/// Items a client gets per round-robin turn: large enough to batch the device's submissions,
/// small enough that a turn is short.
const QUANTUM: usize = 8;

/// One ciphertext waiting for a device.
#[derive(Debug)]
pub struct WorkItem {
    pub client: ClientId,
    /// The item's position in its client's stream (results go back in this order).
    pub seq: u64,
    pub ciphertext: BigUint,
    /// Devices that failed before answering it.
    pub attempts: u8,
    pub queued_at: Instant,
}

/// What a device is to do next.
#[derive(Debug)]
pub enum Take {
    /// Decrypt these under the device's current key.
    Items(Vec<WorkItem>),
    /// Load this key (by index) first: the device's key has no work left, or another key waited long enough.
    Switch(usize),
    /// Nothing to do for now.
    Idle,
}

#[derive(Default)]
struct KeyQueue {
    /// Clients with queued work, in round-robin order.
    clients: VecDeque<(ClientId, VecDeque<WorkItem>)>,
    queued: usize,
}

impl KeyQueue {
    fn oldest(&self) -> Option<Instant> {
        self.clients.iter().filter_map(|(_, q)| q.front().map(|i| i.queued_at)).min()
    }
}

/// The queues of every key, and which key each device holds.
pub struct Scheduler {
    keys: Vec<KeyQueue>,
    /// Each device's key, and since when it holds it.
    device_keys: Vec<Option<(usize, Instant)>>,
    switch_wait: Duration,
}

impl Scheduler {
    pub fn new(keys: usize, devices: usize, switch_wait: Duration) -> Self {
        Scheduler {
            keys: (0..keys).map(|_| KeyQueue::default()).collect(),
            device_keys: vec![None; devices],
            switch_wait,
        }
    }

    /// Queues a client's item under `key`; `front` puts it ahead (an item retried after a device failed).
    pub fn push(&mut self, key: usize, item: WorkItem, front: bool) {
        let queue = &mut self.keys[key];
        queue.queued += 1;
        match queue.clients.iter_mut().find(|(id, _)| *id == item.client) {
            Some((_, items)) if front => items.push_front(item),
            Some((_, items)) => items.push_back(item),
            None if front => queue.clients.push_front((item.client, VecDeque::from([item]))),
            None => queue.clients.push_back((item.client, VecDeque::from([item]))),
        }
    }

    /// Drops a client's queued items (it went away); returns how many.
    pub fn remove_client(&mut self, key: usize, client: ClientId) -> usize {
        let queue = &mut self.keys[key];
        let Some(at) = queue.clients.iter().position(|(id, _)| *id == client) else { return 0 };
        let (_, items) = queue.clients.remove(at).expect("found");
        queue.queued -= items.len();
        items.len()
    }

    /// Takes every queued item (the service has no device left to run them).
    pub fn drain_all(&mut self) -> Vec<(usize, WorkItem)> {
        let mut all = Vec::new();
        for (key, queue) in self.keys.iter_mut().enumerate() {
            queue.queued = 0;
            for (_, items) in queue.clients.drain(..) {
                all.extend(items.into_iter().map(|item| (key, item)));
            }
        }
        all
    }

    /// Items queued under `key`.
    pub fn queued(&self, key: usize) -> usize {
        self.keys[key].queued
    }

    /// Items queued under any key.
    pub fn total_queued(&self) -> usize {
        self.keys.iter().map(|q| q.queued).sum()
    }

    /// Items queued for one client.
    pub fn queued_for(&self, key: usize, client: ClientId) -> usize {
        self.keys[key].clients.iter().find(|(id, _)| *id == client).map_or(0, |(_, q)| q.len())
    }

    /// Records the key `device` holds from `now` (`None`: none, e.g. after it failed).
    pub fn set_device_key(&mut self, device: usize, key: Option<usize>, now: Instant) {
        self.device_keys[device] = key.map(|k| (k, now));
    }

    /// Up to `room` items for `device`, or the key it should load, as of `now`.
    pub fn take(&mut self, device: usize, room: usize, now: Instant) -> Take {
        let current = self.device_keys[device].map(|(k, _)| k);
        let held_for =
            self.device_keys[device].map_or(Duration::ZERO, |(_, since)| now.saturating_duration_since(since));
        let held_elsewhere = |k: usize| {
            self.device_keys.iter().enumerate().any(|(d, held)| d != device && held.is_some_and(|(h, _)| h == k))
        };
        // The key whose work waited longest, preferring keys no other device holds.
        let waiting = |s: &Self| {
            (0..s.keys.len())
                .filter(|&k| Some(k) != current)
                .filter_map(|k| s.keys[k].oldest().map(|t| (held_elsewhere(k), t, k)))
                .min()
        };
        match current {
            Some(key) if self.keys[key].queued > 0 => {
                let starved = held_for >= self.switch_wait
                    && waiting(self).is_some_and(|(elsewhere, since, _)| {
                        !elsewhere && now.saturating_duration_since(since) >= self.switch_wait
                    });
                if starved {
                    let (_, _, other) = waiting(self).expect("starved");
                    Take::Switch(other)
                } else {
                    Take::Items(self.take_round_robin(key, room))
                }
            }
            _ => match waiting(self) {
                Some((_, _, key)) => Take::Switch(key),
                None => Take::Idle,
            },
        }
    }

    /// Up to `room` items of `key`, [`QUANTUM`] per client in turn.
    fn take_round_robin(&mut self, key: usize, room: usize) -> Vec<WorkItem> {
        let queue = &mut self.keys[key];
        let mut taken = Vec::with_capacity(room.min(queue.queued));
        while taken.len() < room {
            let Some((client, mut items)) = queue.clients.pop_front() else { break };
            let n = QUANTUM.min(room - taken.len()).min(items.len());
            taken.extend(items.drain(..n));
            if !items.is_empty() {
                queue.clients.push_back((client, items));
            }
        }
        queue.queued -= taken.len();
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(client: ClientId, seq: u64, queued_at: Instant) -> WorkItem {
        WorkItem { client, seq, ciphertext: BigUint::from(seq), attempts: 0, queued_at }
    }

    fn items(take: Take) -> Vec<(ClientId, u64)> {
        match take {
            Take::Items(items) => items.iter().map(|i| (i.client, i.seq)).collect(),
            other => panic!("expected items, got {other:?}"),
        }
    }

    #[test]
    fn a_small_batch_is_not_starved_by_a_large_one() {
        let now = Instant::now();
        let mut s = Scheduler::new(1, 1, Duration::from_millis(10));
        for seq in 0..10_000 {
            s.push(0, item(1, seq, now), false);
        }
        for seq in 0..3 {
            s.push(0, item(2, seq, now), false);
        }
        s.set_device_key(0, Some(0), now);
        let first = items(s.take(0, 16, now));
        assert_eq!(first.iter().filter(|(c, _)| *c == 2).count(), 3, "{first:?}");
        assert_eq!(s.queued(0), 10_000 - 13);
        assert_eq!(s.queued_for(0, 1), 10_000 - 13);
        assert_eq!(s.remove_client(0, 1), 10_000 - 13);
        assert!(matches!(s.take(0, 16, now), Take::Idle));
    }

    #[test]
    fn a_device_switches_keys_when_its_own_run_out_or_another_waited_too_long() {
        let t0 = Instant::now();
        let wait = Duration::from_millis(10);
        let mut s = Scheduler::new(2, 1, wait);
        assert!(matches!(s.take(0, 4, t0), Take::Idle));
        s.push(1, item(7, 0, t0), false);
        assert!(matches!(s.take(0, 4, t0), Take::Switch(1)), "no key held: load the one with work");
        s.set_device_key(0, Some(0), t0);
        s.push(0, item(8, 0, t0), false);
        s.push(0, item(8, 1, t0), false);
        assert_eq!(items(s.take(0, 1, t0)), vec![(8, 0)], "key 1 has not waited long yet");
        assert!(matches!(s.take(0, 1, t0 + wait), Take::Switch(1)), "key 1 waited long enough");
        s.set_device_key(0, Some(1), t0 + wait);
        assert_eq!(items(s.take(0, 4, t0 + wait)), vec![(7, 0)], "key 0 waits: key 1 was just loaded");
        assert!(matches!(s.take(0, 4, t0 + wait), Take::Switch(0)), "back to the key with work");
    }

    #[test]
    fn a_key_another_device_holds_does_not_pull_a_device_away() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(2, 2, Duration::ZERO);
        s.set_device_key(0, Some(0), t0);
        s.set_device_key(1, Some(1), t0);
        s.push(0, item(1, 0, t0), false);
        s.push(1, item(2, 0, t0), false);
        assert_eq!(items(s.take(0, 4, t0)), vec![(1, 0)]);
        assert_eq!(items(s.take(1, 4, t0)), vec![(2, 0)]);
    }

    #[test]
    fn retried_items_go_first() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(1, 1, Duration::ZERO);
        s.set_device_key(0, Some(0), t0);
        s.push(0, item(1, 5, t0), false);
        s.push(0, item(1, 4, t0), true);
        assert_eq!(items(s.take(0, 4, t0)), vec![(1, 4), (1, 5)]);
        s.push(0, item(3, 0, t0), false);
        assert_eq!(s.drain_all().len(), 1);
        assert_eq!(s.total_queued(), 0);
    }
}
