//! The result side: collects plaintexts from the cores and error results from the dispatcher,
//! and sends them as result frames ([`crate::interface`]) on an AXI4-Stream master.
//!
//! One frame at a time: the collector picks a source (an error result first, so errors overtake
//! plaintexts; else the highest-numbered core holding a result), then writes the frame's words one
//! per cycle into the lanes of the output beat: the header, S limbs (taken from the core one per
//! cycle, or zeros for an error), zero padding. A full beat is presented on TVALID and held until
//! TREADY; only then is the next beat built, so nothing is lost under back-pressure.
//!
//! A soft reset marks every busy core stale for as many results as it holds jobs: a stale core's
//! next results are taken limb by limb and dropped (they belong to a host that is gone), without
//! a frame; a core's results come in the order its jobs started. A frame already being built when
//! the reset comes (or starting as it comes) is finished and sent, so the stream stays in whole
//! frames: its result is not counted stale.
//!
//! TLAST ends a burst, not every frame: a frame's last beat carries TLAST unless another result is
//! already waiting to follow it. Results that are ready together leave as one packet, which the
//! host takes in one DMA transfer. With `packet_hold` (PACKET_HOLD) set, the beat that would end a
//! burst is held back up to that many cycles for a result to come and carry the burst on, so
//! results that finish a little apart share a packet too: fewer, larger transfers, one host read
//! and one interrupt per burst. The beat leaves with TLAST when the hold runs out, or at once on
//! a soft reset. With 0 a lone result ends its packet at once, so a read never waits for a result
//! that is not coming.

use crate::decryption::JOB_COUNT_BITS;

/// The most jobs a core's count says it holds: one bit each of a core's stale results.
const MAX_CORE_JOBS: usize = (1 << JOB_COUNT_BITS) - 1;
use crate::interface::{LANE_BITS, PACKET_HOLD_BITS, RESULT_MAGIC};
use crate::limbs::LIMB_BITS;
use crate::many;
use crate::shell::stream_in::{CORE_BITS, LANE_INDEX_BITS, POSITION_BITS, STATUS_BITS, TAG_BITS};
use rust_hdl::prelude::*;

fn constant<const N: usize>(x: u64) -> Constant<Bits<N>> {
    Constant::new(x.into())
}

