//! The folding Montgomery multiplier: k limbs of the multiplier per step, Orup's pre-scaled
//! modulus so that the quotient is T's own low limbs (the model it matches limb for limb is
//! `ecrt_golden::hw::FoldContext::mul_trace`; the mathematics and the bounds are in that module).
//!
//! A step is T ← T_high + T_low·M̂ + A_i·B. Two independent multiplications ("slots" 0 and 1) are
//! interleaved, each step taking two cycles, so every DSP48E1 works every cycle:
//! - prefetch (the cycle before stage 1): the k·L products a_l·b_i of the slot's next step, one
//!   DSP each, registered (they do not depend on T);
//! - stage 1: the loop DSPs P_(l,i) = a_l·b_i + t_l·m̂_i (the a·b product as the addend), one per
//!   product, registered: T's low limbs go straight to the DSPs' 25-bit ports, with no quotient,
//!   no adder and no multiplexer in front of them other than the slot's;
//! - stage 2: [`FoldSum`] adds t_(j+k) and the products landing in column j and redistributes the
//!   column sums over three limbs; the result is the slot's new T.
//!
//! The prefetch of a slot's next step runs in its stage 2, so a step starts every other cycle. A
//! multiplication of m steps takes 2·m + 2 cycles from `start` to `done`, whatever the operands,
//! and its slot can start again in the cycle its result appears. Each slot keeps its own T (the
//! stage-2 addend t_(j+k) is read in the cycle after stage 1 read t_l).

use crate::fold_normalize::FoldNormalize;
use crate::fold_operands::FoldOperands;
use crate::fold_sum::FoldSum;
use crate::many;
use crate::mul_add::{LoopMulAddReg, MulAddReg, T_BITS, X_BITS, Y_BITS};
use ecrt_golden::hw::FoldShape;
use rust_hdl::prelude::*;

/// The folding multiplier of a [`FoldShape`].
#[derive(LogicBlock)]
pub struct FoldMul {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The slot that may start now, and whose `done` and `result` show now.
    pub phase: Signal<Out, bool>,
    /// Start a multiplication in slot `phase` with its operands (ignored while that slot is busy
    /// and not done).
    pub start: Signal<In, bool>,
    /// Slot 0's multiplier A, normalized limbs (value < X).
    pub a_in0: Vec<Signal<In, Bits<X_BITS>>>,
    /// Slot 0's multiplicand B, normalized limbs (value < X).
    pub b_in0: Vec<Signal<In, Bits<X_BITS>>>,
    /// Slot 1's multiplier A.
    pub a_in1: Vec<Signal<In, Bits<X_BITS>>>,
    /// Slot 1's multiplicand B.
    pub b_in1: Vec<Signal<In, Bits<X_BITS>>>,
    /// Slot 0's M̂ = 2^(−17k) mod N, exact limbs.
    pub m_hat0: Vec<Signal<In, Bits<Y_BITS>>>,
    /// Slot 1's M̂.
    pub m_hat1: Vec<Signal<In, Bits<Y_BITS>>>,
    /// Slot `phase` finished: `result` is valid in this cycle only.
    pub done: Signal<Out, bool>,
    /// A·B·R^(−1) mod N, below X, normalized limbs (< 2^17 + 3).
    pub result: Vec<Signal<Out, Bits<X_BITS>>>,
    /// The limbs of slot `phase`'s T (for tests).
    pub t: Vec<Signal<Out, Bits<T_BITS>>>,
    ph: DFF<bool>,
    operands0: FoldOperands,
    operands1: FoldOperands,
    // Product (l, i) at index l·L + i, L = operand limbs; it lands in column i + l.
    ab: Vec<MulAddReg>,
    products: Vec<LoopMulAddReg>,
    t0: Vec<DFF<Bits<T_BITS>>>,
    t1: Vec<DFF<Bits<T_BITS>>>,
    sum: FoldSum,
    normalize: FoldNormalize,
    pre_valid: DFF<bool>,
    pre_last: DFF<bool>,
    s2_valid: DFF<bool>,
    s2_last: DFF<bool>,
    done_r: DFF<bool>,
    // The prefetched slot's multiplicand and digits; the stage-1 slot's M̂ (0 above N's limbs)
    // and T's low limbs.
    b_sel: Vec<Signal<Local, Bits<X_BITS>>>,
    digit_sel: Vec<Signal<Local, Bits<Y_BITS>>>,
    m_sel: Vec<Signal<Local, Bits<Y_BITS>>>,
    t_low: Vec<Signal<Local, Bits<T_BITS>>>,
}

