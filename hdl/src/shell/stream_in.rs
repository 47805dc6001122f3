//! The request side: an AXI4-Stream slave that parses request frames ([`crate::interface`]) and
//! dispatches them to the decryption cores.
//!
//! A beat is held in a buffer and its lanes are taken one word per cycle, the buffer shifting down
//! a lane as each is taken (a shift, not a multiplexer of every lane: no register selects 32·lanes
//! bits). Whether a word is taken, and whether a beat loads, is decided once per set of the
//! buffer's lanes and once for the rest, each on copies of the registers it reads, so that no net
//! reaches the whole buffer. For each frame:
//! - the header (word 0) is checked: opcode, and the key (committed, same id). A good header waits
//!   for a ready core and reserves it (the highest-numbered ready one) for the frame;
//! - each limb word is checked (bits [31:17] zero) and, if a core is reserved, shifted into it;
//! - the padding must be zero. A frame ends at its last beat: a packet (up to TLAST) may carry
//!   several frames back to back, so that the host moves many requests per DMA transfer; TLAST
//!   must fall on a frame's last beat, and a TLAST before it ends the frame there (malformed);
//! - at the frame's last word (the last lane of its last beat), a frame with no fault starts its
//!   core with the tag; any other frame posts an error result (its header's tag and the status
//!   bits) for the collector.
//!
//! A frame that fails after its limbs started going into a core leaves that core ready and not
//! started: the next frame's 2·S limbs overwrite whatever it holds. Every frame ends in exactly one
//! start or one error post, so every request gets exactly one result.
//!
//! A frame whose next beat does not come for `frame_timeout` cycles (a transfer that died without
//! TLAST) ends there as MALFORMED; cycles spent waiting for a core do not count. `soft_reset`
//! drops the buffered beat, the frame in progress and the error result not yet collected, and
//! starts nothing in its cycle.

use crate::fanout::replicas::Replicas;
use crate::interface::{LANE_BITS, RESULT_KEY_NOT_LOADED, RESULT_MALFORMED};
use crate::limbs::LIMB_BITS;
use crate::many;
use crate::part::MAX_REGISTER_FANOUT;
use rust_hdl::prelude::*;

/// Bits of a lane index: up to 16 lanes (512-bit TDATA).
pub const LANE_INDEX_BITS: usize = 4;
/// Bits of a core index: up to 64 cores.
pub const CORE_BITS: usize = 6;
/// Bits of a word position in a frame.
pub const POSITION_BITS: usize = 10;
/// Bits of a tag.
pub const TAG_BITS: usize = 16;
/// Bits of a result status.
pub const STATUS_BITS: usize = 8;
/// Bits of the frame timeout's counter.
pub const TIMEOUT_BITS: usize = 21;

/// Lanes of the beat buffer that one decision to load or shift reaches: a lane's register and its
/// two checks take it in a multiplexer a bit.
const LANES_PER_SET: usize = MAX_REGISTER_FANOUT / (LIMB_BITS + 2);

// The status is built as {MALFORMED, KEY_NOT_LOADED} in bits 1 and 0.
const _: () = assert!(RESULT_KEY_NOT_LOADED == 1 && RESULT_MALFORMED == 2);

