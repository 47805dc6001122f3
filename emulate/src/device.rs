//! The device thread: it owns the [`Responder`], queues the stream transfers the file system
//! hands it, clocks the responder while there is work, and completes each transfer (or times it
//! out) by calling the completion that came with it. Idle, it sleeps on its command channel.

use super::bridge::{packet_words, C2hBuffer};
use super::faults::Faults;
use super::responder::Responder;
use ecrt_contract::interface as itf;
use std::collections::VecDeque;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Why a transfer failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IoError {
    /// Not completed within the engine's timeout (ETIMEDOUT).
    TimedOut,
    /// The device stopped: the model failed, or the emulator is shutting down (EIO).
    Failed,
}

/// Called once with a transfer's outcome (on the device thread).
pub(crate) type Completion<T> = Box<dyn FnOnce(Result<T, IoError>) + Send>;

/// A request to the device thread.
pub(crate) enum Command {
    /// An AXI4-Lite read.
    ReadRegister { offset: u32, done: Completion<u32> },
    /// An AXI4-Lite write.
    WriteRegister { offset: u32, value: u32, done: Completion<()> },
    /// One H2C packet; completes with its length once every beat has been taken.
    H2cWrite { data: Vec<u8>, done: Completion<usize> },
    /// A C2H read of at most `size` bytes.
    C2hRead { size: usize, done: Completion<Vec<u8>> },
    /// The C2H node was released: the reads still pending were left by a process that died in
    /// them (a live one holds the node open while it reads), and must not take data.
    C2hReleased,
    /// Fail whatever is pending and stop.
    Shutdown,
}

impl Command {
    /// Completes the command with `error` without running it.
    pub(crate) fn fail(self, error: IoError) {
        match self {
            Command::ReadRegister { done, .. } => done(Err(error)),
            Command::WriteRegister { done, .. } => done(Err(error)),
            Command::H2cWrite { done, .. } => done(Err(error)),
            Command::C2hRead { done, .. } => done(Err(error)),
            Command::C2hReleased | Command::Shutdown => {}
        }
    }
}

/// How the device behaves.
pub(crate) struct DeviceOptions {
    /// 32-bit lanes of a beat.
    pub lanes: usize,
    /// Beats of a request frame and of a result frame: frames are counted by size, since a packet
    /// may carry several (TLAST ends a packet, or a request frame early).
    pub request_beats: usize,
    pub result_beats: usize,
    pub h2c_timeout: Duration,
    pub c2h_timeout: Duration,
    /// Bytes of C2H data buffered before the card's stream is stopped.
    pub c2h_capacity: usize,
    pub faults: Faults,
}

/// The running device thread.
pub(crate) struct DeviceHandle {
    sender: Sender<Command>,
    thread: Option<JoinHandle<()>>,
}

impl DeviceHandle {
    /// Starts the device thread around `responder`.
    pub(crate) fn spawn(responder: Box<dyn Responder>, options: DeviceOptions) -> std::io::Result<Self> {
        let (sender, receiver) = mpsc::channel();
        let device = Device::new(responder, options);
        let thread =
            std::thread::Builder::new().name("ecrt-emulate-device".into()).spawn(move || device.run(receiver))?;
        Ok(DeviceHandle { sender, thread: Some(thread) })
    }

    /// A channel to the device thread.
    pub(crate) fn sender(&self) -> Sender<Command> {
        self.sender.clone()
    }

    /// Fails every pending transfer and stops the thread (idempotent).
    pub(crate) fn shutdown(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = self.sender.send(Command::Shutdown);
            let _ = thread.join();
        }
    }
}

impl Drop for DeviceHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}

struct H2cPacket {
    words: Vec<u32>,
    /// Beats taken so far.
    sent: usize,
    len: usize,
    deadline: Instant,
    done: Completion<usize>,
}

struct C2hRead {
    size: usize,
    deadline: Instant,
    done: Completion<Vec<u8>>,
}

