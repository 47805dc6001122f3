//! The folding Montgomery multiplier: k limbs of the multiplier per step, Orup's pre-scaled
//! modulus so that the quotient is T's own low limbs (the model it matches limb for limb is
//! `ecrt_golden::hw::FoldContext::mul_trace`; the mathematics and the bounds are in that module).
//!
//! A step is T ← T_high + T_low·M̂ + A_i·B. Two independent multiplications ("slots" 0 and 1) are
//! interleaved, each step taking two cycles, so every DSP48E1 works every cycle:
//! - prefetch (the cycle before stage 1): the 24×17 products a_l·b′_w of the slot's next step, B
//!   in W = ⌈17·L/23⌉ windows of 23 bits ([`super::b_windows`], formed when B is loaded), one DSP
//!   each, registered (they do not depend on T); and the slot's M̂ (or N), registered for stage 1's
//!   DSP ports;
//! - stage 1: the loop DSPs P_(l,i) = t_l·m̂_i + (the middle piece of row l's a·b product landing
//!   below position i, or else the low piece landing at it, [`super::window_pieces`]), registered: T's low limbs go straight to the
//!   DSPs' 25-bit ports, with no quotient, no adder and no multiplexer in front of them other
//!   than the slot's; and stage 2's addends t_(j+k), selected from the slot's T, plus the a·b
//!   products' low and top pieces ([`super::fold_base`]), into a register;
//! - stage 2: [`FoldSum`] adds the addend and the loop products landing in column j and
//!   redistributes the column sums over three limbs; the result is the slot's new T.
//!
//! The prefetch of a slot's next step runs in its stage 2, so a step starts every other cycle.
//! The slot's first turn after `start` is its operands' lead turn ([`FoldOperands`]: the first
//! digits resolved into registers, B's windows formed), so a multiplication of m steps takes
//! 2·m + 4 cycles from `start` to `done` ([`FoldShape::fold_cycles`]), whatever the operands,
//! and its slot can start again in the cycle its result appears. Each slot keeps its own T.
//!
//! The classic mode (`classic` with `start`; model: `ecrt_golden::hw::ClassicPass`) is a
//! digit-serial pass with an exact quotient on the first row: the row's pieces of d·B plus
//! q·n_j, the other rows 0, and T moves down a limb a step (held a limb up, see [`FoldSum`]: t_j
//! is register j + 1). The quotient q = t_0·N′ + d·(b_0·N′) mod 2^17 (b_0: B's low 17 bits) is
//! one DSP multiply-add of its own, fed by registers: in the slot's turn before each step's stage 1
//! (its prefetch, the turn before, forms d·(b_0·N′)), so a classic step takes two turns, four
//! cycles, and a pass of s steps 4·s + 4 cycles. The wide REDC's digits of C_hi join stage 2 at
//! column L; a decremented pass takes A − 1 over N's limbs. Classic moduli have at most N's limbs,
//! so the loop DSPs above them multiply by 0 in either mode and are not built.

