//! One slot's operands inside the multiplier: the multiplicand B, held for the whole
//! multiplication, and the multiplier A, consumed one digit per step. A's redundant limbs are
//! resolved as they are consumed: digit_i = (a_i + carry) mod 2^17, one 19-bit addition per step.

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
    digits: Constant<Bits<STEP_BITS>>,
    a: Vec<DFF<Bits<X_BITS>>>,
    b_regs: Vec<DFF<Bits<X_BITS>>>,
    carry: DFF<Bits<2>>,
    step: DFF<Bits<STEP_BITS>>,
    busy_r: DFF<bool>,
    a_low: Signal<Local, Bits<X_BITS>>,
    digit_sum: Signal<Local, Bits<19>>,
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
        dff_setup!(self, clock, carry, step, busy_r);
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
        self.digit_sum.next = bit_cast::<19, X_BITS>(self.a_low.val()) + bit_cast::<19, 2>(self.carry.q.val());
        self.digit.next = self.digit_sum.val().get_bits::<Y_BITS>(0);
        self.busy.next = self.busy_r.q.val();
        self.pending.next = self.busy_r.q.val() & (self.step.q.val() != self.digits.val());
        self.first.next = self.step.q.val() == 0;
        self.last.next = (self.step.q.val() + 1) == self.digits.val();
        if self.advance.val() & self.pending.val() {
            self.step.d.next = self.step.q.val() + 1;
            self.carry.d.next = self.digit_sum.val().get_bits::<2>(17);
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
}
