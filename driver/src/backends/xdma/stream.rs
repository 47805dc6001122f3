//! The two threads that move frames: a reader on C2H, started first, and a writer on H2C. Each
//! request carries a 16-bit tag; the tag table maps the tags in flight to the decryptor's tickets,
//! so results may come back in any order. The reader reads only while results are owed, so an
//! idle engine never sits in a device read. Requests are written in packets of as many as are
//! queued, up to the device's window (one frame per core), and the reader takes whole bursts of
//! results.
//!
//! Threads wake one another only when it pays. The caller's jobs go straight into a backlog
//! ([`JobQueue`]); the reader, which makes room in the window as it settles results, writes the
//! backlog into that room after each read and only then hands the results over, so the caller's
//! next jobs find the window full: a busy engine moves its requests without waking anyone. The
//! writer is woken only when the window has room the reader may not fill soon: jobs that come
//! while the reader waits in a read, or while nothing is owed. The reader hands results over
//! half a window at a time (half the caller's queue if that is less), or as soon as nothing more
//! is owed; results it holds meanwhile stay where the caller can take them ([`HeldResults`]) when
//! it looks without waiting or its wait runs out, so a card that stalls, even in the middle of a
//! write, never hides the results it did return.

use crate::backends::xdma::nodes::{read_some, write_packet, AlignedBuf};
use crate::engine::{Event, HeldResults, Job, JobSink, StopHook};
use crate::item::ItemError;
use ecrt_contract::interface::{self as itf, FrameLayout};
use num_bigint::BigUint;
use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// Result frames one C2H read asks for at most (a stream read returns early at a packet's end).
const READ_FRAMES: usize = 64;
/// Request frames one H2C write carries at most.
const WRITE_FRAMES: usize = 64;

/// What the stream threads need to know.
#[derive(Clone)]
pub struct StreamSetup {
    pub layout: FrameLayout,
    pub key_id: u8,
    /// n: a plaintext at or above it is corrupt.
    pub modulus: BigUint,
    /// Most request frames at the device unanswered: as many as it has cores, so that every frame
    /// written is taken at once and an H2C transfer never waits on a decryption (the XDMA driver
    /// fails a transfer that waits longer than its timeout).
    pub window: usize,
    /// Node names for messages.
    pub h2c_name: String,
    pub c2h_name: String,
}

impl StreamSetup {
    /// Results handed over together, and the room a write waits for: half the window.
    fn batch(&self) -> usize {
        self.window.max(1).div_ceil(2)
    }
}

#[derive(Default)]
struct TagTable {
    tickets: HashMap<u16, u64>,
    next_tag: u16,
    /// Jobs taken from the caller and not yet written.
    backlog: VecDeque<Job>,
    stopping: bool,
    /// The caller sends no more jobs.
    closed: bool,
    /// A thread failed: jobs are refused from now on.
    failed: bool,
    /// Who sleeps on its condition variable (a wake-up is a system call made only for it).
    reader_waiting: bool,
    writer_waiting: bool,
}

impl TagTable {
    /// A tag not in flight and not [`itf::RESYNC_TAG`] (the decryptor keeps fewer than 2^16 − 1
    /// items in flight).
    fn assign(&mut self, ticket: u64) -> u16 {
        while self.next_tag == itf::RESYNC_TAG || self.tickets.contains_key(&self.next_tag) {
            self.next_tag = self.next_tag.wrapping_add(1);
        }
        let tag = self.next_tag;
        self.next_tag = self.next_tag.wrapping_add(1);
        self.tickets.insert(tag, ticket);
        tag
    }
}

/// What both threads and the caller's [`JobQueue`] share.
struct Stream<W> {
    table: Mutex<TagTable>,
    reader_wake: Condvar,
    writer_wake: Condvar,
    /// Either thread writes through it.
    h2c: Mutex<W>,
    setup: StreamSetup,
    events: Sender<Vec<Event>>,
}