impl FoldMul {
    /// The multiplier for `shape`.
    pub fn new(shape: &FoldShape) -> Self {
        let FoldShape { limbs_per_step: k, steps, operand_limbs, modulus_limbs, columns } = *shape;
        FoldMul {
            clock: Default::default(),
            phase: Default::default(),
            start: Default::default(),
            a_in0: many(operand_limbs),
            b_in0: many(operand_limbs),
            a_in1: many(operand_limbs),
            b_in1: many(operand_limbs),
            m_hat0: many(modulus_limbs),
            m_hat1: many(modulus_limbs),
            done: Default::default(),
            result: many(operand_limbs),
            t: many(columns),
            ph: Default::default(),
            operands0: FoldOperands::new(operand_limbs, k, steps),
            operands1: FoldOperands::new(operand_limbs, k, steps),
            ab: many(k * operand_limbs),
            products: many(k * operand_limbs),
            t0: many(columns),
            t1: many(columns),
            sum: FoldSum::new(k, operand_limbs, columns),
            normalize: FoldNormalize::new(operand_limbs),
            pre_valid: Default::default(),
            pre_last: Default::default(),
            s2_valid: Default::default(),
            s2_last: Default::default(),
            done_r: Default::default(),
            b_sel: many(operand_limbs),
            digit_sel: many(k),
            m_sel: many(operand_limbs),
            t_low: many(k),
        }
    }
}

