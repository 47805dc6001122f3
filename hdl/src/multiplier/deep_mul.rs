//! The deep-loop folding multiplier: the folding multiplier's step (T ← T_high + T_low·M̂ + A_i·B,
//! `ecrt_golden::hw::FoldContext::step`, limb for limb) on a loop of k + 3 cycles in which every
//! stage is a register and at most one adder, so that no register-to-register path holds more
//! than a DSP48E1 port or a two-input adder of a column's width. It interleaves k + 3 independent
//! multiplications, its **lanes**, one per cycle of the loop, so that every loop DSP works every
//! cycle. Each lane runs the folding mode or a classic pass (below).
//!
//! A lane's step, from its **turn** τ (the cycle in which the register `t` holds its T):
//! - τ: T's k low limbs enter the loop DSPs' A registers (row l's after l more registers, so
//!   that the rows meet the cascade in turn), zero on the lane's first step; each column's
//!   t_(j+k) is registered (`base_t`), zero likewise;
//! - τ + 1: the DSPs multiply into their M registers; the column's addend is t_(j+k) plus the sum
//!   of the a·b pieces landing in it ([`ColumnAddends`], registered);
//! - τ + 2 … τ + k + 1: column j's sum runs down a cascade of k DSPs, (0, j), (1, j − 1), …, each
//!   adding its product to the one above in its P register (positions outside M̂'s limbs are
//!   plain registers);
//! - τ + k + 2: the sums are redistributed over three limbs ([`Redistribute`]) into `t`, which
//!   holds the lane's new T at τ + k + 3, its next turn.
//!
//! The a·b products do not depend on T, so they run ahead: a lane's operands and state circulate
//! in a ring of k + 3 registers (`ring_*`, one lane each, no multiplexer but the load), which
//! resolves A's next k exact digits on the way, one digit a cycle, and hands digits and B's
//! windows to the a·b DSPs two turns before the step that adds their products. So a lane loads
//! its operands at its **load phase** (the cycle after its turn), spends two lead turns, then a
//! turn per step: (m + 2)·(k + 3) cycles from start to result
//! ([`ecrt_golden::hw::FoldShape::deep_cycles`]), and it may start again in the cycle its result
//! shows. A start is announced a cycle ahead ([`DeepMul::start_next`]): the load's select, which
//! reaches every bit of a lane's operands, is then a register, in copies.
//!
//! A classic pass (`ecrt_golden::hw::ClassicPass::deep_trace`, register for register) takes two
//! turns a step, since its quotient needs T's low limb through a DSP of its own (A, B and M
//! registers): the **products turn** adds d·B to T (row 0's a·b digit is d, the loop DSPs
//! multiply 0, column j adds register j + 1), and the quotient DSP forms q = lo17(t′_0·N′) from
//! column 0's addend; the **quotient turn** adds q·N (q on row 0's DSPs, whose M̂ limbs are N's for
//! a classic lane; column j adds register j), so T is then held a register up. A last products
//! turn with the digit 0 brings it down: (2·s + 3)·(k + 3) cycles from start to result
//! ([`ecrt_golden::hw::FoldShape::deep_classic_cycles`]). A's digits are resolved one a step,
//! with a borrow for a pass on A − 1; a wide REDC's digits of C_hi join column L in the products
//! turns, while the DSPs see the digit 1 in the first step and 0 after it.

use crate::fanout::replicas::{ReplicaSets, Replicas};
use crate::fanout::{copies, in_sets, sets, LIMBS_PER_COPY};
use crate::many;
use crate::multiplier::b_windows::BWindows;
use crate::multiplier::column_addends::{BaseLevel, ColumnAddends};
use crate::multiplier::fold_normalize::FoldNormalize;
use crate::multiplier::mul_add::{CascadeMulAdd, PipelinedWindowMul, QuotientMul, T_BITS, WINDOW_BITS, X_BITS, Y_BITS};
use crate::multiplier::redistribute::Redistribute;
use crate::part::MAX_REGISTER_FANOUT;
use ecrt_golden::hw::{wide, ClassicOp, FoldShape};
use rust_hdl::prelude::*;

/// DSP ports one copy of a limb or digit drives (one load a bit each).
pub const DSPS_PER_COPY: usize = 32;

/// Bits of a lane's index.
pub const LANE_BITS: usize = 5;

/// Bits of a lane's turn count (a classic pass's 2·s + 3 ≤ 489 for 4096-bit moduli at k = 1).
const COUNT_BITS: usize = 10;

