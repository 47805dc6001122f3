//! Taking over a card (docs/interface.md, "Taking over a card"): what [`super::open`] does after
//! the probe and before the key load. A host that died may have left the card holding part of a
//! request frame, jobs in its cores and results nobody read; a new host that simply started
//! streaming would read those results as answers to its own requests and lose step. So, holding
//! the C2H node (it opens once: no live host is disturbed), the host soft-resets the card, sends
//! the resynchronisation frame, drops every result frame before its answer, waits for the earlier
//! jobs to run out, and only then loads its key.

use crate::backends::xdma::nodes::{read_some, write_packet, AlignedBuf, DeviceNodes, Registers};
use anyhow::{anyhow, bail, Context};
use ecrt_contract::interface::{self as itf, FrameLayout, LANE_BYTES};
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// How long each step of a takeover may take.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// From the resynchronisation frame sent to its answer read.
    pub resync: Duration,
    /// From that answer to STATUS.BUSY = 0, while the earlier host's jobs run out: a 2048-bit
    /// decryption takes about 3 s on the emulated (Verilator) device, milliseconds on a board.
    pub idle: Duration,
    /// Between two reads of STATUS.
    pub poll: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { resync: Duration::from_secs(10), idle: Duration::from_secs(60), poll: Duration::from_millis(5) }
    }
}

/// What a takeover found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Takeover {
    /// Result frames an earlier host left unread, dropped before the resynchronisation frame's
    /// answer (a partial frame counts as one).
    pub dropped_results: usize,
}

impl std::fmt::Display for Takeover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.dropped_results {
            1 => f.write_str("dropped 1 result an earlier process left"),
            n => write!(f, "dropped {n} results an earlier process left"),
        }
    }
}

/// Brings the card behind `user`, `h2c` and `c2h` (opened in that order, C2H before H2C) back to
/// a clean state, and hands `c2h` back positioned just after the resynchronisation frame's answer.
pub fn take_over<B: Registers, R: Read + Send + 'static>(
    user: &mut B,
    c2h: R,
    h2c: &mut impl Write,
    layout: &FrameLayout,
    nodes: &DeviceNodes,
    limits: &Limits,
) -> anyhow::Result<(Takeover, R)> {
    let (c2h_name, user_name) = (nodes.c2h.display().to_string(), nodes.user.display().to_string());
    // The reader runs from the start: a frame of the earlier host still leaving may need room in
    // C2H before the card can take the resynchronisation frame.
    let abandoned = Arc::new(AtomicBool::new(false));
    let (answered, answer) = mpsc::channel();
    {
        let (layout, abandoned, name) = (*layout, abandoned.clone(), c2h_name.clone());
        let mut c2h = c2h;
        std::thread::Builder::new()
            .name("ecrt-takeover-c2h".into())
            .spawn(move || {
                let outcome = drop_until_answer(&mut c2h, &layout, &abandoned, &name);
                let _ = answered.send(outcome.map(|dropped| (dropped, c2h)));
            })
            .context("cannot start the C2H reader")?;
    }
    // The reader gives up after its current read if anything below fails.
    let give_up = |error: anyhow::Error| {
        abandoned.store(true, Ordering::Relaxed);
        error
    };
    user.write(itf::REG_CONTROL, itf::CONTROL_SOFT_RESET)
        .with_context(|| format!("cannot write the soft reset to {user_name}"))
        .map_err(give_up)?;
    write_packet(h2c, &itf::resync_request(layout))
        .with_context(|| format!("the card did not take the resynchronisation frame from {}", nodes.h2c.display()))
        .map_err(give_up)?;
    let (dropped_results, c2h) = match answer.recv_timeout(limits.resync) {
        Ok(Ok(found)) => found,
        Ok(Err(reason)) => return Err(give_up(anyhow!(reason))),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            return Err(give_up(anyhow!(
                "the card did not answer the resynchronisation frame on {c2h_name} within {} s: it does \
                 not answer requests (reload the bitstream, or restart `ecrt emulate`)",
                limits.resync.as_secs_f64()
            )))
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => bail!("the reader of {c2h_name} stopped"),
    };
    wait_idle(user, &user_name, limits)?;
    // The resynchronisation frame's MALFORMED and the earlier host's flags are not this session's.
    user.write(itf::REG_ERRORS, itf::ERROR_KEY_NOT_LOADED | itf::ERROR_MALFORMED)
        .with_context(|| format!("cannot clear the error flags through {user_name}"))?;
    Ok((Takeover { dropped_results }, c2h))
}