use crate::fanout::replicas::Replicas;
use crate::fanout::toggles::Toggles;
use crate::fanout::{copies, LIMBS_PER_COPY};
use crate::many;
use crate::multiplier::fold_base::{FoldBase, BASE_BITS};
use crate::multiplier::fold_normalize::FoldNormalize;
use crate::multiplier::fold_operands::FoldOperands;
use crate::multiplier::fold_sum::FoldSum;
use crate::multiplier::mul_add::{LoopMulAddReg, MulAddReg, WindowMulReg, P_BITS, T_BITS, WINDOW_BITS, X_BITS, Y_BITS};
use crate::multiplier::window_pieces::{positions, WindowPieces};
use ecrt_golden::hw::{wide, ClassicOp, FoldShape};
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
    /// With `start`: a classic pass (modulus `n0`/`n1`), not a folding multiplication.
    pub classic: Signal<In, bool>,
    /// With `start` and `classic`: a wide REDC of B + A·2^(17L) (A and B exact).
    pub redc: Signal<In, bool>,
    /// With `start` and `classic`: a pass on A − 1 over N's limbs (the exact division).
    pub decrement: Signal<In, bool>,
    /// In the next cycle: slot 0 will `start` again in the cycle its multiplication is done (the
    /// operand registers take their load from copies registered from this, so that no one net
    /// reaches every operand bit).
    pub continues0: Signal<In, bool>,
    /// The same for slot 1.
    pub continues1: Signal<In, bool>,
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
    /// Slot 0's classic modulus N (odd), exact limbs, as many as M̂ has.
    pub n0: Vec<Signal<In, Bits<Y_BITS>>>,
    /// Slot 1's classic modulus.
    pub n1: Vec<Signal<In, Bits<Y_BITS>>>,
    /// −N^(−1) mod 2^17 of slot 0's classic modulus.
    pub n_prime0: Signal<In, Bits<Y_BITS>>,
    /// −N^(−1) mod 2^17 of slot 1's.
    pub n_prime1: Signal<In, Bits<Y_BITS>>,
    /// Slot `phase` finished: `result` is valid in this cycle only.
    pub done: Signal<Out, bool>,
    /// `done` in the next cycle (for the slot that is not `phase` now).
    pub done_next: Signal<Out, bool>,
    /// A·B·R^(−1) mod N, below X (classic: below 2N), normalized limbs (< 2^17 + 3).
    pub result: Vec<Signal<Out, Bits<X_BITS>>>,
    /// Slot 0 is multiplying.
    pub busy0: Signal<Out, bool>,
    /// Slot 1 is multiplying.
    pub busy1: Signal<Out, bool>,
    /// The limbs of slot `phase`'s T (for tests).
    pub t: Vec<Signal<Out, Bits<T_BITS>>>,
    ph: DFF<bool>,
    // Copies of the phase and of slot ph's classic flag (`classic_*`; slot 0's and 1's in
    // `classic0_limbs`, `classic1_limbs`) for the wide multiplexers, one per LIMBS_PER_COPY limbs
    // or windows, one per digit (`ph_digits`: the digits', then T's low limbs') and one per column
    // (`*_columns`: ABC merges those multiplexers into stage 1's adders, two LUTs a bit, and two
    // columns a copy measured up to 73 loads), so that no register drives more than its share of
    // them. `ph` itself drives the control.
    ph_digits: Toggles,
    ph_quotient: Toggles,
    ph_windows: Toggles,
    ph_limbs: Toggles,
    ph_columns: Toggles,
    ph_result: Toggles,
    classic0_limbs: Replicas<bool>,
    classic1_limbs: Replicas<bool>,
    classic_columns: Replicas<bool>,
    classic_result: Replicas<bool>,
    classic_low: Replicas<bool>,
    // Stage 2 writes slot 0's (1's) T in the next cycle, per LIMBS_PER_COPY columns.
    write0: Replicas<bool>,
    write1: Replicas<bool>,
    // Slot 0's (1's) T is cleared in the next cycle, the one after its start: its first stage 1
    // is three cycles later still, and nothing writes it meanwhile (its previous multiplication is
    // done). A copy per LIMBS_PER_COPY columns, where the start's own net would reach all of T.
    clear0: Replicas<bool>,
    clear1: Replicas<bool>,
    // The operands' loads, per LIMBS_PER_COPY limbs of A, then of B: the load itself, or'ed with
    // what copies of `done`, of the phase and of `continues` say of a start when a multiplication
    // is done (equal to it then). Each copy's LUT has inputs of its own, so synthesis cannot merge
    // them back into the one load net that reached every operand register; the load now reaches
    // only these LUTs, and a start that `continues` did not announce still loads.
    done_copies: Replicas<bool>,
    ph_load: Toggles,
    continues0_copies: Replicas<bool>,
    continues1_copies: Replicas<bool>,
    operands0: FoldOperands,
    operands1: FoldOperands,
    // a·b product (l, w) at index l·W + w (W windows of B), cut into pieces; loop product (l, i)
    // at index l·P + i (P positions), landing in column l + i.
    ab: Vec<WindowMulReg>,
    pieces: WindowPieces,
    products: Vec<LoopMulAddReg>,
    t0: Vec<DFF<Bits<T_BITS>>>,
    t1: Vec<DFF<Bits<T_BITS>>>,
    // Stage 2's addend per column, formed in stage 1: the slot's T limb (base_t) plus the low and
    // top pieces landing in the column.
    base_t: Vec<Signal<Local, Bits<T_BITS>>>,
    base_sum: FoldBase,
    base: Vec<DFF<Bits<BASE_BITS>>>,
    sum: FoldSum,
    normalize: FoldNormalize,
    pre_valid: DFF<bool>,
    pre_last: DFF<bool>,
    s2_valid: DFF<bool>,
    s2_last: DFF<bool>,
    done_r: DFF<bool>,
    // The stage-1 DSPs' narrow factor below N's limbs (0 above): the slot's M̂, or its classic
    // N, registered in the prefetch.
    y_stage1: Vec<DFF<Bits<Y_BITS>>>,
    // Classic: each slot's b_0·N' (its operands and N' hold for the whole pass: valid from the
    // cycle after its first prefetch on).
    b0_n_prime0: MulAddReg,
    b0_n_prime1: MulAddReg,
    // Prefetch: d·(b_0·N'), or d·b_0 in the first step (T = 0, and b_0·N' is not ready yet).
    pre_dbn: MulAddReg,
    pre_quotient: DFF<bool>,
    pre_first: DFF<bool>,
    // A wide REDC's digit of C_hi on its way to stage 2.
    pre_high: DFF<Bits<Y_BITS>>,
    s1_high: DFF<Bits<Y_BITS>>,
    // The quotient turn's DSP, and each slot's quotient digit held for its stage 1.
    q_in: Signal<Local, Bits<Y_BITS>>,
    quotient: MulAddReg,
    take_quotient: DFF<bool>,
    q0: DFF<Bits<Y_BITS>>,
    q1: DFF<Bits<Y_BITS>>,
    // The prefetched slot's multiplicand and digits; the stage-1 slot's T's low limbs.
    b_sel: Vec<Signal<Local, Bits<WINDOW_BITS>>>,
    digit_sel: Vec<Signal<Local, Bits<Y_BITS>>>,
    t_low: Vec<Signal<Local, Bits<T_BITS>>>,
    // Slot ph runs a classic pass.
    classic_ph: Signal<Local, bool>,
}

