//! A decryption core on the deep loop's lanes ([`LaneExp`]): the two-slot core's ports
//! ([`super::decrypt_core::DecryptCore`]), with ⌊(k + 3)/2⌋ decryptions in flight instead of one:
//! the lanes engine's core. [`DelayCore`] is the same core on the delayed-quotient multiplier's
//! two lanes ([`DelayExp`]): one decryption in flight, each of its paths faster.
//!
//! Lanes 2j and 2j + 1 are pair j: p's and q's path of one ciphertext. A job's ciphertext is
//! shifted in as the two-slot core takes it; at `start` it waits for a free pair's first lane to
//! decide, starts p's path there and q's in the next cycle, and both lanes read the ciphertext
//! from the intake at their load phases, after which the intake is free for the next job. Each
//! term is written to a RAM per limb at its lane's address as it shows; when both of a pair's are
//! there, the pair waits for the correction, which reads them one after the other and sums,
//! compares and hands the plaintext out limb by limb ([`Correction`]). Every path takes as long,
//! so pairs finish in the order their jobs started: the correction takes them in that order, kept
//! in a queue, and results leave in the order jobs came. A pair starts again only once the
//! correction has read its terms, so a stalled output holds terms, not lanes' results.

use crate::decryption::correction::Correction;
use crate::decryption::decrypt_core::TAG_BITS;
use crate::decryption::JOB_COUNT_BITS;
use crate::exponentiation::lane_exp::{first_deciding_lane, DelayExp, LaneExp};
use crate::exponentiation::slot_control::LoadTarget;
use crate::fanout::replicas::{ReplicaSets, Replicas};
use crate::fanout::{copies, in_sets, sets, LIMBS_PER_COPY};
use crate::many;
use crate::multiplier::deep_mul::{DeepMul, LANE_BITS};
use crate::multiplier::delay_mul::DelayMul;
use crate::multiplier::mul_add::{X_BITS, Y_BITS};
use ecrt_golden::hw::{DelayedShape, FoldShape};
use rust_hdl::prelude::*;

/// What the correction is doing with a pair's terms.
#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum Collecting {
    /// Waiting for a pair with both terms.
    Idle,
    /// p's term's address registered: read it.
    ReadP,
    /// q's term read.
    ReadQ,
    /// q's term is being captured.
    Captured,
    /// Both captured: start the correction.
    Start,
    /// The correction sums and hands out the plaintext.
    Correcting,
}

