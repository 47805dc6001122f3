//! The delayed-quotient multiplier: the folding multiplication with its quotient delayed by d
//! steps (`ecrt_golden::hw::DelayedFoldContext`, limb for limb), on a loop of two cycles that holds
//! no DSP. Two independent multiplications, its **lanes** (a decryption's two primes), take turns:
//! the lane whose turn it is at cycle c is c mod 2.
//!
//! A lane's step i, at its turn τ (the register `t` holds its T_i):
//! - stage A, τ: s_j = y_j + t_(j+k), y the step's products redistributed (below), T taken as 0 in
//!   the first step;
//! - stage B, τ + 1: t_j = lo17(s_j) + (s_(j−1) >> 17), so `t` holds T_(i+1) at τ + 2.
//!
//! The products of step i do not depend on T_i: the a·b products of A's digits i, and those of
//! the quotient Q_(i−d) and H. A quotient is T's k low limbs as stage A sums them (unnormalized,
//! < 2^19; stage B then passes no carry into limb k), summed again by a copy of stage A's adder
//! per row and group of DSPs into a register of its own, then through l more registers for row
//! l, the DSPs' M and P registers (and their A register for even k: for odd k they multiply the
//! register in front of them as it comes) and column j's cascade of k DSPs ((0, j), (1, j − 1),
//! …), whose head adds the column's a·b pieces ([`ColumnAddends`]); the last row's sums are
//! redistributed into `y` (< 2^18 + 2^7). That is k + 1 cycles after stage A for odd k, k + 2 for
//! even k, 2·d with d = ⌈(k + 1)/2⌉ or ⌈(k + 2)/2⌉ ([`DelayTiming`]).
//! A's exact digits are resolved k
//! a turn, ahead of their step by the quotient's path less the a·b products' (their copy, the
//! DSPs' M and P registers, `levels` of adder trees): each its limb plus the carry into it at the
//! lane's turn, from the normalized limbs' bit 17 and a propagate flag per limb (all 17 low bits
//! set) formed at the load, into a copy that the a·b DSPs multiply as it comes
//! ([`DigitWindowMul`]).
//!
//! A lane loads its operands at a turn (announced a cycle ahead, [`DelayMul::start_next`]), spends
//! `lead` turns before its first step (its digits' products on their way), n steps with A's
//! digits, d drain steps whose low limbs it keeps, and shows its result at the next turn:
//! 2·(lead + n + d + 1) cycles from its load ([`DelayTiming::cycles`]); it may load again then.
//! Per-lane operands sit in two places that swap every cycle (A, its flags, the kept limbs, the
//! count: position 0 is the lane whose turn it is) or in a bank per lane read through a
//! multiplexer whose select toggles every cycle, a copy per row and group of DSPs (B's windows, H),
//! so that no two DSP ports share an input register and every select is its own flip-flop.
//!
//! A lane may run a classic pass instead (`ecrt_golden::hw::ClassicPass::delayed_trace`, turn for
//! turn): one digit a step, whose exact quotient q = lo17(t_0·N′) needs T's low limb after the
//! step's products. A step is d + 4 turns ([`DelayTiming::period`]): the **products turn** adds
//! d·B (row 0's a·b digit; the other rows' products are off) to T shifted down a limb; stage A's
//! sum s_0 is T mod 2^17, and two cycles later a DSP of its own has q (its pre-adder forms s_0
//! again from stage A's operands, [`PreAddQuotientMul`], so no carry chain feeds a DSP port), which
//! row 0's copy of stage A's adder takes in place of y_0 at the lane's turn after next (H's bank
//! holds N's limbs, the other rows take 0), so q·N lands 2·d + 2 cycles later, at the **quotient
//! turn**, which adds it to T unshifted (limb 0 becomes 0); the d + 2 turns between hold T (shift 0, no
//! products). Stage A's addend is thus T's limbs from k, 1 or 0 up, or none (a first step), one
//! select of four before its carry chain. After the last step a products turn with the digit 0
//! brings T down a limb, and d drain turns, as the folding mode's, keep its low limbs:
//! 2·(lead + D·(d + 3) + d + 2) cycles for D digits ([`DelayTiming::classic_cycles`]). A's digits
//! are resolved one a step, with a borrow for a pass on A − 1; a wide REDC's digits of C_hi join
//! column L with the step's products, while row 0 multiplies B by 1 in the first step and by 0
//! after it.
//!
//! The delay engine's multiplier: `crate::exponentiation::lane_exp::DelayExp` runs a decryption's
//! two paths in its lanes.

use crate::fanout::replicas::{ReplicaSets, Replicas};
use crate::fanout::toggles::Toggles;
use crate::fanout::{copies, in_sets, sets, LIMBS_PER_COPY};
use crate::many;
use crate::multiplier::b_windows::BWindows;
use crate::multiplier::column_addends::{BaseLevel, ColumnAddends};
use crate::multiplier::deep_mul::{DSPS_PER_COPY, LANE_BITS};
use crate::multiplier::digit_window_mul::DigitWindowMul;
use crate::multiplier::mul_add::{CascadeMulAdd, T_BITS, WINDOW_BITS, X_BITS, Y_BITS};
use crate::multiplier::pre_add_mul::PreAddQuotientMul;
use crate::multiplier::quotient_sum::QuotientSum;
use crate::multiplier::redistribute::Redistribute;
pub use ecrt_golden::hw::DelayTiming;
use ecrt_golden::hw::{wide, ClassicOp, DelayedShape};
use rust_hdl::prelude::*;

/// Bits of a lane's turn count (a classic pass of 4096-bit moduli at k = 8 takes 2,776 turns).
const COUNT_BITS: usize = 12;

/// Bits of a classic lane's turn within its step (d + 3 ≤ 13 turns).
const PHASE_BITS: usize = 4;