/// The frame parser and dispatcher.
#[derive(LogicBlock)]
pub struct StreamIn {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// TDATA, one 32-bit lane per element (lane i = TDATA[32i+31:32i]).
    pub s_axis_tdata: Vec<Signal<In, Bits<LANE_BITS>>>,
    /// TVALID.
    pub s_axis_tvalid: Signal<In, bool>,
    /// TREADY: the beat buffer is empty.
    pub s_axis_tready: Signal<Out, bool>,
    /// TLAST: the frame's last beat.
    pub s_axis_tlast: Signal<In, bool>,
    /// A key is committed.
    pub key_valid: Signal<In, bool>,
    /// The committed key's id.
    pub key_id: Signal<In, Bits<8>>,
    /// Core k is idle and empty (may lag the core by one cycle: a header waits two cycles after
    /// a start before it picks a core).
    pub core_ready: Vec<Signal<In, bool>>,
    /// Shift `core_limb` into core k.
    pub core_limb_valid: Vec<Signal<Out, bool>>,
    /// Start core k with `core_tag`.
    pub core_start: Vec<Signal<Out, bool>>,
    /// A ciphertext limb, for the core whose `core_limb_valid` is set.
    pub core_limb: Signal<Out, Bits<LIMB_BITS>>,
    /// The tag, for the core whose `core_start` is set.
    pub core_tag: Signal<Out, Bits<TAG_BITS>>,
    /// An error result waits for the collector.
    pub error_valid: Signal<Out, bool>,
    /// The error result's tag.
    pub error_tag: Signal<Out, Bits<TAG_BITS>>,
    /// The error result's status (RESULT_KEY_NOT_LOADED | RESULT_MALFORMED bits).
    pub error_status: Signal<Out, Bits<STATUS_BITS>>,
    /// The collector took the error result.
    pub error_take: Signal<In, bool>,
    /// A request frame ended in this cycle (good or bad).
    pub frame_done: Signal<Out, bool>,
    /// The frame ending now is answered KEY_NOT_LOADED.
    pub frame_key_not_loaded: Signal<Out, bool>,
    /// The frame ending now is answered MALFORMED.
    pub frame_malformed: Signal<Out, bool>,
    /// A beat is buffered, a frame is in progress or an error result waits.
    pub busy: Signal<Out, bool>,
    /// Drop the beat, the frame in progress and the pending error result (CONTROL.SOFT_RESET).
    pub soft_reset: Signal<In, bool>,
    lane_before_last: Constant<Bits<LANE_INDEX_BITS>>,
    limb_last: Constant<Bits<POSITION_BITS>>,
    position_limit: Constant<Bits<POSITION_BITS>>,
    opcode: Constant<Bits<8>>,
    timeout_last: Constant<Bits<TIMEOUT_BITS>>,
    key_not_loaded: Constant<Bits<STATUS_BITS>>,
    malformed: Constant<Bits<STATUS_BITS>>,
    core_number: Vec<Constant<Bits<CORE_BITS>>>,
    // The beat buffer (the word at hand in lane 0, its limb bits: the tag's too) and the index of
    // the lane taken next; each word's checks, made as the beat comes and shifted with it (bits
    // [31:17] clear, all clear), and lane 0's as a header (a frame starts at a beat's lane 0): its
    // key, its opcode.
    beat: Vec<DFF<Bits<LIMB_BITS>>>,
    high_clear: Vec<DFF<bool>>,
    all_clear: Vec<DFF<bool>>,
    header_key_ok: DFF<bool>,
    header_opcode_ok: DFF<bool>,
    beat_full: DFF<bool>,
    beat_last: DFF<bool>,
    lane: DFF<Bits<LANE_INDEX_BITS>>,
    // The lane is the beat's last: registered as the lane moves, so that taking a word never
    // waits on a comparison of the lane.
    at_last_lane: DFF<bool>,
    // The frame: position of the next word (saturating), faults so far, tag, the reserved core.
    position: DFF<Bits<POSITION_BITS>>,
    // What the position is, registered as it changes (no comparison on the word's path): past
    // the header, a limb, padding, the frame's last word; the same of position + 1.
    past_header: DFF<bool>,
    at_limb: DFF<bool>,
    at_padding: DFF<bool>,
    at_frame_last: DFF<bool>,
    next_limb: Signal<Local, bool>,
    next_frame_last: Signal<Local, bool>,
    before_frame_last: Constant<Bits<POSITION_BITS>>,
    status: DFF<Bits<STATUS_BITS>>,
    tag: DFF<Bits<TAG_BITS>>,
    dispatch: DFF<bool>,
    target: DFF<Bits<CORE_BITS>>,
    // Cycles a header still waits after a start, for the started core's ready to fall.
    settle: DFF<Bits<2>>,
    // Cycles the frame in progress has waited for its next beat.
    starved: DFF<Bits<TIMEOUT_BITS>>,
    // The error result waiting for the collector.
    error_pending: DFF<bool>,
    error_tag_r: DFF<Bits<TAG_BITS>>,
    error_status_r: DFF<Bits<STATUS_BITS>>,
    // This cycle's word, what it means and whether it is taken, decided once per set of the beat
    // buffer's lanes that shift (all but the top, LANES_PER_SET a set) and once more, the last,
    // for the rest of the parser: each decision is logic of its own, on copies (one a decision) of
    // the registers it reads, so that no net decides the whole buffer (one drove 138 loads). A
    // beat's load is decided per set of all its lanes the same way, on copies of `beat_full` (one
    // decision drove 165).
    word: Signal<Local, Bits<LIMB_BITS>>,
    full_copies: Replicas<bool>,
    last_copies: Replicas<bool>,
    at_last_lane_copies: Replicas<bool>,
    at_frame_last_copies: Replicas<bool>,
    past_header_copies: Replicas<bool>,
    key_ok_copies: Replicas<bool>,
    opcode_ok_copies: Replicas<bool>,
    at_limb_copies: Replicas<bool>,
    at_padding_copies: Replicas<bool>,
    high_clear_copies: Replicas<bool>,
    all_clear_copies: Replicas<bool>,
    error_pending_copies: Replicas<bool>,
    status_copies: Replicas<Bits<STATUS_BITS>>,
    settling_copies: Replicas<bool>,
    each_key_fault: Vec<Signal<Local, Bits<STATUS_BITS>>>,
    each_shape_fault: Vec<Signal<Local, Bits<STATUS_BITS>>>,
    each_word_status: Vec<Signal<Local, Bits<STATUS_BITS>>>,
    each_last_lane: Vec<Signal<Local, bool>>,
    each_frame_end: Vec<Signal<Local, bool>>,
    each_header_good: Vec<Signal<Local, bool>>,
    each_consume: Vec<Signal<Local, bool>>,
    each_load: Vec<Signal<Local, bool>>,
    // The parser's decision.
    word_status: Signal<Local, Bits<STATUS_BITS>>,
    last_lane: Signal<Local, bool>,
    frame_end: Signal<Local, bool>,
    header_good: Signal<Local, bool>,
    consume: Signal<Local, bool>,
    any_ready: Signal<Local, bool>,
    pick: Signal<Local, Bits<CORE_BITS>>,
    timed_out: Signal<Local, bool>,
}