/// The deep-loop multiplier of a [`FoldShape`].
#[derive(LogicBlock)]
pub struct DeepMul {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The lane at its load phase now (0 … k + 2, one more every cycle): the operands, `done`,
    /// `busy` and `result` are this lane's.
    pub lane: Signal<Out, Bits<LANE_BITS>>,
    /// The lane at its load phase in the next cycle may start then: it is idle, or its result
    /// shows then.
    pub next_free: Signal<Out, bool>,
    /// The lane at its load phase three cycles from now will be idle or finishing then (what
    /// `next_free` will say of it two cycles from now), for a user that prepares a load that far
    /// ahead.
    pub free_ahead: Signal<Out, bool>,
    /// Start a multiplication in the lane at its load phase in the next cycle, with the operands
    /// given then (ignored unless `next_free`).
    pub start_next: Signal<In, bool>,
    /// The multiplier A, normalized limbs (value < X).
    pub a_in: Vec<Signal<In, Bits<X_BITS>>>,
    /// The multiplicand B, normalized limbs (value < X).
    pub b_in: Vec<Signal<In, Bits<X_BITS>>>,
    /// M̂ = 2^(−17k) mod N of the lane's modulus, exact limbs; N's limbs for a classic pass.
    pub m_hat_in: Vec<Signal<In, Bits<Y_BITS>>>,
    /// A classic pass: A·B·R^(−1) mod N over S = k·(m − 1) digits, below 2N.
    pub classic_in: Signal<In, bool>,
    /// With `classic_in`: a wide REDC of C = C_hi·2^(17L) + C_lo (A = C_hi, B = C_lo).
    pub redc_in: Signal<In, bool>,
    /// With `classic_in`: (A − 1)·B over N's limbs (the exact division's pass, A ≥ 1).
    pub decrement_in: Signal<In, bool>,
    /// With `classic_in`: −N^(−1) mod 2^17.
    pub n_prime_in: Signal<In, Bits<Y_BITS>>,
    /// `lane` finished: `result` is its product, in this cycle only.
    pub done: Signal<Out, bool>,
    /// The lane at its load phase in the next cycle finishes then (what `done` will say), for a
    /// user that registers the result's write enables.
    pub done_next: Signal<Out, bool>,
    /// `lane` is multiplying (and not done).
    pub busy: Signal<Out, bool>,
    /// A·B·R^(−1) mod N, below X, normalized limbs (< 2^17 + 3).
    pub result: Vec<Signal<Out, Bits<X_BITS>>>,
    /// T's limbs, of the lane whose turn it is (the lane after `lane`'s; for tests).
    pub t: Vec<Signal<Out, Bits<T_BITS>>>,
    lane_r: DFF<Bits<LANE_BITS>>,
    last_lane: Constant<Bits<LANE_BITS>>,
    // A lane's turns from its start to its result, per kind of multiplication, and one fewer.
    fold_last: Constant<Bits<COUNT_BITS>>,
    classic_last: Constant<Bits<COUNT_BITS>>,
    decremented_last: Constant<Bits<COUNT_BITS>>,
    fold_before_last: Constant<Bits<COUNT_BITS>>,
    classic_before_last: Constant<Bits<COUNT_BITS>>,
    decremented_before_last: Constant<Bits<COUNT_BITS>>,
    first_count: Constant<Bits<COUNT_BITS>>,
    // The load phase's lane's last count, and the count before its last of the one two cycles
    // (ring position 1) and three cycles (position 2) from its load phase.
    lane_last: Signal<Local, Bits<COUNT_BITS>>,
    next_before_last: Signal<Local, Bits<COUNT_BITS>>,
    ahead_before_last: Signal<Local, Bits<COUNT_BITS>>,
    // The ring: position 0 holds the lane whose turn it is, position k + 2 the lane at its load
    // phase; every cycle each lane moves down one position (position 0 to k + 2). Per position:
    // A's limbs not yet consumed (index p·L + j), B's windows, M̂'s (or N's) limbs, the k digits
    // of the next step, the carry (or a decremented pass's borrow) into its first digit, turns
    // since the load, whether it is busy, and a classic lane's kind and N′. A classic lane's
    // products turns have odd counts, its quotient turns even ones.
    ring_a: Vec<DFF<Bits<X_BITS>>>,
    ring_b: Vec<DFF<Bits<WINDOW_BITS>>>,
    ring_m_hat: Vec<DFF<Bits<Y_BITS>>>,
    ring_digits: Vec<DFF<Bits<Y_BITS>>>,
    ring_carry: Vec<DFF<bool>>,
    ring_borrow: Vec<DFF<bool>>,
    ring_count: Vec<DFF<Bits<COUNT_BITS>>>,
    ring_busy: Vec<DFF<bool>>,
    ring_classic: Vec<DFF<bool>>,
    ring_redc: Vec<DFF<bool>>,
    ring_decrement: Vec<DFF<bool>>,
    ring_n_prime: Vec<DFF<Bits<Y_BITS>>>,
    finished: Signal<Local, bool>,
    // The load phase's lane loads its operands: a copy per limb of A (its limbs come through the
    // operand select, which synthesis merges into the load's LUTs, two a bit: a copy per two limbs
    // measured 62 loads flat) and per LIMBS_PER_COPY limbs of M̂, in sets of at most
    // MAX_REGISTER_FANOUT, and B's windows (`load_b1`) and its state, a set more.
    // Each set's decision, start_next and the lane's being free, is a LUT of its own on a copy of
    // `next_free` inverted (0, free, as the ring starts idle), formed a cycle ahead from ring
    // position 1: one decision drove all 187 copies. A copy more gives `next_free` and
    // `done_next`.
    held_copies: Replicas<bool>,
    load_next: Vec<Signal<Local, bool>>,
    load_a: ReplicaSets<bool>,
    load_m_hat: ReplicaSets<bool>,
    load_state: Replicas<bool>,
    // Digit l of the next step, resolved from position k + 1 − l to k − l (0 where a classic lane
    // takes none: l ≥ 1, and before a quotient turn).
    digit_sum: Vec<Signal<Local, Bits<Y_BITS>>>,
    resolved: Vec<Signal<Local, Bits<Y_BITS>>>,
    borrow_mask: Signal<Local, Bits<Y_BITS>>,
    all_ones: Constant<Bits<Y_BITS>>,
    // A moves down k limbs (folding) or one (classic, before a products turn) from position 2 to
    // 1, or stays: copies per LIMBS_PER_COPY limbs, set as the lane enters position 2.
    shift_by_k: Replicas<bool>,
    shift_by_one: Replicas<bool>,
    // Position 2's digit 0 as resolved; a wide REDC's DSP digit is 1 in its first step and 0
    // after, and the resolved one (of C_hi) is added to column L in the step's products turn
    // (`high`, delayed to that turn's base).
    sample_digit: Signal<Local, Bits<Y_BITS>>,
    high: Signal<Local, Bits<Y_BITS>>,
    high_delay: Vec<DFF<Bits<Y_BITS>>>,
    // The a·b DSPs' digits, copies of position 1's, per DSPS_PER_COPY windows.
    digit_copies: ReplicaSets<Bits<Y_BITS>>,
    // B's windows, formed in the cycle after the load from B's registered limbs (so that no
    // register-to-register path holds B's select and a window's adder) and loaded a position
    // further down the ring, still before the lane's first read at position 1. `load_b` is the
    // load a cycle late (`load_b1`, a copy per set of at most MAX_REGISTER_FANOUT of `load_b`'s
    // copies, one per LIMBS_PER_COPY windows).
    b_r: Vec<DFF<Bits<X_BITS>>>,
    load_b1: Replicas<bool>,
    load_b: ReplicaSets<bool>,
    b_windows: BWindows,
    // Position 1's lane is busy: an idle lane's windows are 0 (the DSPs' own reset, a copy per row
    // and DSPS_PER_COPY windows). The copies also keep each DSP's A register its own: registers
    // with the same input (a ring position's, another row's) are merged by synthesis, and a DSP
    // then loses its A register.
    sampled_busy: Replicas<bool>,
    // a·b product (l, w) at index l·W + w; each column's addend, t_(j+k) plus their pieces.
    ab: Vec<PipelinedWindowMul>,
    addends: ColumnAddends,
    // The lane whose turn it is starts its first step: its T is taken as 0.
    first_next: Signal<Local, bool>,
    // Copies per row and group of DSPS_PER_COPY loop DSPs (index l·G + g): the row multiplies 0
    // (a first step; a classic lane's rows but row 0 of a quotient turn), row 0 multiplies q.
    zero_rows: ReplicaSets<bool>,
    quotient_row: Replicas<bool>,
    // Copies per LIMBS_PER_COPY columns, in sets of at most MAX_REGISTER_FANOUT: column j's base
    // is register j + k (folding), j + 1 (a products turn), j (a quotient turn), or 0 (none: a
    // first step). Each set's selects are LUTs of their own, on the set's copies of position 1's
    // first step, kind and turn parity, taken a cycle ahead from position 2.
    base_fold: ReplicaSets<bool>,
    base_down: ReplicaSets<bool>,
    base_same: ReplicaSets<bool>,
    base_first: Replicas<bool>,
    base_classic: Replicas<bool>,
    base_odd: Replicas<bool>,
    // Column L's base before and the wide REDC's digit it adds.
    base_high: Signal<Local, Bits<T_BITS>>,
    high_turn: Signal<Local, Bits<Y_BITS>>,
    // The classic quotient from column 0's addend, and its delay to the quotient turn.
    quotient: QuotientMul,
    quotient_delay: Vec<DFF<Bits<Y_BITS>>>,
    quotient_turn: Signal<Local, Bits<Y_BITS>>,
    // T's k low limbs again, a copy per row and group of DSPS_PER_COPY loop DSPs (index l·G + g):
    // a limb of `t_r` would otherwise drive all of its row's DSPs.
    t_low: ReplicaSets<Bits<T_BITS>>,
    // Row l's limb of T, per group of its DSPs (index l·G + g), and the registers that delay it
    // l cycles (index (l·k + d)·G + g, d < l).
    row_x: Vec<Signal<Local, Bits<T_BITS>>>,
    row_delay: Vec<DFF<Bits<T_BITS>>>,
    base_t: Vec<DFF<Bits<T_BITS>>>,
    // Row l's stage of column j (its DSP at position j − l, a plain register where M̂ has no
    // limb j − l): row 0 at j, row 1 at j, row l ≥ 2 at (l − 2)·C + j (t_0 has 17 bits, t_1 18).
    row0: Vec<CascadeMulAdd<17, 34>>,
    row1: Vec<CascadeMulAdd<18, 35>>,
    rows: Vec<CascadeMulAdd<T_BITS, 36>>,
    redistribute: Redistribute,
    t_r: Vec<DFF<Bits<T_BITS>>>,
    normalize: FoldNormalize,
    result_r: Vec<DFF<Bits<X_BITS>>>,
}

