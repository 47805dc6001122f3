//! One slot's operands inside the folding multiplier ([`crate::fold_mul`]): the multiplicand B,
//! held for the whole multiplication, and the multiplier A, consumed k limbs per step. A's
//! redundant limbs (< 2^17 + 4) are resolved into exact digits as they are consumed: digit_l =
//! lo17(a_l + carry_l), carry_(l+1) = 1 when a_l + carry_l ≥ 2^17; the carry out of the last is
//! kept for the next step. The carries are looked ahead, not rippled through k adders: a limb
//! generates a carry when a_l ≥ 2^17 and propagates one when lo17(a_l) = 2^17 − 1, so
//! carry_(l+1) = g_l | (p_l & carry_l) is logic that synthesis flattens, and the k increments run
//! side by side.

use crate::many;
use crate::montmul::STEP_BITS;
use crate::mul_add::{X_BITS, Y_BITS};
use rust_hdl::prelude::*;

/// A slot's operand registers and k-digit sequencer.
#[derive(LogicBlock)]
pub struct FoldOperands {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Take `a_in` and `b_in` and start counting steps from 0.
    pub load: Signal<In, bool>,
    /// The multiplier A, redundant limbs.
    pub a_in: Vec<Signal<In, Bits<X_BITS>>>,
    /// The multiplicand B, redundant limbs.
    pub b_in: Vec<Signal<In, Bits<X_BITS>>>,
    /// Consume `digits` (when `pending`).
    pub advance: Signal<In, bool>,
    /// The multiplication's last step is done: the slot is free.
    pub finish: Signal<In, bool>,
    /// The next k digits of A, exact, least significant first.
    pub digits: Vec<Signal<Out, Bits<Y_BITS>>>,
    /// The multiplicand's limbs.
    pub b: Vec<Signal<Out, Bits<X_BITS>>>,
    /// A multiplication is loaded and has steps left.
    pub pending: Signal<Out, bool>,
    /// `digits` are the multiplication's last step's.
    pub last: Signal<Out, bool>,
    /// A multiplication is loaded and not finished.
    pub busy: Signal<Out, bool>,
    steps: Constant<Bits<STEP_BITS>>,
    all_ones: Constant<Bits<Y_BITS>>,
    a: Vec<DFF<Bits<X_BITS>>>,
    b_regs: Vec<DFF<Bits<X_BITS>>>,
    carry: DFF<bool>,
    step: DFF<Bits<STEP_BITS>>,
    busy_r: DFF<bool>,
    // The carries into each of the k digits (carries[0] is the kept one).
    carries: Vec<Signal<Local, bool>>,
}

impl FoldOperands {
    /// Operand registers for `limbs` limbs, consumed `limbs_per_step` at a time over `steps` steps.
    pub fn new(limbs: usize, limbs_per_step: usize, steps: usize) -> Self {
        assert!(limbs_per_step <= limbs, "a step consumes at most the whole operand");
        assert!(steps < 1 << STEP_BITS, "too many steps for the step counter");
        FoldOperands {
            clock: Default::default(),
            load: Default::default(),
            a_in: many(limbs),
            b_in: many(limbs),
            advance: Default::default(),
            finish: Default::default(),
            digits: many(limbs_per_step),
            b: many(limbs),
            pending: Default::default(),
            last: Default::default(),
            busy: Default::default(),
            steps: Constant::new((steps as u64).into()),
            all_ones: Constant::new(((1u64 << Y_BITS) - 1).into()),
            a: many(limbs),
            b_regs: many(limbs),
            carry: Default::default(),
            step: Default::default(),
            busy_r: Default::default(),
            carries: many(limbs_per_step + 1),
        }
    }
}

impl Logic for FoldOperands {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, carry, step, busy_r);
        for j in 0..self.a.len() {
            self.a[j].clock.next = self.clock.val();
            self.b_regs[j].clock.next = self.clock.val();
            self.a[j].d.next = self.a[j].q.val();
            self.b_regs[j].d.next = self.b_regs[j].q.val();
            self.b[j].next = self.b_regs[j].q.val();
        }
        self.carries[0].next = self.carry.q.val();
        for l in 0..self.digits.len() {
            self.digits[l].next = self.a[l].q.val().get_bits::<Y_BITS>(0) + self.carries[l].val();
            self.carries[l + 1].next = self.a[l].q.val().get_bit(17)
                | ((self.a[l].q.val().get_bits::<Y_BITS>(0) == self.all_ones.val()) & self.carries[l].val());
        }
        self.busy.next = self.busy_r.q.val();
        self.pending.next = self.busy_r.q.val() & (self.step.q.val() != self.steps.val());
        self.last.next = (self.step.q.val() + 1) == self.steps.val();
        if self.advance.val() & self.pending.val() {
            self.step.d.next = self.step.q.val() + 1;
            // k as a loop variable: rust-hdl unrolls loops, an index may use loop variables only,
            // and a range may not use an outer loop's variable.
            for k in (self.digits.len())..(self.digits.len() + 1) {
                self.carry.d.next = self.carries[k].val();
                for j in 0..(self.a.len() - self.digits.len()) {
                    self.a[j].d.next = self.a[j + k].q.val();
                }
            }
            for j in (self.a.len() - self.digits.len())..self.a.len() {
                self.a[j].d.next = 0.into();
            }
        }
        if self.finish.val() {
            self.busy_r.d.next = false;
        }
        if self.load.val() {
            for j in 0..self.a.len() {
                self.a[j].d.next = self.a_in[j].val();
                self.b_regs[j].d.next = self.b_in[j].val();
            }
            self.carry.d.next = false;
            self.step.d.next = 0.into();
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
        let mut uut = FoldOperands::new(5, 2, 3);
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
            let trace = simulate(FoldOperands::new(limbs, k, steps), steps + 3, move |uut, cycle| {
                uut.load.next = cycle == 0;
                for (port, &limb) in uut.a_in.iter_mut().zip(&a_in) {
                    port.next = limb.into();
                }
                uut.advance.next = cycle >= 1;
                let digits: Vec<u64> = uut.digits.iter().map(|d| d.val().to_u64()).collect();
                (uut.pending.val(), uut.last.val(), digits)
            });
            for i in 0..steps {
                let (pending, last, digits) = &trace[1 + i];
                assert!(*pending, "step {i} pending");
                assert_eq!(*last, i + 1 == steps, "step {i}: last");
                assert_eq!(digits[..], expected[i * k..(i + 1) * k], "limbs {limbs}, k {k}, step {i}");
            }
            assert!(!trace[1 + steps].0, "nothing pending after the last step");
        }
    }
}
