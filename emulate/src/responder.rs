//! What answers behind the emulated XDMA device: the accelerator's Verilator model
//! ([`RtlResponder`]) or a software stand-in that answers at once ([`InstantResponder`]), both
//! clocked one stream cycle at a time by the device thread.

use anyhow::Context;
use ecrt_contract::config::AcceleratorConfig;
use ecrt_contract::interface::{self as itf, CycleIo, FrameLayout, OutputBeat, ResultFrame};
use ecrt_contract::register_model::{RegisterModel, WriteEffect};
use ecrt_sim::{accelerator::AcceleratorSim, BuildOptions};
use num_bigint::BigUint;
use std::collections::VecDeque;
use std::fmt;
use std::str::FromStr;

/// The register address bits the slave decodes.
const ADDRESS_MASK: u32 = (1 << itf::ADDRESS_BITS) - 1;

/// The accelerator as the XDMA IP sees it: an AXI4-Lite register slave and two AXI4-Stream ports,
/// clocked by the caller.
pub trait Responder: Send {
    /// A short name for messages (`rtl`, `instant`).
    fn name(&self) -> &'static str;
    /// One AXI4-Lite read of the register at byte `offset`.
    fn read_register(&mut self, offset: u32) -> anyhow::Result<u32>;
    /// One AXI4-Lite write of the register at byte `offset`.
    fn write_register(&mut self, offset: u32, value: u32) -> anyhow::Result<()>;
    /// One clock cycle of the streams: `input` is the request beat offered (its words, one per
    /// lane, and TLAST), `output_ready` is the result stream's TREADY. A beat not taken is
    /// offered again on the next cycle.
    fn cycle(&mut self, input: Option<(&[u32], bool)>, output_ready: bool) -> anyhow::Result<CycleIo>;
    /// Cycles without a stream handshake after which the responder, its output held back, can
    /// change nothing more by itself (its cores have finished): the device stops clocking it
    /// then, until the output moves again.
    fn settle_cycles(&self) -> u64;
}

/// Which [`Responder`] serves the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResponderKind {
    /// The accelerator's Verilator model of the configuration ([`RtlResponder`]).
    #[default]
    Rtl,
    /// A software stand-in that answers every request at once ([`InstantResponder`]).
    Instant,
}

impl ResponderKind {
    /// The name `--responder` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            ResponderKind::Rtl => "rtl",
            ResponderKind::Instant => "instant",
        }
    }
}

impl FromStr for ResponderKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "rtl" => Ok(ResponderKind::Rtl),
            "instant" => Ok(ResponderKind::Instant),
            other => Err(format!("unknown responder {other:?}: rtl or instant")),
        }
    }
}

impl fmt::Display for ResponderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The accelerator's Verilator model (`ecrt_sim::accelerator::AcceleratorSim`).
pub struct RtlResponder {
    sim: AcceleratorSim,
}

impl RtlResponder {
    /// Builds (or takes from the cache) the Verilator model of `config`. The first build of a
    /// configuration takes minutes at 2048 bits; `build.progress` shows a spinner meanwhile.
    pub fn build(config: &AcceleratorConfig, build: &BuildOptions) -> anyhow::Result<Self> {
        config.validate()?;
        let sim = AcceleratorSim::build(config, build, false)
            .with_context(|| format!("cannot build the {}-bit Verilator model", config.key_bits))?;
        Ok(RtlResponder { sim })
    }

    /// Serves an already built model.
    pub fn new(sim: AcceleratorSim) -> Self {
        RtlResponder { sim }
    }
}

impl Responder for RtlResponder {
    fn name(&self) -> &'static str {
        "rtl"
    }

    // The slave decodes 12 address bits: a larger BAR aliases, as on the board.
    fn read_register(&mut self, offset: u32) -> anyhow::Result<u32> {
        Ok(self.sim.read_register(offset & ADDRESS_MASK)?)
    }

    fn write_register(&mut self, offset: u32, value: u32) -> anyhow::Result<()> {
        Ok(self.sim.write_register(offset & ADDRESS_MASK, value)?)
    }

    fn cycle(&mut self, input: Option<(&[u32], bool)>, output_ready: bool) -> anyhow::Result<CycleIo> {
        Ok(self.sim.cycle(input, output_ready)?)
    }

    /// Long enough for every core to finish a decryption (the driver's hang guard).
    fn settle_cycles(&self) -> u64 {
        4 * self.sim.manifest().config.cycles_per_decryption_path() as u64 + 10_000
    }
}