impl DeepMul {
    /// Its lanes: k + 3.
    pub fn lanes(shape: &FoldShape) -> usize {
        shape.deep_lanes()
    }

    /// The multiplier for `shape`.
    pub fn new(shape: &FoldShape) -> Self {
        let FoldShape { limbs_per_step: k, steps, operand_limbs, modulus_limbs, columns } = *shape;
        let lanes = shape.deep_lanes();
        let windows = wide::window_count(operand_limbs);
        let window_sets = copies(windows).div_ceil(MAX_REGISTER_FANOUT);
        let groups = modulus_limbs.div_ceil(DSPS_PER_COPY);
        let load_sets = sets(operand_limbs) + sets(copies(modulus_limbs)) + 1;
        let turns = |classic_turns: usize| (classic_turns + 2) as u64;
        let (classic, decremented) = (
            turns(shape.deep_classic_turns(ClassicOp::Multiply)),
            turns(shape.deep_classic_turns(ClassicOp::Decremented)),
        );
        assert!(lanes <= 1 << LANE_BITS && classic.max(steps as u64 + 2) < 1 << COUNT_BITS, "shape too large");
        DeepMul {
            clock: Default::default(),
            lane: Default::default(),
            next_free: Default::default(),
            free_ahead: Default::default(),
            start_next: Default::default(),
            a_in: many(operand_limbs),
            b_in: many(operand_limbs),
            m_hat_in: many(modulus_limbs),
            classic_in: Default::default(),
            redc_in: Default::default(),
            decrement_in: Default::default(),
            n_prime_in: Default::default(),
            done: Default::default(),
            done_next: Default::default(),
            busy: Default::default(),
            result: many(operand_limbs),
            t: many(columns),
            lane_r: Default::default(),
            last_lane: Constant::new(((lanes - 1) as u64).into()),
            fold_last: Constant::new(((steps + 2) as u64).into()),
            classic_last: Constant::new(classic.into()),
            decremented_last: Constant::new(decremented.into()),
            fold_before_last: Constant::new(((steps + 1) as u64).into()),
            classic_before_last: Constant::new((classic - 1).into()),
            decremented_before_last: Constant::new((decremented - 1).into()),
            first_count: Constant::new(1u64.into()),
            lane_last: Default::default(),
            next_before_last: Default::default(),
            ahead_before_last: Default::default(),
            ring_a: many(lanes * operand_limbs),
            ring_b: many(lanes * windows),
            ring_m_hat: many(lanes * modulus_limbs),
            ring_digits: many(lanes * k),
            ring_carry: many(lanes),
            ring_borrow: many(lanes),
            ring_count: many(lanes),
            ring_busy: many(lanes),
            ring_classic: many(lanes),
            ring_redc: many(lanes),
            ring_decrement: many(lanes),
            ring_n_prime: many(lanes),
            finished: Default::default(),
            held_copies: Replicas::new(load_sets + 1),
            load_next: many(load_sets),
            load_a: in_sets(operand_limbs, 1),
            load_b: ReplicaSets::new(window_sets, copies(windows).div_ceil(window_sets)),
            load_m_hat: in_sets(copies(modulus_limbs), 1),
            load_state: Replicas::new(1),
            digit_sum: many(k),
            resolved: many(k),
            borrow_mask: Default::default(),
            all_ones: Constant::new(((1u64 << Y_BITS) - 1).into()),
            shift_by_k: Replicas::new(copies(operand_limbs)),
            shift_by_one: Replicas::new(copies(operand_limbs)),
            sample_digit: Default::default(),
            high: Default::default(),
            high_delay: many(lanes + 2),
            digit_copies: ReplicaSets::new(k, windows.div_ceil(DSPS_PER_COPY)),
            b_r: many(operand_limbs),
            load_b1: Replicas::new(window_sets),
            b_windows: BWindows::new(operand_limbs),
            sampled_busy: Replicas::new(k * windows.div_ceil(DSPS_PER_COPY)),
            ab: many(k * windows),
            addends: ColumnAddends::new(k, windows, columns, lanes, BaseLevel::Last),
            first_next: Default::default(),
            zero_rows: ReplicaSets::new(k, groups),
            quotient_row: Replicas::new(groups),
            base_fold: in_sets(copies(columns), 1),
            base_down: in_sets(copies(columns), 1),
            base_same: in_sets(copies(columns), 1),
            base_first: Replicas::new(sets(copies(columns))),
            base_classic: Replicas::new(sets(copies(columns))),
            base_odd: Replicas::new(sets(copies(columns))),
            base_high: Default::default(),
            high_turn: Default::default(),
            quotient: Default::default(),
            quotient_delay: many(k),
            quotient_turn: Default::default(),
            t_low: ReplicaSets::new(k, groups),
            row_x: many(k * groups),
            row_delay: many(k * k * groups),
            base_t: many(columns),
            row0: many(columns),
            row1: many(if k >= 2 { columns } else { 0 }),
            rows: many(k.saturating_sub(2) * columns),
            redistribute: Redistribute::new(columns),
            t_r: many(columns),
            normalize: FoldNormalize::new(operand_limbs),
            result_r: many(operand_limbs),
        }
    }
}

