//! One slot's operands inside the multiplier: the multiplicand B, held for the whole
//! multiplication, and the multiplier A, consumed one digit per step. A's redundant limbs are
//! resolved as they are consumed: digit_i = (a_i + carry − borrow) mod 2^17, one 20-bit addition
//! per step. The borrow starts at 1 for a multiplication that takes A − 1 (the exact division's
//! x − 1), at 0 otherwise.

use crate::many;
use crate::montmul::STEP_BITS;
use crate::mul_add::{X_BITS, Y_BITS};
use rust_hdl::prelude::*;

/// A slot's operand registers and digit sequencer.
#[derive(LogicBlock)]
pub struct SlotOperands {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Take `a_in` and `b_in` and start counting steps from 0.
    pub load: Signal<In, bool>,
    /// The multiplier A, redundant limbs.
    pub a_in: Vec<Signal<In, Bits<X_BITS>>>,
    /// The multiplicand B, redundant limbs.
    pub b_in: Vec<Signal<In, Bits<X_BITS>>>,
    /// With `load`: the multiplication is a wide REDC (see [`crate::montmul`]).
    pub redc_in: Signal<In, bool>,
    /// With `load`: consume the digits of A − 1 instead of A (A ≥ 1).
    pub decrement_in: Signal<In, bool>,
    /// Consume `digit` (when `pending`).
    pub advance: Signal<In, bool>,
    /// The multiplication's last step is done: the slot is free.
    pub finish: Signal<In, bool>,
    /// The next digit of A, exact.
    pub digit: Signal<Out, Bits<Y_BITS>>,
    /// The multiplicand's limbs.
    pub b: Vec<Signal<Out, Bits<X_BITS>>>,
    /// A multiplication is loaded and has digits left.
    pub pending: Signal<Out, bool>,
    /// `digit` is the multiplication's first.
    pub first: Signal<Out, bool>,
    /// `digit` is the multiplication's last.
    pub last: Signal<Out, bool>,
    /// A multiplication is loaded and not finished.
    pub busy: Signal<Out, bool>,
    /// The loaded multiplication is a wide REDC.
    pub redc: Signal<Out, bool>,
    digits: Constant<Bits<STEP_BITS>>,
    a: Vec<DFF<Bits<X_BITS>>>,
    b_regs: Vec<DFF<Bits<X_BITS>>>,
    carry: DFF<Bits<2>>,
    borrow: DFF<bool>,
    redc_r: DFF<bool>,
    step: DFF<Bits<STEP_BITS>>,
    busy_r: DFF<bool>,
    a_low: Signal<Local, Bits<X_BITS>>,
    // a_low + carry − borrow + 2^17: never negative, so digit = its low 17 bits and the next
    // carry is its high part − 1 (a high part of 0 means a borrow).
    digit_sum: Signal<Local, Bits<20>>,
    bias: Signal<Local, Bits<20>>,
    high: Signal<Local, Bits<3>>,
    // high − 1 when high ∈ 1..=3 (the digit sum is < 2^19 + 2^17, so high ≤ 3).
    high_less_one: Signal<Local, Bits<2>>,
}

impl SlotOperands {
    /// Operand registers for `digits` limbs.
    pub fn new(digits: usize) -> Self {
        SlotOperands {
            clock: Default::default(),
            load: Default::default(),
            a_in: many(digits),
            b_in: many(digits),
            advance: Default::default(),
            finish: Default::default(),
            digit: Default::default(),
            b: many(digits),
            pending: Default::default(),
            first: Default::default(),
            last: Default::default(),
            busy: Default::default(),
            digits: Constant::new((digits as u64).into()),
            a: many(digits),
            b_regs: many(digits),
            carry: Default::default(),
            borrow: Default::default(),
            redc_r: Default::default(),
            redc_in: Default::default(),
            decrement_in: Default::default(),
            redc: Default::default(),
            bias: Default::default(),
            high: Default::default(),
            high_less_one: Default::default(),
            step: Default::default(),
            busy_r: Default::default(),
            a_low: Default::default(),
            digit_sum: Default::default(),
        }
    }
}

