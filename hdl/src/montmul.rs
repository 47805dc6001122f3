//! The Montgomery multiplier: digit-serial over 17-bit digits, one row of [`Column`]s wide, with
//! no final subtraction (Walter 1999: R = 2^(17·S) > 4N keeps results in [0, 2N)). The model it
//! must match step for step is `ecrt_golden::hw::MontgomeryContext::mont_mul_trace`.
//!
//! Two independent multiplications ("slots" 0 and 1) are interleaved: a step of one slot takes two
//! cycles (stage 1: a_i·b_j and the quotient digit; stage 2: q_i·n_j and the redistribution), and
//! the other slot's step fills the other cycle, so every DSP works every cycle. Each slot has its
//! own operands and modulus. A multiplication of S digits takes 2·S + 2 cycles from `start` to
//! `done`, whatever the operands: a slot can start again in the cycle its result appears.
//!
//! Operands and results are redundant: limbs of up to 18 bits, Σ limb_j·2^(17j). The multiplier
//! resolves the multiplier's digits serially as it consumes them (one 18-bit addition per step),
//! and uses the multiplicand's redundant limbs as they are: the DSP's 25-bit port takes them.
//!
//! Two variants reuse the same loop (the golden model's `redc_wide` and `ExactDivider`):
//! - wide REDC of C = C_hi·R + C_lo (`redc`, A = C_hi, B = C_lo): the DSPs see the digit 1 in the
//!   first step and 0 after it, so T starts as C_lo, while the digits of C_hi enter the top
//!   column one per step as the limbs above it; the result is C·R^(−1) mod N, < 2N.
//! - A − 1 (`decrement`): the digits of A are resolved with a borrow of 1 into the first.

use crate::column::{Column, T_BITS};
use crate::many;
use crate::mul_add::{MulAddReg, P_BITS, X_BITS, Y_BITS};
use crate::slot_operands::SlotOperands;
use rust_hdl::prelude::*;

/// Bits of the step counter: up to 1,023 digits (moduli up to about 17,000 bits).
pub use ecrt_contract::config::STEP_BITS;

/// The multiplier over `S` digits.
#[derive(LogicBlock)]
pub struct MontMul {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The slot that may start now, and whose `done` and `result` show now.
    pub phase: Signal<Out, bool>,
    /// Start a multiplication in slot `phase` with its operands (`a_in0`/`b_in0` for slot 0,
    /// `a_in1`/`b_in1` for slot 1; ignored while that slot is busy and not done).
    pub start: Signal<In, bool>,
    /// Slot 0's multiplier A, redundant limbs (Σ a_j·2^(17j) < 2N).
    pub a_in0: Vec<Signal<In, Bits<X_BITS>>>,
    /// Slot 0's multiplicand B, redundant limbs (Σ b_j·2^(17j) < 2N).
    pub b_in0: Vec<Signal<In, Bits<X_BITS>>>,
    /// Slot 1's multiplier A.
    pub a_in1: Vec<Signal<In, Bits<X_BITS>>>,
    /// Slot 1's multiplicand B.
    pub b_in1: Vec<Signal<In, Bits<X_BITS>>>,
    /// With `start`: a wide REDC of B + A·R (exact limbs) instead of A·B·R^(−1).
    pub redc: Signal<In, bool>,
    /// With `start`: multiply A − 1 instead of A.
    pub decrement: Signal<In, bool>,
    /// Slot 0's modulus N (odd), exact 17-bit limbs.
    pub n0: Vec<Signal<In, Bits<Y_BITS>>>,
    /// Slot 1's modulus N, exact 17-bit limbs.
    pub n1: Vec<Signal<In, Bits<Y_BITS>>>,
    /// −N^(−1) mod 2^17 for slot 0.
    pub n_prime0: Signal<In, Bits<Y_BITS>>,
    /// −N^(−1) mod 2^17 for slot 1.
    pub n_prime1: Signal<In, Bits<Y_BITS>>,
    /// Slot `phase` finished: `result` is valid in this cycle only.
    pub done: Signal<Out, bool>,
    /// A·B·R^(−1) mod N, in [0, 2N), redundant limbs (< 2^17 + 4).
    pub result: Vec<Signal<Out, Bits<X_BITS>>>,
    /// Slot 0 is multiplying.
    pub busy0: Signal<Out, bool>,
    /// Slot 1 is multiplying.
    pub busy1: Signal<Out, bool>,
    /// The redundant sum T of the stage-1 slot (for tests: Σ t_j·2^(17j)).
    pub t: Vec<Signal<Out, Bits<T_BITS>>>,
    cols: Vec<Column>,
    // The modulus limbs of the slot in stage 2 next cycle, registered: the slots' moduli come
    // through their operation's multiplexer, which must not sit in front of stage 2's DSPs.
    n_stage2: Vec<DFF<Bits<Y_BITS>>>,
    ph: DFF<bool>,
    operands0: SlotOperands,
    operands1: SlotOperands,
    // b_0·N' mod 2^17 of each slot's multiplicand, kept up to date, so that a prefetch can take
    // a_i·b_0·N' and the quotient digit needs no addition before its multiplication.
    b0_n_prime0: MulAddReg,
    b0_n_prime1: MulAddReg,
    // Prefetch (the cycle before stage 1): the slot's next digit, and a_i·b_0 (the first step) or
    // a_i·b_0·N' (the others) mod 2^17.
    pre_a: DFF<Bits<Y_BITS>>,
    // A wide REDC's digit of C_hi, on its way to the top column's stage 2.
    pre_high: DFF<Bits<Y_BITS>>,
    s1_high: DFF<Bits<Y_BITS>>,
    pre_ab0: MulAddReg,
    pre_valid: DFF<bool>,
    pre_first: DFF<bool>,
    pre_last: DFF<bool>,
    // Stage 1 → stage 2: the quotient digit.
    q_in: Signal<Local, Bits<Y_BITS>>,
    quotient: MulAddReg,
    s2_valid: DFF<bool>,
    s2_last: DFF<bool>,
    done_r: DFF<bool>,
}