/// The delayed-quotient multiplier of a [`DelayedShape`] whose delay is [`DelayTiming`]'s.
#[derive(LogicBlock)]
pub struct DelayMul {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The lane whose turn it is: `done`, `busy` and `result` are its, and a load is its.
    pub lane: Signal<Out, Bits<LANE_BITS>>,
    /// The lane whose turn is next may load then: it is idle, or its result shows then.
    pub next_free: Signal<Out, bool>,
    /// The lane whose turn is three cycles from now (the next turn's) will be idle or finishing
    /// then, unless it loads at its next turn (what `next_free` will say of it two cycles from
    /// now), for a user that prepares a load that far ahead.
    pub free_ahead: Signal<Out, bool>,
    /// Load the lane whose turn is next in the next cycle, with the operands given then (ignored
    /// unless `next_free`).
    pub start_next: Signal<In, bool>,
    /// The multiplier A, normalized limbs (< 2^17 + 3; value < X).
    pub a_in: Vec<Signal<In, Bits<X_BITS>>>,
    /// The multiplicand B, normalized limbs (value < X).
    pub b_in: Vec<Signal<In, Bits<X_BITS>>>,
    /// M̂ of the delayed fold, H = 2^(−17k(d+1)) mod N of the lane's modulus, exact limbs; N's limbs
    /// for a classic pass.
    pub m_hat_in: Vec<Signal<In, Bits<Y_BITS>>>,
    /// A classic pass: A·B·R^(−1) mod N over S = k·(n − 1) digits, below 2N.
    pub classic_in: Signal<In, bool>,
    /// With `classic_in`: a wide REDC of C = C_hi·2^(17L) + C_lo (A = C_hi, B = C_lo).
    pub redc_in: Signal<In, bool>,
    /// With `classic_in`: (A − 1)·B over N's limbs (the exact division's pass, A ≥ 1).
    pub decrement_in: Signal<In, bool>,
    /// With `classic_in`: −N^(−1) mod 2^17.
    pub n_prime_in: Signal<In, Bits<Y_BITS>>,
    /// `lane` finished: `result` is its product, in this cycle only.
    pub done: Signal<Out, bool>,
    /// The lane whose turn is next finishes then (what `done` will say).
    pub done_next: Signal<Out, bool>,
    /// `lane` is multiplying (and not done).
    pub busy: Signal<Out, bool>,
    /// A·B·R^(−1) mod N, below X: the drain's kept limbs, then T's (normalized, < 2^17 + 3).
    pub result: Vec<Signal<Out, Bits<X_BITS>>>,
    /// T's limbs, of the lane whose turn it is (for tests).
    pub t: Vec<Signal<Out, Bits<X_BITS>>>,
    // Sizes and the turn counts at which a lane's phases begin and end, constants of the shape.
    steps: Constant<Bits<COUNT_BITS>>,
    first_step: Constant<Bits<COUNT_BITS>>,
    last_take: Constant<Bits<COUNT_BITS>>,
    first_kept: Constant<Bits<COUNT_BITS>>,
    last_kept: Constant<Bits<COUNT_BITS>>,
    finish: Constant<Bits<COUNT_BITS>>,
    before_finish: Constant<Bits<COUNT_BITS>>,
    two_before_finish: Constant<Bits<COUNT_BITS>>,
    all_ones: Constant<Bits<Y_BITS>>,
    low_bits: Constant<Bits<T_BITS>>,
    // A classic pass's: the last turn of a step, the turns of its products and of its quotient's
    // take, and per kind (a pass over S digits, or over N's limbs) the end of its digits, its
    // last products turn and its finish.
    period_last: Constant<Bits<PHASE_BITS>>,
    products_phase: Constant<Bits<PHASE_BITS>>,
    quotient_phase: Constant<Bits<PHASE_BITS>>,
    classic_digits_end: Constant<Bits<COUNT_BITS>>,
    classic_products_end: Constant<Bits<COUNT_BITS>>,
    classic_finish: Constant<Bits<COUNT_BITS>>,
    classic_before_finish: Constant<Bits<COUNT_BITS>>,
    classic_two_before_finish: Constant<Bits<COUNT_BITS>>,
    decremented_digits_end: Constant<Bits<COUNT_BITS>>,
    decremented_products_end: Constant<Bits<COUNT_BITS>>,
    decremented_finish: Constant<Bits<COUNT_BITS>>,
    decremented_before_finish: Constant<Bits<COUNT_BITS>>,
    decremented_two_before_finish: Constant<Bits<COUNT_BITS>>,
    // The lane whose turn it is, and a copy per row (of both kinds of DSPs) and group of
    // LIMBS_PER_COPY limbs or windows of the selects into the banks: index l·C + c.
    phase: Toggles,
    h_select: Toggles,
    b_select: Toggles,
    // Per lane, position 0 (the lane whose turn it is) and 1: A's limbs not yet consumed (index
    // p·L + j), their propagate flags, the carry into the next digit, turns since the load,
    // whether it is busy, the drain's kept limbs (index p·dk + e); a classic lane's kind, the
    // borrow into its next digit (a pass on A − 1), N′, its turn within the step.
    ring_a: Vec<DFF<Bits<X_BITS>>>,
    ring_propagate: Vec<DFF<bool>>,
    ring_carry: Vec<DFF<bool>>,
    ring_count: Vec<DFF<Bits<COUNT_BITS>>>,
    ring_busy: Vec<DFF<bool>>,
    ring_kept: Vec<DFF<Bits<X_BITS>>>,
    ring_classic: Vec<DFF<bool>>,
    ring_redc: Vec<DFF<bool>>,
    ring_decrement: Vec<DFF<bool>>,
    ring_borrow: Vec<DFF<bool>>,
    ring_n_prime: Vec<DFF<Bits<Y_BITS>>>,
    ring_phase: Vec<DFF<Bits<PHASE_BITS>>>,
    // The next turn's lane (position 1) and what its turn does, a cycle ahead: a classic lane's
    // ends for its kind, and which of its turns it is.
    digits_end: Signal<Local, Bits<COUNT_BITS>>,
    products_end: Signal<Local, Bits<COUNT_BITS>>,
    lane_finish: Signal<Local, Bits<COUNT_BITS>>,
    // Position 1's count against its kind's finish and the turn before it, compared a cycle
    // ahead at position 0 (its count then one less), so that `free_ahead` starts from registers.
    ahead_before_finish: Signal<Local, Bits<COUNT_BITS>>,
    ahead_two_before_finish: Signal<Local, Bits<COUNT_BITS>>,
    at_finish: DFF<bool>,
    at_before_finish: DFF<bool>,
    // Position 1's turn, busy or not: its first step, a classic lane's steps, its products turns;
    // and a classic lane's steps while busy.
    first_turn: Signal<Local, bool>,
    classic_steps: Signal<Local, bool>,
    products_turn: Signal<Local, bool>,
    classic_steps_next: Signal<Local, bool>,
    finishing: Signal<Local, bool>,
    // Copies of position 1's busy flag, one per set of `load_a`, `near` and `hold` (and one for
    // the rest of the loads), so that each set's decision is logic of its own: one drove 71
    // loads.
    busy_copies: Replicas<bool>,
    load: Vec<Signal<Local, bool>>,
    // Loads: of A (a copy per LIMBS_PER_COPY limbs, in sets of at most MAX_REGISTER_FANOUT), of the
    // lane's state (one, then a source per set of `load_propagate`), of a lane's bank of H (a copy
    // per LIMBS_PER_COPY limbs, then a source per set of `load_b*`), these three on a set of their
    // own; a cycle later, of A's propagate flags and a lane's windows of B (sets of at most
    // MAX_REGISTER_FANOUT copies, a copy per LIMBS_PER_COPY limbs or windows).
    load_a: ReplicaSets<bool>,
    load_state: Replicas<bool>,
    load_h0: Replicas<bool>,
    load_h1: Replicas<bool>,
    load_propagate: ReplicaSets<bool>,
    load_b0: ReplicaSets<bool>,
    load_b1: ReplicaSets<bool>,
    // The turn's phases: consumes digits (a source per set of `consume_late` and `consume_one`,
    // then one for `ab_source` and one for the carry), stage A's select of T's limbs from k up
    // (neither), 1 up (`near`), 0 up (`hold`) or none (both), per LIMBS_PER_COPY columns and one
    // for the classic quotient's own copy of column 0's select (`quotient_v`), in sets of at most
    // MAX_REGISTER_FANOUT; takes a
    // folding quotient (per row and group of DSPs, and whether T's limbs join it: not in a first
    // step) or a classic one (per group), keeps its low
    // limbs (per LIMBS_PER_COPY kept limbs), finishes.
    consume: Replicas<bool>,
    near: ReplicaSets<bool>,
    hold: ReplicaSets<bool>,
    take: Replicas<bool>,
    take_t: Replicas<bool>,
    quotient_take: Replicas<bool>,
    keep: Replicas<bool>,
    done_r: DFF<bool>,
    // The carries into position 0's digits, each its limb plus its carry, resolved in the same
    // cycle (then A moves down k limbs, or one for a classic lane, as its lane leaves position 1).
    // A classic lane's digit 0: its carry out (not past a borrow), and whether it is a wide
    // REDC's first step (row 0 multiplies by 1 in it, by 0 after it), registered from position 1.
    carries: Vec<Signal<Local, bool>>,
    classic_carry: Signal<Local, bool>,
    first_redc: DFF<bool>,
    consume_late: ReplicaSets<bool>,
    consume_one: ReplicaSets<bool>,
    digit_base: Signal<Local, Bits<Y_BITS>>,
    digit_addend: Signal<Local, Bits<Y_BITS>>,
    digits: Vec<Signal<Local, Bits<Y_BITS>>>,
    // A wide REDC's digit of C_hi, taken a cycle after its step's digits, on its way into column
    // L's tree with the step's a·b pieces (the DSPs' M and P registers, as many as theirs).
    high_digit: Signal<Local, Bits<Y_BITS>>,
    high_delay: Vec<DFF<Bits<T_BITS>>>,
    // The a·b DSPs' digits (a copy per row and DSPS_PER_COPY windows), and whether their lane
    // consumed none (a copy per row and LIMBS_PER_COPY windows, in sets of at most
    // MAX_REGISTER_FANOUT, each set loaded from a source of its own): an idle step's products are
    // cleared in the DSPs' P registers.
    digit_copies: ReplicaSets<Bits<Y_BITS>>,
    ab_source: Replicas<bool>,
    ab_off: ReplicaSets<bool>,
    // B registered at the load, its windows, and a bank per lane (index lane·W + w).
    b_r: Vec<DFF<Bits<X_BITS>>>,
    b_windows: BWindows,
    b_bank: Vec<DFF<Bits<WINDOW_BITS>>>,
    // H, a bank per lane (index lane·M + i).
    h_bank: Vec<DFF<Bits<Y_BITS>>>,
    // a·b product (l, w) at index l·W + w; each column's pieces.
    ab: Vec<DigitWindowMul>,
    addends: ColumnAddends,
    // Row l's quotient limb per group of DSPs (index l·G + g): stage A's sum s_l again, from y_l
    // (row 0 of a classic lane: its quotient) and t_(l+k) (none in a first step), or 0; then
    // through l more registers (index (l·k + r − 1)·G + g for the r-th), the stages named by
    // `row_in` (index (l·(k + 1) + r)·G + g, the sum's register at r = 0).
    quotient_sums: Vec<QuotientSum>,
    row_delay: Vec<DFF<Bits<T_BITS>>>,
    row_in: Vec<Signal<Local, Bits<T_BITS>>>,
    // Row l's stage of column j at index l·C + j (its DSP at H's limb j − l, a plain register
    // where H has none).
    rows: Vec<CascadeMulAdd<T_BITS, 36>>,
    redistribute: Redistribute,
    // The classic quotient from stage A's s_0 (T mod 2^17 after a products turn) and N′, and its
    // copy of stage A's addend to column 0: with its own selects, so that column 0's adder keeps
    // its select in the LUT of its sum bits (a select shared with the DSP is a LUT level more).
    quotient: PreAddQuotientMul,
    quotient_v: Signal<Local, Bits<T_BITS>>,
    // y, stage A's addend of T's limbs and sums (< 2^19), and T, as wide as T's limbs in the
    // deep loop (T_BITS).
    y_r: Vec<DFF<Bits<T_BITS>>>,
    t_shifted: Vec<Signal<Local, Bits<T_BITS>>>,
    s_r: Vec<DFF<Bits<T_BITS>>>,
    t_r: Vec<DFF<Bits<T_BITS>>>,
    // Whether the lane in stage B took its next quotient from stage A's sums: T's limb k then
    // takes no carry.
    split: DFF<bool>,
}