/// Polls STATUS until BUSY falls: the jobs of the earlier host run out after the soft reset.
fn wait_idle<B: Registers>(user: &mut B, user_name: &str, limits: &Limits) -> anyhow::Result<()> {
    let deadline = Instant::now() + limits.idle;
    loop {
        let status = user.read(itf::REG_STATUS).with_context(|| format!("cannot read STATUS from {user_name}"))?;
        if status & itf::STATUS_BUSY == 0 {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!(
                "the accelerator stayed busy (STATUS {status:#x}) for {} s after a soft reset: an earlier \
                 process's jobs run out within seconds (about 3 s per 2048-bit decryption on the emulated \
                 device, milliseconds on a board), so it is stuck; reload the bitstream (or restart `ecrt emulate`)",
                limits.idle.as_secs_f64()
            );
        }
        std::thread::sleep(limits.poll);
    }
}

/// Reads C2H until the resynchronisation frame's answer and returns how many frames came before
/// it. Reads end on frame boundaries, so nothing after the answer is taken. The answer is looked
/// for at every word, not only every frame, so a stream left mid-frame (a host killed between two
/// reads of one frame) still resynchronises: its header word (tag 0xFFFF, magic 0x5A) can be no
/// limb (17 bits) and no padding (0).
fn drop_until_answer(
    c2h: &mut impl Read,
    layout: &FrameLayout,
    abandoned: &AtomicBool,
    name: &str,
) -> Result<usize, String> {
    let frame = layout.result_bytes;
    let mut buf = AlignedBuf::new(frame);
    let mut carry: Vec<u8> = Vec::with_capacity(2 * frame);
    // Stream bytes read so far, and those before `carry`.
    let (mut total, mut before) = (0usize, 0usize);
    while !abandoned.load(Ordering::Relaxed) {
        let want = frame - total % frame;
        let n = match read_some(c2h, &mut buf[..want]) {
            Ok(0) => return Err(format!("{name} ended its stream before the resynchronisation frame's answer")),
            Ok(n) => n,
            // The XDMA driver gives up on a read after its own timeout; ours is the caller's.
            Err(e) if matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock) => continue,
            Err(e) => return Err(format!("cannot read {name}: {e}")),
        };
        total += n;
        carry.extend_from_slice(&buf[..n]);
        if let Some(at) = find_answer(&carry, layout) {
            return Ok((before + at).div_ceil(frame));
        }
        // Keep only what may still be the start of the answer.
        let cut = carry.len().saturating_sub(frame - LANE_BYTES) / LANE_BYTES * LANE_BYTES;
        carry.drain(..cut);
        before += cut;
    }
    Err("abandoned".into())
}

/// The offset of the first resynchronisation answer in `bytes`, at a word boundary.
fn find_answer(bytes: &[u8], layout: &FrameLayout) -> Option<usize> {
    let frame = layout.result_bytes;
    let tag = itf::RESYNC_TAG.to_le_bytes();
    (0..bytes.len().saturating_sub(frame - 1)).step_by(LANE_BYTES).find(|&at| {
        bytes[at..at + 2] == tag
            && itf::decode_result(&bytes[at..at + frame], layout.digits, layout.stream_bits)
                .is_ok_and(|result| itf::is_resync_answer(&result))
    })
}

#[cfg(test)]
mod tests {
    //! The takeover against an in-memory card: a register block, an H2C sink that answers the
    //! resynchronisation frame, and a C2H source holding what an earlier host left.
    use super::*;
    use num_bigint::BigUint;
    use std::path::Path;
    use std::sync::Mutex;

    use crate::backends::xdma::test_card::{layout, result_bytes, DIGITS, STREAM_BITS};

    fn result(tag: u16, status: u8, plaintext: u64) -> Vec<u8> {
        result_bytes(tag, status, BigUint::from(plaintext))
    }

    /// What the host did to the card, in order.
    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Step {
        Reset,
        Resync,
        Status,
        ClearErrors(u32),
    }

    #[derive(Default)]
    struct Card {
        steps: Vec<Step>,
        /// STATUS reads that still find the card busy after the reset.
        busy_reads: usize,
        /// Answers the resynchronisation frame.
        answers: bool,
        /// Fails register writes.
        dead_bus: bool,
    }

    type Shared = Arc<Mutex<Card>>;