/// The result collector.
#[derive(LogicBlock)]
pub struct StreamOut {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// TDATA, one 32-bit lane per element (lane i = TDATA[32i+31:32i]).
    pub m_axis_tdata: Vec<Signal<Out, Bits<LANE_BITS>>>,
    /// TVALID: a beat is presented.
    pub m_axis_tvalid: Signal<Out, bool>,
    /// TREADY.
    pub m_axis_tready: Signal<In, bool>,
    /// TLAST: the frame's last beat.
    pub m_axis_tlast: Signal<Out, bool>,
    /// Core k holds a plaintext.
    pub core_result_valid: Vec<Signal<In, bool>>,
    /// Core k's plaintext's tag.
    pub core_result_tag: Vec<Signal<In, Bits<TAG_BITS>>>,
    /// Core k's lowest limb not yet taken.
    pub core_result_limb: Vec<Signal<In, Bits<LIMB_BITS>>>,
    /// Take core k's `core_result_limb`.
    pub core_result_take: Vec<Signal<Out, bool>>,
    /// An error result waits.
    pub error_valid: Signal<In, bool>,
    /// The error result's tag.
    pub error_tag: Signal<In, Bits<TAG_BITS>>,
    /// The error result's status.
    pub error_status: Signal<In, Bits<STATUS_BITS>>,
    /// The error result is taken.
    pub error_take: Signal<Out, bool>,
    /// A result frame's last beat left in this cycle.
    pub frame_sent: Signal<Out, bool>,
    /// That frame was an error result (with `frame_sent`).
    pub frame_failed: Signal<Out, bool>,
    /// A frame is being built, or a beat is held back or presented.
    pub busy: Signal<Out, bool>,
    /// Core k's jobs: decrypting, or holding a result.
    pub core_jobs: Vec<Signal<In, Bits<JOB_COUNT_BITS>>>,
    /// Mark the busy cores' jobs stale (CONTROL.SOFT_RESET).
    pub soft_reset: Signal<In, bool>,
    /// Cycles the beat that would end a burst waits for another result to follow it in the same
    /// packet (PACKET_HOLD; 0: it leaves at once).
    pub packet_hold: Signal<In, Bits<PACKET_HOLD_BITS>>,
    lane_last: Constant<Bits<LANE_INDEX_BITS>>,
    limb_last: Constant<Bits<POSITION_BITS>>,
    before_frame_last: Constant<Bits<POSITION_BITS>>,
    magic: Constant<Bits<LANE_BITS>>,
    core_number: Vec<Constant<Bits<CORE_BITS>>>,
    // The frame being built: its source, header and the position of the next word.
    active: DFF<bool>,
    from_error: DFF<bool>,
    source: DFF<Bits<CORE_BITS>>,
    tag: DFF<Bits<TAG_BITS>>,
    status: DFF<Bits<STATUS_BITS>>,
    position: DFF<Bits<POSITION_BITS>>,
    // The word at `position` is a limb (1 ≤ position ≤ S), the frame's last: set with the
    // position, so that no comparison (nor the position's adder, which synthesis shares with
    // one) sits in front of the beat's, the hold's and the cores' enables.
    at_limb: DFF<bool>,
    at_frame_last: DFF<bool>,
    lane: DFF<Bits<LANE_INDEX_BITS>>,
    // The output beat.
    beat: Vec<DFF<Bits<LANE_BITS>>>,
    beat_valid: DFF<bool>,
    beat_end: DFF<bool>,
    beat_last: DFF<bool>,
    beat_failed: DFF<bool>,
    // The built beat would end a burst and waits for a result to follow it (PACKET_HOLD);
    // `hold_left`: the held cycles left after this one.
    holding: DFF<bool>,
    hold_left: DFF<Bits<PACKET_HOLD_BITS>>,
    // Core k's next results dropped, counted off as their frames start: a bit a result, the
    // lowest first (a shift counts one off, where a subtraction's carry chain was the longest
    // path behind the choice of a frame's source), set from the core's count of jobs. The set
    // bits are always the lowest ones, so the lowest bit says whether any result is stale (an OR
    // of all 15 was the longest path, in front of TLAST).
    stale: Vec<DFF<Bits<MAX_CORE_JOBS>>>,
    all_jobs: Constant<Bits<MAX_CORE_JOBS>>,
    dropping: DFF<bool>,
    // This cycle's choices and word.
    any_result: Signal<Local, bool>,
    other_waiting: Signal<Local, bool>,
    pick: Signal<Local, Bits<CORE_BITS>>,
    pick_tag: Signal<Local, Bits<TAG_BITS>>,
    limb: Signal<Local, Bits<LIMB_BITS>>,
    write: Signal<Local, bool>,
    word: Signal<Local, Bits<LANE_BITS>>,
    // A core's frame starts in this cycle; core k's result is in a frame, its last limb not yet
    // taken.
    core_frame_starts: Signal<Local, bool>,
    in_frame: Vec<Signal<Local, bool>>,
    start_hold: Signal<Local, bool>,
}

impl StreamOut {
    /// A collector of `digits`-limb results (S) from `cores` cores, over `lanes` 32-bit lanes.
    pub fn new(digits: usize, lanes: usize, cores: usize) -> Self {
        assert!((2..=1 << LANE_INDEX_BITS).contains(&lanes), "2 to 16 lanes");
        assert!((1..=1 << CORE_BITS).contains(&cores), "1 to 64 cores");
        let frame_words = crate::interface::result_words(digits).div_ceil(lanes) * lanes;
        assert!(frame_words < 1 << POSITION_BITS, "frames of at most 1,023 words");
        StreamOut {
            clock: Default::default(),
            m_axis_tdata: many(lanes),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            m_axis_tlast: Default::default(),
            core_result_valid: many(cores),
            core_result_tag: many(cores),
            core_result_limb: many(cores),
            core_result_take: many(cores),
            error_valid: Default::default(),
            error_tag: Default::default(),
            error_status: Default::default(),
            error_take: Default::default(),
            frame_sent: Default::default(),
            frame_failed: Default::default(),
            busy: Default::default(),
            core_jobs: many(cores),
            soft_reset: Default::default(),
            packet_hold: Default::default(),
            lane_last: constant(lanes as u64 - 1),
            limb_last: constant(digits as u64),
            before_frame_last: constant(frame_words as u64 - 2),
            magic: constant((RESULT_MAGIC as u64) << crate::interface::HEADER_OPCODE_SHIFT),
            core_number: (0..cores).map(|k| constant(k as u64)).collect(),
            active: Default::default(),
            from_error: Default::default(),
            source: Default::default(),
            tag: Default::default(),
            status: Default::default(),
            position: Default::default(),
            at_limb: Default::default(),
            at_frame_last: Default::default(),
            lane: Default::default(),
            beat: many(lanes),
            beat_valid: Default::default(),
            beat_end: Default::default(),
            beat_last: Default::default(),
            beat_failed: Default::default(),
            holding: Default::default(),
            hold_left: Default::default(),
            stale: many(cores),
            all_jobs: Constant::new(((1u64 << MAX_CORE_JOBS) - 1).into()),
            dropping: Default::default(),
            any_result: Default::default(),
            other_waiting: Default::default(),
            pick: Default::default(),
            pick_tag: Default::default(),
            limb: Default::default(),
            write: Default::default(),
            word: Default::default(),
            core_frame_starts: Default::default(),
            in_frame: many(cores),
            start_hold: Default::default(),
        }
    }
}