impl MontMul {
    /// A multiplier over `digits` 17-bit digits (R = 2^(17·digits)).
    pub fn new(digits: usize) -> Self {
        assert!((2..1 << STEP_BITS).contains(&digits), "digits must be in 2..1024");
        MontMul {
            clock: Default::default(),
            phase: Default::default(),
            start: Default::default(),
            a_in0: many(digits),
            b_in0: many(digits),
            a_in1: many(digits),
            b_in1: many(digits),
            n0: many(digits),
            n1: many(digits),
            n_prime0: Default::default(),
            n_prime1: Default::default(),
            done: Default::default(),
            result: many(digits),
            busy0: Default::default(),
            busy1: Default::default(),
            t: many(digits),
            cols: many(digits),
            n_stage2: many(digits),
            ph: Default::default(),
            operands0: SlotOperands::new(digits),
            operands1: SlotOperands::new(digits),
            pre_a: Default::default(),
            pre_high: Default::default(),
            s1_high: Default::default(),
            redc: Default::default(),
            decrement: Default::default(),
            pre_ab0: Default::default(),
            b0_n_prime0: Default::default(),
            b0_n_prime1: Default::default(),
            pre_valid: Default::default(),
            pre_first: Default::default(),
            pre_last: Default::default(),
            q_in: Default::default(),
            quotient: Default::default(),
            s2_valid: Default::default(),
            s2_last: Default::default(),
            done_r: Default::default(),
        }
    }

    /// Digits of the multiplier (S).
    pub fn digits(&self) -> usize {
        self.cols.len()
    }
}