impl<W: Write> Stream<W> {
    fn table(&self) -> MutexGuard<'_, TagTable> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Backlogged requests worth a write now: half a window of them (or all there are, or a
    /// write's worth), when the window has room for that many. Fewer, larger transfers, while the
    /// rest keeps the cores busy.
    fn writable(&self, t: &TagTable) -> Option<usize> {
        let window = self.setup.window.max(1);
        // Never more than a write holds, or a window over two writes' worth would wait for room
        // it cannot have.
        let wanted = t.backlog.len().min(self.setup.batch()).min(WRITE_FRAMES);
        let room = (window - t.tickets.len().min(window)).min(WRITE_FRAMES);
        (!t.stopping && wanted > 0 && room >= wanted).then(|| room.min(t.backlog.len()))
    }

    /// Writes backlogged requests while [`Stream::writable`] says so; `buf` is the calling
    /// thread's own (room for [`WRITE_FRAMES`] requests).
    fn write_backlog(&self, buf: &mut [u8]) -> Result<(), String> {
        let layout = self.setup.layout;
        loop {
            let (assigned, reader_waiting): (Vec<(u16, Job)>, bool) = {
                let mut t = self.table();
                let Some(count) = self.writable(&t) else { return Ok(()) };
                let jobs: Vec<Job> = t.backlog.drain(..count).collect();
                (jobs.into_iter().map(|job| (t.assign(job.ticket), job)).collect(), t.reader_waiting)
            };
            // Encoded without the table's lock, which the other thread takes meanwhile.
            let mut tags = Vec::with_capacity(assigned.len());
            let mut invalid = Vec::new();
            for (tag, job) in assigned {
                let frame = tags.len() * layout.request_bytes;
                let out = &mut buf[frame..frame + layout.request_bytes];
                match itf::encode_request_into(tag, self.setup.key_id, &job.ciphertext, &layout, out) {
                    Ok(()) => tags.push(tag),
                    Err(e) => {
                        self.table().tickets.remove(&tag);
                        invalid.push(Event::Done(job.ticket, Err(ItemError::Invalid(e.to_string()))));
                    }
                }
            }
            if !invalid.is_empty() {
                let _ = self.events.send(invalid);
            }
            if tags.is_empty() {
                continue;
            }
            // The reader now owes these results.
            if reader_waiting {
                self.reader_wake.notify_one();
            }
            let packet = &buf[..tags.len() * layout.request_bytes];
            if let Err(e) = write_packet(&mut *self.h2c.lock().unwrap_or_else(|e| e.into_inner()), packet) {
                let mut t = self.table();
                for tag in &tags {
                    t.tickets.remove(tag);
                }
                return Err(format!("cannot write requests to {}: {e}", self.setup.h2c_name));
            }
        }
    }

    fn request_buffer(&self) -> AlignedBuf {
        AlignedBuf::new(self.setup.layout.request_bytes * WRITE_FRAMES.min(self.setup.window.max(1)))
    }

    /// A thread ends with `failed`: no job is taken from now on, and the caller hears why.
    fn end(&self, failed: Result<(), String>) {
        if let Err(reason) = failed {
            self.table().failed = true;
            let _ = self.events.send(vec![Event::Failed(reason)]);
        }
    }
}

/// Where the caller's jobs go: the backlog the stream threads write from.
pub struct JobQueue<W: Write>(Arc<Stream<W>>);

impl<W: Write + Send> JobSink for JobQueue<W> {
    fn send(&mut self, jobs: Vec<Job>) -> bool {
        let mut t = self.0.table();
        if t.stopping || t.failed {
            return false;
        }
        t.backlog.extend(jobs);
        if t.writer_waiting && self.0.writable(&t).is_some() {
            self.0.writer_wake.notify_one();
        }
        true
    }
}

impl<W: Write> Drop for JobQueue<W> {
    fn drop(&mut self) {
        self.0.table().closed = true;
        self.0.writer_wake.notify_one();
    }
}

/// The running stream: its threads, the hook that stops them, the results the reader holds,
/// where the caller's jobs go.
pub type Started<W> = (Vec<JoinHandle<()>>, StopHook, HeldResults, JobQueue<W>);