/// A software stand-in for the accelerator, for measuring the host driver's own overhead: every
/// request frame is answered as soon as its last beat (or an early TLAST) is taken, with the
/// request's tag and
///
/// - status KEY_NOT_LOADED when no key is committed or the frame's key id is not the committed one,
/// - status MALFORMED for a bad frame (wrong length, opcode, limb high bits or padding),
/// - else status 0 and, as "plaintext", the ciphertext's low key_bits − 1 bits (so it is < n).
///
/// Its register block is the contract's [`RegisterModel`], which a test holds the RTL's to;
/// KEY_DATA values are accepted (or refused) and then ignored. It holds at most one result
/// frame per core: with that many waiting to leave, it takes no input (back-pressure, as the
/// RTL's cores do). As in the RTL, TLAST ends a burst: a result's last beat loses TLAST when
/// another result joins the queue behind it before it has left, and with PACKET_HOLD set, the
/// beat that would end a burst waits that many cycles for one to join. A soft reset (CONTROL)
/// drops the request frame coming in and the results waiting, but finishes a result frame
/// already leaving, ending its packet at once; the key stays.
pub struct InstantResponder {
    config: AcceleratorConfig,
    layout: FrameLayout,
    registers: RegisterModel,
    /// The request frame coming in.
    frame: Vec<u32>,
    /// Beats of the result frame leaving.
    out_beats: usize,
    /// Cycles the beat that would end a burst has waited (PACKET_HOLD).
    held: u32,
    /// Result beats waiting to leave; the last of a frame says whether the frame is an error.
    output: VecDeque<(OutputBeat, bool)>,
}

impl InstantResponder {
    /// A stand-in for the accelerator of `config`.
    pub fn new(config: &AcceleratorConfig) -> anyhow::Result<Self> {
        config.validate()?;
        let layout = FrameLayout::new(config.digits(), config.stream_bits)?;
        Ok(InstantResponder {
            config: config.clone(),
            layout,
            registers: RegisterModel::new(config),
            frame: Vec::with_capacity(layout.request_beats * layout.lanes),
            out_beats: 0,
            held: 0,
            output: VecDeque::new(),
        })
    }

    fn busy(&self) -> bool {
        !self.frame.is_empty() || !self.output.is_empty()
    }

    /// What a host left is dropped: the request frame coming in, and the results waiting (this
    /// responder's "jobs" end at once), except the rest of a frame already leaving, which now
    /// ends its packet, so that the stream stays in whole frames.
    fn soft_reset(&mut self) {
        self.frame.clear();
        let leaving = if self.out_beats == 0 { 0 } else { self.layout.result_beats - self.out_beats };
        self.output.truncate(leaving);
        if let Some((beat, _)) = self.output.back_mut() {
            beat.last = true;
            self.held = self.registers.packet_hold();
        }
    }

    /// The result of the request frame just ended (at its size, or early by TLAST).
    fn answer(&mut self) -> anyhow::Result<()> {
        let words = std::mem::take(&mut self.frame);
        let header = words.first().copied().unwrap_or(0);
        let (digits, stream_bits) = (self.layout.digits, self.layout.stream_bits);
        // decode_request checks the length, the opcode, the limbs' high bits and the padding.
        let request = itf::decode_request(&itf::words_to_bytes(&words), digits, stream_bits).ok();
        let key_id = (header >> itf::HEADER_KEY_ID_SHIFT) as u8;
        let mut status = 0;
        if !self.registers.key_valid() || key_id != self.registers.key_id() {
            status |= itf::RESULT_KEY_NOT_LOADED;
        }
        if request.is_none() {
            status |= itf::RESULT_MALFORMED;
        }
        self.registers.refused(status);
        let plaintext = match request {
            Some(request) if status == itf::RESULT_OK => {
                let mask = (BigUint::from(1u8) << (self.config.key_bits - 1)) - 1u8;
                request.ciphertext & mask
            }
            _ => BigUint::default(),
        };
        let result = ResultFrame { tag: header as u16, status, plaintext };
        let words = itf::encode_result_words(&result, digits, stream_bits)?;
        let beats = words.len() / self.layout.lanes;
        // The burst goes on: the waiting result's last beat no longer ends a packet.
        if let Some((waiting, _)) = self.output.back_mut() {
            waiting.last = false;
        }
        for (k, beat) in words.chunks(self.layout.lanes).enumerate() {
            let last = k + 1 == beats;
            self.output.push_back((OutputBeat { words: beat.to_vec(), last }, last && status != itf::RESULT_OK));
        }
        self.registers.job_in();
        Ok(())
    }
}