impl Logic for StreamOut {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            active,
            from_error,
            source,
            tag,
            status,
            position,
            at_limb,
            at_frame_last,
            lane,
            beat_valid,
            beat_end,
            beat_last,
            beat_failed,
            holding,
            hold_left,
            dropping
        );
        for k in 0..self.stale.len() {
            self.stale[k].clock.next = self.clock.val();
            self.stale[k].d.next = self.stale[k].q.val();
        }
        for i in 0..self.beat.len() {
            self.beat[i].clock.next = self.clock.val();
            self.beat[i].d.next = self.beat[i].q.val();
            self.m_axis_tdata[i].next = self.beat[i].q.val();
        }

        // The presented beat leaves when TREADY.
        self.m_axis_tvalid.next = self.beat_valid.q.val();
        self.m_axis_tlast.next = self.beat_last.q.val();
        self.frame_sent.next = self.beat_valid.q.val() & self.m_axis_tready.val() & self.beat_end.q.val();
        self.frame_failed.next = self.beat_failed.q.val();
        if self.beat_valid.q.val() & self.m_axis_tready.val() {
            self.beat_valid.d.next = false;
        }

        // The highest-numbered core holding a result, and the limb of the frame's source.
        self.any_result.next = false;
        self.other_waiting.next = self.error_valid.val();
        self.pick.next = 0.into();
        self.pick_tag.next = 0.into();
        self.limb.next = 0.into();
        for k in 0..self.core_result_valid.len() {
            if self.core_result_valid[k].val()
                & !self.stale[k].q.val().get_bit(0)
                & (!self.active.q.val() | self.from_error.q.val() | (self.source.q.val() != self.core_number[k].val()))
            {
                self.other_waiting.next = true;
            }
            if self.core_result_valid[k].val() {
                self.any_result.next = true;
                self.pick.next = self.core_number[k].val();
                self.pick_tag.next = self.core_result_tag[k].val();
            }
            if self.source.q.val() == self.core_number[k].val() {
                self.limb.next = self.core_result_limb[k].val();
            }
        }

        // A new frame: an error result first.
        self.error_take.next = false;
        self.core_frame_starts.next = false;
        if !self.active.q.val() {
            self.position.d.next = 0.into();
            self.at_limb.d.next = false;
            self.at_frame_last.d.next = false;
            self.lane.d.next = 0.into();
            if self.error_valid.val() {
                self.error_take.next = true;
                self.active.d.next = true;
                self.from_error.d.next = true;
                self.tag.d.next = self.error_tag.val();
                self.status.d.next = self.error_status.val();
            } else if self.any_result.val() {
                self.core_frame_starts.next = true;
                self.active.d.next = true;
                self.from_error.d.next = false;
                self.source.d.next = self.pick.val();
                self.tag.d.next = self.pick_tag.val();
                self.status.d.next = 0.into();
                self.dropping.d.next = false;
                for k in 0..self.stale.len() {
                    if self.stale[k].q.val().get_bit(0) & (self.pick.val() == self.core_number[k].val()) {
                        self.dropping.d.next = true;
                        self.stale[k].d.next = self.stale[k].q.val() >> 1;
                    }
                }
            }
        }

        // One word per cycle into the beat being built (while none is presented or held); a
        // dropped frame's words go nowhere, one per cycle.
        self.write.next =
            self.active.q.val() & ((!self.beat_valid.q.val() & !self.holding.q.val()) | self.dropping.q.val());
        self.word.next = 0.into();
        if self.position.q.val() == 0 {
            self.word.next = self.magic.val()
                | (bit_cast::<LANE_BITS, STATUS_BITS>(self.status.q.val()) << 16)
                | bit_cast::<LANE_BITS, TAG_BITS>(self.tag.q.val());
        }
        if self.at_limb.q.val() & !self.from_error.q.val() {
            self.word.next = bit_cast::<LANE_BITS, LIMB_BITS>(self.limb.val());
        }
        for k in 0..self.core_result_take.len() {
            self.core_result_take[k].next = self.write.val()
                & self.at_limb.q.val()
                & !self.from_error.q.val()
                & (self.source.q.val() == self.core_number[k].val());
        }
        if self.write.val() & !self.dropping.q.val() {
            for i in 0..self.beat.len() {
                if self.lane.q.val().index() == i {
                    self.beat[i].d.next = self.word.val();
                }
            }
        }
        // The frame's last beat would end the burst: with a hold set, it waits for a result to
        // follow (not when a soft reset comes now, which ends the packet at once, as in a hold).
        self.start_hold.next = self.at_frame_last.q.val()
            & !self.other_waiting.val()
            & self.packet_hold.val().any()
            & !self.soft_reset.val();
        if self.write.val() {
            self.position.d.next = self.position.q.val() + 1;
            self.at_limb.d.next = self.position.q.val() < self.limb_last.val();
            self.at_frame_last.d.next = self.position.q.val() == self.before_frame_last.val();
            self.lane.d.next = self.lane.q.val() + 1;
            if (self.lane.q.val() == self.lane_last.val()) & !self.dropping.q.val() {
                self.beat_end.d.next = self.at_frame_last.q.val();
                self.beat_failed.d.next = self.from_error.q.val();
                if self.start_hold.val() {
                    self.holding.d.next = true;
                    self.hold_left.d.next = self.packet_hold.val() - 1;
                } else {
                    self.beat_valid.d.next = true;
                    self.beat_last.d.next = self.at_frame_last.q.val() & !self.other_waiting.val();
                }
            }
            if self.lane.q.val() == self.lane_last.val() {
                self.lane.d.next = 0.into();
            }
            if self.at_frame_last.q.val() {
                self.active.d.next = false;
                self.dropping.d.next = false;
            }
        }
        // The held beat leaves when a result comes to follow it (the burst goes on) or when the
        // hold runs out; a soft reset ends its packet at once, taking priority over a waiting
        // result, which may be a gone host's and about to be dropped.
        if self.holding.q.val() {
            self.hold_left.d.next = self.hold_left.q.val() - 1;
            if self.soft_reset.val() | self.other_waiting.val() | !self.hold_left.q.val().any() {
                self.holding.d.next = false;
                self.beat_valid.d.next = true;
                self.beat_last.d.next = self.soft_reset.val() | !self.other_waiting.val();
            }
        }
        // A soft reset: the cores' jobs' results are a gone host's, but for one already in a
        // frame, which goes out whole.
        for k in 0..self.in_frame.len() {
            self.in_frame[k].next = (self.active.q.val()
                & !self.from_error.q.val()
                & (self.source.q.val() == self.core_number[k].val())
                & ((self.position.q.val() == 0) | self.at_limb.q.val()))
                | (self.core_frame_starts.val() & (self.pick.val() == self.core_number[k].val()));
        }
        if self.soft_reset.val() {
            // A bit for each of the core's jobs, but the one in a frame.
            for k in 0..self.stale.len() {
                self.stale[k].d.next = !(self.all_jobs.val() << self.core_jobs[k].val());
                if self.in_frame[k].val() {
                    self.stale[k].d.next = !(self.all_jobs.val() << self.core_jobs[k].val()) >> 1;
                }
            }
        }
        self.busy.next = self.active.q.val() | self.beat_valid.q.val() | self.holding.q.val();
    }
}

#[cfg(test)]
mod tests;
