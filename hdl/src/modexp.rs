//! The modular exponentiation unit: one interleaved [`MontMul`] shared by two [`SlotControl`]s,
//! so that two exponentiations with independent moduli and exponents (in decryption: mod p² and
//! mod q²) keep every DSP busy. Each slot's exponent is fixed per key and loaded once.

use crate::many;
use crate::montmul::MontMul;
use crate::mul_add::{X_BITS, Y_BITS};
use crate::slot_control::{LoadTarget, SlotControl};
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
    /// Begin exponentiating slot 0's base.
    pub start0: Signal<In, bool>,
    /// Begin exponentiating slot 1's base.
    pub start1: Signal<In, bool>,
    /// An exponentiation finished: `result` holds it in this cycle only.
    pub done: Signal<Out, bool>,
    /// The slot that finished.
    pub done_slot: Signal<Out, bool>,
    /// base^e mod N of the finished slot (decrypting: its eCRT term), redundant limbs
    /// (Σ limb_j·2^(17j)), fully reduced.
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
    multiplier: MontMul,
    slot0: SlotControl,
    slot1: SlotControl,
}

impl ModExp {
    /// A unit for moduli of `digits` 17-bit digits (R = 2^(17·digits) > 4N), exponents of
    /// `exponent_bits` bits, and `window_bits`-bit windows; with `decrypt`, each slot goes on to
    /// its prime's eCRT term.
    pub fn new(digits: usize, exponent_bits: usize, window_bits: usize, decrypt: bool) -> Self {
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
            result: many(digits),
            busy0: Default::default(),
            busy1: Default::default(),
            mul_done: Default::default(),
            phase: Default::default(),
            multiplier: MontMul::new(digits),
            slot0: SlotControl::new(digits, exponent_bits, window_bits, decrypt),
            slot1: SlotControl::new(digits, exponent_bits, window_bits, decrypt),
        }
    }
}

impl Logic for ModExp {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, multiplier, slot0, slot1);
        self.slot0.load.next = self.load.val() & (!self.load_slot.val() | self.load_both.val());
        self.slot1.load.next = self.load.val() & (self.load_slot.val() | self.load_both.val());
        self.slot0.load_target.next = self.load_target.val();
        self.slot1.load_target.next = self.load_target.val();
        self.slot0.load_data.next = self.load_data.val();
        self.slot1.load_data.next = self.load_data.val();
        self.slot0.start.next = self.start0.val();
        self.slot1.start.next = self.start1.val();
        self.slot0.my_turn.next = !self.multiplier.phase.val();
        self.slot1.my_turn.next = self.multiplier.phase.val();
        self.slot0.mm_done.next = self.multiplier.done.val() & !self.multiplier.phase.val();
        self.slot1.mm_done.next = self.multiplier.done.val() & self.multiplier.phase.val();
        self.slot0.mm_busy.next = self.multiplier.busy0.val();
        self.slot1.mm_busy.next = self.multiplier.busy1.val();
        self.multiplier.start.next = self.slot0.issue.val() | self.slot1.issue.val();
        self.multiplier.redc.next = self.slot0.issue_redc.val() | self.slot1.issue_redc.val();
        self.multiplier.decrement.next = self.slot0.issue_decrement.val() | self.slot1.issue_decrement.val();
        self.multiplier.n_prime0.next = self.slot0.n_prime_out.val();
        self.multiplier.n_prime1.next = self.slot1.n_prime_out.val();
        for j in 0..self.result.len() {
            self.slot0.mm_result[j].next = self.multiplier.result[j].val();
            self.slot1.mm_result[j].next = self.multiplier.result[j].val();
            self.multiplier.n0[j].next = self.slot0.n_out[j].val();
            self.multiplier.n1[j].next = self.slot1.n_out[j].val();
            // Each slot's operands straight to its own operand registers: no multiplexer by phase.
            self.multiplier.a_in0[j].next = self.slot0.a_out[j].val();
            self.multiplier.b_in0[j].next = self.slot0.b_out[j].val();
            self.multiplier.a_in1[j].next = self.slot1.a_out[j].val();
            self.multiplier.b_in1[j].next = self.slot1.b_out[j].val();
            self.result[j].next = self.multiplier.result[j].val();
            self.n_public[j].next = self.slot0.n_public[j].val();
        }
        self.done.next = self.slot0.done.val() | self.slot1.done.val();
        self.done_slot.next = self.slot1.done.val();
        self.busy0.next = self.slot0.busy.val();
        self.busy1.next = self.slot1.busy.val();
        self.mul_done.next = self.multiplier.done.val();
        self.phase.next = self.multiplier.phase.val();
    }
}

#[cfg(test)]
mod tests;
