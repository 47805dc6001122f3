//! The modular exponentiation unit: one multiplier's two interleaved slots driven by two [`SlotControl`]s,
//! so that two exponentiations with independent moduli and exponents (in decryption: mod p² and
//! mod q²) keep the DSPs busy. Each slot's exponent is fixed per key and loaded once.
//!
//! Every multiplication runs on the [`FoldMul`]: those inside the Montgomery domain (×R³, the
//! table, the windows) k limbs per step, the few that need an exact quotient (the wide REDC of
//! the ciphertext, the way out of the domain, the exact division, ×t·R mod n) as its classic
//! passes over S = k·(m − 1) digits, so that both share R = 2^(17·S).

use crate::exponentiation::slot_control::{LoadTarget, SlotControl};
use crate::many;
use crate::multiplier::fold_mul::FoldMul;
use crate::multiplier::mul_add::{X_BITS, Y_BITS};
use ecrt_golden::hw::{FoldShape, Schedule};
use rust_hdl::prelude::*;

/// Two-slot modular exponentiation over `S` 17-bit digits.
#[derive(LogicBlock)]
pub struct ModExp {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Shift `load_data` into slot `load_slot`'s register `load_target`.
    pub load: Signal<In, bool>,
    /// The slot a load writes.
    pub load_slot: Signal<In, bool>,
    /// A load writes both slots (the ciphertext of a decryption).
    pub load_both: Signal<In, bool>,
    /// The register a load writes.
    pub load_target: Signal<In, LoadTarget>,
    /// A limb, constant or exponent window.
    pub load_data: Signal<In, Bits<X_BITS>>,
    /// Begin exponentiating slot 0's base (at least a cycle after its last load: a load is stored
    /// in the cycle after it comes).
    pub start0: Signal<In, bool>,
    /// Begin exponentiating slot 1's base.
    pub start1: Signal<In, bool>,
    /// An exponentiation finished: `result` holds it in this cycle only.
    pub done: Signal<Out, bool>,
    /// The slot that finished.
    pub done_slot: Signal<Out, bool>,
    /// `done` in the next cycle (so that its users can register their loads from it).
    pub done_next: Signal<Out, bool>,
    /// `done_slot` in the next cycle.
    pub done_slot_next: Signal<Out, bool>,
    /// base^e mod N of the finished slot (decrypting: its eCRT term), redundant limbs
    /// (Σ limb_j·2^(17j)), fully reduced; when `mul_done`, the product of the multiplication that
    /// finished.
    pub result: Vec<Signal<Out, Bits<X_BITS>>>,
    /// Slot 0's public modulus n, exact limbs (decrypting: for the final correction).
    pub n_public: Vec<Signal<Out, Bits<Y_BITS>>>,
    /// Slot 0 is exponentiating.
    pub busy0: Signal<Out, bool>,
    /// Slot 1 is exponentiating.
    pub busy1: Signal<Out, bool>,
    /// A Montgomery multiplication finished in this cycle (for traces and tests).
    pub mul_done: Signal<Out, bool>,
    /// The multiplier's slot in this cycle (for traces and tests).
    pub phase: Signal<Out, bool>,
    fold: FoldMul,
    slot0: SlotControl,
    slot1: SlotControl,
}

impl ModExp {
    /// A unit for the moduli of `shape`'s folding multiplier (values of S = k·(m − 1) limbs),
    /// exponents of `exponent_bits` bits, and `schedule` (see [`SlotControl::new`]); with
    /// `decrypt`, each slot goes on to its prime's eCRT term.
    pub fn new(shape: &FoldShape, exponent_bits: usize, schedule: Schedule, decrypt: bool) -> Self {
        let digits = shape.classic_digits();
        let m_hat_limbs = shape.modulus_limbs;
        ModExp {
            clock: Default::default(),
            load: Default::default(),
            load_slot: Default::default(),
            load_both: Default::default(),
            n_public: many(digits),
            load_target: Default::default(),
            load_data: Default::default(),
            start0: Default::default(),
            start1: Default::default(),
            done: Default::default(),
            done_slot: Default::default(),
            done_next: Default::default(),
            done_slot_next: Default::default(),
            result: many(digits),
            busy0: Default::default(),
            busy1: Default::default(),
            mul_done: Default::default(),
            phase: Default::default(),
            fold: FoldMul::new(shape),
            slot0: SlotControl::new(digits, shape.operand_limbs, m_hat_limbs, exponent_bits, schedule, decrypt),
            slot1: SlotControl::new(digits, shape.operand_limbs, m_hat_limbs, exponent_bits, schedule, decrypt),
        }
    }
}

