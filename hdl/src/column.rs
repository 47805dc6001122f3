//! One limb column of the Montgomery multiplier: two DSP48E1s and the column's accumulator.
//!
//! Step i of a multiplication adds a_i·b_j (stage 1, registered DSP) and q_i·n_j (stage 2,
//! combinational DSP) to the column sum c_j = t_j + a_i·b_j + q_i·n_j, then divides the whole
//! row by 2^17 without propagating carries: t'_j = lo17(c_{j+1}) + hi(c_j). T = Σ t_j·2^(17j)
//! stays in this redundant form (t_j < 2^19) until the result leaves the multiplier.

use crate::mul_add::{MulAdd, MulAddReg, P_BITS, X_BITS, Y_BITS};
use rust_hdl::prelude::*;

/// Bits of a column accumulator t_j.
pub const T_BITS: usize = 19;

/// A limb column.
#[derive(LogicBlock, Default)]
pub struct Column {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Stage 1: the multiplier digit a_i (exact, 17 bits).
    pub a: Signal<In, Bits<Y_BITS>>,
    /// Stage 1: the multiplicand limb b_j (redundant, up to 18 bits).
    pub b: Signal<In, Bits<X_BITS>>,
    /// Stage 1: the step is its multiplication's first, so t_j counts as 0.
    pub first: Signal<In, bool>,
    /// Stage 2: the quotient digit q_i.
    pub q: Signal<In, Bits<Y_BITS>>,
    /// Stage 2: the modulus limb n_j.
    pub n: Signal<In, Bits<Y_BITS>>,
    /// Stage 2: lo17(c_{j+1}) from the column above (0 for the top column).
    pub lo_up: Signal<In, Bits<Y_BITS>>,
    /// Stage 2: lo17(c_j), for the column below.
    pub lo: Signal<Out, Bits<Y_BITS>>,
    /// The accumulator t_j: the stage-1 slot's limb at the start of its step.
    pub t: Signal<Out, Bits<T_BITS>>,
    /// lo17(t_j), widened to a redundant limb.
    pub t_lo: Signal<Out, Bits<X_BITS>>,
    /// hi(t_j) = t_j >> 17, widened to a redundant limb: it belongs to the limb above.
    pub t_hi: Signal<Out, Bits<X_BITS>>,
    stage1: MulAddReg,
    stage2: MulAdd,
    acc: DFF<Bits<T_BITS>>,
}

impl Logic for Column {
    #[hdl_gen]
    fn update(&mut self) {
        self.stage1.clock.next = self.clock.val();
        self.acc.clock.next = self.clock.val();
        self.stage1.x.next = self.b.val();
        self.stage1.y.next = self.a.val();
        self.stage1.c.next = bit_cast::<P_BITS, T_BITS>(self.acc.q.val());
        if self.first.val() {
            self.stage1.c.next = 0.into();
        }
        self.stage2.x.next = bit_cast::<X_BITS, Y_BITS>(self.n.val());
        self.stage2.y.next = self.q.val();
        self.stage2.c.next = self.stage1.p.val();
        self.lo.next = self.stage2.p.val().get_bits::<Y_BITS>(0);
        self.acc.d.next = bit_cast::<T_BITS, Y_BITS>(self.lo_up.val()) + self.stage2.p.val().get_bits::<T_BITS>(17);
        self.t.next = self.acc.q.val();
        self.t_lo.next = bit_cast::<X_BITS, Y_BITS>(self.acc.q.val().get_bits::<Y_BITS>(0));
        self.t_hi.next = bit_cast::<X_BITS, 2>(self.acc.q.val().get_bits::<2>(17));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::simulate;

    #[test]
    fn column_is_synthesizable() {
        let mut uut = Column::default();
        uut.connect_all();
        yosys_validate("ecrt_column", &generate_verilog(&uut)).unwrap();
    }

    #[test]
    fn column_accumulates_and_redistributes() {
        // Cycle 0: stage 1 with t = 0 (first). Cycle 1: stage 2 with q, n and lo_up; t is then
        // lo_up + hi(a·b + q·n). Cycle 2: stage 1 again on that t.
        let (a, b, q, n, lo_up) = (0x1_2345u64, 0x3_ffffu64, 0x1_ffffu64, 0x1_abcdu64, 0x1_5555u64);
        let trace = simulate(Column::default(), 4, move |uut, cycle| {
            uut.a.next = a.into();
            uut.b.next = b.into();
            uut.first.next = cycle == 0;
            uut.q.next = q.into();
            uut.n.next = n.into();
            uut.lo_up.next = lo_up.into();
            (uut.t.val().to_u64(), uut.lo.val().to_u64())
        });
        let c = a * b + q * n;
        assert_eq!(trace[1].1, c & 0x1_ffff, "lo17 of the column sum, combinationally in stage 2");
        assert_eq!(trace[2].0, lo_up + (c >> 17), "t after stage 2");
    }
}