impl Logic for SlotOperands {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, carry, borrow, redc_r, step, busy_r);
        for j in 0..self.a.len() {
            self.a[j].clock.next = self.clock.val();
            self.b_regs[j].clock.next = self.clock.val();
            self.a[j].d.next = self.a[j].q.val();
            self.b_regs[j].d.next = self.b_regs[j].q.val();
            self.b[j].next = self.b_regs[j].q.val();
        }
        for j in 0..1 {
            self.a_low.next = self.a[j].q.val();
        }
        self.bias.next = 131072.into();
        if self.borrow.q.val() {
            self.bias.next = 131071.into();
        }
        self.digit_sum.next =
            bit_cast::<20, X_BITS>(self.a_low.val()) + bit_cast::<20, 2>(self.carry.q.val()) + self.bias.val();
        self.high.next = self.digit_sum.val().get_bits::<3>(17);
        self.high_less_one.next = self.high.val().get_bits::<2>(0) - 1;
        self.digit.next = self.digit_sum.val().get_bits::<Y_BITS>(0);
        self.busy.next = self.busy_r.q.val();
        self.redc.next = self.redc_r.q.val();
        self.pending.next = self.busy_r.q.val() & (self.step.q.val() != self.digits.val());
        self.first.next = self.step.q.val() == 0;
        self.last.next = (self.step.q.val() + 1) == self.digits.val();
        if self.advance.val() & self.pending.val() {
            self.step.d.next = self.step.q.val() + 1;
            self.borrow.d.next = self.high.val() == 0;
            self.carry.d.next = 0.into();
            if self.high.val() != 0 {
                self.carry.d.next = self.high_less_one.val();
            }
            for j in 0..(self.a.len() - 1) {
                self.a[j].d.next = self.a[j + 1].q.val();
            }
            for j in (self.a.len() - 1)..self.a.len() {
                self.a[j].d.next = 0.into();
            }
        }
        if self.finish.val() {
            self.busy_r.d.next = false;
        }
        if self.load.val() {
            self.busy_r.d.next = true;
            self.step.d.next = 0.into();
            self.carry.d.next = 0.into();
            self.borrow.d.next = self.decrement_in.val();
            self.redc_r.d.next = self.redc_in.val();
            for j in 0..self.a.len() {
                self.a[j].d.next = self.a_in[j].val();
                self.b_regs[j].d.next = self.b_in[j].val();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limbs::from_limbs;
    use crate::testing::simulate;

    #[test]
    fn slot_operands_is_synthesizable() {
        let mut uut = SlotOperands::new(3);
        uut.connect_all();
        yosys_validate("ecrt_slot_operands", &generate_verilog(&uut)).unwrap();
    }

    #[test]
    fn resolves_redundant_limbs_into_exact_digits() {
        // A = Σ a_j·2^(17j) with redundant limbs; the digits must be A's exact base-2^17 digits.
        let a = [(1u64 << 17) + 3, (1 << 17) - 1, (1 << 17) + 2, 5];
        let digits = crate::limbs::to_limbs(&from_limbs(a), 4);
        let trace = simulate(SlotOperands::new(4), 7, move |uut, cycle| {
            uut.load.next = cycle == 0;
            uut.advance.next = cycle >= 1;
            uut.finish.next = false;
            for (port, &limb) in uut.a_in.iter_mut().zip(&a) {
                port.next = limb.into();
            }
            (uut.digit.val().to_u64(), uut.pending.val(), uut.first.val(), uut.last.val())
        });
        for i in 0..4 {
            let (digit, pending, first, last) = trace[1 + i];
            assert_eq!((digit, pending, first, last), (digits[i], true, i == 0, i == 3), "digit {i}");
        }
        assert!(!trace[5].1, "no digits left after four steps");
    }

    #[test]
    fn decrement_borrows_through_zero_digits() {
        // A = 2^34 + 2^17·0 + 0 with a redundant top limb: A − 1 borrows through two zero digits.
        let a = [0u64, 0, (1 << 17) + 1, 0];
        let digits = crate::limbs::to_limbs(&(from_limbs(a) - 1u32), 4);
        let trace = simulate(SlotOperands::new(4), 6, move |uut, cycle| {
            uut.load.next = cycle == 0;
            uut.decrement_in.next = true;
            uut.advance.next = cycle >= 1;
            for (port, &limb) in uut.a_in.iter_mut().zip(&a) {
                port.next = limb.into();
            }
            uut.digit.val().to_u64()
        });
        assert_eq!(trace[1..5], digits[..], "the digits of A − 1");
    }
}