impl Logic for ModExp {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, fold, slot0, slot1);
        self.slot0.load.next = self.load.val() & (!self.load_slot.val() | self.load_both.val());
        self.slot1.load.next = self.load.val() & (self.load_slot.val() | self.load_both.val());
        self.slot0.load_target.next = self.load_target.val();
        self.slot1.load_target.next = self.load_target.val();
        self.slot0.load_data.next = self.load_data.val();
        self.slot1.load_data.next = self.load_data.val();
        self.slot0.start.next = self.start0.val();
        self.slot1.start.next = self.start1.val();
        self.slot0.my_turn.next = !self.fold.phase.val();
        self.slot1.my_turn.next = self.fold.phase.val();
        self.slot0.mm_done.next = self.fold.done.val() & !self.fold.phase.val();
        self.slot1.mm_done.next = self.fold.done.val() & self.fold.phase.val();
        self.slot0.mm_busy.next = self.fold.busy0.val();
        self.slot1.mm_busy.next = self.fold.busy1.val();
        self.fold.start.next = self.slot0.issue.val() | self.slot1.issue.val();
        self.fold.continues0.next = self.slot0.issue_on_done_next.val();
        self.fold.continues1.next = self.slot1.issue_on_done_next.val();
        self.fold.classic.next = (self.slot0.issue.val() & self.slot0.issue_classic.val())
            | (self.slot1.issue.val() & self.slot1.issue_classic.val());
        self.fold.redc.next = self.slot0.issue_redc.val() | self.slot1.issue_redc.val();
        self.fold.decrement.next = self.slot0.issue_decrement.val() | self.slot1.issue_decrement.val();
        self.fold.n_prime0.next = self.slot0.n_prime_out.val();
        self.fold.n_prime1.next = self.slot1.n_prime_out.val();
        for j in 0..self.fold.m_hat0.len() {
            self.fold.m_hat0[j].next = self.slot0.m_hat_out[j].val();
            self.fold.m_hat1[j].next = self.slot1.m_hat_out[j].val();
        }
        // The multiplier's operands, moduli and results are the low limbs of a slot's values; the
        // limbs above are 0 for every value it takes or gives (all are below 2^(17k+3)·N).
        for j in 0..self.fold.a_in0.len() {
            self.fold.a_in0[j].next = self.slot0.a_out[j].val();
            self.fold.b_in0[j].next = self.slot0.b_out[j].val();
            self.fold.a_in1[j].next = self.slot1.a_out[j].val();
            self.fold.b_in1[j].next = self.slot1.b_out[j].val();
        }
        for j in 0..self.fold.n0.len() {
            self.fold.n0[j].next = self.slot0.n_out[j].val();
            self.fold.n1[j].next = self.slot1.n_out[j].val();
        }
        for j in 0..self.result.len() {
            self.result[j].next = 0.into();
        }
        for j in 0..self.fold.result.len() {
            self.result[j].next = self.fold.result[j].val();
        }
        for j in 0..self.fold.result.len() {
            self.slot0.mm_result[j].next = self.fold.result[j].val();
            self.slot1.mm_result[j].next = self.fold.result[j].val();
        }
        for j in 0..self.result.len() {
            self.n_public[j].next = self.slot0.n_public[j].val();
        }
        self.done.next = self.slot0.done.val() | self.slot1.done.val();
        self.done_slot.next = self.slot1.done.val();
        // The phase toggles: the slot that is not `phase` now finishes next.
        self.done_slot_next.next = !self.fold.phase.val();
        self.done_next.next = self.fold.done_next.val()
            & ((self.fold.phase.val() & self.slot0.finishing.val())
                | (!self.fold.phase.val() & self.slot1.finishing.val()));
        self.busy0.next = self.slot0.busy.val();
        self.busy1.next = self.slot1.busy.val();
        self.mul_done.next = self.fold.done.val();
        self.phase.next = self.fold.phase.val();
    }
}

#[cfg(test)]
mod tests;