impl FoldMul {
    /// The multiplier for `shape`.
    pub fn new(shape: &FoldShape) -> Self {
        let FoldShape { limbs_per_step: k, steps, operand_limbs, modulus_limbs, columns } = *shape;
        let classic_steps = shape.classic_steps(ClassicOp::Multiply);
        let windows = wide::window_count(operand_limbs);
        let positions = positions(windows, modulus_limbs);
        let decremented_steps = shape.classic_steps(ClassicOp::Decremented);
        FoldMul {
            clock: Default::default(),
            phase: Default::default(),
            start: Default::default(),
            classic: Default::default(),
            redc: Default::default(),
            decrement: Default::default(),
            continues0: Default::default(),
            continues1: Default::default(),
            a_in0: many(operand_limbs),
            b_in0: many(operand_limbs),
            a_in1: many(operand_limbs),
            b_in1: many(operand_limbs),
            m_hat0: many(modulus_limbs),
            m_hat1: many(modulus_limbs),
            n0: many(modulus_limbs),
            n1: many(modulus_limbs),
            n_prime0: Default::default(),
            n_prime1: Default::default(),
            done: Default::default(),
            done_next: Default::default(),
            result: many(operand_limbs),
            busy0: Default::default(),
            busy1: Default::default(),
            t: many(columns),
            ph: Default::default(),
            ph_digits: Toggles::new(2 * k),
            ph_quotient: Toggles::new(2),
            ph_windows: Toggles::new(copies(windows)),
            ph_limbs: Toggles::new(copies(modulus_limbs)),
            ph_columns: Toggles::new(columns - 1),
            ph_result: Toggles::new(copies(operand_limbs)),
            classic0_limbs: Replicas::new(copies(modulus_limbs)),
            classic1_limbs: Replicas::new(copies(modulus_limbs)),
            classic_columns: Replicas::new(columns),
            classic_result: Replicas::new(copies(operand_limbs)),
            classic_low: Replicas::new(k),
            write0: Replicas::new(copies(columns)),
            write1: Replicas::new(copies(columns)),
            clear0: Replicas::new(copies(columns)),
            clear1: Replicas::new(copies(columns)),
            done_copies: Replicas::new(2 * copies(operand_limbs)),
            ph_load: Toggles::new(2 * copies(operand_limbs)),
            continues0_copies: Replicas::new(2 * copies(operand_limbs)),
            continues1_copies: Replicas::new(2 * copies(operand_limbs)),
            operands0: FoldOperands::new(operand_limbs, k, steps, classic_steps, decremented_steps),
            operands1: FoldOperands::new(operand_limbs, k, steps, classic_steps, decremented_steps),
            ab: many(k * windows),
            pieces: WindowPieces::new(k, windows, positions),
            products: many(k * positions),
            t0: many(columns),
            t1: many(columns),
            base_t: many(columns),
            base_sum: FoldBase::new(k, windows, columns),
            base: many(columns),
            sum: FoldSum::new(k, positions, operand_limbs, columns),
            normalize: FoldNormalize::new(operand_limbs),
            pre_valid: Default::default(),
            pre_last: Default::default(),
            s2_valid: Default::default(),
            s2_last: Default::default(),
            done_r: Default::default(),
            y_stage1: many(modulus_limbs),
            b0_n_prime0: Default::default(),
            b0_n_prime1: Default::default(),
            pre_dbn: Default::default(),
            pre_quotient: Default::default(),
            pre_first: Default::default(),
            pre_high: Default::default(),
            s1_high: Default::default(),
            q_in: Default::default(),
            quotient: Default::default(),
            take_quotient: Default::default(),
            q0: Default::default(),
            q1: Default::default(),
            b_sel: many(windows),
            digit_sel: many(k),
            t_low: many(k),
            classic_ph: Default::default(),
        }
    }
}