impl Logic for DeepMul {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, lane_r);
        clock!(
            self,
            clock,
            held_copies,
            load_a,
            load_b1,
            load_b,
            load_m_hat,
            load_state,
            shift_by_k,
            shift_by_one,
            digit_copies,
            sampled_busy,
            addends,
            zero_rows,
            quotient_row,
            base_fold,
            base_down,
            base_same,
            base_first,
            base_classic,
            base_odd,
            quotient,
            t_low
        );
        for p in 0..self.ring_a.len() {
            self.ring_a[p].clock.next = self.clock.val();
        }
        for p in 0..self.ring_b.len() {
            self.ring_b[p].clock.next = self.clock.val();
        }
        for p in 0..self.ring_m_hat.len() {
            self.ring_m_hat[p].clock.next = self.clock.val();
        }
        for p in 0..self.ring_digits.len() {
            self.ring_digits[p].clock.next = self.clock.val();
        }
        for p in 0..self.ring_busy.len() {
            self.ring_carry[p].clock.next = self.clock.val();
            self.ring_borrow[p].clock.next = self.clock.val();
            self.ring_count[p].clock.next = self.clock.val();
            self.ring_busy[p].clock.next = self.clock.val();
            self.ring_classic[p].clock.next = self.clock.val();
            self.ring_redc[p].clock.next = self.clock.val();
            self.ring_decrement[p].clock.next = self.clock.val();
            self.ring_n_prime[p].clock.next = self.clock.val();
        }
        for p in 0..self.high_delay.len() {
            self.high_delay[p].clock.next = self.clock.val();
        }
        for p in 0..self.quotient_delay.len() {
            self.quotient_delay[p].clock.next = self.clock.val();
        }
        for p in 0..self.ab.len() {
            self.ab[p].clock.next = self.clock.val();
        }
        for p in 0..self.row_delay.len() {
            self.row_delay[p].clock.next = self.clock.val();
        }
        for j in 0..self.row0.len() {
            self.row0[j].clock.next = self.clock.val();
        }
        for j in 0..self.row1.len() {
            self.row1[j].clock.next = self.clock.val();
        }
        for j in 0..self.rows.len() {
            self.rows[j].clock.next = self.clock.val();
        }
        for j in 0..self.t_r.len() {
            self.t_r[j].clock.next = self.clock.val();
            self.base_t[j].clock.next = self.clock.val();
        }
        for j in 0..self.result_r.len() {
            self.result_r[j].clock.next = self.clock.val();
        }

        for j in 0..self.b_in.len() {
            self.b_r[j].clock.next = self.clock.val();
            self.b_r[j].d.next = self.b_in[j].val();
            self.b_windows.limbs[j].next = self.b_r[j].q.val();
        }

        // The lane at its load phase (ring position k + 2).
        self.lane_r.d.next = self.lane_r.q.val() + 1;
        if self.lane_r.q.val() == self.last_lane.val() {
            self.lane_r.d.next = 0.into();
        }
        self.lane.next = self.lane_r.q.val();

        // The ring's sizes as loop variables: rust-hdl indexes with loop variables only.
        for dn in (self.ring_busy.len())..(self.ring_busy.len() + 1) {
            for ln in (self.a_in.len())..(self.a_in.len() + 1) {
                for mn in (self.m_hat_in.len())..(self.m_hat_in.len() + 1) {
                    for kn in (self.digit_sum.len())..(self.digit_sum.len() + 1) {
                        for wn in (self.b_windows.windows.len())..(self.b_windows.windows.len() + 1) {
                            // Every lane moves down a position; from 0 (its turn) to the top, where
                            // it counts the turn.
                            for p in 1..self.ring_busy.len() {
                                for j in 0..self.a_in.len() {
                                    self.ring_a[(p - 1) * ln + j].d.next = self.ring_a[p * ln + j].q.val();
                                }
                                for w in 0..self.b_windows.windows.len() {
                                    self.ring_b[(p - 1) * wn + w].d.next = self.ring_b[p * wn + w].q.val();
                                }
                                for i in 0..self.m_hat_in.len() {
                                    self.ring_m_hat[(p - 1) * mn + i].d.next = self.ring_m_hat[p * mn + i].q.val();
                                }
                                for l in 0..self.digit_sum.len() {
                                    self.ring_digits[(p - 1) * kn + l].d.next = self.ring_digits[p * kn + l].q.val();
                                }
                                self.ring_carry[p - 1].d.next = self.ring_carry[p].q.val();
                                self.ring_borrow[p - 1].d.next = self.ring_borrow[p].q.val();
                                self.ring_count[p - 1].d.next = self.ring_count[p].q.val();
                                self.ring_busy[p - 1].d.next = self.ring_busy[p].q.val();
                                self.ring_classic[p - 1].d.next = self.ring_classic[p].q.val();
                                self.ring_redc[p - 1].d.next = self.ring_redc[p].q.val();
                                self.ring_decrement[p - 1].d.next = self.ring_decrement[p].q.val();
                                self.ring_n_prime[p - 1].d.next = self.ring_n_prime[p].q.val();
                            }
                            for j in 0..self.a_in.len() {
                                self.ring_a[(dn - 1) * ln + j].d.next = self.ring_a[j].q.val();
                            }
                            for w in 0..self.b_windows.windows.len() {
                                self.ring_b[(dn - 1) * wn + w].d.next = self.ring_b[w].q.val();
                            }
                            for i in 0..self.m_hat_in.len() {
                                self.ring_m_hat[(dn - 1) * mn + i].d.next = self.ring_m_hat[i].q.val();
                            }
                            for l in 0..self.digit_sum.len() {
                                self.ring_digits[(dn - 1) * kn + l].d.next = self.ring_digits[l].q.val();
                            }
                            self.ring_carry[dn - 1].d.next = self.ring_carry[0].q.val();
                            self.ring_borrow[dn - 1].d.next = self.ring_borrow[0].q.val();
                            self.ring_count[dn - 1].d.next = self.ring_count[0].q.val();
                            if self.ring_busy[0].q.val() {
                                self.ring_count[dn - 1].d.next = self.ring_count[0].q.val() + 1;
                            }
                            self.ring_busy[dn - 1].d.next = self.ring_busy[0].q.val();
                            self.ring_classic[dn - 1].d.next = self.ring_classic[0].q.val();
                            self.ring_redc[dn - 1].d.next = self.ring_redc[0].q.val();
                            self.ring_decrement[dn - 1].d.next = self.ring_decrement[0].q.val();
                            self.ring_n_prime[dn - 1].d.next = self.ring_n_prime[0].q.val();

                            // The load phase: the lane's result shows; it is done, or loads. Whether
                            // it loads was settled a cycle ahead, at position 0, where its turn
                            // count is one short: from `held_copies`, formed at position 1 a cycle
                            // before (position 1's lane is position 0's then).
                            self.next_before_last.next = self.fold_before_last.val();
                            if self.ring_classic[1].q.val() {
                                self.next_before_last.next = self.classic_before_last.val();
                            }
                            if self.ring_decrement[1].q.val() {
                                self.next_before_last.next = self.decremented_before_last.val();
                            }
                            self.held_copies.d.next =
                                self.ring_busy[1].q.val() & (self.ring_count[1].q.val() != self.next_before_last.val());
                            for s in 0..self.load_next.len() {
                                self.load_next[s].next = self.start_next.val() & !self.held_copies.q[s].val();
                            }
                            for h in (self.load_next.len())..(self.load_next.len() + 1) {
                                self.next_free.next = !self.held_copies.q[h].val();
                                self.done_next.next = self.ring_busy[0].q.val() & !self.held_copies.q[h].val();
                            }
                            self.ahead_before_last.next = self.fold_before_last.val();
                            if self.ring_classic[2].q.val() {
                                self.ahead_before_last.next = self.classic_before_last.val();
                            }
                            if self.ring_decrement[2].q.val() {
                                self.ahead_before_last.next = self.decremented_before_last.val();
                            }
                            self.free_ahead.next = !self.ring_busy[2].q.val()
                                | (self.ring_count[2].q.val() == self.ahead_before_last.val());
                            for sa in (self.load_a.d.len())..(self.load_a.d.len() + 1) {
                                for s in 0..self.load_a.d.len() {
                                    self.load_a.d[s].next = self.load_next[s].val();
                                }
                                for s in 0..self.load_m_hat.d.len() {
                                    self.load_m_hat.d[s].next = self.load_next[sa + s].val();
                                }
                            }
                            for sb in (self.load_next.len() - 1)..self.load_next.len() {
                                self.load_b1.d.next = self.load_next[sb].val();
                                self.load_state.d.next = self.load_next[sb].val();
                            }
                            for i in 0..self.load_b.d.len() {
                                self.load_b.d[i].next = self.load_b1.q[i].val();
                            }
                            self.lane_last.next = self.fold_last.val();
                            if self.ring_classic[dn - 1].q.val() {
                                self.lane_last.next = self.classic_last.val();
                            }
                            if self.ring_decrement[dn - 1].q.val() {
                                self.lane_last.next = self.decremented_last.val();
                            }
                            self.finished.next = self.ring_busy[dn - 1].q.val()
                                & (self.ring_count[dn - 1].q.val() == self.lane_last.val());
                            self.done.next = self.finished.val();
                            self.busy.next = self.ring_busy[dn - 1].q.val() & !self.finished.val();
                            if self.finished.val() {
                                self.ring_busy[dn - 2].d.next = false;
                            }
                            if self.load_state.q[0].val() {
                                self.ring_carry[dn - 2].d.next = false;
                                self.ring_borrow[dn - 2].d.next = self.classic_in.val() & self.decrement_in.val();
                                self.ring_count[dn - 2].d.next = 0.into();
                                self.ring_busy[dn - 2].d.next = true;
                                self.ring_classic[dn - 2].d.next = self.classic_in.val();
                                self.ring_redc[dn - 2].d.next = self.classic_in.val() & self.redc_in.val();
                                self.ring_decrement[dn - 2].d.next = self.classic_in.val() & self.decrement_in.val();
                                self.ring_n_prime[dn - 2].d.next = self.n_prime_in.val();
                            }
                            for g in (LIMBS_PER_COPY)..(LIMBS_PER_COPY + 1) {
                                for j in 0..self.a_in.len() {
                                    if self.load_a.q[j].val() {
                                        self.ring_a[(dn - 2) * ln + j].d.next = self.a_in[j].val();
                                    }
                                }
                                for w in 0..self.b_windows.windows.len() {
                                    if self.load_b.q[w / g].val() {
                                        self.ring_b[(dn - 3) * wn + w].d.next = self.b_windows.windows[w].val();
                                    }
                                }
                                for i in 0..self.m_hat_in.len() {
                                    if self.load_m_hat.q[i / g].val() {
                                        self.ring_m_hat[(dn - 2) * mn + i].d.next = self.m_hat_in[i].val();
                                    }
                                }
                            }

                            // The next step's digits, one a position (digit l from position k + 1 − l):
                            // digit_l = lo17(a_l + carry), with a borrow of 1 in place of the carry
                            // for a pass on A − 1 (digit 0 only: a classic lane takes one digit, and
                            // only before a products turn, where its count is even).
                            for l in 0..1 {
                                // −1 as all ones, beside the carry into the adder's chain.
                                self.borrow_mask.next = 0.into();
                                if self.ring_borrow[dn - 2 - l].q.val() {
                                    self.borrow_mask.next = self.all_ones.val();
                                }
                                self.digit_sum[l].next =
                                    self.ring_a[(dn - 2 - l) * ln + l].q.val().get_bits::<Y_BITS>(0)
                                        + self.borrow_mask.val()
                                        + self.ring_carry[dn - 2 - l].q.val();
                                self.resolved[l].next = 0.into();
                                if !self.ring_classic[dn - 2 - l].q.val()
                                    | !self.ring_count[dn - 2 - l].q.val().get_bit(0)
                                {
                                    self.resolved[l].next = self.digit_sum[l].val();
                                    self.ring_carry[dn - 3 - l].d.next = (self.ring_a[(dn - 2 - l) * ln + l]
                                        .q
                                        .val()
                                        .get_bit(17)
                                        & !(self.ring_borrow[dn - 2 - l].q.val()
                                            & !self.ring_a[(dn - 2 - l) * ln + l].q.val().get_bits::<Y_BITS>(0).any()))
                                        | ((self.ring_a[(dn - 2 - l) * ln + l].q.val().get_bits::<Y_BITS>(0)
                                            == self.all_ones.val())
                                            & self.ring_carry[dn - 2 - l].q.val());
                                    self.ring_borrow[dn - 3 - l].d.next = self.ring_borrow[dn - 2 - l].q.val()
                                        & !self.ring_a[(dn - 2 - l) * ln + l].q.val().any();
                                }
                            }
                            for l in 1..self.digit_sum.len() {
                                self.digit_sum[l].next =
                                    self.ring_a[(dn - 2 - l) * ln + l].q.val().get_bits::<Y_BITS>(0)
                                        + self.ring_carry[dn - 2 - l].q.val();
                                self.resolved[l].next = 0.into();
                                if !self.ring_classic[dn - 2 - l].q.val() {
                                    self.resolved[l].next = self.digit_sum[l].val();
                                    self.ring_carry[dn - 3 - l].d.next =
                                        self.ring_a[(dn - 2 - l) * ln + l].q.val().get_bit(17)
                                            | ((self.ring_a[(dn - 2 - l) * ln + l].q.val().get_bits::<Y_BITS>(0)
                                                == self.all_ones.val())
                                                & self.ring_carry[dn - 2 - l].q.val());
                                }
                            }
                            for l in 0..self.digit_sum.len() {
                                self.ring_digits[(dn - 3 - l) * kn + l].d.next = self.resolved[l].val();
                            }
                            // Then A moves down, by k limbs, by one, or not at all.
                            self.shift_by_k.d.next = !self.ring_classic[2].d.val();
                            self.shift_by_one.d.next =
                                self.ring_classic[2].d.val() & !self.ring_count[2].d.val().get_bit(0);
                            for g in (LIMBS_PER_COPY)..(LIMBS_PER_COPY + 1) {
                                for j in 0..self.a_in.len() {
                                    self.ring_a[ln + j].d.next = 0.into();
                                    if !self.shift_by_k.q[j / g].val() & !self.shift_by_one.q[j / g].val() {
                                        self.ring_a[ln + j].d.next = self.ring_a[2 * ln + j].q.val();
                                    }
                                }
                                for j in 0..(self.a_in.len() - 1) {
                                    if self.shift_by_one.q[j / g].val() {
                                        self.ring_a[ln + j].d.next = self.ring_a[2 * ln + j + 1].q.val();
                                    }
                                }
                                for j in 0..(self.a_in.len() - self.digit_sum.len()) {
                                    if self.shift_by_k.q[j / g].val() {
                                        self.ring_a[ln + j].d.next = self.ring_a[2 * ln + j + kn].q.val();
                                    }
                                }
                            }

                            // The a·b products of position 1's next step, registered at every stage.
                            // Position 2's digits: digit k − 1 as it is resolved, the others from
                            // the ring.
                            for l in 0..self.digit_sum.len() {
                                self.digit_copies.d[l].next = self.ring_digits[2 * kn + l].q.val();
                            }
                            for l in (self.digit_sum.len() - 1)..self.digit_sum.len() {
                                self.digit_copies.d[l].next = self.resolved[l].val();
                            }
                            self.sample_digit.next = self.ring_digits[2 * kn].q.val();
                            for l in (self.digit_sum.len() - 1)..1 {
                                self.sample_digit.next = self.resolved[l].val();
                            }
                            self.high.next = 0.into();
                            if self.ring_redc[2].q.val() {
                                self.digit_copies.d[0].next = 0.into();
                                if !self.ring_count[2].q.val().any() {
                                    self.digit_copies.d[0].next = 1.into();
                                }
                                self.high.next = self.sample_digit.val();
                            }
                            self.high_delay[0].d.next = self.high.val();
                            for d in 1..self.high_delay.len() {
                                self.high_delay[d].d.next = self.high_delay[d - 1].q.val();
                            }
                            self.sampled_busy.d.next = self.ring_busy[2].q.val();
                            for dc in (self.digit_copies.q.len() / self.digit_copies.d.len())
                                ..(self.digit_copies.q.len() / self.digit_copies.d.len() + 1)
                            {
                                for g in (DSPS_PER_COPY)..(DSPS_PER_COPY + 1) {
                                    for wc in (self.sampled_busy.q.len() / self.digit_sum.len())
                                        ..(self.sampled_busy.q.len() / self.digit_sum.len() + 1)
                                    {
                                        for l in 0..self.digit_sum.len() {
                                            for w in 0..self.b_windows.windows.len() {
                                                self.ab[l * wn + w].x.next = 0.into();
                                                if self.sampled_busy.q[l * wc + w / g].val() {
                                                    self.ab[l * wn + w].x.next = self.ring_b[wn + w].q.val();
                                                }
                                                self.ab[l * wn + w].y.next = self.digit_copies.q[l * dc + w / g].val();
                                                self.ab[l * wn + w].c.next = 0.into();
                                                self.addends.products[l * wn + w].next = self.ab[l * wn + w].p.val();
                                            }
                                        }
                                    }
                                }
                            }

                            // The classic quotient: lo17 of column 0's addend (t′_0 of the products
                            // turn) times N′, a turn later on row 0.
                            self.quotient.x.next = self.addends.addends[0].val().get_bits::<Y_BITS>(0);
                            self.quotient.y.next = self.ring_n_prime[dn - 1].q.val();
                            self.quotient_delay[0].d.next = self.quotient.p.val();
                            for d in 1..self.quotient_delay.len() {
                                self.quotient_delay[d].d.next = self.quotient_delay[d - 1].q.val();
                            }
                            self.quotient_turn.next = self.quotient_delay[kn - 1].q.val();

                            // The loop. Position 1's lane is next: what its rows multiply and its
                            // columns add.
                            self.first_next.next =
                                self.ring_busy[1].q.val() & (self.ring_count[1].q.val() == self.first_count.val());
                            self.zero_rows.d[0].next = self.first_next.val()
                                | (self.ring_classic[1].q.val() & self.ring_count[1].q.val().get_bit(0));
                            for l in 1..self.digit_sum.len() {
                                self.zero_rows.d[l].next = self.first_next.val() | self.ring_classic[1].q.val();
                            }
                            self.quotient_row.d.next =
                                self.ring_classic[1].q.val() & !self.ring_count[1].q.val().get_bit(0);
                            self.base_first.d.next =
                                self.ring_busy[2].q.val() & (self.ring_count[2].q.val() == self.first_count.val());
                            self.base_classic.d.next = self.ring_classic[2].q.val();
                            self.base_odd.d.next = self.ring_count[2].q.val().get_bit(0);
                            for s in 0..self.base_fold.d.len() {
                                self.base_fold.d[s].next = !self.base_first.q[s].val() & !self.base_classic.q[s].val();
                                self.base_down.d[s].next = !self.base_first.q[s].val()
                                    & self.base_classic.q[s].val()
                                    & self.base_odd.q[s].val();
                                self.base_same.d[s].next = !self.base_first.q[s].val()
                                    & self.base_classic.q[s].val()
                                    & !self.base_odd.q[s].val();
                            }
                            for cn in (self.t_r.len())..(self.t_r.len() + 1) {
                                for gn in (self.row_x.len() / self.digit_sum.len())
                                    ..(self.row_x.len() / self.digit_sum.len() + 1)
                                {
                                    for g in (DSPS_PER_COPY)..(DSPS_PER_COPY + 1) {
                                        for h in 0..(self.row_x.len() / self.digit_sum.len()) {
                                            self.row_x[h].next = self.t_low.q[h].val();
                                            if self.zero_rows.q[h].val() {
                                                self.row_x[h].next = 0.into();
                                            }
                                            if self.quotient_row.q[h].val() {
                                                self.row_x[h].next =
                                                    bit_cast::<T_BITS, Y_BITS>(self.quotient_turn.val());
                                            }
                                        }
                                        for l in 1..self.digit_sum.len() {
                                            for h in 0..(self.row_x.len() / self.digit_sum.len()) {
                                                self.row_x[l * gn + h].next = self.t_low.q[l * gn + h].val();
                                                if self.zero_rows.q[l * gn + h].val() {
                                                    self.row_x[l * gn + h].next = 0.into();
                                                }
                                            }
                                        }
                                        for l in 0..self.digit_sum.len() {
                                            for h in 0..(self.row_x.len() / self.digit_sum.len()) {
                                                self.row_delay[(l * kn) * gn + h].d.next = self.row_x[l * gn + h].val();
                                                for d in 1..self.digit_sum.len() {
                                                    self.row_delay[(l * kn + d) * gn + h].d.next =
                                                        self.row_delay[(l * kn + d - 1) * gn + h].q.val();
                                                }
                                            }
                                        }
                                        for j in 0..self.t_r.len() {
                                            self.row0[j].x.next = 0.into();
                                            self.row0[j].y.next = 0.into();
                                        }
                                        for j in 0..self.row1.len() {
                                            self.row1[j].x.next = 0.into();
                                            self.row1[j].y.next = 0.into();
                                        }
                                        for j in 0..self.rows.len() {
                                            self.rows[j].x.next = 0.into();
                                            self.rows[j].y.next = 0.into();
                                        }
                                        for i in 0..self.m_hat_in.len() {
                                            self.row0[i].x.next = self.row_x[i / g].val().get_bits::<17>(0);
                                            self.row0[i].y.next = self.ring_m_hat[i].q.val();
                                        }
                                        for i in 0..(self.row1.len().min(self.m_hat_in.len())) {
                                            self.row1[1 + i].x.next =
                                                self.row_delay[kn * gn + i / g].q.val().get_bits::<18>(0);
                                            self.row1[1 + i].y.next = self.ring_m_hat[(dn - 1) * mn + i].q.val();
                                        }
                                        for l in 2..self.digit_sum.len() {
                                            for i in 0..self.m_hat_in.len() {
                                                self.rows[(l - 2) * cn + l + i].x.next =
                                                    self.row_delay[(l * kn + l - 1) * gn + i / g].q.val();
                                                self.rows[(l - 2) * cn + l + i].y.next =
                                                    self.ring_m_hat[(dn - l) * mn + i].q.val();
                                            }
                                        }
                                    }
                                }
                                // Column j's base: register j + k, j + 1 or j, or 0; column L also
                                // takes a wide REDC's digit of C_hi.
                                for g in (LIMBS_PER_COPY)..(LIMBS_PER_COPY + 1) {
                                    for j in 0..self.t_r.len() {
                                        self.base_t[j].d.next = 0.into();
                                        if self.base_same.q[j / g].val() {
                                            self.base_t[j].d.next = self.t_r[j].q.val();
                                        }
                                    }
                                    for j in 0..(self.t_r.len() - 1) {
                                        if self.base_down.q[j / g].val() {
                                            self.base_t[j].d.next = self.t_r[j + 1].q.val();
                                        }
                                    }
                                    for j in 0..(self.t_r.len() - self.digit_sum.len()) {
                                        if self.base_fold.q[j / g].val() {
                                            self.base_t[j].d.next = self.t_r[j + kn].q.val();
                                        }
                                    }
                                    for j in (self.a_in.len())..(self.a_in.len() + 1) {
                                        self.base_high.next = 0.into();
                                        if self.base_same.q[j / g].val() {
                                            self.base_high.next = self.t_r[j].q.val();
                                        }
                                    }
                                    for j in (self.a_in.len())..((self.a_in.len() + 1).min(self.t_r.len() - 1)) {
                                        if self.base_down.q[j / g].val() {
                                            self.base_high.next = self.t_r[j + 1].q.val();
                                        }
                                    }
                                    for j in (self.a_in.len())
                                        ..((self.a_in.len() + 1).min(self.t_r.len() - self.digit_sum.len()))
                                    {
                                        if self.base_fold.q[j / g].val() {
                                            self.base_high.next = self.t_r[j + kn].q.val();
                                        }
                                    }
                                    self.high_turn.next = self.high_delay[dn + 1].q.val();
                                    for j in (self.a_in.len())..(self.a_in.len() + 1) {
                                        self.base_t[j].d.next =
                                            self.base_high.val() + bit_cast::<T_BITS, Y_BITS>(self.high_turn.val());
                                    }
                                }
                                // Column j's cascade: row 0 adds the addend, each row below adds
                                // the row above; the last row's sums are redistributed.
                                for j in 0..self.t_r.len() {
                                    self.addends.base[j].next = self.base_t[j].q.val();
                                    self.row0[j].c.next = self.addends.addends[j].val();
                                    self.redistribute.sums[j].next = self.row0[j].p.val();
                                }
                                for j in 0..self.row1.len() {
                                    self.row1[j].c.next = self.row0[j].p.val();
                                    self.redistribute.sums[j].next = self.row1[j].p.val();
                                }
                                for j in 0..(self.rows.len().min(self.t_r.len())) {
                                    self.rows[j].c.next = self.row1[j].p.val();
                                }
                                for j in (self.t_r.len())..self.rows.len() {
                                    self.rows[j].c.next = self.rows[j - cn].p.val();
                                }
                                for rn in (self.rows.len())..(self.rows.len() + 1) {
                                    for j in 0..(self.rows.len().min(self.t_r.len())) {
                                        self.redistribute.sums[j].next = self.rows[rn - cn + j].p.val();
                                    }
                                }
                                for j in 0..self.t_r.len() {
                                    self.t_r[j].d.next = self.redistribute.t_next[j].val();
                                    self.t[j].next = self.t_r[j].q.val();
                                }
                                for l in 0..self.digit_sum.len() {
                                    self.t_low.d[l].next = self.redistribute.t_next[l].val();
                                }
                            }
                        }
                    }
                }
            }
        }

        // The result, normalized and registered for the load phase.
        for j in 0..self.result_r.len() {
            self.normalize.t[j].next = self.t_r[j].q.val();
            self.result_r[j].d.next = self.normalize.result[j].val();
            self.result[j].next = self.result_r[j].q.val();
        }
    }
}

#[cfg(test)]
mod tests;
