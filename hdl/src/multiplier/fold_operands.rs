//! One slot's operands inside the folding multiplier ([`super::fold_mul`]): the multiplicand B,
//! held for the whole multiplication in 23-bit windows ([`super::b_windows`], for the 24×17 a·b
//! products), and the multiplier A, consumed k limbs per step. A's
//! redundant limbs (< 2^17 + 4) are resolved into exact digits as they are consumed: digit_l =
//! lo17(a_l + carry_l), carry_(l+1) = 1 when a_l + carry_l ≥ 2^17; the carry out of the last is
//! kept for the next step. The carries are looked ahead, not rippled through k adders: a limb
//! generates a carry when a_l ≥ 2^17 and propagates one when lo17(a_l) = 2^17 − 1, so
//! carry_(l+1) = g_l | (p_l & carry_l) is logic that synthesis flattens, and the k increments run
//! side by side.
//!
//! In the classic mode (`ecrt_golden::hw::ClassicPass`) A is consumed a digit per step, with a
//! borrow of 1 into the first for a pass on A − 1: digit_0 = lo17(a_0 + carry − borrow), the
//! others 0, and A moves down one limb. A classic step takes two turns, its quotient's and its
//! products' (`quotient_turn` tells which is next); the digit is consumed in the second. A step
//! count per mode: m folding, S classic, N's limbs for the decremented pass.
//!
//! The outputs are registers, loaded every cycle from the sequencer, which moves only in the
//! slot's turns: the DSPs read A's digits from registers, not through the carry resolution,
//! which runs in the cycle between two turns. After a load that cycle has passed, so the first
//! turn (the lead turn) is spent: the sequencer holds and nothing is pending, and B's windows are
//! formed meanwhile from B's registered limbs. A result thus reaches the operand registers
//! through nothing but the slot's multiplexers; the lead costs a turn a multiplication.

use crate::config::STEP_BITS;
use crate::fanout::replicas::Replicas;
use crate::fanout::{copies, LIMBS_PER_COPY};
use crate::many;
use crate::multiplier::b_windows::BWindows;
use crate::multiplier::mul_add::{WINDOW_BITS, X_BITS, Y_BITS};
use rust_hdl::prelude::*;