struct Device {
    responder: Box<dyn Responder>,
    options: DeviceOptions,
    beat_bytes: usize,
    /// H2C packets in submission order; the first one is streaming.
    writes: VecDeque<H2cPacket>,
    /// C2H reads in submission order; the first one is served first.
    reads: VecDeque<C2hRead>,
    c2h: C2hBuffer,
    /// Request frames in and result frames out: each request gets one result, so the model has
    /// work while more went in than came out.
    frames_in: u64,
    frames_out: u64,
    /// Beats of the request frame coming in.
    in_beats: usize,
    /// Words of the result frame leaving now, for locating word 1 (the corrupt-result fault).
    out_words: usize,
    /// Cycles since the last handshake on either stream.
    quiet: u64,
    /// The responder's [`Responder::settle_cycles`].
    settle: u64,
    /// Since a soft reset: the model runs until it has settled, whatever the frame counts say.
    draining: bool,
    /// Of `frames_out`, the answers to resynchronisation frames: the faults count the others,
    /// the results of what a host asked for, whether or not a takeover came first.
    resyncs_out: u64,
    /// The frame leaving is such an answer.
    out_resync: bool,
    failed: bool,
}

impl Device {
    fn new(responder: Box<dyn Responder>, options: DeviceOptions) -> Self {
        let beat_bytes = options.lanes * itf::LANE_BYTES;
        let c2h = C2hBuffer::new(options.c2h_capacity.max(beat_bytes));
        let settle = responder.settle_cycles();
        Device {
            responder,
            options,
            beat_bytes,
            writes: VecDeque::new(),
            reads: VecDeque::new(),
            c2h,
            frames_in: 0,
            frames_out: 0,
            in_beats: 0,
            out_words: 0,
            quiet: 0,
            settle,
            draining: false,
            resyncs_out: 0,
            out_resync: false,
            failed: false,
        }
    }