impl Logic for MontMul {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, ph, pre_a, pre_high, s1_high, pre_valid, pre_first, pre_last, s2_valid, s2_last, done_r
        );
        clock!(self, clock, pre_ab0, b0_n_prime0, b0_n_prime1, quotient, operands0, operands1);
        self.ph.d.next = !self.ph.q.val();
        self.phase.next = self.ph.q.val();
        self.busy0.next = self.operands0.busy.val();
        self.busy1.next = self.operands1.busy.val();
        self.done.next = self.done_r.q.val();
        self.done_r.d.next = false;

        // Each slot's b_0·N' (its operands and N' hold for the whole multiplication: valid from
        // the cycle after its first prefetch on).
        for j in 0..1 {
            self.b0_n_prime0.x.next = self.operands0.b[j].val();
            self.b0_n_prime1.x.next = self.operands1.b[j].val();
        }
        self.b0_n_prime0.y.next = self.n_prime0.val();
        self.b0_n_prime1.y.next = self.n_prime1.val();
        self.b0_n_prime0.c.next = 0.into();
        self.b0_n_prime1.c.next = 0.into();

        // Prefetch for the slot that enters stage 1 next cycle (slot !ph): its next multiplier
        // digit, and a_i·b_0 (first step) or a_i·b_0·N' (the others) for the quotient.
        self.operands0.advance.next = self.ph.q.val();
        self.operands1.advance.next = !self.ph.q.val();
        self.pre_ab0.c.next = 0.into();
        if self.ph.q.val() {
            self.pre_valid.d.next = self.operands0.pending.val();
            self.pre_first.d.next = self.operands0.first.val();
            self.pre_last.d.next = self.operands0.last.val();
            self.pre_a.d.next = self.operands0.digit.val();
            self.pre_high.d.next = 0.into();
            if self.operands0.redc.val() {
                self.pre_a.d.next = 0.into();
                if self.operands0.first.val() {
                    self.pre_a.d.next = 1.into();
                }
                self.pre_high.d.next = self.operands0.digit.val();
            }
            self.pre_ab0.x.next = bit_cast::<X_BITS, Y_BITS>(self.b0_n_prime0.p.val().get_bits::<Y_BITS>(0));
            if self.operands0.first.val() {
                for j in 0..1 {
                    self.pre_ab0.x.next = self.operands0.b[j].val();
                }
            }
        } else {
            self.pre_valid.d.next = self.operands1.pending.val();
            self.pre_first.d.next = self.operands1.first.val();
            self.pre_last.d.next = self.operands1.last.val();
            self.pre_a.d.next = self.operands1.digit.val();
            self.pre_high.d.next = 0.into();
            if self.operands1.redc.val() {
                self.pre_a.d.next = 0.into();
                if self.operands1.first.val() {
                    self.pre_a.d.next = 1.into();
                }
                self.pre_high.d.next = self.operands1.digit.val();
            }
            self.pre_ab0.x.next = bit_cast::<X_BITS, Y_BITS>(self.b0_n_prime1.p.val().get_bits::<Y_BITS>(0));
            if self.operands1.first.val() {
                for j in 0..1 {
                    self.pre_ab0.x.next = self.operands1.b[j].val();
                }
            }
        }
        self.pre_ab0.y.next = self.pre_a.d.val();

        // Stage 1 (slot ph): a_i·b_j in every column; the quotient digit
        // q_i = (t_0 + a_i·b_0)·N' mod 2^17 = t_0·N' + (a_i·b_0·N' mod 2^17), registered for stage
        // 2: one DSP multiply-add, no carry chain in front of it. The first step (T = 0) takes
        // (a_0·b_0 mod 2^17)·N'.
        self.quotient.c.next = bit_cast::<P_BITS, Y_BITS>(self.pre_ab0.p.val().get_bits::<Y_BITS>(0));
        for j in 0..1 {
            self.q_in.next = self.cols[j].t.val().get_bits::<Y_BITS>(0);
        }
        if self.pre_first.q.val() {
            self.q_in.next = self.pre_ab0.p.val().get_bits::<Y_BITS>(0);
            self.quotient.c.next = 0.into();
        }
        self.quotient.x.next = bit_cast::<X_BITS, Y_BITS>(self.q_in.val());
        self.quotient.y.next = self.n_prime0.val();
        if self.ph.q.val() {
            self.quotient.y.next = self.n_prime1.val();
        }
        self.s1_high.d.next = self.pre_high.q.val();
        self.s2_valid.d.next = self.pre_valid.q.val();
        self.s2_last.d.next = self.pre_last.q.val();

        for j in 0..self.cols.len() {
            self.cols[j].clock.next = self.clock.val();
            self.cols[j].a.next = self.pre_a.q.val();
            self.cols[j].first.next = self.pre_first.q.val();
            self.cols[j].q.next = self.quotient.p.val().get_bits::<Y_BITS>(0);
            self.n_stage2[j].clock.next = self.clock.val();
            self.cols[j].n.next = self.n_stage2[j].q.val();
            if self.ph.q.val() {
                self.cols[j].b.next = self.operands1.b[j].val();
                self.n_stage2[j].d.next = self.n1[j].val();
            } else {
                self.cols[j].b.next = self.operands0.b[j].val();
                self.n_stage2[j].d.next = self.n0[j].val();
            }
            self.t[j].next = self.cols[j].t.val();
        }
        for j in 0..(self.cols.len() - 1) {
            self.cols[j].lo_up.next = self.cols[j + 1].lo.val();
        }
        for j in (self.cols.len() - 1)..self.cols.len() {
            self.cols[j].lo_up.next = self.s1_high.q.val();
        }

        // Stage 2 (slot !ph): the columns finish the step; after a multiplication's last step the
        // result shows in the next cycle, when its slot is ph again.
        if self.s2_valid.q.val() & self.s2_last.q.val() {
            self.done_r.d.next = true;
        }
        self.operands0.finish.next = self.s2_valid.q.val() & self.s2_last.q.val() & self.ph.q.val();
        self.operands1.finish.next = self.s2_valid.q.val() & self.s2_last.q.val() & !self.ph.q.val();

        // The result: one redistribution, u_j = lo17(t_j) + hi(t_(j−1)), limbs < 2^17 + 4.
        for j in 0..1 {
            self.result[j].next = self.cols[j].t_lo.val();
        }
        for j in 1..self.cols.len() {
            self.result[j].next = self.cols[j].t_lo.val() + self.cols[j - 1].t_hi.val();
        }

        // Start: load slot ph's operands (its previous result may be one of them).
        for j in 0..self.cols.len() {
            self.operands0.a_in[j].next = self.a_in0[j].val();
            self.operands0.b_in[j].next = self.b_in0[j].val();
            self.operands1.a_in[j].next = self.a_in1[j].val();
            self.operands1.b_in[j].next = self.b_in1[j].val();
        }
        self.operands0.redc_in.next = self.redc.val();
        self.operands1.redc_in.next = self.redc.val();
        self.operands0.decrement_in.next = self.decrement.val();
        self.operands1.decrement_in.next = self.decrement.val();
        self.operands0.load.next =
            self.start.val() & !self.ph.q.val() & (!self.operands0.busy.val() | self.done_r.q.val());
        self.operands1.load.next =
            self.start.val() & self.ph.q.val() & (!self.operands1.busy.val() | self.done_r.q.val());
    }
}

#[cfg(test)]
mod tests;