/// A slot's operand registers and k-digit sequencer.
#[derive(LogicBlock)]
pub struct FoldOperands {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Start counting steps from 0 (with `load_a` and `load_b`, which take the operands).
    pub load: Signal<In, bool>,
    /// Copies of `load`, one per LIMBS_PER_COPY limbs of A: take those limbs of `a_in`.
    pub load_a: Vec<Signal<In, bool>>,
    /// Copies of `load`, one per LIMBS_PER_COPY limbs of B: take those limbs of `b_in`.
    pub load_b: Vec<Signal<In, bool>>,
    /// The multiplier A, redundant limbs.
    pub a_in: Vec<Signal<In, Bits<X_BITS>>>,
    /// The multiplicand B, redundant limbs.
    pub b_in: Vec<Signal<In, Bits<X_BITS>>>,
    /// With `load`: a classic pass.
    pub classic_in: Signal<In, bool>,
    /// With `load`: a classic wide REDC.
    pub redc_in: Signal<In, bool>,
    /// With `load`: a classic pass on A − 1 (A ≥ 1).
    pub decrement_in: Signal<In, bool>,
    /// The slot's prefetch turn: consume `digits` (when `pending`, and not a quotient turn).
    /// Turns alternate with cycles that are not: the sequencer works out its next step between.
    pub advance: Signal<In, bool>,
    /// The multiplication's last step is done: the slot is free.
    pub finish: Signal<In, bool>,
    /// This turn's k digits of A, exact, least significant first (registered).
    pub digits: Vec<Signal<Out, Bits<Y_BITS>>>,
    /// The multiplicand's 23-bit windows (each < 2^24), for the 24×17 a·b products.
    pub b: Vec<Signal<Out, Bits<WINDOW_BITS>>>,
    /// A multiplication is loaded and has steps left.
    pub pending: Signal<Out, bool>,
    /// `digits` are the multiplication's last step's.
    pub last: Signal<Out, bool>,
    /// `digits` are the multiplication's first step's.
    pub first: Signal<Out, bool>,
    /// Classic: this turn prefetches for the step's quotient, not its products.
    pub quotient_turn: Signal<Out, bool>,
    /// A multiplication is loaded and not finished.
    pub busy: Signal<Out, bool>,
    /// The loaded multiplication is a classic pass.
    pub classic: Signal<Out, bool>,
    /// `classic` in the next cycle (for copies of it).
    pub classic_next: Signal<Out, bool>,
    /// The loaded multiplication is a classic wide REDC.
    pub redc: Signal<Out, bool>,
    steps: Constant<Bits<STEP_BITS>>,
    classic_steps: Constant<Bits<STEP_BITS>>,
    decremented_steps: Constant<Bits<STEP_BITS>>,
    all_ones: Constant<Bits<Y_BITS>>,
    bias: Constant<Bits<20>>,
    a: Vec<DFF<Bits<X_BITS>>>,
    // B as loaded, and its windows formed from these registers (in the lead turn, below).
    b_limbs: Vec<DFF<Bits<X_BITS>>>,
    b_windows: BWindows,
    b_regs: Vec<DFF<Bits<WINDOW_BITS>>>,
    // The sequencer's outputs (`*_now`) and their registers, loaded every cycle (see the module
    // docs), so that A's digits reach the DSPs from registers rather than through their carry
    // resolution.
    digits_now: Vec<Signal<Local, Bits<Y_BITS>>>,
    pending_now: Signal<Local, bool>,
    digits_r: Vec<DFF<Bits<Y_BITS>>>,
    // A load's lead turn is next: the sequencer holds in it.
    lead: DFF<bool>,
    pending_r: DFF<bool>,
    last_r: DFF<bool>,
    first_r: DFF<bool>,
    quotient_turn_out: DFF<bool>,
    carry: DFF<bool>,
    borrow: DFF<bool>,
    classic_r: DFF<bool>,
    // Copies of `classic_r` for A's shift (one per LIMBS_PER_COPY limbs), then one per digit.
    classic_copies: Replicas<bool>,
    // A's shift in the next cycle, a turn that consumes a step: one copy per LIMBS_PER_COPY limbs.
    shift_copies: Replicas<bool>,
    quotient_turn_r: DFF<bool>,
    redc_r: DFF<bool>,
    decrement_r: DFF<bool>,
    step: DFF<Bits<STEP_BITS>>,
    // The loaded multiplication's step count.
    step_count: DFF<Bits<STEP_BITS>>,
    busy_r: DFF<bool>,
    // The carries into each of the k digits (carries[0] is the kept one).
    carries: Vec<Signal<Local, bool>>,
    // Classic: a_0 + carry − borrow + 2^17, never negative; its bits from 17 on are the next
    // carry or borrow, plus 1.
    digit_sum: Signal<Local, Bits<20>>,
}

impl FoldOperands {
    /// Operand registers for `limbs` limbs, consumed `limbs_per_step` at a time over `steps` steps,
    /// or one at a time over `classic_steps` (`decremented_steps` for A − 1).
    pub fn new(
        limbs: usize,
        limbs_per_step: usize,
        steps: usize,
        classic_steps: usize,
        decremented_steps: usize,
    ) -> Self {
        assert!(limbs_per_step <= limbs, "a step consumes at most the whole operand");
        assert!(steps.max(classic_steps) < 1 << STEP_BITS, "too many steps for the step counter");
        FoldOperands {
            clock: Default::default(),
            load: Default::default(),
            load_a: many(copies(limbs)),
            load_b: many(copies(limbs)),
            a_in: many(limbs),
            b_in: many(limbs),
            classic_in: Default::default(),
            redc_in: Default::default(),
            decrement_in: Default::default(),
            advance: Default::default(),
            finish: Default::default(),
            digits: many(limbs_per_step),
            b: many(ecrt_golden::hw::wide::window_count(limbs)),
            pending: Default::default(),
            last: Default::default(),
            first: Default::default(),
            quotient_turn: Default::default(),
            busy: Default::default(),
            classic: Default::default(),
            classic_next: Default::default(),
            redc: Default::default(),
            steps: Constant::new((steps as u64).into()),
            classic_steps: Constant::new((classic_steps as u64).into()),
            decremented_steps: Constant::new((decremented_steps as u64).into()),
            all_ones: Constant::new(((1u64 << Y_BITS) - 1).into()),
            bias: Constant::new((1u64 << Y_BITS).into()),
            a: many(limbs),
            b_limbs: many(limbs),
            b_windows: BWindows::new(limbs),
            b_regs: many(ecrt_golden::hw::wide::window_count(limbs)),
            digits_now: many(limbs_per_step),
            pending_now: Default::default(),
            digits_r: many(limbs_per_step),
            lead: Default::default(),
            pending_r: Default::default(),
            last_r: Default::default(),
            first_r: Default::default(),
            quotient_turn_out: Default::default(),
            carry: Default::default(),
            borrow: Default::default(),
            classic_r: Default::default(),
            classic_copies: Replicas::new(copies(limbs) + limbs_per_step),
            shift_copies: Replicas::new(copies(limbs)),
            quotient_turn_r: Default::default(),
            redc_r: Default::default(),
            decrement_r: Default::default(),
            step: Default::default(),
            busy_r: Default::default(),
            carries: many(limbs_per_step + 1),
            digit_sum: Default::default(),
            step_count: Default::default(),
        }
    }
}