impl Logic for FoldMul {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            ph,
            pre_valid,
            pre_last,
            s2_valid,
            s2_last,
            done_r,
            pre_quotient,
            pre_first,
            pre_high,
            s1_high,
            take_quotient,
            q0,
            q1
        );
        clock!(
            self,
            clock,
            operands0,
            operands1,
            b0_n_prime0,
            b0_n_prime1,
            pre_dbn,
            quotient,
            ph_digits,
            ph_quotient,
            ph_windows,
            ph_limbs,
            ph_columns,
            ph_result,
            classic0_limbs,
            classic1_limbs,
            classic_columns,
            classic_result,
            classic_low,
            write0,
            write1,
            clear0,
            clear1,
            done_copies,
            ph_load,
            continues0_copies,
            continues1_copies
        );
        for j in 0..self.t0.len() {
            self.t0[j].clock.next = self.clock.val();
            self.t1[j].clock.next = self.clock.val();
            self.base[j].clock.next = self.clock.val();
            self.t0[j].d.next = self.t0[j].q.val();
            self.t1[j].d.next = self.t1[j].q.val();
        }
        for p in 0..self.ab.len() {
            self.ab[p].clock.next = self.clock.val();
        }
        for p in 0..self.products.len() {
            self.products[p].clock.next = self.clock.val();
        }
        for i in 0..self.y_stage1.len() {
            self.y_stage1[i].clock.next = self.clock.val();
        }
        self.ph.d.next = !self.ph.q.val();
        self.phase.next = self.ph.q.val();
        self.done.next = self.done_r.q.val();
        self.busy0.next = self.operands0.busy.val();
        self.busy1.next = self.operands1.busy.val();

        // B's low 17 bits: the first window's, as b_0's.
        for j in 0..1 {
            self.b0_n_prime0.x.next = self.operands0.b[j].val().get_bits::<X_BITS>(0);
            self.b0_n_prime1.x.next = self.operands1.b[j].val().get_bits::<X_BITS>(0);
        }
        self.b0_n_prime0.y.next = self.n_prime0.val();
        self.b0_n_prime1.y.next = self.n_prime1.val();
        self.b0_n_prime0.c.next = 0.into();
        self.b0_n_prime1.c.next = 0.into();

        // Prefetch for slot !ph, whose turn is next cycle: a_l·b_i for its next step, its M̂ or
        // N; classic, every other turn is its quotient's instead (the digit holds for both).
        self.pre_dbn.c.next = 0.into();
        for l in 0..self.digit_sel.len() {
            self.digit_sel[l].next = self.operands1.digits[l].val();
            if self.ph_digits.q[l].val() {
                self.digit_sel[l].next = self.operands0.digits[l].val();
            }
        }
        // The group size as a loop variable: rust-hdl indexes with loop variables only.
        for g in (LIMBS_PER_COPY)..(LIMBS_PER_COPY + 1) {
            for i in 0..self.b_sel.len() {
                self.b_sel[i].next = self.operands1.b[i].val();
                if self.ph_windows.q[i / g].val() {
                    self.b_sel[i].next = self.operands0.b[i].val();
                }
            }
            for i in 0..self.y_stage1.len() {
                self.y_stage1[i].d.next = self.m_hat1[i].val();
                if self.classic1_limbs.q[i / g].val() {
                    self.y_stage1[i].d.next = self.n1[i].val();
                }
                if self.ph_limbs.q[i / g].val() {
                    self.y_stage1[i].d.next = self.m_hat0[i].val();
                    if self.classic0_limbs.q[i / g].val() {
                        self.y_stage1[i].d.next = self.n0[i].val();
                    }
                }
            }
        }
        self.classic0_limbs.d.next = self.operands0.classic_next.val();
        self.classic1_limbs.d.next = self.operands1.classic_next.val();
        if self.ph.q.val() {
            self.pre_valid.d.next = self.operands0.pending.val() & !self.operands0.quotient_turn.val();
            self.pre_quotient.d.next = self.operands0.pending.val() & self.operands0.quotient_turn.val();
            self.pre_last.d.next = self.operands0.last.val();
            self.pre_first.d.next = self.operands0.first.val();
        } else {
            self.pre_valid.d.next = self.operands1.pending.val() & !self.operands1.quotient_turn.val();
            self.pre_quotient.d.next = self.operands1.pending.val() & self.operands1.quotient_turn.val();
            self.pre_last.d.next = self.operands1.last.val();
            self.pre_first.d.next = self.operands1.first.val();
        }
        if self.ph_quotient.q[1].val() {
            self.pre_high.d.next = 0.into();
            if self.operands0.redc.val() {
                for l in 0..1 {
                    self.pre_high.d.next = self.operands0.digits[l].val();
                }
                for l in 0..1 {
                    self.digit_sel[l].next = 0.into();
                    if self.operands0.first.val() {
                        self.digit_sel[l].next = 1.into();
                    }
                }
            }
            self.pre_dbn.x.next = bit_cast::<X_BITS, Y_BITS>(self.b0_n_prime0.p.val().get_bits::<Y_BITS>(0));
            if self.operands0.first.val() {
                for j in 0..1 {
                    self.pre_dbn.x.next = self.operands0.b[j].val().get_bits::<X_BITS>(0);
                }
            }
        } else {
            self.pre_high.d.next = 0.into();
            if self.operands1.redc.val() {
                for l in 0..1 {
                    self.pre_high.d.next = self.operands1.digits[l].val();
                }
                for l in 0..1 {
                    self.digit_sel[l].next = 0.into();
                    if self.operands1.first.val() {
                        self.digit_sel[l].next = 1.into();
                    }
                }
            }
            self.pre_dbn.x.next = bit_cast::<X_BITS, Y_BITS>(self.b0_n_prime1.p.val().get_bits::<Y_BITS>(0));
            if self.operands1.first.val() {
                for j in 0..1 {
                    self.pre_dbn.x.next = self.operands1.b[j].val().get_bits::<X_BITS>(0);
                }
            }
        }
        self.operands0.advance.next = self.ph.q.val();
        self.operands1.advance.next = !self.ph.q.val();
        for l in 0..1 {
            self.pre_dbn.y.next = self.digit_sel[l].val();
        }

        // A quotient turn (slot ph, classic): q = t_0·N' + d·(b_0·N') mod 2^17, or
        // (d·b_0 mod 2^17)·N' in the first step; it is held for the slot's stage 1, two cycles on.
        self.quotient.c.next = bit_cast::<P_BITS, Y_BITS>(self.pre_dbn.p.val().get_bits::<Y_BITS>(0));
        // t_0 of a classic T, held a limb up.
        for j in 1..2 {
            self.q_in.next = self.t0[j].q.val().get_bits::<Y_BITS>(0);
            if self.ph_quotient.q[0].val() {
                self.q_in.next = self.t1[j].q.val().get_bits::<Y_BITS>(0);
            }
        }
        self.quotient.y.next = self.n_prime0.val();
        if self.ph_quotient.q[0].val() {
            self.quotient.y.next = self.n_prime1.val();
        }
        if self.pre_first.q.val() {
            self.q_in.next = self.pre_dbn.p.val().get_bits::<Y_BITS>(0);
            self.quotient.c.next = 0.into();
        }
        self.quotient.x.next = bit_cast::<X_BITS, Y_BITS>(self.q_in.val());
        self.take_quotient.d.next = self.pre_quotient.q.val();
        if self.take_quotient.q.val() {
            if self.ph.q.val() {
                self.q0.d.next = self.quotient.p.val().get_bits::<Y_BITS>(0);
            } else {
                self.q1.d.next = self.quotient.p.val().get_bits::<Y_BITS>(0);
            }
        }

        // Stage 1 (slot ph): P_(l,i) = a_l·b_i + t_l·m̂_i; classic, P_(0,i) = d·b_i + q·n_i.
        for k in (self.t_low.len())..(self.t_low.len() + 1) {
            for l in 0..self.t_low.len() {
                self.t_low[l].next = self.t0[l].q.val();
                if self.ph_digits.q[k + l].val() {
                    self.t_low[l].next = self.t1[l].q.val();
                }
                if self.classic_low.q[l].val() {
                    self.t_low[l].next = 0.into();
                }
            }
            for l in 0..1 {
                if self.classic_low.q[l].val() {
                    self.t_low[l].next = bit_cast::<T_BITS, Y_BITS>(self.q0.q.val());
                    if self.ph_digits.q[k + l].val() {
                        self.t_low[l].next = bit_cast::<T_BITS, Y_BITS>(self.q1.q.val());
                    }
                }
            }
        }
        self.classic_ph.next = self.operands0.classic.val();
        if self.ph.q.val() {
            self.classic_ph.next = self.operands1.classic.val();
        }
        // The row lengths as loop variables: rust-hdl indexes with loop variables only.
        for wn in (self.b_sel.len())..(self.b_sel.len() + 1) {
            for l in 0..self.digit_sel.len() {
                for w in 0..self.b_sel.len() {
                    self.ab[l * wn + w].x.next = self.b_sel[w].val();
                    self.ab[l * wn + w].y.next = self.digit_sel[l].val();
                    self.ab[l * wn + w].c.next = 0.into();
                    self.pieces.products[l * wn + w].next = self.ab[l * wn + w].p.val();
                    self.base_sum.lows[l * wn + w].next = self.pieces.low[l * wn + w].val();
                    self.base_sum.tops[l * wn + w].next = self.pieces.top[l * wn + w].val();
                }
            }
        }
        for pn in (self.products.len() / self.t_low.len())..(self.products.len() / self.t_low.len() + 1) {
            for l in 0..self.digit_sel.len() {
                for i in 0..(self.products.len() / self.t_low.len()) {
                    self.products[l * pn + i].x.next = self.t_low[l].val();
                    self.products[l * pn + i].y.next = 0.into();
                    self.products[l * pn + i].c.next = self.pieces.loop_addend[l * pn + i].val();
                }
                for i in 0..self.y_stage1.len() {
                    self.products[l * pn + i].y.next = self.y_stage1[i].q.val();
                }
            }
        }
        self.s1_high.d.next = self.pre_high.q.val();
        self.s2_valid.d.next = self.pre_valid.q.val();
        self.s2_last.d.next = self.pre_last.q.val();
        // Stage 2's addends: t_(j+k) folding, register j + 1 classic, plus the low and top pieces.
        for k in (self.t_low.len())..(self.t_low.len() + 1) {
            for j in 0..(self.base_t.len() - self.t_low.len()) {
                self.base_t[j].next = self.t0[j + k].q.val();
                if self.ph_columns.q[j].val() {
                    self.base_t[j].next = self.t1[j + k].q.val();
                }
            }
        }
        for j in (self.base_t.len() - self.t_low.len())..self.base_t.len() {
            self.base_t[j].next = 0.into();
        }
        for j in 0..(self.base_t.len() - 1) {
            if self.classic_columns.q[j].val() {
                self.base_t[j].next = self.t0[j + 1].q.val();
                if self.ph_columns.q[j].val() {
                    self.base_t[j].next = self.t1[j + 1].q.val();
                }
            }
        }
        for j in (self.base_t.len() - 1)..self.base_t.len() {
            if self.classic_columns.q[j].val() {
                self.base_t[j].next = 0.into();
            }
        }
        // Next cycle's classic_ph.
        self.classic_columns.d.next = self.operands1.classic_next.val();
        self.classic_result.d.next = self.operands1.classic_next.val();
        self.classic_low.d.next = self.operands1.classic_next.val();
        if self.ph.q.val() {
            self.classic_columns.d.next = self.operands0.classic_next.val();
            self.classic_result.d.next = self.operands0.classic_next.val();
            self.classic_low.d.next = self.operands0.classic_next.val();
        }
        for j in 0..self.base_t.len() {
            self.base_sum.t[j].next = self.base_t[j].val();
            self.base[j].d.next = self.base_sum.base[j].val();
        }
        for j in 0..self.t.len() {
            self.t[j].next = self.t0[j].q.val();
            if self.ph.q.val() {
                self.t[j].next = self.t1[j].q.val();
            }
        }
        if self.classic_ph.val() {
            for j in 0..(self.t.len() - 1) {
                self.t[j].next = self.t0[j + 1].q.val();
                if self.ph.q.val() {
                    self.t[j].next = self.t1[j + 1].q.val();
                }
            }
            for j in (self.t.len() - 1)..self.t.len() {
                self.t[j].next = 0.into();
            }
        }

        // Stage 2 (slot !ph): fold (or shift), add, redistribute; the new T is the slot's.
        for p in 0..self.products.len() {
            self.sum.products[p].next = self.products[p].p.val();
        }
        self.sum.high.next = self.s1_high.q.val();
        for j in 0..self.sum.base.len() {
            self.sum.base[j].next = self.base[j].q.val();
        }
        // Next cycle's stage 2 writes slot ph's T (the phase toggles).
        self.write0.d.next = self.pre_valid.q.val() & !self.ph.q.val();
        self.write1.d.next = self.pre_valid.q.val() & self.ph.q.val();
        for g in (LIMBS_PER_COPY)..(LIMBS_PER_COPY + 1) {
            for j in 0..self.t0.len() {
                if self.write0.q[j / g].val() {
                    self.t0[j].d.next = self.sum.t_next[j].val();
                }
                if self.write1.q[j / g].val() {
                    self.t1[j].d.next = self.sum.t_next[j].val();
                }
            }
        }
        self.done_next.next = self.s2_valid.q.val() & self.s2_last.q.val();
        self.done_r.d.next = self.done_next.val();
        self.operands0.finish.next = self.done_next.val() & self.ph.q.val();
        self.operands1.finish.next = self.done_next.val() & !self.ph.q.val();

        // The result: slot ph's T (a classic one from the limb above), normalized.
        for g in (LIMBS_PER_COPY)..(LIMBS_PER_COPY + 1) {
            for j in 0..self.result.len() {
                self.normalize.t[j].next = self.t0[j].q.val();
                if self.ph_result.q[j / g].val() {
                    self.normalize.t[j].next = self.t1[j].q.val();
                }
                if self.classic_result.q[j / g].val() {
                    self.normalize.t[j].next = self.t0[j + 1].q.val();
                    if self.ph_result.q[j / g].val() {
                        self.normalize.t[j].next = self.t1[j + 1].q.val();
                    }
                }
                self.result[j].next = self.normalize.result[j].val();
            }
        }

        // Start: load slot ph's operands (its previous result shows this cycle), and clear its T
        // in the next.
        for j in 0..self.a_in0.len() {
            self.operands0.a_in[j].next = self.a_in0[j].val();
            self.operands0.b_in[j].next = self.b_in0[j].val();
            self.operands1.a_in[j].next = self.a_in1[j].val();
            self.operands1.b_in[j].next = self.b_in1[j].val();
        }
        self.operands0.classic_in.next = self.classic.val();
        self.operands1.classic_in.next = self.classic.val();
        self.operands0.redc_in.next = self.redc.val();
        self.operands1.redc_in.next = self.redc.val();
        self.operands0.decrement_in.next = self.decrement.val();
        self.operands1.decrement_in.next = self.decrement.val();
        self.operands0.load.next =
            self.start.val() & !self.ph.q.val() & (!self.operands0.busy.val() | self.done_r.q.val());
        self.operands1.load.next =
            self.start.val() & self.ph.q.val() & (!self.operands1.busy.val() | self.done_r.q.val());
        self.clear0.d.next = self.operands0.load.val();
        self.clear1.d.next = self.operands1.load.val();
        self.done_copies.d.next = self.done_next.val();
        self.continues0_copies.d.next = self.continues0.val();
        self.continues1_copies.d.next = self.continues1.val();
        for n in (self.operands0.load_a.len())..(self.operands0.load_a.len() + 1) {
            for c in 0..self.operands0.load_a.len() {
                self.operands0.load_a[c].next =
                    (self.done_copies.q[c].val() & !self.ph_load.q[c].val() & self.continues0_copies.q[c].val())
                        | self.operands0.load.val();
                self.operands0.load_b[c].next = (self.done_copies.q[n + c].val()
                    & !self.ph_load.q[n + c].val()
                    & self.continues0_copies.q[n + c].val())
                    | self.operands0.load.val();
                self.operands1.load_a[c].next =
                    (self.done_copies.q[c].val() & self.ph_load.q[c].val() & self.continues1_copies.q[c].val())
                        | self.operands1.load.val();
                self.operands1.load_b[c].next = (self.done_copies.q[n + c].val()
                    & self.ph_load.q[n + c].val()
                    & self.continues1_copies.q[n + c].val())
                    | self.operands1.load.val();
            }
        }
        for g in (LIMBS_PER_COPY)..(LIMBS_PER_COPY + 1) {
            for j in 0..self.t0.len() {
                if self.clear0.q[j / g].val() {
                    self.t0[j].d.next = 0.into();
                }
                if self.clear1.q[j / g].val() {
                    self.t1[j].d.next = 0.into();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