/// Starts the reader, then the writer. Returns the threads, the hook that stops them, the
/// results the reader holds before it hands them over, and where the caller's jobs go; or why a
/// thread could not be started (the reader, if it started, is stopped).
pub fn start<W: Write + Send + 'static>(
    h2c: W,
    mut c2h: impl Read + Send + 'static,
    setup: StreamSetup,
    events: Sender<Vec<Event>>,
) -> std::io::Result<Started<W>> {
    let stream = Arc::new(Stream {
        table: Mutex::default(),
        reader_wake: Condvar::new(),
        writer_wake: Condvar::new(),
        h2c: Mutex::new(h2c),
        setup,
        events,
    });
    let held = HeldResults::default();
    let stop: StopHook = {
        let stream = stream.clone();
        Box::new(move || {
            stream.table().stopping = true;
            stream.reader_wake.notify_all();
            stream.writer_wake.notify_all();
        })
    };
    let reader = {
        let (stream, held) = (stream.clone(), held.clone());
        std::thread::Builder::new().name("xdma c2h".into()).spawn(move || {
            let failed = read_results(&mut c2h, &stream, &held);
            held.hand_over(&stream.events);
            stream.end(failed);
        })?
    };
    let writer = {
        let (stream, held) = (stream.clone(), held.clone());
        std::thread::Builder::new().name("xdma h2c".into()).spawn(move || {
            let failed = write_requests(&stream);
            // The results the reader holds go first: a failure fails only what is still owed.
            held.hand_over(&stream.events);
            stream.end(failed);
        })
    };
    match writer {
        Ok(writer) => Ok((vec![reader, writer], stop, held, JobQueue(stream))),
        Err(e) => {
            let mut stop = stop;
            stop();
            Err(e)
        }
    }
}

/// Writes the backlog when the window has room for it and the reader may not fill it soon (it
/// writes after each read): until stopped, or the caller is gone and the backlog written.
fn write_requests<W: Write>(stream: &Stream<W>) -> Result<(), String> {
    let mut buf = stream.request_buffer();
    loop {
        {
            let mut t = stream.table();
            while stream.writable(&t).is_none() && !t.stopping && !(t.closed && t.backlog.is_empty()) {
                t.writer_waiting = true;
                t = stream.writer_wake.wait(t).unwrap_or_else(|e| e.into_inner());
                t.writer_waiting = false;
            }
            if t.stopping || (t.closed && t.backlog.is_empty()) {
                return Ok(());
            }
        }
        stream.write_backlog(&mut buf)?;
    }
}

/// Reads results until stopped or failed, hands them over in batches and writes the backlog into
/// the room they leave (see the module's comment).
fn read_results<W: Write>(c2h: &mut impl Read, stream: &Stream<W>, held: &HeldResults) -> Result<(), String> {
    let (setup, events) = (&stream.setup, &stream.events);
    let frame_bytes = setup.layout.result_bytes;
    let mut buf = AlignedBuf::new(frame_bytes * READ_FRAMES);
    let mut requests = stream.request_buffer();
    let mut carry: Vec<u8> = Vec::with_capacity(2 * frame_bytes);
    loop {
        let owed = {
            let mut t = stream.table();
            while t.tickets.is_empty() && !t.stopping {
                t.reader_waiting = true;
                t = stream.reader_wake.wait(t).unwrap_or_else(|e| e.into_inner());
                t.reader_waiting = false;
            }
            if t.stopping {
                return Ok(());
            }
            t.tickets.len()
        };
        let want = (owed.min(READ_FRAMES) * frame_bytes).saturating_sub(carry.len()).max(1);
        let n = match read_some(c2h, &mut buf[..want]) {
            Ok(0) => return Err(format!("{} ended its stream", setup.c2h_name)),
            Ok(n) => n,
            // The XDMA driver gives up on a read after its timeout; the decryptor has its own.
            Err(e) if matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock) => continue,
            Err(e) => return Err(format!("cannot read results from {}: {e}", setup.c2h_name)),
        };
        carry.extend_from_slice(&buf[..n]);
        let whole = carry.len() / frame_bytes * frame_bytes;
        let mut done = Vec::with_capacity(whole / frame_bytes);
        for frame in carry[..whole].chunks_exact(frame_bytes) {
            match settle(frame, setup, &stream.table) {
                Ok(Some((ticket, result))) => done.push(Event::Done(ticket, result)),
                Ok(None) => {}
                Err(reason) => {
                    held.hold(done);
                    return Err(reason);
                }
            }
        }
        carry.drain(..whole);
        let gathered = held.hold(done);
        // The room just made is the reader's to fill, before the caller wakes: its next jobs
        // then find the window full and wake no writer.
        stream.write_backlog(&mut requests)?;
        let owed = stream.table().tickets.len();
        if gathered >= held.batch(setup.batch()) || owed == 0 {
            held.hand_over(events);
        }
    }
}