/// A decryption core `$name` on the lanes of `$unit`, whose multiplier `$mul` has
/// `$mul::lanes(&$shape)` lanes.
macro_rules! lanes_core {
    ($(#[$doc:meta])* $name:ident, $unit:ident, $mul:ident, $shape:ty) => {
        $(#[$doc])*
#[derive(LogicBlock)]
        pub struct $name {
            /// The clock.
            pub clock: Signal<In, Clock>,
            /// Write `key_load_data` into the next limb of `key_load_target` of path `key_load_slot`.
            pub key_load: Signal<In, bool>,
            /// The path a key load writes: false = p, true = q.
            pub key_load_slot: Signal<In, bool>,
            /// The register a key load writes.
            pub key_load_target: Signal<In, LoadTarget>,
            /// A key limb, constant or exponent window.
            pub key_load_data: Signal<In, Bits<Y_BITS>>,
            /// The intake is empty and a pair is free: accepts ciphertext limbs and a start.
            pub ready: Signal<Out, bool>,
            /// Shift `limb_in` into the intake (2·S limbs, least significant first; while ready).
            pub limb_in_valid: Signal<In, bool>,
            /// A ciphertext limb.
            pub limb_in: Signal<In, Bits<Y_BITS>>,
            /// Begin decrypting the shifted-in ciphertext (while ready, at least a cycle after its last
            /// limb); `tag_in` is kept with it.
            pub start: Signal<In, bool>,
            /// The job's tag.
            pub tag_in: Signal<In, Bits<TAG_BITS>>,
            /// A plaintext waits: `result_tag`, and `result_limb`, its lowest limb not yet taken.
            pub result_valid: Signal<Out, bool>,
            /// The tag of the waiting plaintext.
            pub result_tag: Signal<Out, Bits<TAG_BITS>>,
            /// A limb of the plaintext, exact, least significant first (S limbs, value < n).
            pub result_limb: Signal<Out, Bits<Y_BITS>>,
            /// Take `result_limb` (while `result_valid`).
            pub result_take: Signal<In, bool>,
            /// Decrypting or holding a result.
            pub busy: Signal<Out, bool>,
            /// Jobs started and not yet handed out whole: waiting for a pair, on one, or in the correction.
            pub jobs: Signal<Out, Bits<JOB_COUNT_BITS>>,
            engine: $unit,
            correction: Correction,
            // The intake (2·S limbs, shifted in from the top) and n (S limbs, from p's ModulusN loads),
            // each behind a load stage: its limb registered, and its shift enable in copies, so that no
            // decoded enable reaches every limb of a register file.
            intake: Vec<DFF<Bits<X_BITS>>>,
            intake_limb: DFF<Bits<Y_BITS>>,
            // The intake's limbs are 17 bits: every stage clears bit 17 as it shifts, so that
            // synthesis sees that bit constant in every register at once (cleared at the first
            // stage alone, Yosys found it one stage a pass of its opt loop: 73 passes over the
            // flattened 512-bit design, half its time).
            limb_mask: Constant<Bits<X_BITS>>,
            // The intake's shift enables, in sets of at most MAX_REGISTER_FANOUT copies; each set's
            // enable is a LUT of its own (one drove all 2·S / LIMBS_PER_COPY copies), on copies per
            // set of what `ready` reads: each pair's running and waiting (copy s of pair j at
            // j·sets + s), `pending`, and `reading` not yet 0.
            intake_shift: ReplicaSets<bool>,
            ready_running: ReplicaSets<bool>,
            ready_waiting: ReplicaSets<bool>,
            ready_pending: Replicas<bool>,
            ready_reading: Replicas<bool>,
            set_free: Vec<Signal<Local, bool>>,
            // n's register file, loaded through two stages: the load decoded into a register per
            // set of shift enables (one decode drove all S / LIMBS_PER_COPY of them), then the
            // enables, in sets of at most MAX_REGISTER_FANOUT copies, with the limb.
            n: Vec<DFF<Bits<Y_BITS>>>,
            n_limb_r: DFF<Bits<Y_BITS>>,
            n_limb: DFF<Bits<Y_BITS>>,
            n_load: Replicas<bool>,
            n_shift: ReplicaSets<bool>,
            // A started job waiting for a pair, its tag; q's start in the next cycle; cycles until q's
            // lane has read the intake.
            pending: DFF<bool>,
            pending_tag: DFF<Bits<TAG_BITS>>,
            start_q: DFF<bool>,
            reading: DFF<Bits<3>>,
            // Per pair: its job's tag, its lanes running, its terms waiting for the correction.
            pair_tag: Vec<DFF<Bits<TAG_BITS>>>,
            pair_running: Vec<DFF<bool>>,
            pair_waiting: Vec<DFF<bool>>,
            // Whether each pair's p lane decides now (set a cycle ahead, when the lane before it
            // decides, so that a start is decided in two LUT levels, not behind a lane compare).
            deciding_p: Vec<DFFWithInit<bool>>,
            before_p_lane: Vec<Constant<Bits<LANE_BITS>>>,
            // A pair starts, one is released to the correction (this cycle).
            pair_started: Signal<Local, bool>,
            pair_released: Signal<Local, bool>,
            // The busy pairs' p lanes (running or waiting), oldest first: the order their terms
            // complete; how many there are; the queue's positions, and each plus one (a start joins at
            // the count, or a position lower when a pair leaves in the same cycle: compared, not
            // subtracted).
            order: Vec<DFF<Bits<LANE_BITS>>>,
            order_count: DFF<Bits<JOB_COUNT_BITS>>,
            positions: Vec<Constant<Bits<JOB_COUNT_BITS>>>,
            positions_after: Vec<Constant<Bits<JOB_COUNT_BITS>>>,
            oldest_waiting: Signal<Local, bool>,
            // Each pair's lanes: p's (2j), q's (2j + 1).
            p_lane: Vec<Constant<Bits<LANE_BITS>>>,
            q_lane: Vec<Constant<Bits<LANE_BITS>>>,
            free_pair: Signal<Local, bool>,
            // The terms, a RAM per limb at the lane's address (copies of the address written, the lane
            // at its load phase, and of the write enable, both set a cycle ahead; and of the address
            // read); the correction's pair and state. The copies come in sets of at most
            // MAX_REGISTER_FANOUT, each set driven by logic of its own: the written address on the
            // set's copy of the lane, the enable on the engine's announcement for the set, the read
            // address on the set's copy of q's lane.
            terms: Vec<RAM<Bits<X_BITS>, LANE_BITS>>,
            lane_copies: Replicas<Bits<LANE_BITS>>,
            term_write_lane: ReplicaSets<Bits<LANE_BITS>>,
            term_write: ReplicaSets<bool>,
            term_read_lane: ReplicaSets<Bits<LANE_BITS>>,
            last_lane: Constant<Bits<LANE_BITS>>,
            collecting: DFF<Collecting>,
            collect_oldest: Signal<Local, bool>,
            // The pair the correction reads: its p lane, and q's (a copy a set of the read address).
            collected: DFF<Bits<LANE_BITS>>,
            collected_q: Replicas<Bits<LANE_BITS>>,
            result_tag_r: DFF<Bits<TAG_BITS>>,
        }

        impl $name {
            /// A core for the moduli of `shape`'s multiplier (values of S = k·(m − 1) limbs),
            /// exponents p − 1 of `exponent_bits` bits and windows of `window_bits` (2 to 6).
            pub fn new(shape: &$shape, exponent_bits: usize, window_bits: usize) -> Self {
                let (digits, lanes) = (shape.classic_digits(), $mul::lanes(shape));
                let pairs = lanes / 2;
                let intake_sets = sets(copies(2 * digits));
                $name {
                    clock: Default::default(),
                    key_load: Default::default(),
                    key_load_slot: Default::default(),
                    key_load_target: Default::default(),
                    key_load_data: Default::default(),
                    ready: Default::default(),
                    limb_in_valid: Default::default(),
                    limb_in: Default::default(),
                    start: Default::default(),
                    tag_in: Default::default(),
                    result_valid: Default::default(),
                    result_tag: Default::default(),
                    result_limb: Default::default(),
                    result_take: Default::default(),
                    busy: Default::default(),
                    jobs: Default::default(),
                    engine: $unit::new(shape, exponent_bits, window_bits),
                    correction: Correction::new(digits),
                    intake: many(2 * digits),
                    intake_limb: Default::default(),
                    limb_mask: Constant::new(((1u64 << Y_BITS) - 1).into()),
                    intake_shift: in_sets(copies(2 * digits), 1),
                    ready_running: ReplicaSets::new(pairs, intake_sets),
                    ready_waiting: ReplicaSets::new(pairs, intake_sets),
                    ready_pending: Replicas::new(intake_sets),
                    ready_reading: Replicas::new(intake_sets),
                    set_free: many(intake_sets),
                    n: many(digits),
                    n_limb_r: Default::default(),
                    n_limb: Default::default(),
                    n_load: Replicas::new(sets(copies(digits))),
                    n_shift: in_sets(copies(digits), 1),
                    pending: Default::default(),
                    pending_tag: Default::default(),
                    start_q: Default::default(),
                    reading: Default::default(),
                    pair_tag: many(pairs),
                    pair_running: many(pairs),
                    pair_waiting: many(pairs),
                    deciding_p: (0..pairs).map(|j| DFFWithInit::new(first_deciding_lane(lanes) == 2 * j)).collect(),
                    before_p_lane: (0..pairs).map(|j| Constant::new((((2 * j + lanes - 1) % lanes) as u64).into())).collect(),
                    pair_started: Default::default(),
                    pair_released: Default::default(),
                    order: many(pairs),
                    order_count: Default::default(),
                    positions: (0..pairs).map(|j| Constant::new((j as u64).into())).collect(),
                    positions_after: (0..pairs).map(|j| Constant::new((j as u64 + 1).into())).collect(),
                    oldest_waiting: Default::default(),
                    p_lane: (0..pairs).map(|j| Constant::new((2 * j as u64).into())).collect(),
                    q_lane: (0..pairs).map(|j| Constant::new((2 * j as u64 + 1).into())).collect(),
                    free_pair: Default::default(),
                    terms: many(shape.operand_limbs),
                    lane_copies: Replicas::new(sets(copies(shape.operand_limbs))),
                    term_write_lane: in_sets(copies(shape.operand_limbs), 1),
                    term_write: in_sets(copies(shape.operand_limbs), 1),
                    term_read_lane: in_sets(copies(shape.operand_limbs), 1),
                    last_lane: Constant::new((($mul::lanes(shape) - 1) as u64).into()),
                    collecting: Default::default(),
                    collect_oldest: Default::default(),
                    collected: Default::default(),
                    collected_q: Replicas::new(sets(copies(shape.operand_limbs))),
                    result_tag_r: Default::default(),
                }
            }
        }

        impl Logic for $name {
            #[hdl_gen]
            fn update(&mut self) {
                dff_setup!(
                    self,
                    clock,
                    pending,
                    pending_tag,
                    start_q,
                    reading,
                    order_count,
                    collecting,
                    collected,
                    result_tag_r,
                    intake_limb,
                    n_limb_r,
                    n_limb
                );
                clock!(
                    self,
                    clock,
                    engine,
                    correction,
                    lane_copies,
                    term_write_lane,
                    term_write,
                    term_read_lane,
                    collected_q,
                    intake_shift,
                    ready_running,
                    ready_waiting,
                    ready_pending,
                    ready_reading,
                    n_load,
                    n_shift
                );
                for j in 0..self.intake.len() {
                    self.intake[j].clock.next = self.clock.val();
                    self.intake[j].d.next = self.intake[j].q.val();
                }
                for j in 0..self.n.len() {
                    self.n[j].clock.next = self.clock.val();
                    self.n[j].d.next = self.n[j].q.val();
                }
                for j in 0..self.pair_tag.len() {
                    self.pair_tag[j].clock.next = self.clock.val();
                    self.pair_running[j].clock.next = self.clock.val();
                    self.pair_waiting[j].clock.next = self.clock.val();
                    self.pair_tag[j].d.next = self.pair_tag[j].q.val();
                    self.pair_running[j].d.next = self.pair_running[j].q.val();
                    self.pair_waiting[j].d.next = self.pair_waiting[j].q.val();
                    self.order[j].clock.next = self.clock.val();
                    self.order[j].d.next = self.order[j].q.val();
                }
                for j in 0..self.terms.len() {
                    self.terms[j].read_clock.next = self.clock.val();
                    self.terms[j].write_clock.next = self.clock.val();
                }

                // Key loads go to the lanes; p's n to the correction's register.
                self.engine.key_load.next = self.key_load.val();
                self.engine.key_load_slot.next = self.key_load_slot.val();
                self.engine.key_load_target.next = self.key_load_target.val();
                self.engine.key_load_data.next = self.key_load_data.val();
                self.n_limb_r.d.next = self.key_load_data.val();
                self.n_load.d.next =
                    self.key_load.val() & !self.key_load_slot.val() & (self.key_load_target.val() == LoadTarget::ModulusN);
                self.n_limb.d.next = self.n_limb_r.q.val();
                for s in 0..self.n_shift.d.len() {
                    self.n_shift.d[s].next = self.n_load.q[s].val();
                }
                for g in (LIMBS_PER_COPY)..(LIMBS_PER_COPY + 1) {
                    for j in 0..(self.n.len() - 1) {
                        if self.n_shift.q[j / g].val() {
                            self.n[j].d.next = self.n[j + 1].q.val();
                        }
                    }
                    for j in (self.n.len() - 1)..self.n.len() {
                        if self.n_shift.q[j / g].val() {
                            self.n[j].d.next = self.n_limb.q.val();
                        }
                    }
                }

                // The intake: a free pair, nothing pending, and the last job's lanes done reading it.
                self.free_pair.next = false;
                for j in 0..self.pair_running.len() {
                    if !self.pair_running[j].q.val() & !self.pair_waiting[j].q.val() {
                        self.free_pair.next = true;
                    }
                }
                self.ready.next = self.free_pair.val() & !self.pending.q.val() & !self.reading.q.val().any();
                self.intake_limb.d.next = self.limb_in.val();
                // `ready` again per set of the shift's copies, from the set's copies of its state.
                for sn in (self.set_free.len())..(self.set_free.len() + 1) {
                    for s in 0..self.set_free.len() {
                        self.set_free[s].next = false;
                    }
                    for j in 0..self.pair_running.len() {
                        for s in 0..self.set_free.len() {
                            if !self.ready_running.q[j * sn + s].val() & !self.ready_waiting.q[j * sn + s].val() {
                                self.set_free[s].next = true;
                            }
                        }
                    }
                }
                for s in 0..self.set_free.len() {
                    self.intake_shift.d[s].next = self.limb_in_valid.val()
                        & self.set_free[s].val()
                        & !self.ready_pending.q[s].val()
                        & !self.ready_reading.q[s].val();
                }
                for g in (LIMBS_PER_COPY)..(LIMBS_PER_COPY + 1) {
                    for j in 0..(self.intake.len() - 1) {
                        if self.intake_shift.q[j / g].val() {
                            self.intake[j].d.next = self.intake[j + 1].q.val() & self.limb_mask.val();
                        }
                    }
                    for j in (self.intake.len() - 1)..self.intake.len() {
                        if self.intake_shift.q[j / g].val() {
                            self.intake[j].d.next = bit_cast::<X_BITS, Y_BITS>(self.intake_limb.q.val());
                        }
                    }
                }
                if self.start.val() & self.ready.val() {
                    self.pending.d.next = true;
                    self.pending_tag.d.next = self.tag_in.val();
                }
                for ln in (self.terms.len())..(self.terms.len() + 1) {
                    for j in 0..self.terms.len() {
                        self.engine.cipher_low[j].next = self.intake[j].q.val();
                        self.engine.cipher_high[j].next = self.intake[ln + j].q.val();
                    }
                }

                // Starts: p's path at a free pair's first lane, q's in the next cycle. Whether a pair
                // starts is decided once, so that the registers it sets take one multiplexer.
                self.engine.start.next = false;
                self.engine.start_prime.next = false;
                self.start_q.d.next = false;
                self.pair_started.next = false;
                for j in 0..self.deciding_p.len() {
                    self.deciding_p[j].clock.next = self.clock.val();
                    self.deciding_p[j].d.next = self.engine.deciding_lane.val() == self.before_p_lane[j].val();
                }
                if !self.start_q.q.val() & self.pending.q.val() & self.engine.can_start.val() {
                    for j in 0..self.pair_running.len() {
                        if self.deciding_p[j].q.val()
                            & !self.pair_running[j].q.val()
                            & !self.pair_waiting[j].q.val()
                        {
                            self.pair_started.next = true;
                        }
                    }
                }
                if self.reading.q.val().any() {
                    self.reading.d.next = self.reading.q.val() - 1;
                }
                if self.start_q.q.val() {
                    self.engine.start.next = true;
                    self.engine.start_prime.next = true;
                }
                if self.pair_started.val() {
                    self.engine.start.next = true;
                    self.start_q.d.next = true;
                    self.reading.d.next = 4.into();
                    self.pending.d.next = false;
                }
                for j in 0..self.pair_running.len() {
                    if self.pair_started.val() & self.deciding_p[j].q.val() {
                        self.pair_running[j].d.next = true;
                        self.pair_tag[j].d.next = self.pending_tag.q.val();
                    }
                }

                // Terms: written at their lane's address; q's completes the pair. The address and the
                // write enables are registers in copies, set a cycle ahead.
                // The lane's copies are set to the next cycle's lane.
                self.lane_copies.d.next = self.engine.lane.val() + 1;
                if self.engine.lane.val() == self.last_lane.val() {
                    self.lane_copies.d.next = 0.into();
                }
                for s in 0..self.term_write.d.len() {
                    self.term_write.d[s].next = self.engine.done_next[s].val();
                    self.term_write_lane.d[s].next = self.lane_copies.q[s].val() + 1;
                    if self.lane_copies.q[s].val() == self.last_lane.val() {
                        self.term_write_lane.d[s].next = 0.into();
                    }
                }
                for g in (LIMBS_PER_COPY)..(LIMBS_PER_COPY + 1) {
                    for j in 0..self.terms.len() {
                        self.terms[j].write_address.next = self.term_write_lane.q[j / g].val();
                        self.terms[j].write_data.next = self.engine.result[j].val();
                        self.terms[j].write_enable.next = self.term_write.q[j / g].val();
                        self.terms[j].read_address.next = self.term_read_lane.q[j / g].val();
                    }
                }
                for j in 0..self.pair_running.len() {
                    if self.engine.done.val() & (self.engine.lane.val() == self.q_lane[j].val()) {
                        self.pair_running[j].d.next = false;
                        self.pair_waiting[j].d.next = true;
                    }
                }

                // The correction: the oldest pair's terms, once both are there, p's then q's, then the sum.
                self.oldest_waiting.next = false;
                for j in 0..self.pair_waiting.len() {
                    if self.order_count.q.val().any()
                        & (self.order[0].q.val() == self.p_lane[j].val())
                        & self.pair_waiting[j].q.val()
                    {
                        self.oldest_waiting.next = true;
                    }
                }
                self.pair_released.next = false;
                self.correction.capture_p_next.next = false;
                self.correction.capture_q_next.next = false;
                self.correction.start.next = false;
                self.collect_oldest.next = false;
                self.collected_q.d.next = self.collected_q.q[0].val();
                match self.collecting.q.val() {
                    Collecting::Idle => {
                        if self.oldest_waiting.val() & !self.correction.busy.val() {
                            self.collect_oldest.next = true;
                            self.collected.d.next = self.order[0].q.val();
                            self.collected_q.d.next = self.order[0].q.val() + 1;
                            self.collecting.d.next = Collecting::ReadP;
                        }
                    }
                    Collecting::ReadP => {
                        self.correction.capture_p_next.next = true;
                        self.collecting.d.next = Collecting::ReadQ;
                    }
                    Collecting::ReadQ => {
                        self.correction.capture_q_next.next = true;
                        self.collecting.d.next = Collecting::Captured;
                    }
                    Collecting::Captured => {
                        self.collecting.d.next = Collecting::Start;
                    }
                    Collecting::Start => {
                        self.correction.start.next = true;
                        self.pair_released.next = true;
                        for j in 0..self.pair_waiting.len() {
                            if self.collected.q.val() == self.p_lane[j].val() {
                                self.pair_waiting[j].d.next = false;
                                self.result_tag_r.d.next = self.pair_tag[j].q.val();
                            }
                        }
                        self.collecting.d.next = Collecting::Correcting;
                    }
                    Collecting::Correcting => {
                        if !self.correction.busy.val() {
                            self.collecting.d.next = Collecting::Idle;
                        }
                    }
                }
                // The terms' read address: p's lane of the pair collected next, then q's.
                for s in 0..self.term_read_lane.d.len() {
                    self.term_read_lane.d[s].next = self.collected_q.q[s].val();
                    if self.collect_oldest.val() {
                        self.term_read_lane.d[s].next = self.order[0].q.val();
                    }
                }
                for j in 0..self.correction.term.len() {
                    self.correction.term[j].next = 0.into();
                }
                for j in 0..self.terms.len() {
                    self.correction.term[j].next = self.terms[j].read_data.val();
                }
                for j in 0..self.n.len() {
                    self.correction.n[j].next = self.n[j].q.val();
                }
                self.correction.take.next = self.result_take.val();
                self.result_valid.next = self.correction.valid.val();
                self.result_limb.next = self.correction.limb.val();
                self.result_tag.next = self.result_tag_r.q.val();

                // The queue: the released pair leaves its head, a started one joins its tail.
                if self.pair_released.val() {
                    for j in 0..(self.order.len() - 1) {
                        self.order[j].d.next = self.order[j + 1].q.val();
                    }
                }
                for j in 0..self.order.len() {
                    if self.pair_started.val()
                        & ((!self.pair_released.val() & (self.order_count.q.val() == self.positions[j].val()))
                            | (self.pair_released.val() & (self.order_count.q.val() == self.positions_after[j].val())))
                    {
                        self.order[j].d.next = self.engine.deciding_lane.val();
                    }
                }
                if self.pair_started.val() & !self.pair_released.val() {
                    self.order_count.d.next = self.order_count.q.val() + 1;
                }
                if self.pair_released.val() & !self.pair_started.val() {
                    self.order_count.d.next = self.order_count.q.val() - 1;
                }
                self.jobs.next = bit_cast::<JOB_COUNT_BITS, 1>(self.pending.q.val().into())
                    + self.order_count.q.val()
                    + bit_cast::<JOB_COUNT_BITS, 1>(self.correction.busy.val().into());

                // Busy: a job held (a pair is busy while its lanes read the intake or its terms wait to be
                // read), from three registers: the register block's key-load refusal follows it.
                self.busy.next = self.pending.q.val() | self.order_count.q.val().any() | self.correction.busy.val();

                // The copies of what `ready` reads, from their registers' next values, set above.
                for j in 0..self.pair_running.len() {
                    self.ready_running.d[j].next = self.pair_running[j].d.val();
                    self.ready_waiting.d[j].next = self.pair_waiting[j].d.val();
                }
                self.ready_pending.d.next = self.pending.d.val();
                self.ready_reading.d.next = self.reading.d.val().any();
            }
        }
    };
}

lanes_core!(
    /// A decryption core with its decryptions in the deep loop's lanes.
    DeepCore,
    LaneExp,
    DeepMul,
    FoldShape
);

lanes_core!(
    /// A decryption core with one decryption in the delayed-quotient multiplier's two lanes.
    DelayCore,
    DelayExp,
    DelayMul,
    DelayedShape
);

#[cfg(test)]
mod tests;