impl DelayMul {
    /// Its lanes: two.
    pub fn lanes(_shape: &DelayedShape) -> usize {
        2
    }

    /// The multiplier for `shape`, whose quotient delay must be [`DelayTiming`]'s for its k.
    pub fn new(shape: &DelayedShape) -> Self {
        let DelayedShape { limbs_per_step: k, quotient_delay: d, steps, operand_limbs, modulus_limbs, columns } =
            *shape;
        let timing = DelayTiming::new(k);
        assert_eq!(d, timing.quotient_delay, "the shape's quotient delay is not the pipeline's");
        assert!(
            timing.classic_cycles(shape, ClassicOp::Multiply) < 1 << (COUNT_BITS + 1)
                && timing.period() <= 1 << PHASE_BITS,
            "shape too large"
        );
        let windows = wide::window_count(operand_limbs);
        let groups = modulus_limbs.div_ceil(DSPS_PER_COPY);
        let load_sets = sets(copies(operand_limbs)) + 1;
        let at = |count: usize| Constant::new((count as u64).into());
        let phase = |turn: usize| Constant::new(((turn % timing.period()) as u64).into());
        let lead = timing.lead;
        let (classic_end, decremented_end) = (
            timing.classic_products_end(shape, ClassicOp::Multiply),
            timing.classic_products_end(shape, ClassicOp::Decremented),
        );
        DelayMul {
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
            steps: at(steps),
            first_step: at(lead),
            last_take: at(lead + steps - 2),
            first_kept: at(lead + steps),
            last_kept: at(lead + steps + d - 1),
            finish: at(lead + steps + d),
            before_finish: at(lead + steps + d - 1),
            two_before_finish: at(lead + steps + d - 2),
            all_ones: Constant::new(((1u64 << Y_BITS) - 1).into()),
            low_bits: Constant::new(((1u64 << Y_BITS) - 1).into()),
            period_last: phase(timing.period() - 1),
            products_phase: phase(lead),
            quotient_phase: phase(lead + 2),
            classic_digits_end: at(classic_end - lead),
            classic_products_end: at(classic_end),
            classic_finish: at(classic_end + d + 1),
            classic_before_finish: at(classic_end + d),
            classic_two_before_finish: at(classic_end + d - 1),
            decremented_digits_end: at(decremented_end - lead),
            decremented_products_end: at(decremented_end),
            decremented_finish: at(decremented_end + d + 1),
            decremented_before_finish: at(decremented_end + d),
            decremented_two_before_finish: at(decremented_end + d - 1),
            phase: Toggles::new(1),
            h_select: Toggles::new(k * copies(modulus_limbs)),
            b_select: Toggles::new(k * copies(windows)),
            ring_a: many(2 * operand_limbs),
            ring_propagate: many(2 * operand_limbs),
            ring_carry: many(2),
            ring_count: many(2),
            ring_busy: many(2),
            ring_kept: many(2 * d * k),
            ring_classic: many(2),
            ring_redc: many(2),
            ring_decrement: many(2),
            ring_borrow: many(2),
            ring_n_prime: many(2),
            ring_phase: many(2),
            digits_end: Default::default(),
            products_end: Default::default(),
            lane_finish: Default::default(),
            ahead_before_finish: Default::default(),
            ahead_two_before_finish: Default::default(),
            at_finish: Default::default(),
            at_before_finish: Default::default(),
            first_turn: Default::default(),
            classic_steps: Default::default(),
            products_turn: Default::default(),
            classic_steps_next: Default::default(),
            finishing: Default::default(),
            busy_copies: Replicas::new(load_sets.max(sets(copies(columns) + 1))),
            load: many(load_sets),
            load_a: in_sets(copies(operand_limbs), 1),
            load_state: Replicas::new(1 + sets(copies(operand_limbs))),
            load_h0: Replicas::new(copies(modulus_limbs) + sets(copies(windows))),
            load_h1: Replicas::new(copies(modulus_limbs) + sets(copies(windows))),
            load_propagate: in_sets(copies(operand_limbs), 1),
            load_b0: in_sets(copies(windows), 1),
            load_b1: in_sets(copies(windows), 1),
            consume: Replicas::new(sets(copies(operand_limbs)) + 2),
            near: in_sets(copies(columns) + 1, 1),
            hold: in_sets(copies(columns) + 1, 1),
            take: Replicas::new(k * groups),
            take_t: Replicas::new(k * groups),
            quotient_take: Replicas::new(groups),
            keep: Replicas::new(copies(d * k)),
            done_r: Default::default(),
            carries: many(k + 1),
            classic_carry: Default::default(),
            first_redc: Default::default(),
            consume_late: in_sets(copies(operand_limbs), 1),
            consume_one: in_sets(copies(operand_limbs), 1),
            digit_base: Default::default(),
            digit_addend: Default::default(),
            digits: many(k),
            high_digit: Default::default(),
            high_delay: many(2),
            digit_copies: ReplicaSets::new(k, windows.div_ceil(DSPS_PER_COPY)),
            ab_source: Replicas::new(k * sets(copies(windows))),
            ab_off: in_sets(copies(windows), k),
            b_r: many(operand_limbs),
            b_windows: BWindows::new(operand_limbs),
            b_bank: many(2 * windows),
            h_bank: many(2 * modulus_limbs),
            ab: many(k * windows),
            addends: ColumnAddends::new(k, windows, columns, timing.levels, BaseLevel::WithPieces),
            quotient_sums: many(k * groups),
            row_delay: many(k * k * groups),
            row_in: many(k * (k + 1) * groups),
            rows: (0..k * columns).map(|_| CascadeMulAdd::with_a_register(timing.a_register)).collect(),
            redistribute: Redistribute::new(columns),
            quotient: Default::default(),
            quotient_v: Default::default(),
            y_r: many(columns),
            t_shifted: many(columns),
            s_r: many(columns),
            t_r: many(columns),
            split: Default::default(),
        }
    }
}

