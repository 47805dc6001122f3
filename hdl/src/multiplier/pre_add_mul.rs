//! The delayed-quotient multiplier's classic quotient, lo17((u + v)·N′), on a DSP48E1's pre-adder.
//!
//! The sum u + v is stage A's s_0, which the loop also registers for itself. Forming it in the
//! fabric and registering it in front of the DSP put a 20-bit carry chain before the DSP's A
//! register, whose setup (254 ps in the 7-series cell delays) is far longer than a flip-flop's:
//! the delay engine's longest path. Here u and v go straight into the A and D registers and the
//! pre-adder's own register (ADREG) holds their sum, in the cycle the fabric's s_0 would, so the
//! quotient comes out at the same clock edge and no carry chain sits before a DSP port.

use crate::multiplier::mul_add::{T_BITS, Y_BITS};
use rust_hdl::prelude::*;

/// Bits of the pre-adder's sum of two T_BITS operands.
const SUM_BITS: usize = T_BITS + 1;
/// Bits of the sum times a 17-bit factor.
const PRODUCT_BITS: usize = SUM_BITS + Y_BITS;

/// `a <= u`, `d <= v`, then `ad <= a + d` and `b <= y`, `m <= ad·b`, `p <= lo17(m)`: a DSP48E1
/// with its pre-adder and every stage registered (AREG, DREG, ADREG, BREG, MREG, PREG).
#[derive(LogicBlock, Default)]
pub struct PreAddQuotientMul {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The first addend (unsigned), taken into the A register.
    pub u: Signal<In, Bits<T_BITS>>,
    /// The second addend (unsigned), taken into the D register.
    pub v: Signal<In, Bits<T_BITS>>,
    /// The factor (17 bits, unsigned), taken into the B register a cycle after `u` and `v`.
    pub y: Signal<In, Bits<Y_BITS>>,
    /// lo17((u + v)·y): three clock edges after `y`, four after `u` and `v`.
    pub p: Signal<Out, Bits<Y_BITS>>,
    a: Signal<Local, Bits<T_BITS>>,
    d: Signal<Local, Bits<T_BITS>>,
    ad: Signal<Local, Bits<SUM_BITS>>,
    b: Signal<Local, Bits<Y_BITS>>,
    m: Signal<Local, Bits<PRODUCT_BITS>>,
}

impl Logic for PreAddQuotientMul {
    fn update(&mut self) {
        // Local and output signals read back what was written in this pass: every register's next
        // value is formed before any is written.
        if self.clock.pos_edge() {
            let ad = self.a.val().to_u64() + self.d.val().to_u64();
            let m = self.ad.val().to_u64() * self.b.val().to_u64();
            let p = self.m.val().to_u64() & ((1 << Y_BITS) - 1);
            self.a.next = self.u.val();
            self.d.next = self.v.val();
            self.ad.next = ad.into();
            self.b.next = self.y.val();
            self.m.next = m.into();
            self.p.next = p.into();
        }
    }
    fn connect(&mut self) {
        self.p.connect();
        self.a.connect();
        self.d.connect();
        self.ad.connect();
        self.b.connect();
        self.m.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "initial begin\n   a = {T_BITS}'h0;\n   d = {T_BITS}'h0;\n   ad = {SUM_BITS}'h0;\n   b = {Y_BITS}'h0;\n   \
             m = {PRODUCT_BITS}'h0;\n   p = {Y_BITS}'h0;\nend\n\n\
             always @(posedge clock) begin\n   a <= u;\n   d <= v;\n   ad <= a + d;\n   b <= y;\n   \
             m <= ad * b;\n   p <= m[{}:0];\nend\n",
            Y_BITS - 1
        ))
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "pre_add_quotient_mul".into(),
            clock: "clock".into(),
            inputs: vec!["u".into(), "v".into(), "y".into()],
            outputs: vec!["p".into()],
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::simulate;

    #[test]
    fn pre_add_quotient_mul_is_synthesizable() {
        let mut uut = PreAddQuotientMul::default();
        uut.connect_all();
        yosys_validate("ecrt_pre_add_quotient_mul", &generate_verilog(&uut)).unwrap();
    }

    #[test]
    fn multiplies_the_sum_by_the_factor_given_a_cycle_later() {
        let top = (1u64 << T_BITS) - 1;
        let cases = [(0u64, 0u64, 5u64), (top, top, (1 << 17) - 1), (12345, 99_999, 54321), ((1 << 17) - 1, 1, 3)];
        let outputs = simulate(PreAddQuotientMul::default(), cases.len() + 4, move |uut, i| {
            if let Some(&(u, v, _)) = cases.get(i) {
                uut.u.next = u.into();
                uut.v.next = v.into();
            }
            if let Some(&(_, _, y)) = i.checked_sub(1).and_then(|i| cases.get(i)) {
                uut.y.next = y.into();
            }
            uut.p.val().to_u64()
        });
        for (i, &(u, v, y)) in cases.iter().enumerate() {
            assert_eq!(outputs[i + 4], ((u + v) * y) & ((1 << 17) - 1), "case {i}");
        }
    }
}