    fn run(mut self, commands: Receiver<Command>) {
        loop {
            // Register accesses and new transfers are taken between cycles; with nothing to
            // clock, the thread sleeps until a command comes or a transfer's deadline passes.
            let received = if self.has_work() {
                match commands.try_recv() {
                    Ok(command) => Some(command),
                    Err(TryRecvError::Empty) => None,
                    Err(TryRecvError::Disconnected) => break,
                }
            } else {
                let deadline = self.next_deadline();
                let waited = match deadline {
                    Some(deadline) => commands.recv_timeout(deadline.saturating_duration_since(Instant::now())),
                    None => commands.recv().map_err(|_| RecvTimeoutError::Disconnected),
                };
                match waited {
                    Ok(command) => Some(command),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            };
            if let Some(command) = received {
                if matches!(command, Command::Shutdown) {
                    break;
                }
                self.handle(command);
                continue;
            }
            self.expire(Instant::now());
            if self.has_work() {
                if let Err(error) = self.step() {
                    self.fail(error);
                }
            }
        }
        self.fail_pending();
    }

    fn stalled(&self) -> bool {
        self.options.faults.stalled(self.frames_out - self.resyncs_out)
    }

    /// Whether a result beat fits in the C2H buffer (the card's TREADY); never once it stalled.
    fn output_ready(&self) -> bool {
        !self.stalled() && self.c2h.has_room(self.beat_bytes, self.reads.front().map_or(0, |read| read.size))
    }

    /// Something for the model to do: a result to send with room for it in the C2H buffer, or a
    /// request beat to offer, unless the output is held back and the model has settled (it
    /// would not take the beat before the host reads: clocking it on would only burn CPU). After
    /// a soft reset, the model runs until it has settled with room for output: the cores run
    /// their jobs out (STATUS.BUSY falls), and a frame already leaving leaves.
    fn has_work(&self) -> bool {
        if self.failed {
            return false;
        }
        let room = self.output_ready();
        let owed = self.frames_in > self.frames_out;
        let settling = room || self.quiet < self.settle;
        (owed && room) || (!self.writes.is_empty() && settling) || (self.draining && settling)
    }

    fn next_deadline(&self) -> Option<Instant> {
        let writes = self.writes.iter().map(|w| w.deadline);
        writes.chain(self.reads.iter().map(|r| r.deadline)).min()
    }

    fn handle(&mut self, command: Command) {
        if self.failed {
            return command.fail(IoError::Failed);
        }
        match command {
            Command::ReadRegister { offset, done } => match self.responder.read_register(offset) {
                Ok(value) => done(Ok(value)),
                Err(error) => {
                    done(Err(IoError::Failed));
                    self.fail(error);
                }
            },
            Command::WriteRegister { offset, value, done } => match self.responder.write_register(offset, value) {
                Ok(()) => {
                    let offset = offset & ((1 << itf::ADDRESS_BITS) - 1);
                    if offset == itf::REG_CONTROL && value & itf::CONTROL_SOFT_RESET != 0 {
                        self.soft_reset();
                    }
                    done(Ok(()))
                }
                Err(error) => {
                    done(Err(IoError::Failed));
                    self.fail(error);
                }
            },
            Command::H2cWrite { data, done } if data.is_empty() => done(Ok(0)),
            Command::H2cWrite { data, done } => {
                let words = packet_words(&data, self.options.lanes);
                let deadline = Instant::now() + self.options.h2c_timeout;
                self.writes.push_back(H2cPacket { words, sent: 0, len: data.len(), deadline, done });
                // A new packet may meet another TREADY: let the model show it.
                self.quiet = 0;
            }
            Command::C2hRead { size, done } => {
                let deadline = Instant::now() + self.options.c2h_timeout;
                self.reads.push_back(C2hRead { size, deadline, done });
                self.complete_reads();
            }
            Command::C2hReleased => {
                for read in self.reads.drain(..) {
                    (read.done)(Err(IoError::Failed));
                }
            }
            Command::Shutdown => {}
        }
    }

    /// The card dropped its partial request frame, its pending results and its cores' results
    /// (the responder did that): the frame counts follow. A result frame already leaving is
    /// still owed; one the card had begun but not yet offered is sent too, uncounted (see
    /// `step`), and the model runs until it has settled.
    fn soft_reset(&mut self) {
        self.in_beats = 0;
        self.frames_in = self.frames_out + u64::from(self.out_words > 0);
        self.draining = true;
        self.quiet = 0;
    }

    /// One clock cycle of the streams.
    fn step(&mut self) -> anyhow::Result<()> {
        let lanes = self.options.lanes;
        let output_ready = self.output_ready();
        let offer = self.writes.front().map(|w| {
            let beats = w.words.len() / lanes;
            (&w.words[w.sent * lanes..(w.sent + 1) * lanes], w.sent + 1 == beats)
        });
        let io = self.responder.cycle(offer, output_ready)?;
        self.quiet = if io.input_taken || io.output.is_some() { 0 } else { self.quiet.saturating_add(1) };
        if io.input_taken {
            if let Some(write) = self.writes.front_mut() {
                write.sent += 1;
                self.in_beats += 1;
                let last = write.sent * lanes == write.words.len();
                // A frame ends at its last beat, or early at TLAST (the RTL answers it as malformed).
                if last || self.in_beats == self.options.request_beats {
                    self.frames_in += 1;
                    self.in_beats = 0;
                }
                if last {
                    if let Some(write) = self.writes.pop_front() {
                        (write.done)(Ok(write.len));
                    }
                }
            }
        }
        if let Some(mut beat) = io.output {
            if self.out_words == 0 {
                self.out_resync = beat.words.first().is_some_and(|&header| is_resync_answer_header(header));
            }
            if !self.out_resync && self.options.faults.corrupts(self.frames_out - self.resyncs_out) {
                if let Some(word) = 1usize.checked_sub(self.out_words).and_then(|k| beat.words.get_mut(k)) {
                    *word ^= 1 << 31;
                }
            }
            self.out_words += beat.words.len();
            let ends_frame = self.out_words == self.options.result_beats * lanes;
            if ends_frame {
                self.frames_out += 1;
                self.resyncs_out += u64::from(self.out_resync);
                // A frame the card had begun before a soft reset was not counted in.
                self.frames_in = self.frames_in.max(self.frames_out);
                self.out_words = 0;
            }
            // The last frame before a stall ends its packet, though others were queued behind it.
            self.c2h.push_beat(&beat.words, beat.last || (ends_frame && self.stalled()));
            self.complete_reads();
        }
        if self.draining && self.quiet >= self.settle && self.output_ready() {
            self.draining = false;
        }
        Ok(())
    }

    /// Answers the reads that the buffered data completes, in order.
    fn complete_reads(&mut self) {
        while let Some(len) = self.reads.front().and_then(|read| self.c2h.ready(read.size)) {
            if let Some(read) = self.reads.pop_front() {
                (read.done)(Ok(self.c2h.take(len)));
            }
        }
    }

    /// Times out the transfers whose deadline has passed. A timed-out H2C packet's beats already
    /// taken stay in the card and the rest are dropped, as XDMA aborts the transfer; a timed-out
    /// read takes no data.
    fn expire(&mut self, now: Instant) {
        for write in drain_where(&mut self.writes, |w| w.deadline <= now) {
            (write.done)(Err(IoError::TimedOut));
            self.quiet = 0;
        }
        for read in drain_where(&mut self.reads, |r| r.deadline <= now) {
            (read.done)(Err(IoError::TimedOut));
        }
    }

    /// The model failed: report it once, fail what is pending, and fail every later access.
    fn fail(&mut self, error: anyhow::Error) {
        eprintln!(
            "ecrt emulate: the {} device failed: {error:#}; every access now fails with EIO",
            self.responder.name()
        );
        self.failed = true;
        self.fail_pending();
    }

    fn fail_pending(&mut self) {
        for write in self.writes.drain(..) {
            (write.done)(Err(IoError::Failed));
        }
        for read in self.reads.drain(..) {
            (read.done)(Err(IoError::Failed));
        }
    }
}

/// Whether a result frame's header word is that of an answer to a resynchronisation frame.
fn is_resync_answer_header(header: u32) -> bool {
    let status = (header >> itf::HEADER_STATUS_SHIFT) as u8;
    header as u16 == itf::RESYNC_TAG
        && status & itf::RESULT_MALFORMED != 0
        && (header >> itf::HEADER_OPCODE_SHIFT) as u8 == itf::RESULT_MAGIC
}

/// Removes the items that match `expired`, keeping the others in order.
fn drain_where<T>(queue: &mut VecDeque<T>, expired: impl Fn(&T) -> bool) -> Vec<T> {
    if !queue.iter().any(&expired) {
        return Vec::new();
    }
    let (gone, kept): (Vec<T>, Vec<T>) = queue.drain(..).partition(|item| expired(item));
    queue.extend(kept);
    gone
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::Fault;
    use crate::responder::InstantResponder;
    use ecrt_contract::config::{AcceleratorConfig, Engine};
    use ecrt_contract::interface as itf;
    use num_bigint::BigUint;

    /// A 512-bit instant responder and the options of a device holding at most two result frames
    /// in C2H; two slots: one job a core, the buffering the tests count on.
    fn parts(faults: &[Fault], timeout: Duration) -> (Box<InstantResponder>, DeviceOptions, itf::FrameLayout) {
        parts_of(Engine::Slots, faults, timeout)
    }

    fn parts_of(
        engine: Engine,
        faults: &[Fault],
        timeout: Duration,
    ) -> (Box<InstantResponder>, DeviceOptions, itf::FrameLayout) {
        let config = AcceleratorConfig { key_bits: 512, stream_bits: 64, engine, ..Default::default() };
        let layout = config.frame_layout().unwrap();
        let options = DeviceOptions {
            lanes: layout.lanes,
            request_beats: layout.request_beats,
            result_beats: layout.result_beats,
            h2c_timeout: timeout,
            c2h_timeout: timeout,
            c2h_capacity: 2 * layout.result_bytes,
            faults: Faults::new(faults),
        };
        (Box::new(InstantResponder::new(&config).unwrap()), options, layout)
    }

    fn device(faults: &[Fault], timeout: Duration) -> (DeviceHandle, itf::FrameLayout) {
        let (responder, options, layout) = parts(faults, timeout);
        (DeviceHandle::spawn(responder, options).unwrap(), layout)
    }

    /// A stall with a result queued behind the last one sent (three jobs a core on the lanes
    /// engine, the result's burst held open for it): that last frame still ends its packet, so
    /// the host reads every result the device sent.
    #[test]
    fn a_stall_ends_the_packet_of_the_last_result() {
        let (responder, mut options, layout) =
            parts_of(Engine::Lanes, &[Fault::StallAfter(1)], Duration::from_millis(300));
        options.c2h_capacity = 4 * layout.result_bytes;
        let device = DeviceHandle::spawn(responder, options).unwrap();
        // Held long enough for the second request to come in and join the first result's burst.
        let hold = (2 * layout.request_beats) as u32;
        let set_hold = |done| Command::WriteRegister { offset: itf::REG_PACKET_HOLD, value: hold, done };
        assert_eq!(call(&device, set_hold), Ok(()));
        let data = [request(&layout, 1), request(&layout, 2)].concat();
        assert_eq!(call(&device, |done| Command::H2cWrite { data, done }), Ok(2 * layout.request_bytes));
        let bytes = call(&device, |done| Command::C2hRead { size: 1 << 20, done }).unwrap();
        assert_eq!(bytes.len(), layout.result_bytes, "the one result sent, in a packet of its own");
        assert_eq!(itf::decode_result(&bytes, layout.digits, layout.stream_bits).unwrap().tag, 1);
    }

    /// Sends a command and waits for its completion.
    fn call<T: Send + 'static>(
        device: &DeviceHandle,
        make: impl FnOnce(Completion<T>) -> Command,
    ) -> Result<T, IoError> {
        let (tx, rx) = mpsc::channel();
        device.sender().send(make(Box::new(move |r| tx.send(r).unwrap()))).unwrap();
        rx.recv_timeout(Duration::from_secs(20)).expect("the device answers")
    }