/// A ticket and its outcome.
type Settled = (u64, Result<BigUint, ItemError>);

/// The ticket a result frame answers and its outcome. A frame whose tag is not in flight means
/// the stream is out of step: nothing after it can be trusted. An answer to a resynchronisation
/// frame is dropped (`None`): the takeover stops at the first one it reads, and a host that died
/// between sending one and reading its answer leaves one more behind it.
fn settle(frame: &[u8], setup: &StreamSetup, table: &Mutex<TagTable>) -> Result<Option<Settled>, String> {
    let tag = u16::from_le_bytes([frame[0], frame[1]]);
    let decoded = itf::decode_result(frame, setup.layout.digits, setup.layout.stream_bits);
    if tag == itf::RESYNC_TAG && decoded.as_ref().is_ok_and(itf::is_resync_answer) {
        return Ok(None);
    }
    let ticket = table.lock().unwrap_or_else(|e| e.into_inner()).tickets.remove(&tag).ok_or_else(|| {
        format!("{} returned a result for tag {tag}, which is not in flight: the stream is out of step", setup.c2h_name)
    })?;
    let result = match decoded {
        Err(e) => Err(ItemError::Corrupted(e.to_string())),
        Ok(r) if !r.is_ok() => Err(ItemError::Status(r.status)),
        Ok(r) if r.plaintext >= setup.modulus => Err(ItemError::Corrupted("the plaintext is not below n".into())),
        Ok(r) => Ok(r.plaintext),
    };
    Ok(Some((ticket, result)))
}

#[cfg(test)]
mod tests {
    //! The stream threads against an in-memory card: a thread that answers request packets with
    //! result packets, after a script of faults.
    use super::*;
    use crate::api::{Decryptor, ItemError, Options};
    use crate::engine::Engine;
    use std::sync::mpsc::{self, Receiver, Sender};
    use std::time::Duration;

    use crate::backends::xdma::test_card::{layout, result_bytes, DIGITS, STREAM_BITS};

