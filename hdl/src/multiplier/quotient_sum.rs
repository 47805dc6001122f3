//! A quotient limb of the delayed-quotient multiplier, summed again where its DSPs take it: stage
//! A's sum s_l = y_l + t_(l+k) in a register of its own per row and group of DSPs, cleared (its
//! synchronous reset) unless the next step takes a quotient.
//!
//! The register is kept as it is: an adder into a register into a multiplier is what Yosys packs
//! into a DSP48E1's pre-adder and AD register, whose setup through the pre-adder from the A port
//! is 2.4 ns in the 7-series cell delays, after the LUT of the operand's select.

use crate::multiplier::mul_add::T_BITS;
use rust_hdl::prelude::*;

/// `q <= on ? y + t : 0`, a kept register.
#[derive(LogicBlock, Default)]
pub struct QuotientSum {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The step's redistributed products y_l (or a classic lane's quotient).
    pub y: Signal<In, Bits<T_BITS>>,
    /// T's limb t_(l+k) (or 0).
    pub t: Signal<In, Bits<T_BITS>>,
    /// Take the sum; the register clears otherwise.
    pub on: Signal<In, bool>,
    /// y + t (< 2^19) or 0, a clock edge after them.
    pub q: Signal<Out, Bits<T_BITS>>,
}

impl Logic for QuotientSum {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self.q.next = if self.on.val() { self.y.val() + self.t.val() } else { 0.into() };
        }
    }
    fn connect(&mut self) {
        self.q.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "(* keep *) reg [{msb}:0] sum = {T_BITS}'h0;\n\
             always @(posedge clock) begin\n   if (on) sum <= y + t;\n   else sum <= {T_BITS}'h0;\nend\n\n\
             always @(*) q = sum;\n",
            msb = T_BITS - 1
        ))
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "quotient_sum".into(),
            clock: "clock".into(),
            inputs: vec!["y".into(), "t".into(), "on".into()],
            outputs: vec!["q".into()],
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::simulate;

    #[test]
    fn quotient_sum_is_synthesizable() {
        let mut uut = QuotientSum::default();
        uut.connect_all();
        yosys_validate("ecrt_quotient_sum", &generate_verilog(&uut)).unwrap();
    }

    #[test]
    fn sums_its_operands_unless_off() {
        let top = (1u64 << 18) - 1;
        // (y, t, on)
        let cases = [(3u64, 4u64, true), (top, (1 << 17) + 2, true), (12345, 678, false), (0, 9, true)];
        let outputs = simulate(QuotientSum::default(), cases.len() + 1, move |uut, i| {
            if let Some(&(y, t, on)) = cases.get(i) {
                uut.y.next = y.into();
                uut.t.next = t.into();
                uut.on.next = on;
            }
            uut.q.val().to_u64()
        });
        for (i, &(y, t, on)) in cases.iter().enumerate() {
            assert_eq!(outputs[i + 1], if on { y + t } else { 0 }, "case {i}");
        }
    }
}