impl StreamIn {
    /// A parser for frames of `digits` limbs (S) over `lanes` 32-bit lanes, dispatching to `cores`
    /// cores, that ends a frame after `frame_timeout` cycles without a beat
    /// ([`crate::interface::FRAME_TIMEOUT_CYCLES`] in the accelerator).
    pub fn new(digits: usize, lanes: usize, cores: usize, frame_timeout: u32) -> Self {
        assert!((1..1 << TIMEOUT_BITS).contains(&(frame_timeout as usize)), "a timeout of 1 to 2^21 − 1 cycles");
        assert!((2..=1 << LANE_INDEX_BITS).contains(&lanes), "2 to 16 lanes");
        assert!((1..=1 << CORE_BITS).contains(&cores), "1 to 64 cores");
        let frame_words = crate::interface::request_words(digits).div_ceil(lanes) * lanes;
        assert!(frame_words < (1 << POSITION_BITS) - 1, "frames of at most 1,022 words");
        let constant = |x: usize| Constant::new((x as u64).into());
        // The sets of the buffer's lanes that shift (all but the top), then the parser's decision;
        // the sets of all its lanes, which load.
        let (decisions, loads) = ((lanes - 1).div_ceil(LANES_PER_SET) + 1, lanes.div_ceil(LANES_PER_SET));
        StreamIn {
            clock: Default::default(),
            s_axis_tdata: many(lanes),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            s_axis_tlast: Default::default(),
            key_valid: Default::default(),
            key_id: Default::default(),
            core_ready: many(cores),
            core_limb_valid: many(cores),
            core_start: many(cores),
            core_limb: Default::default(),
            core_tag: Default::default(),
            error_valid: Default::default(),
            error_tag: Default::default(),
            error_status: Default::default(),
            error_take: Default::default(),
            frame_done: Default::default(),
            frame_key_not_loaded: Default::default(),
            frame_malformed: Default::default(),
            busy: Default::default(),
            soft_reset: Default::default(),
            lane_before_last: Constant::new(((lanes - 2) as u64).into()),
            limb_last: constant(2 * digits),
            position_limit: constant(frame_words),
            opcode: Constant::new((crate::interface::OPCODE_DECRYPT as u64).into()),
            timeout_last: Constant::new(((frame_timeout - 1) as u64).into()),
            key_not_loaded: Constant::new((RESULT_KEY_NOT_LOADED as u64).into()),
            malformed: Constant::new((RESULT_MALFORMED as u64).into()),
            core_number: (0..cores).map(|k| Constant::new((k as u64).into())).collect(),
            beat: many(lanes),
            high_clear: many(lanes),
            all_clear: many(lanes),
            header_key_ok: Default::default(),
            header_opcode_ok: Default::default(),
            beat_full: Default::default(),
            beat_last: Default::default(),
            lane: Default::default(),
            at_last_lane: Default::default(),
            position: Default::default(),
            past_header: Default::default(),
            at_limb: Default::default(),
            at_padding: Default::default(),
            at_frame_last: Default::default(),
            next_limb: Default::default(),
            next_frame_last: Default::default(),
            before_frame_last: constant(frame_words - 2),
            status: Default::default(),
            tag: Default::default(),
            dispatch: Default::default(),
            target: Default::default(),
            settle: Default::default(),
            starved: Default::default(),
            error_pending: Default::default(),
            error_tag_r: Default::default(),
            error_status_r: Default::default(),
            word: Default::default(),
            full_copies: Replicas::new(decisions.max(loads)),
            last_copies: Replicas::new(decisions),
            at_last_lane_copies: Replicas::new(decisions),
            at_frame_last_copies: Replicas::new(decisions),
            past_header_copies: Replicas::new(decisions),
            key_ok_copies: Replicas::new(decisions),
            opcode_ok_copies: Replicas::new(decisions),
            at_limb_copies: Replicas::new(decisions),
            at_padding_copies: Replicas::new(decisions),
            high_clear_copies: Replicas::new(decisions),
            all_clear_copies: Replicas::new(decisions),
            error_pending_copies: Replicas::new(decisions),
            status_copies: Replicas::new(decisions),
            settling_copies: Replicas::new(decisions),
            each_key_fault: many(decisions),
            each_shape_fault: many(decisions),
            each_word_status: many(decisions),
            each_last_lane: many(decisions),
            each_frame_end: many(decisions),
            each_header_good: many(decisions),
            each_consume: many(decisions),
            each_load: many(loads),
            word_status: Default::default(),
            last_lane: Default::default(),
            frame_end: Default::default(),
            header_good: Default::default(),
            consume: Default::default(),
            any_ready: Default::default(),
            pick: Default::default(),
            timed_out: Default::default(),
        }
    }
}