impl Logic for FoldOperands {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            carry,
            borrow,
            classic_r,
            quotient_turn_r,
            redc_r,
            decrement_r,
            step,
            step_count,
            busy_r,
            lead,
            pending_r,
            last_r,
            first_r,
            quotient_turn_out
        );
        clock!(self, clock, classic_copies, shift_copies);
        for j in 0..self.a.len() {
            self.a[j].clock.next = self.clock.val();
            self.a[j].d.next = self.a[j].q.val();
            self.b_limbs[j].clock.next = self.clock.val();
            self.b_limbs[j].d.next = self.b_limbs[j].q.val();
            self.b_windows.limbs[j].next = self.b_limbs[j].q.val();
        }
        // The windows follow the loaded limbs a cycle later, ready before the first prefetch.
        for i in 0..self.b_regs.len() {
            self.b_regs[i].clock.next = self.clock.val();
            self.b_regs[i].d.next = self.b_windows.windows[i].val();
            self.b[i].next = self.b_regs[i].q.val();
        }
        for l in 0..self.digits_r.len() {
            self.digits_r[l].clock.next = self.clock.val();
            self.digits[l].next = self.digits_r[l].q.val();
        }
        self.carries[0].next = self.carry.q.val();
        for l in 0..self.digits.len() {
            self.digits_now[l].next = self.a[l].q.val().get_bits::<Y_BITS>(0) + self.carries[l].val();
            self.carries[l + 1].next = self.a[l].q.val().get_bit(17)
                | ((self.a[l].q.val().get_bits::<Y_BITS>(0) == self.all_ones.val()) & self.carries[l].val());
        }
        self.digit_sum.next = bit_cast::<20, X_BITS>(self.a[0].q.val()) + self.bias.val();
        if self.carry.q.val() {
            self.digit_sum.next = bit_cast::<20, X_BITS>(self.a[0].q.val()) + self.bias.val() + 1;
        }
        if self.borrow.q.val() {
            self.digit_sum.next = bit_cast::<20, X_BITS>(self.a[0].q.val()) + self.bias.val() - 1;
        }
        // The first copy for the digits: after A's shift's.
        for c in (copies(self.a.len()))..(copies(self.a.len()) + 1) {
            for l in 0..1 {
                if self.classic_copies.q[c + l].val() {
                    self.digits_now[l].next = self.digit_sum.val().get_bits::<Y_BITS>(0);
                }
            }
            for l in 1..self.digits.len() {
                if self.classic_copies.q[c + l].val() {
                    self.digits_now[l].next = 0.into();
                }
            }
        }
        self.classic.next = self.classic_r.q.val();
        self.classic_next.next = self.classic_r.q.val();
        self.classic_copies.d.next = self.classic_r.q.val();
        if self.load.val() {
            self.classic_next.next = self.classic_in.val();
            self.classic_copies.d.next = self.classic_in.val();
        }
        self.redc.next = self.redc_r.q.val();
        self.busy.next = self.busy_r.q.val();
        self.pending_now.next =
            self.busy_r.q.val() & (self.step.q.val() != self.step_count.q.val()) & !self.lead.q.val();
        self.pending.next = self.pending_r.q.val();
        self.last.next = self.last_r.q.val();
        self.first.next = self.first_r.q.val();
        self.quotient_turn.next = self.quotient_turn_out.q.val();
        // No enable: between turns the sequencer holds, so the registers show its state in the
        // next turn (an enable would load the phase with every output bit).
        for l in 0..self.digits_r.len() {
            self.digits_r[l].d.next = self.digits_now[l].val();
        }
        self.pending_r.d.next = self.pending_now.val();
        self.last_r.d.next = (self.step.q.val() + 1) == self.step_count.q.val();
        self.first_r.d.next = self.step.q.val() == 0;
        self.quotient_turn_out.d.next = self.quotient_turn_r.q.val();
        if self.advance.val() {
            self.lead.d.next = false;
        }
        if self.advance.val() & self.pending_now.val() & self.classic_r.q.val() {
            self.quotient_turn_r.d.next = !self.quotient_turn_r.q.val();
        }
        if self.advance.val() & self.pending_now.val() & !self.quotient_turn_r.q.val() {
            self.step.d.next = self.step.q.val() + 1;
            if self.classic_r.q.val() {
                // digit_sum − 2^17 is the next carry (1) or borrow (−1).
                self.carry.d.next = self.digit_sum.val().get_bits::<3>(17) == 2;
                self.borrow.d.next = self.digit_sum.val().get_bits::<3>(17) == 0;
            } else {
                // k as a loop variable: rust-hdl unrolls loops, an index may use loop variables
                // only, and a range may not use an outer loop's variable.
                for k in (self.digits.len())..(self.digits.len() + 1) {
                    self.carry.d.next = self.carries[k].val();
                }
            }
        }
        // A moves down a limb (classic) or k limbs in the turns that consume a step; the enable
        // is registered in the cycle before (the sequencer holds between turns), in copies.
        self.shift_copies.d.next = !self.advance.val() & self.pending_now.val() & !self.quotient_turn_r.q.val();
        for g in (LIMBS_PER_COPY)..(LIMBS_PER_COPY + 1) {
            for k in (self.digits.len())..(self.digits.len() + 1) {
                for j in 0..(self.a.len() - self.digits.len()) {
                    if self.shift_copies.q[j / g].val() {
                        self.a[j].d.next = self.a[j + k].q.val();
                    }
                }
            }
            for j in (self.a.len() - self.digits.len())..self.a.len() {
                if self.shift_copies.q[j / g].val() {
                    self.a[j].d.next = 0.into();
                }
            }
            for j in 0..(self.a.len() - 1) {
                if self.shift_copies.q[j / g].val() & self.classic_copies.q[j / g].val() {
                    self.a[j].d.next = self.a[j + 1].q.val();
                }
            }
            for j in (self.a.len() - 1)..self.a.len() {
                if self.shift_copies.q[j / g].val() & self.classic_copies.q[j / g].val() {
                    self.a[j].d.next = 0.into();
                }
            }
        }
        if self.finish.val() {
            self.busy_r.d.next = false;
        }
        for g in (LIMBS_PER_COPY)..(LIMBS_PER_COPY + 1) {
            for j in 0..self.a.len() {
                if self.load_a[j / g].val() {
                    self.a[j].d.next = self.a_in[j].val();
                }
                if self.load_b[j / g].val() {
                    self.b_limbs[j].d.next = self.b_in[j].val();
                }
            }
        }
        if self.load.val() {
            self.lead.d.next = true;
            self.carry.d.next = false;
            self.borrow.d.next = self.classic_in.val() & self.decrement_in.val();
            self.classic_r.d.next = self.classic_in.val();
            self.quotient_turn_r.d.next = self.classic_in.val();
            self.redc_r.d.next = self.classic_in.val() & self.redc_in.val();
            self.decrement_r.d.next = self.classic_in.val() & self.decrement_in.val();
            self.step.d.next = 0.into();
            self.step_count.d.next = self.steps.val();
            if self.classic_in.val() {
                self.step_count.d.next = self.classic_steps.val();
                if self.decrement_in.val() {
                    self.step_count.d.next = self.decremented_steps.val();
                }
            }
            self.busy_r.d.next = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limbs::to_limbs;
    use crate::testing::simulate;
    use num_bigint::RandBigInt;
    use rand::{Rng, SeedableRng};

    #[test]
    fn fold_operands_is_synthesizable() {
        let mut uut = FoldOperands::new(5, 2, 3, 6, 4);
        uut.connect_all();
        yosys_validate("ecrt_fold_operands", &generate_verilog(&uut)).unwrap();
    }

    /// Redundant limbs of A resolve into the exact digits of A's value, k per step, with `last`
    /// on the m-th step and nothing pending after it.
    #[test]
    fn redundant_limbs_resolve_into_exact_digits() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(30);
        for (limbs, k, steps) in [(6usize, 2usize, 4usize), (7, 3, 3), (5, 1, 6)] {
            let value = rng.gen_biguint(17 * limbs as u64 - 3);
            assert!(limbs <= k * steps, "the steps cover A");
            // Move a unit from some limbs into the one below: < 2^17 + 3 as results are.
            let mut a = to_limbs(&value, limbs);
            for j in 0..limbs - 1 {
                if a[j + 1] > 0 && a[j] < 3 && rng.gen_bool(0.7) {
                    a[j + 1] -= 1;
                    a[j] += 1 << 17;
                }
            }
            let expected = to_limbs(&value, k * steps);
            let a_in = a.clone();
            let trace =
                simulate(FoldOperands::new(limbs, k, steps, limbs + 1, limbs), 2 * steps + 4, move |uut, cycle| {
                    uut.load.next = cycle == 0;
                    for copy in uut.load_a.iter_mut().chain(uut.load_b.iter_mut()) {
                        copy.next = cycle == 0;
                    }
                    for (port, &limb) in uut.a_in.iter_mut().zip(&a_in) {
                        port.next = limb.into();
                    }
                    uut.advance.next = cycle % 2 == 1;
                    let digits: Vec<u64> = uut.digits.iter().map(|d| d.val().to_u64()).collect();
                    (uut.pending.val(), uut.last.val(), digits)
                });
            // Turns in odd cycles; cycle 1 is the lead turn, step i's turn is cycle 3 + 2i.
            assert!(!trace[1].0, "nothing pending in the lead turn");
            for i in 0..steps {
                let (pending, last, digits) = &trace[3 + 2 * i];
                assert!(*pending, "step {i} pending");
                assert_eq!(*last, i + 1 == steps, "step {i}: last");
                assert_eq!(digits[..], expected[i * k..(i + 1) * k], "limbs {limbs}, k {k}, step {i}");
            }
            assert!(!trace[3 + 2 * steps].0, "nothing pending after the last step");
        }
    }

    /// Redundant limbs, with carries and borrows across them.
    fn redundant(value: &num_bigint::BigUint, limbs: usize, rng: &mut impl Rng) -> Vec<u64> {
        let mut a = to_limbs(value, limbs);
        for j in 0..limbs - 1 {
            if a[j + 1] > 0 && a[j] < 3 && rng.gen_bool(0.7) {
                a[j + 1] -= 1;
                a[j] += 1 << 17;
            }
        }
        a
    }

    /// Classic: one exact digit per step of two turns (of A − 1 over the decremented step count;
    /// of A over the classic one otherwise), the other k − 1 digits 0.
    #[test]
    fn classic_passes_take_a_digit_a_step() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(31);
        let (limbs, k, steps, classic_steps) = (6usize, 3usize, 3usize, 8usize);
        for decrement in [false, true] {
            // Limbs of 0 below the top make the borrow run.
            let value = num_bigint::BigUint::from(1u32) << (17 * 3) | rng.gen_biguint(17 * 2);
            let value = if rng.gen_bool(0.5) { value } else { num_bigint::BigUint::from(1u32) << (17 * 4) };
            let a = redundant(&value, limbs, &mut rng);
            let count = if decrement { limbs } else { classic_steps };
            let expected = to_limbs(&(if decrement { &value - 1u32 } else { value.clone() }), count);
            let a_in = a.clone();
            let trace =
                simulate(FoldOperands::new(limbs, k, steps, classic_steps, limbs), 4 * count + 4, move |uut, cycle| {
                    uut.load.next = cycle == 0;
                    for copy in uut.load_a.iter_mut().chain(uut.load_b.iter_mut()) {
                        copy.next = cycle == 0;
                    }
                    uut.classic_in.next = true;
                    uut.decrement_in.next = decrement;
                    for (port, &limb) in uut.a_in.iter_mut().zip(&a_in) {
                        port.next = limb.into();
                    }
                    uut.advance.next = cycle % 2 == 1;
                    let digits: Vec<u64> = uut.digits.iter().map(|d| d.val().to_u64()).collect();
                    (uut.pending.val(), uut.last.val(), uut.first.val(), uut.quotient_turn.val(), digits)
                });
            // Each step: its quotient's turn, then its products' (which consumes the digit).
            for (i, &digit) in expected.iter().enumerate() {
                for (turn, quotient) in [(3 + 4 * i, true), (5 + 4 * i, false)] {
                    let (pending, last, first, quotient_turn, digits) = &trace[turn];
                    assert!(*pending && *first == (i == 0) && *quotient_turn == quotient, "step {i}");
                    assert_eq!(*last, i + 1 == count, "step {i}: last");
                    assert_eq!(digits[0], digit, "decrement {decrement}, step {i}");
                    assert!(digits[1..].iter().all(|&d| d == 0), "step {i}: one digit");
                }
            }
            assert!(!trace[3 + 4 * count].0, "nothing pending after the last step");
        }
    }
}
