//! One eCRT decryption core: both primes' paths on one two-slot exponentiation unit (slot 0: p,
//! slot 1: q, interleaved on the shared multiplier) and the final correction. The golden model
//! is `ecrt_golden::hw::EcrtHwKey::decrypt_trace`; docs/background.md#the-data-flow-of-one-prime.
//!
//! A job: 2·S ciphertext limbs shifted in, `start` with a tag, a fixed number of cycles, then S
//! plaintext limbs taken out. The key (both paths' constants) is loaded once, while idle.
use crate::decryption::correction::Correction;
use crate::decryption::JOB_COUNT_BITS;
use crate::exponentiation::modexp::ModExp;
use crate::exponentiation::slot_control::LoadTarget;
use crate::multiplier::mul_add::{X_BITS, Y_BITS};
use ecrt_golden::hw::{FoldShape, Schedule};
use rust_hdl::prelude::*;

/// Bits of a job tag.
pub const TAG_BITS: usize = 16;

/// The core's state.
#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum CoreState {
    Ready,
    Exponentiating,
    Correcting,
}

/// A decryption core.
#[derive(LogicBlock)]
pub struct DecryptCore {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Shift `key_load_data` into register `key_load_target` of path `key_load_slot`.
    pub key_load: Signal<In, bool>,
    /// The path a key load writes: false = p (slot 0), true = q (slot 1).
    pub key_load_slot: Signal<In, bool>,
    /// The register a key load writes.
    pub key_load_target: Signal<In, LoadTarget>,
    /// A key limb, constant or exponent window.
    pub key_load_data: Signal<In, Bits<Y_BITS>>,
    /// Idle and empty: accepts ciphertext limbs and a start.
    pub ready: Signal<Out, bool>,
    /// Shift `limb_in` into the ciphertext (2·S limbs, least significant first; while ready).
    pub limb_in_valid: Signal<In, bool>,
    /// A ciphertext limb.
    pub limb_in: Signal<In, Bits<Y_BITS>>,
    /// Begin decrypting the shifted-in ciphertext (while ready, and at least a cycle after its
    /// last limb: a limb is stored in the cycle after it comes); `tag_in` is kept with it.
    pub start: Signal<In, bool>,
    /// The job's tag.
    pub tag_in: Signal<In, Bits<TAG_BITS>>,
    /// A plaintext waits: `result_tag`, and `result_limb`, its lowest limb not yet taken.
    pub result_valid: Signal<Out, bool>,
    /// The tag of the waiting plaintext.
    pub result_tag: Signal<Out, Bits<TAG_BITS>>,
    /// A limb of the plaintext, exact, least significant first (S limbs, value < n).
    pub result_limb: Signal<Out, Bits<Y_BITS>>,
    /// Take `result_limb` (while `result_valid`); after S takes the core is ready again.
    pub result_take: Signal<In, bool>,
    /// Decrypting or holding a result.
    pub busy: Signal<Out, bool>,
    /// Jobs started and not yet handed out whole: 1 while busy.
    pub jobs: Signal<Out, Bits<JOB_COUNT_BITS>>,
    engine: ModExp,
    correction: Correction,
    state: DFF<CoreState>,
    tag: DFF<Bits<TAG_BITS>>,
    have_p: DFF<bool>,
    have_q: DFF<bool>,
}

impl DecryptCore {
    /// A core for the moduli of `shape`'s folding multiplier (values of S = k·(m − 1) limbs),
    /// exponents p − 1 of `exponent_bits` bits and `schedule`.
    pub fn new(shape: &FoldShape, exponent_bits: usize, schedule: Schedule) -> Self {
        let digits = shape.classic_digits();
        DecryptCore {
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
            engine: ModExp::new(shape, exponent_bits, schedule, true),
            correction: Correction::new(digits),
            state: Default::default(),
            tag: Default::default(),
            have_p: Default::default(),
            have_q: Default::default(),
        }
    }
}

impl Logic for DecryptCore {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, tag, have_p, have_q);
        clock!(self, clock, engine, correction);
        self.ready.next = (self.state.q.val() == CoreState::Ready) & !self.correction.busy.val();
        self.busy.next = !self.ready.val();
        self.jobs.next = 0.into();
        if self.busy.val() {
            self.jobs.next = 1.into();
        }
        // Key loads, or (while ready) the ciphertext into both slots' base registers.
        self.engine.load.next = self.key_load.val();
        self.engine.load_both.next = false;
        self.engine.load_slot.next = self.key_load_slot.val();
        self.engine.load_target.next = self.key_load_target.val();
        self.engine.load_data.next = bit_cast::<X_BITS, Y_BITS>(self.key_load_data.val());
        if self.limb_in_valid.val() & self.ready.val() {
            self.engine.load.next = true;
            self.engine.load_both.next = true;
            self.engine.load_target.next = LoadTarget::Base;
            self.engine.load_data.next = bit_cast::<X_BITS, Y_BITS>(self.limb_in.val());
        }
        self.engine.start0.next = false;
        self.engine.start1.next = false;
        // Each slot's eCRT term goes to the correction as it finishes, announced a cycle ahead.
        self.correction.capture_p_next.next = self.engine.done_next.val() & !self.engine.done_slot_next.val();
        self.correction.capture_q_next.next = self.engine.done_next.val() & self.engine.done_slot_next.val();
        for j in 0..self.engine.result.len() {
            self.correction.term[j].next = self.engine.result[j].val();
            self.correction.n[j].next = self.engine.n_public[j].val();
        }
        self.correction.start.next = false;
        self.correction.take.next = self.result_take.val();
        self.result_valid.next = self.correction.valid.val();
        self.result_limb.next = self.correction.limb.val();
        self.result_tag.next = self.tag.q.val();
        match self.state.q.val() {
            CoreState::Ready => {
                if self.start.val() & self.ready.val() {
                    self.engine.start0.next = true;
                    self.engine.start1.next = true;
                    self.tag.d.next = self.tag_in.val();
                    self.have_p.d.next = false;
                    self.have_q.d.next = false;
                    self.state.d.next = CoreState::Exponentiating;
                }
            }
            CoreState::Exponentiating => {
                if self.engine.done.val() & !self.engine.done_slot.val() {
                    self.have_p.d.next = true;
                }
                if self.engine.done.val() & self.engine.done_slot.val() {
                    self.have_q.d.next = true;
                }
                if self.have_p.q.val() & self.have_q.q.val() {
                    self.correction.start.next = true;
                    self.state.d.next = CoreState::Correcting;
                }
            }
            CoreState::Correcting => {
                // Ready again once the correction has handed out its last limb.
                if !self.correction.busy.val() {
                    self.state.d.next = CoreState::Ready;
                }
            }
            _ => {
                self.state.d.next = CoreState::Ready;
            }
        }
    }
}

#[cfg(test)]
mod tests;