impl Responder for InstantResponder {
    fn name(&self) -> &'static str {
        "instant"
    }

    fn read_register(&mut self, offset: u32) -> anyhow::Result<u32> {
        Ok(self.registers.read(offset, self.busy()))
    }

    /// KEY_DATA values are accepted (or refused) as the RTL does, then ignored.
    fn write_register(&mut self, offset: u32, value: u32) -> anyhow::Result<()> {
        let busy = self.busy();
        if let Some(WriteEffect::SoftReset) = self.registers.write(offset, value, busy) {
            self.soft_reset();
        }
        Ok(())
    }

    fn cycle(&mut self, input: Option<(&[u32], bool)>, output_ready: bool) -> anyhow::Result<CycleIo> {
        let mut io = CycleIo::default();
        // The beat that would end a burst waits out the hold (TREADY or not), unless a result
        // joins it meanwhile.
        let ends_burst = self.output.len() == 1 && self.output[0].0.last;
        let holding = ends_burst && self.held < self.registers.packet_hold();
        self.held += u32::from(holding);
        if output_ready && !holding {
            if let Some((beat, failed)) = self.output.pop_front() {
                self.held = 0;
                self.out_beats += 1;
                if self.out_beats == self.layout.result_beats {
                    self.out_beats = 0;
                    self.registers.job_out(if failed { itf::RESULT_MALFORMED } else { itf::RESULT_OK });
                }
                io.output = Some(beat);
            }
        }
        // One result frame per job a core holds at most waits to leave; input waits while they do.
        let room = self.output.len() < self.config.cores * self.config.jobs_per_core() * self.layout.result_beats;
        if let (Some((beat, last)), true) = (input, room) {
            anyhow::ensure!(
                beat.len() == self.layout.lanes,
                "a beat of {} words on a {}-lane stream",
                beat.len(),
                self.layout.lanes
            );
            io.input_taken = true;
            self.frame.extend_from_slice(beat);
            if last || self.frame.len() == self.layout.request_beats * self.layout.lanes {
                self.answer()?;
            }
        }
        Ok(io)
    }

    /// Nothing happens inside between handshakes.
    fn settle_cycles(&self) -> u64 {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two slots: one job a core, the buffering the tests count on.
    fn config() -> AcceleratorConfig {
        AcceleratorConfig {
            key_bits: 512,
            stream_bits: 128,
            engine: ecrt_contract::config::Engine::Slots,
            ..Default::default()
        }
    }

    /// Offers a packet beat by beat (output always ready) and collects `frames` result frames.
    fn exchange(r: &mut InstantResponder, words: &[u32], frames: usize) -> Vec<u32> {
        let lanes = r.layout.lanes;
        let beats: Vec<&[u32]> = words.chunks(lanes).collect();
        let (mut next, mut out) = (0, Vec::new());
        for _ in 0..10_000 {
            let offer = beats.get(next).map(|b| (*b, next + 1 == beats.len()));
            let io = r.cycle(offer, true).unwrap();
            next += io.input_taken as usize;
            if let Some(beat) = io.output {
                out.extend(beat.words);
                if out.len() == frames * r.layout.result_beats * lanes {
                    assert!(beat.last, "the last result ends a packet");
                    return out;
                }
            }
        }
        panic!("no result");
    }

    /// Sends a request frame and decodes its result.
    fn ask(r: &mut InstantResponder, request: &[u32]) -> ResultFrame {
        let words = exchange(r, request, 1);
        itf::decode_result(&itf::words_to_bytes(&words), r.layout.digits, r.layout.stream_bits).unwrap()
    }

    #[test]
    fn answers_follow_the_key_state() {
        let mut r = InstantResponder::new(&config()).unwrap();
        assert_eq!(r.read_register(itf::REG_ID).unwrap(), itf::ID_VALUE);
        assert_eq!(r.read_register(itf::REG_DIGITS).unwrap() as usize, config().digits());
        let c = (BigUint::from(1u8) << 700) + 12345u32;
        let (d, s) = (r.layout.digits, r.layout.stream_bits);
        let request = itf::encode_request_words(7, 3, &c, d, s).unwrap();
        let answer = ask(&mut r, &request);
        assert_eq!((answer.tag, answer.status), (7, itf::RESULT_KEY_NOT_LOADED));

        for (offset, value) in itf::key_load_writes(&[], 3) {
            r.write_register(offset, value).unwrap();
        }
        assert_eq!(r.read_register(itf::REG_STATUS).unwrap(), itf::STATUS_KEY_VALID);
        let answer = ask(&mut r, &request);
        assert_eq!((answer.tag, answer.status, answer.plaintext), (7, 0, BigUint::from(12345u32)));

        let mut bad = request.clone();
        bad[0] ^= 0x0100_0000;
        let answer = ask(&mut r, &bad);
        assert_eq!(answer.status, itf::RESULT_MALFORMED);
        let short = &request[..request.len() - r.layout.lanes];
        assert_eq!(ask(&mut r, short).status, itf::RESULT_MALFORMED);
        // Two frames in one packet: two results.
        let mut two = request.clone();
        two.extend(itf::encode_request_words(8, 3, &c, d, s).unwrap());
        let words = exchange(&mut r, &two, 2);
        let results = itf::decode_results(&itf::words_to_bytes(&words), d, s).unwrap();
        assert_eq!(results.iter().map(|r| (r.tag, r.status)).collect::<Vec<_>>(), [(7, 0), (8, 0)]);

        assert_eq!(r.read_register(itf::REG_JOBS_IN).unwrap(), 6);
        assert_eq!(r.read_register(itf::REG_JOBS_OUT).unwrap(), 6);
        assert_eq!(r.read_register(itf::REG_JOBS_FAILED).unwrap(), 3);
        let errors = itf::ERROR_KEY_NOT_LOADED | itf::ERROR_MALFORMED;
        assert_eq!(r.read_register(itf::REG_ERRORS).unwrap(), errors);
        r.write_register(itf::REG_ERRORS, errors).unwrap();
        assert_eq!(r.read_register(itf::REG_ERRORS).unwrap(), 0);
    }

    #[test]
    fn key_writes_outside_a_load_are_refused() {
        let mut r = InstantResponder::new(&config()).unwrap();
        r.write_register(itf::REG_KEY_DATA, 1).unwrap();
        r.write_register(itf::REG_KEY_CONTROL, itf::key_control_commit(1)).unwrap();
        assert_eq!(r.read_register(itf::REG_ERRORS).unwrap(), itf::ERROR_KEY_LOAD_REFUSED);
        assert_eq!(r.read_register(itf::REG_STATUS).unwrap() & itf::STATUS_KEY_VALID, 0);
    }

    /// Results that queue up leave as one packet: TLAST only after the last of them.
    #[test]
    fn waiting_results_leave_in_one_burst() {
        let config = AcceleratorConfig { cores: 3, ..config() };
        let mut r = InstantResponder::new(&config).unwrap();
        let lanes = r.layout.lanes;
        let mut packet = Vec::new();
        for tag in 0..3 {
            packet.extend(itf::encode_request_words(tag, 0, &BigUint::from(5u8), r.layout.digits, 128).unwrap());
        }
        let beats = packet.len() / lanes;
        for (k, beat) in packet.chunks(lanes).enumerate() {
            assert!(r.cycle(Some((beat, k + 1 == beats)), false).unwrap().input_taken);
        }
        let mut lasts = Vec::new();
        while let Some(beat) = r.cycle(None, true).unwrap().output {
            lasts.push(beat.last);
        }
        assert_eq!(lasts.len(), 3 * r.layout.result_beats);
        assert_eq!(lasts.iter().filter(|&&l| l).count(), 1);
        assert!(lasts[lasts.len() - 1]);
    }

    /// With PACKET_HOLD, requests that come one after another (each answered as its last beat
    /// arrives) leave as one packet; without it, each result ends its own. A lone result still
    /// ends its packet, once the hold has run out.
    #[test]
    fn packet_hold_joins_results_that_follow_within_it() {
        let packets = |hold: u32| {
            let config = AcceleratorConfig { cores: 3, ..config() };
            let mut r = InstantResponder::new(&config).unwrap();
            r.write_register(itf::REG_PACKET_HOLD, hold).unwrap();
            assert_eq!(r.read_register(itf::REG_PACKET_HOLD).unwrap(), hold);
            let lanes = r.layout.lanes;
            let mut packet = Vec::new();
            for tag in 0..3 {
                packet.extend(itf::encode_request_words(tag, 0, &BigUint::from(5u8), r.layout.digits, 128).unwrap());
            }
            let beats: Vec<&[u32]> = packet.chunks(lanes).collect();
            let (mut next, mut lasts, mut cycles) = (0, Vec::new(), 0);
            while lasts.len() < 3 * r.layout.result_beats {
                let io = r.cycle(beats.get(next).map(|b| (*b, next + 1 == beats.len())), true).unwrap();
                next += usize::from(io.input_taken);
                lasts.extend(io.output.map(|beat| beat.last));
                cycles += 1;
                assert!(cycles < 10_000, "every result leaves");
            }
            assert!(lasts[lasts.len() - 1], "the last result ends a packet");
            (lasts.iter().filter(|&&l| l).count(), cycles)
        };
        let config = AcceleratorConfig { cores: 3, ..config() };
        let hold = FrameLayout::new(config.digits(), 128).unwrap().packet_hold_cycles();
        let (apart, quick) = packets(0);
        let (together, held) = packets(hold);
        assert_eq!((apart, together), (3, 1));
        // The burst's end waited out the hold once; a result joining a held beat frees it the
        // cycle after it is answered.
        assert!((quick + hold as usize..=quick + hold as usize + 2).contains(&held), "{held} cycles, {quick} without");
    }

    #[test]
    fn a_pending_result_holds_the_input() {
        let mut r = InstantResponder::new(&config()).unwrap();
        let lanes = r.layout.lanes;
        let request = itf::encode_request_words(1, 0, &BigUint::from(5u8), r.layout.digits, 128).unwrap();
        for (k, beat) in request.chunks(lanes).enumerate() {
            let io = r.cycle(Some((beat, k + 1 == request.len() / lanes)), false).unwrap();
            assert!(io.input_taken && io.output.is_none());
        }
        let beat = &request[..lanes];
        assert!(!r.cycle(Some((beat, false)), false).unwrap().input_taken, "a result is waiting");
        assert_ne!(r.read_register(itf::REG_STATUS).unwrap() & itf::STATUS_BUSY, 0);
    }

    /// A soft reset drops the partial request and the waiting results, sends the frame already
    /// leaving whole, and keeps the key: the next request is answered as usual.
    #[test]
    fn a_soft_reset_drops_what_a_host_left() {
        let config = AcceleratorConfig { cores: 2, ..config() };
        let mut r = InstantResponder::new(&config).unwrap();
        let (lanes, d) = (r.layout.lanes, r.layout.digits);
        for (offset, value) in itf::key_load_writes(&[], 3) {
            r.write_register(offset, value).unwrap();
        }
        let request = |tag| itf::encode_request_words(tag, 3, &BigUint::from(5u8), d, 128).unwrap();
        // Two results waiting, the first one beat out, and half a request in.
        let mut packet = request(1);
        packet.extend(request(2));
        let beats = packet.len() / lanes;
        for (k, beat) in packet.chunks(lanes).enumerate() {
            assert!(r.cycle(Some((beat, k + 1 == beats)), false).unwrap().input_taken);
        }
        let first = r.cycle(None, true).unwrap().output.unwrap();
        for beat in request(3)[..4 * lanes].chunks(lanes) {
            assert!(r.cycle(Some((beat, false)), false).unwrap().input_taken);
        }
        assert_ne!(r.read_register(itf::REG_STATUS).unwrap() & itf::STATUS_BUSY, 0);
        r.write_register(itf::REG_CONTROL, itf::CONTROL_SOFT_RESET).unwrap();
        // The rest of result 1, ending its packet; nothing of result 2.
        let mut words = first.words;
        while let Some(beat) = r.cycle(None, true).unwrap().output {
            words.extend(beat.words);
            if beat.last {
                break;
            }
        }
        assert!(r.cycle(None, true).unwrap().output.is_none(), "nothing more");
        let result = itf::decode_result(&itf::words_to_bytes(&words), d, 128).unwrap();
        assert_eq!((result.tag, result.status), (1, itf::RESULT_OK));
        assert_eq!(r.read_register(itf::REG_STATUS).unwrap(), itf::STATUS_KEY_VALID, "idle, the key kept");
        // The half request is gone: a whole one is answered as one frame.
        let answer = ask(&mut r, &request(4));
        assert_eq!((answer.tag, answer.status, answer.plaintext), (4, itf::RESULT_OK, BigUint::from(5u8)));
        assert_eq!(r.read_register(itf::REG_JOBS_OUT).unwrap(), 2, "dropped results are never sent");
    }
}