impl Logic for StreamIn {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            beat_full,
            beat_last,
            header_key_ok,
            header_opcode_ok,
            lane,
            at_last_lane,
            position,
            past_header,
            at_limb,
            at_padding,
            at_frame_last,
            status,
            tag,
            dispatch,
            target,
            settle,
            starved,
            error_pending,
            error_tag_r,
            error_status_r
        );
        clock!(
            self,
            clock,
            full_copies,
            last_copies,
            at_last_lane_copies,
            at_frame_last_copies,
            past_header_copies,
            key_ok_copies,
            opcode_ok_copies,
            at_limb_copies,
            at_padding_copies,
            high_clear_copies,
            all_clear_copies,
            error_pending_copies,
            status_copies,
            settling_copies
        );
        for i in 0..self.beat.len() {
            self.beat[i].clock.next = self.clock.val();
            self.beat[i].d.next = self.beat[i].q.val();
            self.high_clear[i].clock.next = self.clock.val();
            self.high_clear[i].d.next = self.high_clear[i].q.val();
            self.all_clear[i].clock.next = self.clock.val();
            self.all_clear[i].d.next = self.all_clear[i].q.val();
        }

        // The word at hand.
        for i in 0..1 {
            self.word.next = self.beat[i].q.val();
        }
        self.next_limb.next = self.position.q.val() < self.limb_last.val();
        self.next_frame_last.next = self.position.q.val() == self.before_frame_last.val();

        // The highest-numbered ready core.
        self.any_ready.next = false;
        self.pick.next = 0.into();
        for k in 0..self.core_ready.len() {
            if self.core_ready[k].val() {
                self.any_ready.next = true;
                self.pick.next = self.core_number[k].val();
            }
        }
        if self.settle.q.val() != 0 {
            self.settle.d.next = self.settle.q.val() - 1;
        }

        // Per decision, from its copies: the word's faults, added to the frame's (status is 0 when
        // a frame starts), and whether it is taken: unless a good header waits for a core (or for
        // a started core's ready to fall), or a bad frame's end waits for the previous error
        // result to be collected.
        for d in 0..self.each_consume.len() {
            self.each_last_lane[d].next = self.at_last_lane_copies.q[d].val();
            self.each_frame_end[d].next =
                self.each_last_lane[d].val() & (self.last_copies.q[d].val() | self.at_frame_last_copies.q[d].val());
            self.each_key_fault[d].next = 0.into();
            if !self.past_header_copies.q[d].val() & !self.key_ok_copies.q[d].val() {
                self.each_key_fault[d].next = self.key_not_loaded.val();
            }
            self.each_shape_fault[d].next = 0.into();
            if (!self.past_header_copies.q[d].val() & !self.opcode_ok_copies.q[d].val())
                | (self.at_limb_copies.q[d].val() & !self.high_clear_copies.q[d].val())
                | (self.at_padding_copies.q[d].val() & !self.all_clear_copies.q[d].val())
                | (self.each_last_lane[d].val() & self.last_copies.q[d].val() & !self.at_frame_last_copies.q[d].val())
            {
                self.each_shape_fault[d].next = self.malformed.val();
            }
            self.each_word_status[d].next =
                self.status_copies.q[d].val() | self.each_key_fault[d].val() | self.each_shape_fault[d].val();
            self.each_header_good[d].next = !self.past_header_copies.q[d].val() & (self.each_word_status[d].val() == 0);
            self.each_consume[d].next = self.full_copies.q[d].val()
                & !(self.each_header_good[d].val() & (!self.any_ready.val() | self.settling_copies.q[d].val()))
                & !(self.each_frame_end[d].val()
                    & (self.each_word_status[d].val() != 0)
                    & self.error_pending_copies.q[d].val());
        }
        for d in (self.each_consume.len() - 1)..self.each_consume.len() {
            self.last_lane.next = self.each_last_lane[d].val();
            self.frame_end.next = self.each_frame_end[d].val();
            self.word_status.next = self.each_word_status[d].val();
            self.header_good.next = self.each_header_good[d].val();
            self.consume.next = self.each_consume[d].val();
        }

        // Limbs into the reserved core; at a good frame's end, its start.
        self.core_limb.next = self.word.val();
        self.core_tag.next = self.tag.q.val();
        for k in 0..self.core_start.len() {
            self.core_limb_valid[k].next = self.consume.val()
                & self.dispatch.q.val()
                & self.at_limb.q.val()
                & (self.target.q.val() == self.core_number[k].val());
            self.core_start[k].next = self.consume.val()
                & self.frame_end.val()
                & self.dispatch.q.val()
                & (self.word_status.val() == 0)
                & (self.target.q.val() == self.core_number[k].val());
        }

        // The error result, posted at a bad frame's end, held until collected.
        if self.error_take.val() {
            self.error_pending.d.next = false;
        }
        self.error_valid.next = self.error_pending.q.val();
        self.error_tag.next = self.error_tag_r.q.val();
        self.error_status.next = self.error_status_r.q.val();
        self.frame_done.next = self.consume.val() & self.frame_end.val();
        self.frame_key_not_loaded.next = self.frame_done.val() & self.word_status.val().get_bit(0);
        self.frame_malformed.next = self.frame_done.val() & self.word_status.val().get_bit(1);

        // The set size as a loop variable: rust-hdl indexes with loop variables only.
        for g in (LANES_PER_SET)..(LANES_PER_SET + 1) {
            for i in 0..(self.beat.len() - 1) {
                if self.each_consume[i / g].val() {
                    self.beat[i].d.next = self.beat[i + 1].q.val();
                    self.high_clear[i].d.next = self.high_clear[i + 1].q.val();
                    self.all_clear[i].d.next = self.all_clear[i + 1].q.val();
                }
            }
        }
        if self.consume.val() {
            self.status.d.next = self.word_status.val();
            if self.position.q.val() != self.position_limit.val() {
                self.position.d.next = self.position.q.val() + 1;
                self.past_header.d.next = true;
                self.at_limb.d.next = self.next_limb.val();
                self.at_padding.d.next = !self.next_limb.val();
                self.at_frame_last.d.next = self.next_frame_last.val();
            }
            if !self.past_header.q.val() {
                self.tag.d.next = self.word.val().get_bits::<TAG_BITS>(0);
                self.dispatch.d.next = self.header_good.val();
                self.target.d.next = self.pick.val();
            }
            if self.frame_end.val() {
                self.position.d.next = 0.into();
                self.past_header.d.next = false;
                self.at_limb.d.next = false;
                self.at_padding.d.next = false;
                self.at_frame_last.d.next = false;
                self.status.d.next = 0.into();
                self.dispatch.d.next = false;
                if (self.word_status.val() == 0) & self.dispatch.q.val() {
                    self.settle.d.next = 2.into();
                }
                if self.word_status.val() != 0 {
                    self.error_pending.d.next = true;
                    self.error_tag_r.d.next = self.tag.q.val();
                    self.error_status_r.d.next = self.word_status.val();
                }
            }
            self.lane.d.next = self.lane.q.val() + 1;
            self.at_last_lane.d.next = self.lane.q.val() == self.lane_before_last.val();
            if self.last_lane.val() {
                self.lane.d.next = 0.into();
                self.at_last_lane.d.next = false;
                self.beat_full.d.next = false;
            }
        }

        // A frame whose next beat does not come ends as MALFORMED, once the error result before
        // it is collected.
        self.starved.d.next = 0.into();
        self.timed_out.next = false;
        if !self.beat_full.q.val() & self.past_header.q.val() {
            self.starved.d.next = self.starved.q.val() + 1;
            if self.starved.q.val() == self.timeout_last.val() {
                self.starved.d.next = self.starved.q.val();
                self.timed_out.next = !self.error_pending.q.val();
            }
        }
        if self.timed_out.val() {
            self.frame_done.next = true;
            self.frame_key_not_loaded.next = self.status.q.val().get_bit(0);
            self.frame_malformed.next = true;
            self.position.d.next = 0.into();
            self.past_header.d.next = false;
            self.at_limb.d.next = false;
            self.at_padding.d.next = false;
            self.at_frame_last.d.next = false;
            self.status.d.next = 0.into();
            self.dispatch.d.next = false;
            self.lane.d.next = 0.into();
            self.at_last_lane.d.next = false;
            self.error_pending.d.next = true;
            self.error_tag_r.d.next = self.tag.q.val();
            self.error_status_r.d.next = self.status.q.val() | self.malformed.val();
        }

        // A new beat when the buffer is empty.
        self.s_axis_tready.next = !self.beat_full.q.val() & !self.soft_reset.val();
        for d in 0..self.each_load.len() {
            self.each_load[d].next = self.s_axis_tvalid.val() & !self.full_copies.q[d].val() & !self.soft_reset.val();
        }
        for g in (LANES_PER_SET)..(LANES_PER_SET + 1) {
            for i in 0..self.beat.len() {
                if self.each_load[i / g].val() {
                    self.beat[i].d.next = self.s_axis_tdata[i].val().get_bits::<LIMB_BITS>(0);
                    self.high_clear[i].d.next = !self.s_axis_tdata[i].val().get_bits::<15>(17).any();
                    self.all_clear[i].d.next = !self.s_axis_tdata[i].val().any();
                }
            }
        }
        if self.s_axis_tvalid.val() & self.s_axis_tready.val() {
            self.beat_full.d.next = true;
            self.beat_last.d.next = self.s_axis_tlast.val();
            for i in 0..1 {
                self.header_key_ok.d.next =
                    self.key_valid.val() & (self.s_axis_tdata[i].val().get_bits::<8>(16) == self.key_id.val());
                self.header_opcode_ok.d.next = self.s_axis_tdata[i].val().get_bits::<8>(24) == self.opcode.val();
            }
        }

        // A soft reset: back to the start of a frame with nothing buffered or owed, nothing
        // started.
        if self.soft_reset.val() {
            for k in 0..self.core_start.len() {
                self.core_start[k].next = false;
            }
            self.frame_done.next = false;
            self.frame_key_not_loaded.next = false;
            self.frame_malformed.next = false;
            self.beat_full.d.next = false;
            self.position.d.next = 0.into();
            self.past_header.d.next = false;
            self.at_limb.d.next = false;
            self.at_padding.d.next = false;
            self.at_frame_last.d.next = false;
            self.status.d.next = 0.into();
            self.dispatch.d.next = false;
            self.lane.d.next = 0.into();
            self.at_last_lane.d.next = false;
            self.starved.d.next = 0.into();
            self.error_pending.d.next = false;
        }
        self.busy.next = self.beat_full.q.val() | self.past_header.q.val() | self.error_pending.q.val();

        // The decisions' copies, from their registers' next values, set above.
        self.full_copies.d.next = self.beat_full.d.val();
        self.last_copies.d.next = self.beat_last.d.val();
        self.at_last_lane_copies.d.next = self.at_last_lane.d.val();
        self.at_frame_last_copies.d.next = self.at_frame_last.d.val();
        self.past_header_copies.d.next = self.past_header.d.val();
        self.key_ok_copies.d.next = self.header_key_ok.d.val();
        self.opcode_ok_copies.d.next = self.header_opcode_ok.d.val();
        self.at_limb_copies.d.next = self.at_limb.d.val();
        self.at_padding_copies.d.next = self.at_padding.d.val();
        for i in 0..1 {
            self.high_clear_copies.d.next = self.high_clear[i].d.val();
            self.all_clear_copies.d.next = self.all_clear[i].d.val();
        }
        self.error_pending_copies.d.next = self.error_pending.d.val();
        self.status_copies.d.next = self.status.d.val();
        self.settling_copies.d.next = self.settle.d.val() != 0;
    }
}

#[cfg(test)]
mod tests;