    /// H2C: each write is one packet (one or more request frames), forwarded whole to the card.
    struct PacketSink(Sender<Vec<u8>>);
    impl Write for PacketSink {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.send(buf.to_vec()).map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))?;
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// C2H: a read returns at most one packet (the end of a packet ends a stream read).
    struct PacketSource {
        packets: Receiver<Vec<u8>>,
        rest: Vec<u8>,
    }
    impl Read for PacketSource {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.rest.is_empty() {
                self.rest = match self.packets.recv_timeout(Duration::from_millis(50)) {
                    Ok(p) => p,
                    Err(mpsc::RecvTimeoutError::Timeout) => return Err(io::ErrorKind::TimedOut.into()),
                    Err(mpsc::RecvTimeoutError::Disconnected) => return Err(io::ErrorKind::NotConnected.into()),
                };
            }
            let n = buf.len().min(self.rest.len());
            buf[..n].copy_from_slice(&self.rest[..n]);
            self.rest.drain(..n);
            Ok(n)
        }
    }

    #[derive(Clone, Copy, Default)]
    struct Faults {
        /// Answer this many requests, then go silent.
        stall_after: Option<usize>,
        /// Set bit 31 of the first limb word of this result.
        corrupt: Option<usize>,
        /// Hang up after this many results.
        die_after: Option<usize>,
        /// Answer with status 0x02 for this request.
        malformed: Option<usize>,
        /// Send an answer to a resynchronisation frame before each result of this request.
        resync_answer: Option<usize>,
    }

    /// A card whose plaintext is the ciphertext mod n, answering pairs of requests in swapped
    /// order (results may overtake one another), one result per packet.
    fn start_card(n: BigUint, faults: Faults) -> (PacketSink, PacketSource) {
        let (h2c_tx, h2c_rx) = mpsc::channel::<Vec<u8>>();
        let (c2h_tx, c2h_rx) = mpsc::channel::<Vec<u8>>();
        std::thread::spawn(move || {
            let mut held: Option<Vec<u8>> = None;
            let frames = h2c_rx
                .iter()
                .flat_map(|packet| packet.chunks(layout().request_bytes).map(<[u8]>::to_vec).collect::<Vec<_>>());
            for (k, packet) in frames.enumerate() {
                if faults.stall_after.is_some_and(|s| k >= s) || faults.die_after.is_some_and(|d| k >= d) {
                    if faults.die_after.is_some() {
                        return;
                    }
                    continue;
                }
                let request = itf::decode_request(&packet, DIGITS, STREAM_BITS).unwrap();
                if faults.resync_answer == Some(k) {
                    c2h_tx.send(result_bytes(itf::RESYNC_TAG, itf::RESULT_MALFORMED, 0u8.into())).unwrap();
                }
                let status = if faults.malformed == Some(k) { itf::RESULT_MALFORMED } else { 0 };
                let plaintext = if status == 0 { &request.ciphertext % &n } else { BigUint::default() };
                let mut bytes = result_bytes(request.tag, status, plaintext);
                if faults.corrupt == Some(k) {
                    bytes[7] |= 0x80;
                }
                match held.take() {
                    None if k % 2 == 0 => held = Some(bytes),
                    None => c2h_tx.send(bytes).unwrap(),
                    Some(first) => {
                        c2h_tx.send(bytes).unwrap();
                        c2h_tx.send(first).unwrap();
                    }
                }
            }
            if let Some(last) = held {
                let _ = c2h_tx.send(last);
            }
        });
        (PacketSink(h2c_tx), PacketSource { packets: c2h_rx, rest: vec![] })
    }

    fn modulus() -> BigUint {
        // The prime 2^64 − 59: ciphertexts below n² fit 2·8 limbs of 17 bits.
        BigUint::from(0xffff_ffff_ffff_ffc5u64)
    }

    fn decryptor(faults: Faults, options: Options) -> Decryptor {
        decryptor_with_window(faults, options, 16)
    }

    fn decryptor_with_window(faults: Faults, options: Options, window: usize) -> Decryptor {
        let (h2c, c2h) = start_card(modulus(), faults);
        let setup = StreamSetup {
            layout: layout(),
            key_id: 7,
            modulus: modulus(),
            window,
            h2c_name: "h2c".into(),
            c2h_name: "c2h".into(),
        };
        let (event_tx, events) = mpsc::channel();
        let (threads, stop, held, jobs) = start(h2c, c2h, setup, event_tx).unwrap();
        let engine = Engine::new("xdma", "test card".into(), jobs, events, threads, Some(stop)).with_held(held);
        Decryptor::with_engine(engine, ecrt_golden::PublicKey::new(modulus()).unwrap(), options).unwrap()
    }

    fn ciphertexts(count: u64) -> Vec<BigUint> {
        // Units mod n: n is prime.
        (0..count).map(|i| BigUint::from(1_000_003u64 * (i + 2))).collect()
    }

    #[test]
    fn results_come_back_in_order_through_a_small_queue() {
        let mut d = decryptor(Faults::default(), Options { queue_depth: 3, timeout: Some(Duration::from_secs(5)) });
        let cs = ciphertexts(50);
        let results = d.decrypt_all(cs.clone());
        let expected: Vec<_> = cs.iter().map(|c| Ok(c % modulus())).collect();
        assert_eq!(results, expected);
        assert!(d.close().is_empty());
    }

    /// A window wider than two writes (64 cores of three lanes-engine jobs each): the writer
    /// sends a write's worth at a time, and nothing waits for room it cannot have.
    #[test]
    fn a_window_wider_than_two_writes_keeps_the_card_fed() {
        let window = 3 * WRITE_FRAMES;
        let options = Options { queue_depth: 256, timeout: Some(Duration::from_secs(5)) };
        let mut d = decryptor_with_window(Faults::default(), options, window);
        let cs = ciphertexts(2 * window as u64);
        let expected: Vec<_> = cs.iter().map(|c| Ok(c % modulus())).collect();
        assert_eq!(d.decrypt_all(cs), expected);
        assert!(d.close().is_empty());
    }

    #[test]
    fn item_errors_stay_with_their_items() {
        let faults = Faults { corrupt: Some(3), malformed: Some(5), ..Default::default() };
        let mut d = decryptor(faults, Options::default());
        let mut cs = ciphertexts(8);
        cs.insert(2, modulus() * modulus()); // not below n²: never reaches the card
        let results = d.decrypt_all(cs.clone());
        assert_eq!(results.len(), 9);
        assert!(matches!(&results[2], Err(ItemError::Invalid(_))), "{:?}", results[2]);
        // Card request k is batch item k (k < 2) or k + 1.
        assert!(matches!(&results[4], Err(ItemError::Corrupted(m)) if m.contains("above the 17-bit limb")));
        assert_eq!(results[6], Err(ItemError::Status(itf::RESULT_MALFORMED)));
        for i in [0, 1, 3, 5, 7, 8] {
            assert_eq!(results[i], Ok(&cs[i] % modulus()), "item {i}");
        }
    }

    #[test]
    fn a_stalled_card_times_out_and_every_item_is_accounted_for() {
        let faults = Faults { stall_after: Some(4), ..Default::default() };
        let timeout = Duration::from_millis(300);
        let mut d = decryptor(faults, Options { queue_depth: 4, timeout: Some(timeout) });
        let results = d.decrypt_all(ciphertexts(10));
        assert_eq!(results.len(), 10);
        assert!(results[..4].iter().all(|r| r.is_ok()), "{results:?}");
        assert!(results[4..8].iter().all(|r| *r == Err(ItemError::Timeout(timeout))), "{results:?}");
        // Submitted after the stall was declared: refused with the reason.
        let lost = |r: &Result<_, _>| matches!(r, Err(ItemError::Lost(m)) if m.contains("no result within 0.3 s"));
        assert!(results[8..].iter().all(lost), "{results:?}");
        assert!(d.failure().is_some());
    }

    #[test]
    fn a_lost_card_fails_what_it_held() {
        let faults = Faults { die_after: Some(6), ..Default::default() };
        let mut d = decryptor(faults, Options { queue_depth: 2, timeout: Some(Duration::from_secs(5)) });
        let results = d.decrypt_all(ciphertexts(12));
        assert_eq!(results.len(), 12);
        assert!(results[..6].iter().all(|r| r.is_ok()), "{results:?}");
        for r in &results[6..] {
            assert!(matches!(r, Err(ItemError::Lost(m)) if m.contains("c2h") || m.contains("h2c")), "{r:?}");
        }
    }

    /// A stray answer to a resynchronisation frame (a takeover that died before reading it) is
    /// dropped; the results around it are not.
    #[test]
    fn a_stray_resync_answer_is_dropped() {
        let faults = Faults { resync_answer: Some(2), ..Default::default() };
        let mut d = decryptor(faults, Options { queue_depth: 4, timeout: Some(Duration::from_secs(5)) });
        let cs = ciphertexts(6);
        let expected: Vec<_> = cs.iter().map(|c| Ok(c % modulus())).collect();
        assert_eq!(d.decrypt_all(cs), expected);
        assert!(d.failure().is_none());
    }

    #[test]
    fn the_resync_tag_is_never_given_to_a_job() {
        let mut t = TagTable { next_tag: itf::RESYNC_TAG - 2, ..Default::default() };
        let tags: Vec<u16> = (0..4).map(|ticket| t.assign(ticket)).collect();
        assert_eq!(tags, [0xFFFD, 0xFFFE, 0, 1], "wraps around past 0xFFFF");
        // Starting on it, with the tag after it in flight.
        let mut t = TagTable { next_tag: itf::RESYNC_TAG, ..Default::default() };
        t.tickets.insert(0, 99);
        assert_eq!(t.assign(5), 1);
        // A whole cycle, each tag released at once: every tag but 0xFFFF, once each.
        let mut t = TagTable::default();
        let mut seen = std::collections::HashSet::new();
        for ticket in 0..0xFFFF {
            let tag = t.assign(ticket);
            t.tickets.remove(&tag);
            assert!(seen.insert(tag), "tag {tag} twice");
        }
        assert!(!seen.contains(&itf::RESYNC_TAG));
        assert_eq!(t.assign(0), 0, "the next cycle");
    }
}