    struct Bus(Shared);
    impl Registers for Bus {
        type Error = io::Error;
        fn read(&mut self, offset: u32) -> io::Result<u32> {
            assert_eq!(offset, itf::REG_STATUS);
            let mut card = self.0.lock().unwrap();
            card.steps.push(Step::Status);
            let busy = card.busy_reads > 0;
            card.busy_reads = card.busy_reads.saturating_sub(1);
            Ok(itf::STATUS_KEY_VALID | if busy { itf::STATUS_BUSY } else { 0 })
        }
        fn write(&mut self, offset: u32, value: u32) -> io::Result<()> {
            let mut card = self.0.lock().unwrap();
            if card.dead_bus {
                return Err(io::Error::from_raw_os_error(libc::EIO));
            }
            match (offset, value) {
                (itf::REG_CONTROL, itf::CONTROL_SOFT_RESET) => card.steps.push(Step::Reset),
                (itf::REG_ERRORS, _) => card.steps.push(Step::ClearErrors(value)),
                other => panic!("unexpected write {other:x?}"),
            }
            Ok(())
        }
    }

    /// H2C: the resynchronisation frame, after the reset, makes its answer the next C2H packet.
    struct H2c(Shared, mpsc::Sender<Vec<u8>>);
    impl Write for H2c {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            assert_eq!(buf, itf::resync_request(&layout()), "one packet: the resynchronisation frame");
            let mut card = self.0.lock().unwrap();
            assert_eq!(card.steps, [Step::Reset], "the reset comes first");
            card.steps.push(Step::Resync);
            if card.answers {
                let status = itf::RESULT_MALFORMED | itf::RESULT_KEY_NOT_LOADED;
                self.1.send(result(itf::RESYNC_TAG, status, 0)).unwrap();
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// C2H: a read returns at most one packet; nothing for 20 ms is a driver timeout.
    struct C2h {
        packets: mpsc::Receiver<Vec<u8>>,
        rest: Vec<u8>,
        reads: usize,
    }
    impl Read for C2h {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.reads += 1;
            if self.rest.is_empty() {
                self.rest = match self.packets.recv_timeout(Duration::from_millis(20)) {
                    Ok(p) => p,
                    Err(mpsc::RecvTimeoutError::Timeout) => return Err(io::ErrorKind::TimedOut.into()),
                    Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(0),
                };
            }
            let n = buf.len().min(self.rest.len());
            buf[..n].copy_from_slice(&self.rest[..n]);
            self.rest.drain(..n);
            Ok(n)
        }
    }

    struct Rig {
        card: Shared,
        bus: Bus,
        h2c: H2c,
        c2h: C2h,
        /// Sends C2H packets (what the earlier host left, or what comes after the takeover).
        packets: mpsc::Sender<Vec<u8>>,
    }

    /// A card holding `left` (C2H packets nobody read).
    fn setup(left: &[Vec<u8>]) -> Rig {
        let card: Shared = Arc::new(Mutex::new(Card { answers: true, ..Default::default() }));
        let (packets, rx) = mpsc::channel();
        for packet in left {
            packets.send(packet.clone()).unwrap();
        }
        let c2h = C2h { packets: rx, rest: vec![], reads: 0 };
        Rig { bus: Bus(card.clone()), h2c: H2c(card.clone(), packets.clone()), card, c2h, packets }
    }

    fn limits() -> Limits {
        Limits { resync: Duration::from_millis(400), idle: Duration::from_millis(400), poll: Duration::from_millis(1) }
    }

    fn run(rig: Rig) -> (anyhow::Result<(Takeover, C2h)>, Shared, mpsc::Sender<Vec<u8>>) {
        let Rig { card, mut bus, mut h2c, c2h, packets } = rig;
        let nodes = DeviceNodes::new(Path::new("/dev/xdma9"));
        (take_over(&mut bus, c2h, &mut h2c, &layout(), &nodes, &limits()), card, packets)
    }

    #[test]
    fn a_clean_card_drops_nothing() {
        let (outcome, card, _) = run(setup(&[]));
        let (takeover, _) = outcome.unwrap();
        assert_eq!(takeover, Takeover { dropped_results: 0 });
        let clear = itf::ERROR_KEY_NOT_LOADED | itf::ERROR_MALFORMED;
        assert_eq!(card.lock().unwrap().steps, [Step::Reset, Step::Resync, Step::Status, Step::ClearErrors(clear)]);
    }