    fn request(layout: &itf::FrameLayout, tag: u16) -> Vec<u8> {
        itf::encode_request(tag, 0, &BigUint::from(tag), layout.digits, layout.stream_bits).unwrap()
    }

    #[test]
    fn results_stay_buffered_until_read_and_back_pressure_holds_the_rest() {
        let (device, layout) = device(&[], Duration::from_millis(300));
        // Two results fill the buffer, a third waits in the card; the fourth request cannot go in.
        for tag in 0..3 {
            let data = request(&layout, tag);
            assert_eq!(call(&device, |done| Command::H2cWrite { data, done }), Ok(layout.request_bytes));
        }
        let data = request(&layout, 3);
        assert_eq!(call(&device, |done| Command::H2cWrite { data, done }), Err(IoError::TimedOut));
        for tag in 0..3 {
            let bytes = call(&device, |done| Command::C2hRead { size: 1 << 20, done }).unwrap();
            let result = itf::decode_result(&bytes, layout.digits, layout.stream_bits).unwrap();
            assert_eq!((result.tag, result.status), (tag, itf::RESULT_KEY_NOT_LOADED));
        }
        assert_eq!(call(&device, |done| Command::C2hRead { size: 64, done }), Err(IoError::TimedOut));
        assert_eq!(call(&device, |done| Command::ReadRegister { offset: itf::REG_JOBS_OUT, done }), Ok(3));
    }