impl Logic for DelayMul {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, done_r, first_redc, at_finish, at_before_finish, split);
        clock!(
            self,
            clock,
            phase,
            h_select,
            b_select,
            busy_copies,
            load_a,
            load_state,
            load_h0,
            load_h1,
            load_propagate,
            load_b0,
            load_b1,
            consume,
            consume_late,
            consume_one,
            ab_source,
            near,
            hold,
            take,
            take_t,
            quotient_take,
            keep,
            digit_copies,
            ab_off,
            addends,
            quotient
        );
        for p in 0..self.ring_a.len() {
            self.ring_a[p].clock.next = self.clock.val();
            self.ring_propagate[p].clock.next = self.clock.val();
        }
        for p in 0..2 {
            self.ring_carry[p].clock.next = self.clock.val();
            self.ring_count[p].clock.next = self.clock.val();
            self.ring_busy[p].clock.next = self.clock.val();
            self.ring_classic[p].clock.next = self.clock.val();
            self.ring_redc[p].clock.next = self.clock.val();
            self.ring_decrement[p].clock.next = self.clock.val();
            self.ring_borrow[p].clock.next = self.clock.val();
            self.ring_n_prime[p].clock.next = self.clock.val();
            self.ring_phase[p].clock.next = self.clock.val();
        }
        for p in 0..self.high_delay.len() {
            self.high_delay[p].clock.next = self.clock.val();
        }
        for p in 0..self.ring_kept.len() {
            self.ring_kept[p].clock.next = self.clock.val();
        }
        for j in 0..self.b_r.len() {
            self.b_r[j].clock.next = self.clock.val();
        }
        for p in 0..self.b_bank.len() {
            self.b_bank[p].clock.next = self.clock.val();
        }
        for p in 0..self.h_bank.len() {
            self.h_bank[p].clock.next = self.clock.val();
        }
        for p in 0..self.ab.len() {
            self.ab[p].clock.next = self.clock.val();
        }
        for p in 0..self.row_delay.len() {
            self.row_delay[p].clock.next = self.clock.val();
        }
        for p in 0..self.quotient_sums.len() {
            self.quotient_sums[p].clock.next = self.clock.val();
        }
        for p in 0..self.rows.len() {
            self.rows[p].clock.next = self.clock.val();
        }
        for j in 0..self.t_r.len() {
            self.y_r[j].clock.next = self.clock.val();
            self.s_r[j].clock.next = self.clock.val();
            self.t_r[j].clock.next = self.clock.val();
        }

        self.lane.next = 0.into();
        if self.phase.q[0].val() {
            self.lane.next = 1.into();
        }

        // The sizes as loop variables: rust-hdl indexes with loop variables only.
        for ln in (self.a_in.len())..(self.a_in.len() + 1) {
            for mn in (self.m_hat_in.len())..(self.m_hat_in.len() + 1) {
                for kn in (self.digits.len())..(self.digits.len() + 1) {
                    for wn in (self.b_windows.windows.len())..(self.b_windows.windows.len() + 1) {
                        for cn in (self.t_r.len())..(self.t_r.len() + 1) {
                            for en in (self.ring_kept.len() / 2)..(self.ring_kept.len() / 2 + 1) {
                                for g in (LIMBS_PER_COPY)..(LIMBS_PER_COPY + 1) {
                                    for gd in (DSPS_PER_COPY)..(DSPS_PER_COPY + 1) {
                                        // Position 1, the next turn's lane: what that turn does.
                                        self.digits_end.next = self.classic_digits_end.val();
                                        self.products_end.next = self.classic_products_end.val();
                                        self.lane_finish.next = self.finish.val();
                                        if self.ring_classic[1].q.val() {
                                            self.lane_finish.next = self.classic_finish.val();
                                        }
                                        if self.ring_decrement[1].q.val() {
                                            self.digits_end.next = self.decremented_digits_end.val();
                                            self.products_end.next = self.decremented_products_end.val();
                                            self.lane_finish.next = self.decremented_finish.val();
                                        }
                                        self.finishing.next = self.ring_busy[1].q.val() & self.at_finish.q.val();
                                        self.done_next.next = self.finishing.val();
                                        self.next_free.next = !self.ring_busy[1].q.val() | self.finishing.val();
                                        self.free_ahead.next = !self.start_next.val()
                                            & (!self.ring_busy[1].q.val()
                                                | self.finishing.val()
                                                | self.at_before_finish.q.val());
                                        // The load, per set: start_next and next_free, on the set's
                                        // copy of position 1's busy flag.
                                        for s in 0..self.load.len() {
                                            self.load[s].next = self.start_next.val()
                                                & (!self.busy_copies.q[s].val() | self.at_finish.q.val());
                                        }
                                        for s in 0..self.load_a.d.len() {
                                            self.load_a.d[s].next = self.load[s].val();
                                        }
                                        for ls in (self.load.len() - 1)..self.load.len() {
                                            self.load_state.d.next = self.load[ls].val();
                                            // Position 1's lane is the one whose turn it is not.
                                            self.load_h0.d.next = self.load[ls].val() & self.phase.q[0].val();
                                            self.load_h1.d.next = self.load[ls].val() & !self.phase.q[0].val();
                                        }
                                        for i in 0..self.load_propagate.d.len() {
                                            self.load_propagate.d[i].next = self.load_state.q[1 + i].val();
                                        }
                                        for hn in (self.load_h0.q.len() - self.load_b0.d.len())
                                            ..(self.load_h0.q.len() - self.load_b0.d.len() + 1)
                                        {
                                            for i in 0..self.load_b0.d.len() {
                                                self.load_b0.d[i].next = self.load_h0.q[hn + i].val();
                                                self.load_b1.d[i].next = self.load_h1.q[hn + i].val();
                                            }
                                        }
                                        self.done_r.d.next = self.finishing.val();
                                        // A classic lane's turns between its first products turn and its
                                        // last: products turns, or turns that hold T.
                                        self.first_turn.next = self.ring_count[1].q.val() == self.first_step.val();
                                        self.classic_steps.next = self.ring_classic[1].q.val()
                                            & (self.ring_count[1].q.val() > self.first_step.val())
                                            & (self.ring_count[1].q.val() <= self.products_end.val());
                                        self.products_turn.next = self.classic_steps.val()
                                            & (self.ring_phase[1].q.val() == self.products_phase.val());
                                        self.classic_steps_next.next =
                                            self.ring_busy[1].q.val() & self.classic_steps.val();
                                        self.consume.d.next =
                                            self.ring_busy[1].q.val() & (self.ring_count[1].q.val() < self.steps.val());
                                        if self.ring_classic[1].q.val() {
                                            self.consume.d.next = self.ring_busy[1].q.val()
                                                & !self.ring_phase[1].q.val().any()
                                                & (self.ring_count[1].q.val() < self.digits_end.val());
                                        }
                                        for s in 0..self.near.d.len() {
                                            self.near.d[s].next = self.busy_copies.q[s].val()
                                                & (self.first_turn.val() | self.products_turn.val());
                                            self.hold.d[s].next = self.busy_copies.q[s].val()
                                                & (self.first_turn.val()
                                                    | (self.classic_steps.val()
                                                        & !self.products_turn.val()
                                                        & (self.ring_count[1].q.val() != self.products_end.val())));
                                        }
                                        // A step takes the next step's quotient from its sums.
                                        self.take.d.next = self.ring_busy[1].q.val()
                                            & !self.ring_classic[1].q.val()
                                            & (self.ring_count[1].q.val() >= self.first_step.val())
                                            & (self.ring_count[1].q.val() <= self.last_take.val());
                                        // T's limbs join it but in the first step (T taken as 0).
                                        self.take_t.d.next = self.take.d.val() & !self.first_turn.val();
                                        self.quotient_take.d.next = self.classic_steps_next.val()
                                            & (self.ring_phase[1].q.val() == self.quotient_phase.val())
                                            & (self.ring_count[1].q.val() != self.products_end.val());
                                        self.keep.d.next = self.ring_busy[1].q.val()
                                            & !self.ring_classic[1].q.val()
                                            & (self.ring_count[1].q.val() >= self.first_kept.val())
                                            & (self.ring_count[1].q.val() <= self.last_kept.val());
                                        if self.ring_classic[1].q.val() {
                                            self.keep.d.next = self.ring_busy[1].q.val()
                                                & (self.ring_count[1].q.val() > self.products_end.val())
                                                & (self.ring_count[1].q.val() < self.lane_finish.val());
                                        }
                                        self.done.next = self.done_r.q.val();
                                        self.busy.next = self.ring_busy[0].q.val() & !self.done_r.q.val();

                                        // Position 0's carries: out of a limb, its bit 17, or its
                                        // propagate flag and the carry in; a classic lane's out of
                                        // digit 0 only, and none where a borrow takes its bit 17
                                        // (a_0 = 2^17). Its digits, in the same cycle:
                                        // lo17(a_l + carry_l); a classic lane's lo17(a_0 + carry −
                                        // borrow), or a wide REDC's 1 then 0.
                                        self.carries[0].next = self.ring_carry[0].q.val();
                                        for l in 0..self.digits.len() {
                                            self.digits[l].next =
                                                self.ring_a[l].q.val().get_bits::<Y_BITS>(0) + self.carries[l].val();
                                            self.carries[l + 1].next = self.ring_a[l].q.val().get_bit(17)
                                                | (self.ring_propagate[l].q.val() & self.carries[l].val());
                                        }
                                        self.classic_carry.next = self.carries[1].val()
                                            & !(self.ring_borrow[0].q.val()
                                                & !self.ring_a[0].q.val().get_bits::<Y_BITS>(0).any());
                                        self.first_redc.d.next =
                                            self.ring_redc[1].q.val() & !self.ring_count[1].q.val().any();
                                        // −1 as all ones; a carry and a borrow are never both set.
                                        self.digit_addend.next = 0.into();
                                        if self.carries[0].val() | self.first_redc.q.val() {
                                            self.digit_addend.next = 1.into();
                                        }
                                        if self.ring_borrow[0].q.val() {
                                            self.digit_addend.next = self.all_ones.val();
                                        }
                                        self.digit_base.next = self.ring_a[0].q.val().get_bits::<Y_BITS>(0);
                                        if self.ring_redc[0].q.val() {
                                            self.digit_base.next = 0.into();
                                        }
                                        self.digits[0].next = self.digit_base.val() + self.digit_addend.val();

                                        // The ring: position 1 moves to 0; position 0's lane, its turn
                                        // taken, to 1.
                                        for j in 0..self.a_in.len() {
                                            self.ring_a[j].d.next = self.ring_a[ln + j].q.val();
                                            self.ring_propagate[j].d.next = self.ring_propagate[ln + j].q.val();
                                            self.ring_a[ln + j].d.next = self.ring_a[j].q.val();
                                            self.ring_propagate[ln + j].d.next = self.ring_propagate[j].q.val();
                                        }
                                        for j in 0..(self.a_in.len() - self.digits.len()) {
                                            if self.consume_late.q[j / g].val() {
                                                self.ring_a[j].d.next = self.ring_a[ln + j + kn].q.val();
                                                self.ring_propagate[j].d.next =
                                                    self.ring_propagate[ln + j + kn].q.val();
                                            }
                                        }
                                        for j in (self.a_in.len() - self.digits.len())..self.a_in.len() {
                                            if self.consume_late.q[j / g].val() {
                                                self.ring_a[j].d.next = 0.into();
                                                self.ring_propagate[j].d.next = false;
                                            }
                                        }
                                        for j in 0..(self.a_in.len() - 1) {
                                            if self.consume_one.q[j / g].val() {
                                                self.ring_a[j].d.next = self.ring_a[ln + j + 1].q.val();
                                                self.ring_propagate[j].d.next = self.ring_propagate[ln + j + 1].q.val();
                                            }
                                        }
                                        for j in (self.a_in.len() - 1)..self.a_in.len() {
                                            if self.consume_one.q[j / g].val() {
                                                self.ring_a[j].d.next = 0.into();
                                                self.ring_propagate[j].d.next = false;
                                            }
                                        }
                                        for j in 0..self.a_in.len() {
                                            if self.load_a.q[j / g].val() {
                                                self.ring_a[ln + j].d.next = self.a_in[j].val();
                                            }
                                        }
                                        // A's propagate flags, formed a cycle after its load.
                                        for j in 0..self.a_in.len() {
                                            if self.load_propagate.q[j / g].val() {
                                                self.ring_propagate[j].d.next =
                                                    self.ring_a[ln + j].q.val().get_bits::<Y_BITS>(0)
                                                        == self.all_ones.val();
                                            }
                                        }
                                        self.ring_carry[0].d.next = self.ring_carry[1].q.val();
                                        self.ring_count[0].d.next = self.ring_count[1].q.val();
                                        self.ring_busy[0].d.next = self.ring_busy[1].q.val();
                                        self.ring_classic[0].d.next = self.ring_classic[1].q.val();
                                        self.ring_redc[0].d.next = self.ring_redc[1].q.val();
                                        self.ring_decrement[0].d.next = self.ring_decrement[1].q.val();
                                        self.ring_borrow[0].d.next = self.ring_borrow[1].q.val();
                                        self.ring_n_prime[0].d.next = self.ring_n_prime[1].q.val();
                                        self.ring_phase[0].d.next = self.ring_phase[1].q.val();
                                        self.ring_carry[1].d.next = self.ring_carry[0].q.val();
                                        self.ring_borrow[1].d.next = self.ring_borrow[0].q.val();
                                        for cs in (self.consume_late.d.len() + 1)..(self.consume_late.d.len() + 2) {
                                            if self.consume.q[cs].val() {
                                                self.ring_carry[1].d.next = self.carries[kn].val();
                                                if self.ring_classic[0].q.val() {
                                                    self.ring_carry[1].d.next = self.classic_carry.val();
                                                    self.ring_borrow[1].d.next =
                                                        self.ring_borrow[0].q.val() & !self.ring_a[0].q.val().any();
                                                }
                                            }
                                        }
                                        self.ring_classic[1].d.next = self.ring_classic[0].q.val();
                                        self.ring_redc[1].d.next = self.ring_redc[0].q.val();
                                        self.ring_decrement[1].d.next = self.ring_decrement[0].q.val();
                                        self.ring_n_prime[1].d.next = self.ring_n_prime[0].q.val();
                                        self.ring_phase[1].d.next = self.ring_phase[0].q.val() + 1;
                                        if self.ring_phase[0].q.val() == self.period_last.val() {
                                            self.ring_phase[1].d.next = 0.into();
                                        }
                                        self.ring_count[1].d.next = self.ring_count[0].q.val() + 1;
                                        self.ahead_before_finish.next = self.before_finish.val();
                                        self.ahead_two_before_finish.next = self.two_before_finish.val();
                                        if self.ring_classic[0].q.val() {
                                            self.ahead_before_finish.next = self.classic_before_finish.val();
                                            self.ahead_two_before_finish.next = self.classic_two_before_finish.val();
                                        }
                                        if self.ring_decrement[0].q.val() {
                                            self.ahead_before_finish.next = self.decremented_before_finish.val();
                                            self.ahead_two_before_finish.next =
                                                self.decremented_two_before_finish.val();
                                        }
                                        self.at_finish.d.next =
                                            self.ring_count[0].q.val() == self.ahead_before_finish.val();
                                        self.at_before_finish.d.next =
                                            self.ring_count[0].q.val() == self.ahead_two_before_finish.val();
                                        self.ring_busy[1].d.next = self.ring_busy[0].q.val() & !self.done_r.q.val();
                                        if self.load_state.q[0].val() {
                                            self.ring_carry[1].d.next = false;
                                            self.ring_count[1].d.next = 0.into();
                                            self.at_finish.d.next = false;
                                            self.at_before_finish.d.next = false;
                                            self.ring_busy[1].d.next = true;
                                            self.ring_classic[1].d.next = self.classic_in.val();
                                            self.ring_redc[1].d.next = self.classic_in.val() & self.redc_in.val();
                                            self.ring_decrement[1].d.next =
                                                self.classic_in.val() & self.decrement_in.val();
                                            self.ring_borrow[1].d.next =
                                                self.classic_in.val() & self.decrement_in.val();
                                            self.ring_n_prime[1].d.next = self.n_prime_in.val();
                                            self.ring_phase[1].d.next = 0.into();
                                        }

                                        // The kept limbs: a drain turn shifts T's low limbs in on top.
                                        for e in 0..(self.ring_kept.len() / 2) {
                                            self.ring_kept[e].d.next = self.ring_kept[en + e].q.val();
                                            self.ring_kept[en + e].d.next = self.ring_kept[e].q.val();
                                        }
                                        for e in 0..((self.ring_kept.len() / 2) - self.digits.len()) {
                                            if self.keep.q[e / g].val() {
                                                self.ring_kept[en + e].d.next = self.ring_kept[e + kn].q.val();
                                            }
                                        }
                                        for e in
                                            ((self.ring_kept.len() / 2) - self.digits.len())..(self.ring_kept.len() / 2)
                                        {
                                            if self.keep.q[e / g].val() {
                                                self.ring_kept[en + e].d.next =
                                                    self.t_r[e + kn - en].q.val().get_bits::<X_BITS>(0);
                                            }
                                        }
                                        // The result: the kept limbs, then T's.
                                        for j in 0..(self.ring_kept.len() / 2) {
                                            self.result[j].next = self.ring_kept[j].q.val();
                                        }
                                        for j in (self.ring_kept.len() / 2)..self.a_in.len() {
                                            self.result[j].next = self.t_r[j - en].q.val().get_bits::<X_BITS>(0);
                                        }

                                        // B's banks: its windows, a cycle after its limbs.
                                        for j in 0..self.b_in.len() {
                                            self.b_r[j].d.next = self.b_in[j].val();
                                            self.b_windows.limbs[j].next = self.b_r[j].q.val();
                                        }
                                        for w in 0..self.b_windows.windows.len() {
                                            self.b_bank[w].d.next = self.b_bank[w].q.val();
                                            self.b_bank[wn + w].d.next = self.b_bank[wn + w].q.val();
                                            if self.load_b0.q[w / g].val() {
                                                self.b_bank[w].d.next = self.b_windows.windows[w].val();
                                            }
                                            if self.load_b1.q[w / g].val() {
                                                self.b_bank[wn + w].d.next = self.b_windows.windows[w].val();
                                            }
                                        }
                                        for i in 0..self.m_hat_in.len() {
                                            self.h_bank[i].d.next = self.h_bank[i].q.val();
                                            self.h_bank[mn + i].d.next = self.h_bank[mn + i].q.val();
                                            if self.load_h0.q[i / g].val() {
                                                self.h_bank[i].d.next = self.m_hat_in[i].val();
                                            }
                                            if self.load_h1.q[i / g].val() {
                                                self.h_bank[mn + i].d.next = self.m_hat_in[i].val();
                                            }
                                        }

                                        // The ring's shift by the digits consumed a cycle ago.
                                        for i in 0..self.consume_late.d.len() {
                                            self.consume_late.d[i].next =
                                                self.consume.q[i].val() & !self.ring_classic[0].q.val();
                                            self.consume_one.d[i].next =
                                                self.consume.q[i].val() & self.ring_classic[0].q.val();
                                        }
                                        for cs in (self.consume_late.d.len())..(self.consume_late.d.len() + 1) {
                                            self.ab_source.d.next = self.consume.q[cs].val();
                                        }
                                        // The products of the digits resolved a cycle ago are cleared
                                        // where their lane consumed none; a classic lane's rows past
                                        // row 0 multiply nothing.
                                        for i in 0..self.ab_off.d.len() {
                                            self.ab_off.d[i].next = !self.ab_source.q[i].val();
                                        }
                                        for i in (self.ab_off.d.len() / self.digits.len())..self.ab_off.d.len() {
                                            self.ab_off.d[i].next =
                                                !self.ab_source.q[i].val() | self.ring_classic[1].q.val();
                                        }
                                        // A wide REDC's digit of C_hi, for column L's addend.
                                        self.high_digit.next = 0.into();
                                        if self.ring_redc[1].q.val() & self.ab_source.q[0].val() {
                                            self.high_digit.next = self.ring_a[ln].q.val().get_bits::<Y_BITS>(0);
                                        }
                                        self.high_delay[0].d.next = bit_cast::<T_BITS, Y_BITS>(self.high_digit.val());
                                        for r in 1..self.high_delay.len() {
                                            self.high_delay[r].d.next = self.high_delay[r - 1].q.val();
                                        }
                                        for l in 0..self.digits.len() {
                                            self.digit_copies.d[l].next = self.digits[l].val();
                                        }
                                        for dc in (self.digit_copies.q.len() / self.digits.len())
                                            ..(self.digit_copies.q.len() / self.digits.len() + 1)
                                        {
                                            for wc in (self.ab_off.q.len() / self.digits.len())
                                                ..(self.ab_off.q.len() / self.digits.len() + 1)
                                            {
                                                for l in 0..self.digits.len() {
                                                    for w in 0..self.b_windows.windows.len() {
                                                        self.ab[l * wn + w].x.next = self.b_bank[wn + w].q.val();
                                                        if !self.b_select.q[l * wc + w / g].val() {
                                                            self.ab[l * wn + w].x.next = self.b_bank[w].q.val();
                                                        }
                                                        self.ab[l * wn + w].y.next =
                                                            self.digit_copies.q[l * dc + w / gd].val();
                                                        self.ab[l * wn + w].clear.next =
                                                            self.ab_off.q[l * wc + w / g].val();
                                                        self.addends.products[l * wn + w].next =
                                                            self.ab[l * wn + w].p.val();
                                                    }
                                                }
                                            }
                                        }

                                        // The quotient: stage A's low sums (or 0), each summed again
                                        // per row and group of DSPS_PER_COPY DSPs, then through l
                                        // more registers for row l (`row_in` names each stage).
                                        for gn in (self.take.q.len() / self.digits.len())
                                            ..(self.take.q.len() / self.digits.len() + 1)
                                        {
                                            for l in 0..self.digits.len() {
                                                for h in 0..(self.take.q.len() / self.digits.len()) {
                                                    self.quotient_sums[l * gn + h].on.next =
                                                        self.take.q[l * gn + h].val();
                                                    self.quotient_sums[l * gn + h].y.next = self.y_r[l].q.val();
                                                    self.quotient_sums[l * gn + h].t.next = 0.into();
                                                    if self.take_t.q[l * gn + h].val() {
                                                        self.quotient_sums[l * gn + h].t.next =
                                                            self.t_r[l + kn].q.val();
                                                    }
                                                }
                                            }
                                            // Row 0 of a classic lane: its quotient.
                                            for h in 0..self.quotient_take.q.len() {
                                                if self.quotient_take.q[h].val() {
                                                    self.quotient_sums[h].on.next = true;
                                                    self.quotient_sums[h].y.next =
                                                        bit_cast::<T_BITS, Y_BITS>(self.quotient.p.val());
                                                }
                                            }
                                            for sn in (self.row_in.len() / self.take.q.len())
                                                ..(self.row_in.len() / self.take.q.len() + 1)
                                            {
                                                for l in 0..self.digits.len() {
                                                    for h in 0..(self.take.q.len() / self.digits.len()) {
                                                        self.row_in[(l * sn) * gn + h].next =
                                                            self.quotient_sums[l * gn + h].q.val();
                                                        for r in 1..(self.row_in.len() / self.take.q.len()) {
                                                            self.row_delay[(l * kn + r - 1) * gn + h].d.next =
                                                                self.row_in[(l * sn + r - 1) * gn + h].val();
                                                            self.row_in[(l * sn + r) * gn + h].next =
                                                                self.row_delay[(l * kn + r - 1) * gn + h].q.val();
                                                        }
                                                    }
                                                }
                                                // Row l's DSPs: the quotient's limb l, and H's limbs of
                                                // the lane whose quotient it is: l + k + 1 turns of the
                                                // phase ago (y is registered, and x too for even k).
                                                for hc in (self.h_select.q.len() / self.digits.len())
                                                    ..(self.h_select.q.len() / self.digits.len() + 1)
                                                {
                                                    for p in 0..self.rows.len() {
                                                        self.rows[p].x.next = 0.into();
                                                        self.rows[p].y.next = 0.into();
                                                    }
                                                    for l in 0..self.digits.len() {
                                                        for i in 0..self.m_hat_in.len() {
                                                            self.rows[l * cn + l + i].x.next =
                                                                self.row_in[(l * sn + l) * gn + i / gd].val();
                                                            self.rows[l * cn + l + i].y.next =
                                                                self.h_bank[((l + kn + 1) % 2) * mn + i].q.val();
                                                            if self.h_select.q[l * hc + i / g].val() {
                                                                self.rows[l * cn + l + i].y.next =
                                                                    self.h_bank[((l + kn) % 2) * mn + i].q.val();
                                                            }
                                                        }
                                                    }
                                                }
                                            }
                                        }
                                        // Column j's cascade: row 0 adds the a·b pieces, each row below
                                        // the row above; the last row's sums are redistributed into y.
                                        for j in 0..self.t_r.len() {
                                            self.addends.base[j].next = 0.into();
                                            self.rows[j].c.next = self.addends.addends[j].val();
                                        }
                                        for hl in (self.high_delay.len() - 1)..self.high_delay.len() {
                                            self.addends.base[ln].next = self.high_delay[hl].q.val();
                                        }
                                        for p in (self.t_r.len())..self.rows.len() {
                                            self.rows[p].c.next = self.rows[p - cn].p.val();
                                        }
                                        for rn in (self.rows.len())..(self.rows.len() + 1) {
                                            for j in 0..self.t_r.len() {
                                                self.redistribute.sums[j].next = self.rows[rn - cn + j].p.val();
                                            }
                                        }

                                        // The loop: stage A adds T's limbs from k up (a step), 1 up (a
                                        // classic products turn), 0 up (a classic turn that holds T)
                                        // or none (a first step); stage B passes each sum's carry up
                                        // a limb.
                                        for j in 0..self.t_r.len() {
                                            self.t_shifted[j].next = 0.into();
                                        }
                                        for j in 0..(self.t_r.len() - self.digits.len()) {
                                            self.t_shifted[j].next = self.t_r[j + kn].q.val();
                                        }
                                        for j in 0..self.t_r.len() {
                                            if self.hold.q[j / g].val() {
                                                self.t_shifted[j].next = self.t_r[j].q.val();
                                            }
                                            if self.near.q[j / g].val() {
                                                self.t_shifted[j].next = 0.into();
                                            }
                                        }
                                        for j in 0..(self.t_r.len() - 1) {
                                            if self.near.q[j / g].val() & !self.hold.q[j / g].val() {
                                                self.t_shifted[j].next = self.t_r[j + 1].q.val();
                                            }
                                        }
                                        for j in 0..self.t_r.len() {
                                            self.y_r[j].d.next = self.redistribute.t_next[j].val();
                                            self.s_r[j].d.next = self.y_r[j].q.val() + self.t_shifted[j].val();
                                        }
                                        // The classic quotient: lo17(s_0)·N′ of the lane whose turn it
                                        // was, taken by row 0 at its next turn; s_0 summed again in
                                        // the DSP's pre-adder.
                                        for qc in (self.t_r.len().div_ceil(LIMBS_PER_COPY))
                                            ..(self.t_r.len().div_ceil(LIMBS_PER_COPY) + 1)
                                        {
                                            self.quotient_v.next = self.t_r[kn].q.val();
                                            if self.hold.q[qc].val() {
                                                self.quotient_v.next = self.t_r[0].q.val();
                                            }
                                            if self.near.q[qc].val() {
                                                self.quotient_v.next = 0.into();
                                            }
                                            if self.near.q[qc].val() & !self.hold.q[qc].val() {
                                                self.quotient_v.next = self.t_r[1].q.val();
                                            }
                                        }
                                        self.quotient.u.next = self.y_r[0].q.val();
                                        self.quotient.v.next = self.quotient_v.val();
                                        self.quotient.y.next = self.ring_n_prime[1].q.val();
                                        self.t_r[0].d.next = self.s_r[0].q.val() & self.low_bits.val();
                                        for j in 1..self.t_r.len() {
                                            self.t_r[j].d.next = (self.s_r[j].q.val() & self.low_bits.val())
                                                + (self.s_r[j - 1].q.val() >> 17);
                                        }
                                        self.split.d.next = self.take.q[0].val();
                                        for j in (self.digits.len())..(self.digits.len() + 1) {
                                            if self.split.q.val() {
                                                self.t_r[j].d.next = self.s_r[j].q.val() & self.low_bits.val();
                                            }
                                        }
                                        for j in 0..self.t_r.len() {
                                            self.t[j].next = self.t_r[j].q.val().get_bits::<X_BITS>(0);
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        // The copies of position 1's busy flag, from its next value, set above.
        self.busy_copies.d.next = self.ring_busy[1].d.val();
    }
}

#[cfg(test)]
mod tests;