impl Logic for FoldMul {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, ph, pre_valid, pre_last, s2_valid, s2_last, done_r);
        clock!(self, clock, operands0, operands1);
        for j in 0..self.t0.len() {
            self.t0[j].clock.next = self.clock.val();
            self.t1[j].clock.next = self.clock.val();
            self.t0[j].d.next = self.t0[j].q.val();
            self.t1[j].d.next = self.t1[j].q.val();
        }
        for p in 0..self.ab.len() {
            self.ab[p].clock.next = self.clock.val();
            self.products[p].clock.next = self.clock.val();
        }
        self.ph.d.next = !self.ph.q.val();
        self.phase.next = self.ph.q.val();
        self.done.next = self.done_r.q.val();
        self.done_r.d.next = false;

        // Prefetch for slot !ph, whose stage 1 is next cycle: a_l·b_i for its next step.
        self.operands0.advance.next = self.ph.q.val();
        self.operands1.advance.next = !self.ph.q.val();
        if self.ph.q.val() {
            self.pre_valid.d.next = self.operands0.pending.val();
            self.pre_last.d.next = self.operands0.last.val();
            for i in 0..self.b_sel.len() {
                self.b_sel[i].next = self.operands0.b[i].val();
            }
            for l in 0..self.digit_sel.len() {
                self.digit_sel[l].next = self.operands0.digits[l].val();
            }
        } else {
            self.pre_valid.d.next = self.operands1.pending.val();
            self.pre_last.d.next = self.operands1.last.val();
            for i in 0..self.b_sel.len() {
                self.b_sel[i].next = self.operands1.b[i].val();
            }
            for l in 0..self.digit_sel.len() {
                self.digit_sel[l].next = self.operands1.digits[l].val();
            }
        }

        // Stage 1 (slot ph): P_(l,i) = a_l·b_i + t_l·m̂_i.
        for i in 0..self.m_hat0.len() {
            self.m_sel[i].next = self.m_hat0[i].val();
            if self.ph.q.val() {
                self.m_sel[i].next = self.m_hat1[i].val();
            }
        }
        for i in (self.m_hat0.len())..(self.m_sel.len()) {
            self.m_sel[i].next = 0.into();
        }
        for l in 0..self.t_low.len() {
            self.t_low[l].next = self.t0[l].q.val();
            if self.ph.q.val() {
                self.t_low[l].next = self.t1[l].q.val();
            }
        }
        // The row length as a loop variable: rust-hdl indexes with loop variables only.
        for row in (self.b_sel.len())..(self.b_sel.len() + 1) {
            for l in 0..self.digit_sel.len() {
                for i in 0..self.b_sel.len() {
                    self.ab[l * row + i].x.next = self.b_sel[i].val();
                    self.ab[l * row + i].y.next = self.digit_sel[l].val();
                    self.ab[l * row + i].c.next = 0.into();
                    self.products[l * row + i].x.next = self.t_low[l].val();
                    self.products[l * row + i].y.next = self.m_sel[i].val();
                    self.products[l * row + i].c.next = self.ab[l * row + i].p.val();
                }
            }
        }
        self.s2_valid.d.next = self.pre_valid.q.val();
        self.s2_last.d.next = self.pre_last.q.val();
        for j in 0..self.t.len() {
            self.t[j].next = self.t0[j].q.val();
            if self.ph.q.val() {
                self.t[j].next = self.t1[j].q.val();
            }
        }

        // Stage 2 (slot !ph): fold, add, redistribute; the new T is the slot's.
        for p in 0..self.products.len() {
            self.sum.products[p].next = self.products[p].p.val();
        }
        // T_high: t_(j+k) into column j (k as a loop variable, as rust-hdl indexes).
        for k in (self.t_low.len())..(self.t_low.len() + 1) {
            for j in 0..self.sum.base.len() {
                self.sum.base[j].next = self.t1[j + k].q.val();
                if self.ph.q.val() {
                    self.sum.base[j].next = self.t0[j + k].q.val();
                }
            }
        }
        for j in 0..self.t0.len() {
            if self.s2_valid.q.val() {
                if self.ph.q.val() {
                    self.t0[j].d.next = self.sum.t_next[j].val();
                } else {
                    self.t1[j].d.next = self.sum.t_next[j].val();
                }
            }
        }
        if self.s2_valid.q.val() & self.s2_last.q.val() {
            self.done_r.d.next = true;
        }
        self.operands0.finish.next = self.s2_valid.q.val() & self.s2_last.q.val() & self.ph.q.val();
        self.operands1.finish.next = self.s2_valid.q.val() & self.s2_last.q.val() & !self.ph.q.val();

        // The result: slot ph's T, normalized.
        for j in 0..self.result.len() {
            self.normalize.t[j].next = self.t0[j].q.val();
            if self.ph.q.val() {
                self.normalize.t[j].next = self.t1[j].q.val();
            }
            self.result[j].next = self.normalize.result[j].val();
        }

        // Start: load slot ph's operands and clear its T (its previous result shows this cycle).
        for j in 0..self.a_in0.len() {
            self.operands0.a_in[j].next = self.a_in0[j].val();
            self.operands0.b_in[j].next = self.b_in0[j].val();
            self.operands1.a_in[j].next = self.a_in1[j].val();
            self.operands1.b_in[j].next = self.b_in1[j].val();
        }
        self.operands0.load.next =
            self.start.val() & !self.ph.q.val() & (!self.operands0.busy.val() | self.done_r.q.val());
        self.operands1.load.next =
            self.start.val() & self.ph.q.val() & (!self.operands1.busy.val() | self.done_r.q.val());
        for j in 0..self.t0.len() {
            if self.operands0.load.val() {
                self.t0[j].d.next = 0.into();
            }
            if self.operands1.load.val() {
                self.t1[j].d.next = 0.into();
            }
        }
    }
}

#[cfg(test)]
mod tests;