    /// Whatever whole frames came before the answer are dropped and counted, whether they decode
    /// or not; the stream is handed back just after the answer.
    #[test]
    fn frames_left_before_the_answer_are_dropped_and_counted() {
        let mut corrupt = result(4, 0, 9);
        corrupt[3] = 0x00; // no magic
        let mut burst = result(1, 0, 77);
        burst.extend(result(2, itf::RESULT_MALFORMED, 0));
        let (outcome, _, packets) = run(setup(&[burst, corrupt, result(3, 0, 5)]));
        let (takeover, mut c2h) = outcome.unwrap();
        assert_eq!(takeover.dropped_results, 4);
        assert_eq!(takeover.to_string(), "dropped 4 results an earlier process left");
        // Nothing after the answer was read: the next frame is the next read's.
        packets.send(result(10, 0, 1)).unwrap();
        let mut next = vec![0u8; 2 * layout().result_bytes];
        let n = c2h.read(&mut next).unwrap();
        let next = itf::decode_result(&next[..n], DIGITS, STREAM_BITS).unwrap();
        assert_eq!((next.tag, next.plaintext), (10, BigUint::from(1u8)));
    }

    /// A host killed between two reads of one frame leaves the rest of it: the answer is still
    /// found, and the partial frame counts as one.
    #[test]
    fn a_stream_left_mid_frame_resynchronises() {
        let half = result(1, 0, 3)[layout().result_bytes / 2..].to_vec();
        let (outcome, _, _) = run(setup(&[half, result(2, 0, 4)]));
        assert_eq!(outcome.unwrap().0.dropped_results, 2);
    }

    #[test]
    fn the_jobs_of_an_earlier_host_are_waited_for() {
        let rig = setup(&[]);
        rig.card.lock().unwrap().busy_reads = 5;
        let (outcome, card, _) = run(rig);
        outcome.unwrap();
        let statuses = card.lock().unwrap().steps.iter().filter(|s| **s == Step::Status).count();
        assert_eq!(statuses, 6, "polled until BUSY fell");
    }

    #[test]
    fn a_card_that_stays_busy_is_refused_clearly() {
        let rig = setup(&[]);
        rig.card.lock().unwrap().busy_reads = usize::MAX;
        let started = Instant::now();
        let message = format!("{:#}", run(rig).0.err().unwrap());
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(message.contains("stayed busy (STATUS 0x3) for 0.4 s after a soft reset"), "{message}");
        assert!(message.contains("reload the bitstream"), "{message}");
    }

    #[test]
    fn a_card_that_does_not_answer_is_refused_clearly() {
        let rig = setup(&[result(1, 0, 3)]);
        rig.card.lock().unwrap().answers = false;
        let started = Instant::now();
        let message = format!("{:#}", run(rig).0.err().unwrap());
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(
            message.contains("did not answer the resynchronisation frame on /dev/xdma9_c2h_0 within 0.4 s"),
            "{message}"
        );
    }

    #[test]
    fn a_failing_register_or_stream_is_reported() {
        let rig = setup(&[]);
        rig.card.lock().unwrap().dead_bus = true;
        let message = format!("{:#}", run(rig).0.err().unwrap());
        assert!(message.contains("cannot write the soft reset to /dev/xdma9_user"), "{message}");

        // C2H ends (the card is gone) before the answer.
        let mut rig = setup(&[]);
        rig.card.lock().unwrap().answers = false;
        let (_, closed) = mpsc::channel();
        rig.c2h.packets = closed;
        let message = format!("{:#}", run(rig).0.err().unwrap());
        assert!(message.contains("/dev/xdma9_c2h_0 ended its stream"), "{message}");
    }

    /// The answer at every word offset is found, and nowhere else: a limb or padding word never
    /// passes for its header.
    #[test]
    fn the_answer_is_found_at_any_word_and_only_there() {
        let answer = result(itf::RESYNC_TAG, itf::RESULT_MALFORMED, 0);
        let big = result(0xFFFF, 0, (1 << 63) | 0x1_FFFF);
        assert_eq!(find_answer(&big, &layout()), None, "a plaintext under tag 0xFFFF is no answer");
        for pad in 0..3 {
            let mut bytes = vec![0u8; 4 * pad];
            bytes.extend(result(1, 0, u64::MAX));
            bytes.extend(&answer);
            assert_eq!(find_answer(&bytes, &layout()), Some(4 * pad + layout().result_bytes));
            assert_eq!(find_answer(&bytes[..bytes.len() - 1], &layout()), None, "a partial answer");
        }
    }
}