    #[test]
    fn a_stall_stops_the_streams_but_not_the_registers() {
        let (device, layout) = device(&[Fault::StallAfter(1), Fault::CorruptResult(0)], Duration::from_millis(300));
        let data = request(&layout, 5);
        assert_eq!(call(&device, |done| Command::H2cWrite { data, done }), Ok(layout.request_bytes));
        let bytes = call(&device, |done| Command::C2hRead { size: layout.result_bytes, done }).unwrap();
        let words = itf::bytes_to_words(&bytes);
        assert_eq!((words[0] as u16, words[1]), (5, 1 << 31), "word 1 corrupted, the tag intact");
        // The one core takes a job, whose result never leaves; the next request finds no room.
        let data = request(&layout, 6);
        assert_eq!(call(&device, |done| Command::H2cWrite { data, done }), Ok(layout.request_bytes));
        let data = request(&layout, 7);
        assert_eq!(call(&device, |done| Command::H2cWrite { data, done }), Err(IoError::TimedOut));
        assert_eq!(call(&device, |done| Command::C2hRead { size: layout.result_bytes, done }), Err(IoError::TimedOut));
        assert_eq!(call(&device, |done| Command::ReadRegister { offset: 0, done }), Ok(itf::ID_VALUE));
    }

    #[test]
    fn shutdown_fails_pending_transfers() {
        let (mut device, _) = device(&[], Duration::from_secs(60));
        let (tx, rx) = mpsc::channel();
        let done: Completion<Vec<u8>> = Box::new(move |r| tx.send(r).unwrap());
        device.sender().send(Command::C2hRead { size: 8, done }).unwrap();
        device.shutdown();
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), Err(IoError::Failed));
        let sent = device.sender().send(Command::ReadRegister { offset: 0, done: Box::new(|_| {}) });
        assert!(sent.is_err(), "the thread is gone");
    }

    /// A device without its thread, driven by hand, holding at most two result frames in C2H.
    fn bare_device(faults: &[Fault]) -> (Device, itf::FrameLayout) {
        let (responder, options, layout) = parts(faults, Duration::from_secs(60));
        (Device::new(responder, options), layout)
    }

    /// Clocks the model while it has work; false if it still has after many cycles.
    fn settles(device: &mut Device) -> bool {
        for _ in 0..100_000 {
            if !device.has_work() {
                return true;
            }
            device.step().unwrap();
        }
        false
    }

    /// Posts a read and returns what it completed with (None: still pending).
    fn read(device: &mut Device, size: usize) -> mpsc::Receiver<Result<Vec<u8>, IoError>> {
        let (tx, rx) = mpsc::channel();
        device.handle(Command::C2hRead { size, done: Box::new(move |r| tx.send(r).unwrap()) });
        rx
    }

    fn write(device: &mut Device, data: Vec<u8>) {
        device.handle(Command::H2cWrite { data, done: Box::new(|_| {}) });
    }

    /// After a soft reset the results the card dropped are owed no more: once the host has read
    /// what was in C2H, the model goes idle, and the next request's result comes next.
    #[test]
    fn a_soft_reset_leaves_the_frame_counts_in_step() {
        let (mut device, layout) = bare_device(&[]);
        // Two results fill C2H, the third waits in the card.
        for tag in 0..3 {
            write(&mut device, request(&layout, tag));
        }
        assert!(settles(&mut device));
        assert_eq!((device.frames_in, device.frames_out), (3, 2));
        let reset = Command::WriteRegister {
            offset: itf::REG_CONTROL,
            value: itf::CONTROL_SOFT_RESET,
            done: Box::new(|r| assert_eq!(r, Ok(()))),
        };
        device.handle(reset);
        for tag in 0..2 {
            let bytes = read(&mut device, layout.result_bytes).try_recv().unwrap().unwrap();
            assert_eq!(itf::decode_result(&bytes, layout.digits, layout.stream_bits).unwrap().tag, tag);
        }
        assert!(settles(&mut device), "the dropped result is not waited for");
        assert_eq!(device.frames_in, device.frames_out);
        write(&mut device, itf::resync_request(&layout));
        let answer = read(&mut device, layout.result_bytes);
        assert!(settles(&mut device));
        let bytes = answer.try_recv().unwrap().unwrap();
        let result = itf::decode_result(&bytes, layout.digits, layout.stream_bits).unwrap();
        assert!(itf::is_resync_answer(&result), "{result:?}");
        assert!(!device.has_work());
    }

    /// A read left pending by a process that died takes nothing once the node is released.
    #[test]
    fn a_released_c2h_fails_the_reads_left_pending() {
        let (mut device, layout) = bare_device(&[]);
        let stale = read(&mut device, layout.result_bytes);
        device.handle(Command::C2hReleased);
        assert_eq!(stale.try_recv().unwrap(), Err(IoError::Failed));
        write(&mut device, request(&layout, 7));
        let next = read(&mut device, layout.result_bytes);
        assert!(settles(&mut device));
        let bytes = next.try_recv().unwrap().unwrap();
        assert_eq!(itf::decode_result(&bytes, layout.digits, layout.stream_bits).unwrap().tag, 7);
    }

    /// The faults hit the results of what a host asked for: a takeover's resynchronisation
    /// answer is not counted, nor corrupted.
    #[test]
    fn faults_skip_resync_answers() {
        let (mut device, layout) = bare_device(&[Fault::CorruptResult(0), Fault::StallAfter(1)]);
        let (d, s) = (layout.digits, layout.stream_bits);
        write(&mut device, itf::resync_request(&layout));
        let answer = read(&mut device, layout.result_bytes);
        assert!(settles(&mut device));
        let answer = itf::decode_result(&answer.try_recv().unwrap().unwrap(), d, s).unwrap();
        assert!(itf::is_resync_answer(&answer), "intact: {answer:?}");
        write(&mut device, request(&layout, 3));
        let result = read(&mut device, layout.result_bytes);
        assert!(settles(&mut device));
        let corrupted = itf::decode_result(&result.try_recv().unwrap().unwrap(), d, s);
        assert!(matches!(corrupted, Err(itf::FrameError::LimbHighBits { word: 1, .. })), "{corrupted:?}");
        assert!(device.stalled(), "after one result");
    }
}
